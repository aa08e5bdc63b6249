"""tf.keras.optimizers: Keras's API, optax's update rules, the state in Variables.

Each optimizer is an optax transformation configured to compute Keras's documented formula; its state (moments,
step counts) lives in non-trainable tf.Variables, one set per trained variable, so it survives `tf.function` and
checkpoints like any variable. Hyperparameters that change with the step (a learning-rate schedule, Adam's
epsilon) are injected each step with `optax.inject_hyperparams`.
"""

from __future__ import annotations

import functools
import inspect
import types
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import jax
import jax.numpy as jnp
from jax._src import config as jax_config  # constant folding's switch: see _update_all
import numpy as np
import optax

import tapejax as tf
from tapejax.keras import schedules as schedules
from tapejax._src import caches, checking, checkpoint_pending, dispatch, one_off, tape as tape_lib
from tapejax._src.context import CONTEXT
from tapejax._src.indexed_slices import IndexedSlices
from tapejax._src.registry import OpDef
from tapejax.ops.math import _clip_by_norm, _clip_by_value, _maximum
from tapejax.keras.attributes import Declared
from tapejax.keras.optimizers_rows import Rows, evaluate as evaluate_rows
from tapejax._src.module import camel_to_snake
from tapejax.keras.schedules import LearningRateSchedule


