"""The benchmark workloads. Each returns implementations of one computation, timed side by side.

A workload is `fn(quick) -> (description, {implementation: (callable, block)}, baseline, targets[, options])`,
where a target is (numerator, denominator, "<=" or ">=", bound on numerator time / denominator time, the issue
that set it), and options may set "repeats", "warmup" and a "teardown" run after timing.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import tapejax
from benchmarks.harness import block_jax, block_numpy
from tapejax._src import executables

try:  # the optional oracle
    import tensorflow as tensorflow
except ImportError:  # pragma: no cover - depends on the machine
    tensorflow = None

try:  # an optional baseline: the other eager tape researchers use
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None


def block_torch(x: object) -> object:
    return x.detach().numpy()


def op_under_tape(quick: bool):
    """One op (sin of a 100-vector) recorded on an active tape, against the same raw jnp call."""
    a = jnp.linspace(-1.0, 1.0, 100, dtype=jnp.float32)
    x = tapejax.constant(np.asarray(a))
    tape = tapejax.GradientTape(persistent=True)
    tape.__enter__()
    tape.watch(x)
    sin = tapejax.math.sin

    def block_and_reset(out):
        # Once per timed batch: keep the trace bounded, or a long loop would hold every input.
        block_jax(out)
        tape.reset()
        tape.watch(x)

    # A recorded op is deferred (tapejax/_src/deferred.py): it records and infers its output's shape; its value is
    # computed inside the gradient's executable, or when read. Both are timed: the op as a taped program pays for
    # it, and the op whose value is read at once (`.value`), which pays for its value as jnp.sin does.
    impls = {
        "tapejax (tape active, value deferred)": (lambda: sin(x), block_and_reset),
        "tapejax (tape active, value read)": (lambda: sin(x).value, block_and_reset),
        "jnp.sin": (lambda: jnp.sin(a), block_jax),
    }
    if tensorflow is not None:
        xt = tensorflow.constant(np.asarray(a))
        tf_tape = tensorflow.GradientTape(persistent=True)
        tf_tape.__enter__()
        tf_tape.watch(xt)
        impls["TensorFlow (tape active)"] = (lambda: tensorflow.math.sin(xt), block_numpy)

    def teardown():
        # Left active, the persistent tapes would watch the variables that later workloads read and record their
        # every op, holding it all (the full run once ran out of memory at the 10x jacobian).
        tape.__exit__(None, None, None)
        if tensorflow is not None:
            tf_tape.__exit__(None, None, None)

    return ("one op under an active tape (sin, shape (100,))", impls, "jnp.sin",
            [("tapejax (tape active, value deferred)", "jnp.sin", "<=", 1.5, 2),
             ("tapejax (tape active, value read)", "jnp.sin", "<=", 1.5, 2)], {"teardown": teardown})


def _chain(lib, h, n_ops):
    """n_ops elementwise ops, alternating tanh and a scaling, then a sum (written once for every library)."""
    tanh = jnp.tanh if lib is jnp else lib.tanh
    for i in range(n_ops):
        h = tanh(h) if i % 2 == 0 else h * 1.5
    return jnp.sum(h) if lib is jnp else lib.reduce_sum(h)


def _chain_tapejax(w, n_ops):
    def step():
        with tapejax.GradientTape() as tape:
            loss = _chain(tapejax, w, n_ops)
        return tape.gradient(loss, w)

    return step


def chain_gradient(quick: bool, n_ops: int = 10):
    """A chain of n elementwise ops on a 64-vector Variable and its gradient, computed in a loop: the steady state.

    tapejax compiles a large structure only once its op-by-op runs have paid for the compile (executables.Policy:
    the 1000-op chain on its 51st run), so the warm-up runs the loop that long; the runs before are op by op (see
    `python -m benchmarks --only long_chain` for a fresh process's first runs).
    """
    w0 = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    w = tapejax.Variable(w0)
    jitted = jax.jit(jax.grad(lambda h: _chain(jnp, h, n_ops)))
    wj = jnp.asarray(w0)
    impls = {
        "tapejax eager tape": (_chain_tapejax(w, n_ops), block_jax),
        "tapejax tf.function": (tapejax.function(_chain_tapejax(w, n_ops)), block_jax),
        "jax.jit(jax.grad)": (functools.partial(jitted, wj), block_jax),
    }
    if tensorflow is not None:
        wt = tensorflow.Variable(w0)

        def tf_step():
            with tensorflow.GradientTape() as tape:
                loss = _chain(tensorflow, wt, n_ops)
            return tape.gradient(loss, wt)

        impls["TensorFlow eager tape"] = (tf_step, block_numpy)
        impls["TensorFlow tf.function"] = (tensorflow.function(tf_step), block_numpy)
    if torch is not None:
        w_torch = torch.tensor(w0, requires_grad=True)

        def torch_step():
            h = w_torch
            for i in range(n_ops):
                h = torch.tanh(h) if i % 2 == 0 else h * 1.5
            return torch.autograd.grad(h.sum(), w_torch)[0]

        impls["PyTorch eager autograd"] = (torch_step, block_torch)
    targets = []
    if n_ops == 10:  # issue 22: at or below PyTorch's eager autograd, and at least 8x TF's eager tape
        if torch is not None:
            targets.append(("tapejax eager tape", "PyTorch eager autograd", "<=", 1.0, 22))
        if tensorflow is not None:
            targets.append(("TensorFlow eager tape", "tapejax eager tape", ">=", 8.0, 22))
    warmup = max(3, executables.POLICY.min_runs(n_ops + 1))  # the chain and its sum
    return (f"{n_ops}-op chain + gradient in a loop (shape (64,))", impls, "jax.jit(jax.grad)", targets,
            {"warmup": 1 if quick else warmup})


def _dense_problem(scale: int):
    """The seed guide's jacobian example (x [7, 5], a Dense(10) relu layer), and `scale` times larger."""
    rng = np.random.default_rng(0)
    batch, n_in, n_out = 7 * scale, 5 * scale, 10 * scale
    x0 = rng.normal(size=(batch, n_in)).astype(np.float32)
    k0 = (rng.normal(size=(n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
    return x0, k0


def jacobian(quick: bool, scale: int = 1):
    """`tape.jacobian(y, kernel)` of a Dense relu layer, as in the seed guide (result [7, 10, 5, 10])."""
    x0, k0 = _dense_problem(scale)
    x, kernel = tapejax.constant(x0), tapejax.Variable(k0)

    def tape_jacobian():
        with tapejax.GradientTape() as tape:
            y = tapejax.nn.relu(x @ kernel)
        return tape.jacobian(y, kernel)

    f = lambda k: jax.nn.relu(jnp.asarray(x0) @ k)  # noqa: E731
    jitted = jax.jit(jax.jacrev(f))
    kj = jnp.asarray(k0)
    impls = {
        "tapejax tape.jacobian": (tape_jacobian, block_jax),
        "tapejax tf.function": (tapejax.function(tape_jacobian), block_jax),
        "jax.jit(jax.jacrev)": (functools.partial(jitted, kj), block_jax),
        "jax.jacrev (eager)": (functools.partial(jax.jacrev(f), kj), block_jax),
        # The floor of any dense jacobian: writing a result of its size (at 10x, 140 MB), computing nothing.
        "floor: jnp.zeros of the result's size": (
            jax.jit(lambda: jnp.zeros((x0.shape[0], k0.shape[1], *k0.shape), jnp.float32)), block_jax),
    }
    if scale >= 10:
        # The same write as XLA writes a computed result: `jnp.zeros` has no flops, so XLA's CPU client runs it
        # on the calling thread, whose heap recycles the 140 MB; a program of 1,000 flops or more (the jacobian's,
        # this one's: the jacobian of `x @ kernel`, one multiply per element) runs on XLA's worker thread, where
        # glibc maps every buffer over 64 MB afresh (docs/design.md, "Host memory").
        eye = jnp.eye(k0.shape[1], dtype=jnp.float32)
        impls["floor as computed: x (outer) eye, on XLA's worker"] = (
            functools.partial(jax.jit(lambda x, e: x[:, None, :, None] * e[None, :, None, :]), jnp.asarray(x0), eye),
            block_jax)
    # Issue #3 says "against jax.jacrev": eager against eager, compiled against compiled, and (strictest) the
    # eager tape against compiled JAX.
    targets = [("tapejax tape.jacobian", "jax.jacrev (eager)", "<=", 1.5, 3),
               ("tapejax tf.function", "jax.jit(jax.jacrev)", "<=", 1.5, 3),
               ("tapejax tape.jacobian", "jax.jit(jax.jacrev)", "<=", 1.5, 3)]
    if tensorflow is not None:
        xt, kt = tensorflow.constant(x0), tensorflow.Variable(k0)

        def tf_jacobian():
            with tensorflow.GradientTape() as tape:
                y = tensorflow.nn.relu(xt @ kt)
            return tape.jacobian(y, kt)

        impls["TensorFlow tape.jacobian"] = (tf_jacobian, block_numpy)
        impls["TensorFlow tf.function"] = (tensorflow.function(tf_jacobian), block_numpy)
        if scale < 10:
            targets.append(("TensorFlow tape.jacobian", "tapejax tape.jacobian", ">=", 100.0, 3))
    if scale >= 10:  # issue 22 replaces the 100x over TF, which writing the result alone makes unreachable
        targets = [("tapejax tape.jacobian", "jax.jit(jax.jacrev)", "<=", 1.5, 22),
                   ("tapejax tape.jacobian", "floor: jnp.zeros of the result's size", "<=", 2.0, 22)]
    shape = f"[{x0.shape[0]}, {k0.shape[1]}, {k0.shape[0]}, {k0.shape[1]}]"
    return (f"jacobian of a Dense layer w.r.t. its kernel, result {shape}", impls, "jax.jit(jax.jacrev)", targets)


def batch_jacobian(quick: bool, scale: int = 1):
    """`tape.batch_jacobian(y, x)` through two elu layers, as in the seed guide (result [7, 6, 5])."""
    rng = np.random.default_rng(1)
    batch, n_in, hidden, n_out = 7 * scale, 5 * scale, 8 * scale, 6 * scale
    x0 = rng.normal(size=(batch, n_in)).astype(np.float32)
    w1 = (rng.normal(size=(n_in, hidden)) / np.sqrt(n_in)).astype(np.float32)
    w2 = (rng.normal(size=(hidden, n_out)) / np.sqrt(hidden)).astype(np.float32)
    x, v1, v2 = tapejax.constant(x0), tapejax.Variable(w1), tapejax.Variable(w2)

    def tape_batch_jacobian():
        with tapejax.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x)
            y = tapejax.nn.elu(tapejax.nn.elu(x @ v1) @ v2)
        return tape.batch_jacobian(y, x)

    per_row = lambda row: jax.nn.elu(jax.nn.elu(row @ w1) @ w2)  # noqa: E731
    jitted = jax.jit(jax.vmap(jax.jacrev(per_row)))
    xj = jnp.asarray(x0)
    impls = {
        "tapejax tape.batch_jacobian": (tape_batch_jacobian, block_jax),
        "tapejax tf.function": (tapejax.function(tape_batch_jacobian), block_jax),
        "jax.jit(jax.vmap(jax.jacrev))": (functools.partial(jitted, xj), block_jax),
        "jax.vmap(jax.jacrev) (eager)": (functools.partial(jax.vmap(jax.jacrev(per_row)), xj), block_jax),
        "floor: jnp.zeros of the result's size": (
            jax.jit(lambda: jnp.zeros((batch, n_out, n_in), jnp.float32)), block_jax),
    }
    targets = [("tapejax tape.batch_jacobian", "jax.vmap(jax.jacrev) (eager)", "<=", 1.5, 3),
               ("tapejax tf.function", "jax.jit(jax.vmap(jax.jacrev))", "<=", 1.5, 3),
               ("tapejax tape.batch_jacobian", "jax.jit(jax.vmap(jax.jacrev))", "<=", 1.5, 3)]
    if tensorflow is not None:
        xt, t1, t2 = tensorflow.constant(x0), tensorflow.Variable(w1), tensorflow.Variable(w2)

        def tf_batch_jacobian():
            with tensorflow.GradientTape(watch_accessed_variables=False) as tape:
                tape.watch(xt)
                y = tensorflow.nn.elu(tensorflow.nn.elu(xt @ t1) @ t2)
            return tape.batch_jacobian(y, xt)

        impls["TensorFlow tape.batch_jacobian"] = (tf_batch_jacobian, block_numpy)
        impls["TensorFlow tf.function"] = (tensorflow.function(tf_batch_jacobian), block_numpy)
        if scale < 10:
            targets.append(("TensorFlow tape.batch_jacobian", "tapejax tape.batch_jacobian", ">=", 100.0, 3))
    if scale >= 10:  # issue 22; its 2x-the-floor target is the dense jacobian's, whose cost is writing the result:
        # this result is 840 KB, and jax.jit(jax.vmap(jax.jacrev)) itself takes 17x the floor (712 against 42 us)
        targets = [("tapejax tape.batch_jacobian", "jax.jit(jax.vmap(jax.jacrev))", "<=", 1.5, 22)]
    return (f"batch_jacobian through two elu layers, result [{batch}, {n_out}, {n_in}]", impls,
            "jax.jit(jax.vmap(jax.jacrev))", targets)


WORKLOADS = {
    "op_under_tape": op_under_tape,
    "chain_gradient": chain_gradient,
    "jacobian": jacobian,
    "jacobian_10x": functools.partial(jacobian, scale=10),
    "batch_jacobian": batch_jacobian,
    "batch_jacobian_10x": functools.partial(batch_jacobian, scale=10),
}


def _mlp_data(sizes: tuple[int, ...], batch: int):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch)
    onehot = np.eye(sizes[-1], dtype=np.float32)[labels]
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.normal(size=(n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(np.float32))
        params.append(np.zeros(n_out, np.float32))
    return x, onehot, params


def _mlp_loss(lib, params, x, onehot):
    """Softmax cross-entropy of a relu MLP, written once for tapejax, TensorFlow and JAX (`lib`)."""
    relu, log_softmax, total = ((jax.nn.relu, jax.nn.log_softmax, jnp.sum) if lib is jnp
                                else (lib.nn.relu, lib.nn.log_softmax, lib.reduce_sum))
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i + 2 < len(params):
            h = relu(h)
    return -total(onehot * log_softmax(h)) / x.shape[0]


def mlp_step(quick: bool, sizes: tuple[int, ...] = (64, 256, 256, 10), batch: int = 128):
    """One Adam training step of an MLP: forward, tape gradient, update (issue #7's size by default)."""
    import optax

    x0, onehot0, params0 = _mlp_data(sizes, batch)
    impls = {}
    for compiled in (False, True):
        variables = [tapejax.Variable(p) for p in params0]
        opt = tapejax.keras.optimizers.Adam(1e-3)
        x, onehot = tapejax.constant(x0), tapejax.constant(onehot0)

        def step(x, onehot, variables=variables, opt=opt):
            with tapejax.GradientTape() as tape:
                loss = _mlp_loss(tapejax, variables, x, onehot)
            opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        fn = tapejax.function(step) if compiled else step
        impls["tapejax tf.function" if compiled else "tapejax eager"] = (functools.partial(fn, x, onehot), block_jax)

    adam = optax.adam(1e-3, eps=1e-7)

    @jax.jit
    def jax_step(params, state, x, onehot):
        loss, grads = jax.value_and_grad(lambda p: _mlp_loss(jnp, p, x, onehot))(params)
        updates, state = adam.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    holder = {"params": [jnp.asarray(p) for p in params0]}
    holder["state"] = adam.init(holder["params"])
    xj, oj = jnp.asarray(x0), jnp.asarray(onehot0)

    def pure_jax():
        holder["params"], holder["state"], loss = jax_step(holder["params"], holder["state"], xj, oj)
        return loss

    impls["jax.jit(value_and_grad) + optax"] = (pure_jax, block_jax)
    issue_size = sizes == (64, 256, 256, 10) and batch == 128
    targets = [("tapejax tf.function", "jax.jit(value_and_grad) + optax", "<=", 1.1, 7)] if issue_size else []
    if tensorflow is not None:
        for compiled in (False, True):
            tvars = [tensorflow.Variable(p) for p in params0]
            topt = tensorflow.keras.optimizers.Adam(1e-3)
            xt, ot = tensorflow.constant(x0), tensorflow.constant(onehot0)

            def tf_step(x, onehot, tvars=tvars, topt=topt):
                with tensorflow.GradientTape() as tape:
                    loss = _mlp_loss(tensorflow, tvars, x, onehot)
                topt.apply_gradients(zip(tape.gradient(loss, tvars), tvars))
                return loss

            fn = tensorflow.function(tf_step) if compiled else tf_step
            name = "TensorFlow tf.function" if compiled else "TensorFlow eager"
            impls[name] = (functools.partial(fn, xt, ot), block_numpy)
        if issue_size:
            targets += [("tapejax tf.function", "TensorFlow tf.function", "<=", 1.0, 7),
                        ("TensorFlow eager", "tapejax eager", ">=", 2.0, 7)]
    if torch is not None:
        torch_params = [torch.tensor(p, requires_grad=True) for p in params0]
        torch_adam = torch.optim.Adam(torch_params, lr=1e-3, eps=1e-7)
        x_torch, onehot_torch = torch.tensor(x0), torch.tensor(onehot0)

        def torch_step():
            torch_adam.zero_grad()
            h = x_torch
            for i in range(0, len(torch_params), 2):
                h = h @ torch_params[i] + torch_params[i + 1]
                if i + 2 < len(torch_params):
                    h = torch.relu(h)
            loss = -(onehot_torch * torch.log_softmax(h, dim=-1)).sum() / x0.shape[0]
            loss.backward()
            torch_adam.step()
            return loss

        impls["PyTorch eager autograd"] = (torch_step, block_torch)
    layers = "-".join(map(str, sizes))
    return (f"MLP training step, Adam (batch {batch}, layers {layers})", impls,
            "jax.jit(value_and_grad) + optax", targets)


WORKLOADS.update({
    "chain_1": functools.partial(chain_gradient, n_ops=1),
    "chain_100": functools.partial(chain_gradient, n_ops=100),
    "chain_1000": functools.partial(chain_gradient, n_ops=1000),
    "jacobian_3x": functools.partial(jacobian, scale=3),
    "batch_jacobian_3x": functools.partial(batch_jacobian, scale=3),
    "mlp_small": functools.partial(mlp_step, sizes=(32, 64, 64, 10), batch=32),
    "mlp_step": mlp_step,
    "mlp_large": functools.partial(mlp_step, sizes=(256, 1024, 1024, 10), batch=256),
})
