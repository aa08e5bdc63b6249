"""An eager call of a Keras model of built-in layers, in inference, runs as one compiled executable.

TF runs `generator(noise, training=False)` op by op, a kernel each; on tapejax each op is an XLA executable
compiled per input shape (20-100 ms on a CPU), so a model's first eager call at a new batch size compiled every op
of every layer: the DCGAN tutorial's generator and discriminator, called eagerly to show their images, spent 1.8 s
compiling 50 executables in a 7 s program. Such a call (`model(x)` outside any tf.function, tape and layer call,
with `training` not true) runs instead as a hidden tf.function of the same call: one trace and one compile per
input signature (at most `MAX_SIGNATURES` per model; a new signature beyond runs op by op), its values those of
the op-by-op call within float rounding (the checking mode compares them), and later calls one dispatch each.

Only where that cannot change what the call does: a `Sequential` or functional model (not a subclass: its `call`
is the user's Python, which may print, or branch on values) whose layers, nested models included, are all
built-in layers that compute on numbers without side effects in inference (`_PURE_MODULES`, less `Lambda`,
`Masking`, `ActivityRegularization`, an `Embedding` with `mask_zero`, a layer with an activity regularizer or an
activation function of the user's; plus the deterministic preprocessing layers `_PURE_LAYERS`: `Resizing`,
`Rescaling`, `CenterCrop`, `Normalization`), on tensor or numpy inputs without a mask, with no distribution
strategy and `tf.config.run_functions_eagerly` off.
A layer added, popped or reconfigured (a public attribute given a new value: Grad-CAM's `model.layers[-1].activation =
None`) makes a new hidden function; a model reconfigured more than `MAX_SIGNATURES` times runs op by op from then on.
A call whose trace fails runs op by op (a bad input raises there, as it always did), and so does every later call
of that model.
"""

from __future__ import annotations

import inspect
import threading
import weakref
from typing import Any

import jax
import numpy as np
from jax._src import core as jax_core  # trace_state_clean: is any JAX trace active

import tapejax as tf
from tapejax._src import checking, retracing
from tapejax._src.context import CONTEXT
from tapejax._src.function import Function, functions_run_eagerly

DECLINED = object()  # returned when the call must run op by op
MAX_SIGNATURES = 4  # fewer than the 5 traces in a row that TF's retracing warning counts

_PURE_MODULES = frozenset(f"tapejax.keras.{name}" for name in (
    "layers", "layers_conv", "layers_pooling", "layers_activation", "layers_merge", "layers_reshape",
    "layers_noise", "layers_weightless", "models"))
_IMPURE = frozenset({"Lambda", "Masking", "ActivityRegularization"})
# from modules that also hold layers with state or randomness (lookups' tables, random augmentations)
_PURE_LAYERS = frozenset(("tapejax.keras.layers_preprocessing", name)
                         for name in ("CenterCrop", "Normalization", "Rescaling", "Resizing"))


class _Entry:
    __slots__ = ("function", "structure", "rebuilds", "signatures", "declined")

    def __init__(self, function: Function, structure: list, rebuilds: int):
        self.function = function
        self.structure = structure  # what the traces depend on beyond the inputs (_walk)
        self.rebuilds = rebuilds  # entries made for this model before, its structure changed each time
        self.signatures: set = set()
        self.declined = False


# model -> its _Entry; kept outside the model, so that no walk over a layer's attributes (sublayers, checkpoints,
# configs) sees it
_ENTRIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCAL = threading.local()  # .bypass: the checking mode's plain call of a model


def call(model: Any, inputs: Any, args: tuple, kwargs: dict) -> Any:
    """The outputs of `model(inputs, *args, **kwargs)` from its compiled call, or DECLINED: run it op by op."""
    from tapejax.keras import layers, masks, models  # noqa: PLC0415 (models imports this module's importer)

    training = kwargs.get("training")
    if (args or type(model) not in (models.Sequential, models.Functional) or not model.built
            or kwargs.keys() - {"training"} or not (training is None or training is False)
            or CONTEXT.tapes or CONTEXT.trace is not None or layers._STATE.training or layers._STATE.probes
            or getattr(_LOCAL, "bypass", False) or functions_run_eagerly() or not jax_core.trace_state_clean()
            or tf.distribute.has_strategy()):
        return DECLINED
    entry = _ENTRIES.get(model)
    if entry is not None and entry.declined:
        return DECLINED
    leaves, treedef = jax.tree_util.tree_flatten(inputs, is_leaf=lambda x: isinstance(x, tf.Tensor | tf.Variable))
    if not all(_numeric(leaf) for leaf in leaves) or masks.mask_of(inputs) is not None:
        return DECLINED
    structure: list = []
    if not _walk(model, layers.Layer, structure):
        return DECLINED
    if entry is None or not _same(entry.structure, structure):  # new, or a layer added, popped or reconfigured since
        rebuilds = -1 if entry is None else entry.rebuilds
        entry = _ENTRIES[model] = _Entry(_function(model, layers.Layer), structure, rebuilds + 1)
        entry.declined = entry.rebuilds > MAX_SIGNATURES  # a model reconfigured between most calls: op by op
        if entry.declined:
            return DECLINED
    signature = (treedef, tuple((tuple(np.shape(x)), str(x.dtype)) for x in leaves), "training" in kwargs, training)
    if signature not in entry.signatures:
        if len(entry.signatures) >= MAX_SIGNATURES:
            return DECLINED
        entry.signatures.add(signature)
    try:
        outputs = entry.function(inputs, **kwargs)
    except Exception:  # noqa: BLE001 (op by op from now on: a genuine error is raised there)
        entry.declined = True
        return DECLINED
    if checking.FLAG.on:
        _LOCAL.bypass = True
        try:
            plain = layers.Layer.__call__(model, inputs, **kwargs)
        finally:
            _LOCAL.bypass = False
        checking.compare("compiled eager call of a Keras model (keras/compiled_calls.py)",
                         [np.asarray(x) for x in jax.tree_util.tree_leaves(outputs)],
                         [np.asarray(x) for x in jax.tree_util.tree_leaves(plain)], model.name)
    return outputs