class Optimizer:
    """The base of the optimizers: `apply_gradients(zip(grads, vars))`, `minimize(loss, var_list, tape=...)`.

    Everything a step computes is a tensor (the step count, a scheduled learning rate, injected
    hyperparameters), so the same code runs eagerly and inside `tf.function`, where its variables are compiled
    state. Keras's `weight_decay` (decoupled: `var -= var * weight_decay * lr` before the update), `clipnorm`,
    `clipvalue` and `global_clipnorm` apply to every optimizer.

    A learning rate may be a float, a `LearningRateSchedule` (called with `iterations` on every step) or a
    callable taking no arguments, called as Keras calls it: never at construction, once per step for the update
    and once more per variable that weight decay applies to (before the update), and on each read of
    `learning_rate`.
    """

    # The attributes `_rule` and `_hyperparameters` read: optimizers configured alike share one compiled update
    # (None: not shared).
    _RULE_ARGS: tuple[str, ...] | None = None
    # Whether `_hyperparameters` is a function of (t, learning rate) alone: then the compiled update computes it
    # from the step count (eagerly one call, not an op each); Nadam's updates a Variable and runs before.
    _PURE_HYPERPARAMETERS = True
    iterations = Declared("The number of updates applied so far: an int64 `tf.Variable` that `apply_gradients` "
                          "increments (a schedule's step).")

    def __init__(self, learning_rate: float | LearningRateSchedule | Callable = 0.001, name: str | None = None,
                 weight_decay: float | None = None, clipnorm: float | None = None, clipvalue: float | None = None,
                 global_clipnorm: float | None = None, **kwargs: Any):
        _check_kwargs(kwargs)
        if sum(c is not None for c in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
                             f"clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}")
        self._learning_rate = learning_rate
        self.name = name or camel_to_snake(type(self).__name__)
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.iterations = tf.Variable(0, dtype=tf.int64, trainable=False, name="iteration")
        # variable uid -> (state treedef, what each state leaf is, the slots): see _state
        self._slots: dict[int, tuple[Any, tuple[Any, ...], list[tf.Variable]]] = {}
        self._slot_owners: list[tf.Variable] = []  # the variables in `_slots`, in order (for checkpoints)
        self._known: set[int] | None = None  # the uids of the variables it was built for (Keras 3 checks them)
        # All variables' updates in one executable: eagerly one dispatch per step, not one per variable, and no
        # variable is assigned until every update is computed.
        self._transformation, self._step = _update_rule(self)

    # -- what each optimizer defines -------------------------------------------------------------------

    def _rule(self, **hyperparameters: Any) -> optax.GradientTransformation:
        raise NotImplementedError

    def _hyperparameters(self, t: Any, learning_rate: Any) -> dict[str, Any]:
        """The injected hyperparameters at step t (a float32 tensor, 1 for the first update)."""
        return {"learning_rate": learning_rate}

    # -- the API -------------------------------------------------------------------------------------------

    @property
    def learning_rate(self) -> float:
        return float(self._current_learning_rate())

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        """Sets a new learning rate (as Keras's callbacks do): a number updates the rate's Variable (made by
        `_learning_rate_variable`) if there is one, so that a compiled step sees it; else it replaces the rate."""
        if isinstance(self._learning_rate, tf.Variable) and not callable(value):
            self._learning_rate.assign(tf.cast(value, self._learning_rate.dtype))
        else:
            self._learning_rate = value

    def _learning_rate_variable(self) -> None:
        """Keeps a constant learning rate in a float32 Variable (Keras 3 always does), so that a step compiled
        before `learning_rate` is set again reads the new value."""
        if isinstance(self._learning_rate, int | float | np.integer | np.floating):
            with tf.init_scope():
                self._learning_rate = tf.Variable(float(self._learning_rate), dtype=tf.float32, trainable=False,
                                                  name="learning_rate")

    def _current_learning_rate(self) -> Any:
        """The learning rate now: a schedule at `iterations`, a callable called (Keras: with no arguments)."""
        lr = self._learning_rate
        if isinstance(lr, tf.Variable):
            return tf.convert_to_tensor(lr)
        if isinstance(lr, LearningRateSchedule):
            return lr(self.iterations)
        return lr() if callable(lr) else lr

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, tf.Variable]]) -> tf.Variable:
        """Updates each variable from its gradient; returns `iterations`.

        Pairs whose gradient is None are skipped with Keras's warning; if every gradient is None, Keras's
        ValueError. Each gradient is converted to a tensor and cast to its variable's dtype (as Keras does); its
        shape must be the variable's. Everything is checked and computed before anything is assigned, so a step
        that raises leaves the variables, the optimizer's slots and `iterations` as they were. A variable's
        `constraint` is applied to its new value, after the update (Keras), and the first call (or `build`)
        fixes the variables this optimizer may update (Keras 3).

        Raises:
          ValueError: no pairs, pairs that are not pairs, every gradient None, a variable this optimizer was not
            built for (Keras's messages).
          AttributeError: a "variable" that is not a `tf.Variable` (the type Keras fails with).
          GradientShapeError: a gradient whose shape is not its variable's; it is both
            `tf.errors.InvalidArgumentError` and ValueError, the two types Keras raises, by optimizer.

        Differences from TensorFlow: Keras broadcasts a gradient of a broadcastable shape (a (1,) gradient onto
        a (2,) variable in Adam, RMSprop, Adagrad; a (2,) one onto a (1, 2) variable in all) silently; tapejax
        raises for every optimizer, before assigning. Keras assigns variable by variable, so a failure midway (a bad shape, a
        constraint that raises) leaves earlier variables updated; tapejax's step is atomic.

        >>> import tapejax as tf
        >>> w = tf.Variable([1.0, 2.0])
        >>> opt = tf.keras.optimizers.SGD(0.1)
        >>> try:
        ...     opt.apply_gradients([(tf.constant([1.0]), w)])
        ... except tf.errors.InvalidArgumentError as e:
        ...     print(str(e).split(" (")[0])
        Cannot update variable with shape [2] using a Tensor with shape [1], shapes must be equal.
        >>> w.numpy(), int(opt.iterations)
        (array([1., 2.], dtype=float32), 0)
        """
        grads, variables = _checked_pairs(grads_and_vars)
        if CONTEXT.replica is not None:  # inside a tf.distribute strategy.run: the replicas' gradients summed
            grads = CONTEXT.replica.merged_gradients(grads, variables)
        self._apply(grads, variables)
        return self.iterations

    def _apply(self, grads: list[Any], variables: list[tf.Variable]) -> None:
        if self._known is None:
            self.build(variables)
        for v in variables:
            if v._uid not in self._known:
                raise ValueError(f"Unknown variable: {v!r}. This optimizer can only be called for the variables it "
                                 "was originally built with. When working with a new set of variables, you should "
                                 "recreate a new optimizer instance.")
        missing = [v.name for g, v in zip(grads, variables) if g is None]
        pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
        if not pairs:
            raise ValueError("No gradients provided for any variable.")
        if missing:
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the loss. If using "
                          "`model.compile()`, did you forget to provide a `loss` argument?", stacklevel=2)
        trace = CONTEXT.trace
        if trace is not None and trace.captures:
            self._apply_recorded(pairs)
            return
        values = {v._uid: v.value().value for _, v in pairs}
        grads = self._clip([_gradient_for(g, v, values[v._uid], rows=True) for g, v in pairs])
        decays = None
        if self.weight_decay:  # Keras reads the learning rate once per decayed variable, then for the update
            decays = [_as_float32(self.weight_decay * self._current_learning_rate()) for _ in pairs]
        given = self._given_hyperparameters(self._current_learning_rate())
        hyperparameters = {k: _as_float32(v) for k, v in given.items()}
        states = self._updated(pairs, [_array(g) for g in grads], values, hyperparameters, decays)
        for _, v in pairs:  # Keras: each variable's constraint, on its updated value
            if v.constraint is not None:
                values[v._uid] = v._new_value(v.constraint(tf.convert_to_tensor(values[v._uid])))
        assignments = []
        for _, v in {v._uid: (None, v) for _, v in pairs}.values():
            assignments.append((v, values[v._uid]))
            assignments += zip(self._state(v)[2], states[v._uid])
        _assign_all(assignments, self.iterations)

    def _apply_recorded(self, pairs: list[tuple[Any, tf.Variable]]) -> None:
        """`_apply` inside a loop body or branch that tf.function captures (capture.py): such a body replays only
        the ops it recorded, so the update, which computes on arrays, runs as one recorded op of every input it
        reads (gradients, variables, slots, `iterations`, hyperparameters), and its results are assigned as
        tensors."""
        owners = {v._uid: v for _, v in pairs}
        uids = list(owners)
        reads = {uid: owners[uid].read_value() for uid in uids}
        grads = [_gradient_for(g, v, reads[v._uid], rows=True) for g, v in pairs]
        rows = any(isinstance(g, IndexedSlices) for g in grads)  # clipped inside the update, row by row
        grads = grads if rows else self._clip(grads)
        sizes = [int(g.shape[0]) if isinstance(g, IndexedSlices) else None for g in grads]
        rate = self._current_learning_rate()
        decays = [tf.cast(self.weight_decay * rate, tf.float32) for _ in pairs] if self.weight_decay else []
        hyperparameters = {k: tf.cast(v, tf.float32) for k, v in self._given_hyperparameters(rate).items()}
        layouts = {uid: self._state(owners[uid]) for uid in uids}
        slots = [s for uid in uids for s in layouts[uid][2]]
        flat_grads = [t for g in grads for t in ((g.values, g.indices) if isinstance(g, IndexedSlices) else (g,))]
        inputs = [*flat_grads, *reads.values(), *[s.read_value() for s in slots], self.iterations.read_value(),
                  *hyperparameters.values(), *decays]

        def update(*arrays: Any) -> tuple[Any, ...]:
            it = iter(arrays)
            g = [next(it) if size is None else Rows(next(it), next(it), size) for size in sizes]
            if rows:
                g = self._clip_arrays(g)
            values = {uid: next(it) for uid in uids}
            slot_values = {uid: [next(it) for _ in layouts[uid][2]] for uid in uids}
            count = next(it).astype(np.int32)
            given = {k: next(it) for k in hyperparameters}
            states = self._updated(pairs, g, values, given, [next(it) for _ in decays] or None, slot_values, count)
            return (*[values[uid] for uid in uids],
                    *[x for uid in uids for x in states[uid]])

        outs = dispatch.apply(OpDef("keras.optimizers.apply", update, differentiable=False, has_gradient=False,
                                    op_type="ResourceApplyKeras", same_dtype=False, jit=False), tuple(inputs), {})
        new = dict(zip(uids, outs))
        for uid, v in owners.items():  # Keras: each variable's constraint, on its updated value
            if v.constraint is not None:
                new[uid] = v.constraint(new[uid])
        _assign_all([(owners[uid], new[uid]) for uid in uids] + list(zip(slots, outs[len(uids):])), self.iterations)

    def _given_hyperparameters(self, rate: Any) -> dict[str, Any]:
        """What the compiled update is given: the learning rate, from which and the step count it computes a pure
        rule's other hyperparameters itself (`_update_all`); all of them for a rule whose `_hyperparameters` is
        not pure (Nadam)."""
        if self._PURE_HYPERPARAMETERS:
            return {"learning_rate": rate}
        return self._hyperparameters(tf.cast(self.iterations, tf.float32) + 1.0, rate)

    def build(self, var_list: list[tf.Variable]) -> None:
        """Creates the state of each variable now (Keras 3), rather than on the first `apply_gradients`: a
        `tf.function` step then creates no variables on its first call, and is traced once. The optimizer then
        updates these variables only (Keras 3's ValueError for any other)."""
        self._known = set() if self._known is None else self._known
        if getattr(self, "_apply_variables", None) is None:
            self._apply_variables = list(var_list)  # what `apply(grads)` pairs gradients with
        for variable in var_list:
            self._state(variable)
            self._known.add(variable._uid)

    def apply(self, grads: list[Any], trainable_variables: list[tf.Variable] | None = None) -> None:
        """Keras 3's form of `apply_gradients`: `grads` paired with `trainable_variables` by position, or, when
        they are left out, with the variables the optimizer was built for (by `build` or an earlier `apply`).

        >>> import tapejax as tf
        >>> v = tf.Variable(1.0)
        >>> optimizer = tf.keras.optimizers.SGD(0.1)
        >>> optimizer.apply([tf.constant(1.0)], [v])
        >>> optimizer.apply([tf.constant(1.0)])
        >>> round(float(v.numpy()), 6)
        0.8
        """
        if trainable_variables is None:
            trainable_variables = getattr(self, "_apply_variables", None)
            if trainable_variables is None:
                raise ValueError("When passing `grads` without `variables`, the optimizer must already be built "
                                 "on a list of variables. Call `optimizer.build(trainable_variables)` first.")
        trainable_variables = list(trainable_variables)
        self.apply_gradients(zip(grads, trainable_variables))
        if getattr(self, "_apply_variables", None) is None:
            self._apply_variables = trainable_variables

    def minimize(self, loss: Any, var_list: list[tf.Variable], tape: tf.GradientTape | None = None) -> tf.Variable:
        """Computes the gradients of `loss` on `tape` and applies them."""
        if tape is None:
            raise ValueError("`tape` is required when a `Tensor` loss is passed: compute the loss inside a "
                             "tf.GradientTape and pass it as `tape=`.")
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    # -- the state ---------------------------------------------------------------------------------------

    def _clip(self, grads: list[Any]) -> list[Any]:
        """Keras's `clipnorm`, `clipvalue` or `global_clipnorm` of all the gradients: one op, so that eagerly it is
        one executable for the whole list (not one compile per gradient shape, as op-by-op clipping costs)."""
        if any(isinstance(g, IndexedSlices) for g in grads):
            arrays = self._clip_arrays([_array(g) for g in grads])
            return [_slices(a, g) if isinstance(a, Rows) else tf.convert_to_tensor(a) for a, g in zip(arrays, grads)]
        for kind, limit in (("norm", self.clipnorm), ("value", self.clipvalue), ("global", self.global_clipnorm)):
            if limit is not None:
                # float64: each gradient converts the limit to its own dtype, as Keras's Python float is
                return list(dispatch.apply(_CLIPS[kind], (*grads, np.float64(limit)), {}))
        return grads

    def _clip_arrays(self, grads: list[Any]) -> list[Any]:
        """`_clip` of arrays and `Rows`: Keras clips an IndexedSlices row by row (TF's clip ops on its values)."""
        for kind, limit in (("norm", self.clipnorm), ("value", self.clipvalue), ("global", self.global_clipnorm)):
            if limit is not None:
                return list(_clip_all(kind, *grads, np.float64(limit)))
        return grads

    def _updated(self, pairs: list[tuple[Any, tf.Variable]], grads: list[Any], values: dict[int, Any],
                 hyperparameters: dict[str, Any], decays: list[Any] | None,
                 slot_values: dict[int, list[Any]] | None = None, count: Any = None) -> dict[int, list[Any]]:
        """Computes every update, assigning nothing: `values` (uid -> array) gets the new values; returns the new
        slots of each variable (uid -> arrays, in `_state`'s order).

        A variable listed more than once is decayed once per listing, then updated once per listing, in order,
        as Keras does: the updates run in rounds, each taking at most one listing of a variable."""
        if count is None:  # Keras: every variable's bias correction uses it
            count = self.iterations.value().value
        slots = {v._uid: slot_values[v._uid] if slot_values is not None
                 else [s.value().value for s in self._state(v)[2]] for _, v in pairs}
        rounds: list[list[int]] = []
        listed: dict[int, list[int]] = {}
        for k, (_, v) in enumerate(pairs):
            listed.setdefault(v._uid, []).append(k)
            r = len(listed[v._uid]) - 1
            if r == len(rounds):
                rounds.append([])
            rounds[r].append(k)
        for r, ks in enumerate(rounds):
            uids = [pairs[k][1]._uid for k in ks]
            round_decays = None if decays is None else [
                tuple(decays[j] for j in listed[uid]) if r == 0 else () for uid in uids]
            updated = self._step([grads[k] for k in ks], [slots[uid] for uid in uids], [values[uid] for uid in uids],
                                 count, hyperparameters, round_decays)
            for uid, (new_value, new_slots) in zip(uids, updated):
                values[uid], slots[uid] = new_value, new_slots
        return slots

    def _state(self, variable: tf.Variable) -> tuple[Any, tuple[Any, ...], list[tf.Variable]]:
        """The optax state of `variable`: its treedef, what each leaf is, and the Variables holding the slots.

        Only the per-variable accumulators (Adam's m and v, momentum, ...) are Variables. Step counts are the
        optimizer's `iterations` (Keras's bias correction uses it for every variable) and the hyperparameters
        are injected on each update, so neither is state of its own: a compiled step then takes two arrays per
        Adam variable, as optax's own state does, not six.
        """
        entry = self._slots.get(variable._uid)
        if entry is None:
            with tf.init_scope():  # slots made on a first traced step get concrete initial values
                state = _initial_state(self._transformation.init, variable.value().value)
                paths_leaves, treedef = jax.tree_util.tree_flatten_with_path(state)
                base = variable.name.split(":")[0]
                kinds: list[Any] = []
                slots = []
                for path, leaf in paths_leaves:
                    kinds.append(_kind(path, leaf))
                    if kinds[-1] is _SLOT:
                        slots.append(tf.Variable(np.asarray(leaf), trainable=False,
                                                 name=f"{self.name}/{base}/slot_{len(slots)}"))
            entry = self._slots[variable._uid] = (treedef, tuple(kinds), slots)
            self._slot_owners.append(variable)
            checkpoint_pending.attached()  # a checkpoint restored before this step may hold the new slots
        return entry

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        """The state a tf.train.Checkpoint saves, named as Keras 3 names it (tapejax/keras/checkpointing.py)."""
        from tapejax.keras import checkpointing

        return checkpointing.optimizer_children(self)

    @property
    def variables(self) -> list[tf.Variable]:
        rate = [self._learning_rate] if isinstance(self._learning_rate, tf.Variable) else []
        return [self.iterations, *rate] + [s for _, _, slots in self._slots.values() for s in slots]


