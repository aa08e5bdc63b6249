"""`python -m tapejax`: a tour of the TensorFlow autodiff guides' examples, run on tapejax.

Each example is the guide's code, unchanged but for `import tapejax as tf`; the tour prints it and what it
prints. It ends with a side-by-side timing against TensorFlow (where it is installed) and pure JAX.
"""

from __future__ import annotations

import contextlib
import io
import textwrap
import time

EXAMPLES: list[tuple[str, str]] = [
    ("Gradient tapes: structured sources", """
        x = tf.constant([[1.0, 2.0, 3.0]])
        w = tf.Variable([[1.0, 0.5], [0.0, -1.0], [2.0, 1.0]], name='w')
        b = tf.Variable(tf.zeros(2, dtype=tf.float32), name='b')
        with tf.GradientTape(persistent=True) as tape:
            y = x @ w + b
            loss = tf.reduce_mean(y**2)
        [dl_dw, dl_db] = tape.gradient(loss, [w, b])
        print("dl/db: ", dl_db)
        grad = tape.gradient(loss, {'w': w, 'b': b})
        print("dl/dw: ", grad['w'])
    """),
    ("Controlling what the tape watches", """
        x0 = tf.Variable(0.0)
        x1 = tf.Variable(10.0)
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x1)
            y0 = tf.math.sin(x0)
            y1 = tf.nn.softplus(x1)
            y = y0 + y1
            ys = tf.reduce_sum(y)
        grad = tape.gradient(ys, {'x0': x0, 'x1': x1})
        print('dy/dx0: ', grad['x0'])
        print('dy/dx1: ', grad['x1'].numpy())
    """),
    ("Intermediate results and persistent tapes", """
        x = tf.constant([1, 3.0])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            z = y * y
        print('dz/dx: ', tape.gradient(z, x).numpy())
        print('dy/dx: ', tape.gradient(y, x).numpy())
    """),
    ("Gradients of non-scalar targets", """
        x = tf.Variable(2.0)
        with tf.GradientTape(persistent=True) as tape:
            y0 = x**2
            y1 = tf.exp(1 / x)
            y2 = y0 + y1
        print('dy0/dx: ', tape.gradient(y0, x).numpy())
        print('dy1/dx: ', tape.gradient(y1, x).numpy())
        print('d(y1 + y0)/dx: ', tape.gradient({'y0': y0, 'y1': y1}, x).numpy())
        print('dy2/dx: ', tape.gradient(y2, x).numpy())
    """),
    ("A gradient of None: replacing a variable with a tensor", """
        x = tf.Variable(2.)
        for epoch in range(2):
            with tf.GradientTape() as tape:
                y = x + 1
            print(type(x).__name__, ":", tape.gradient(y, x))
            x = x + 1
    """),
    ("Zero instead of None", """
        x = tf.Variable([2., 2.])
        y = tf.Variable(3.)
        with tf.GradientTape() as tape:
            z = y**2
        print('dz/dx: ', tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))
    """),
    ("Stopping the recording, stop_gradient", """
        x = tf.Variable(2.0)
        y = tf.Variable(3.0)
        with tf.GradientTape() as t:
            x_sq = x * x
            with t.stop_recording():
                y_sq = y * y
            z = x_sq + y_sq
        grad = t.gradient(z, {'x': x, 'y': y})
        print('dz/dx:', grad['x'])
        print('dz/dy:', grad['y'])
    """),
    ("Gradients with respect to a model", """
        layer = tf.keras.layers.Dense(2, activation='relu')
        x = tf.constant([[1.0, 2.0, 3.0]])
        with tf.GradientTape() as tape:
            y = layer(x)
            loss = tf.reduce_mean(y**2)
        grad = tape.gradient(loss, layer.trainable_variables)
        for var, g in zip(layer.trainable_variables, grad):
            print(f"{var.name}, shape: {g.shape}")
    """),
    ("Custom gradients", """
        @tf.custom_gradient
        def clip_gradients(y):
            def backward(dy):
                return tf.clip_by_norm(dy, 0.5)
            return y, backward

        v = tf.Variable(2.0)
        with tf.GradientTape() as t:
            output = clip_gradients(v * v)
        print(t.gradient(output, v))  # calls "backward", which clips 4 to 2
    """),
    ("Jacobians: a scalar source and a batch", """
        x = tf.linspace(-10.0, 10.0, 200+1)
        delta = tf.Variable(0.0)
        with tf.GradientTape() as tape:
            y = tf.nn.sigmoid(x+delta)
        dy_dx = tape.jacobian(y, delta)
        print(y.shape)
        print(dy_dx.shape)
        x = tf.random.normal([7, 5])
        layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
        layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
        with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            tape.watch(x)
            y = layer1(x)
            y = layer2(y)
        j = tape.jacobian(y, x)
        jb = tape.batch_jacobian(y, x)
        print(j.shape, jb.shape)
        print(float(tf.reduce_max(abs(jb - tf.einsum('bxby->bxy', j)))) < 1e-3)
    """),
    ("Higher-order gradients: nested tapes", """
        x = tf.Variable(1.0)
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = x * x * x
            dy_dx = t1.gradient(y, x)
        d2y_dx2 = t2.gradient(dy_dx, x)
        print('dy_dx:', dy_dx.numpy())
        print('d2y_dx2:', d2y_dx2.numpy())
    """),
]


