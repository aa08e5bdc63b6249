"""What a step costs before it is fast (compiling it), what a persistent tape holds (memory), what a retrace
storm costs (a tf.function called with a new shape on every call: time and memory per new shape), what a
jacobian's peak memory is and what a long eager chain costs run by run (bounded compile and memory), against
TensorFlow."""

from __future__ import annotations

import gc
import itertools
import logging
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np

import tapejax
from benchmarks.harness import block_jax, block_numpy
from benchmarks.workloads import _mlp_data, _mlp_loss, tensorflow


def compile_cost(quick: bool):
    """The first call of a freshly made MLP gradient step (trace + compile), against pure JAX's."""
    x0, onehot0, params0 = _mlp_data((64, 256, 256, 10), 128)
    variables = [tapejax.Variable(p) for p in params0]
    x, onehot = tapejax.constant(x0), tapejax.constant(onehot0)

    def step(x, onehot):
        with tapejax.GradientTape() as tape:
            loss = _mlp_loss(tapejax, variables, x, onehot)
        return tape.gradient(loss, variables)

    def fresh_tapejax():
        return tapejax.function(step)(x, onehot)  # a new Function: traced and compiled on this call

    params, xj, oj = [jnp.asarray(p) for p in params0], jnp.asarray(x0), jnp.asarray(onehot0)

    def fresh_jax():
        return jax.jit(jax.grad(lambda p: _mlp_loss(jnp, p, xj, oj)))(params)

    impls = {"tapejax tf.function, first call": (fresh_tapejax, block_jax),
             "jax.jit(jax.grad), first call": (fresh_jax, block_jax)}
    if tensorflow is not None:
        tvars = [tensorflow.Variable(p) for p in params0]
        xt, ot = tensorflow.constant(x0), tensorflow.constant(onehot0)

        def tf_step(x, onehot):
            with tensorflow.GradientTape() as tape:
                loss = _mlp_loss(tensorflow, tvars, x, onehot)
            return tape.gradient(loss, tvars)

        impls["TensorFlow tf.function, first call"] = (lambda: tensorflow.function(tf_step)(xt, ot), block_numpy)
    options = {"repeats": 2 if quick else 5, "warmup": 1}
    return ("first call of a new MLP gradient step (trace + compile; steady state: see mlp_step)", impls,
            "jax.jit(jax.grad), first call", [], options)


def tape_memory(quick: bool) -> list[str]:
    """Device memory a persistent tape holds after N recorded steps of `h = tanh(h @ w)` ([128, 256] @ [256,
    256]): the arrays alive while the tape is, minus those alive without it; after recording (deferred ops hold
    no values yet) and after a first gradient (a first-seen structure computes every value, op by op, and the
    persistent tape keeps them, as TF's does)."""
    rng = np.random.default_rng(6)
    w = tapejax.Variable((rng.normal(size=(256, 256)) / 16).astype(np.float32))
    h0 = tapejax.constant(rng.normal(size=(128, 256)).astype(np.float32))
    rows = ["| steps recorded | held after recording | after a first gradient | per step | one activation |",
            "|---:|---:|---:|---:|---:|"]
    for n in (10, 100) if quick else (10, 100, 1000):
        jax.block_until_ready(h0.value)
        before = sum(a.nbytes for a in jax.live_arrays())
        with tapejax.GradientTape(persistent=True) as tape:
            h = h0
            for _ in range(n):
                h = tapejax.tanh(h @ w)
        recorded = sum(a.nbytes for a in jax.live_arrays()) - before
        grad = tape.gradient(h, w)
        jax.block_until_ready(grad.value)
        del grad
        held = sum(a.nbytes for a in jax.live_arrays()) - before
        rows.append(f"| {n} | {recorded / 2**20:,.1f} MiB | {held / 2**20:,.1f} MiB | {held / n / 1024:,.0f} KiB "
                    f"| {128 * 256 * 4 / 1024:,.0f} KiB |")
        del tape, h
    return rows


