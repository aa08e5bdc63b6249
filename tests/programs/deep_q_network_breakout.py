"""keras-io example "Deep Q-Learning for Atari Breakout" (Jacob Chapman, Mathias Lechner): a convolutional
Q-network trained from a replay buffer with a GradientTape, epsilon-greedy exploration and a target network.

Source: keras-team/keras-io, examples/rl/deep_q_network_breakout.py (commit
8bda227c08adf855a8b9ec579840e2a7171fff60; last modified 2020/06/17),
https://keras.io/examples/rl/deep_q_network_breakout/. Rewritten after the example, not copied: the same
network, optimizer, Huber loss, replay buffers, epsilon schedule, update rule (`model_target.predict`, masks from
`tf.one_hot`, the tape over `model(state_sample)`), target-network copy and printed lines.

Changes:
- Breakout (baselines' `make_atari`/`wrap_deepmind`, which need the Atari ROMs) is replaced by `CatchFrames`, a
  small seeded numpy game with the same interface (`reset()`, `step(action)` -> (state, reward, done, info), four
  actions): a ball falls and a paddle at the bottom catches it; the state is the last four frames stacked, scaled
  to [0, 1], as `wrap_deepmind(frame_stack=True, scale=True)` gives them, of 36x36 pixels (the example: 84x84,
  which the network's strides also fit).
- numpy's global generator is seeded with the example's `seed` (42): the exploration and replay draws repeat.
- Sizes are scaled down: `max_steps_per_episode` 60, `epsilon_random_frames` 40, `epsilon_greedy_frames` 400,
  `max_memory_length` 100, `update_target_network` 50 (the example: 10,000, 50,000, 1,000,000, 100,000 and
  10,000); the loop stops after 3 episodes, and the "Solved" test stays.
- The weights of both networks are set from a seeded numpy generator after they are built (Glorot uniform
  kernels, zero biases); the target network starts with its own draw, as the example's starts with its own
  initialisation.
- After each episode the program prints the episode's reward and the running reward, so that the training's
  effect shows in the output.
"""

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers


class CatchFrames:
    """A ball falls one row per step from a random column; the paddle (3 pixels wide, bottom row) moves left
    (action 2), right (3) or stays (0, 1). Catching the ball scores 1; an episode ends after 3 missed balls."""

    size = 36

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def _frame(self):
        frame = np.zeros((self.size, self.size), dtype=np.float32)
        frame[self.ball_row, self.ball_col] = 1.0
        frame[-1, max(self.paddle - 1, 0):self.paddle + 2] = 1.0
        return frame

    def _new_ball(self):
        self.ball_row, self.ball_col = 0, self.rng.randint(self.size)

    def reset(self):
        self.paddle, self.missed = self.size // 2, 0
        self._new_ball()
        self.frames = [self._frame()] * 4
        return np.stack(self.frames, axis=-1)

    def step(self, action):
        self.paddle = int(np.clip(self.paddle + {2: -2, 3: 2}.get(int(action), 0), 0, self.size - 1))
        self.ball_row += 3
        reward = 0.0
        if self.ball_row >= self.size - 1:
            if abs(self.ball_col - self.paddle) <= 1:
                reward = 1.0
            else:
                self.missed += 1
            self._new_ball()
        self.frames = self.frames[1:] + [self._frame()]
        return np.stack(self.frames, axis=-1), reward, self.missed >= 3, {}


def set_numpy_weights(model, rng):
    """Glorot-uniform kernels drawn by numpy; one-dimensional weights keep their constant initial values."""
    for weight in model.weights:
        shape = tuple(weight.shape)
        if len(shape) >= 2:
            receptive = int(np.prod(shape[:-2]))
            limit = np.sqrt(6.0 / (shape[-2] * receptive + shape[-1] * receptive))
            weight.assign(rng.uniform(-limit, limit, size=shape).astype(np.float32))


# Configuration paramaters for the whole setup
seed = 42
gamma = 0.99  # Discount factor for past rewards
epsilon = 1.0  # Epsilon greedy parameter
epsilon_min = 0.1  # Minimum epsilon greedy parameter
epsilon_max = 1.0  # Maximum epsilon greedy parameter
epsilon_interval = (
    epsilon_max - epsilon_min
)  # Rate at which to reduce chance of random action being taken
batch_size = 32  # Size of batch taken from replay buffer
max_steps_per_episode = 60

np.random.seed(seed)
weights_rng = np.random.default_rng(seed)
env = CatchFrames(seed)

num_actions = 4


def create_q_model():
    # Network defined by the Deepmind paper
    inputs = layers.Input(
        shape=(
            36,
            36,
            4,
        )
    )

    # Convolutions on the frames on the screen
    layer1 = layers.Conv2D(32, 8, strides=4, activation="relu")(inputs)
    layer2 = layers.Conv2D(64, 4, strides=2, activation="relu")(layer1)
    layer3 = layers.Conv2D(64, 3, strides=1, activation="relu")(layer2)

    layer4 = layers.Flatten()(layer3)

    layer5 = layers.Dense(512, activation="relu")(layer4)
    action = layers.Dense(num_actions, activation="linear")(layer5)

    return keras.Model(inputs=inputs, outputs=action)


