"""`tf.from_jax(fn)`: a JAX function as a tapejax op (Flax and Equinox models, hand-written JAX layers).

The op is one row applied through the engine's dispatch (`dispatch.apply`), like `tf.numpy_function`'s: its inputs
are converted by TF's rules, it runs as one jitted executable, tapes record it as one entry, and its derivative is
JAX's derivative of `fn` (so `fn`'s own `jax.custom_vjp` / `jax.custom_jvp` rules are used). Inside a
`tf.function` it is traced into the same `jax.jit` as the rest of the step. Nothing here differentiates or
replays: the tape, the lowering and the transformations are the engine's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from tapejax._src import caches, checking, deferred, dispatch, pytrees
from tapejax._src.registry import OpDef
from tapejax._src.tensor import Tensor
from tapejax._src.variable import Variable

_NOT_AN_ARRAY = (
    "tf.from_jax({name}): argument {path} is a {kind}, not an array, so it cannot be an input of the op. Make it "
    "static, `tf.from_jax(fn, {static})` (a hashable value, fixed in the compiled function), or close over it "
    "with functools.partial."
)
_UNHASHABLE_STATIC = (
    "tf.from_jax({name}): static argument {arg!r} must be hashable (it keys the compiled function), got a "
    "{kind}. Pass it as an array argument instead, or close over it with functools.partial."
)

# (op, params, input shapes and dtypes) -> the structure of fn's result, from jax.eval_shape.
_OUTPUT_TREES = caches.Memo("from_jax output structures (from_jax.py)", 1024)
_LEAF_TYPES = (Tensor, Variable, jax.Array, np.ndarray, np.generic, float, int, bool, complex)


def from_jax(fn: Callable[..., Any] | None = None, *, static_argnums: int | Sequence[int] = (),
             static_argnames: str | Sequence[str] = (), name: str | None = None) -> Any:
    """Makes a JAX function a tapejax op: Tensors in, Tensors out, differentiated by JAX.

    `fn` takes and returns JAX arrays, or pytrees of them (dicts, lists, Flax params, Equinox modules). The op
    takes the same structures with Tensors, Variables, numpy arrays or Python numbers at the leaves (converted by
    TF's rules: a Python float is float32) and returns `fn`'s structure with Tensors at the leaves. Tapes record
    the call as one op whose gradient is `jax.vjp` of `fn` (forward mode: `jax.jvp`), so custom_vjp/custom_jvp
    rules inside `fn` are respected, and `tape.jacobian`, `batch_jacobian`, nested tapes and
    `ForwardAccumulator` work as for any op. Inside `tf.function` the call is part of the same compiled step.

    Parameters held in Variables are read like any op input, and their gradients come back on the tape:

    >>> import jax.numpy as jnp
    >>> import tapejax as tf
    >>> def dense(params, x):
    ...     return jnp.tanh(x @ params["w"] + params["b"])
    >>> layer = tf.from_jax(dense)
    >>> params = {"w": tf.Variable(tf.ones([2, 1])), "b": tf.Variable(tf.zeros([1]))}
    >>> with tf.GradientTape() as tape:
    ...     loss = tf.reduce_sum(layer(params, tf.constant([[0.5, -0.25]])))
    >>> grads = tape.gradient(loss, params)
    >>> print(grads["b"])
    tf.Tensor([0.94001484], shape=(1,), dtype=float32)

    A Flax module's `apply` or an Equinox model (with `eqx.partition` into arrays and the rest) becomes an op the
    same way; `jax.tree.map(tf.Variable, params)` puts a params pytree into Variables (README, "JAX interop").

    Args:
      fn: the JAX function. Used as a decorator, `@tf.from_jax` or `@tf.from_jax(static_argnames=...)`.
      static_argnums, static_argnames: arguments that are not arrays (a `training` flag, a config, a string):
        passed to `fn` as they are, and part of the compiled function's key (as `jax.jit`'s). They must be
        hashable. Anything else that is not an array can be closed over (`functools.partial`).
      name: the op's name in error messages (default: `fn`'s name).

    Returns:
      The op: a callable with `fn`'s arguments.

    Raises:
      InvalidArgumentError: (eagerly) JAX rejected the inputs: a wrong shape or dtype, with JAX's message.
      ValueError: the same, inside a `tf.function` trace (TF's graph-construction error).
      TypeError: an argument that is neither an array nor static, or an unhashable static argument.

    Differences from TensorFlow: TF has no such op (its closest, `tf.py_function`, runs Python with no JAX
    derivative). The op's float outputs are differentiable; integer outputs get None gradients, as in TF. JAX's
    forward mode refuses a `jax.custom_vjp` function, so `ForwardAccumulator` through such an `fn` raises.
    """
    if fn is None:
        return functools.partial(from_jax, static_argnums=static_argnums, static_argnames=static_argnames,
                                 name=name)
    return FromJax(fn, static_argnums, static_argnames, name)


class FromJax:
    """The op `from_jax` returns; calling it applies one OpDef through `dispatch.apply`."""

    def __init__(self, fn: Callable[..., Any], static_argnums: int | Sequence[int],
                 static_argnames: str | Sequence[str], name: str | None):
        self.fn = fn
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self.static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self.name = name or getattr(fn, "__name__", None) or type(fn).__name__
        # One row for every call: the input structure and static values are its static params, so each
        # (structure, statics) compiles once, and tapes key the call like any op's.
        self.opdef = OpDef(f"from_jax.{self.name}", self._impl, static=("tree", "statics"), op_type=self.name,
                           same_dtype=False)
        functools.update_wrapper(self, fn, updated=())

    def _impl(self, *leaves: Any, tree: Any, statics: tuple) -> tuple:
        args, kwargs = _call_arguments(tree, leaves, statics)
        out = self.fn(*args, **kwargs)
        return tuple(x._value if isinstance(x, Tensor) else x
                     for x in jax.tree_util.tree_leaves(out, is_leaf=pytrees.is_value))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        statics = []
        args = list(args)
        for i in self.static_argnums:
            if -len(args) <= i < len(args):
                statics.append((i % len(args), self._hashable(str(i), args[i])))
                args[i] = None  # an empty subtree: the static value is put back in _impl
        for k in self.static_argnames:
            if k in kwargs:
                statics.append((k, self._hashable(k, kwargs.pop(k))))
        leaves, tree = jax.tree_util.tree_flatten((tuple(args), kwargs), is_leaf=pytrees.is_value)
        for i, leaf in enumerate(leaves):
            if not isinstance(leaf, _LEAF_TYPES):
                path, top = _paths(tree)[i]
                static = f"static_argnums=({top},)" if isinstance(top, int) else f"static_argnames=({top!r},)"
                raise TypeError(_NOT_AN_ARRAY.format(name=self.name, path=path, kind=type(leaf).__name__,
                                                     static=static))
        params = {"tree": tree, "statics": tuple(statics)}
        outs = dispatch.apply(self.opdef, tuple(leaves), params)
        return jax.tree_util.tree_unflatten(self._output_tree(params, outs, leaves), outs)

    def _output_tree(self, params: dict, outs: tuple, leaves: list) -> Any:
        """The structure of fn's result for these inputs: jax.eval_shape once per signature (a memo)."""
        # The outputs' shapes come from the same signature, so the inputs' shapes and dtypes key it.
        key = (self.opdef, params["tree"], params["statics"], tuple(_aval(x) for x in leaves))
        tree = _OUTPUT_TREES.get(key)
        if tree is None or checking.FLAG.on:
            structs = [jax.ShapeDtypeStruct(*_aval(x)) for x in leaves]
            out = jax.eval_shape(lambda *xs: _call_fn(self.fn, params, xs), *structs)
            fresh = jax.tree_util.tree_structure(out, is_leaf=pytrees.is_value)
            if tree is not None:
                checking.require("from_jax output structures (from_jax.py)", tree == fresh, self.name)
            tree = _OUTPUT_TREES[key] = fresh
        return tree

    def _hashable(self, arg: str, value: Any) -> Any:
        try:
            hash(value)
        except TypeError:
            raise TypeError(_UNHASHABLE_STATIC.format(name=self.name, arg=arg, kind=type(value).__name__)) from None
        return value

    def __repr__(self) -> str:
        return f"<tf.from_jax op {self.name}>"


def _call_arguments(tree: Any, leaves: Sequence[Any], statics: tuple) -> tuple[list, dict]:
    args, kwargs = jax.tree_util.tree_unflatten(tree, leaves)
    args, kwargs = list(args), dict(kwargs)
    for key, value in statics:
        if isinstance(key, int):
            args[key] = value
        else:
            kwargs[key] = value
    return args, kwargs


def _call_fn(fn: Callable[..., Any], params: dict, leaves: Sequence[Any]) -> Any:
    args, kwargs = _call_arguments(params["tree"], leaves, params["statics"])
    return fn(*args, **kwargs)


def _aval(x: Any) -> tuple[tuple[int, ...], Any]:
    """A leaf's (shape, dtype) as the op will see it, without computing a deferred tensor."""
    if isinstance(x, Variable):
        x = x._current()
    elif isinstance(x, Tensor):
        x = deferred.raw(x)
    elif not hasattr(x, "dtype"):  # a Python number: TF's dtype for it
        from tapejax._src.convert import to_array

        x = to_array(x, on_device=False)
    return tuple(x.shape), x.dtype


def _paths(tree: Any) -> list[tuple[str, int | str]]:
    """Each leaf's path in `(args, kwargs)` (`params['w']`, `args[1]`) and its argument's position or name, for
    error messages."""
    numbered = jax.tree_util.tree_unflatten(tree, list(range(tree.num_leaves)))
    paths = []
    for path, _ in jax.tree_util.tree_flatten_with_path(numbered)[0]:
        head, *rest = path[1:]
        top = head.idx if hasattr(head, "idx") else head.key
        text = f"args[{top}]" if isinstance(top, int) else str(top)
        paths.append((text + jax.tree_util.keystr(tuple(rest)), top))
    return paths
