"""tf.keras.layers that turn values into categories: CategoryEncoding (integer ids to one-hot, multi-hot or count
vectors) and Discretization (numbers to the ids of the bins they fall in, encoded the same ways).

The encodings follow Keras 3 on TF, rank by rank: a scalar is a batch of one id; `one_hot` adds an axis of
`depth` (replacing a last axis of size 1); `multi_hot` and `count` reduce a vector to one row and a matrix row by
row (TF's bincount: ids >= depth count nowhere, a negative id is an InvalidArgumentError); from rank 3 on they
reduce axis 1 (Keras's one-hot path: negative ids count nowhere). Hashing hashes values into such ids with TF's
string hashes (tapejax/ops/string_hashes.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras.layers import Layer

_MODES = ("one_hot", "multi_hot", "count")


def encode(ids: Any, output_mode: str, depth: int, dtype: Any, count_weights: Any = None,
           sparse: bool = False) -> Any:
    """Keras 3's `encode_categorical_inputs` for the modes other than "int" (see the module docstring)."""
    ids = tf.convert_to_tensor(ids)
    ids = tf.cast(ids, tf.int64) if not ids.dtype.is_integer else ids  # TF truncates floats to ids
    if ids.shape.rank == 0:
        ids = tf.reshape(ids, [1])
    rank = ids.shape.rank
    if output_mode == "one_hot":
        if rank > 1 and ids.shape[-1] == 1:
            ids = tf.squeeze(ids, -1)
        outputs = tf.one_hot(ids, depth, dtype=dtype)
    else:
        if rank <= 2:
            _check_non_negative(ids)
        hot = tf.one_hot(ids, depth, dtype=dtype)
        if count_weights is not None:
            hot = hot * tf.expand_dims(count_weights, -1)
        reduce = tf.reduce_sum if output_mode == "count" else tf.reduce_max
        outputs = reduce(hot, axis=1 if rank > 1 else 0)
    return tf.sparse.from_dense(outputs) if sparse else outputs


def _check_non_negative(ids: Any) -> None:
    """TF's DenseBincount error for a negative id; only where the ids are known (not inside tf.function)."""
    values = tf.get_static_value(ids)
    if values is not None and values.size and values.min() < 0:
        raise tf.errors.InvalidArgumentError(
            None, None, f"Input 'in' must be non-negative! Negative input value found: {values.min()} "
            "[Op:DenseBincount]")


