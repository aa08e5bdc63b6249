"""TensorFlow guide "Basic training loops": a linear model as a tf.Module, trained by hand with GradientTape.

Source: tensorflow/docs, site/en/guide/basic_training_loops.ipynb (commit 7c3650212740204359d4ceae481abc79345541be),
https://www.tensorflow.org/guide/basic_training_loops. Rewritten after the guide, not copied: the same TF calls,
model, loop, hyperparameters and printed lines, in the guide's order.

Changes:
- The noise comes from a seeded numpy generator (the guide: `tf.random.normal`), so both engines see the same data.
- matplotlib plots are left out (the figures print nothing).
- The Keras part keeps `MyModelKeras` trained by the same hand-written loop, but leaves out
  `save_weights("my_checkpoint")` (Keras 3 in TF 2.21 refuses a name without `.weights.h5`) and the
  `compile`/`fit` cells (the Keras Model API is issue 20).
"""

import numpy as np
import tensorflow as tf

TRUE_W = 3.0
TRUE_B = 2.0
NUM_EXAMPLES = 201

# Inputs evenly spread over [-2, 2] (tf.linspace gives float64 here, hence the cast).
x = tf.linspace(-2, 2, NUM_EXAMPLES)
x = tf.cast(x, tf.float32)


def f(x):
    return x * TRUE_W + TRUE_B


noise = tf.constant(np.random.default_rng(0).normal(size=[NUM_EXAMPLES]).astype(np.float32))
y = f(x) + noise


class MyModel(tf.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Fixed starting values, as in the guide (normally random).
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

    def __call__(self, x):
        return self.w * x + self.b


model = MyModel()
print("Variables:", model.variables)
assert model(3.0).numpy() == 15.0


def loss(target_y, predicted_y):
    # Mean squared error over the whole batch.
    return tf.reduce_mean(tf.square(target_y - predicted_y))


print("Current loss: %1.6f" % loss(y, model(x)).numpy())


def train(model, x, y, learning_rate):
    with tf.GradientTape() as t:
        current_loss = loss(y, model(x))
    dw, db = t.gradient(current_loss, [model.w, model.b])
    model.w.assign_sub(learning_rate * dw)
    model.b.assign_sub(learning_rate * db)


model = MyModel()
weights = []
biases = []
epochs = range(10)


def report(model, loss):
    return f"W = {model.w.numpy():1.2f}, b = {model.b.numpy():1.2f}, loss={loss:2.5f}"


def training_loop(model, x, y):
    for epoch in epochs:
        train(model, x, y, learning_rate=0.1)
        weights.append(model.w.numpy())
        biases.append(model.b.numpy())
        current_loss = loss(y, model(x))
        print(f"Epoch {epoch:2d}:")
        print("    ", report(model, current_loss))


current_loss = loss(y, model(x))
print(f"Starting:")
print("    ", report(model, current_loss))
training_loop(model, x, y)

print("Current loss: %1.6f" % loss(model(x), y).numpy())


class MyModelKeras(tf.keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

    def call(self, x):
        return self.w * x + self.b


keras_model = MyModelKeras()
training_loop(keras_model, x, y)
