"""keras-io example "Variational AutoEncoder" (fchollet): a convolutional VAE trained by `fit` through a custom
`train_step` with a GradientTape and metric trackers.

Source: keras-team/keras-io, examples/generative/vae.py (commit cca4efba8e0b8514ae3817931696294039b3bfc9; the
tf.keras version, last modified 2020/05/03), https://keras.io/examples/generative/vae/. Rewritten after the
example, not copied: the same `Sampling` layer, encoder and decoder (printed by `summary()`), `VAE` model with its
`metrics` property and `train_step`, `compile` and `fit`.

Changes:
- MNIST (`keras.datasets.mnist.load_data()`, a download) is replaced by 256 seeded numpy uint8 "digits" of 28x28
  pixels (each one of ten fixed random blobs), scaled to [0, 1] as the example does; `fit` runs 3 epochs (the
  example: 70,000 digits, 30 epochs) and with `shuffle=False` (Keras's shuffle draws differ between engines).
- `Sampling` takes its epsilon from a fixed numpy draw of 128 rows (the batch size) instead of
  `tf.keras.backend.random_normal`: the engines' random numbers differ. It slices the draw to the batch with
  the example's own `tf.shape(z_mean)` sizes.
- The weights are set from a seeded numpy generator after the models are built (Glorot uniform kernels, zero
  biases, as Keras initialises them).
- The plots are left out; instead the program prints the latent means of the first 4 digits (from
  `vae.encoder.predict`, as `plot_label_clusters` computes them) and a decoded digit's mean pixel (from
  `vae.decoder.predict`, as `plot_latent_space` does).
"""

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

rng = np.random.default_rng(0)
EPSILON = rng.standard_normal((128, 2)).astype(np.float32)


def set_numpy_weights(model):
    """Glorot-uniform kernels drawn by numpy; one-dimensional weights keep their constant initial values."""
    for weight in model.weights:
        shape = tuple(weight.shape)
        if len(shape) >= 2:
            receptive = int(np.prod(shape[:-2]))
            limit = np.sqrt(6.0 / (shape[-2] * receptive + shape[-1] * receptive))
            weight.assign(rng.uniform(-limit, limit, size=shape).astype(np.float32))


class Sampling(layers.Layer):
    """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = tf.shape(z_mean)[0]
        dim = tf.shape(z_mean)[1]
        epsilon = tf.slice(EPSILON, [0, 0], [batch, dim])
        return z_mean + tf.exp(0.5 * z_log_var) * epsilon


latent_dim = 2

encoder_inputs = keras.Input(shape=(28, 28, 1))
x = layers.Conv2D(32, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
x = layers.Conv2D(64, 3, activation="relu", strides=2, padding="same")(x)
x = layers.Flatten()(x)
x = layers.Dense(16, activation="relu")(x)
z_mean = layers.Dense(latent_dim, name="z_mean")(x)
z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
z = Sampling()([z_mean, z_log_var])
encoder = keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")
encoder.summary()

latent_inputs = keras.Input(shape=(latent_dim,))
x = layers.Dense(7 * 7 * 64, activation="relu")(latent_inputs)
x = layers.Reshape((7, 7, 64))(x)
x = layers.Conv2DTranspose(64, 3, activation="relu", strides=2, padding="same")(x)
x = layers.Conv2DTranspose(32, 3, activation="relu", strides=2, padding="same")(x)
decoder_outputs = layers.Conv2DTranspose(1, 3, activation="sigmoid", padding="same")(x)
decoder = keras.Model(latent_inputs, decoder_outputs, name="decoder")
decoder.summary()

set_numpy_weights(encoder)
set_numpy_weights(decoder)


class VAE(keras.Model):
    def __init__(self, encoder, decoder, **kwargs):
        super(VAE, self).__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder
        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(
            name="reconstruction_loss"
        )
        self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

    @property
    def metrics(self):
        return [
            self.total_loss_tracker,
            self.reconstruction_loss_tracker,
            self.kl_loss_tracker,
        ]

    def train_step(self, data):
        with tf.GradientTape() as tape:
            z_mean, z_log_var, z = self.encoder(data)
            reconstruction = self.decoder(z)
            reconstruction_loss = tf.reduce_mean(
                tf.reduce_sum(
                    keras.losses.binary_crossentropy(data, reconstruction), axis=(1, 2)
                )
            )
            kl_loss = -0.5 * (1 + z_log_var - tf.square(z_mean) - tf.exp(z_log_var))
            kl_loss = tf.reduce_mean(tf.reduce_sum(kl_loss, axis=1))
            total_loss = reconstruction_loss + kl_loss
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.total_loss_tracker.update_state(total_loss)
        self.reconstruction_loss_tracker.update_state(reconstruction_loss)
        self.kl_loss_tracker.update_state(kl_loss)
        return {
            "loss": self.total_loss_tracker.result(),
            "reconstruction_loss": self.reconstruction_loss_tracker.result(),
            "kl_loss": self.kl_loss_tracker.result(),
        }


# Ten fixed blobs of ink, each digit one of them with some pixels flipped.
blobs = (rng.random((10, 28, 28)) < 0.3)
digits = blobs[rng.integers(0, 10, size=256)] ^ (rng.random((256, 28, 28)) < 0.05)
x_train = (digits * 255).astype(np.uint8)
mnist_digits = np.expand_dims(x_train, -1).astype("float32") / 255

vae = VAE(encoder, decoder)
vae.compile(optimizer=keras.optimizers.Adam())
vae.fit(mnist_digits, epochs=3, batch_size=128, shuffle=False)

z_mean, _, _ = vae.encoder.predict(mnist_digits[:4])
print("z_mean of 4 digits:", np.round(z_mean, 5).tolist())
x_decoded = vae.decoder.predict(np.array([[0.5, -0.5]]))
print("decoded digit", x_decoded.shape, "mean pixel {:.5f}".format(float(x_decoded.mean())))