_BY_NAME = {"sgd": "SGD", "adam": "Adam", "rmsprop": "RMSprop", "adagrad": "Adagrad", "adamw": "AdamW",
            "nadam": "Nadam", "adamax": "Adamax", "lion": "Lion", "adadelta": "Adadelta"}


def get(identifier: Any) -> Optimizer:
    """An optimizer from its name ('adam', 'sgd', 'rmsprop', ...: a new one with Keras's defaults), or the
    Optimizer given."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        name = _BY_NAME.get(identifier.lower())
        if name is None or name not in globals():
            raise ValueError(f"Could not interpret optimizer identifier: {identifier}")
        return globals()[name]()
    if isinstance(identifier, dict) and identifier.get("class_name", "").lower() in _BY_NAME:
        return globals()[_BY_NAME[identifier["class_name"].lower()]](**identifier.get("config", {}))
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")


class GradientShapeError(tf.errors.InvalidArgumentError, ValueError):
    """A gradient whose shape is not its variable's, raised by `apply_gradients` before anything is assigned.

    Keras raises `tf.errors.InvalidArgumentError` where SGD assigns the gradient, and ValueError where an
    optimizer assigns a slot of the broadcast shape (momentum, RMSprop): this error is both, so that an `except`
    written for either catches it.
    """


def _checked_pairs(grads_and_vars: Iterable[Any]) -> tuple[list[Any], list[tf.Variable]]:
    """The gradients and the variables of `apply_gradients`'s pairs, with Keras's exception types for what is not
    a list of (gradient, tf.Variable) pairs and messages that say what was wrong."""
    pairs = list(grads_and_vars)
    if not pairs:
        raise ValueError("apply_gradients() got no (gradient, variable) pairs: pass at least one, e.g. "
                         "zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables).")
    grads, variables = [], []
    for k, pair in enumerate(pairs):
        try:
            gradient, variable = pair
        except (TypeError, ValueError) as e:
            raise type(e)(f"apply_gradients() takes (gradient, variable) pairs; item {k} is not a pair ({e}): "
                          f"{pair!r}") from None
        if not isinstance(variable, tf.Variable):
            raise AttributeError(f"apply_gradients() updates tf.Variables, but the variable of pair {k} is a "
                                 f"{type(variable).__name__}: {variable!r}. Pass the variables themselves (e.g. "
                                 "model.trainable_variables), not their values.")
        grads.append(gradient)
        variables.append(variable)
    return grads, variables


def _gradient_for(gradient: Any, variable: tf.Variable, value: Any, rows: bool = False) -> Any:
    """`gradient` as a tensor of `variable`'s dtype (Keras casts it), checked to have the variable's shape. With
    `rows`, an IndexedSlices stays one (its values cast), for a rule that reads it row by row (optimizers_rows.py);
    without, it is made dense."""
    if rows and isinstance(gradient, IndexedSlices):
        values = gradient.values
        shape = gradient.shape
        if shape.rank is None or tuple(shape) != tuple(value.shape):
            raise GradientShapeError(
                None, None, f"Cannot update variable with shape {list(value.shape)} using an IndexedSlices of "
                f"dense_shape {shape.as_list() if shape.rank is not None else None} (the gradient given for "
                f"{variable.name!r} in apply_gradients).")
        _check_rows(gradient.indices, shape[0], variable)
        values = values if values.dtype == variable.dtype else tf.cast(values, variable.dtype)
        return IndexedSlices(values, gradient.indices, gradient.dense_shape)
    gradient = tf.convert_to_tensor(gradient)
    if gradient.dtype != variable.dtype:
        gradient = tf.cast(gradient, variable.dtype)
    if tuple(gradient.shape) != tuple(value.shape):
        shapes = [f"[{','.join(map(str, shape))}]" for shape in (value.shape, gradient.shape)]
        raise GradientShapeError(
            None, None, f"Cannot update variable with shape {shapes[0]} using a Tensor with shape {shapes[1]}, "
            f"shapes must be equal. (The gradient given for {variable.name!r} in apply_gradients: a gradient "
            "has its variable's shape; one of another shape usually comes from pairing the wrong lists.)")
    return gradient


def _check_rows(indices: Any, size: int, variable: tf.Variable) -> None:
    """TF's scatter kernels refuse a row outside the variable (a traced index is not checked)."""
    ids = tf.get_static_value(indices)
    if ids is None:
        return
    outside = np.flatnonzero((np.asarray(ids).reshape(-1) < 0) | (np.asarray(ids).reshape(-1) >= size))
    if outside.size:
        k = int(outside[0])
        raise tf.errors.InvalidArgumentError(
            None, None, f"indices[{k}] = {np.asarray(ids).reshape(-1)[k]} is not in [0, {size}) (an IndexedSlices "
            f"gradient for {variable.name!r} in apply_gradients)")


