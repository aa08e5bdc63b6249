"""Freed host memory stays with the process for the next allocation, as TF's CPU allocator keeps it (glibc only).

On a CPU, XLA mallocs the buffers of each run of an executable and frees them after it. glibc hands a freed block
above its mmap threshold (at most 32 MB) straight back to the operating system, trims its heap whenever more than
128 KB is free at the top, and serves XLA's worker threads from arenas of 64 MB heaps of their own. So every step
of a training loop met its activations as fresh pages: each 4 KB page faulted in and zeroed by the kernel, more
time than the arithmetic. Measured on the 2-core CI machine (pure JAX, jitted): a 3x3 convolution from 32 to 64
channels on a (64, 30, 30, 32) batch and its two gradients 145 -> 70 ms, 44,000 page faults a run -> about none;
the whole training step of TF's audio tutorial's CNN 185 -> 83 ms (TF: 84 ms). TF does not pay this because its
allocator keeps what it freed; tapejax asks glibc to do the same, once, at import, before JAX starts its threads:
one arena for every thread, and blocks up to `limit()` (1 GiB, or a sixteenth of the machine's memory if less)
taken from and kept in the heap. At most about that much freed memory is held beyond what the program uses.

It is a setting of the whole process (numpy's large arrays are reused the same way), so
`TAPEJAX_KEEP_FREED_MEMORY=0` in the environment leaves glibc's defaults alone.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # glibc's malloc.h
KEPT = False  # whether keep_freed_memory changed glibc's settings in this process


def limit() -> int:
    """The largest block taken from (and the most freed memory kept at the top of) the heap."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        physical = 16 << 30
    return min(1 << 30, physical // 16)


def keep_freed_memory() -> bool:
    """Sets glibc's malloc to keep freed memory for reuse (see the module docstring); whether it did."""
    global KEPT
    if os.environ.get("TAPEJAX_KEEP_FREED_MEMORY", "1").strip() == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return False
        libc = ctypes.CDLL("libc.so.6")
    except (ValueError, OSError, AttributeError):
        return False
    size = limit()
    settings = ((_M_ARENA_MAX, 1), (_M_MMAP_THRESHOLD, size), (_M_TRIM_THRESHOLD, size))
    KEPT = all([libc.mallopt(option, value) for option, value in settings])  # a list: every setting is tried
    return KEPT
