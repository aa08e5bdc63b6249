"""Keras 3's weights file (`model.save_weights("x.weights.h5")`, and `model.weights.h5` inside a `.keras` zip).

The layout, read from files TF 2.21's Keras writes: every object with state (the model, its layers, its
optimizer) is an HDF5 group holding a `vars` group, whose attribute `name` is the object's name and whose
datasets `0`, `1`, ... are its own variables in order (a layer's trainable ones first, each kind in creation
order). A group's path is how Keras's walk first reaches the object from the model:

- a Sequential or functional model first lists `layers` (a Sequential's without its input layer);
- then an object's attributes, public ones in alphabetical order, then private ones (a subclassed model's
  `layers` and `optimizer` count as public attributes);
- an object in a list, tuple or dict is named by its class in snake case (`dense`, then `dense_1`, ...) and a
  nested container `container`, `container_1`, ...; an object reached a second time is skipped.

The optimizer's variables are `iterations`, the learning rate (unless it is a schedule), then its slots in
Keras's order (Adam: each variable's momentum and velocity; RMSprop: all velocities, then momentums, then
average gradients). `tests/compat/test_keras_saving_vs_tf.py` checks the layout against real Keras's.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras import checkpointing

# Keras names these private sublayers by the public property it also has (visited first, alphabetically).
_PUBLIC_NAMES = {"_query_dense": "query_dense", "_key_dense": "key_dense", "_value_dense": "value_dense",
                 "_output_dense": "output_dense"}
# Keras's slot lists per optimizer (checkpointing's names), and whether it makes a variable's slots together
# (Adam: m0, v0, m1, v1) or one list after another (RMSprop: all velocities, then all momentums).
_SLOT_ORDER = {
    "SGD": (("momentums",), False),
    "Adam": (("_momentums", "_velocities"), True),
    "RMSprop": (("_velocities", "_momentums", "_average_gradients"), False),
    "Adagrad": (("_accumulators",), False),
    "Nadam": (("_momentums", "_velocities"), True),
    "Adamax": (("_m", "_u"), True),
    "Lion": (("_momentums",), False),
    "Adadelta": (("_accumulated_grads", "_accumulated_delta_vars"), True),
}


class _Value:
    """A saved value that is not a Variable of its own (a learning rate kept as a Python float)."""

    def __init__(self, read: Any, write: Any, shape: tuple = (), name: str = "learning_rate"):
        self.read, self.write, self.shape, self.name = read, write, shape, name


def _name_key(name: str) -> str:
    return "~" + name if name.startswith("_") else name  # private attributes last, as Keras visits them


def _is_saveable(value: Any) -> bool:
    from tapejax.keras.layers import Layer
    from tapejax.keras.optimizers import Optimizer

    return isinstance(value, Layer | Optimizer)


def _children(obj: Any) -> list[tuple[str, Any]]:
    """The attributes Keras's walk visits on `obj`, in its order."""
    from tapejax.keras.models import Functional, Model, Sequential

    first: list[tuple[str, Any]] = []
    named: dict[str, Any] = {}
    if isinstance(obj, Sequential | Functional):
        first.append(("layers", obj.layers))
    elif isinstance(obj, Model):
        named["layers"] = obj.layers
    if isinstance(obj, Model) and getattr(obj, "optimizer", None) is not None:
        named["optimizer"] = obj.optimizer
    for name, value in vars(obj).items():
        if name in ("_own_weights", "_inbound_nodes", "optimizer") or name.startswith("__"):
            continue
        if _is_saveable(value) or isinstance(value, list | tuple | dict):
            named[_PUBLIC_NAMES.get(name, name)] = value
    return first + sorted(named.items(), key=lambda item: _name_key(item[0]))


def own_variables(obj: Any) -> list[Any]:
    """The variables Keras stores in `obj`'s `vars` group, in order."""
    from tapejax.keras.optimizers import Optimizer

    if isinstance(obj, Optimizer):
        return optimizer_variables(obj)
    own = obj.__dict__.get("_own_weights", [])
    return [w for w in own if w.trainable] + [w for w in own if not w.trainable]


