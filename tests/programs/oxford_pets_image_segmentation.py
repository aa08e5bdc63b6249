"""keras-io example "Image segmentation with a U-Net-like architecture" (fchollet): an Xception-style U-Net
(separable convolutions, batch normalisation, residual additions, transposed convolutions, upsampling) trained by
`fit` on a `keras.utils.Sequence` of images and per-pixel masks.

Source: keras-team/keras-io, examples/vision/oxford_pets_image_segmentation.py (commit
e70ae747b458a92dfd71486bf65f4eb2d265f7b0; last modified 2020/04/20),
https://keras.io/examples/vision/oxford_pets_image_segmentation/. Rewritten after the example, not copied: the
same path lists and their `random.Random(1337)` split, `OxfordPets` Sequence, `get_model`, `clear_session`,
`summary()`, compile, `ModelCheckpoint`, `fit` with validation data and `predict`, in the example's order.

Changes:
- The Oxford Pets download (JPEG photos and PNG trimaps, read by `load_img`) is replaced by 28 seeded numpy
  images of 32x32 pixels (the example: 7,390 of 160x160), each a noisy background with a brighter ellipse (the
  "pet"), and trimaps made from the same ellipse (1: pet, 2: background, 3: its border). They are kept in memory
  under file names like the dataset's, and `load_img` below returns them from there; `img_size` is (32, 32),
  `batch_size` 4, `val_samples` 8 and `epochs` 1 (the example: (160, 160), 32, 1,000 and 15). Raw 0-255 pixels
  (as in the example) and batch-norm moving statistics that five steps leave far from the batches' make this
  short run chaotic: in a second epoch TF's own kernels (with and without oneDNN) already differ at 1e-3, and in
  the predictions at 1e-2, so one epoch is run and TF's output is recorded without oneDNN (corpus.py).
- Python's global `random` is seeded (`random.seed(1337)`) just before `fit`, which shuffles a Sequence's batch
  order with it (Keras also draws from it for each unseeded initializer, so it is seeded after the model is built).
- The weights are set from a seeded numpy generator after the model is built (Glorot uniform kernels; biases and
  batch-normalisation parameters keep Keras's constant initial values).
- `ModelCheckpoint` writes to a temporary directory, under the Keras 3 version's name
  "oxford_segmentation.keras" (Keras 3 refuses the original ".h5" model file).
- The IPython/PIL displays are left out; the program prints the predictions' shape and the predicted mask's
  class counts for validation image #5 (the example: `display_mask(10)` of its 1,000).
"""

import os
import random
import tempfile

import numpy as np

data_rng = np.random.default_rng(0)
names = [f"{breed}_{i}" for breed in ("Abyssinian", "beagle", "Bengal", "boxer") for i in range(1, 8)]
IMAGES, TRIMAPS = {}, {}
for name in names:
    rows, cols = np.mgrid[0:32, 0:32]
    centre, radii = data_rng.uniform(10, 22, size=2), data_rng.uniform(5, 10, size=2)
    distance = ((rows - centre[0]) / radii[0]) ** 2 + ((cols - centre[1]) / radii[1]) ** 2
    image = data_rng.integers(0, 120, size=(32, 32, 3)) + np.where(distance < 1, 110, 0)[..., None]
    IMAGES[os.path.join("images/", name + ".jpg")] = image.astype(np.uint8)
    trimap = np.where(distance < 0.7, 1, np.where(distance < 1.3, 3, 2))
    TRIMAPS[os.path.join("annotations/trimaps/", name + ".png")] = trimap.astype(np.uint8)


def load_img(path, target_size=None, color_mode="rgb"):
    """The generated image (or trimap) stored under `path`, as an array of `target_size`."""
    array = TRIMAPS[path] if color_mode == "grayscale" else IMAGES[path]
    assert array.shape[:2] == target_size
    return array


input_dir = "images/"
target_dir = "annotations/trimaps/"
img_size = (32, 32)
num_classes = 3
batch_size = 4

input_img_paths = sorted(
    [
        os.path.join(input_dir, fname)
        for fname in [os.path.basename(path) for path in IMAGES]
        if fname.endswith(".jpg")
    ]
)
target_img_paths = sorted(
    [
        os.path.join(target_dir, fname)
        for fname in [os.path.basename(path) for path in TRIMAPS]
        if fname.endswith(".png") and not fname.startswith(".")
    ]
)

print("Number of samples:", len(input_img_paths))

for input_path, target_path in zip(input_img_paths[:10], target_img_paths[:10]):
    print(input_path, "|", target_path)

from tensorflow import keras


