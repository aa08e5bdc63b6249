"""tf.train.Checkpoint: object-based checkpoints in TensorFlow's own format.

`save`/`write` walk the object graph (checkpoint_graph.py) and write every variable's value with the graph
itself into a tensor bundle (checkpoint_bundle.py). `restore`/`read` walk the saved graph and the live objects
side by side, read and check every matched value (shape, dtype, checksum) and only then assign them all: a
mismatch or a corrupt file raises with every variable unchanged. Values whose variables do not exist yet are
kept pending and restored when those variables appear (checkpoint_pending.py), as TF's deferred restoration.
"""

from __future__ import annotations

import functools
import os
import weakref
from typing import Any

import numpy as np

from . import checkpoint_graph as graph_lib
from . import checkpoint_pending
from .checkpoint_bundle import BundleReader, write_bundle
from .concrete_function import init_scope
from .errors import InvalidArgumentError, NotFoundError
from .variable import Variable


def _check_trackable(name: str, value: Any) -> None:
    if not (graph_lib.holds_state(value) or isinstance(value, list | tuple | dict)
            or graph_lib._has_attributes(value)):
        raise ValueError(f"`Checkpoint` was expecting {name} to be a trackable object (an object derived from "
                         f"`Trackable`), got {value!r}. If you believe this object should be trackable (i.e. it "
                         "is part of the TensorFlow Python API and manages state), please open an issue.")


class Checkpoint:
    """Saves and restores a group of objects in TF's checkpoint format (`tf.train.Checkpoint`).

    Objects are matched by the names of the attributes, keys and indices that lead to them, so a checkpoint
    written by TensorFlow restores into the same program on tapejax, and the reverse.

    >>> import tapejax as tf, tempfile, os
    >>> v = tf.Variable(1.0)
    >>> ckpt = tf.train.Checkpoint(v=v)
    >>> path = ckpt.save(os.path.join(tempfile.mkdtemp(), "ckpt"))
    >>> os.path.basename(path)
    'ckpt-1'
    >>> _ = v.assign(5.0)
    >>> ckpt.restore(path).assert_consumed() and float(v.numpy())
    1.0
    """

    def __init__(self, root: Any = None, **kwargs: Any):
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_objects", {})
        object.__setattr__(self, "_save_counter", None)
        if root is not None:
            _check_trackable("root", root)
        for name, value in sorted(kwargs.items()):
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):  # a public attribute set later is tracked, as in TF
            _check_trackable(name, value)
            self._objects[name] = value
            checkpoint_pending.attached(value)
        object.__setattr__(self, name, value)

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        edges = graph_lib.children(self._root) if self._root is not None else []
        edges += sorted(self._objects.items())
        if self._save_counter is not None:
            edges.append(("save_counter", self._save_counter))
        return edges

    @property
    def save_counter(self) -> Variable:
        """The number of `save` calls (an int64 variable, saved with the checkpoint), created when first used."""
        if self._save_counter is None:
            with init_scope():
                object.__setattr__(self, "_save_counter",
                                   Variable(0, dtype="int64", trainable=False, name="save_counter"))
        return self._save_counter

    def write(self, file_prefix: str, options: Any = None) -> str:
        """Writes `file_prefix.index` and `file_prefix.data-00000-of-00001`, atomically, and returns the prefix;
        unlike `save`, no counter and no `checkpoint` state file. `options` is accepted and ignored."""
        file_prefix = os.fspath(file_prefix)
        data, leaves = graph_lib.serialize(self)
        directory = os.path.dirname(file_prefix)
        if directory:
            os.makedirs(directory, exist_ok=True)
        tensors: list[tuple[str, Any]] = [(graph_lib.OBJECT_GRAPH_KEY, [data])]
        tensors += [(key, functools.partial(graph_lib.value_of, leaf)) for key, leaf in leaves]
        write_bundle(file_prefix, tensors)  # each value read when written: no copy of the whole model
        return file_prefix

    def save(self, file_prefix: str, options: Any = None) -> str:
        """Adds 1 to `save_counter`, writes `file_prefix-<save_counter>` and records it in the directory's
        `checkpoint` file (read by `tf.train.latest_checkpoint`); returns that path."""
        from .checkpoint_management import update_checkpoint_state

        counter = self.save_counter  # created before writing, so that it is saved
        with init_scope():
            counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(counter.numpy())}")
        update_checkpoint_state(os.path.dirname(path), path, [path])
        return path

    def read(self, save_path: str, options: Any = None) -> CheckpointLoadStatus:
        """Restores the checkpoint written at `save_path` (see `restore`)."""
        return self.restore(save_path)

    def restore(self, save_path: str | None, options: Any = None) -> Any:
        """Restores every matched variable now and the others when they are created; returns a status.

        Raises:
          NotFoundError: no checkpoint at `save_path`.
          ValueError: a saved value's shape is not its variable's (nothing is restored).
          InvalidArgumentError: a saved value's dtype is not its variable's (nothing is restored).
          DataLossError: the files are truncated or corrupt (nothing is restored).
        """
        if save_path is None:
            return InitializationOnlyStatus()
        save_path = os.fspath(save_path)
        try:
            reader = BundleReader(save_path)
        except NotFoundError as error:
            raise NotFoundError(None, None, f"Error when restoring from checkpoint or SavedModel at {save_path}: "
                                f"{error.message}\nPlease double-check that the path is correct. You may be "
                                "missing the checkpoint suffix (e.g. the '-1' in 'path/to/ckpt-1').") from None
        if graph_lib.OBJECT_GRAPH_KEY not in reader.entries:
            raise NotImplementedError(f"{save_path} is a name-based checkpoint (tf.compat.v1.train.Saver) without "
                                      "an object graph: tapejax restores object-based checkpoints only.")
        if "save_counter/.ATTRIBUTES/VARIABLE_VALUE" in reader.entries:
            self.save_counter  # noqa: B018  (created so that the saved count is restored into it)
        restoration = _Restoration(self, graph_lib.parse(reader.read(graph_lib.OBJECT_GRAPH_KEY)[0]), reader)
        for old in list(checkpoint_pending.PENDING):  # a newer restore of the same objects supersedes it
            if old.root() is self:
                checkpoint_pending.PENDING.remove(old)
        restoration.apply()
        if restoration.pending():
            checkpoint_pending.PENDING.append(restoration)
        return CheckpointLoadStatus(restoration)


