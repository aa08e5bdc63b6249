"""`tf.data.Dataset`'s public methods (the stages live in sources, transforms, batching, mapping, shuffling and
iteration), and the small public classes around it: DatasetSpec, Options, Optional."""

from __future__ import annotations

from collections.abc import Callable
import os
from typing import Any

import numpy as np

from tapejax._src import errors

from .stage import INFINITE, UNKNOWN, Stage


class Dataset(Stage):
    """A pipeline of elements (`tf.data.Dataset`), with TF's semantics; see README, "tf.data".

    >>> import tapejax as tf
    >>> ds = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4]).map(lambda x: x * 2).batch(3)
    >>> [b.numpy().tolist() for b in ds]
    [[2, 4, 6], [8]]
    """

    # -- sources --------------------------------------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """Element i holds row i of every component (tuples, dicts and namedtuples are structure)."""
        from .sources import TensorSliceDataset
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> Dataset:
        """One element: the whole value."""
        from .sources import TensorDataset
        return TensorDataset(tensors)

    @staticmethod
    def list_files(file_pattern: Any, shuffle: bool | None = None, seed: Any = None,
                   name: str | None = None) -> Dataset:
        """The files matching glob patterns as scalar strings, shuffled unless shuffle=False."""
        from .files import list_files
        return list_files(file_pattern, shuffle, seed)

    @staticmethod
    def range(*args: Any, output_type: Any = None, name: str | None = None) -> Dataset:
        """int64 elements as Python's `range(start, stop, step)`."""
        from tapejax._src import dtypes
        from .sources import RangeDataset
        return RangeDataset(*[int(np.asarray(getattr(a, "_value", a))) for a in args],
                            output_type=output_type or dtypes.int64)

    @staticmethod
    def from_generator(generator: Callable, output_types: Any = None, output_shapes: Any = None,
                       args: Any = None, output_signature: Any = None, name: str | None = None) -> Dataset:
        """The values a Python generator yields, checked against `output_signature`."""
        from .sources import GeneratorDataset, signature_from_types
        if output_signature is None:
            if output_types is None:
                raise TypeError("To specify the output signature you need to provide either the "
                                "`output_signature` argument or the `output_types` argument.")
            output_signature = signature_from_types(output_types, output_shapes)
        return GeneratorDataset(generator, output_signature, tuple(args) if args is not None else ())

    @staticmethod
    def zip(*args: Any, datasets: Any = None, name: str | None = None) -> Dataset:
        """Elements of the datasets side by side, as a nest shaped as the arguments; ends with the shortest."""
        from .transforms import ZipDataset
        if datasets is None:
            datasets = args[0] if len(args) == 1 else args
        return ZipDataset(datasets)

    @staticmethod
    def choose_from_datasets(datasets: Any, choice_dataset: Dataset, stop_on_empty_dataset: bool = True) -> Dataset:
        """Element i from `datasets[choice_i]` (`choice_dataset`: int64 scalars); with `stop_on_empty_dataset`
        the dataset ends at the first choice of an exhausted input, else such choices are skipped."""
        from .sampling import ChooseDataset
        return ChooseDataset(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(datasets: Any, weights: Any = None, seed: Any = None,
                             stop_on_empty_dataset: bool = False, rerandomize_each_iteration: Any = None) -> Dataset:
        """Each element from one of `datasets` drawn at random with probabilities `weights` (uniform by default).

        Differences from TensorFlow: the draws come from numpy's generator, so the order differs from TF's for
        the same seed (the elements and the proportions do not); `weights` as a Dataset is not supported."""
        from .sampling import SampleDataset
        return SampleDataset(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)

    @staticmethod
    def load(path: Any, element_spec: Any = None, compression: Any = None, reader_func: Any = None) -> Dataset:
        """The dataset `Dataset.save` wrote under `path` (tapejax's file format: see data/snapshots.py)."""
        from .snapshots import load
        return load(path, element_spec, compression, reader_func)

    # -- transformations ------------------------------------------------------------------------------------

    def map(self, map_func: Callable, num_parallel_calls: Any = None, deterministic: Any = None,
            synchronous: Any = None, use_unbounded_threadpool: Any = None, name: str | None = None) -> Dataset:
        """`map_func` on each element, traced once and compiled; vectorised with jax.vmap when a `batch`
        follows. `num_parallel_calls` and `deterministic` are accepted: the order is always deterministic."""
        from .mapping import MapDataset
        return MapDataset(self, map_func, num_parallel_calls, deterministic)

    def filter(self, predicate: Callable, name: str | None = None) -> Dataset:
        from .transforms import FilterDataset
        return FilterDataset(self, predicate)

    def flat_map(self, map_func: Callable, name: str | None = None) -> Dataset:
        from .mapping import FlatMapDataset
        return FlatMapDataset(self, map_func)

    def interleave(self, map_func: Callable, cycle_length: Any = None, block_length: Any = None,
                   num_parallel_calls: Any = None, deterministic: Any = None, name: str | None = None) -> Dataset:
        from .mapping import InterleaveDataset
        return InterleaveDataset(self, map_func, cycle_length, block_length, num_parallel_calls, deterministic)

    def batch(self, batch_size: Any, drop_remainder: bool = False, num_parallel_calls: Any = None,
              deterministic: Any = None, name: str | None = None) -> Dataset:
        from .batching import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size: Any, padded_shapes: Any = None, padding_values: Any = None,
                     drop_remainder: bool = False, name: str | None = None) -> Dataset:
        from .batching import PaddedBatchDataset
        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def unbatch(self, name: str | None = None) -> Dataset:
        from .batching import UnbatchDataset
        return UnbatchDataset(self)

    def rebatch(self, batch_size: Any, drop_remainder: bool = False, name: str | None = None) -> Dataset:
        from .batching import RebatchDataset
        return RebatchDataset(self, batch_size, drop_remainder)

    def window(self, size: Any, shift: Any = None, stride: Any = 1, drop_remainder: bool = False,
               name: str | None = None) -> Dataset:
        from .batching import WindowDataset
        return WindowDataset(self, size, shift, stride, drop_remainder)

    def shuffle(self, buffer_size: Any, seed: Any = None, reshuffle_each_iteration: bool | None = None,
                name: str | None = None) -> Dataset:
        """TF's buffer semantics; the order is a different one from TF's for the same seed (numpy's RNG)."""
        from .shuffling import ShuffleDataset
        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count: Any = None, name: str | None = None) -> Dataset:
        from .transforms import RepeatDataset
        return RepeatDataset(self, count)

    def take(self, count: Any, name: str | None = None) -> Dataset:
        from .transforms import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count: Any, name: str | None = None) -> Dataset:
        from .transforms import SkipDataset
        return SkipDataset(self, count)

    def take_while(self, predicate: Callable, name: str | None = None) -> Dataset:
        from .transforms import TakeWhileDataset
        return TakeWhileDataset(self, predicate)

    def shard(self, num_shards: Any, index: Any, name: str | None = None) -> Dataset:
        from .transforms import ShardDataset
        return ShardDataset(self, num_shards, index)

    def concatenate(self, dataset: Dataset, name: str | None = None) -> Dataset:
        from .transforms import ConcatenateDataset
        return ConcatenateDataset(self, dataset)

    def enumerate(self, start: Any = 0, name: str | None = None) -> Dataset:
        from .transforms import EnumerateDataset
        return EnumerateDataset(self, start)

    def cache(self, filename: str = "", name: str | None = None) -> Dataset:
        """Keeps the first complete pass in memory, and with a `filename` also in a file that later passes and
        other datasets cached under that name (in this process or another) read instead of the input.

        Differences from TensorFlow: the file is tapejax's (`filename` + ".tapejax-cache"), not TF's tensor
        bundle (`filename.index`), so TF and tapejax do not share cache files."""
        from .transforms import CacheDataset
        value = getattr(filename, "_value", filename)
        value = np.asarray(value).item() if not isinstance(value, str | bytes) and hasattr(value, "shape") else value
        return CacheDataset(self, os.fsdecode(value) if value else "")

    def group_by_window(self, key_func: Callable, reduce_func: Callable, window_size: Any = None,
                        window_size_func: Callable | None = None, name: str | None = None) -> Dataset:
        """Groups elements by `key_func` (int64); each window of `window_size` (or `window_size_func(key)`)
        elements of a key is reduced by `reduce_func(key, window_dataset)`; the windows left at the end are
        reduced in ascending key order, as in TF."""
        from .grouping import GroupByWindowDataset
        return GroupByWindowDataset(self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(self, element_length_func: Callable, bucket_boundaries: Any,
                                  bucket_batch_sizes: Any, padded_shapes: Any = None, padding_values: Any = None,
                                  pad_to_bucket_boundary: bool = False, no_padding: bool = False,
                                  drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """Batches elements of similar lengths together: bucket i holds lengths in
        [bucket_boundaries[i-1], bucket_boundaries[i]) and is padded-batched by bucket_batch_sizes[i]."""
        from .grouping import bucket_by_sequence_length
        return bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                         padded_shapes, padding_values, pad_to_bucket_boundary, no_padding,
                                         drop_remainder)

    def save(self, path: Any, compression: Any = None, shard_func: Any = None, checkpoint_args: Any = None,
             name: str | None = None) -> None:
        """Writes the elements of one pass under the directory `path`, for `Dataset.load`.

        Differences from TensorFlow: tapejax's own file format (data/snapshots.py), not TF's snapshot format;
        `compression`, `shard_func` and `checkpoint_args` are accepted and ignored."""
        from .snapshots import save
        save(self, path, compression, shard_func, checkpoint_args)

    def unique(self, name: str | None = None) -> Dataset:
        from .transforms import UniqueDataset
        return UniqueDataset(self)

    def scan(self, initial_state: Any, scan_func: Callable, name: str | None = None) -> Dataset:
        from .mapping import ScanDataset
        return ScanDataset(self, initial_state, scan_func)

    def prefetch(self, buffer_size: Any, name: str | None = None) -> Dataset:
        """Computes up to `buffer_size` elements ahead in a background thread."""
        from .iteration import PrefetchDataset
        return PrefetchDataset(self, buffer_size)

    def apply(self, transformation_func: Callable) -> Dataset:
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"`transformation_func` must return a `tf.data.Dataset` object. Got {type(out)}.")
        return out

    def with_options(self, options: Options, name: str | None = None) -> Dataset:
        from .transforms import TakeDataset
        out = TakeDataset(self, -1)
        out._tf_name = "_OptionsDataset"
        out._options = self.options().merge(options)
        return out

    def options(self) -> Options:
        return getattr(self, "_options", None) or Options()

    # -- consuming --------------------------------------------------------------------------------------------

    def reduce(self, initial_state: Any, reduce_func: Callable, name: str | None = None) -> Any:
        from .mapping import reduce
        return reduce(self, initial_state, reduce_func)

    def get_single_element(self, name: str | None = None) -> Any:
        it = self._elements()
        first = next(it, None)
        if first is None:
            raise errors.InvalidArgumentError(None, None, "Dataset was empty.")
        if next(it, None) is not None:
            raise errors.InvalidArgumentError(None, None, "Dataset had more than one element.")
        return self._structure.tensors(first)

    def __iter__(self) -> Any:
        from .iteration import OwnedIterator
        return OwnedIterator(self)

    def as_numpy_iterator(self) -> Any:
        from .iteration import NumpyIterator
        return NumpyIterator(self)