def optimizer_variables(optimizer: Any) -> list[Any]:
    """Keras 3's `optimizer.variables`: iterations, the learning rate (not for a schedule), then the slots."""
    from tapejax.keras.schedules import LearningRateSchedule

    found: list[Any] = [optimizer.iterations]
    rate = optimizer._learning_rate
    if isinstance(rate, tf.Variable):
        found.append(rate)
    elif not isinstance(rate, LearningRateSchedule) and not callable(rate):
        def write(value: np.ndarray) -> None:
            optimizer._learning_rate = float(value)
        found.append(_Value(lambda: np.float32(optimizer._learning_rate), write))
    found += ordered_slots(optimizer, dict(checkpointing.optimizer_children(optimizer)))
    if "_u_product" in vars(optimizer):  # Nadam's, last (Keras makes it after the slots)
        found.append(optimizer._u_product)
    return found


def ordered_slots(optimizer: Any, lists: dict[str, Any]) -> list[Any]:
    """The slots of the optimizer's slot `lists` (checkpointing's names) in Keras's order of `variables`."""
    lists = {k: v for k, v in lists.items() if k not in ("_iterations", "_learning_rate", "_trainable_variables",
                                                         "_u_product", "_variables")}
    names, together = next((_SLOT_ORDER[c.__name__] for c in type(optimizer).__mro__ if c.__name__ in _SLOT_ORDER),
                           (tuple(lists), False))
    present = [lists[n] for n in names if n in lists]
    if together:
        return [slot for group in zip(*present) for slot in group]
    return [slot for group in present for slot in group]


def walk(model: Any) -> list[tuple[str, Any]]:
    """(path, object) for every object Keras's walk saves, in its order; the model's path is ""."""
    found: list[tuple[str, Any]] = []
    visited: set[int] = set()

    def visit(obj: Any, path: str) -> None:
        if id(obj) in visited:
            return
        visited.add(id(obj))
        found.append((path, obj))
        for name, child in _children(obj):
            inner = f"{path}/{name}" if path else name
            if _is_saveable(child):
                visit(child, inner)
            else:
                visit_container(child, inner, set())

    def visit_container(container: Any, path: str, seen: set[int]) -> None:
        if id(container) in seen:
            return
        seen.add(id(container))
        used: dict[str, int] = {}
        for item in (container.values() if isinstance(container, dict) else container):
            if _is_saveable(item):
                visit(item, f"{path}/{_unique(_class_name(item), used)}")
            elif isinstance(item, list | tuple | dict):
                visit_container(item, f"{path}/{_unique('container', used)}", seen)

    visit(model, "")
    return found


def _class_name(obj: Any) -> str:
    from tapejax.keras.layers import _snake_case

    return _snake_case(type(obj).__name__)


def _unique(name: str, used: dict[str, int]) -> str:
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def _read(variable: Any) -> np.ndarray:
    if isinstance(variable, _Value):
        return np.asarray(variable.read())
    return np.asarray(variable.numpy())


def write_h5(model: Any, file: Any) -> None:
    """Writes the model's state into an open, empty `h5py.File`."""
    for path, obj in walk(model):
        group = file.create_group(f"{path}/vars" if path else "vars")
        group.attrs["name"] = str(obj.name)
        if hasattr(obj, "save_own_variables"):  # Keras's hook: a layer that stores its own entries
            store: dict[str, Any] = {}
            obj.save_own_variables(store)
            for key, value in store.items():
                group.create_dataset(key, data=np.asarray(value))
            continue
        for index, variable in enumerate(own_variables(obj)):
            group.create_dataset(str(index), data=_read(variable))