def _numeric(leaf: Any) -> bool:
    if isinstance(leaf, tf.Tensor):
        return leaf.dtype != tf.string and not isinstance(leaf, tf.Variable)
    return isinstance(leaf, np.ndarray) and leaf.dtype.kind in "biufc"


def _walk(layer: Any, base: type, structure: list) -> bool:
    """Whether `layer` and every layer under it is a built-in one without side effects in inference; appends to
    `structure` each layer and the identities of its public attributes (its configuration, weights and sublayers:
    Grad-CAM's `model.layers[-1].activation = None` after a call must not reuse the trace made before it)."""
    kind = type(layer)
    built_in = (kind.__module__ in _PURE_MODULES and kind.__name__ not in _IMPURE
                or (kind.__module__, kind.__name__) in _PURE_LAYERS)
    if (not built_in or getattr(layer, "mask_zero", False)
            or getattr(layer, "activity_regularizer", None) is not None):
        return False
    structure.append(_marker(layer))
    for name, value in vars(layer).items():
        if not name.startswith("_"):
            if _users(value):  # an activation of the user's runs in the call: it may print, as in TF, every call
                return False
            structure += (name, _marker(value))
    inner = layer.layers if isinstance(getattr(type(layer), "layers", None), property) else layer._sublayers()
    return all(_walk(sub, base, structure) for sub in inner if isinstance(sub, base))


def _users(value: Any) -> bool:
    """Whether `value` is a function (or callable object) of the user's, not tapejax's (an activation)."""
    if not callable(value) or isinstance(value, type):
        return False
    owner = getattr(value, "__module__", None) if inspect.isroutine(value) else type(value).__module__
    return not (owner or "").startswith(("tapejax.", "jax.", "numpy", "builtins"))


def _marker(value: Any) -> Any:
    """What tells `value` apart from any later value: a weak reference (a dead one equals no new object, and the
    structure must not keep the model alive: a `History` refers back to it), or an immutable scalar itself."""
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return value
    try:
        return weakref.ref(value)
    except TypeError:
        return _Opaque(value)


class _Opaque:
    """A value neither weakly referable nor a scalar (a tuple, a list): equal to a marker of the same object, kept
    alive by the marker so that its identity is not reused."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _same(old: list, new: list) -> bool:
    """Whether two structures (`_walk`'s) mark the same objects and scalars (`is`: a tensor's == is elementwise)."""
    if len(old) != len(new):
        return False
    for a, b in zip(old, new):
        if isinstance(a, weakref.ref):
            if not isinstance(b, weakref.ref) or a() is None or a() is not b():
                return False
        elif isinstance(a, _Opaque):
            if not isinstance(b, _Opaque) or a.value is not b.value:
                return False
        elif a is not b and (type(a) is not type(b) or a != b):
            return False
    return True


def _function(model: Any, layer_class: type) -> Function:
    """The hidden tf.function of `model`'s call; it holds the model weakly (the entry lives as long as the model)."""
    body = _Call(model, layer_class)
    function = Function(body.call, autograph=False, name=f"{model.name} (an eager call, compiled)")
    # its own retracing detector: every model's hidden function shares this code, which TF's warning would count as
    # one function retraced (a tf.function made in a loop); each model traces at most MAX_SIGNATURES times
    function._detector = retracing.Detector(function.__name__)
    return function


class _Call:
    """The body of a hidden function. Its `variables` are the model's, so that the trace has them as inputs from
    the start (reachable.py): met one by one instead, each would be read as its value in a first trace that
    computes, and compiles, every op on the weights (an adapted Normalization's statistics), only to trace again."""

    def __init__(self, model: Any, layer_class: type):
        self._model, self._layer_class = weakref.ref(model), layer_class

    @property
    def variables(self) -> list:
        model = self._model()
        return [] if model is None else list(model.variables)

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return self._layer_class.__call__(self._model(), inputs, **kwargs)
