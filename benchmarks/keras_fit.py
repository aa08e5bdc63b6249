"""`model.fit` for 3 epochs of an MLP on 10,000 samples (batch 32, Adam, sparse crossentropy, accuracy), tapejax or
TensorFlow: `python -m benchmarks.keras_fit tapejax|tensorflow`. Prints the best of three fits of a fresh model
(tracing and compiling included: each new model traces its step again) and the best of three later fits of a
model that has already been fitted (its compiled step reused)."""

from __future__ import annotations

import importlib
import sys
import time

import numpy as np


def main(library: str) -> None:
    tf = importlib.import_module(library)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(10_000, 32)).astype(np.float32)
    y = rng.integers(0, 10, size=(10_000,))

    def new_model() -> object:
        model = tf.keras.Sequential([tf.keras.Input((32,)), tf.keras.layers.Dense(128, activation="relu"),
                                     tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)])
        model.compile(tf.keras.optimizers.Adam(1e-3),
                      tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        return model

    def timed_fit(model: object) -> float:
        start = time.perf_counter()
        model.fit(x, y, batch_size=32, epochs=3, verbose=0)
        return time.perf_counter() - start

    fresh = min(timed_fit(new_model()) for _ in range(3))
    model = new_model()
    timed_fit(model)
    warm = min(timed_fit(model) for _ in range(3))
    print(f"{library}: fit of a new model {fresh:.2f} s, fit of a fitted model {warm:.2f} s "
          "(3 epochs x 313 steps of 32)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tapejax")
