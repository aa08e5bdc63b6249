"""JAX's float32 uniform sampler and key derivation in numpy: the same bits, without XLA compiles.

Every Keras weight is drawn once from a shape of its own, before a program's first step, and each new shape cost
one XLA compile of the sampler (20-100 ms; a DCGAN's layers: 8 of them). This computes what
`jax.random.uniform(key, shape, float32)` computes with the partitionable threefry (JAX's default): the counters
are the elements' flat indices as (high, low) 32-bit words, the bits are the two words of Threefry-2x32 XORed,
and a float is the top 23 bits as a mantissa of [1, 2), minus 1. Integer steps and one exact float subtraction:
tests/unit/test_random_samplers.py checks the bytes against JAX's. A key (a seed folded with the op seed and the
call count) is the same hash of two words: JAX compiled four small executables for it in every process.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np

# Up to this many elements numpy's 20 rounds take less than compiling JAX's sampler (even without LLVM's
# optimisations) and running it (2-core machine: 4 ms against 105 ms for 262,144; 17 against 128 ms for a million;
# 143 against 223 ms for 4,194,304): every weight of a DCGAN's generator, a Dense kernel of 2**21 draws included.
MAX_SIZE = 1 << 22

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def supported(key: Any, dims: tuple[int, ...], np_dtype: Any) -> bool:
    """Whether `uniform` gives JAX's bits for this draw: a raw threefry key, float32, JAX's default bit layout."""
    return (np.dtype(np_dtype) == np.float32 and key.dtype == np.uint32 and key.shape == (2,)
            and jax.config.jax_threefry_partitionable and math.prod(dims) <= MAX_SIZE)


def _threefry2x32(k1: np.uint32, k2: np.uint32, x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 (20 rounds, a key injection every 4) on uint32 arrays, wrapping as JAX's does."""
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = (x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))
            x1 = x0 ^ x1
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def key(seed: int, *data: int) -> np.ndarray | None:
    """`jax.random.PRNGKey(seed)` folded with each of `data` in turn (`jax.random.fold_in`), as a raw key's uint32
    words; None outside the range computed here (a seed in [0, 2**63), data in [0, 2**32), no seed offset)."""
    if not 0 <= seed < 1 << 63 or not all(0 <= d < 1 << 32 for d in data) or jax.config.jax_random_seed_offset:
        return None
    words = np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32)  # threefry_seed: the seed's 64 bits
    for d in data:  # fold_in hashes the datum's seed words, (0, d), under the key
        high, low = _threefry2x32(words[0], words[1], np.zeros(1, np.uint32), np.array([d], np.uint32))
        words = np.concatenate([high, low])
    return words


def uniform(key: Any, dims: tuple[int, ...]) -> np.ndarray:
    """`jax.random.uniform(key, dims, float32)`, bit for bit (see `supported`)."""
    k1, k2 = np.asarray(key, np.uint32)
    low = np.arange(math.prod(dims), dtype=np.uint32)  # flat indices below 2**32: the high words are zero
    bits1, bits2 = _threefry2x32(k1, k2, np.zeros_like(low), low)
    mantissas = ((bits1 ^ bits2) >> np.uint32(9)) | np.uint32(0x3F800000)
    return (mantissas.view(np.float32) - np.float32(1.0)).reshape(dims)
