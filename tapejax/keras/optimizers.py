"""tf.keras.optimizers: Keras's API, optax's update rules, the state in Variables.

Each optimizer is an optax transformation configured to compute Keras's documented formula; its state (moments,
step counts) lives in non-trainable tf.Variables, one set per trained variable, so it survives `tf.function` and
checkpoints like any variable. Hyperparameters that change with the step (a learning-rate schedule, Adam's
epsilon) are injected each step with `optax.inject_hyperparams`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax
import numpy as np
import optax

import tapejax as tf
from tapejax.keras import schedules as schedules
from tapejax._src.module import camel_to_snake
from tapejax.keras.schedules import LearningRateSchedule


class Optimizer:
    """The base of the optimizers: `apply_gradients(zip(grads, vars))`, `minimize(loss, var_list, tape=...)`.

    Everything a step computes is a tensor (the step count, a scheduled learning rate, injected
    hyperparameters), so the same code runs eagerly and inside `tf.function`, where its variables are compiled
    state. Keras's `weight_decay` (decoupled: `var -= var * weight_decay * lr` before the update), `clipnorm`,
    `clipvalue` and `global_clipnorm` apply to every optimizer.
    """

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
        with tf.init_scope():
            first = {k: _as_float32(v) for k, v in self._hyperparameters(tf.constant(1.0)).items()}
        self._transformation = optax.inject_hyperparams(self._rule)(**first)
        # All variables' updates in one executable: eagerly one dispatch per step, not one per variable, and no
        # variable is assigned until every update is computed.
        self._step = jax.jit(self._update_all)

    # -- what each optimizer defines -------------------------------------------------------------------

    def _rule(self, **hyperparameters: Any) -> optax.GradientTransformation:
        raise NotImplementedError

    def _hyperparameters(self, t: Any) -> dict[str, Any]:
        """The injected hyperparameters at step t (a float32 tensor, 1 for the first update)."""
        return {"learning_rate": self._current_learning_rate(t - 1.0)}

    # -- the API -------------------------------------------------------------------------------------------

    @property
    def learning_rate(self) -> float:
        return float(self._current_learning_rate(tf.cast(self.iterations, tf.float32)))

    def _current_learning_rate(self, step: Any) -> Any:
        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            return lr(step)
        return lr() if callable(lr) else lr  # Keras: a callable learning rate takes no arguments

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, tf.Variable]]) -> tf.Variable:
        """Updates each variable from its gradient (None gradients are skipped); returns `iterations`."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        grads = self._clip([tf.convert_to_tensor(g, dtype=v.dtype) for g, v in pairs])
        t = tf.cast(self.iterations, tf.float32) + 1.0
        hyperparameters = {k: _as_float32(v) for k, v in self._hyperparameters(t).items()}
        decay = None
        if self.weight_decay:
            decay = _as_float32(self.weight_decay * self._current_learning_rate(t - 1.0))
        count = tf.cast(self.iterations, tf.int32).value  # Keras: every variable's bias correction uses it
        layouts, states = [], []
        for _, variable in pairs:
            treedef, kinds, slots = layout = self._state(variable)
            values = iter(slots)
            leaves = [next(values).value().value if kind is _SLOT else count if kind is _COUNT else kind
                      for kind in kinds]
            layouts.append(layout)
            states.append(jax.tree_util.tree_unflatten(treedef, leaves))
        updated = self._step([g.value for g in grads], states, [v.value().value for _, v in pairs],
                             hyperparameters, decay)
        for (_, variable), (_, kinds, slots), (new_value, new_state) in zip(pairs, layouts, updated):
            variable.assign(new_value)
            new_leaves = jax.tree_util.tree_leaves(new_state)
            for slot, value in zip(slots, (v for v, kind in zip(new_leaves, kinds) if kind is _SLOT)):
                slot.assign(value)
        self.iterations.assign_add(1)
        return self.iterations

    def build(self, var_list: list[tf.Variable]) -> None:
        """Creates the state of each variable now (Keras 3), rather than on the first `apply_gradients`: a
        `tf.function` step then creates no variables on its first call, and is traced once."""
        for variable in var_list:
            self._state(variable)

    def minimize(self, loss: Any, var_list: list[tf.Variable], tape: tf.GradientTape | None = None) -> tf.Variable:
        """Computes the gradients of `loss` on `tape` and applies them."""
        if tape is None:
            raise ValueError("`tape` is required when a `Tensor` loss is passed: compute the loss inside a "
                             "tf.GradientTape and pass it as `tape=`.")
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    # -- the state ---------------------------------------------------------------------------------------

    def _clip(self, grads: list[Any]) -> list[Any]:
        if self.clipnorm is not None:
            return [tf.clip_by_norm(g, self.clipnorm) for g in grads]
        if self.clipvalue is not None:
            return [tf.clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        if self.global_clipnorm is not None:  # TF's clip_by_global_norm: g * clip / max(global norm, clip)
            norm = tf.sqrt(sum(tf.reduce_sum(tf.square(g)) for g in grads))
            scale = self.global_clipnorm / tf.maximum(norm, self.global_clipnorm)
            return [g * tf.cast(scale, g.dtype) for g in grads]
        return grads

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
                state = self._transformation.init(variable.value().value)
                paths_leaves, treedef = jax.tree_util.tree_flatten_with_path(state)
                base = variable.name.split(":")[0]
                kinds: list[Any] = []
                slots = []
                for path, leaf in paths_leaves:
                    if any(getattr(k, "name", None) == "hyperparams" for k in path):
                        kinds.append(np.asarray(leaf))  # replaced by the injected value on every update
                    elif np.issubdtype(np.asarray(leaf).dtype, np.integer):
                        kinds.append(_COUNT)
                    else:
                        kinds.append(_SLOT)
                        slots.append(tf.Variable(np.asarray(leaf), trainable=False,
                                                 name=f"{self.name}/{base}/slot_{len(slots)}"))
            entry = self._slots[variable._uid] = (treedef, tuple(kinds), slots)
        return entry

    def _update_all(self, gradients: list[Any], states: list[Any], values: list[Any],
                    hyperparameters: dict[str, Any], decay: Any) -> list[tuple[Any, Any]]:
        return [self._update(g, s, v, hyperparameters, decay) for g, s, v in zip(gradients, states, values)]

    def _update(self, gradient: Any, state: Any, value: Any, hyperparameters: dict[str, Any],
                decay: Any) -> tuple[Any, Any]:
        state.hyperparams.update({k: v.astype(state.hyperparams[k].dtype) for k, v in hyperparameters.items()})
        if decay is not None:
            value = value - value * decay.astype(value.dtype)
        updates, new_state = self._transformation.update(gradient, state, value)
        return optax.apply_updates(value, updates), new_state

    @property
    def variables(self) -> list[tf.Variable]:
        return [self.iterations] + [s for _, _, slots in self._slots.values() for s in slots]


_SLOT, _COUNT = object(), object()  # kinds of optax state leaves (Optimizer._state)

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
    `var += momentum * m - lr * g`). optax's `sgd` is the same rule for a constant learning rate."""

    def __init__(self, learning_rate: Any = 0.01, momentum: float = 0.0, nesterov: bool = False, **kwargs: Any):
        self.momentum, self.nesterov = momentum, nesterov
        super().__init__(learning_rate, **kwargs)

    def _rule(self, learning_rate: Any) -> optax.GradientTransformation:
        return optax.sgd(learning_rate, momentum=self.momentum or None, nesterov=self.nesterov)


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

    def _rule(self, learning_rate: Any, eps: Any) -> optax.GradientTransformation:
        return optax.adam(learning_rate, b1=self.beta_1, b2=self.beta_2, eps=eps)

    def _hyperparameters(self, t: Any) -> dict[str, Any]:
        return {**super()._hyperparameters(t), "eps": self.epsilon / tf.sqrt(1.0 - self.beta_2 ** t)}


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
