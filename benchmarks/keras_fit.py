"""tf.keras against TensorFlow, both in this process, interleaved (tapejax's run, then TF's, N times; the best of N):

- `mlp`: `model.fit` for 3 epochs of an MLP on 10,000 samples (batch 32, Adam, sparse crossentropy, accuracy),
  and for a new model the same loop written directly in JAX + optax (its two XLA compiles: the floor);
- `build`: building a 20-layer functional CNN (Input, 4 x Conv2D/BatchNormalization/ReLU/MaxPool2D, Flatten,
  2 Dense), a fresh model each time: time per model and per layer;
- `cnn`: `model.fit` for 3 epochs of a small CNN (28x28x1, Conv2D 16 and 32 filters, MaxPool2D, Dense) on 10,000
  samples, batch 128;
- `conv`: that CNN's convolution layers alone (no pooling), forward and backward of a batch as one compiled step:
  a `jax.jit` of `jax.lax.conv_general_dilated` (XLA:CPU's convolutions, no tapejax), a tapejax `tf.function` and
  a TF `tf.function` (oneDNN's convolutions), to tell XLA's convolutions apart from tapejax's own overhead;
- `deconv`: the DCGAN tutorial generator's three `Conv2DTranspose` layers (7x7x256 -> 28x28x1, strides 1, 2, 2),
  forward and backward of a batch of 32 as one compiled step: tapejax's and TF's Keras layers in a `tf.function`,
  and `jax.lax.conv_transpose` under `jax.jit` (what a JAX user writes: XLA's derivative of its lhs-dilated
  convolution with respect to the kernel is a slow dilated convolution on a CPU);
- `rnn`: a `Bidirectional(LSTM(64))` and a Dense over 100 steps of 32 features, forward and backward of a batch
  of 64 as one compiled step: tapejax's and TF's Keras layers in a `tf.function`, and the same cell in a
  `jax.lax.scan` under `jax.jit` (what a JAX user writes). A loop step on XLA:CPU costs mostly its number of
  kernels, where TF runs its while loop's ops with little overhead each.

Each `fit` is timed for a new model (compiling included: each new model traces its step again) and for a model
already fitted (its compiled step reused).

    python -m benchmarks.keras_fit [--quick] [mlp build cnn conv deconv rnn]

`--quick` (used by tests/test_benchmarks.py) runs every workload on 256 samples (the convolutions on 16), once: it
proves they run and asserts nothing about time.
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable

import numpy as np

LIBRARIES = ("tapejax", "tensorflow")


def _best(runs: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    """The best of `repeats` rounds, each round running every library once, in turn (so load hits both alike)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            times[name].append(run())
    return {name: min(values) for name, values in times.items()}


def _fit_runs(tf, make: Callable[[object], object], x: np.ndarray, y: np.ndarray, batch: int,
              epochs: int) -> tuple[Callable[[], float], Callable[[], float]]:
    """A new model's fit (its compile included) and a fitted model's fit, as timing callables."""
    def timed_fit(model) -> float:
        start = time.perf_counter()
        model.fit(x, y, batch_size=batch, epochs=epochs, verbose=0)
        return time.perf_counter() - start

    def fresh() -> float:  # building and compiling the model, then its first fit
        start = time.perf_counter()
        make(tf).fit(x, y, batch_size=batch, epochs=epochs, verbose=0)
        return time.perf_counter() - start

    fitted = make(tf)
    timed_fit(fitted)
    return fresh, lambda: timed_fit(fitted)


def _jax_fit(x: np.ndarray, y: np.ndarray, batch: int, epochs: int) -> Callable[[], float]:
    """The MLP's fit written directly in JAX + optax (a new jitted step each time, so compiled for the full batch
    and for the partial last one, as a new Keras model is): the floor of any engine whose step is an XLA program."""
    import jax
    import jax.numpy as jnp
    import optax

    def fresh() -> float:
        start = time.perf_counter()
        rng = np.random.default_rng(0)
        sizes = (32, 128, 128, 10)
        params = [(rng.uniform(-1, 1, (a, b)).astype(np.float32) * np.sqrt(6 / (a + b)), np.zeros(b, np.float32))
                  for a, b in zip(sizes, sizes[1:])]
        opt = optax.adam(1e-3)
        state = opt.init(params)

        def loss_fn(p, xb, yb):
            h = xb
            for i, (w, b) in enumerate(p):
                h = h @ w + b
                h = jax.nn.relu(h) if i < len(p) - 1 else h
            return optax.softmax_cross_entropy_with_integer_labels(h, yb).mean(), h

        @jax.jit
        def step(p, s, xb, yb):
            (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, xb, yb)
            updates, s = opt.update(grads, s, p)
            return optax.apply_updates(p, updates), s, loss, jnp.mean(jnp.argmax(logits, -1) == yb)

        for _ in range(epochs):
            order = np.random.permutation(len(x))
            for i in range(0, len(x), batch):
                index = order[i:i + batch]
                params, state, loss, accuracy = step(params, state, x[index], y[index])
            float(loss), float(accuracy)  # the epoch's logs, as fit reads them
        return time.perf_counter() - start

    return fresh