def _storm_step(lib, v):
    def step(x):
        return lib.reduce_sum(lib.tanh(x * v) ** 2) + lib.reduce_mean(x)
    return step


def _storm_call(lib, reduce_retracing: bool):
    """A call of one tf.function with a new shape each time (sizes 10, 11, ...): each call traces (and, for
    tapejax, compiles) anew, unless reduce_retracing lets a relaxed trace serve it."""
    step = lib.function(_storm_step(lib, lib.Variable(1.0)), reduce_retracing=reduce_retracing)
    sizes = itertools.count(10)
    return lambda: step(lib.constant(np.ones(next(sizes), np.float32)))


def retrace_storm(quick: bool):
    """The time of a call with a shape never seen before (trace, and for tapejax compile, included)."""
    impls = {"tapejax tf.function, new shape each call": (_storm_call(tapejax, False), block_jax),
             "tapejax tf.function(reduce_retracing=True)": (_storm_call(tapejax, True), block_jax)}
    baseline = "tapejax tf.function, new shape each call"
    if tensorflow is not None:
        impls["TensorFlow tf.function, new shape each call"] = (_storm_call(tensorflow, False), block_numpy)
        impls["TensorFlow tf.function(reduce_retracing=True)"] = (_storm_call(tensorflow, True), block_numpy)
        baseline = "TensorFlow tf.function, new shape each call"
    options = {"repeats": 2 if quick else 7, "warmup": 1}
    return ("retrace storm: a call with a new shape (trace + compile)", impls, baseline, [], options)


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (2**12) / 2**20


def retrace_memory(quick: bool) -> list[str]:
    """Resident memory a retrace storm adds per new shape: N calls of one tf.function, each with a new shape
    (`_storm_step`), the process's growth divided by N (after the first few shapes, so warm-up is not
    counted). tapejax keeps at most function.MAX_TRACES traces per tf.function; TF keeps every one."""
    n = 40 if quick else 300
    rows = ["| implementation | shapes | growth per new shape | time per new shape | traces |",
            "|---|---:|---:|---:|---:|"]
    libs = [("tapejax", tapejax)] + ([("TensorFlow", tensorflow)] if tensorflow is not None else [])
    quiet = logging.getLogger("tensorflow")
    level, quiet.level = quiet.level, logging.ERROR  # the retracing warnings are expected here
    try:
        for name, lib in libs:
            for relaxed in (False, True):
                step = lib.function(_storm_step(lib, lib.Variable(1.0)), reduce_retracing=relaxed)
                for k in range(1, 4):
                    step(lib.constant(np.ones(k, np.float32)))
                gc.collect()
                before, start = _rss_mib(), time.perf_counter()
                for k in range(10, 10 + n):
                    block_numpy(step(lib.constant(np.ones(k, np.float32))))
                seconds = time.perf_counter() - start
                gc.collect()
                grown = _rss_mib() - before
                label = f"{name} tf.function" + ("(reduce_retracing=True)" if relaxed else "")
                rows.append(f"| {label} | {n} | {grown / n:,.3f} MiB | {seconds / n * 1e3:,.1f} ms | "
                            f"{step.experimental_get_tracing_count()} |")
                del step
    finally:
        quiet.setLevel(level)
    return rows




_ROOT = pathlib.Path(__file__).resolve().parent.parent

_PREAMBLE = textwrap.dedent("""
    import sys, time
    import numpy as np
    if sys.argv[1] == "tf":
        import tensorflow as tf
    else:
        import tapejax as tf

    def peak_mib():  # peak resident memory of this process: XLA's and TF's CPU buffers are part of it
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
        return float("nan")
""")

_JACOBIAN_SCRIPT = _PREAMBLE + textwrap.dedent("""
    n = int(sys.argv[2])
    rng = np.random.default_rng(0)
    a0 = rng.normal(size=(n, n)).astype(np.float32)
    a, x = tf.constant(a0), tf.Variable(rng.normal(size=(n,)).astype(np.float32))
    before = peak_mib()
    times = []
    for _ in range(2):
        start = time.perf_counter()
        with tf.GradientTape() as tape:
            y = tf.linalg.matvec(a, x)
        j = tape.jacobian(y, x).numpy()
        times.append(time.perf_counter() - start)
    assert np.allclose(j, a0)
    print(before, peak_mib(), *times)
""")

