"""keras-io example "Timeseries classification from scratch" (hfawaz): a fully convolutional network (Conv1D,
BatchNormalization, ReLU, GlobalAveragePooling1D) trained by `fit` with `validation_split` and the callbacks
ModelCheckpoint, ReduceLROnPlateau and EarlyStopping.

Source: keras-team/keras-io, examples/timeseries/timeseries_classification_from_scratch.py (commit
ad4fc805f5e1a4a4c0bcdd416aa9feac6608fb6c; last modified 2021/07/16),
https://keras.io/examples/timeseries/timeseries_classification_from_scratch/. Rewritten after the example, not
copied: the same reshaping, shuffle before `validation_split`, label standardisation, `make_model`, callbacks,
compile, `fit`, `evaluate` and printed lines.

Changes:
- The FordA TSV files (a download) are replaced by seeded numpy series of length 64 (FordA: 500): 160 for
  training and 64 for testing (FordA: 3,601 and 1,320), labels -1 and 1, each class a noisy sine of its own
  frequency, z-normalised per series as FordA's are; `readucr` is kept and reads them from in-memory TSV text.
- numpy's global generator is seeded (`np.random.seed(0)`) for the example's `np.random.permutation`.
- `epochs` is 6 (the example: 500), ReduceLROnPlateau's patience 2 and EarlyStopping's 3 (the example: 20 and
  50); `fit` runs with `shuffle=False` (Keras's shuffle draws differ between engines).
- The weights are set from a seeded numpy generator after the model is built (Glorot uniform kernels; biases and
  batch-normalisation parameters keep Keras's constant initial values).
- `ModelCheckpoint` writes "best_model.keras" (Keras 3 refuses the ".h5" name) in a temporary directory. The model
  is evaluated as trained: the example reloads the best checkpoint with `keras.models.load_model`, which Keras's
  `.keras` files bring (another part of issue 20); `plot_model` (pydot) and the matplotlib plots are left out,
  and the plotted accuracy histories are printed instead.
"""

import io
import os
import tempfile

from tensorflow import keras
import numpy as np


def readucr(filename):
    data = np.loadtxt(filename, delimiter="\t")
    y = data[:, 0]
    x = data[:, 1:]
    return x, y.astype(int)


def make_tsv(count, rng):
    """`count` series of length 64 as FordA's TSV text: the label (-1 or 1), then the z-normalised values."""
    labels = rng.choice([-1, 1], size=count)
    t = np.arange(64)
    series = np.sin(2 * np.pi * t[None, :] * np.where(labels == 1, 3.0, 5.0)[:, None] / 64
                    + rng.uniform(0, 2 * np.pi, size=(count, 1))) + rng.normal(0, 0.8, size=(count, 64))
    series = (series - series.mean(axis=1, keepdims=True)) / series.std(axis=1, keepdims=True)
    lines = ["\t".join([str(label)] + [f"{v:.6f}" for v in row]) for label, row in zip(labels, series)]
    return io.StringIO("\n".join(lines))


data_rng = np.random.default_rng(0)
x_train, y_train = readucr(make_tsv(160, data_rng))
x_test, y_test = readucr(make_tsv(64, data_rng))

classes = np.unique(np.concatenate((y_train, y_test), axis=0))
print("classes", classes)

x_train = x_train.reshape((x_train.shape[0], x_train.shape[1], 1))
x_test = x_test.reshape((x_test.shape[0], x_test.shape[1], 1))

num_classes = len(np.unique(y_train))

np.random.seed(0)
idx = np.random.permutation(len(x_train))
x_train = x_train[idx]
y_train = y_train[idx]

y_train[y_train == -1] = 0
y_test[y_test == -1] = 0


def make_model(input_shape):
    input_layer = keras.layers.Input(input_shape)

    conv1 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(input_layer)
    conv1 = keras.layers.BatchNormalization()(conv1)
    conv1 = keras.layers.ReLU()(conv1)

    conv2 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(conv1)
    conv2 = keras.layers.BatchNormalization()(conv2)
    conv2 = keras.layers.ReLU()(conv2)

    conv3 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(conv2)
    conv3 = keras.layers.BatchNormalization()(conv3)
    conv3 = keras.layers.ReLU()(conv3)

    gap = keras.layers.GlobalAveragePooling1D()(conv3)

    output_layer = keras.layers.Dense(num_classes, activation="softmax")(gap)

    return keras.models.Model(inputs=input_layer, outputs=output_layer)


model = make_model(input_shape=x_train.shape[1:])

weights_rng = np.random.default_rng(1)
for weight in model.weights:
    shape = tuple(weight.shape)
    if len(shape) >= 2:
        receptive = int(np.prod(shape[:-2]))
        limit = np.sqrt(6.0 / (shape[-2] * receptive + shape[-1] * receptive))
        weight.assign(weights_rng.uniform(-limit, limit, size=shape).astype(np.float32))

epochs = 6
batch_size = 32

callbacks = [
    keras.callbacks.ModelCheckpoint(
        os.path.join(tempfile.mkdtemp(), "best_model.keras"), save_best_only=True, monitor="val_loss"
    ),
    keras.callbacks.ReduceLROnPlateau(
        monitor="val_loss", factor=0.5, patience=2, min_lr=0.0001
    ),
    keras.callbacks.EarlyStopping(monitor="val_loss", patience=3, verbose=1),
]
model.compile(
    optimizer="adam",
    loss="sparse_categorical_crossentropy",
    metrics=["sparse_categorical_accuracy"],
)
history = model.fit(
    x_train,
    y_train,
    batch_size=batch_size,
    epochs=epochs,
    callbacks=callbacks,
    validation_split=0.2,
    verbose=1,
    shuffle=False,
)

test_loss, test_acc = model.evaluate(x_test, y_test)

print("Test accuracy", test_acc)
print("Test loss", test_loss)

metric = "sparse_categorical_accuracy"
print(metric, np.round(history.history[metric], 5).tolist())
print("val_" + metric, np.round(history.history["val_" + metric], 5).tolist())
