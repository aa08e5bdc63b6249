"""Attributes that Keras 3 declares on the class (as properties) but tapejax's objects set when they are built:
declared here too, so that they are found and documented on the class (`tf.keras.layers.Dense.kernel`), with
Keras's error for an instance that has not set them yet.

>>> import tapejax as tf
>>> layer = tf.keras.layers.Dense(2)
>>> try:
...     layer.kernel
... except AttributeError as e:
...     print(e)
You must build the layer before accessing `kernel`.
>>> layer.build((None, 3))
>>> layer.kernel.shape
TensorShape([3, 2])
"""

from __future__ import annotations

from typing import Any


class Declared:
    """A name an instance sets itself (in `__init__` or `build`): a non-data descriptor, so the instance's own
    value is what a read finds; before it is set, a read raises AttributeError with `message`."""

    def __init__(self, doc: str, message: str = "{owner!r} object has no attribute {name!r}"):
        self.__doc__, self.message, self.name = doc, message, ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        raise self.error(instance)

    def error(self, instance: Any) -> AttributeError:
        return AttributeError(self.message.format(name=self.name, owner=type(instance).__name__))


def built_weight(doc: str) -> Declared:
    """A weight a layer makes in `build` (Keras 3: a property that raises before the layer is built)."""
    return Declared(doc, "You must build the layer before accessing `{name}`.")