_CHAIN_SCRIPT = _PREAMBLE + textwrap.dedent("""
    n = int(sys.argv[2])
    w = tf.Variable(np.linspace(-1.0, 1.0, 64, dtype=np.float32))
    times = []
    for _ in range(2):
        start = time.perf_counter()
        with tf.GradientTape() as tape:
            h = w
            for i in range(n):
                h = tf.tanh(h) if i % 2 == 0 else h * 1.5
            loss = tf.reduce_sum(h)
        tape.gradient(loss, w).numpy()
        times.append(time.perf_counter() - start)
    print(*times)
""")


def _run(script: str, lib: str, *args: object) -> list[float] | None:
    """The numbers a script prints, run in a fresh process (first runs and peak memory are per process)."""
    if lib == "tf" and tensorflow is None:
        return None
    env = {**os.environ, "PYTHONPATH": str(_ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, "-c", script, lib, *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=900, cwd=_ROOT)
    if done.returncode != 0:  # a failed run (before chunking, the 2000x2000 jacobian died out of memory)
        print(f"{lib} {args}: failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return [float("nan")] * 4
    return [float(v) for v in done.stdout.split()[-4:]]


def jacobian_memory(quick: bool) -> list[str]:
    """Peak resident memory of a fresh process computing the jacobian of `tf.linalg.matvec(A, x)` w.r.t. x (A [n,
    n], float32; result [n, n]) twice, against TensorFlow's; and each call's time (the first includes compiling
    the ops; in tapejax the second may run the structure's compiled executable)."""
    rows = ["| n | implementation | result | peak RSS | peak RSS over the set-up | first call | second call |",
            "|---:|---|---:|---:|---:|---:|---:|"]
    for n in (400,) if quick else (400, 2000):
        for lib, label in (("tapejax", "tapejax tape.jacobian"), ("tf", "TensorFlow tape.jacobian")):
            got = _run(_JACOBIAN_SCRIPT, lib, n)
            if got is None:
                continue
            before, peak, first, second = got
            rows.append(f"| {n} | {label} | {n * n * 4 / 2**20:,.1f} MiB | {peak:,.0f} MiB | {peak - before:,.0f} MiB "
                        f"| {first:,.2f} s | {second:,.2f} s |")
    return rows


def long_chain(quick: bool) -> list[str]:
    """An eager chain of N elementwise ops on a 64-vector and its gradient, run twice in a fresh process: tapejax
    compiles a structure only when that pays back, so the second run costs what the first did (a program over
    executables.Policy.max_steps runs op by op every time)."""
    rows = ["| ops | implementation | first run | second run |", "|---:|---|---:|---:|"]
    for n in (2000,) if quick else (2000, 20000):
        for lib, label in (("tapejax", "tapejax eager tape"), ("tf", "TensorFlow eager tape")):
            got = _run(_CHAIN_SCRIPT, lib, n)
            if got is not None:
                rows.append(f"| {n:,} | {label} | {got[-2]:,.2f} s | {got[-1]:,.2f} s |")
    return rows


WORKLOADS = {"compile_cost": compile_cost, "retrace_storm": retrace_storm}
# Workloads that print their own table (memory, or one-off runs in fresh processes), by name for `--only`.
TABLES = {
    "tape_memory": ("Memory held by a persistent tape (`h = tanh(h @ w)`, h [128, 256]):", tape_memory),
    "retrace_storm": ("Memory and time a retrace storm adds per new shape (one tf.function, a new shape each call):",
                      retrace_memory),
    "jacobian_memory": ("Peak memory of a jacobian of `tf.linalg.matvec(A, x)` w.r.t. x, A [n, n] float32, fresh "
                        "process:", jacobian_memory),
    "long_chain": ("An eager N-op chain and its gradient, run twice in a fresh process:", long_chain),
}
