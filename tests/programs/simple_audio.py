"""TensorFlow tutorial "Simple audio recognition: Recognizing keywords": WAV files read and decoded in a tf.data
pipeline (`tf.io.read_file`, `tf.audio.decode_wav`, `tf.strings.split` for the label), turned into spectrograms
(`tf.signal.stft`), and a small CNN (Resizing, an adapted Normalization, Conv2D, MaxPooling2D, Dense) trained by
`fit` with EarlyStopping, evaluated with `predict` and `tf.math.confusion_matrix`.

Source: tensorflow/docs, site/en/tutorials/audio/simple_audio.ipynb (commit
094ee6cafc743d8915ecac9ec6531a764e221f6a), https://www.tensorflow.org/tutorials/audio/simple_audio. Rewritten
after the tutorial, not copied: the same TF calls, datasets, model and printed lines, in the tutorial's order.

Changes:
- The mini Speech Commands download (8,000 one-second 16 kHz recordings of 8 words) is replaced by 96 WAV files
  written here with Python's `wave` module, from seeded numpy: 4 "words" (down, go, no, yes), each a tone of its
  own pitch with a little noise, 0.75 to 1 s long, under data/mini_speech_commands/WORD/ in a temporary working
  directory (with a README.md, as the download has); the splits are 76/10/10 files (the tutorial: 6,400/800/800).
- `tf.io.gfile.listdir` and `glob` are sorted (they list in the file system's order), and
  `tf.random.shuffle(filenames)` is a `tf.gather` of a numpy permutation (the engines' random streams differ).
- `tensorflow.keras.layers.experimental.preprocessing` is `tensorflow.keras.layers` (TF 2.21's Keras 3 has no
  `experimental` layers); the `Dropout` layers have rate 0.0 (the engines draw different masks), and the weights
  are set from a seeded numpy generator after the model is built (Glorot uniform kernels, zero biases).
- The matplotlib/seaborn plots and the IPython audio player are left out: the loss histories, the confusion matrix
  and the final softmax are printed instead.
"""

import os
import pathlib
import tempfile
import wave

import numpy as np
import tensorflow as tf
from tensorflow.keras import layers
from tensorflow.keras import models

# Set seed for experiment reproducibility
seed = 42
tf.random.set_seed(seed)
np.random.seed(seed)

os.chdir(tempfile.mkdtemp())
data_dir = pathlib.Path('data/mini_speech_commands')
data_rng = np.random.default_rng(0)
for word, pitch in [('down', 220.0), ('go', 440.0), ('no', 880.0), ('yes', 1760.0)]:
    (data_dir / word).mkdir(parents=True)
    for k in range(24):
        length = int(data_rng.integers(12000, 16001))
        t = np.arange(length) / 16000.0
        tone = 0.3 * np.sin(2 * np.pi * pitch * (1 + 0.02 * data_rng.normal()) * t)
        samples = (tone + 0.05 * data_rng.normal(size=length)) * 32767
        with wave.open(str(data_dir / word / f'{k:08x}_nohash_0.wav'), 'wb') as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(16000)
            w.writeframes(samples.astype('<i2').tobytes())
(data_dir / 'README.md').write_text('Synthetic words.\n')

commands = np.array(sorted(tf.io.gfile.listdir(str(data_dir))))
commands = commands[commands != 'README.md']
print('Commands:', commands)

filenames = tf.constant(sorted(tf.io.gfile.glob(str(data_dir) + '/*/*')))
filenames = tf.gather(filenames, np.random.permutation(len(filenames)))
num_samples = len(filenames)
print('Number of total examples:', num_samples)
print('Number of examples per label:',
      len(tf.io.gfile.listdir(str(data_dir/commands[0]))))
print('Example file tensor:', filenames[0])

train_files = filenames[:76]
val_files = filenames[76: 76 + 10]
test_files = filenames[-10:]

print('Training set size', len(train_files))
print('Validation set size', len(val_files))
print('Test set size', len(test_files))


def decode_audio(audio_binary):
  audio, _ = tf.audio.decode_wav(audio_binary)
  return tf.squeeze(audio, axis=-1)


def get_label(file_path):
  parts = tf.strings.split(file_path, os.path.sep)

  # Note: You'll use indexing here instead of tuple unpacking to enable this
  # to work in a TensorFlow graph.
  return parts[-2]


def get_waveform_and_label(file_path):
  label = get_label(file_path)
  audio_binary = tf.io.read_file(file_path)
  waveform = decode_audio(audio_binary)
  return waveform, label


AUTOTUNE = tf.data.AUTOTUNE
files_ds = tf.data.Dataset.from_tensor_slices(train_files)
waveform_ds = files_ds.map(get_waveform_and_label, num_parallel_calls=AUTOTUNE)


