"""TensorFlow tutorial "Text classification with an RNN": a `TextVectorization` encoder adapted on the reviews'
text, an `Embedding` with `mask_zero=True` and a bidirectional LSTM trained by `fit` to classify movie reviews,
then a second model stacking two bidirectional LSTMs (`return_sequences=True`).

Source: tensorflow/docs, site/en/tutorials/text/text_classification_rnn.ipynb (commit
a7c567d2a730e0e6e6b3741e5be66b1c813549cb, its last version there: commit d16e549c837c7a268c9e8d866e886164aac86d2d
moved it to tensorflow/text, docs/tutorials/text_classification_rnn.ipynb, stored at commit
03787f07b61192a1f77f7e7fe6eab570b3261ece), https://www.tensorflow.org/text/tutorials/text_classification_rnn.
Rewritten after the tutorial, not copied: the same input pipeline (`batch`, `prefetch`), encoder and its
`adapt`, both Sequential models, compile arguments, `fit`, `evaluate` and `predict` calls and printed lines, in
the tutorial's order.

Changes:
- IMDB (`tfds.load('imdb_reviews')`, a download) is replaced by seeded numpy "reviews" written as English
  sentences (capitals and punctuation, which the encoder's standardization strips), whose label shows in which of
  two sets of sentiment words they use, among common words and release years: 320 for training and 192 for
  testing (IMDB: 25,000 each), put in `tf.data.Dataset.from_tensor_slices` as `(text, label)` pairs.
- The training set is not shuffled (`.shuffle(BUFFER_SIZE)` is left out: tf.data's shuffle draws differ between
  engines); BATCH_SIZE stays 64. VOCAB_SIZE is 200 (the tutorial: 1000), below the reviews' distinct words, so
  the rarest (the years) map to the unknown token.
- The encoder is `tf.keras.layers.TextVectorization`, as in the tensorflow/text copy (the tensorflow/docs version
  names `tf.keras.layers.experimental.preprocessing.TextVectorization`, which Keras 3 no longer has).
- `fit` runs 2 epochs with `validation_steps=2` (the tutorial: 10 and 30); the padding sentence is
  `"the " * 200` (the tutorial: 2000).
- The second model's `Dropout(0.5)` has rate 0.0: the engines draw different dropout masks.
- Each model is built by calling it once on the sample text, and its weights are then set from a seeded numpy
  generator (Keras's default initializers drawn by numpy: uniform(-0.05, 0.05) embeddings, Glorot uniform
  kernels, orthogonal recurrent kernels; biases keep their initial values, LSTM's unit forget bias included), so
  that both engines start from the same weights.
- `predict` is given `tf.constant([...])` where the tutorial gives `np.array([...])`: TF 2.21's Keras 3 `predict`
  rejects a numpy array of `str` ("ValueError: Invalid dtype: str3328").
- Notebook cells that display a value by being last are `print`ed; the plots are left out.
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)

POSITIVE = ("great wonderful brilliant moving superb delightful charming beautiful excellent fun loved enjoyed "
            "best masterpiece touching clever funny gripping stunning memorable").split()
NEGATIVE = ("terrible boring awful dull worst bad poor waste weak hated disappointing mess predictable tedious "
            "annoying painful stupid forgettable bland clumsy").split()
COMMON = ("the a an and of to in is was it this that film movie story plot acting actors cast director scene "
          "scenes music score ending characters character script dialogue camera work time minutes hour first "
          "second part end really very quite rather too so just also still even much more most some all every "
          "i we you he she they his her their my our me us him them with for on at by from about as but or not "
          "no yes there here when while after before during then than like well only ever never again "
          "watched saw seen watch see felt feel thought think found made make looked look seemed seem").split()
YEARS = [str(year) for year in range(1950, 2021)]


def make_review(label):
    """Two to four sentences of 4 to 9 words; about a quarter of the words carry the label's sentiment."""
    sentences = []
    for _ in range(rng.integers(2, 5)):
        words = list(rng.choice(COMMON, size=rng.integers(4, 10)))
        for position in np.flatnonzero(rng.random(len(words)) < 0.25):
            words[position] = rng.choice(POSITIVE if label else NEGATIVE)
        if rng.random() < 0.3:
            words += ["released", "in", rng.choice(YEARS)]
        sentence = " ".join(words)
        sentences.append(sentence[0].upper() + sentence[1:] + rng.choice([".", "!", "...", "?"]))
    return " ".join(sentences)