class _Restoration:
    """One `restore` call: the saved graph, its reader, and which value nodes are restored so far."""

    def __init__(self, checkpoint: Checkpoint, graph: Any, reader: BundleReader):
        # Held weakly, as TF holds deferred values on the objects themselves: the matched objects (the
        # checkpoint, a model, an optimizer...) from which a later walk may find new variables. The restoration
        # lives while one of them does, even when the Checkpoint object itself is gone.
        self.anchors: list[tuple[weakref.ref, int]] = [(weakref.ref(checkpoint), 0)]
        self.graph, self.reader = graph, reader
        self.values = {i: node.attributes[0].checkpoint_key for i, node in enumerate(graph.nodes)
                       if any(a.name == "VARIABLE_VALUE" for a in node.attributes)}
        self.restored: set[int] = set()
        self.unmatched: list[Any] = []

    def offer(self, value: Any) -> None:
        """`value` joined an object (checkpoint_pending.attached): restores the values whose variables appeared
        since, and leaves the pending list when done or when its objects are gone."""
        if value is not None and not graph_lib.holds_state(value):
            return
        if self.pending():
            self.apply()
        if not self.pending() and self in checkpoint_pending.PENDING:
            checkpoint_pending.PENDING.remove(self)

    def roots(self) -> list[tuple[Any, int]]:
        return [(obj, node_id) for ref, node_id in self.anchors if (obj := ref()) is not None]

    def root(self) -> Any:
        return self.anchors[0][0]()

    def pending(self) -> bool:
        return len(self.restored) < len(self.values) and any(ref() is not None for ref, _ in self.anchors)

    def apply(self) -> None:
        """Restores every value whose variable now exists and was not restored yet: all checked, then all set."""
        roots = self.roots()
        if not roots:
            return
        matched, self.unmatched = graph_lib.match(roots, self.graph)
        todo = [(node_id, obj) for node_id, obj in matched.items()
                if node_id in self.values and node_id not in self.restored and graph_lib.is_leaf(obj)]
        self.unmatched += [obj for node_id, obj in matched.items()
                           if graph_lib.is_leaf(obj) and node_id not in self.values]
        anchors = {node_id: ref for ref, node_id in self.anchors if ref() is not None}
        for node_id, obj in matched.items():
            if node_id not in anchors and not graph_lib.is_leaf(obj):
                try:
                    anchors[node_id] = weakref.ref(obj)
                except TypeError:  # lists and dicts: reached again through their owners
                    pass
        self.anchors = [(ref, node_id) for node_id, ref in anchors.items()]
        arrays = [(node_id, obj, self._checked(obj, self.values[node_id])) for node_id, obj in todo]
        with init_scope():
            for node_id, obj, array in arrays:
                if isinstance(obj, Variable):
                    obj.assign(array, read_value=False)
                else:
                    obj.write(array)
                self.restored.add(node_id)

    def _checked(self, leaf: Any, key: str) -> np.ndarray:
        array = self.reader.read(key)
        if isinstance(array, list):
            raise InvalidArgumentError(None, None, f"tensor_name = {key}; expected dtype "
                                       f"{_dtype_name(leaf)} does not equal original dtype string")
        if isinstance(leaf, Variable):
            expected = np.dtype(leaf.dtype.as_numpy_dtype)
            if array.dtype != expected:
                raise InvalidArgumentError(None, None, f"tensor_name = {key}; expected dtype {_dtype_name(leaf)} "
                                           f"does not equal original dtype {_tf_name(array.dtype)} [Op:RestoreV2]")
            if tuple(array.shape) != tuple(leaf.shape.as_list()):
                raise ValueError(f"Received incompatible tensor with shape {tuple(array.shape)} when attempting "
                                 f"to restore variable with shape {tuple(leaf.shape.as_list())} and name "
                                 f"{leaf.name}.")
        return array


