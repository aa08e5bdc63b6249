"""tf.keras.optimizers: Keras's API, optax's update rules, the state in Variables.

Each optimizer is an optax transformation configured to compute Keras's documented formula; its state (moments,
step counts) lives in non-trainable tf.Variables, one set per trained variable, so it survives `tf.function` and
checkpoints like any variable. Hyperparameters that change with the step (a learning-rate schedule, Adam's
epsilon) are injected each step with `optax.inject_hyperparams`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import jax
import numpy as np
import optax

import tapejax as tf
from tapejax.keras import schedules as schedules
from tapejax.keras.schedules import LearningRateSchedule


class Optimizer:
    """The base of the optimizers: `apply_gradients(zip(grads, vars))`, `minimize(loss, var_list, tape=...)`."""

    def __init__(self, learning_rate: float | LearningRateSchedule | Callable = 0.001, name: str | None = None,
                 **kwargs: Any):
        self._learning_rate = learning_rate
        self.name = name or type(self).__name__.lower()
        self.iterations = tf.Variable(0, dtype=tf.int64, trainable=False, name="iteration")
        self._slots: dict[int, tuple[Any, list[tf.Variable]]] = {}  # variable uid -> (state treedef, state)
        self._transformation = optax.inject_hyperparams(self._rule)(**self._hyperparameters(1))
        self._step = jax.jit(self._update)

    # -- what each optimizer defines -------------------------------------------------------------------

    def _rule(self, **hyperparameters: Any) -> optax.GradientTransformation:
        raise NotImplementedError

    def _hyperparameters(self, t: int) -> dict[str, Any]:
        """The injected hyperparameters at step t (1 for the first update)."""
        return {"learning_rate": self._current_learning_rate(t - 1)}

    # -- the API -------------------------------------------------------------------------------------------

    @property
    def learning_rate(self) -> float:
        return self._current_learning_rate(int(self.iterations))

    def _current_learning_rate(self, step: int) -> float:
        lr = self._learning_rate
        return float(lr(step)) if callable(lr) else float(lr)

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, tf.Variable]]) -> tf.Variable:
        """Updates each variable from its gradient (None gradients are skipped); returns `iterations`."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        t = int(self.iterations) + 1
        hyperparameters = {k: np.asarray(v, np.float32) for k, v in self._hyperparameters(t).items()}
        for gradient, variable in pairs:
            treedef, slots = self._state(variable)
            state = jax.tree_util.tree_unflatten(treedef, [s._value for s in slots])
            new_value, new_state = self._step(tf.convert_to_tensor(gradient, dtype=variable.dtype).value,
                                              state, variable.value().value, hyperparameters)
            variable.assign(tf.constant(new_value))
            for slot, value in zip(slots, jax.tree_util.tree_leaves(new_state)):
                slot.assign(tf.constant(value))
        self.iterations.assign_add(1)
        return self.iterations

    def minimize(self, loss: Any, var_list: list[tf.Variable], tape: tf.GradientTape | None = None) -> tf.Variable:
        """Computes the gradients of `loss` on `tape` and applies them."""
        if tape is None:
            raise ValueError("`tape` is required when a `Tensor` loss is passed: compute the loss inside a "
                             "tf.GradientTape and pass it as `tape=`.")
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    # -- the state ---------------------------------------------------------------------------------------

    def _state(self, variable: tf.Variable) -> tuple[Any, list[tf.Variable]]:
        entry = self._slots.get(variable._uid)
        if entry is None:
            state = self._transformation.init(variable.value().value)
            leaves, treedef = jax.tree_util.tree_flatten(state)
            base = variable.name.split(":")[0]
            slots = [tf.Variable(np.asarray(leaf), trainable=False, name=f"{self.name}/{base}/slot_{i}")
                     for i, leaf in enumerate(leaves)]
            entry = self._slots[variable._uid] = (treedef, slots)
        return entry

    def _update(self, gradient: Any, state: Any, value: Any, hyperparameters: dict[str, Any]) -> tuple[Any, Any]:
        state.hyperparams.update({k: v.astype(state.hyperparams[k].dtype) for k, v in hyperparameters.items()})
        updates, new_state = self._transformation.update(gradient, state, value)
        return optax.apply_updates(value, updates), new_state

    @property
    def variables(self) -> list[tf.Variable]:
        return [self.iterations] + [s for _, slots in self._slots.values() for s in slots]


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
    """

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, amsgrad: bool = False, **kwargs: Any):
        if amsgrad:
            raise NotImplementedError("tapejax's Adam does not implement amsgrad yet.")
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        super().__init__(learning_rate, **kwargs)

    def _rule(self, learning_rate: Any, eps: Any) -> optax.GradientTransformation:
        return optax.adam(learning_rate, b1=self.beta_1, b2=self.beta_2, eps=eps)

    def _hyperparameters(self, t: int) -> dict[str, Any]:
        return {**super()._hyperparameters(t), "eps": self.epsilon / math.sqrt(1.0 - self.beta_2 ** t)}
