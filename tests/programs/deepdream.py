"""TensorFlow tutorial "DeepDream": gradient ascent on an image to excite chosen layers of a convolutional
network, in a `tf.function` with an `input_signature` of unknown image size and a `tf.range` loop.

Source: tensorflow/docs, site/en/tutorials/generative/deepdream.ipynb (commit
7c3650212740204359d4ceae481abc79345541be), https://www.tensorflow.org/tutorials/generative/deepdream. Rewritten
after the tutorial, not copied: the same `calc_loss`, `DeepDream` module, `run_deep_dream_simple` loop and printed
lines.

Changes:
- The downloaded photo is replaced by a seeded numpy uint8 image of 32x32 pixels (the tutorial: up to 500).
- The pretrained InceptionV3 is replaced by a small functional convolutional network whose layers the dream
  model taps are named 'mixed3' and 'mixed5', as the tutorial's are; its weights are set from a seeded numpy
  generator. `tf.keras.applications.inception_v3.preprocess_input` (x / 127.5 - 1) is written out as
  `preprocess_input` below.
- `show` prints the image's shape and mean pixel instead of displaying it (IPython and PIL are not used), and
  `display.clear_output` is left out.
- Only the first part ("the main loop") is kept: the octave and tiled parts need `tf.image.resize` and
  `tf.random.uniform` draws, which differ between engines.
"""

import numpy as np
import tensorflow as tf


def deprocess(img):
    img = 255 * (img + 1.0) / 2.0
    return tf.cast(img, tf.uint8)


def show(img):
    img = np.array(img)
    print("image", img.shape, "mean pixel {:.4f}".format(img.mean()))


def preprocess_input(img):
    return img.astype(np.float32) / 127.5 - 1.0


original_img = np.random.default_rng(0).integers(0, 256, size=(32, 32, 3)).astype(np.uint8)
show(original_img)

# A stand-in for InceptionV3: the layers the dream model taps are named as the tutorial's.
inputs = tf.keras.Input(shape=(None, None, 3))
x = tf.keras.layers.Conv2D(8, 3, activation="relu", name="conv0")(inputs)
x = tf.keras.layers.Conv2D(8, 3, activation="relu", name="mixed3")(x)
x = tf.keras.layers.MaxPooling2D()(x)
x = tf.keras.layers.Conv2D(16, 3, activation="relu", name="mixed5")(x)
base_model = tf.keras.Model(inputs, x)
weights_rng = np.random.default_rng(1)
base_model.set_weights([weights_rng.normal(0, 0.3, size=w.shape).astype(np.float32)
                        for w in base_model.get_weights()])

names = ['mixed3', 'mixed5']
layers = [base_model.get_layer(name).output for name in names]
dream_model = tf.keras.Model(inputs=base_model.input, outputs=layers)


def calc_loss(img, model):
    # The mean activation of each chosen layer, for a batch of one image, summed.
    img_batch = tf.expand_dims(img, axis=0)
    layer_activations = model(img_batch)
    if len(layer_activations) == 1:
        layer_activations = [layer_activations]
    losses = []
    for act in layer_activations:
        loss = tf.math.reduce_mean(act)
        losses.append(loss)
    return tf.reduce_sum(losses)


class DeepDream(tf.Module):
    def __init__(self, model):
        self.model = model

    @tf.function(
        input_signature=(
            tf.TensorSpec(shape=[None, None, 3], dtype=tf.float32),
            tf.TensorSpec(shape=[], dtype=tf.int32),
            tf.TensorSpec(shape=[], dtype=tf.float32),)
    )
    def __call__(self, img, steps, step_size):
        print("Tracing")
        loss = tf.constant(0.0)
        for n in tf.range(steps):
            with tf.GradientTape() as tape:
                tape.watch(img)  # a tensor, not a variable: the tape must be told to watch it
                loss = calc_loss(img, self.model)
            gradients = tape.gradient(loss, img)
            gradients /= tf.math.reduce_std(gradients) + 1e-8  # normalised steps
            img = img + gradients * step_size  # ascent: the image moves to excite the layers more
            img = tf.clip_by_value(img, -1, 1)
        return loss, img


deepdream = DeepDream(dream_model)


def run_deep_dream_simple(img, steps=100, step_size=0.01):
    img = preprocess_input(img)
    img = tf.convert_to_tensor(img)
    step_size = tf.convert_to_tensor(step_size)
    steps_remaining = steps
    step = 0
    while steps_remaining:
        if steps_remaining > 100:
            run_steps = tf.constant(100)
        else:
            run_steps = tf.constant(steps_remaining)
        steps_remaining -= run_steps
        step += run_steps
        loss, img = deepdream(img, run_steps, tf.constant(step_size))
        show(deprocess(img))
        print("Step {}, loss {}".format(step, loss))
    result = deprocess(img)
    show(result)
    return result


dream_img = run_deep_dream_simple(img=original_img, steps=100, step_size=0.01)