def _array(gradient: Any) -> Any:
    """A gradient tensor's array, or an IndexedSlices as `Rows`."""
    if isinstance(gradient, IndexedSlices):
        return Rows(gradient.values.value, jnp.reshape(gradient.indices.value, (-1,)), int(gradient.shape[0]))
    return gradient.value


def _slices(rows: Rows, like: IndexedSlices) -> IndexedSlices:
    return IndexedSlices(rows.values, like.indices, like.dense_shape)


def _assign_all(assignments: list[tuple[tf.Variable, Any]], iterations: tf.Variable) -> None:
    """Assigns each (variable, value), then increments `iterations`: all or none. Every value is checked first
    (apply_gradients), so nothing here is expected to fail; if something does (an interrupt), the variables
    assigned so far get their old values back. Inside tf.function the compiled step is all or none already."""
    old = [(v, getattr(v, "_value", None)) for v, _ in assignments + [(iterations, None)]]
    try:
        for variable, value in assignments:
            if isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer):
                variable._assign_computed(value)  # the eager update's arrays: its dtype and shape by construction
            else:
                variable.assign(value, read_value=False)
        iterations.assign_add(1, read_value=False)
    except BaseException:
        for variable, value in old:
            if value is not None and not isinstance(value, jax.core.Tracer):
                variable.assign(value, read_value=False)
        raise


