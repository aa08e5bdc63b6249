"""TensorFlow tutorial "Deep Convolutional Generative Adversarial Network": a generator and a discriminator trained
against each other with two tapes in one `tf.function` step, saved with `tf.train.Checkpoint` and restored.

Source: tensorflow/docs, site/en/tutorials/generative/dcgan.ipynb (commit
7c3650212740204359d4ceae481abc79345541be), https://www.tensorflow.org/tutorials/generative/dcgan. Rewritten
after the tutorial, not copied: the same generator and discriminator (layers, sizes and `output_shape` asserts),
losses, optimizers, `tf.function` train step with two tapes, training loop, checkpoint and restore.

Changes:
- MNIST (`tf.keras.datasets.mnist.load_data()`, a download) is replaced by 64 seeded numpy uint8 "digits" of
  28x28 pixels, scaled to [-1, 1] as the tutorial does; BATCH_SIZE is 32 and EPOCHS 5 (the tutorial: 60,000
  images, 256, 50). The dataset is not shuffled (`.shuffle(BUFFER_SIZE)` is left out: tf.data's shuffle draws
  differ between engines).
- The noise comes from a seeded numpy generator: `seed`, the first generator call's input, and each step's
  noise, which `train_step` takes as its second argument (the tutorial draws it with `tf.random.normal` inside
  the step; the engines' random numbers differ).
- The discriminator's `Dropout(0.3)` layers have rate 0.0: the engines draw different dropout masks.
- The weights of both models are set from a seeded numpy generator after they are built (Glorot uniform kernels;
  biases and batch-normalisation parameters keep Keras's constant initial values).
- The checkpoints go to a temporary directory and are written by a `tf.train.CheckpointManager` (`max_to_keep=2`)
  every 2 epochs (the tutorial: `checkpoint.save(file_prefix)` every 15 epochs into './training_checkpoints');
  the restore is the tutorial's `checkpoint.restore(tf.train.latest_checkpoint(checkpoint_dir))`. The program
  prints the kept checkpoints and the generated images' statistics before and after the restore, which takes
  the models back to epoch 4.
- `generate_and_save_images` prints the mean and standard deviation of the generated images instead of plotting
  them; the "Time for epoch" lines print wall time (the test masks their numbers); the GIF part is left out.
"""

import os
import tempfile
import time

import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

rng = np.random.default_rng(0)


def set_numpy_weights(model):
    """Glorot-uniform kernels drawn by numpy; one-dimensional weights keep their constant initial values."""
    for weight in model.weights:
        shape = tuple(weight.shape)
        if len(shape) >= 2:
            receptive = int(np.prod(shape[:-2]))
            limit = np.sqrt(6.0 / (shape[-2] * receptive + shape[-1] * receptive))
            weight.assign(rng.uniform(-limit, limit, size=shape).astype(np.float32))


print(tf.__version__)

# Each "digit" is one of ten fixed random patterns plus noise, as uint8 pixels.
patterns = rng.integers(0, 256, size=(10, 28, 28))
train_images = np.clip(patterns[rng.integers(0, 10, size=64)] + rng.normal(0, 30, size=(64, 28, 28)), 0, 255)
train_images = train_images.astype(np.uint8)

train_images = train_images.reshape(train_images.shape[0], 28, 28, 1).astype('float32')
train_images = (train_images - 127.5) / 127.5  # Normalize the images to [-1, 1]

BUFFER_SIZE = 64
BATCH_SIZE = 32

# Batch the data
train_dataset = tf.data.Dataset.from_tensor_slices(train_images).batch(BATCH_SIZE)


def make_generator_model():
    model = tf.keras.Sequential()
    model.add(layers.Dense(7*7*256, use_bias=False, input_shape=(100,)))
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Reshape((7, 7, 256)))
    assert model.output_shape == (None, 7, 7, 256)  # Note: None is the batch size

    model.add(layers.Conv2DTranspose(128, (5, 5), strides=(1, 1), padding='same', use_bias=False))
    assert model.output_shape == (None, 7, 7, 128)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Conv2DTranspose(64, (5, 5), strides=(2, 2), padding='same', use_bias=False))
    assert model.output_shape == (None, 14, 14, 64)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Conv2DTranspose(1, (5, 5), strides=(2, 2), padding='same', use_bias=False, activation='tanh'))
    assert model.output_shape == (None, 28, 28, 1)

    return model