class DatasetSpec:
    """The type of a dataset-valued component (`tf.data.DatasetSpec`): a window's element."""

    def __init__(self, element_spec: Any, dataset_shape: Any = ()):
        from tapejax._src.tensor import TensorShape
        self.element_spec = element_spec
        self.shape = TensorShape(dataset_shape)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, DatasetSpec) and (self.element_spec, self.shape) == (other.element_spec,
                                                                                     other.shape)

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        return f"DatasetSpec({self.element_spec}, TensorShape({self.shape.as_list()}))"


class _OptionGroup:
    """A group of options (threading, optimization...): any attribute may be set, unset ones are None."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return None


class _Group:
    """An option group of `Options` as a class attribute (TF's `tf.data.Options.threading` is a property)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return instance.__dict__.setdefault(self.name, _OptionGroup())

    def __set__(self, instance: Any, value: Any) -> None:
        instance.__dict__[self.name] = value


class Options:
    """`tf.data.Options`: accepted and kept; tapejax's pipelines are always deterministic, and its threads are
    its own (`prefetch`), so no option changes how a pipeline runs."""

    threading = _Group()
    experimental_optimization = _Group()
    experimental_distribute = _Group()
    autotune = _Group()

    def __init__(self):
        for group in ("threading", "experimental_optimization", "experimental_distribute", "autotune"):
            getattr(self, group)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return None

    def merge(self, options: Options) -> Options:
        out = Options()
        out.__dict__.update(self.__dict__)
        out.__dict__.update({k: v for k, v in options.__dict__.items() if v is not None})
        return out


class Optional:
    """`tf.experimental.Optional`: a value or nothing (what `get_next_as_optional` returns)."""

    def __init__(self, value: Any, element_spec: Any):
        self._value, self.element_spec = value, element_spec

    @staticmethod
    def from_value(value: Any) -> Optional:
        return Optional(value, None)

    @staticmethod
    def empty(element_spec: Any) -> Optional:
        return Optional(None, element_spec)

    def has_value(self, name: str | None = None) -> Any:
        from tapejax._src.tensor import EagerTensor
        return EagerTensor(np.asarray(self._value is not None))

    def get_value(self, name: str | None = None) -> Any:
        if self._value is None:
            raise errors.InvalidArgumentError(None, None, "The optional does not have a value.")
        return self._value


__all__ = ["Dataset", "DatasetSpec", "INFINITE", "Optional", "Options", "UNKNOWN"]
