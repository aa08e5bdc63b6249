"""TensorFlow guide "tf.data: Build TensorFlow input pipelines": basic mechanics, dataset structure, generators,
text and CSV files, batching and the simple training-loop workflow.

Source: tensorflow/docs, site/en/guide/data.ipynb (commit 7c3650212740204359d4ceae481abc79345541be),
https://www.tensorflow.org/guide/data. Rewritten after the guide, not copied: the same TF calls and printed lines,
in the guide's order.

Changes:
- Offline data: `tf.random.uniform` tensors are seeded numpy arrays; the Iliad text files and the Titanic CSV are
  small files written here from a seeded numpy generator (the guide downloads them with `get_file`).
- Cells whose output depends on a random shuffle order or on data the guide downloads (flowers, Fashion-MNIST,
  FSNS TFRecords, ImageDataGenerator), on pandas, or that only plot, are left out; the sparse-tensor cell too.
- Notebook cells that display a value by being last are `print`ed.
- make_csv_dataset is called with `shuffle=False` (its default shuffles, and TF's shuffle order is not tapejax's).
"""

import os
import tempfile

import numpy as np
import tensorflow as tf

np.set_printoptions(precision=4)
rng = np.random.RandomState(0)

# Basic mechanics
dataset = tf.data.Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])
print(dataset)
for elem in dataset:
    print(elem.numpy())
it = iter(dataset)
print(next(it).numpy())
print(dataset.reduce(0, lambda state, value: state + value).numpy())

# Dataset structure
dataset1 = tf.data.Dataset.from_tensor_slices(rng.uniform(size=[4, 10]).astype(np.float32))
print(dataset1.element_spec)
dataset2 = tf.data.Dataset.from_tensor_slices(
    (rng.uniform(size=[4]).astype(np.float32),
     rng.randint(0, 100, size=[4, 100]).astype(np.int32)))
print(dataset2.element_spec)
dataset3 = tf.data.Dataset.zip((dataset1, dataset2))
print(dataset3.element_spec)

dataset1 = tf.data.Dataset.from_tensor_slices(rng.randint(1, 10, size=[4, 10]).astype(np.int32))
print(dataset1)
for z in dataset1:
    print(z.numpy())
dataset2 = tf.data.Dataset.from_tensor_slices(
    (rng.uniform(size=[4]).astype(np.float32),
     rng.randint(0, 100, size=[4, 100]).astype(np.int32)))
print(dataset2)
dataset3 = tf.data.Dataset.zip((dataset1, dataset2))
print(dataset3)
for a, (b, c) in dataset3:
    print('shapes: {a.shape}, {b.shape}, {c.shape}'.format(a=a, b=b, c=c))


# Consuming Python generators
def count(stop):
    i = 0
    while i < stop:
        yield i
        i += 1


for n in count(5):
    print(n)

ds_counter = tf.data.Dataset.from_generator(count, args=[25], output_types=tf.int32, output_shapes=(), )
for count_batch in ds_counter.repeat().batch(10).take(10):
    print(count_batch.numpy())

# Consuming text data (three small files in place of the Iliad translations)
workdir = tempfile.mkdtemp()
words = np.array(["sing", "goddess", "the", "anger", "of", "achilles", "son", "peleus", "that", "brought"])
file_paths = []
for name in ['cowper.txt', 'derby.txt', 'butler.txt']:
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        for _ in range(6):
            f.write(" ".join(rng.choice(words, size=rng.randint(3, 8))) + "\n")
    file_paths.append(path)

dataset = tf.data.TextLineDataset(file_paths)
for line in dataset.take(5):
    print(line.numpy())

files_ds = tf.data.Dataset.from_tensor_slices(file_paths)
lines_ds = files_ds.interleave(tf.data.TextLineDataset, cycle_length=3)
for i, line in enumerate(lines_ds.take(9)):
    if i % 3 == 0:
        print()
    print(line.numpy())

# A small Titanic-like CSV in place of the downloaded one
titanic_file = os.path.join(workdir, "train.csv")
with open(titanic_file, "w") as f:
    f.write("survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone\n")
    for _ in range(20):
        f.write(f"{rng.randint(2)},{rng.choice(['male', 'female'])},{rng.randint(1, 80)}.0,{rng.randint(3)},"
                f"{rng.randint(3)},{rng.uniform(5, 80):.4f},{rng.choice(['First', 'Second', 'Third'])},unknown,"
                f"{rng.choice(['Southampton', 'Cherbourg'])},{rng.choice(['y', 'n'])}\n")
titanic_lines = tf.data.TextLineDataset(titanic_file)
for line in titanic_lines.take(10):
    print(line.numpy())


def survived(line):
    return tf.not_equal(tf.strings.substr(line, 0, 1), "0")


survivors = titanic_lines.skip(1).filter(survived)
for line in survivors.take(10):
    print(line.numpy())

titanic_batches = tf.data.experimental.make_csv_dataset(
    titanic_file, batch_size=4,
    label_name="survived", shuffle=False)
for feature_batch, label_batch in titanic_batches.take(1):
    print("'survived': {}".format(label_batch))
    print("features:")
    for key, value in feature_batch.items():
        print("  {!r:20s}: {}".format(key, value))

titanic_batches = tf.data.experimental.make_csv_dataset(
    titanic_file, batch_size=4,
    label_name="survived", select_columns=['class', 'fare', 'survived'], shuffle=False)
for feature_batch, label_batch in titanic_batches.take(1):
    print("'survived': {}".format(label_batch))
    for key, value in feature_batch.items():
        print("  {!r:20s}: {}".format(key, value))

# Batching dataset elements
inc_dataset = tf.data.Dataset.range(100)
dec_dataset = tf.data.Dataset.range(0, -100, -1)
dataset = tf.data.Dataset.zip((inc_dataset, dec_dataset))
batched_dataset = dataset.batch(4)
for batch in batched_dataset.take(4):
    print([arr.numpy() for arr in batch])
print(batched_dataset)
batched_dataset = dataset.batch(7, drop_remainder=True)
print(batched_dataset)

dataset = tf.data.Dataset.range(100)
dataset = dataset.map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
dataset = dataset.padded_batch(4, padded_shapes=(None,))
for batch in dataset.take(2):
    print(batch.numpy())
    print()

# Training workflows: multiple epochs
titanic_batches = titanic_lines.repeat(3).batch(8)
print([batch.shape[0] for batch in titanic_batches])
titanic_batches = titanic_lines.batch(8).repeat(3)
print([batch.shape[0] for batch in titanic_batches])
epochs = 3
dataset = titanic_lines.batch(8)
for epoch in range(epochs):
    for batch in dataset:
        print(batch.shape)
    print("End of epoch: ", epoch)