def get_spectrogram(waveform):
  # Padding for files with less than 16000 samples
  zero_padding = tf.zeros([16000] - tf.shape(waveform), dtype=tf.float32)

  # Concatenate audio with padding so that all audio clips will be of the
  # same length
  waveform = tf.cast(waveform, tf.float32)
  equal_length = tf.concat([waveform, zero_padding], 0)
  spectrogram = tf.signal.stft(
      equal_length, frame_length=255, frame_step=128)

  spectrogram = tf.abs(spectrogram)

  return spectrogram


for waveform, label in waveform_ds.take(1):
  label = label.numpy().decode('utf-8')
  spectrogram = get_spectrogram(waveform)

print('Label:', label)
print('Waveform shape:', waveform.shape)
print('Spectrogram shape:', spectrogram.shape)
print('Spectrogram sum:', float(tf.reduce_sum(spectrogram)))


def get_spectrogram_and_label_id(audio, label):
  spectrogram = get_spectrogram(audio)
  spectrogram = tf.expand_dims(spectrogram, -1)
  label_id = tf.argmax(label == commands)
  return spectrogram, label_id


spectrogram_ds = waveform_ds.map(
    get_spectrogram_and_label_id, num_parallel_calls=AUTOTUNE)

for i, (spectrogram, label_id) in enumerate(spectrogram_ds.take(9)):
  print(commands[label_id.numpy()], spectrogram.shape)


def preprocess_dataset(files):
  files_ds = tf.data.Dataset.from_tensor_slices(files)
  output_ds = files_ds.map(get_waveform_and_label, num_parallel_calls=AUTOTUNE)
  output_ds = output_ds.map(
      get_spectrogram_and_label_id,  num_parallel_calls=AUTOTUNE)
  return output_ds


train_ds = spectrogram_ds
val_ds = preprocess_dataset(val_files)
test_ds = preprocess_dataset(test_files)

batch_size = 64
train_ds = train_ds.batch(batch_size)
val_ds = val_ds.batch(batch_size)

train_ds = train_ds.cache().prefetch(AUTOTUNE)
val_ds = val_ds.cache().prefetch(AUTOTUNE)

for spectrogram, _ in spectrogram_ds.take(1):
  input_shape = spectrogram.shape
print('Input shape:', input_shape)
num_labels = len(commands)

norm_layer = layers.Normalization()
norm_layer.adapt(spectrogram_ds.map(lambda x, _: x))

model = models.Sequential([
    layers.Input(shape=input_shape),
    layers.Resizing(32, 32),
    norm_layer,
    layers.Conv2D(32, 3, activation='relu'),
    layers.Conv2D(64, 3, activation='relu'),
    layers.MaxPooling2D(),
    layers.Dropout(0.0),
    layers.Flatten(),
    layers.Dense(128, activation='relu'),
    layers.Dropout(0.0),
    layers.Dense(num_labels),
])

weights_rng = np.random.default_rng(1)
for weight in model.trainable_weights:
  shape = tuple(weight.shape)
  if len(shape) >= 2:
    receptive = int(np.prod(shape[:-2]))
    limit = np.sqrt(6.0 / (shape[-2] * receptive + shape[-1] * receptive))
    weight.assign(weights_rng.uniform(-limit, limit, size=shape).astype(np.float32))

model.summary()

model.compile(
    optimizer=tf.keras.optimizers.Adam(),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=['accuracy'],
)

EPOCHS = 10
history = model.fit(
    train_ds,
    validation_data=val_ds,
    epochs=EPOCHS,
    callbacks=tf.keras.callbacks.EarlyStopping(verbose=1, patience=2),
)

metrics = history.history
print('epochs:', history.epoch)
print('loss:', np.array(metrics['loss']))
print('val_loss:', np.array(metrics['val_loss']))

test_audio = []
test_labels = []

for audio, label in test_ds:
  test_audio.append(audio.numpy())
  test_labels.append(label.numpy())

test_audio = np.array(test_audio)
test_labels = np.array(test_labels)

y_pred = np.argmax(model.predict(test_audio), axis=1)
y_true = test_labels

test_acc = sum(y_pred == y_true) / len(y_true)
print(f'Test set accuracy: {test_acc:.0%}')

confusion_mtx = tf.math.confusion_matrix(y_true, y_pred)
print(confusion_mtx)

sample_file = data_dir/'no/00000000_nohash_0.wav'

sample_ds = preprocess_dataset([str(sample_file)])

for spectrogram, label in sample_ds.batch(1):
  prediction = model(spectrogram)
  print(f'Predictions for "{commands[label[0]]}"', np.round(tf.nn.softmax(prediction[0]).numpy(), 4))