_RULES = caches.Memo("optimizer update rules (keras/optimizers.py)", 64)


def _update_rule(optimizer: Optimizer) -> tuple[optax.GradientTransformation, Callable[..., Any]]:
    """The optax transformation of `optimizer`'s rule, hyperparameters injected, and the compiled update of all
    its variables. Optimizers whose rule is configured alike (`_RULE_ARGS`) share them, so a new optimizer (one
    per model, per thread, per trial) compiles nothing new."""
    names = optimizer._RULE_ARGS
    key = None if names is None else (type(optimizer), tuple(getattr(optimizer, n) for n in names))
    entry = None if key is None else _RULES.get(key)
    if entry is None:
        # The rule of a shared entry reads its configuration, not the optimizer (which the cache must not keep).
        config = optimizer if key is None else types.SimpleNamespace(**{n: getattr(optimizer, n) for n in names})
        rule = functools.partial(type(optimizer)._rule, config)
        placeholders = {n: np.zeros((), np.float32) for n in inspect.signature(rule).parameters}  # injected each step
        transformation = optax.inject_hyperparams(rule)(**placeholders)
        hyperparameters = functools.partial(type(optimizer)._hyperparameters, config) \
            if optimizer._PURE_HYPERPARAMETERS else None
        entry = (transformation, jax.jit(functools.partial(_update_all, transformation, hyperparameters)))
        if key is not None:
            _RULES[key] = entry
    return entry


