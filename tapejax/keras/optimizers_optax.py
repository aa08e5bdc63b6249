"""`tf.keras.optimizers.from_optax(tx)`: any optax GradientTransformation behind Keras's optimizer API.

Keras's own optimizers here apply optax rules variable by variable (optimizers.py). A user's chain may look at all
gradients at once (`clip_by_global_norm`), so this one applies the transformation to the list of all the variables
it was built for, in one op (one compiled update eagerly, part of the step inside `tf.function`), and keeps every
array of the optax state in a non-trainable Variable: it lives in compiled steps and checkpoints like any state.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import numpy as np
import optax

import tapejax as tf
from tapejax._src import checkpoint_pending, dispatch
from tapejax._src.registry import OpDef
from tapejax.keras.optimizers import Optimizer, _assign_all, _checked_pairs, _gradient_for

_NO_LEARNING_RATE = (
    "This optax transformation does not expose a learning rate. Wrap the part that takes it with "
    "`optax.inject_hyperparams`, e.g. `optax.inject_hyperparams(optax.adam)(learning_rate=1e-3)`: the optimizer's "
    "`learning_rate` then reads and sets that hyperparameter (what Keras's callbacks use)."
)


def from_optax(transformation: optax.GradientTransformation, name: str | None = None) -> OptaxOptimizer:
    """A Keras optimizer that updates Variables with an optax transformation (a tapejax extension).

    The optimizer has Keras's API: `apply_gradients(zip(grads, vars))`, `apply`, `minimize(loss, var_list,
    tape=...)`, `build`, `iterations`, `variables`, and `learning_rate` when the transformation exposes one
    through `optax.inject_hyperparams`. It works eagerly, inside `tf.function`, and in `Model.compile/fit`.

    >>> import optax
    >>> import tapejax as tf
    >>> w = tf.Variable([1.0, -2.0])
    >>> opt = tf.keras.optimizers.from_optax(optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1)))
    >>> with tf.GradientTape() as tape:
    ...     loss = tf.reduce_sum(w ** 2)
    >>> _ = opt.minimize(loss, [w], tape=tape)
    >>> w.numpy(), int(opt.iterations)
    (array([ 0.95527864, -1.9105573 ], dtype=float32), 1)

    The transformation sees the list of the variables the optimizer was built for (its first `apply_gradients`,
    or `build`), in that order, as its params; its state's arrays are non-trainable Variables (`variables`),
    saved by `tf.train.Checkpoint`. A variable whose gradient is None is left unchanged, and the transformation
    sees a zero gradient for it (a transformation updates every leaf of its tree at once).

    Differences from Keras: Keras has no optax optimizer. Keras's `weight_decay`, `clipnorm`, `clipvalue` and
    `global_clipnorm` arguments do not exist here: use optax's (`optax.add_decayed_weights`,
    `optax.clip_by_global_norm`, ...). Setting `learning_rate` changes an injected numeric hyperparameter; one
    given as a schedule is recomputed by optax on each step. A `.keras` archive does not store this optimizer.
    """
    return OptaxOptimizer(transformation, name)


class OptaxOptimizer(Optimizer):
    """The optimizer `from_optax` makes (see there)."""

    def __init__(self, transformation: optax.GradientTransformation, name: str | None = None):
        # Optimizer.__init__ builds a per-variable rule; this one has its own, so only Keras's attributes are set.
        self.transformation = transformation
        self.name = name or "optax"
        self.iterations = tf.Variable(0, dtype=tf.int64, trainable=False, name="iteration")
        self.weight_decay = self.clipnorm = self.clipvalue = self.global_clipnorm = None
        self._learning_rate = None
        self._slots: dict[int, Any] = {}
        self._slot_owners: list[tf.Variable] = []
        self._known: set[int] | None = None
        self._built: list[tf.Variable] | None = None
        self._state_variables: list[tf.Variable] = []
        self._layout: tuple[Any, tuple[Any, ...]] | None = None  # (state treedef, each leaf: a slot index or value)
        self._rate_slot: int | None = None  # the state Variable holding an injected learning_rate
        self._opdef = OpDef(f"keras.optimizers.{self.name}", self._update, differentiable=False, has_gradient=False,
                            op_type="OptaxUpdate", same_dtype=False)

    # -- state ---------------------------------------------------------------------------------------------

    def build(self, var_list: list[tf.Variable]) -> None:
        """Initialises the optax state for `var_list` (as a list, in this order); once per optimizer."""
        if self._built is not None:
            return
        var_list = list(var_list)
        with tf.init_scope():
            state = self.transformation.init([v.value().value for v in var_list])
            leaves, treedef = jax.tree_util.tree_flatten_with_path(state)
            kinds: list[Any] = []
            for path, leaf in leaves:
                if not isinstance(leaf, jax.Array | np.ndarray | np.generic):
                    kinds.append(("value", leaf))  # not an array: structure, kept as it is
                    continue
                keys = [getattr(k, "name", getattr(k, "key", None)) for k in path]
                if keys[-2:] == ["hyperparams", "learning_rate"] and self._rate_slot is None:
                    self._rate_slot = len(self._state_variables)
                kinds.append(len(self._state_variables))
                self._state_variables.append(tf.Variable(np.asarray(leaf), trainable=False,
                                                         name=f"{self.name}/state_{len(self._state_variables)}"))
        self._layout = (treedef, tuple(kinds))
        self._built = var_list
        self._known = {v._uid for v in var_list}
        self._apply_variables = var_list
        self._slot_owners = var_list
        checkpoint_pending.attached()  # a checkpoint restored before the first step may hold this state

    def _update(self, *arrays: Any) -> tuple[Any, ...]:
        """(gradients, values, state arrays) -> (new values, new state arrays): a pure JAX function."""
        n = len(self._built)
        grads, values, slots = list(arrays[:n]), list(arrays[n:2 * n]), arrays[2 * n:]
        treedef, kinds = self._layout
        state = jax.tree_util.tree_unflatten(treedef, [k[1] if type(k) is tuple else slots[k] for k in kinds])
        updates, new_state = self.transformation.update(grads, state, values)
        new_values = optax.apply_updates(values, updates)
        new_leaves = jax.tree_util.tree_leaves(new_state)
        new_slots = [leaf.astype(slots[k].dtype) for leaf, k in zip(new_leaves, kinds) if type(k) is not tuple]
        return (*[v.astype(old.dtype) for v, old in zip(new_values, values)], *new_slots)

    # -- Keras's API ---------------------------------------------------------------------------------------

    def _apply(self, grads: list[Any], variables: list[tf.Variable]) -> None:
        if self._built is None:
            self.build(variables)
        position = {v._uid: i for i, v in enumerate(self._built)}
        given: list[Any] = [None] * len(self._built)
        for g, v in zip(grads, variables):
            if v._uid not in position:
                raise ValueError(f"Unknown variable: {v!r}. This optimizer can only be called for the variables it "
                                 "was originally built with. When working with a new set of variables, you should "
                                 "recreate a new optimizer instance.")
            given[position[v._uid]] = g
        if all(g is None for g in given):
            raise ValueError("No gradients provided for any variable.")
        missing = [v.name for g, v in zip(grads, variables) if g is None]
        if missing:
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the loss. If using "
                          "`model.compile()`, did you forget to provide a `loss` argument?", stacklevel=3)
        reads = [v.read_value() for v in self._built]
        gradients = [tf.zeros_like(r) if g is None else _gradient_for(g, v, r)
                     for g, v, r in zip(given, self._built, reads)]
        state = [s.read_value() for s in self._state_variables]
        outs = dispatch.apply(self._opdef, (*gradients, *reads, *state), {})
        n = len(self._built)
        assignments = []
        for g, v, new in zip(given, self._built, outs[:n]):
            if g is None:
                continue  # Keras leaves a variable without a gradient as it is
            if v.constraint is not None:
                new = v.constraint(new)
            assignments.append((v, new))
        assignments += zip(self._state_variables, outs[n:])
        _assign_all(assignments, self.iterations)

    @property
    def learning_rate(self) -> Any:
        """The injected `learning_rate` hyperparameter (`optax.inject_hyperparams`), as of the last step."""
        if self._rate_slot is None:
            if self._built is None and self._exposes_learning_rate():
                raise AttributeError("The learning rate is part of the optax state, which is made when the "
                                     "optimizer is built: call `optimizer.build(variables)` first.")
            raise AttributeError(_NO_LEARNING_RATE)
        return self._state_variables[self._rate_slot]

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        variable = self.learning_rate
        variable.assign(tf.cast(value, variable.dtype))

    def _exposes_learning_rate(self) -> bool:
        state = jax.eval_shape(self.transformation.init, [jax.ShapeDtypeStruct((), np.float32)])
        return any([getattr(k, "name", getattr(k, "key", None)) for k in path][-2:] == ["hyperparams",
                                                                                         "learning_rate"]
                   for path, _ in jax.tree_util.tree_flatten_with_path(state)[0])

    def _learning_rate_variable(self) -> None:
        pass  # the rate, if any, is already state (Model.fit asks Keras's optimizers to make a Variable of it)

    @property
    def variables(self) -> list[tf.Variable]:
        return [self.iterations, *self._state_variables]

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        return [("_iterations", self.iterations), ("_trainable_variables", list(self._slot_owners)),
                ("_optax_state", list(self._state_variables))]

    def __repr__(self) -> str:
        return f"<OptaxOptimizer {self.name!r}: {self.transformation!r}>"