class OxfordPets(keras.utils.Sequence):
    """Helper to iterate over the data (as Numpy arrays)."""

    def __init__(self, batch_size, img_size, input_img_paths, target_img_paths):
        self.batch_size = batch_size
        self.img_size = img_size
        self.input_img_paths = input_img_paths
        self.target_img_paths = target_img_paths

    def __len__(self):
        return len(self.target_img_paths) // self.batch_size

    def __getitem__(self, idx):
        """Returns tuple (input, target) correspond to batch #idx."""
        i = idx * self.batch_size
        batch_input_img_paths = self.input_img_paths[i : i + self.batch_size]
        batch_target_img_paths = self.target_img_paths[i : i + self.batch_size]
        x = np.zeros((self.batch_size,) + self.img_size + (3,), dtype="float32")
        for j, path in enumerate(batch_input_img_paths):
            img = load_img(path, target_size=self.img_size)
            x[j] = img
        y = np.zeros((self.batch_size,) + self.img_size + (1,), dtype="uint8")
        for j, path in enumerate(batch_target_img_paths):
            img = load_img(path, target_size=self.img_size, color_mode="grayscale")
            y[j] = np.expand_dims(img, 2)
            # Ground truth labels are 1, 2, 3. Subtract one to make them 0, 1, 2:
            y[j] -= 1
        return x, y


from tensorflow.keras import layers


def get_model(img_size, num_classes):
    inputs = keras.Input(shape=img_size + (3,))

    ### [First half of the network: downsampling inputs] ###

    # Entry block
    x = layers.Conv2D(32, 3, strides=2, padding="same")(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)

    previous_block_activation = x  # Set aside residual

    # Blocks 1, 2, 3 are identical apart from the feature depth.
    for filters in [64, 128, 256]:
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.MaxPooling2D(3, strides=2, padding="same")(x)

        # Project residual
        residual = layers.Conv2D(filters, 1, strides=2, padding="same")(
            previous_block_activation
        )
        x = layers.add([x, residual])  # Add back residual
        previous_block_activation = x  # Set aside next residual

    ### [Second half of the network: upsampling inputs] ###

    for filters in [256, 128, 64, 32]:
        x = layers.Activation("relu")(x)
        x = layers.Conv2DTranspose(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.Activation("relu")(x)
        x = layers.Conv2DTranspose(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.UpSampling2D(2)(x)

        # Project residual
        residual = layers.UpSampling2D(2)(previous_block_activation)
        residual = layers.Conv2D(filters, 1, padding="same")(residual)
        x = layers.add([x, residual])  # Add back residual
        previous_block_activation = x  # Set aside next residual

    # Add a per-pixel classification layer
    outputs = layers.Conv2D(num_classes, 3, activation="softmax", padding="same")(x)

    # Define the model
    model = keras.Model(inputs, outputs)
    return model


# Free up RAM in case the model definition cells were run multiple times
keras.backend.clear_session()

# Build model
model = get_model(img_size, num_classes)
model.summary()

weights_rng = np.random.default_rng(1)
for weight in model.weights:
    shape = tuple(weight.shape)
    if len(shape) >= 2:
        receptive = int(np.prod(shape[:-2]))
        limit = np.sqrt(6.0 / (shape[-2] * receptive + shape[-1] * receptive))
        weight.assign(weights_rng.uniform(-limit, limit, size=shape).astype(np.float32))

# Split our img paths into a training and a validation set
val_samples = 8
random.Random(1337).shuffle(input_img_paths)
random.Random(1337).shuffle(target_img_paths)
train_input_img_paths = input_img_paths[:-val_samples]
train_target_img_paths = target_img_paths[:-val_samples]
val_input_img_paths = input_img_paths[-val_samples:]
val_target_img_paths = target_img_paths[-val_samples:]

# Instantiate data Sequences for each split
train_gen = OxfordPets(
    batch_size, img_size, train_input_img_paths, train_target_img_paths
)
val_gen = OxfordPets(batch_size, img_size, val_input_img_paths, val_target_img_paths)

# Configure the model for training.
# We use the "sparse" version of categorical_crossentropy
# because our target data is integers.
model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy")

callbacks = [
    keras.callbacks.ModelCheckpoint(os.path.join(tempfile.mkdtemp(), "oxford_segmentation.keras"),
                                    save_best_only=True)
]

# Train the model, doing validation at the end of each epoch.
epochs = 1
random.seed(1337)
model.fit(train_gen, epochs=epochs, validation_data=val_gen, callbacks=callbacks)

# Generate predictions for all images in the validation set

val_gen = OxfordPets(batch_size, img_size, val_input_img_paths, val_target_img_paths)
val_preds = model.predict(val_gen)
print("predictions", val_preds.shape, "mean per class", np.round(val_preds.mean(axis=(0, 1, 2)), 5).tolist())


def display_mask(i):
    """Quick utility to display a model's prediction."""
    mask = np.argmax(val_preds[i], axis=-1)
    mask = np.expand_dims(mask, axis=-1)
    print("mask of validation image", i, "pixels per class", np.bincount(mask.ravel(), minlength=3).tolist())


# Display results for validation image #10 (here #5: there are 8)
display_mask(5)
