"""keras-io example "Deep Deterministic Policy Gradient (DDPG)" (amifunny): DDPG on the inverted pendulum.

Source: keras-team/keras-io, examples/rl/ddpg_pendulum.py, the Keras 3 version (last modified 2024/03/23; stored
as examples/rl/md/ddpg_pendulum.md at commit 4ddadb70592b4c1884b2c9720656cae41b2e70c1),
https://keras.io/examples/rl/ddpg_pendulum/. Rewritten after the example, not copied: the same networks,
Ornstein-Uhlenbeck noise, replay buffer, `tf.function` update, soft target update through
`get_weights`/`set_weights`, `keras.ops` calls, hyperparameters and printed lines.

Changes:
- gymnasium's Pendulum-v1 is replaced by `Pendulum` below, a small numpy version of the same dynamics and reward
  (gymnasium's constants: g = 10, m = l = 1, dt = 0.05, |torque| <= 2, |speed| <= 8), seeded, with gymnasium's
  `reset()`/`step()` interface; its episodes are truncated after `episode_steps` = 25 steps (gymnasium: 200).
- numpy's global generator is seeded (`np.random.seed(0)`): the noise and the replay samples are reproducible.
- Each model's weights are set from a seeded numpy generator after it is built (Glorot uniform kernels, zero
  biases, the actor's last kernel uniform in +-0.003 as the example's initializer draws it), so both engines
  start from the same weights; the target networks still copy them with `set_weights(get_weights())`.
- `total_episodes` is 4 (the example: 100); the matplotlib plot at the end is left out.
"""

import os

os.environ["KERAS_BACKEND"] = "tensorflow"

import keras
from keras import layers

import tensorflow as tf
import numpy as np


class Box:
    def __init__(self, low, high):
        self.low, self.high = np.array(low, dtype=np.float32), np.array(high, dtype=np.float32)
        self.shape = self.low.shape


class Pendulum:
    """The swing-up pendulum as gymnasium's Pendulum-v1 computes it: observations (cos, sin, angular speed)."""

    def __init__(self, seed, episode_steps):
        self.rng = np.random.RandomState(seed)
        self.episode_steps = episode_steps
        self.action_space = Box([-2.0], [2.0])
        self.observation_space = Box([-1.0, -1.0, -8.0], [1.0, 1.0, 8.0])

    def _observation(self):
        theta, speed = self.state
        return np.array([np.cos(theta), np.sin(theta), speed], dtype=np.float32)

    def reset(self):
        self.state = self.rng.uniform(low=[-np.pi, -1.0], high=[np.pi, 1.0])
        self.steps = 0
        return self._observation(), {}

    def step(self, action):
        g, m, l, dt = 10.0, 1.0, 1.0, 0.05
        theta, speed = self.state
        u = np.clip(action, -2.0, 2.0)[0]
        angle = ((theta + np.pi) % (2 * np.pi)) - np.pi
        cost = angle**2 + 0.1 * speed**2 + 0.001 * u**2
        speed = np.clip(speed + (3 * g / (2 * l) * np.sin(theta) + 3.0 / (m * l**2) * u) * dt, -8.0, 8.0)
        self.state = np.array([theta + speed * dt, speed])
        self.steps += 1
        return self._observation(), -cost, False, self.steps >= self.episode_steps, {}


def set_numpy_weights(model, rng, last_limit=None):
    """Glorot-uniform kernels and zero biases drawn by numpy; the last kernel uniform in +-last_limit if given."""
    kernels = [w for w in model.weights if len(w.shape) == 2]
    for weight in model.weights:
        shape = tuple(weight.shape)
        if len(shape) == 2:
            limit = np.sqrt(6.0 / (shape[0] + shape[1]))
            if last_limit is not None and weight is kernels[-1]:
                limit = last_limit
            weight.assign(rng.uniform(-limit, limit, size=shape).astype(np.float32))
        else:
            weight.assign(np.zeros(shape, dtype=np.float32))


np.random.seed(0)
weights_rng = np.random.default_rng(0)
env = Pendulum(seed=0, episode_steps=25)

num_states = env.observation_space.shape[0]
print("Size of State Space ->  {}".format(num_states))
num_actions = env.action_space.shape[0]
print("Size of Action Space ->  {}".format(num_actions))

upper_bound = env.action_space.high[0]
lower_bound = env.action_space.low[0]
print("Max Value of Action ->  {}".format(upper_bound))
print("Min Value of Action ->  {}".format(lower_bound))


class OUActionNoise:
    """Ornstein-Uhlenbeck noise: each sample drifts back to `mean` and depends on the one before."""

    def __init__(self, mean, std_deviation, theta=0.15, dt=1e-2, x_initial=None):
        self.theta = theta
        self.mean = mean
        self.std_dev = std_deviation
        self.dt = dt
        self.x_initial = x_initial
        self.reset()

    def __call__(self):
        x = (self.x_prev + self.theta * (self.mean - self.x_prev) * self.dt
             + self.std_dev * np.sqrt(self.dt) * np.random.normal(size=self.mean.shape))
        self.x_prev = x
        return x

    def reset(self):
        self.x_prev = self.x_initial if self.x_initial is not None else np.zeros_like(self.mean)


