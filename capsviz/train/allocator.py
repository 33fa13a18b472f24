"""glibc malloc settings for tensor-heavy processes: keep freed memory for training,
give it back for the long-running app (glibc only; elsewhere they do nothing).

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

``capsviz train`` and ``capsviz eval`` set it. The app does the opposite,
:func:`release_freed_memory`: it runs for hours and trains in a worker thread, whose
arena kept freed 4-32 MB blocks (below glibc's self-raising mmap threshold), so its
resident size wandered between 1.5 and 1.85 GB in a soak and grew by 180 MB in 2
minutes with the retaining settings. With a fixed 4 MB threshold it held at 1.35 GB.

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
RELEASE_THRESHOLD_BYTES = 4 << 20
TRIM_THRESHOLD_BYTES = (1 << 31) - 1


def _mallopt():
    """glibc's ``mallopt`` through ctypes, or None on other platforms and C libraries."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt


def retain_freed_memory() -> bool:
    """Tune glibc's malloc for large, repeated tensor allocations (see the module docstring).

    Idempotent (``mallopt`` only sets values). Call before training starts, from any thread.

    Returns
    -------
    bool
        True when the settings are in effect (Linux with glibc), False otherwise.
    """
    mallopt = _mallopt()
    if mallopt is None:
        return False
    return all(mallopt(param, value) == 1 for param, value in (
        (M_ARENA_MAX, 1), (M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES), (M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)))


def release_freed_memory() -> bool:
    """Map every block of 4 MiB or more on its own and unmap it when freed (a fixed
    ``M_MMAP_THRESHOLD``, which also stops glibc from raising it by itself), so the
    resident size follows the memory in use. For long-running processes (the app).

    Returns True when set (Linux with glibc), False otherwise. It sets only the mmap
    threshold: after :func:`retain_freed_memory` in the same process, that call's arena
    and trim settings stay.
    """
    mallopt = _mallopt()
    return mallopt is not None and mallopt(M_MMAP_THRESHOLD, RELEASE_THRESHOLD_BYTES) == 1
