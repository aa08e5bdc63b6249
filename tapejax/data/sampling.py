"""`choose_from_datasets` and `sample_from_datasets`: elements drawn from several datasets, by a dataset of
indices or at random by weights (TF's DirectedInterleave)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from tapejax._src import dtypes, errors

from .api import Dataset
from .stage import INFINITE, UNKNOWN
from .structure import most_specific_compatible


def _common_structure(datasets: list[Dataset], api: str) -> Any:
    if not datasets:
        raise ValueError(f"Invalid `datasets`. `datasets` should not be empty.")
    first = datasets[0]._structure
    specs = list(first.specs)
    for d in datasets[1:]:
        if d._structure.template != first.template or len(d._structure.specs) != len(specs):
            raise TypeError(f"Invalid `datasets`. `datasets` must have compatible structure, got "
                            f"{datasets[0].element_spec} and {d.element_spec}.")
        merged = [most_specific_compatible(a, b) for a, b in zip(specs, d._structure.specs)]
        if any(m is None for m in merged):
            raise TypeError(f"Invalid `datasets`. `datasets` must have compatible element specs, got "
                            f"{datasets[0].element_spec} and {d.element_spec}.")
        specs = merged
    return first.with_specs(tuple(specs))


class ChooseDataset(Dataset):
    """Element i comes from `datasets[choice_i]`; with `stop_on_empty_dataset` the pass ends at the first choice
    of an exhausted dataset, else such a choice is skipped."""

    _tf_name = "_DirectedInterleaveDataset"

    def __init__(self, datasets: list[Dataset], choice_dataset: Dataset, stop_on_empty_dataset: bool = True):
        self._datasets = list(datasets)
        self._structure = _common_structure(self._datasets, "choose_from_datasets")
        spec = choice_dataset.element_spec
        if getattr(spec, "dtype", None) != dtypes.int64 or spec.shape.rank != 0:
            raise TypeError(f"Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar of "
                            f"`tf.int64` dtype, but got {spec}.")
        self._choices, self._stop = choice_dataset, bool(stop_on_empty_dataset)
        self._card = UNKNOWN

    def _elements(self) -> Iterator[tuple]:
        passes = [d._elements() for d in self._datasets]
        done = [False] * len(passes)
        for (choice,) in self._choices._elements():
            i = int(choice)
            if not 0 <= i < len(passes):
                raise errors.InvalidArgumentError(None, None, f"Selector index out of range: {i} >= "
                                                  f"{len(passes)}")
            if done[i]:
                if self._stop:
                    return
                continue
            element = next(passes[i], None)
            if element is None:
                done[i] = True
                if self._stop or all(done):
                    return
                continue
            yield element


class SampleDataset(Dataset):
    """Each element from a dataset drawn at random by `weights`; an exhausted dataset ends the pass
    (`stop_on_empty_dataset`) or leaves the draw (its weight dropped)."""

    _tf_name = "_DirectedInterleaveDataset"

    def __init__(self, datasets: list[Dataset], weights: Any = None, seed: Any = None,
                 stop_on_empty_dataset: bool = False, rerandomize_each_iteration: Any = None):
        self._datasets = list(datasets)
        self._structure = _common_structure(self._datasets, "sample_from_datasets")
        n = len(self._datasets)
        if weights is None:
            weights = np.full(n, 1.0 / n)
        elif isinstance(weights, Dataset):
            raise NotImplementedError("tapejax: `weights` given as a Dataset is not supported; pass a list.")
        self._weights = np.asarray(getattr(weights, "_value", weights), np.float64).reshape(-1)
        if len(self._weights) != n:
            raise ValueError(f"Invalid `weights`. The shape of `weights` should be compatible with `[len(datasets)]` "
                             f"but is {list(self._weights.shape)}.")
        self._seed = None if seed is None else int(np.asarray(getattr(seed, "_value", seed)))
        self._stop = bool(stop_on_empty_dataset)
        self._rerandomize = bool(rerandomize_each_iteration)
        self._pass = 0
        cards = [d._card for d in self._datasets]
        self._card = INFINITE if all(c == INFINITE for c in cards) else UNKNOWN

    def _elements(self) -> Iterator[tuple]:
        seed = self._seed if self._seed is None or not self._rerandomize else self._seed + self._pass
        self._pass += 1
        rng = np.random.default_rng(seed)
        passes = [d._elements() for d in self._datasets]
        weights = self._weights.copy()
        while weights.sum() > 0:
            i = int(rng.choice(len(passes), p=weights / weights.sum()))
            element = next(passes[i], None)
            if element is None:
                if self._stop:
                    return
                weights[i] = 0.0
                continue
            yield element


__all__ = ["ChooseDataset", "SampleDataset"]
