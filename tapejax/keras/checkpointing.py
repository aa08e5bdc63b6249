"""The names Keras 3 gives to layers', models' and optimizers' state in a `tf.train.Checkpoint`.

A checkpoint matches objects by the names of the edges that lead to them (tapejax/_src/checkpoint_graph.py), so
tapejax's Keras classes name their children as Keras 3 in TF 2.21 does (read from checkpoints TF wrote):

- a layer: its attributes holding layers or variables, in assignment order; `Dense`'s and the convolutions'
  `kernel` is `_kernel` and `Embedding`'s `embeddings` is `_embeddings` (Keras keeps them private);
- a `Sequential` model: `_functional/_operations/<i>`, where 0 is its input layer and i its i-th layer;
- a functional model: `_operations/<i>`, its layers in topological order (input layers included);
- an optimizer: `_iterations`, `_learning_rate` (when a number), `_trainable_variables/<i>` (the variables it
  has state for, in the order it built them), and one list per kind of slot: Adam's `_momentums` and
  `_velocities`, SGD's `momentums`, RMSprop's `_velocities`, `_momentums` and `_average_gradients`, Adagrad's
  `_accumulators`, each indexed like `_trainable_variables`.

Differences from TensorFlow: Keras 3 does not track layers held in a list or dict attribute of a subclassed
model (their weights reach a TF checkpoint only through an optimizer's `_trainable_variables`); tapejax saves
them under the attribute's name and index, so that a model saved without its optimizer keeps them. TF ignores
those extra entries when it restores.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

import tapejax as tf
from tapejax._src.checkpoint_graph import Saveable

# Keras 3 keeps these weights in private attributes (behind a property of the public name).
_PRIVATE = {"Dense": ("kernel",), "EinsumDense": ("kernel",), "Embedding": ("embeddings",)}
# optax's name of each slot -> Keras 3's list of that slot, per optimizer (looked up along the class's MRO).
_SLOT_LISTS = {
    "SGD": {"trace": "momentums"},
    "Adam": {"mu": "_momentums", "nu": "_velocities"},
    "RMSprop": {"nu": "_velocities", "mu": "_average_gradients", "trace": "_momentums"},
    "Adagrad": {"sum_of_squares": "_accumulators"},
    "Nadam": {"first": "_momentums", "second": "_velocities"},
    "Adamax": {"first": "_m", "second": "_u"},
    "Lion": {"first": "_momentums"},
    "Adadelta": {"first": "_accumulated_grads", "second": "_accumulated_delta_vars"},
}


class _Node:
    """A node of Keras's graph that tapejax's classes do not have as an object (a Sequential's `_functional`,
    its input layer): named children only."""

    def __init__(self, *edges: tuple[str, Any]):
        self._edges = list(edges)

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        return self._edges


def _private_names(layer: Any) -> tuple[str, ...]:
    for cls in type(layer).__mro__:
        if cls.__module__.startswith("tapejax.keras"):
            if cls.__name__ in _PRIVATE:
                return _PRIVATE[cls.__name__]
            if cls.__name__.startswith("Conv"):
                return ("kernel",)
    return ()


def _is_state(value: Any) -> bool:
    from tapejax.keras.layers import Layer

    return isinstance(value, Layer | tf.Variable)


def layer_children(layer: Any) -> list[tuple[str, Any]]:
    """A layer's (or subclassed model's) attributes that hold state, in assignment order."""
    private = _private_names(layer)
    edges = []
    for name, value in vars(layer).items():
        if name.startswith("_") and not _is_state(value):
            continue  # tapejax's own bookkeeping (_own_weights, _inbound_nodes, ...)
        edges.append(("_" + name if name in private else name, value))
    return edges


def sequential_children(model: Any) -> list[tuple[str, Any]]:
    layers = vars(model).get("_layers", [])
    return [("_functional", _Node(("_operations", [_Node(), *layers])))]


def functional_children(model: Any) -> list[tuple[str, Any]]:
    return [("_operations", list(vars(model).get("_functional_layers", [])))]


def optimizer_children(optimizer: Any) -> list[tuple[str, Any]]:
    """The optimizer's edges as Keras 3's: `_iterations`, `_learning_rate`, `_trainable_variables`, the slot
    lists by Keras's names and Nadam's `_u_product`.

    Differences from TensorFlow: Keras 3 also tracks `_variables` (its `variables` list), and TF 2.21's checkpoint
    keys of the slots are the breadth-first paths through it (`optimizer/_variables/<i>`); tapejax's keys are
    `optimizer/_momentums/<i>` and the like. Both sides restore the other's files, matching by the slot lists'
    edges, which both write. tapejax leaves `_variables` out because matching by position in it goes wrong for a
    restore deferred until the slots are made, one variable's at a time (RMSprop's order: all velocities first)."""
    edges: list[tuple[str, Any]] = [("_iterations", optimizer.iterations)]
    rate = vars(optimizer).get("_learning_rate")
    if isinstance(rate, int | float) and not isinstance(rate, bool):
        def write(value: np.ndarray) -> None:
            optimizer._learning_rate = float(value)

        edges.append(("_learning_rate", Saveable(f"{optimizer.name}/learning_rate",
                                                 lambda: np.float32(optimizer._learning_rate), write)))
    elif isinstance(rate, tf.Variable):  # made by a compiled step (optimizers.py: _learning_rate_variable)
        edges.append(("_learning_rate", rate))
    extra = [("_u_product", vars(optimizer)["_u_product"])] if "_u_product" in vars(optimizer) else []
    owners = list(vars(optimizer).get("_slot_owners", []))
    edges.append(("_trainable_variables", owners))
    from tapejax.keras.optimizers import _SLOT

    names = next((_SLOT_LISTS[c.__name__] for c in type(optimizer).__mro__ if c.__name__ in _SLOT_LISTS), {})
    lists: dict[str, list[Any]] = {}
    for variable in owners:
        treedef, kinds, slots = optimizer._slots[variable._uid]
        numbered = jax.tree_util.tree_unflatten(treedef, list(range(treedef.num_leaves)))
        slot_iter = iter(slots)
        for path, index in jax.tree_util.tree_flatten_with_path(numbered)[0]:
            if kinds[index] is _SLOT:
                field = next((k.name for k in reversed(path) if hasattr(k, "name")), f"slot_{index}")
                lists.setdefault(names.get(field, field), []).append(next(slot_iter))
    return edges + list(lists.items()) + extra
