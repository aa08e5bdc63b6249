"""keras-io example "Actor Critic Method" (Apoorv Nandan): advantage actor-critic on CartPole with GradientTape.

Source: keras-team/keras-io, examples/rl/actor_critic_cartpole.py (commit 0df30d775727a6789b7bdb4028561f2026cc4d52),
https://keras.io/examples/rl/actor_critic_cartpole/. Rewritten after the example, not copied: the same network,
loss, update, hyperparameters and printed lines.

Changes:
- gym's CartPole-v0 is replaced by `CartPole` below, a small numpy version of the same dynamics (Barto et al.
  1983, as gym implements them: Euler steps of 0.02 s, failure past 2.4 units or 12 degrees, 200 steps at most),
  seeded, with gym's old `reset()`/`step()` interface.
- numpy's global generator is seeded (`np.random.seed(seed)`), so the sampled actions are reproducible.
- The model's weights are set from a seeded numpy generator (Glorot uniform kernels, zero biases, as Keras
  draws them), so both engines start from the same weights.
- The example trains until the running reward passes 195; here training also stops after `max_episodes` = 20.
"""

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers


class CartPole:
    """The cart-pole balancing task, as gym's CartPole-v0 computes it."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.state = None
        self.steps = 0

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=4)
        self.steps = 0
        return np.array(self.state, dtype=np.float32)

    def step(self, action):
        gravity, cart_mass, pole_mass, half_length, force_mag, dt = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
        total_mass = cart_mass + pole_mass
        x, x_dot, theta, theta_dot = self.state
        force = force_mag if action == 1 else -force_mag
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + pole_mass * half_length * theta_dot**2 * sin) / total_mass
        theta_acc = (gravity * sin - cos * temp) / (
            half_length * (4.0 / 3.0 - pole_mass * cos**2 / total_mass))
        x_acc = temp - pole_mass * half_length * theta_acc * cos / total_mass
        x, x_dot = x + dt * x_dot, x_dot + dt * x_acc
        theta, theta_dot = theta + dt * theta_dot, theta_dot + dt * theta_acc
        self.state = np.array([x, x_dot, theta, theta_dot])
        self.steps += 1
        done = bool(abs(x) > 2.4 or abs(theta) > 12 * 2 * np.pi / 360 or self.steps >= 200)
        return np.array(self.state, dtype=np.float32), 1.0, done, {}


def set_numpy_weights(model, rng):
    """Glorot-uniform kernels and zero biases, drawn by numpy."""
    for weight in model.weights:
        shape = tuple(weight.shape)
        if len(shape) == 2:
            limit = np.sqrt(6.0 / (shape[0] + shape[1]))
            weight.assign(rng.uniform(-limit, limit, size=shape).astype(np.float32))
        else:
            weight.assign(np.zeros(shape, dtype=np.float32))


# Settings
seed = 42
gamma = 0.99  # discount of later rewards
max_steps_per_episode = 10000
max_episodes = 20
env = CartPole(seed)
np.random.seed(seed)
eps = np.finfo(np.float32).eps.item()  # keeps the normalisation below from dividing by zero

# One shared hidden layer, then an actor head (action probabilities) and a critic head (expected return).
num_inputs = 4
num_actions = 2
num_hidden = 128

inputs = layers.Input(shape=(num_inputs,))
common = layers.Dense(num_hidden, activation="relu")(inputs)
action = layers.Dense(num_actions, activation="softmax")(common)
critic = layers.Dense(1)(common)
model = keras.Model(inputs=inputs, outputs=[action, critic])
set_numpy_weights(model, np.random.default_rng(seed))

optimizer = keras.optimizers.Adam(learning_rate=0.01)
huber_loss = keras.losses.Huber()
action_probs_history = []
critic_value_history = []
rewards_history = []
running_reward = 0
episode_count = 0

while True:
    state = env.reset()
    episode_reward = 0
    with tf.GradientTape() as tape:
        for timestep in range(1, max_steps_per_episode):
            state = tf.convert_to_tensor(state)
            state = tf.expand_dims(state, 0)

            # The policy and the value estimate of this state.
            action_probs, critic_value = model(state)
            critic_value_history.append(critic_value[0, 0])

            # Draw an action from the policy; keep its log-probability for the actor's loss.
            action = np.random.choice(num_actions, p=np.squeeze(action_probs))
            action_probs_history.append(tf.math.log(action_probs[0, action]))

            state, reward, done, _ = env.step(action)
            rewards_history.append(reward)
            episode_reward += reward
            if done:
                break

        running_reward = 0.05 * episode_reward + (1 - 0.05) * running_reward

        # Discounted returns, latest reward first, then standardised: the critic's targets.
        returns = []
        discounted_sum = 0
        for r in rewards_history[::-1]:
            discounted_sum = r + gamma * discounted_sum
            returns.insert(0, discounted_sum)
        returns = np.array(returns)
        returns = (returns - np.mean(returns)) / (np.std(returns) + eps)
        returns = returns.tolist()

        actor_losses = []
        critic_losses = []
        for log_prob, value, ret in zip(action_probs_history, critic_value_history, returns):
            # The actor favours actions that did better than the critic expected...
            diff = ret - value
            actor_losses.append(-log_prob * diff)
            # ...and the critic moves its estimate towards the return seen.
            critic_losses.append(huber_loss(tf.expand_dims(value, 0), tf.expand_dims(ret, 0)))

        loss_value = sum(actor_losses) + sum(critic_losses)
        grads = tape.gradient(loss_value, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

        action_probs_history.clear()
        critic_value_history.clear()
        rewards_history.clear()

    episode_count += 1
    if episode_count % 10 == 0:
        template = "running reward: {:.2f} at episode {}"
        print(template.format(running_reward, episode_count))

    if running_reward > 195:
        print("Solved at episode {}!".format(episode_count))
        break
    if episode_count >= max_episodes:
        break
