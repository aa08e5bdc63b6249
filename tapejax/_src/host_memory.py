"""Freed host memory stays with the process for the next allocation, as TF's CPU allocator keeps it (glibc only).

On a CPU, XLA mallocs the buffers of each run of an executable and frees them after it. glibc hands a freed block
above its mmap threshold (at most 32 MB) straight back to the operating system, and trims a heap whenever more
than 128 KB is free at its top: so every step of a training loop met its activations as fresh pages, each 4 KB
page faulted in and zeroed by the kernel, more time than the arithmetic for a convolution. TF does not pay this
because its allocator keeps what it freed; tapejax asks glibc to do the same, once, at import: blocks up to
`limit()` (1 GiB, or a sixteenth of the machine's memory if less) come from the heap, and up to that much free
memory stays at a heap's top. At most about that much freed memory is held beyond what the program uses.

Measured end to end on the 2-core CI machine (`python -m tapejax PROGRAM.py` in tests/programs/, best of 3
interleaved runs): simple_audio 6.42 -> 5.75 s, dcgan 4.99 -> 4.74 s, oxford_pets_image_segmentation 8.13 -> 7.82 s,
text_classification_rnn 10.31 -> 10.05 s. glibc's arenas are left alone: with one arena for every thread (or up to
four), a step's buffers were reused whichever thread freed them (a convolution's step 185 -> 83 ms where these
settings alone gave 140 ms), but XLA's compiles, whose threads all allocate, slowed down (text_classification_rnn
10.3 -> 11.7-12.3 s).

It is a setting of the whole process (numpy's large arrays are reused the same way), so
`TAPEJAX_KEEP_FREED_MEMORY=0` in the environment leaves glibc's defaults alone.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
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
    settings = ((_M_MMAP_THRESHOLD, size), (_M_TRIM_THRESHOLD, size))
    KEPT = all([libc.mallopt(option, value) for option, value in settings])  # a list: every setting is tried
    return KEPT