def run_example(source: str, tf_module: object) -> str:
    """Runs one example with `tf` bound to `tf_module`; returns what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(textwrap.dedent(source), {"tf": tf_module})  # noqa: S102 - the guides' own code
    return out.getvalue()


def _chain_step(tf, w):
    """The timed workload: a 10-op chain and its gradient, under the module `tf` (tapejax or TensorFlow)."""
    def step():
        with tf.GradientTape() as tape:
            h = w
            for _ in range(5):
                h = tf.tanh(h) * 1.5
            loss = tf.reduce_sum(h)
        return tape.gradient(loss, w)
    return step


def _per_call_us(fn, n=200):
    import numpy as np

    from tapejax._src import executables

    # The steady state: a repeated structure runs op by op while its executable compiles in the background, and
    # switches to it on a fixed run (docs/design.md); timing those runs would show the compile, not the step.
    for _ in range(executables.POLICY.runs_while_compiling + 5):
        np.asarray(fn())
    best = float("inf")
    for _ in range(3):  # the best of three samples: a short one may meet other work on a shared machine
        start = time.perf_counter()
        for _ in range(n):
            out = fn()
        np.asarray(out)  # waits for the value
        best = min(best, time.perf_counter() - start)
    return best / n * 1e6


def _tensorflow():
    """Real TensorFlow to compare with, or None where it is not installed or does not import."""
    import importlib.util
    import os

    if importlib.util.find_spec("tensorflow") is None:
        return None
    # TF's C++ start-up lines go to fd 2 whatever TF_CPP_MIN_LOG_LEVEL says: keep them off the tour.
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            import tensorflow
    except Exception:  # noqa: BLE001 - a broken TF install only drops the comparison
        return None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return tensorflow


def _timing() -> list[str]:
    """The chain's time per call, eagerly and in `tf.function`: tapejax, TensorFlow (if installed), pure JAX."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import tapejax as tf

    start = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    ours = _chain_step(tf, tf.Variable(start))
    rows = {"eager": {"tapejax": _per_call_us(ours)}, "tf.function": {"tapejax": _per_call_us(tf.function(ours))}}
    real_tf = _tensorflow()
    if real_tf is not None:
        theirs = _chain_step(real_tf, real_tf.Variable(start))
        rows["eager"]["TensorFlow"] = _per_call_us(theirs)
        rows["tf.function"]["TensorFlow"] = _per_call_us(real_tf.function(theirs))

    def jax_loss(h):
        for _ in range(5):
            h = jnp.tanh(h) * 1.5
        return jnp.sum(h)

    jax_step = jax.jit(jax.grad(jax_loss))
    w0 = jnp.asarray(start)
    jax_us = _per_call_us(lambda: jax_step(w0))

    lines = ["10-op chain + gradient, per call (lower is better):"]
    for mode, times in rows.items():
        line = f"  {mode:<12} tapejax {times['tapejax']:7.0f} us"
        if "TensorFlow" in times:
            ratio = times["TensorFlow"] / times["tapejax"]
            verdict = f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"
            line += f"   TensorFlow {times['TensorFlow']:7.0f} us   ({verdict})"
        lines.append(line)
    lines.append(f"  {'pure JAX':<12} jax.jit(jax.grad) {jax_us:.0f} us (the step written in JAX and compiled whole)")
    if real_tf is None:
        lines.append("  (TensorFlow is not installed: `pip install tensorflow-cpu` adds it to this comparison)")
    return lines


def main() -> int:
    import jax

    import tapejax as tf

    print(f"tapejax tour: the TensorFlow autodiff guides' examples on JAX {jax.__version__} "
          f"({jax.devices()[0].platform.upper()})\n")
    for title, source in EXAMPLES:
        print(f"== {title}")
        print(textwrap.indent(textwrap.dedent(source).strip(), "    "))
        print(textwrap.indent(run_example(source, tf).rstrip(), "  > "))
        print()
    print("== Timing")
    print("\n".join(_timing()))
    return 0