def _tf_name(dtype: np.dtype) -> str:
    """TF's C++ type names, as its RestoreV2 error prints them."""
    return {"float32": "float", "float64": "double", "float16": "half"}.get(np.dtype(dtype).name,
                                                                            np.dtype(dtype).name)


def _dtype_name(leaf: Any) -> str:
    return _tf_name(leaf.dtype.as_numpy_dtype) if isinstance(leaf, Variable) else "float"


def _describe(graph: Any, node_id: int) -> str:
    return f"(root).{graph.nodes[node_id].attributes[0].checkpoint_key.rsplit('/.ATTRIBUTES', 1)[0]}"


class CheckpointLoadStatus:
    """What `Checkpoint.restore` returns: checks of what was matched, eagerly (as TF executes eagerly)."""

    def __init__(self, restoration: _Restoration):
        self._restoration = restoration

    def _refresh(self) -> _Restoration:
        restoration = self._restoration
        restoration.apply()  # objects created since restore count, as in TF
        return restoration

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Raises AssertionError unless every saved value was restored and every variable got one."""
        restoration = self._refresh()
        missing = sorted(set(restoration.values) - restoration.restored)
        if missing:
            raise AssertionError(f"Unresolved object in checkpoint {_describe(restoration.graph, missing[0])}: "
                                 f"{len(missing)} saved value(s) were not restored into any object, e.g. "
                                 + ", ".join(_describe(restoration.graph, i) for i in missing[:5]))
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        """Raises AssertionError if a variable that exists now found no value in the checkpoint."""
        unmatched = self._refresh().unmatched
        if unmatched:
            raise AssertionError(f"Found {len(unmatched)} Python objects that were not bound to checkpointed "
                                 "values, likely due to changes in the Python program. Showing "
                                 f"{min(len(unmatched), 10)} of {len(unmatched)} unmatched objects: "
                                 f"{unmatched[:10]}")
        return self

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        """Raises AssertionError unless at least one value was restored."""
        if not self._refresh().restored:
            raise AssertionError("Nothing except the root object matched a checkpointed value. Typically this "
                                 "means that the checkpoint does not match the Python program.")
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        """Says that a partial restore is intended (tapejax warns about none; returns the status)."""
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        """Nothing to run: values are restored eagerly."""

    def initialize_or_restore(self, session: Any = None) -> None:
        """Nothing to run: values are restored eagerly."""


class InitializationOnlyStatus:
    """What `restore(None)` returns: nothing was restored; variables keep their initial values."""

    def assert_consumed(self) -> Any:
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    assert_existing_objects_matched = assert_nontrivial_match = assert_consumed

    def expect_partial(self) -> InitializationOnlyStatus:
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        """Nothing to run."""

    def initialize_or_restore(self, session: Any = None) -> None:
        """Nothing to run: variables are initialized when created."""
