"""`tf.data.experimental`: the aliases TF 2.21 still exports, as functions of the Dataset methods."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapejax.data.api import Dataset, Optional as Optional  # noqa: F401 (re-exported: TF's name)
from tapejax.data.api import Options as _Options
from tapejax.data.stage import AUTOTUNE as AUTOTUNE  # noqa: F401
from tapejax.data.stage import INFINITE as INFINITE_CARDINALITY  # noqa: F401
from tapejax.data.stage import UNKNOWN as UNKNOWN_CARDINALITY  # noqa: F401

ThreadingOptions = OptimizationOptions = DistributeOptions = AutotuneOptions = type(_Options().threading)
from tapejax.data.csv_files import make_csv_dataset as make_csv_dataset  # noqa: E402

choose_from_datasets = Dataset.choose_from_datasets
sample_from_datasets = Dataset.sample_from_datasets
load = Dataset.load


def save(dataset: Dataset, path: Any, compression: Any = None, shard_func: Any = None,
         checkpoint_args: Any = None) -> None:
    dataset.save(path, compression, shard_func, checkpoint_args)


def group_by_window(key_func: Callable, reduce_func: Callable, window_size: Any = None,
                    window_size_func: Callable | None = None) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size, window_size_func)


def bucket_by_sequence_length(element_length_func: Callable, bucket_boundaries: Any, bucket_batch_sizes: Any,
                              padded_shapes: Any = None, padding_values: Any = None,
                              pad_to_bucket_boundary: bool = False, no_padding: bool = False,
                              drop_remainder: bool = False) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
        pad_to_bucket_boundary, no_padding, drop_remainder)


def cardinality(dataset: Dataset) -> Any:
    return dataset.cardinality()


def assert_cardinality(expected_cardinality: Any) -> Callable[[Dataset], Dataset]:
    def apply(dataset: Dataset) -> Dataset:
        from tapejax.data.transforms import TakeDataset, _count
        out = TakeDataset(dataset, -1)
        out._card = _count(expected_cardinality)
        return out
    return apply


def enumerate_dataset(start: int = 0) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.enumerate(start)


def unbatch() -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.unbatch()


def unique() -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.unique()


def scan(initial_state: Any, scan_func: Callable) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.scan(initial_state, scan_func)


def take_while(predicate: Callable) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.take_while(predicate)


def shuffle_and_repeat(buffer_size: int, count: int | None = None, seed: int | None = None
                       ) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def map_and_batch(map_func: Callable, batch_size: int, num_parallel_batches: Any = None,
                  drop_remainder: bool = False, num_parallel_calls: Any = None) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.map(map_func).batch(batch_size, drop_remainder)


def parallel_interleave(map_func: Callable, cycle_length: int, block_length: int = 1, sloppy: bool = False,
                        buffer_output_elements: Any = None, prefetch_input_elements: Any = None
                        ) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def get_single_element(dataset: Dataset) -> Any:
    return dataset.get_single_element()


def get_next_as_optional(iterator: Any) -> Any:
    return iterator.get_next_as_optional()


def from_list(elements: list, name: str | None = None) -> Dataset:
    """The elements of a list, each a nest of the same structure (`tf.data.experimental.from_list`)."""
    if not elements:
        raise ValueError("Invalid `elements`. `elements` should not be empty.")
    from tapejax import nest
    from tapejax.data.stage import stack
    from tapejax.data.structure import Structure
    structure, first = Structure.split(elements[0], "from_list")
    leaves = [first] + [structure.flatten_like(e, "from_list") for e in elements[1:]]
    return Dataset.from_tensor_slices(nest.pack_sequence_as(structure.template, list(stack(leaves, "from_list")))
                                      if len(structure) > 1 or nest.is_nested(structure.template)
                                      else stack(leaves, "from_list")[0])


def prefetch_to_device(device: str, buffer_size: Any = None) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.prefetch(buffer_size or 1)


def copy_to_device(target_device: str, source_device: str = "/cpu:0") -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset


def ignore_errors(log_warning: bool = False) -> Callable[[Dataset], Dataset]:
    raise NotImplementedError("tf.data.experimental.ignore_errors is not implemented in tapejax.")