class Buffer:
    """Experience replay: (state, action, reward, next state) in four numpy arrays, sampled uniformly."""

    def __init__(self, buffer_capacity=100000, batch_size=64):
        self.buffer_capacity = buffer_capacity
        self.batch_size = batch_size
        self.buffer_counter = 0  # how many records were ever written
        self.state_buffer = np.zeros((self.buffer_capacity, num_states))
        self.action_buffer = np.zeros((self.buffer_capacity, num_actions))
        self.reward_buffer = np.zeros((self.buffer_capacity, 1))
        self.next_state_buffer = np.zeros((self.buffer_capacity, num_states))

    def record(self, obs_tuple):
        index = self.buffer_counter % self.buffer_capacity  # the oldest record is overwritten when full
        self.state_buffer[index] = obs_tuple[0]
        self.action_buffer[index] = obs_tuple[1]
        self.reward_buffer[index] = obs_tuple[2]
        self.next_state_buffer[index] = obs_tuple[3]
        self.buffer_counter += 1

    @tf.function
    def update(self, state_batch, action_batch, reward_batch, next_state_batch):
        # The critic regresses on the target networks' one-step return...
        with tf.GradientTape() as tape:
            target_actions = target_actor(next_state_batch, training=True)
            y = reward_batch + gamma * target_critic([next_state_batch, target_actions], training=True)
            critic_value = critic_model([state_batch, action_batch], training=True)
            critic_loss = keras.ops.mean(keras.ops.square(y - critic_value))
        critic_grad = tape.gradient(critic_loss, critic_model.trainable_variables)
        critic_optimizer.apply_gradients(zip(critic_grad, critic_model.trainable_variables))

        # ...and the actor climbs the critic's value of its own actions.
        with tf.GradientTape() as tape:
            actions = actor_model(state_batch, training=True)
            critic_value = critic_model([state_batch, actions], training=True)
            actor_loss = -keras.ops.mean(critic_value)
        actor_grad = tape.gradient(actor_loss, actor_model.trainable_variables)
        actor_optimizer.apply_gradients(zip(actor_grad, actor_model.trainable_variables))

    def learn(self):
        record_range = min(self.buffer_counter, self.buffer_capacity)
        batch_indices = np.random.choice(record_range, self.batch_size)
        state_batch = keras.ops.convert_to_tensor(self.state_buffer[batch_indices])
        action_batch = keras.ops.convert_to_tensor(self.action_buffer[batch_indices])
        reward_batch = keras.ops.convert_to_tensor(self.reward_buffer[batch_indices])
        reward_batch = keras.ops.cast(reward_batch, dtype="float32")
        next_state_batch = keras.ops.convert_to_tensor(self.next_state_buffer[batch_indices])
        self.update(state_batch, action_batch, reward_batch, next_state_batch)


def update_target(target, original, tau):
    # Polyak averaging, in numpy: the targets trail the trained networks slowly.
    target_weights = target.get_weights()
    original_weights = original.get_weights()
    for i in range(len(target_weights)):
        target_weights[i] = original_weights[i] * tau + target_weights[i] * (1 - tau)
    target.set_weights(target_weights)


def get_actor():
    last_init = keras.initializers.RandomUniform(minval=-0.003, maxval=0.003)  # keeps tanh off its flat ends
    inputs = layers.Input(shape=(num_states,))
    out = layers.Dense(256, activation="relu")(inputs)
    out = layers.Dense(256, activation="relu")(out)
    outputs = layers.Dense(1, activation="tanh", kernel_initializer=last_init)(out)
    outputs = outputs * upper_bound  # the pendulum's torque bound
    model = keras.Model(inputs, outputs)
    set_numpy_weights(model, weights_rng, last_limit=0.003)
    return model


def get_critic():
    state_input = layers.Input(shape=(num_states,))
    state_out = layers.Dense(16, activation="relu")(state_input)
    state_out = layers.Dense(32, activation="relu")(state_out)

    action_input = layers.Input(shape=(num_actions,))
    action_out = layers.Dense(32, activation="relu")(action_input)

    concat = layers.Concatenate()([state_out, action_out])
    out = layers.Dense(256, activation="relu")(concat)
    out = layers.Dense(256, activation="relu")(out)
    outputs = layers.Dense(1)(out)
    model = keras.Model([state_input, action_input], outputs)
    set_numpy_weights(model, weights_rng)
    return model


def policy(state, noise_object):
    sampled_actions = keras.ops.squeeze(actor_model(state))
    noise = noise_object()
    sampled_actions = sampled_actions.numpy() + noise
    legal_action = np.clip(sampled_actions, lower_bound, upper_bound)
    return [np.squeeze(legal_action)]


std_dev = 0.2
ou_noise = OUActionNoise(mean=np.zeros(1), std_deviation=float(std_dev) * np.ones(1))

actor_model = get_actor()
critic_model = get_critic()
target_actor = get_actor()
target_critic = get_critic()

# The targets start as copies of the trained networks.
target_actor.set_weights(actor_model.get_weights())
target_critic.set_weights(critic_model.get_weights())

critic_lr = 0.002
actor_lr = 0.001
critic_optimizer = keras.optimizers.Adam(critic_lr)
actor_optimizer = keras.optimizers.Adam(actor_lr)

total_episodes = 4
gamma = 0.99  # discount of later rewards
tau = 0.005  # how fast the targets follow

buffer = Buffer(50000, 64)
ep_reward_list = []
avg_reward_list = []

for ep in range(total_episodes):
    prev_state, _ = env.reset()
    episodic_reward = 0
    while True:
        tf_prev_state = keras.ops.expand_dims(keras.ops.convert_to_tensor(prev_state), 0)
        action = policy(tf_prev_state, ou_noise)
        state, reward, done, truncated, _ = env.step(action)

        buffer.record((prev_state, action, reward, state))
        episodic_reward += reward

        buffer.learn()
        update_target(target_actor, actor_model, tau)
        update_target(target_critic, critic_model, tau)

        if done or truncated:
            break
        prev_state = state

    ep_reward_list.append(episodic_reward)
    avg_reward = np.mean(ep_reward_list[-40:])  # mean of the last 40 episodes
    print("Episode * {} * Avg Reward is ==> {}".format(ep, avg_reward))
    avg_reward_list.append(avg_reward)
