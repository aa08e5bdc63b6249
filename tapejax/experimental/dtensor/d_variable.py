"""`dtensor.DVariable`: a variable whose value keeps its layout through assignments and compiled steps."""

from __future__ import annotations

from typing import Any

import jax

from tapejax._src import errors
from tapejax._src.context import CONTEXT
from tapejax._src.variable import ResourceVariable
from tapejax.experimental.dtensor import api
from tapejax.experimental.dtensor.layout import Layout


class DVariable(ResourceVariable):
    """A `tf.Variable` on a mesh (`tf.experimental.dtensor.DVariable`).

    Its layout is the initial value's (a DTensor) or `layout=`; every assignment (an optimizer's update, a
    tf.function step's write-back) keeps it, so a training loop's variables stay where they were placed.

    >>> import tapejax as tf
    >>> dtensor = tf.experimental.dtensor
    >>> mesh = dtensor.create_mesh([("x", 1)], device_type="CPU")
    >>> v = dtensor.DVariable(dtensor.call_with_layout(tf.zeros, dtensor.Layout.replicated(mesh, 1), [3]))
    >>> v.layout.sharding_specs
    ['unsharded']

    Raises:
      tf.errors.InvalidArgumentError: neither a `layout` nor an initial value on a mesh (TF's error).
    """

    __slots__ = ("_layout",)

    def __init__(self, initial_value: Any, *args: Any, dtype: Any = None, name: str | None = None,
                 layout: Layout | None = None, **kwargs: Any):
        if callable(initial_value):
            initial_value = initial_value()
        if layout is not None:
            initial_value = api.relayout(initial_value, layout)
        elif api.is_dtensor(initial_value):
            layout = api.fetch_layout(initial_value)
        else:
            raise errors.InvalidArgumentError(None, None, "Neither layout nor DTensor initial value are provided.")
        self._layout = layout
        super().__init__(initial_value, *args, dtype=dtype, name=name, **kwargs)
        self._value = jax.device_put(self._value, layout._sharding())

    @property
    def layout(self) -> Layout:
        return self._layout

    def _set(self, value: jax.Array, read_value: bool, tid: int = 0) -> Any:
        sharding = self._layout._sharding()
        if CONTEXT.trace is not None:  # traced: a constraint, so the compiled step returns it with this layout
            value = jax.lax.with_sharding_constraint(value, sharding)
        else:
            value = jax.device_put(value, sharding)
        return super()._set(value, read_value, tid)