def _update_all(transformation: optax.GradientTransformation, rule_hyperparameters: Callable[..., Any] | None,
                gradients: list[Any], slots: list[list[Any]], values: list[Any], count: Any,
                hyperparameters: dict[str, Any], decays: list[tuple[Any, ...]] | None) -> list[tuple[Any, list[Any]]]:
    # Traced inside a tf.function, which folds constants (concrete_function.py): the optax state's zeros would each
    # be computed eagerly, one XLA compile per slot shape, instead of being part of this program.
    with jax_config.eager_constant_folding(False):
        if rule_hyperparameters is not None:  # a pure rule's hyperparameters at step t = count + 1, computed here
            with tape_lib.recording_only([]):  # tapejax ops on this trace's values: no tape may keep them
                given = rule_hyperparameters(count.astype(np.float32) + 1.0, hyperparameters["learning_rate"])
            hyperparameters = {k: (v.value if isinstance(v, tf.Tensor) else jnp.asarray(v)).astype(np.float32)
                               for k, v in given.items()}
        decays = decays if decays is not None else [()] * len(gradients)
        return [_update(transformation, g, s, v, count, d, hyperparameters)
                for g, s, v, d in zip(gradients, slots, values, decays)]


def _update(transformation: optax.GradientTransformation, gradient: Any, slots: list[Any], value: Any, count: Any,
            decays: tuple[Any, ...], hyperparameters: dict[str, Any]) -> tuple[Any, list[Any]]:
    """One variable's new value and slots. Its optax state is rebuilt here, at trace time, from the slots: the step
    counts are `count` and the hyperparameters are injected, so the compiled update takes and returns only the
    slots (not optax's whole state: each argument and result of an executable costs time on every call)."""
    paths_leaves, treedef = jax.tree_util.tree_flatten_with_path(jax.eval_shape(transformation.init, value))
    given = iter(slots)
    leaves = [next(given) if kind is _SLOT else count.astype(leaf.dtype) if kind is _COUNT
              else jnp.zeros(leaf.shape, leaf.dtype) for kind, leaf in ((_kind(p, x), x) for p, x in paths_leaves)]
    state = jax.tree_util.tree_unflatten(treedef, leaves)
    state.hyperparams.update({k: v.astype(state.hyperparams[k].dtype) for k, v in hyperparameters.items()})
    for decay in decays:  # Keras's decoupled weight decay, before the update
        value = value - value * decay.astype(value.dtype)
    if isinstance(gradient, Rows):  # an IndexedSlices: the rule as Keras computes it on one
        new_value, new_state = evaluate_rows(functools.partial(_rule_step, transformation), [gradient, state, value])
    else:
        new_value, new_state = _rule_step(transformation, gradient, state, value)
    new_leaves = jax.tree_util.tree_flatten_with_path(new_state)[0]
    # in their variables' dtypes, which `_assign_all` relies on
    return new_value.astype(value.dtype), [x.astype(old.dtype) for old, (p, x) in
                                           zip(slots, (px for px in new_leaves if _kind(*px) is _SLOT))]


def _rule_step(transformation: optax.GradientTransformation, gradient: Any, state: Any, value: Any) -> Any:
    updates, new_state = transformation.update(gradient, state, value)
    return optax.apply_updates(value, updates), new_state