generator = make_generator_model()
set_numpy_weights(generator)

noise = rng.standard_normal((1, 100)).astype(np.float32)
generated_image = generator(noise, training=False)
print("generated image", generated_image.shape, "mean {:.6f}".format(float(tf.reduce_mean(generated_image))))


def make_discriminator_model():
    model = tf.keras.Sequential()
    model.add(layers.Conv2D(64, (5, 5), strides=(2, 2), padding='same',
                            input_shape=[28, 28, 1]))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.0))

    model.add(layers.Conv2D(128, (5, 5), strides=(2, 2), padding='same'))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.0))

    model.add(layers.Flatten())
    model.add(layers.Dense(1))

    return model


discriminator = make_discriminator_model()
set_numpy_weights(discriminator)
decision = discriminator(generated_image)
print(decision)

# This method returns a helper function to compute cross entropy loss
cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def discriminator_loss(real_output, fake_output):
    real_loss = cross_entropy(tf.ones_like(real_output), real_output)
    fake_loss = cross_entropy(tf.zeros_like(fake_output), fake_output)
    total_loss = real_loss + fake_loss
    return total_loss


def generator_loss(fake_output):
    return cross_entropy(tf.ones_like(fake_output), fake_output)


generator_optimizer = tf.keras.optimizers.Adam(1e-4)
discriminator_optimizer = tf.keras.optimizers.Adam(1e-4)

checkpoint_dir = tempfile.mkdtemp()
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
checkpoint = tf.train.Checkpoint(generator_optimizer=generator_optimizer,
                                 discriminator_optimizer=discriminator_optimizer,
                                 generator=generator,
                                 discriminator=discriminator)
manager = tf.train.CheckpointManager(checkpoint, checkpoint_dir, max_to_keep=2)

EPOCHS = 5
noise_dim = 100
num_examples_to_generate = 16

# You will reuse this seed overtime (so it's easier)
# to visualize progress in the animated GIF)
seed = rng.standard_normal((num_examples_to_generate, noise_dim)).astype(np.float32)


# Notice the use of `tf.function`
# This annotation causes the function to be "compiled".
@tf.function
def train_step(images, noise):
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        generated_images = generator(noise, training=True)

        real_output = discriminator(images, training=True)
        fake_output = discriminator(generated_images, training=True)

        gen_loss = generator_loss(fake_output)
        disc_loss = discriminator_loss(real_output, fake_output)

    gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
    gradients_of_discriminator = disc_tape.gradient(disc_loss, discriminator.trainable_variables)

    generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
    discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator, discriminator.trainable_variables))


def train(dataset, epochs):
    for epoch in range(epochs):
        start = time.time()

        for image_batch in dataset:
            train_step(image_batch, rng.standard_normal((BATCH_SIZE, noise_dim)).astype(np.float32))

        # Produce images for the GIF as you go
        generate_and_save_images(generator,
                                 epoch + 1,
                                 seed)

        # Save the model every 2 epochs
        if (epoch + 1) % 2 == 0:
            manager.save()

        print('Time for epoch {} is {} sec'.format(epoch + 1, time.time()-start))

    # Generate after the final epoch
    generate_and_save_images(generator,
                             epochs,
                             seed)


def generate_and_save_images(model, epoch, test_input):
    # Notice `training` is set to False.
    # This is so all layers run in inference mode (batchnorm).
    predictions = model(test_input, training=False)
    pixels = predictions[:, :, :, 0] * 127.5 + 127.5
    print('image_at_epoch_{:04d}: mean {:.5f} std {:.5f}'.format(
        epoch, float(tf.reduce_mean(pixels)), float(tf.math.reduce_std(pixels))))


train(train_dataset, EPOCHS)

print("checkpoints:", [os.path.basename(path) for path in manager.checkpoints])
print("latest:", os.path.basename(tf.train.latest_checkpoint(checkpoint_dir)))
print("optimizer iterations before restore:", int(generator_optimizer.iterations))
status = checkpoint.restore(tf.train.latest_checkpoint(checkpoint_dir))
status.assert_consumed()
print("optimizer iterations after restore:", int(generator_optimizer.iterations))
generate_and_save_images(generator, 4, seed)
