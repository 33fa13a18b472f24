"""Keep freed tensor memory in the process between training steps (glibc only).

A CapsNet training step at batch 128 allocates a few hundred MB of short-lived tensors
(the spectral PrimaryCaps factors alone are 75 MB and 150 MB). glibc's malloc serves
every block above its mmap threshold (at most 32 MB by default) with a fresh ``mmap``
and returns it with ``munmap`` on free, so each step pays the kernel to zero and
map those pages again: on the 2-core test machine that doubled the time of a step
(``benchmarks/train_speed.py --default-allocator`` shows it).

:func:`retain_freed_memory` raises the mmap threshold to 1 GiB and the trim threshold
to 2 GiB, so large blocks come from malloc's heap and stay there for the next step.
This is what preloading jemalloc or tcmalloc does for PyTorch on CPU, done with
``mallopt(3)`` because a running Python process cannot preload a library. The price is
that the resident size stays at the training peak instead of shrinking between steps.
All threads share one arena (``M_ARENA_MAX = 1``): a worker thread's own arena is
limited to 64 MB per heap and would fall back to ``mmap`` for the large blocks.

``capsviz train`` and ``capsviz eval`` set it; the app does not: a 2-minute soak of the
app with it grew 188 MB of resident memory after the first minute (16 MB without), and
the app's promise is to run for hours.

On other C libraries and platforms it does nothing and returns False.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MMAP_THRESHOLD_BYTES = 1 << 30
TRIM_THRESHOLD_BYTES = (1 << 31) - 1

_applied: bool | None = None


def retain_freed_memory() -> bool:
    """Tune glibc's malloc for large, repeated tensor allocations (see the module docstring).

    Idempotent. Call before training starts, from any thread.

    Returns
    -------
    bool
        True when the settings are in effect (Linux with glibc), False otherwise.
    """
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    _applied = all(mallopt(param, value) == 1 for param, value in (
        (M_ARENA_MAX, 1), (M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES), (M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)))
    return _applied