def _clip_all(kind: str, *args: Any) -> tuple[Any, ...]:
    """The gradients `args[:-1]` clipped by `args[-1]` with the formulas of tf.clip_by_norm, tf.clip_by_value and
    Keras's clip_by_global_norm (`g * clip / max(global norm, clip)`), the ops' own functions where there are.

    A gradient given as `Rows` (an IndexedSlices) is clipped as TF's ops clip one: by its values, repeated rows
    counted once each; Keras's global clipping multiplies it by the scale as a dense tensor."""
    *grads, limit = args
    values = [g.values if isinstance(g, Rows) else g for g in grads]
    if kind == "norm":
        clipped = [_clip_by_norm(v, limit) for v in values]
    elif kind == "value":
        clipped = [_clip_by_value(v, (-limit).astype(v.dtype), limit.astype(v.dtype)) for v in values]
    else:
        total = 0
        for v in values:
            total = total + jnp.sum(jnp.square(v))
        norm = jnp.sqrt(total)
        limit = limit.astype(norm.dtype)
        scale = limit / _maximum(norm, limit)
        return tuple((g.dense() if isinstance(g, Rows) else g) * scale.astype(v.dtype) for g, v in zip(grads, values))
    return tuple(g._replace(values=c) if isinstance(g, Rows) else c for g, c in zip(grads, clipped))


# The global norm adds the gradients' squared norms: one dtype for all, as TF's AddV2 requires (its error if not).
_CLIPS = {kind: OpDef(f"keras.optimizers.clip_{kind}", functools.partial(_clip_all, kind), differentiable=False,
                      has_gradient=False, op_type=op_type, same_dtype=kind == "global")
          for kind, op_type in (("norm", "ClipByNorm"), ("value", "ClipByValue"), ("global", "AddV2"))}

_SLOT, _COUNT = object(), object()  # kinds of optax state leaves (Optimizer._state)


def _kind(path: Any, leaf: Any) -> Any:
    """What an optax state leaf is: a slot (a Variable of its own), the step count (`iterations`), or a
    hyperparameter (its placeholder: replaced by the injected value on every update)."""
    if any(getattr(k, "name", None) == "hyperparams" for k in path):
        return np.zeros(np.shape(leaf), leaf.dtype)
    return _COUNT if np.issubdtype(leaf.dtype, np.integer) else _SLOT

_KERAS_UNSUPPORTED = ("use_ema", "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor",
                      "gradient_accumulation_steps")


def _check_kwargs(kwargs: dict[str, Any]) -> None:
    """Keras's optimizer arguments tapejax does not implement fail loudly; unknown ones as in Keras."""
    unsupported = [k for k in kwargs if k in _KERAS_UNSUPPORTED and kwargs[k] not in (None, False)]
    if unsupported:
        raise NotImplementedError(f"tapejax's Keras optimizers do not implement {unsupported} yet.")
    unknown = [k for k in kwargs if k not in _KERAS_UNSUPPORTED]
    if unknown:
        raise ValueError(f"Argument(s) not recognized: { {k: kwargs[k] for k in unknown} }")


def _as_float32(value: Any) -> Any:
    """A hyperparameter as a float32 jax value (a tracer inside tf.function)."""
    return tf.cast(value, tf.float32).value if isinstance(value, tf.Tensor) else np.asarray(value, np.float32)


class SGD(Optimizer):
    """Keras's SGD: `var -= lr * g`; with momentum `m = momentum * m - lr * g; var += m` (Nesterov:
    `var += momentum * m - lr * g`), with `lr` the learning rate of each step."""

    def __init__(self, learning_rate: Any = 0.01, momentum: float = 0.0, nesterov: bool = False, **kwargs: Any):
        self.momentum, self.nesterov = momentum, nesterov
        super().__init__(learning_rate, **kwargs)

    _RULE_ARGS = ("momentum", "nesterov")

    def _rule(self, learning_rate: Any) -> optax.GradientTransformation:
        # Keras accumulates learning-rate-scaled gradients (`m = momentum * m - lr * g`): the rate of each step
        # scales that step's gradient only, so the scaling comes before optax's trace (optax's `sgd` scales the
        # trace, the same only while the rate is constant).
        scale = optax.scale_by_learning_rate(learning_rate)
        if not self.momentum:
            return scale
        return optax.chain(scale, optax.trace(decay=self.momentum, nesterov=self.nesterov))


class Adam(Optimizer):
    """Keras's Adam: `var -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + epsilon)`.

    optax's adam adds epsilon after the bias correction, `m_hat / (sqrt(v_hat) + eps)`; with the injected
    `eps = epsilon / sqrt(1 - b2^t)` the two are the same formula.

    Differences from TensorFlow: Keras rounds `beta_2` to float32 inside `sqrt(1 - b2^t)` (it casts the Python
    float through a float32 tensor, even for float64 variables), which moves its steps by ~6e-6 of their size
    for the default 0.999; tapejax uses `beta_2` as given, closer to the exact formula.
    """

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, amsgrad: bool = False, **kwargs: Any):
        if amsgrad:
            raise NotImplementedError("tapejax's Adam does not implement amsgrad yet.")
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        super().__init__(learning_rate, **kwargs)

    _RULE_ARGS = ("beta_1", "beta_2", "epsilon")

    def _rule(self, learning_rate: Any, eps: Any) -> optax.GradientTransformation:
        return optax.adam(learning_rate, b1=self.beta_1, b2=self.beta_2, eps=eps)

    def _hyperparameters(self, t: Any, learning_rate: Any) -> dict[str, Any]:
        return {"learning_rate": learning_rate, "eps": self.epsilon / tf.sqrt(1.0 - self.beta_2 ** t)}


