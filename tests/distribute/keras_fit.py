"""Keras `compile`/`fit`/`evaluate`/`predict` under `strategy.scope()`, run as a script by the tests (in a fresh
process, with the CPU devices set before the library starts) under either library (`--lib tapejax|tensorflow`;
TF gets logical CPU devices). Prints, as JSON, for each replica count: the loss and metric history, evaluate's
results, predict's outputs and the final weights (with `--before`, evaluate's and predict's with the initial
weights too). `--samples` not a multiple of `--batch` leaves a partial last batch, split over the replicas as TF
splits it."""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402


def train(tf, replicas: int, samples: int, batch: int, batchnorm: bool, before: bool = False) -> dict:
    strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
    rng = np.random.default_rng(1)
    x = rng.normal(size=(samples, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=(samples,)).astype(np.int64)
    with strategy.scope():
        layers = [tf.keras.Input((5,)), tf.keras.layers.Dense(8, activation="relu", kernel_regularizer="l2")]
        if batchnorm:
            layers.append(tf.keras.layers.BatchNormalization(synchronized=True))
        model = tf.keras.Sequential(layers + [tf.keras.layers.Dense(3)])
        weights = np.random.default_rng(0)
        model.set_weights([weights.normal(0, 0.3, w.shape).astype(np.float32) if w.ndim > 1 or i % 2 else w
                           for i, w in enumerate(model.get_weights())])
        model.compile(tf.keras.optimizers.Adam(0.01), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    first = {}
    if before:  # evaluate and predict with the initial weights, the same for every replica count
        first = {"evaluate_before": [float(v) for v in model.evaluate(x, y, batch_size=batch, verbose=0)],
                 "predict_before": model.predict(x, batch_size=batch, verbose=0).tolist()}
    history = model.fit(x, y, batch_size=batch, epochs=3, verbose=0, shuffle=False)
    evaluated = model.evaluate(x, y, batch_size=batch, verbose=0)
    predicted = model.predict(x, batch_size=batch, verbose=0)
    return {"history": history.history, "evaluate": [float(v) for v in evaluated],
            "predict": predicted.tolist(), "weights": [w.tolist() for w in model.get_weights()], **first}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", default="tapejax")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--batchnorm", action="store_true")
    parser.add_argument("--before", action="store_true")
    args = parser.parse_args()
    if args.lib == "tensorflow":
        import tensorflow as tf

        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 8)
    else:
        import tapejax as tf
    print(json.dumps({n: train(tf, n, args.samples, args.batch, args.batchnorm, args.before) for n in args.replicas}))


if __name__ == "__main__":
    main()
