"""tf.keras.optimizers.legacy: Keras 2's optimizers, which TF 2.21's Keras 3 keeps as names only. Making one
raises Keras 3's ImportError, which says how to get Keras 2 (`tf_keras`); use `tf.keras.optimizers.Adam` etc.

>>> import tapejax as tf
>>> try:
...     tf.keras.optimizers.legacy.Adam(0.1)
... except ImportError as e:
...     print(str(e)[:57])
`keras.optimizers.legacy` is not supported in Keras 3. Wh
"""

from __future__ import annotations

from typing import Any


class _Legacy:
    def __init__(self, *args: Any, **kwargs: Any):
        raise ImportError("`keras.optimizers.legacy` is not supported in Keras 3. When using `tf.keras`, to continue "
                          "using a `tf.keras.optimizers.legacy` optimizer, you can install the `tf_keras` package "
                          "(Keras 2) and set the environment variable `TF_USE_LEGACY_KERAS=True` to configure "
                          "TensorFlow to use `tf_keras` when accessing `tf.keras`. (tapejax implements Keras 3 only: "
                          "use the optimizer of the same name in `tf.keras.optimizers`.)")


# Keras 3 exports one class under all six names.
Adagrad = Adam = Ftrl = Optimizer = RMSprop = SGD = _Legacy