class RMSprop(Optimizer):
    """Keras's RMSprop: `v = rho * v + (1 - rho) * g^2`, `var -= lr * g / sqrt(v + epsilon)`.

    `centered` divides by `sqrt(v - a^2 + epsilon)` instead, with `a = rho * a + (1 - rho) * g`; `momentum > 0`
    accumulates the increments, `m = momentum * m + lr * g / sqrt(...)`, `var -= m`. This is optax's `rmsprop`
    with `eps_in_sqrt=True` (epsilon under the root, as in Keras), `centered`, and `momentum` as a `trace` of
    the learning-rate-scaled increments, so no hyperparameter needs transforming.

    >>> var = tf.Variable(10.0)
    >>> _ = tf.keras.optimizers.RMSprop(learning_rate=0.1).apply_gradients([(tf.constant(10.0), var)])
    >>> round(float(var), 5)  # 10 - 0.1 * 10 / sqrt(0.1 * 100 + 1e-7)
    9.68377
    """

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.9, momentum: float = 0.0, epsilon: float = 1e-7,
                 centered: bool = False, **kwargs: Any):
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered
        super().__init__(learning_rate, **kwargs)

    _RULE_ARGS = ("rho", "epsilon", "centered", "momentum")

    def _rule(self, learning_rate: Any) -> optax.GradientTransformation:
        return optax.rmsprop(learning_rate, decay=self.rho, eps=self.epsilon, eps_in_sqrt=True,
                             centered=self.centered, momentum=self.momentum if self.momentum > 0 else None)


class Adagrad(Optimizer):
    """Keras's Adagrad: `acc += g^2`, `var -= lr * g / sqrt(acc + epsilon)`, `acc` starting at
    `initial_accumulator_value`. optax's `adagrad` is the same formula (epsilon under the root; where `acc` is 0
    the gradient is 0 too, and both give a zero update).

    >>> var = tf.Variable(1.0)
    >>> _ = tf.keras.optimizers.Adagrad(learning_rate=0.1).apply_gradients([(tf.constant(0.3), var)])
    >>> round(float(var), 5)  # 1 - 0.1 * 0.3 / sqrt(0.1 + 0.09 + 1e-7)
    0.93118
    """

    def __init__(self, learning_rate: Any = 0.001, initial_accumulator_value: float = 0.1, epsilon: float = 1e-7,
                 **kwargs: Any):
        self.initial_accumulator_value, self.epsilon = initial_accumulator_value, epsilon
        super().__init__(learning_rate, **kwargs)

    _RULE_ARGS = ("initial_accumulator_value", "epsilon")

    def _rule(self, learning_rate: Any) -> optax.GradientTransformation:
        return optax.adagrad(learning_rate, initial_accumulator_value=self.initial_accumulator_value,
                             eps=self.epsilon)


class AdamW(Adam):
    """Keras's AdamW: decoupled weight decay `var -= lr * weight_decay * var`, then Adam's step (see `Adam`):
    the base class's `weight_decay`, on by default.

    Differences from TensorFlow: those of `Adam` (Keras's float32 `beta_2` in the bias correction).

    >>> var = tf.Variable(2.0)
    >>> _ = tf.keras.optimizers.AdamW(learning_rate=0.1, weight_decay=0.5).apply_gradients([(tf.constant(1.0), var)])
    >>> round(float(var), 5)  # 2 - 0.1 * 0.5 * 2 - 0.1 * 1 / (1 + 1e-7 / sqrt(0.001))
    1.8
    """

    def __init__(self, learning_rate: Any = 0.001, weight_decay: float = 0.004, beta_1: float = 0.9,
                 beta_2: float = 0.999, epsilon: float = 1e-7, amsgrad: bool = False, **kwargs: Any):
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, amsgrad=amsgrad,
                         weight_decay=weight_decay, **kwargs)


def _initial_state(init: Callable[[Any], Any], value: Any) -> Any:
    """optax's `init(value)`, on the host when it only fills and copies (zeros for each slot): run by JAX, each
    variable shape cost an XLA compile (a U-Net's 24 shapes: 0.8 s before its first step)."""
    state = one_off.host_values(init, value)
    if state is None:
        return init(value)
    if checking.FLAG.on:
        checking.compare("optimizer slots made on the host (optimizers.py)", jax.tree_util.tree_leaves(state),
                         jax.tree_util.tree_leaves(init(value)), "init")
    return state


from tapejax.keras import optimizers_legacy as legacy  # noqa: E402
from tapejax.keras.optimizers_more import Adadelta as Adadelta, Adamax as Adamax  # noqa: E402
from tapejax.keras.optimizers_more import Lion as Lion, Nadam as Nadam  # noqa: E402
from tapejax.keras.optimizers_optax import from_optax as from_optax  # noqa: E402

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.optimizers")
