"""Keras guide "Writing a training loop from scratch in TensorFlow" (fchollet): MNIST-sized custom loops with
GradientTape, metrics, `tf.function` steps and losses added by layers.

Source: keras-team/keras-io, guides/writing_a_custom_training_loop_in_tensorflow.py (commit
1806537c4333fbff1f9fd038b78179beeda480fb; last modified 2023/06/25),
https://keras.io/guides/writing_a_custom_training_loop_in_tensorflow/. Rewritten after the guide, not copied: the
same model, optimizer, loss, metrics, loops, `tf.function` steps and printed lines, in the guide's order.

Changes:
- MNIST (`keras.datasets.mnist.load_data()`, a download) is replaced by seeded numpy data of the same form:
  binarised uint8 "images" of 784 pixels (0 or 1: raw 0-255 pixels make the first steps' losses so large that
  training is chaotic, and even TF with and without oneDNN disagrees after 100 steps), each class a fixed random
  pattern with 30% of its pixels flipped, integer labels 0-9;
  3,232 training and 320 validation examples (MNIST: 50,000 and 10,000), so that step 100 is still logged.
- tf.data is the sole obstacle in the input pipeline (issue 19), so `Dataset.from_tensor_slices(...).shuffle(1024)
  .batch(32)` is replaced by `NumpyBatches`, which yields the same batches of numpy arrays and reshuffles on each
  pass, from a seeded numpy generator (tf.data's shuffle draws differ between engines anyway).
- The first loop runs 1 epoch (the guide: 3).
- The "Time taken" lines print wall time; the test masks their numbers.
- The last section, the GAN, is left out: its latent vectors come from `tf.random.normal`, whose draws differ
  between engines, and its layers (Conv2DTranspose, LeakyReLU, Reshape, GlobalMaxPooling2D) are issue 20's.
"""

import time
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # the guide is written for the TensorFlow backend

import tensorflow as tf
import keras
import numpy as np


class NumpyBatches:
    """Batches of (x, y) numpy arrays, reshuffled on each pass when `seed` is given."""

    def __init__(self, x, y, batch_size, seed=None):
        self.x, self.y, self.batch_size = x, y, batch_size
        self.rng = None if seed is None else np.random.default_rng(seed)

    def __iter__(self):
        order = np.arange(len(self.x)) if self.rng is None else self.rng.permutation(len(self.x))
        for start in range(0, len(order), self.batch_size):
            index = order[start:start + self.batch_size]
            yield self.x[index], self.y[index]


def load_data(rng, n_train, n_test):
    patterns = rng.integers(0, 2, size=(10, 28, 28))

    def draw(n):
        labels = rng.integers(0, 10, size=n).astype(np.uint8)
        flips = rng.random((n, 28, 28)) < 0.3
        return np.where(flips, 1 - patterns[labels], patterns[labels]).astype(np.uint8), labels

    return draw(n_train), draw(n_test)


def get_model():
    inputs = keras.Input(shape=(784,), name="digits")
    x1 = keras.layers.Dense(64, activation="relu")(inputs)
    x2 = keras.layers.Dense(64, activation="relu")(x1)
    outputs = keras.layers.Dense(10, name="predictions")(x2)
    model = keras.Model(inputs=inputs, outputs=outputs)
    set_numpy_weights(model, weights_rng)
    return model


def set_numpy_weights(model, rng):
    """Glorot-uniform kernels and zero biases, drawn by numpy, so both engines start alike."""
    for weight in model.weights:
        shape = tuple(weight.shape)
        if len(shape) == 2:
            limit = np.sqrt(6.0 / (shape[0] + shape[1]))
            weight.assign(rng.uniform(-limit, limit, size=shape).astype(np.float32))
        else:
            weight.assign(np.zeros(shape, dtype=np.float32))


weights_rng = np.random.default_rng(1)

# A first end-to-end example.
model = get_model()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

batch_size = 32
(x_train, y_train), (x_test, y_test) = load_data(np.random.default_rng(0), 3552, 320)
x_train = np.reshape(x_train, (-1, 784))
x_test = np.reshape(x_test, (-1, 784))

