"""tf.keras.optimizers Nadam, Adamax, Lion and Adadelta: Keras 3's update formulas as optax transformations.

optax has each of these algorithms, but not with Keras's placement of epsilon or Keras's Nadam momentum schedule,
so each is a small `optax.GradientTransformation` computing Keras's documented formula; the base class
(tapejax/keras/optimizers.py) supplies the rest: state in Variables, injected hyperparameters, weight decay,
clipping, one compiled update for all variables.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

import tapejax as tf
from tapejax.keras.optimizers import Optimizer


class _Moments(NamedTuple):
    first: Any
    second: Any


def _transformation(update: Any, slots: int) -> optax.GradientTransformation:
    """A per-variable rule: `update(gradient, moments) -> (step, moments)`, with `slots` zero-initialised moments
    (the optimizer's slot Variables); the step is added to the variable."""

    def init(params: Any) -> _Moments:
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return _Moments(zeros, zeros if slots == 2 else None)

    def apply(gradients: Any, state: _Moments, params: Any = None) -> tuple[Any, _Moments]:
        step, moments = update(gradients, state)
        return step, moments

    return optax.GradientTransformation(init, apply)


class Nadam(Optimizer):
    """Keras's Nadam: Adam with Nesterov momentum and Keras's momentum schedule `u_t = beta_1 * (1 - 0.5 *
    0.96^t)`: `m = beta_1 * m + (1 - beta_1) * g`, `v = beta_2 * v + (1 - beta_2) * g^2`, and
    `var -= lr * m_hat / (sqrt(v / (1 - beta_2^t)) + epsilon)` with `m_hat = u_{t+1} * m / (1 - P_t * u_{t+1}) +
    (1 - u_t) * g / (1 - P_t)`, where `P_t = u_1 * ... * u_t` is kept in a Variable, as Keras keeps it.

    >>> var = tf.Variable(1.0)
    >>> _ = tf.keras.optimizers.Nadam(learning_rate=0.1).apply_gradients([(tf.constant(2.0), var)])
    >>> round(float(var), 4)  # Keras: 0.893721
    0.8937
    """

    _RULE_ARGS = ("beta_1", "beta_2", "epsilon")
    _PURE_HYPERPARAMETERS = False  # its momentum schedule's running product is a Variable

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
                 **kwargs: Any):
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        super().__init__(learning_rate, **kwargs)
        with tf.init_scope():
            self._u_product = tf.Variable(1.0, trainable=False, name="u_product")
        self._next_u_product = None

    def _rule(self, learning_rate: Any, u_t: Any, u_next: Any, product: Any,
              beta_2_power: Any) -> optax.GradientTransformation:
        beta_1, beta_2, epsilon = self.beta_1, self.beta_2, self.epsilon

        def update(g: Any, state: _Moments) -> tuple[Any, _Moments]:
            m = state.first + (g - state.first) * (1 - beta_1)
            v = state.second + (jnp.square(g) - state.second) * (1 - beta_2)
            m_hat = u_next * m / (1 - product * u_next) + (1 - u_t) * g / (1 - product)
            v_hat = v / (1 - beta_2_power)
            return -(m_hat * learning_rate) / (jnp.sqrt(v_hat) + epsilon), _Moments(m, v)

        return _transformation(update, 2)

    def _hyperparameters(self, t: Any, learning_rate: Any) -> dict[str, Any]:
        u_t = self.beta_1 * (1.0 - 0.5 * tf.pow(0.96, t))
        u_next = self.beta_1 * (1.0 - 0.5 * tf.pow(0.96, t + 1.0))
        product = tf.convert_to_tensor(self._u_product) * u_t
        self._next_u_product = product
        return {"learning_rate": learning_rate, "u_t": u_t, "u_next": u_next, "product": product,
                "beta_2_power": tf.pow(tf.cast(self.beta_2, tf.float32), t)}

    def apply_gradients(self, grads_and_vars: Any) -> tf.Variable:
        iterations = super().apply_gradients(grads_and_vars)
        self._u_product.assign(self._next_u_product)  # only once the step has succeeded
        return iterations

    @property
    def variables(self) -> list[tf.Variable]:
        return [*super().variables, self._u_product]


