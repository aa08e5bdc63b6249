"""TensorFlow guide "tf.data: Build TensorFlow input pipelines", its later sections: time series windowing (with
`batch`, `map`, `zip`, `skip`, `window` and `flat_map`) and iterator checkpointing; data_guide.py has the
earlier sections.

Source: tensorflow/docs, site/en/guide/data.ipynb (commit 7c3650212740204359d4ceae481abc79345541be),
https://www.tensorflow.org/guide/data, sections "Time series windowing" and "Iterator Checkpointing". Rewritten
after the guide, not copied: the same TF calls and printed lines, in the guide's order.

Changes:
- `range_ds` has 1,000 elements (the guide: 100,000); each cell prints only the first few windows.
- The checkpoint directory is a new temporary directory (the guide: '/tmp/my_ckpt').
- Notebook cells that display a value by being last are `print`ed; `end=' '` output is ended by a newline.
- The sections between (resampling the credit-card data, a download, whose `make_csv_dataset` shuffles) and
  after (Fashion-MNIST with Keras, a download, shuffled) are left out.
"""

import os
import tempfile

import numpy as np
import tensorflow as tf

np.set_printoptions(precision=4)

# Time series windowing
range_ds = tf.data.Dataset.range(1000)

# Using batch
batches = range_ds.batch(10, drop_remainder=True)

for batch in batches.take(5):
  print(batch.numpy())


def dense_1_step(batch):
  # Shift features and labels one step relative to each other.
  return batch[:-1], batch[1:]

predict_dense_1_step = batches.map(dense_1_step)

for features, label in predict_dense_1_step.take(3):
  print(features.numpy(), " => ", label.numpy())

batches = range_ds.batch(15, drop_remainder=True)

def label_next_5_steps(batch):
  return (batch[:-5],   # Inputs: All except the last 5 steps
          batch[-5:])   # Labels: The last 5 steps

predict_5_steps = batches.map(label_next_5_steps)

for features, label in predict_5_steps.take(3):
  print(features.numpy(), " => ", label.numpy())

feature_length = 10
label_length = 3

features = range_ds.batch(feature_length, drop_remainder=True)
labels = range_ds.batch(feature_length).skip(1).map(lambda labels: labels[:label_length])

predicted_steps = tf.data.Dataset.zip((features, labels))

for features, label in predicted_steps.take(5):
  print(features.numpy(), " => ", label.numpy())

# Using window
window_size = 5

windows = range_ds.window(window_size, shift=1)
for sub_ds in windows.take(5):
  print(sub_ds)

for x in windows.flat_map(lambda x: x).take(30):
  print(x.numpy(), end=' ')
print()

def sub_to_batch(sub):
  return sub.batch(window_size, drop_remainder=True)

for example in windows.flat_map(sub_to_batch).take(5):
  print(example.numpy())

def make_window_dataset(ds, window_size=5, shift=1, stride=1):
  windows = ds.window(window_size, shift=shift, stride=stride)

  def sub_to_batch(sub):
    return sub.batch(window_size, drop_remainder=True)

  windows = windows.flat_map(sub_to_batch)
  return windows

ds = make_window_dataset(range_ds, window_size=10, shift = 5, stride=3)

for example in ds.take(10):
  print(example.numpy())

dense_labels_ds = ds.map(dense_1_step)

for inputs,labels in dense_labels_ds.take(3):
  print(inputs.numpy(), "=>", labels.numpy())

# Iterator Checkpointing
range_ds = tf.data.Dataset.range(20)

iterator = iter(range_ds)
ckpt = tf.train.Checkpoint(step=tf.Variable(0), iterator=iterator)
manager = tf.train.CheckpointManager(ckpt, os.path.join(tempfile.mkdtemp(), 'my_ckpt'), max_to_keep=3)

print([next(iterator).numpy() for _ in range(5)])

save_path = manager.save()

print([next(iterator).numpy() for _ in range(5)])

ckpt.restore(manager.latest_checkpoint)

print([next(iterator).numpy() for _ in range(5)])