# The last 320 training examples are kept for validation.
x_val = x_train[-320:]
y_val = y_train[-320:]
x_train = x_train[:-320]
y_train = y_train[:-320]

train_dataset = NumpyBatches(x_train, y_train, batch_size, seed=2)
val_dataset = NumpyBatches(x_val, y_val, batch_size)

epochs = 1
for epoch in range(epochs):
    print(f"\nStart of epoch {epoch}")
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        # The forward pass runs under the tape, so the loss can be differentiated...
        with tf.GradientTape() as tape:
            logits = model(x_batch_train, training=True)
            loss_value = loss_fn(y_batch_train, logits)
        # ...with respect to the trainable weights, which the optimizer then updates.
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)

        if step % 100 == 0:
            print(f"Training loss (for 1 batch) at step {step}: {float(loss_value):.4f}")
            print(f"Seen so far: {(step + 1) * batch_size} samples")

# Low-level handling of metrics.
model = get_model()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
val_acc_metric = keras.metrics.SparseCategoricalAccuracy()

epochs = 2
for epoch in range(epochs):
    print(f"\nStart of epoch {epoch}")
    start_time = time.time()
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        with tf.GradientTape() as tape:
            logits = model(x_batch_train, training=True)
            loss_value = loss_fn(y_batch_train, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        train_acc_metric.update_state(y_batch_train, logits)

        if step % 100 == 0:
            print(f"Training loss (for 1 batch) at step {step}: {float(loss_value):.4f}")
            print(f"Seen so far: {(step + 1) * batch_size} samples")

    train_acc = train_acc_metric.result()
    print(f"Training acc over epoch: {float(train_acc):.4f}")
    train_acc_metric.reset_state()

    for x_batch_val, y_batch_val in val_dataset:
        val_logits = model(x_batch_val, training=False)
        val_acc_metric.update_state(y_batch_val, val_logits)
    val_acc = val_acc_metric.result()
    val_acc_metric.reset_state()
    print(f"Validation acc: {float(val_acc):.4f}")
    print(f"Time taken: {time.time() - start_time:.2f}s")


# Speeding up the training step with tf.function.
@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply(grads, model.trainable_weights)
    train_acc_metric.update_state(y, logits)
    return loss_value


@tf.function
def test_step(x, y):
    val_logits = model(x, training=False)
    val_acc_metric.update_state(y, val_logits)


epochs = 2
for epoch in range(epochs):
    print(f"\nStart of epoch {epoch}")
    start_time = time.time()
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        loss_value = train_step(x_batch_train, y_batch_train)
        if step % 100 == 0:
            print(f"Training loss (for 1 batch) at step {step}: {float(loss_value):.4f}")
            print(f"Seen so far: {(step + 1) * batch_size} samples")

    train_acc = train_acc_metric.result()
    print(f"Training acc over epoch: {float(train_acc):.4f}")
    train_acc_metric.reset_state()

    for x_batch_val, y_batch_val in val_dataset:
        test_step(x_batch_val, y_batch_val)
    val_acc = val_acc_metric.result()
    val_acc_metric.reset_state()
    print(f"Validation acc: {float(val_acc):.4f}")
    print(f"Time taken: {time.time() - start_time:.2f}s")


# Low-level handling of losses tracked by the model: a layer that adds an activity regularization loss.
class ActivityRegularizationLayer(keras.layers.Layer):
    def call(self, inputs):
        self.add_loss(1e-2 * tf.reduce_sum(inputs))
        return inputs


inputs = keras.Input(shape=(784,), name="digits")
x = keras.layers.Dense(64, activation="relu")(inputs)
x = ActivityRegularizationLayer()(x)
x = keras.layers.Dense(64, activation="relu")(x)
outputs = keras.layers.Dense(10, name="predictions")(x)
model = keras.Model(inputs=inputs, outputs=outputs)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
        # The losses the layers added during this forward pass.
        loss_value += sum(model.losses)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply(grads, model.trainable_weights)
    train_acc_metric.update_state(y, logits)
    return loss_value