def load_reviews(count):
    labels = rng.integers(0, 2, size=count)
    texts = np.array([make_review(label) for label in labels])
    return tf.data.Dataset.from_tensor_slices((texts, labels))


def set_numpy_weights(model):
    """Keras's default initializers, drawn by numpy; biases keep their initial values."""
    for weight in model.trainable_weights:
        shape = tuple(weight.shape)
        if weight.path.endswith("embeddings"):
            value = rng.uniform(-0.05, 0.05, size=shape)
        elif weight.path.endswith("recurrent_kernel"):
            q, r = np.linalg.qr(rng.normal(size=(shape[1], shape[0])))
            value = (q * np.sign(np.diag(r))).T
        elif weight.path.endswith("kernel"):
            limit = np.sqrt(6.0 / (shape[0] + shape[1]))
            value = rng.uniform(-limit, limit, size=shape)
        else:
            continue
        weight.assign(value.astype(np.float32))


# Setup input pipeline
train_dataset, test_dataset = load_reviews(320), load_reviews(192)

print(train_dataset.element_spec)

for example, label in train_dataset.take(1):
    print('text: ', example.numpy())
    print('label: ', label.numpy())

BUFFER_SIZE = 10000
BATCH_SIZE = 64

train_dataset = train_dataset.batch(BATCH_SIZE).prefetch(tf.data.AUTOTUNE)
test_dataset = test_dataset.batch(BATCH_SIZE).prefetch(tf.data.AUTOTUNE)

for example, label in train_dataset.take(1):
    print('texts: ', example.numpy()[:3])
    print()
    print('labels: ', label.numpy()[:3])

# Create the text encoder
VOCAB_SIZE = 200
encoder = tf.keras.layers.TextVectorization(
    max_tokens=VOCAB_SIZE)
encoder.adapt(train_dataset.map(lambda text, label: text))

vocab = np.array(encoder.get_vocabulary())
print(vocab[:20])

encoded_example = encoder(example)[:3].numpy()
print(encoded_example)

for n in range(3):
    print("Original: ", example[n].numpy())
    print("Round-trip: ", " ".join(vocab[encoded_example[n]]))
    print()

# Create the model
model = tf.keras.Sequential([
    encoder,
    tf.keras.layers.Embedding(
        input_dim=len(encoder.get_vocabulary()),
        output_dim=64,
        # Use masking to handle the variable sequence lengths
        mask_zero=True),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(64)),
    tf.keras.layers.Dense(64, activation='relu'),
    tf.keras.layers.Dense(1)
])

print([layer.supports_masking for layer in model.layers])

# predict on a sample text without padding.

sample_text = ('The movie was cool. The animation and the graphics '
               'were out of this world. I would recommend this movie.')
model(tf.constant([sample_text]))
set_numpy_weights(model)
predictions = model.predict(tf.constant([sample_text]))
print(predictions[0])

# predict on a sample text with padding

padding = "the " * 200
predictions = model.predict(tf.constant([sample_text, padding]))
print(predictions[0])

model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
              optimizer=tf.keras.optimizers.Adam(1e-4),
              metrics=['accuracy'])

# Train the model
history = model.fit(train_dataset, epochs=2,
                    validation_data=test_dataset,
                    validation_steps=2)

test_loss, test_acc = model.evaluate(test_dataset)

print('Test Loss:', test_loss)
print('Test Accuracy:', test_acc)

sample_text = ('The movie was cool. The animation and the graphics '
               'were out of this world. I would recommend this movie.')
predictions = model.predict(tf.constant([sample_text]))

# Stack two or more LSTM layers
model = tf.keras.Sequential([
    encoder,
    tf.keras.layers.Embedding(len(encoder.get_vocabulary()), 64, mask_zero=True),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(64, return_sequences=True)),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(32)),
    tf.keras.layers.Dense(64, activation='relu'),
    tf.keras.layers.Dropout(0.0),
    tf.keras.layers.Dense(1)
])
model(tf.constant([sample_text]))
set_numpy_weights(model)

model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
              optimizer=tf.keras.optimizers.Adam(1e-4),
              metrics=['accuracy'])

history = model.fit(train_dataset, epochs=2,
                    validation_data=test_dataset,
                    validation_steps=2)

test_loss, test_acc = model.evaluate(test_dataset)

print('Test Loss:', test_loss)
print('Test Accuracy:', test_acc)

# predict on a sample text without padding.

sample_text = ('The movie was not good. The animation and the graphics '
               'were terrible. I would not recommend this movie.')
predictions = model.predict(tf.constant([sample_text]))
print(predictions)