class Adamax(Optimizer):
    """Keras's Adamax: `m = beta_1 * m + (1 - beta_1) * g`, `u = max(beta_2 * u, |g|)`,
    `var -= lr * m / ((1 - beta_1^t) * (u + epsilon))`.

    >>> var = tf.Variable(1.0)
    >>> _ = tf.keras.optimizers.Adamax(learning_rate=0.1).apply_gradients([(tf.constant(2.0), var)])
    >>> round(float(var), 4)
    0.9
    """

    _RULE_ARGS = ("beta_1", "beta_2", "epsilon")

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
                 **kwargs: Any):
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        super().__init__(learning_rate, **kwargs)

    def _rule(self, learning_rate: Any, beta_1_power: Any) -> optax.GradientTransformation:
        beta_1, beta_2, epsilon = self.beta_1, self.beta_2, self.epsilon

        def update(g: Any, state: _Moments) -> tuple[Any, _Moments]:
            m = state.first + (g - state.first) * (1 - beta_1)
            u = jnp.maximum(beta_2 * state.second, jnp.abs(g))
            return -(learning_rate * m) / ((1 - beta_1_power) * (u + epsilon)), _Moments(m, u)

        return _transformation(update, 2)

    def _hyperparameters(self, t: Any, learning_rate: Any) -> dict[str, Any]:
        return {"learning_rate": learning_rate, "beta_1_power": tf.pow(tf.cast(self.beta_1, tf.float32), t)}


class Lion(Optimizer):
    """Keras's Lion: `var -= lr * sign(beta_1 * m + (1 - beta_1) * g)`, then `m = beta_2 * m + (1 - beta_2) * g`.

    >>> var = tf.Variable(1.0)
    >>> _ = tf.keras.optimizers.Lion(learning_rate=0.1).apply_gradients([(tf.constant(-3.0), var)])
    >>> round(float(var), 4)
    1.1
    """

    _RULE_ARGS = ("beta_1", "beta_2")

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.99, **kwargs: Any):
        self.beta_1, self.beta_2 = beta_1, beta_2
        super().__init__(learning_rate, **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer degenerates to "
                             f"SignSGD. Received: beta_1={beta_1}.")

    def _rule(self, learning_rate: Any) -> optax.GradientTransformation:
        beta_1, beta_2 = self.beta_1, self.beta_2

        def update(g: Any, state: _Moments) -> tuple[Any, _Moments]:
            step = -learning_rate * jnp.sign(state.first * beta_1 + g * (1.0 - beta_1))
            return step, _Moments(state.first * beta_2 + g * (1.0 - beta_2), None)

        return _transformation(update, 1)


class Adadelta(Optimizer):
    """Keras's Adadelta: `a = rho * a + (1 - rho) * g^2`, `delta = -sqrt(d + epsilon) * g / sqrt(a + epsilon)`,
    `d = rho * d + (1 - rho) * delta^2`, `var += lr * delta`.

    >>> var = tf.Variable(1.0)
    >>> _ = tf.keras.optimizers.Adadelta(learning_rate=1.0).apply_gradients([(tf.constant(2.0), var)])
    >>> round(float(var), 6)  # 1 - sqrt(1e-7) * 2 / sqrt(0.05 * 4 + 1e-7)
    0.998586
    """

    _RULE_ARGS = ("rho", "epsilon")

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.95, epsilon: float = 1e-7, **kwargs: Any):
        self.rho, self.epsilon = rho, epsilon
        super().__init__(learning_rate, **kwargs)

    def _rule(self, learning_rate: Any) -> optax.GradientTransformation:
        rho, epsilon = self.rho, self.epsilon

        def update(g: Any, state: _Moments) -> tuple[Any, _Moments]:
            grads = rho * state.first + (1 - rho) * jnp.square(g)
            delta = -(jnp.sqrt(state.second + epsilon) * g) / jnp.sqrt(grads + epsilon)
            deltas = rho * state.second + (1 - rho) * jnp.square(delta)
            return learning_rate * delta, _Moments(grads, deltas)

        return _transformation(update, 2)
