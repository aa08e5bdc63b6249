"""The variables Keras layers make (`layer.add_weight`): tf.Variables named as Keras 3 names them.

Keras 3 (TF 2.21) gives a weight its short `name` (`kernel`) and a `path` of the name scopes it was made in
(`dense/kernel`, `my_model/dense/kernel`); programs that select weights by name (`"kernel" in w.name`) rely on it.
The regularizer goes with the weight, as in Keras, so that `layer.losses` can recompute its penalty.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tapejax as tf


class Variable(tf.Variable):
    """A Keras weight (`keras.Variable`): `name` is its short name, `path` its full one.

    >>> import tapejax as tf
    >>> layer = tf.keras.layers.Dense(2, name="dense")
    >>> _ = layer(tf.ones([1, 3]))
    >>> layer.kernel.name, layer.kernel.path
    ('kernel', 'dense/kernel')

    Differences from TensorFlow: it is a `tf.Variable` (`isinstance(w, tf.Variable)` is True; in TF 2.21 a
    Keras variable wraps one); `w.value` is a method, as a tf.Variable's.
    """

    __slots__ = ("_short_name", "regularizer")

    def __init__(self, initial_value: Any, name: str, trainable: bool = True, dtype: Any = None,
                 constraint: Any = None, regularizer: Any = None):
        super().__init__(initial_value, trainable=trainable, name=name, dtype=dtype, constraint=constraint)
        self._short_name = name
        self.regularizer = regularizer

    @property
    def name(self) -> str:
        return self._short_name

    @property
    def path(self) -> str:
        return self._name.removesuffix(":0")

    def __repr__(self) -> str:
        return (f"<Variable path={self.path}, shape={tuple(self.shape.as_list())}, dtype={self.dtype.name}, "
                f"value={np.asarray(self.numpy())}>")

    __str__ = __repr__
