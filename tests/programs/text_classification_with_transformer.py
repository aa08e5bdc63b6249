"""keras-io example "Text classification with Transformer" (Apoorv Nandan): a Transformer block written as a Keras
layer (multi-head attention, layer normalisation, a feed-forward Sequential) over token and position embeddings,
trained from scratch by `fit` to classify movie reviews.

Source: keras-team/keras-io, examples/nlp/text_classification_with_transformer.py (commit
8bda227c08adf855a8b9ec579840e2a7171fff60; last modified 2020/05/10),
https://keras.io/examples/nlp/text_classification_with_transformer/. Rewritten after the example, not copied: the
same `TransformerBlock` and `TokenAndPositionEmbedding` layers, model, compile and `fit` call, and printed lines.

Changes:
- IMDB (`keras.datasets.imdb.load_data`, a download) and `pad_sequences` are replaced by seeded numpy reviews
  already padded as `pad_sequences(maxlen=maxlen)` leaves them (integer token ids, zeros in front): 128 for
  training and 64 for validation (IMDB: 25,000 each), whose label shows in which of two sets of "sentiment"
  tokens they use. `vocab_size` is 200 and `maxlen` 16 (the example: 20,000 and 200).
- The dropout rates are 0.0 (the example: 0.1): the engines draw different dropout masks.
- `TransformerBlock.call` takes `training=None` (the example: a required `training`, which TF 2.21's Keras 3
  does not fill in when the layer is called on a Keras tensor: TypeError).
- `fit` runs with `shuffle=False` (Keras's shuffle draws differ between engines).
- The weights are set from a seeded numpy generator after the model is built (Glorot uniform kernels and
  embeddings; biases and layer-normalisation parameters keep Keras's constant initial values).
"""

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.0):
        super(TransformerBlock, self).__init__()
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = keras.Sequential(
            [
                layers.Dense(ff_dim, activation="relu"),
                layers.Dense(embed_dim),
            ]
        )
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs, training=None):
        attn_output = self.att(inputs, inputs)
        attn_output = self.dropout1(attn_output, training=training)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output, training=training)
        return self.layernorm2(out1 + ffn_output)


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super(TokenAndPositionEmbedding, self).__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        maxlen = tf.shape(x)[-1]
        positions = tf.range(start=0, limit=maxlen, delta=1)
        positions = self.pos_emb(positions)
        x = self.token_emb(x)
        return x + positions


vocab_size = 200  # Only consider the top 200 words
maxlen = 16  # Only consider the first 16 words of each movie review
rng = np.random.default_rng(0)


def load_padded_reviews(count):
    """Reviews of 6 to 16 tokens, pre-padded with zeros; a positive one (label 1) uses tokens 2-11, a negative
    one tokens 12-21, among common tokens 22-199."""
    labels = rng.integers(0, 2, size=count)
    reviews = np.zeros((count, maxlen), dtype=np.int32)
    for review, label in zip(reviews, labels):
        length = rng.integers(6, maxlen + 1)
        words = rng.integers(22, vocab_size, size=length)
        sentiment = rng.random(length) < 0.3
        words[sentiment] = rng.integers(2, 12, size=sentiment.sum()) + (0 if label else 10)
        review[maxlen - length:] = words
    return reviews, labels


(x_train, y_train), (x_val, y_val) = load_padded_reviews(128), load_padded_reviews(64)
print(len(x_train), "Training sequences")
print(len(x_val), "Validation sequences")

embed_dim = 32  # Embedding size for each token
num_heads = 2  # Number of attention heads
ff_dim = 32  # Hidden layer size in feed forward network inside transformer

inputs = layers.Input(shape=(maxlen,))
embedding_layer = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)
x = embedding_layer(inputs)
transformer_block = TransformerBlock(embed_dim, num_heads, ff_dim)
x = transformer_block(x)
x = layers.GlobalAveragePooling1D()(x)
x = layers.Dropout(0.0)(x)
x = layers.Dense(20, activation="relu")(x)
x = layers.Dropout(0.0)(x)
outputs = layers.Dense(2, activation="softmax")(x)

model = keras.Model(inputs=inputs, outputs=outputs)

weights_rng = np.random.default_rng(1)
for weight in model.weights:
    shape = tuple(weight.shape)
    if len(shape) >= 2:
        fan_in, fan_out = int(np.prod(shape[:-1])), shape[-1]
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        weight.assign(weights_rng.uniform(-limit, limit, size=shape).astype(np.float32))

model.compile(
    optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
)
history = model.fit(
    x_train, y_train, batch_size=32, epochs=2, validation_data=(x_val, y_val), shuffle=False
)
