"""tf.strings.to_hash_bucket_fast and to_hash_bucket_strong: TF's string hashes, on the host.

`_fast` buckets FarmHash's 64-bit fingerprint (farmhashna's Hash64, TF's `Fingerprint64`) of each string's bytes;
`_strong` buckets SipHash-2-4 keyed by two 64-bit numbers. Both are written here from the published algorithms
(64-bit arithmetic in Python integers, masked), one string at a time: they serve preprocessing (Keras's Hashing
layer, feature columns), not a hot path. Checked bit for bit against TF in tests/compat/test_strings_vs_tf.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapejax._src import errors

MASK = _MASK = (1 << 64) - 1
_K0, _K1, _K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F


def _fetch64(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 8], "little")


def _fetch32(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 4], "little")


def _rotate(value: int, shift: int) -> int:  # to the right
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & _MASK


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _hash16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _hash0to16(s: bytes) -> int:
    n = len(s)
    if n >= 8:
        mul = _K2 + n * 2
        a = (_fetch64(s, 0) + _K2) & _MASK
        b = _fetch64(s, n - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _hash16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _hash16(n + (_fetch32(s, 0) << 3), _fetch32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _hash17to32(s: bytes) -> int:
    n = len(s)
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K1) & _MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _MASK
    d = (_fetch64(s, n - 16) * _K2) & _MASK
    return _hash16((_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK,
                   (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)


def _hash33to64(s: bytes) -> int:
    n = len(s)
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K2) & _MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _MASK
    d = (_fetch64(s, n - 16) * _K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    z = _hash16(y, (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_fetch64(s, 16) * mul) & _MASK
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & _MASK
    h = ((z + _fetch64(s, n - 24)) * mul) & _MASK
    return _hash16((_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK,
                   (e + _rotate((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = (_fetch64(s, i + k) for k in (0, 8, 16, 24))
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(s: bytes) -> int:
    """FarmHash's Fingerprint64 of `s` (TF's `Fingerprint64`)."""
    n = len(s)
    if n <= 16:
        return _hash0to16(s)
    if n <= 32:
        return _hash17to32(s)
    if n <= 64:
        return _hash33to64(s)
    seed = 81
    x, y = seed, (seed * _K1 + 113) & _MASK
    z = (_shift_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    v, w = (0, 0), (0, 0)
    x = (x * _K2 + _fetch64(s, 0)) & _MASK
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, i + 40)) & _MASK
        z = (_rotate((z + w[0]) & _MASK, 33) * _K1) & _MASK
        v = _weak32(s, i, (v[1] * _K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak32(s, i + 32, (z + w[1]) & _MASK, (y + _fetch64(s, i + 16)) & _MASK)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    i = last64
    w = ((w[0] + ((n - 1) & 63)) & _MASK, w[1])
    v = ((v[0] + w[0]) & _MASK, v[1])
    w = ((w[0] + v[0]) & _MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK
    y = (y + v[0] * 9 + _fetch64(s, i + 40)) & _MASK
    z = (_rotate((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak32(s, i, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak32(s, i + 32, (z + w[1]) & _MASK, (y + _fetch64(s, i + 16)) & _MASK)
    z, x = x, z
    return _hash16((_hash16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _MASK,
                   (_hash16(v[1], w[1], mul) + x) & _MASK, mul)


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (64 - shift))) & _MASK


def siphash24(s: bytes, k0: int, k1: int) -> int:
    """SipHash-2-4 of `s` with the key (k0, k1)."""
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(count: int) -> None:
        for _ in range(count):
            v[0] = (v[0] + v[1]) & _MASK
            v[1] = _rotl(v[1], 13) ^ v[0]
            v[0] = _rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & _MASK
            v[3] = _rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & _MASK
            v[3] = _rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & _MASK
            v[1] = _rotl(v[1], 17) ^ v[2]
            v[2] = _rotl(v[2], 32)

    n = len(s)
    tail = s[n - n % 8:] + bytes(7 - n % 8) + bytes([n & 0xFF])
    for block in [s[i:i + 8] for i in range(0, n - n % 8, 8)] + [tail]:
        m = int.from_bytes(block, "little")
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def buckets(strings: np.ndarray, num_buckets: int, hash_one: Any, op_type: str) -> np.ndarray:
    """int64 bucket ids `hash % num_buckets` of an object array of bytes."""
    if not isinstance(num_buckets, int | np.integer) or num_buckets < 1:
        raise errors.invalid_argument(op_type, f"num_buckets must be >= 1, got {num_buckets}")
    flat = [hash_one(bytes(s)) % int(num_buckets) for s in strings.ravel()]
    return np.asarray(flat, dtype=np.int64).reshape(strings.shape)