# The first model makes the predictions for Q-values which are used to
# make a action.
model = create_q_model()
set_numpy_weights(model, weights_rng)
# Build a target model for the prediction of future rewards.
# The weights of a target model get updated every 50 steps thus when the
# loss between the Q-values is calculated the target Q-value is stable.
model_target = create_q_model()
set_numpy_weights(model_target, weights_rng)

# In the Deepmind paper they use RMSProp however then Adam optimizer
# improves training time
optimizer = keras.optimizers.Adam(learning_rate=0.00025, clipnorm=1.0)

# Experience replay buffers
action_history = []
state_history = []
state_next_history = []
rewards_history = []
done_history = []
episode_reward_history = []
running_reward = 0
episode_count = 0
frame_count = 0
# Number of frames to take random action and observe output
epsilon_random_frames = 40
# Number of frames for exploration
epsilon_greedy_frames = 400.0
# Maximum replay length
max_memory_length = 100
# Train the model after 4 actions
update_after_actions = 4
# How often to update the target network
update_target_network = 50
# Using huber loss for stability
loss_function = keras.losses.Huber()

while episode_count < 3:  # Run until solved (here: for 3 episodes)
    state = np.array(env.reset())
    episode_reward = 0

    for timestep in range(1, max_steps_per_episode):
        frame_count += 1

        # Use epsilon-greedy for exploration
        if frame_count < epsilon_random_frames or epsilon > np.random.rand(1)[0]:
            # Take random action
            action = np.random.choice(num_actions)
        else:
            # Predict action Q-values
            # From environment state
            state_tensor = tf.convert_to_tensor(state)
            state_tensor = tf.expand_dims(state_tensor, 0)
            action_probs = model(state_tensor, training=False)
            # Take best action
            action = tf.argmax(action_probs[0]).numpy()

        # Decay probability of taking random action
        epsilon -= epsilon_interval / epsilon_greedy_frames
        epsilon = max(epsilon, epsilon_min)

        # Apply the sampled action in our environment
        state_next, reward, done, _ = env.step(action)
        state_next = np.array(state_next)

        episode_reward += reward

        # Save actions and states in replay buffer
        action_history.append(action)
        state_history.append(state)
        state_next_history.append(state_next)
        done_history.append(done)
        rewards_history.append(reward)
        state = state_next

        # Update every fourth frame and once batch size is over 32
        if frame_count % update_after_actions == 0 and len(done_history) > batch_size:

            # Get indices of samples for replay buffers
            indices = np.random.choice(range(len(done_history)), size=batch_size)

            # Using list comprehension to sample from replay buffer
            state_sample = np.array([state_history[i] for i in indices])
            state_next_sample = np.array([state_next_history[i] for i in indices])
            rewards_sample = [rewards_history[i] for i in indices]
            action_sample = [action_history[i] for i in indices]
            done_sample = tf.convert_to_tensor(
                [float(done_history[i]) for i in indices]
            )

            # Build the updated Q-values for the sampled future states
            # Use the target model for stability
            future_rewards = model_target.predict(state_next_sample)
            # Q value = reward + discount factor * expected future reward
            updated_q_values = rewards_sample + gamma * tf.reduce_max(
                future_rewards, axis=1
            )

            # If final frame set the last value to -1
            updated_q_values = updated_q_values * (1 - done_sample) - done_sample

            # Create a mask so we only calculate loss on the updated Q-values
            masks = tf.one_hot(action_sample, num_actions)

            with tf.GradientTape() as tape:
                # Train the model on the states and updated Q-values
                q_values = model(state_sample)

                # Apply the masks to the Q-values to get the Q-value for action taken
                q_action = tf.reduce_sum(tf.multiply(q_values, masks), axis=1)
                # Calculate loss between new Q-value and old Q-value
                loss = loss_function(updated_q_values, q_action)

            # Backpropagation
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        if frame_count % update_target_network == 0:
            # update the the target network with new weights
            model_target.set_weights(model.get_weights())
            # Log details
            template = "running reward: {:.2f} at episode {}, frame count {}"
            print(template.format(running_reward, episode_count, frame_count))

        # Limit the state and reward history
        if len(rewards_history) > max_memory_length:
            del rewards_history[:1]
            del state_history[:1]
            del state_next_history[:1]
            del action_history[:1]
            del done_history[:1]

        if done:
            break

    # Update running reward to check condition for solving
    episode_reward_history.append(episode_reward)
    if len(episode_reward_history) > 100:
        del episode_reward_history[:1]
    running_reward = np.mean(episode_reward_history)

    episode_count += 1
    print("episode {}: reward {}, running reward {:.4f}, epsilon {:.4f}, loss {:.6f}".format(
        episode_count, episode_reward, running_reward, epsilon, float(loss)))

    if running_reward > 40:  # Condition to consider the task solved
        print("Solved at episode {}!".format(episode_count))
        break