def mlp(tf) -> object:
    model = tf.keras.Sequential([tf.keras.Input((32,)), tf.keras.layers.Dense(128, activation="relu"),
                                 tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)])
    model.compile(tf.keras.optimizers.Adam(1e-3),
                  tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def cnn20(tf) -> object:
    """A 20-layer functional CNN: Input, 4 blocks of Conv2D/BatchNormalization/ReLU/MaxPool2D, Flatten, 2 Dense."""
    layers = tf.keras.layers
    inputs = tf.keras.Input((64, 64, 3))
    h = inputs
    for filters in (16, 32, 64, 64):
        h = layers.Conv2D(filters, 3, padding="same", use_bias=False)(h)
        h = layers.BatchNormalization()(h)
        h = layers.ReLU()(h)
        h = layers.MaxPool2D()(h)
    h = layers.Dense(64, activation="relu")(layers.Flatten()(h))
    return tf.keras.Model(inputs, layers.Dense(10)(h))


def small_cnn(tf) -> object:
    layers = tf.keras.layers
    model = tf.keras.Sequential([tf.keras.Input((28, 28, 1)), layers.Conv2D(16, 3, activation="relu"),
                                 layers.MaxPool2D(), layers.Conv2D(32, 3, activation="relu"), layers.MaxPool2D(),
                                 layers.Flatten(), layers.Dense(10)])
    model.compile(tf.keras.optimizers.Adam(1e-3),
                  tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def _conv_runs(libs: dict[str, object], x: np.ndarray, repeats: int) -> dict[str, Callable[[], float]]:
    """The small CNN's two convolutions (with bias and ReLU, no pooling: convolutions only), forward and backward of
    one batch, compiled: a plain `jax.jit` step, tapejax's `tf.function` step and TF's."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(1)
    w1 = rng.normal(size=(3, 3, 1, 16)).astype(np.float32) * 0.3
    w2 = rng.normal(size=(3, 3, 16, 32)).astype(np.float32) * 0.1
    b1, b2 = np.zeros(16, np.float32), np.zeros(32, np.float32)

    def conv(h, w, b):
        return jax.nn.relu(jax.lax.conv_general_dilated(h, w, (1, 1), "VALID",
                                                        dimension_numbers=("NHWC", "HWIO", "NHWC")) + b)

    def jax_loss(params, xb):
        return jnp.sum(conv(conv(xb, params[0], params[1]), params[2], params[3]) ** 2)

    jax_step = jax.jit(jax.value_and_grad(jax_loss))
    params = tuple(jnp.asarray(p) for p in (w1, b1, w2, b2))
    xb = jnp.asarray(x)

    def tf_step(tf):
        variables = [tf.Variable(p) for p in (w1, b1, w2, b2)]

        @tf.function
        def step(xb):
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.nn.conv2d(xb, variables[0], 1, "VALID") + variables[1])
                h = tf.nn.relu(tf.nn.conv2d(h, variables[2], 1, "VALID") + variables[3])
                loss = tf.reduce_sum(h ** 2)
            return loss, tape.gradient(loss, variables)
        return step

    return _compiled_runs(libs, tf_step, x, "jax.jit (XLA:CPU)", lambda: jax_step(params, xb), repeats)


def _deconv_runs(libs: dict[str, object], x: np.ndarray, repeats: int) -> dict[str, Callable[[], float]]:
    """The DCGAN generator's transposed convolutions (no bias, tanh last), forward and backward of one batch,
    compiled: `jax.lax.conv_transpose` under `jax.jit`, and each library's Keras layers in a `tf.function`."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(2)
    shapes = ((5, 5, 128, 256), (5, 5, 64, 128), (5, 5, 1, 64))  # Keras's (h, w, filters, in)
    kernels = [rng.normal(size=s).astype(np.float32) * 0.05 for s in shapes]
    strides = (1, 2, 2)

    def jax_loss(ws, xb):
        h = xb
        for i, (w, s) in enumerate(zip(ws, strides)):  # lax's kernel is (h, w, in, out), flipped: TF's transpose
            h = jax.lax.conv_transpose(h, jnp.flip(jnp.swapaxes(w, 2, 3), (0, 1)), (s, s), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jnp.tanh(h) if i == 2 else jax.nn.leaky_relu(h, 0.3)
        return jnp.sum(h ** 2)

    jax_step = jax.jit(jax.value_and_grad(jax_loss))
    ws, xb = tuple(jnp.asarray(k) for k in kernels), jnp.asarray(x)

    def tf_step(tf):
        layers = [tf.keras.layers.Conv2DTranspose(k.shape[2], 5, strides=s, padding="same", use_bias=False)
                  for k, s in zip(kernels, strides)]
        h = tf.constant(x)
        for layer, k in zip(layers, kernels):
            h = layer(h)
            layer.kernel.assign(k)

        @tf.function
        def step(xb):
            variables = [layer.kernel for layer in layers]
            with tf.GradientTape() as tape:
                h = xb
                for i, layer in enumerate(layers):
                    h = tf.tanh(layer(h)) if i == 2 else tf.nn.leaky_relu(layer(h), 0.3)
                loss = tf.reduce_sum(h ** 2)
            return loss, tape.gradient(loss, variables)
        return step

    return _compiled_runs(libs, tf_step, x, "jax.jit(lax.conv_transpose)", lambda: jax_step(ws, xb), repeats)


def _rnn_runs(libs: dict[str, object], x: np.ndarray, repeats: int) -> dict[str, Callable[[], float]]:
    """A bidirectional LSTM and a Dense, forward and backward of one batch, compiled: `jax.lax.scan` under
    `jax.jit`, and each library's Keras layers in a `tf.function`."""
    import jax
    import jax.numpy as jnp

    units, features = 64, x.shape[-1]
    rng = np.random.default_rng(3)
    cells = [(rng.normal(size=(features, 4 * units)).astype(np.float32) * 0.1,
              rng.normal(size=(units, 4 * units)).astype(np.float32) * 0.1, np.zeros(4 * units, np.float32))
             for _ in range(2)]
    dense = rng.normal(size=(2 * units, 1)).astype(np.float32) * 0.1

    def lstm(cell, xs):  # Keras's gate order (input, forget, cell, output), the input projection hoisted
        kernel, recurrent, bias = cell
        projected = jnp.swapaxes(xs @ kernel + bias, 0, 1)

        def step(carry, z):
            h, c = carry
            i, f, g, o = jnp.split(z + h @ recurrent, 4, -1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), None

        zeros = jnp.zeros((xs.shape[0], units), xs.dtype)
        return jax.lax.scan(step, (zeros, zeros), projected)[0][0]

    def jax_loss(params, xb):
        forward, backward, w = params
        h = jnp.concatenate([lstm(forward, xb), lstm(backward, xb[:, ::-1])], -1)
        return jnp.mean((h @ w) ** 2)

    jax_step = jax.jit(jax.value_and_grad(jax_loss))
    params = (tuple(map(jnp.asarray, cells[0])), tuple(map(jnp.asarray, cells[1])), jnp.asarray(dense))
    xb = jnp.asarray(x)

    def tf_step(tf):
        model = tf.keras.Sequential([tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(units)),
                                     tf.keras.layers.Dense(1, use_bias=False)])
        model(tf.constant(x))
        model.set_weights([*cells[0], *cells[1], dense])

        @tf.function
        def step(xb):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(xb) ** 2)
            return loss, tape.gradient(loss, model.trainable_variables)
        return step

    return _compiled_runs(libs, tf_step, x, "jax.jit(lax.scan)", lambda: jax_step(params, xb), repeats)


def _compiled_runs(libs: dict[str, object], make_step: Callable[[object], Callable], x: np.ndarray, jax_label: str,
                   jax_call: Callable[[], object], repeats: int) -> dict[str, Callable[[], float]]:
    """Timing callables: the plain JAX step, then each library's `tf.function` step on `x`."""
    steps = {name: make_step(tf) for name, tf in libs.items()}
    inputs = {name: tf.constant(x) for name, tf in libs.items()}
    runs = {jax_label: _timed(jax_call, repeats)}
    for name in libs:
        runs[name] = _timed(lambda name=name: steps[name](inputs[name]), repeats)
    return runs


def _timed(call: Callable[[], object], repeats: int) -> Callable[[], float]:
    """Seconds per call of `call` (a compiled step), its values computed; compiled by a first run."""
    import jax

    def run() -> float:
        start = time.perf_counter()
        for _ in range(repeats):
            out = call()
        if hasattr(out[0], "numpy"):  # a tf.function's tensors: their values are computed
            [v.numpy() for v in out[1]]
        else:
            jax.block_until_ready(out)
        return (time.perf_counter() - start) / repeats
    run()
    return run


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="256 samples, one repetition: proves the workloads run")
    parser.add_argument("workloads", nargs="*", default=["mlp", "build", "cnn", "conv", "deconv", "rnn"])
    args = parser.parse_args(argv)
    libs = {}
    for name in LIBRARIES:
        try:
            libs[name] = importlib.import_module(name)
        except ImportError:
            print(f"{name} is not installed: not timed")
    n, repeats = (256, 1) if args.quick else (10_000, 3)
    rng = np.random.default_rng(0)
    results: dict[str, dict[str, float]] = {}

    def report(workload: str, what: str, times: dict[str, float], unit: str = "s", scale: float = 1.0) -> None:
        results[f"{workload}: {what}"] = times
        cells = ", ".join(f"{name} {t * scale:.3f} {unit}" for name, t in times.items())
        ratio = (f" (TF / tapejax = {times['tensorflow'] / times['tapejax']:.2f}x)"
                 if {"tapejax", "tensorflow"} <= times.keys() else "")
        print(f"{workload}: {what}: {cells}{ratio}", flush=True)

    if "mlp" in args.workloads:
        x, y = rng.normal(size=(n, 32)).astype(np.float32), rng.integers(0, 10, size=(n,))
        runs = {name: _fit_runs(tf, mlp, x, y, 32, 3) for name, tf in libs.items()}
        report("mlp", f"fit 3 epochs of {n} (batch 32), a new model",
               _best({**{name: r[0] for name, r in runs.items()}, "jax.jit + optax": _jax_fit(x, y, 32, 3)},
                     repeats))
        report("mlp", "the same, a fitted model", _best({name: r[1] for name, r in runs.items()}, repeats))
    if "build" in args.workloads:
        layers = {name: len(cnn20(tf).layers) for name, tf in libs.items()}

        def build(tf) -> Callable[[], float]:
            def run() -> float:
                start = time.perf_counter()
                cnn20(tf)
                return time.perf_counter() - start
            return run
        times = _best({name: build(tf) for name, tf in libs.items()}, 3 * repeats)
        report("build", f"a {layers['tapejax']}-layer functional CNN (64x64x3), per model", times, "ms", 1e3)
        report("build", "per layer", {name: t / layers[name] for name, t in times.items()}, "ms", 1e3)
    if "cnn" in args.workloads:
        x = rng.normal(size=(n, 28, 28, 1)).astype(np.float32)
        y = rng.integers(0, 10, size=(n,))
        runs = {name: _fit_runs(tf, small_cnn, x, y, 128, 3) for name, tf in libs.items()}
        report("cnn", f"fit 3 epochs of {n} 28x28x1 (batch 128), a new model",
               _best({name: r[0] for name, r in runs.items()}, repeats))
        report("cnn", "the same, a fitted model", _best({name: r[1] for name, r in runs.items()}, repeats))
    if "conv" in args.workloads:
        batch = 16 if args.quick else 128
        x = rng.normal(size=(batch, 28, 28, 1)).astype(np.float32)
        report("conv", f"the CNN's 2 convolutions (+ bias, ReLU), forward + backward of a batch of {batch}, per step",
               _best(_conv_runs(libs, x, 2 if args.quick else 20), repeats), "ms", 1e3)
    if "deconv" in args.workloads:
        batch = 4 if args.quick else 32
        x = rng.normal(size=(batch, 7, 7, 256)).astype(np.float32)
        report("deconv", f"DCGAN's 3 Conv2DTranspose layers, forward + backward of a batch of {batch}, per step",
               _best(_deconv_runs(libs, x, 2 if args.quick else 10), repeats), "ms", 1e3)
    if "rnn" in args.workloads:
        batch, steps = (8, 10) if args.quick else (64, 100)
        x = rng.normal(size=(batch, steps, 32)).astype(np.float32)
        report("rnn", f"Bidirectional(LSTM(64)) + Dense over {steps} steps, forward + backward of a batch of {batch}, "
               "per step", _best(_rnn_runs(libs, x, 2 if args.quick else 10), repeats), "ms", 1e3)
    return results


if __name__ == "__main__":
    main()
