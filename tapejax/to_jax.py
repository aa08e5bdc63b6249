"""JAX interop, TF to JAX: a TF-style function as a pure JAX function, and the state it reads and writes.

`to_jax(fn)` turns a function written against tapejax's TF API (ops, Variables read and assigned, GradientTape,
`tf.custom_gradient`, Keras layers and models, a Keras optimizer's `apply_gradients`) into a pure function
`(state, *arrays) -> (new_state, outputs)` that `jax.jit`, `jax.grad`, `jax.vmap`, `jax.lax.scan`, shardings and
`jax.export` take like any JAX function. `variables_of` gives a state, `assign_state` writes one back into the
Variables. Not part of TensorFlow's API (TF has no JAX): tapejax's own, at the top level (`tf.to_jax`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapejax._src import pure_state
from tapejax._src.pure_function import PureFunction
from tapejax._src.variable import Variable

CALLS_KEY = pure_state.CALLS_KEY


def to_jax(fn: Callable) -> Callable:
    """Turns a TF-style function into a pure JAX function `(state, *arrays) -> (new_state, outputs)`.

    `fn` may be a Python function, a `tf.function` (traced here as its Python function, AutoGraph as it says), a
    Keras model or layer. Each call runs `fn` as a tf.function trace does (AutoGraph-converted, Tensors wrapping
    the JAX values given), with its Variables *functionalised*: a read sees `state[key]`, an assignment changes
    `new_state[key]`, and no Variable is written. So the result composes with JAX's transformations; wrap it in
    `jax.jit` for speed (a call outside `jit` runs op by op).

    - `state`: a dict from a stable key per Variable (its Keras `path`, such as `dense/kernel`, else its name
      without `:0`; a repeated name gets `_1`, `_2`...) to its value, with the key `"<random calls>"` (the call
      number, a uint32 that `new_state` returns incremented) if `fn` draws random numbers. `variables_of(f)`
      gives it. A state with a missing or extra key raises ValueError, a value of the wrong shape ValueError,
      of the wrong dtype TypeError, each naming the key.
    - `arrays`: the arguments, any nest of arrays (JAX or numpy); other leaves are Python values, static as in
      tf.function (a new value is a new trace).
    - `outputs`: `fn`'s result, with its Tensors as JAX arrays, nests kept.

    The first call with a new signature (structure, shapes, dtypes, Python values) first traces `fn` abstractly
    (`jax.eval_shape`, no computation) to find its Variables. Only that first trace may create Variables (a
    Keras model built on first call, optimizer slots and `iterations`), as in tf.function: a function that
    creates Variables on every call raises ValueError. Python side effects thus run once more per signature.

    Args:
      fn: the TF-style function.

    Returns:
      The pure function. Gradients through `new_state` are JAX's (a step's updated weights differentiate w.r.t.
      the old ones, as a meta-learning loop wants); inside `fn` tapes follow TF's rules (state stops gradients).

    >>> import jax, jax.numpy as jnp
    >>> import tapejax as tf
    >>> w = tf.Variable(2.0, name="w")
    >>> def step(x):
    ...     with tf.GradientTape() as tape:
    ...         loss = (w * x - 1.0) ** 2
    ...     w.assign_sub(0.1 * tape.gradient(loss, w))
    ...     return loss
    >>> pure = jax.jit(tf.to_jax(step))
    >>> state = tf.variables_of(tf.to_jax(step), jnp.float32(1.0))
    >>> state
    {'w': Array(2., dtype=float32)}
    >>> new_state, loss = pure(state, jnp.float32(1.0))
    >>> print(loss, new_state["w"], w.numpy())  # w itself is unchanged
    1.0 1.8 2.0

    Differences from TensorFlow: not a TF API. Inside `fn`, run-time value checks that a tf.function raises
    when its step runs (`tf.case`'s predicates, out-of-range indices) are not made: JAX's semantics for such
    values apply. Op seeds are drawn once, by the first trace; all later traces use the same ones.
    """
    return PureFunction(fn)


def variables_of(fn_or_model: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The state of a `to_jax` function, a Keras model, a `tf.Module` or a list of Variables: key -> value.

    For a `to_jax` function: the values of the Variables it reads and writes, found by its traces so far; pass
    example arguments (arrays, or `jax.ShapeDtypeStruct`s) to trace it first for them (abstractly: this creates
    the Variables a first call creates, such as optimizer slots). For a model, Module or list: its variables.
    Keys as `to_jax` says. The values are the arrays the Variables hold, not copies: do not donate them to a
    `jax.jit` (`donate_argnums`) unless you copy them first.

    >>> import tapejax as tf
    >>> layer = tf.keras.layers.Dense(2, name="head")
    >>> _ = layer(tf.ones([1, 3]))
    >>> sorted(tf.variables_of(layer))
    ['head/bias', 'head/kernel']
    """
    if isinstance(fn_or_model, PureFunction):
        if args or kwargs:
            fn_or_model.trace(*args, **kwargs)
        elif not fn_or_model.traced():
            raise ValueError(f"{fn_or_model.__name__} has not been traced yet, so its Variables are not known "
                             "(some may not exist before its first call). Pass example arguments: "
                             "tapejax.variables_of(fn, *args), arrays or jax.ShapeDtypeStruct.")
        return fn_or_model.state()
    if args or kwargs:
        raise TypeError("variables_of takes example arguments only for a tapejax.to_jax function.")
    return {k: v._current() for k, v in _variables(fn_or_model).items()}


def assign_state(obj: Any, state: dict[str, Any]) -> None:
    """Writes a state (as `variables_of(obj)` gives it, or a `to_jax` function returns it) into the Variables.

    All keys must be there and no others, each value of its Variable's shape and dtype (ValueError/TypeError
    naming the key otherwise); nothing is written unless all are right. For a `to_jax` function the
    `"<random calls>"` entry sets the call number `variables_of` gives next.

    >>> import jax.numpy as jnp
    >>> import tapejax as tf
    >>> v = tf.Variable(1.0, name="v")
    >>> tf.assign_state([v], {"v": jnp.float32(3.0)})
    >>> v.numpy()
    np.float32(3.0)
    """
    if isinstance(obj, PureFunction):
        pure_state.assign(obj.variables(), state, "assign_state", obj.extra_keys())
        if obj.uses_calls:
            obj.calls = state[CALLS_KEY]
        return
    pure_state.assign(_variables(obj), state, "assign_state")


def _variables(obj: Any) -> dict[str, Variable]:
    if isinstance(obj, Variable):
        return pure_state.keyed([obj])
    if isinstance(obj, list | tuple) and all(isinstance(v, Variable) for v in obj):
        return pure_state.keyed(obj)
    variables = getattr(obj, "variables", None)
    if callable(variables):
        variables = variables()
    if variables is None or not all(isinstance(v, Variable) for v in variables):
        raise TypeError(f"variables_of/assign_state take a tapejax.to_jax function, a Keras model or layer, a "
                        f"tf.Module or a list of Variables; got {type(obj).__name__}.")
    return pure_state.keyed(variables)