def read_h5(model: Any, file: Any, skip_mismatch: bool = False) -> None:
    """Assigns the model's state from an open `h5py.File`. Every value is read and checked first: a count or
    shape that does not fit raises Keras's ValueError naming the objects, and no variable changes."""
    from tapejax.keras.optimizers import Optimizer

    assignments: list[tuple[Any, np.ndarray]] = []
    errors: list[tuple[Any, str]] = []
    for path, obj in walk(model):
        name = f"{path}/vars" if path else "vars"
        stored = file[name] if name in file else {}
        if hasattr(obj, "load_own_variables"):
            obj.load_own_variables({key: np.asarray(stored[key]) for key in stored})
            continue
        variables = own_variables(obj)
        if isinstance(obj, Optimizer) and len(stored) != len(variables):
            warnings.warn(f"Skipping variable loading for optimizer '{obj.name}', because it has {len(variables)} "
                          f"variables whereas the saved optimizer has {len(stored)} variables. ", stacklevel=3)
            continue
        error = _mismatch(obj, stored, variables)
        if error is not None:
            errors.append((obj, error))
            continue
        assignments += [(v, np.asarray(stored[str(i)])) for i, v in enumerate(variables)]
    if errors:
        message = (f"A total of {len(errors)} objects could not be loaded. Example error message for object "
                   f"{errors[0][0]!r}:\n\n{errors[0][1]}\n\nList of objects that could not be loaded:\n"
                   f"[{', '.join(repr(obj) for obj, _ in errors)}]")
        if not skip_mismatch:
            raise ValueError(message)
        warnings.warn(message, stacklevel=3)
    for variable, value in assignments:
        if isinstance(variable, _Value):
            variable.write(value)
        else:
            variable.assign(value.astype(variable.dtype.as_numpy_dtype))


def _mismatch(obj: Any, stored: Any, variables: list[Any]) -> str | None:
    if len(stored) != len(variables):
        if not variables and not getattr(obj, "built", True):
            return (f"Layer '{obj.name}' was never built and thus it doesn't have any variables. However the "
                    f"weights file lists {len(stored)} variables for this layer. Build the model (call it on a "
                    "batch, or `model.build(input_shape)`) before loading weights into it.")
        return (f"Layer '{obj.name}' expected {len(variables)} variables, but received {len(stored)} variables "
                f"during loading. Expected: {[v.name for v in variables]}")
    for index, variable in enumerate(variables):
        shape = tuple(stored[str(index)].shape)
        if shape != tuple(variable.shape):
            path = getattr(variable, "path", variable.name)
            return ("The shape of the target variable and the shape of the target value in "
                    f"`variable.assign(value)` must match. variable.shape={tuple(variable.shape)}, Received: "
                    f"value.shape={shape}. Target variable: {path}")
    return None


def _h5py() -> Any:
    try:
        import h5py
    except ImportError:
        raise ImportError("Keras's weights files are HDF5: `pip install h5py` (or tapejax[keras]).") from None
    return h5py


def save_weights(model: Any, filepath: Any, overwrite: bool = True, max_shard_size: Any = None) -> None:
    """`model.save_weights(filepath)`: see `Model.save_weights`."""
    filepath = os.fspath(filepath)
    if not filepath.endswith(".weights.h5"):
        raise ValueError(f"The filename must end in `.weights.h5`. Received: filepath={filepath}")
    if max_shard_size is not None:
        raise NotImplementedError("save_weights(max_shard_size=...) (sharded weights files) is not implemented "
                                  "in tapejax.")
    if not overwrite and os.path.exists(filepath) and not _ask_to_overwrite(filepath):
        return
    h5py = _h5py()
    temporary = f"{filepath}.tmp{os.getpid()}"  # written whole, then renamed: never a half-written file
    try:
        with h5py.File(temporary, "w") as file:
            write_h5(model, file)
        os.replace(temporary, filepath)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def load_weights(model: Any, filepath: Any, skip_mismatch: bool = False) -> None:
    """`model.load_weights(filepath)`: see `Model.load_weights`."""
    filepath = os.fspath(filepath)
    if filepath.endswith(".keras"):
        from tapejax.keras import saving_archive

        saving_archive.load_weights_from_archive(model, filepath, skip_mismatch)
        return
    if not filepath.endswith(".weights.h5"):
        raise ValueError(f"File format not supported: filepath={filepath}. tapejax's Keras reads `.keras` and "
                         "`.weights.h5` files (Keras 3's formats); legacy `.h5` files and TF checkpoints are not "
                         "supported here (use tf.train.Checkpoint for those).")
    h5py = _h5py()
    with h5py.File(filepath, "r") as file:
        read_h5(model, file, skip_mismatch)


def _ask_to_overwrite(filepath: str) -> bool:
    answer = input(f"[WARNING] {filepath} already exists - overwrite? [y/n]").strip().lower()
    while answer not in ("y", "n"):
        answer = input('Enter "y" (overwrite) or "n" (cancel).').strip().lower()
    return answer == "y"