class CategoryEncoding(Layer):
    """Encodes integer ids below `num_tokens` (`tf.keras.layers.CategoryEncoding`) as one-hot, multi-hot or count
    vectors of the layer's dtype (float32 by default); `count_weights=` weighs each id's count in "count" mode.
    `sparse=True` returns a tf.SparseTensor.

    >>> import tapejax as tf
    >>> tf.keras.layers.CategoryEncoding(4)(tf.constant([[0, 2], [3, 3]])).numpy()
    array([[1., 0., 1., 0.],
           [0., 0., 0., 1.]], dtype=float32)

    Differences from TensorFlow: inside tf.function a negative id counts nowhere (TF raises
    InvalidArgumentError when the function runs). For inputs of rank 3 or more in "multi_hot" or "count" mode,
    Keras's symbolic output shape keeps axis 1 and drops axis -1, while its call (and tapejax) reduce axis 1;
    tapejax's symbolic shape is the call's.
    """

    _built_at_init = True

    def __init__(self, num_tokens: int | None = None, output_mode: str = "multi_hot", sparse: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        output_mode = "multi_hot" if output_mode == "binary" else output_mode  # Keras 2's name
        if output_mode not in _MODES:
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                             "beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        self.num_tokens, self.output_mode, self.sparse = num_tokens, output_mode, sparse

    def call(self, inputs: Any, count_weights: Any = None) -> Any:
        if count_weights is not None:
            if self.output_mode != "count":
                raise ValueError("`count_weights` is not used when `output_mode` is not `'count'`. Received "
                                 f"`count_weights={count_weights}`.")
            count_weights = tf.cast(tf.convert_to_tensor(count_weights), self.dtype)
        return encode(inputs, self.output_mode, self.num_tokens, self.dtype, count_weights, self.sparse)

    def get_config(self) -> dict[str, Any]:
        """Keras 3's keys (which leave `sparse` out)."""
        config = {k: v for k, v in super().get_config().items() if k != "sparse"}
        return {**config, "num_tokens": self.num_tokens, "output_mode": self.output_mode}


class Discretization(Layer):
    """Buckets numbers by `bin_boundaries` (`tf.keras.layers.Discretization`): with boundaries b, bin i holds
    the values in [b[i-1], b[i]) (NaN goes to the last bin). "int" mode returns the bins' ids as int32; the
    other modes encode them as CategoryEncoding does, with `len(bin_boundaries) + 1` tokens. Inputs are compared
    as float32, as Keras casts them. `adapt(data)` sets `num_bins` boundaries at the quantiles of `data` (Keras 3's
    approximate summary, to `epsilon`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0])(tf.constant([[-0.5, 0.0, 0.5, 2.0]])).numpy()
    array([[0, 1, 1, 2]], dtype=int32)
    """

    _built_at_init = True

    def __init__(self, bin_boundaries: Any = None, num_bins: int | None = None, epsilon: float = 0.01,
                 output_mode: str = "int", sparse: bool = False, dtype: Any = None, name: str | None = None):
        super().__init__(name=name, dtype=dtype)
        if sparse and output_mode == "int":
            raise ValueError("`sparse=True` may only be used if `output_mode` is `'one_hot'`, `'multi_hot'`, or "
                             f"`'count'`. Received: sparse={sparse} and output_mode={output_mode}")
        if output_mode not in ("int", *_MODES):
            raise ValueError("Unknown value for `output_mode` argument of Discretization. Allowed values are: "
                             f"('int', 'one_hot', 'multi_hot', 'count'). Received: output_mode={output_mode}")
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. Received: "
                             f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries, self.num_bins, self.epsilon = bin_boundaries, num_bins, epsilon
        self.output_mode, self.sparse = output_mode, sparse
        self.summary = None if bin_boundaries else _EMPTY_SUMMARY

    def call(self, inputs: Any) -> Any:
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at construction time or call "
                             "`adapt(dataset)` before you can start using the `Discretization` layer.")
        boundaries = np.asarray([float(b) for b in self.bin_boundaries], np.float32)
        if np.any(boundaries[1:] < boundaries[:-1]):
            raise tf.errors.InvalidArgumentError(None, None, "Expected sorted boundaries [Op:Bucketize]")
        x = tf.expand_dims(tf.cast(inputs, tf.float32), -1)
        # the bin is the number of boundaries not above x (all of them for NaN, as TF's Bucketize counts)
        ids = tf.reduce_sum(tf.cast(tf.logical_not(x < tf.constant(boundaries)), tf.int32), axis=-1)
        if self.output_mode == "int":
            return ids
        return encode(ids, self.output_mode, len(boundaries) + 1, self.dtype, sparse=self.sparse)

    # -- adapt: Keras 3's summary of the data, a weighted sample of its sorted values ------------------

    def adapt(self, data: Any, steps: int | None = None) -> None:
        """Sets `bin_boundaries` to `num_bins` quantiles of `data`: an array, a tf.data.Dataset of batches or
        an iterable of batches (`steps` of them at most)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, "
                             "use `num_bins` instead.")
        self.reset_state()
        if isinstance(data, tf.data.Dataset):
            for batch in (data if steps is None else data.take(steps)):
                self.update_state(batch)
        elif hasattr(data, "__iter__") and not isinstance(data, np.ndarray | tf.Tensor):
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self.update_state(batch)
        else:
            self.update_state(data)
        self.finalize_state()

    def update_state(self, data: Any) -> None:
        values = np.asarray(data).astype(np.float32)
        self.summary = _merge(_summarize(values, self.epsilon), self.summary, self.epsilon)

    def finalize_state(self) -> None:
        if self.num_bins is not None:
            self.bin_boundaries = _compress(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def reset_state(self) -> None:
        if self.num_bins is not None:
            self.summary = _EMPTY_SUMMARY

    def get_config(self) -> dict[str, Any]:
        """Keras 3's keys (no `trainable`); an adapted layer's has both `bin_boundaries` and `num_bins`."""
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins, "epsilon": self.epsilon,
                "output_mode": self.output_mode, "sparse": self.sparse, "name": self.name, "dtype": self.dtype.name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Discretization:
        config = dict(config)
        boundaries = config.pop("bin_boundaries", None) if config.get("num_bins") is not None else None
        layer = super().from_config(config)
        if boundaries is not None:  # adapted: made with num_bins, then given the learned boundaries
            layer.bin_boundaries = boundaries
        return layer


# A summary is a 2 x n float32 array: sorted values, and the number of data values each stands for.
_EMPTY_SUMMARY = np.zeros((2, 0), np.float32)


def _summarize(values: np.ndarray, epsilon: float) -> np.ndarray:
    """About 1 / epsilon of the sorted values, evenly spaced, each weighing the count it stands for."""
    ordered = np.sort(values.reshape(-1))
    step = max(ordered.size / (1.0 / epsilon), 1)
    kept = ordered[int(step - 1)::int(step)]
    return np.stack([kept, np.ones_like(kept) * step])


def _merge(new: np.ndarray, old: np.ndarray, epsilon: float) -> np.ndarray:
    joined = np.concatenate((new, old), axis=1)
    return _compress(joined[:, np.argsort(joined[0])], epsilon)


def _compress(summary: np.ndarray, epsilon: float) -> np.ndarray:
    """The summary at the quantiles epsilon, 2 * epsilon, ..., 1 (interpolated on the cumulative weights), if it
    has more than 1 / epsilon entries."""
    if summary.shape[1] * epsilon < 1:
        return summary
    quantiles = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = summary[1].cumsum()
    fractions = cumulative / cumulative[-1]
    values = np.interp(quantiles, fractions, summary[0])
    reached = np.interp(quantiles, fractions, cumulative)
    weights = reached - np.concatenate((np.array([0]), reached[:-1]))
    return np.stack((values, weights)).astype(np.float32)


class Hashing(Layer):
    """Hashes strings (or integers, as their decimal strings) into `num_bins` bins (`tf.keras.layers.Hashing`):
    `tf.strings.to_hash_bucket_fast` (FarmHash's fingerprint), or `_strong` (SipHash) keyed by `salt` (an int or
    two); with `mask_value`, that value is bin 0 and the others hash into bins 1 to `num_bins - 1`. The ids come
    out as int64, or encoded as CategoryEncoding's modes.

    >>> import tapejax as tf
    >>> tf.keras.layers.Hashing(num_bins=3)(tf.constant([["A"], ["B"], ["C"], ["D"], ["E"]])).numpy().ravel()
    array([1, 0, 1, 1, 2])
    """

    _built_at_init = True

    def __init__(self, num_bins: int, mask_value: Any = None, salt: Any = None, output_mode: str = "int",
                 sparse: bool = False, **kwargs: Any):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                             f"num_bins={num_bins}.")
        if output_mode == "int" and self.dtype.name not in ("int32", "int64"):
            raise ValueError(f"When `output_mode=\"int\"`, `dtype` should be an integer type, 'int32' or 'in64'. "
                             f"Received: dtype={kwargs['dtype']}")
        if output_mode not in ("int", *_MODES):
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of ('int', 'one_hot', "
                             f"'multi_hot', 'count'). Received: output_mode={output_mode}")
        if sparse and output_mode == "int":
            raise ValueError(f"`sparse` may only be true if `output_mode` is `\"one_hot\"`, `\"multi_hot\"`, or "
                             f"`\"count\"`. Received: sparse={sparse} and output_mode={output_mode}")
        if salt is not None and not (isinstance(salt, int) or isinstance(salt, list | tuple) and len(salt) == 2):
            raise ValueError(f"The `salt` argument for `Hashing` can only be a tuple of size 2 integers, or a single "
                             f"integer. Received: salt={salt}.")
        self.num_bins, self.mask_value, self.output_mode, self.sparse = num_bins, mask_value, output_mode, sparse
        self.salt = None if salt is None else [salt, salt] if isinstance(salt, int) else list(salt)

    def call(self, inputs: Any) -> Any:
        inputs = tf.convert_to_tensor(inputs)
        if self.output_mode == "one_hot" and inputs.shape.rank and inputs.shape[-1] == 1:
            inputs = tf.squeeze(inputs, -1)
        bins, mask = self.num_bins, None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = tf.equal(inputs, self.mask_value)
        values = tf.cast(inputs, tf.int64) if inputs.dtype.is_floating else inputs
        values = tf.strings.as_string(values) if values.dtype != tf.string else values
        if self.salt is not None:
            ids = tf.strings.to_hash_bucket_strong(values, bins, self.salt)
        else:
            ids = tf.strings.to_hash_bucket_fast(values, bins)
        if mask is not None:
            ids = tf.where(mask, tf.zeros_like(ids), ids + 1)
        if self.output_mode == "int":
            return tf.cast(ids, self.dtype)
        return encode(ids, self.output_mode, self.num_bins, self.dtype, sparse=self.sparse)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt, "mask_value": self.mask_value,
                "output_mode": self.output_mode, "sparse": self.sparse}
