"""Process tuning in one place: the compute device, one call per kind of process, one per
worker thread.

- :func:`select_device` turns a device name (``auto``, ``cpu``, ``cuda``, ``cuda:N``,
  ``mps``) into a ``torch.device`` that works here; :func:`available_devices` lists them.
- :func:`cpu_bf16_units` names the CPU's bfloat16 units; :func:`bf16_speedup` measures
  whether they multiply faster than float32 (:func:`bf16_is_faster`: not on every CPU that
  has them); :func:`bf16_inference` says whether the explorer's few-image passes compute
  PrimaryCaps' product in bfloat16.
- :func:`tune_process` (``"app"``, ``"train"``, ``"eval"``) sets glibc's malloc for the
  process: ``train`` and ``eval`` keep freed memory (:func:`retain_freed_memory`), the
  long-running app gives it back (:func:`release_freed_memory`).
- :func:`after_startup` (the app, once its window is up) exempts the start-up objects
  from the cyclic garbage collector (``gc.freeze``); :func:`collect_due` collects as the
  automatic collection would, on the thread that calls it.
- :func:`own_intra_op_threads` sets the calling thread's own intra-op thread count (the
  app's GUI thread computes on one: ``GUI_INTRA_OP_THREADS``); :func:`intra_op_threads`
  does so for a block.
- :func:`worker_thread` (``"background"`` for training and the browser's classification,
  ``"inference"`` for the current input), a context manager for a thread that computes
  while the GUI thread paints: a lower CPU priority (``BACKGROUND_NICENESS``,
  ``INFERENCE_NICENESS``) and one intra-op thread fewer than the machine has, for this
  thread only (:func:`intra_op_threads`): the count other threads start with stays.

Qt-free; torch is imported by the functions that use it.

Malloc
------
glibc malloc settings for tensor-heavy processes: keep freed memory for training,
give it back for the long-running app (glibc only; elsewhere they do nothing).

A CapsNet training step at batch 128 allocates a few hundred MB of short-lived tensors
(the spectral PrimaryCaps factors alone are 75 MB and 150 MB). glibc's malloc serves
every block above its mmap threshold (at most 32 MB by default) with a fresh ``mmap``
and returns it with ``munmap`` on free, so each step pays the kernel to zero and
map those pages again: on the 2-core test machine that doubles the time of a step
(``benchmarks/train_speed.py --default-allocator`` shows it).

:func:`retain_freed_memory` raises the mmap threshold to 1 GiB and the trim threshold
to 2 GiB, so large blocks come from malloc's heap and stay there for the next step.
This is what preloading jemalloc or tcmalloc does for PyTorch on CPU, done with
``mallopt(3)`` because a running Python process cannot preload a library. The price is
that the resident size stays at the training peak instead of shrinking between steps.
All threads share one arena (``M_ARENA_MAX = 1``): a worker thread's own arena is
limited to 64 MB per heap and would fall back to ``mmap`` for the large blocks.

``capsviz train`` and ``capsviz eval`` set it. The app does the opposite,
:func:`release_freed_memory`: it runs for hours and trains in a worker thread. With
glibc's defaults that thread's arena keeps freed 4-32 MB blocks (below glibc's
self-raising mmap threshold), and the resident size wanders between 1.5 and 1.85 GB in
a soak; with the retaining settings it grows by 180 MB in 2 minutes. With a fixed 4 MB
threshold it holds steady; the app also keeps up to 16 MiB free at a heap's top, so that a
forward pass's temporaries are not page-faulted in anew by the next pass. In 10-minute
soaks on a 2-core Xeon (``benchmarks/soak.py``, medians after minute 1 and over the last
30 s) the resident size went from 1,450 to 1,470 MB with the 16 MiB, and from 1,429 to
1,453 MB with glibc's 128 KiB.

On other C libraries and platforms it does nothing and returns False.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import os
import platform
import re
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from capsviz.texts import _

if TYPE_CHECKING:
    import torch

# CPU priorities (nice values) of the threads that compute while the GUI thread paints:
# training (and the browser's classification) take what the others leave; the inference
# thread yields to the GUI thread when both want the same core (Linux's scheduler shares
# a core by weight, about 3 : 1 for nice 5 against 0), and its results come a little later
# instead of the paint.
BACKGROUND_NICENESS = 10
INFERENCE_NICENESS = 5
WORKER_NICENESS = {"background": BACKGROUND_NICENESS, "inference": INFERENCE_NICENESS}
# The GUI thread's own torch work (the pose view's decoder and Fig. 4 grid) is small; on a
# second intra-op thread it would wait for the core that training or the inference thread
# holds: the longest event-loop gap during training is about 14 ms with one thread against
# 29.5 ms with two (benchmarks/interactive.py, 2-core Xeon). See ExplorerCore.
GUI_INTRA_OP_THREADS = 1
PROCESS_KINDS = ("app", "train", "eval")
CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")  # /proc/cpuinfo flags of CPUs with bfloat16 units
INFERENCE_PRECISION_VARIABLE = "CAPSVIZ_INFERENCE"  # fp32: keep the few-image passes in float32
BF16_MIN_SPEEDUP = 1.25  # bfloat16 is used where its products run at least this much faster than float32's
BF16_PROBE_SHAPE = (256, 2048, 256)  # (M, K, N) of the product bf16_speedup times in each type


@functools.lru_cache(maxsize=1)
def _cpuinfo() -> dict[str, str]:
    """The fields of the first processor in /proc/cpuinfo (empty off Linux or unreadable)."""
    fields: dict[str, str] = {}
    if not sys.platform.startswith("linux"):
        return fields
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break  # the first processor is enough
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    return fields


@functools.lru_cache(maxsize=1)  # asked on every few-image pass (bf16_inference)
def cpu_bf16_units() -> tuple[str, ...]:
    """The CPU's bfloat16 instruction sets among ``CPU_BF16_FLAGS`` (Linux: from /proc/cpuinfo;
    elsewhere none are reported)."""
    flags = _cpuinfo().get("flags", "").split()
    return tuple(flag for flag in CPU_BF16_FLAGS if flag in flags)


def cpu_model() -> str:
    """The CPU's name (Linux: ``model name`` of /proc/cpuinfo, with its family and model
    numbers; elsewhere :func:`platform.processor`, or ``unknown CPU``)."""
    fields = _cpuinfo()
    if "model name" in fields:
        return f"{fields['model name']} (family {fields.get('cpu family', '?')}, model {fields.get('model', '?')})"
    return platform.processor() or "unknown CPU"


def machine_summary() -> dict:
    """What a benchmark's figures were measured on: the CPU (:func:`cpu_model`), its
    bfloat16 units (:func:`cpu_bf16_units`) and how much faster they multiply than float32
    (:func:`bf16_speedup`, 0.0 without them), the machine's logical cores, the torch
    version, and the code MKL runs float32 products with (:func:`mkl_code_path`)."""
    import torch

    return {
        "cpu": cpu_model(),
        "cpu_bf16_units": list(cpu_bf16_units()),
        "bf16_speedup": round(bf16_speedup(), 2),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "mkl": mkl_code_path(),
    }


def machine_line(machine: dict) -> str:
    """One line naming the machine of a :func:`machine_summary` (the first line a benchmark prints)."""
    units = ", ".join(machine["cpu_bf16_units"]) or "none"
    mkl = f"; MKL: {machine['mkl']}" if machine.get("mkl") else ""
    return (
        f"machine: {machine['cpu']}; bfloat16 units: {units}; {machine['cpu_count']} cores{mkl}; "
        f"torch {machine['torch']}"
    )


def intel_cpu() -> bool:
    """Whether the CPU is Intel's (Linux: ``vendor_id`` of /proc/cpuinfo; False elsewhere).
    MKL runs its small batched products with Intel-tuned code there, at any instruction set:
    one image's predictions as I one-row products of 8 x 160 run faster than as 8
    multiply-adds over W (:func:`capsviz.model.capsnet.one_image_predictions`) on the
    2-core Xeon without AMX, MKL capped at AVX2 or not, where on the AMD Zen 4 they run
    far slower."""
    return _cpuinfo().get("vendor_id") == "GenuineIntel"


def amx_products() -> bool:
    """Whether the CPU multiplies bfloat16 matrices with AMX tiles (``amx_bf16`` among
    :func:`cpu_bf16_units`), where oneDNN's bfloat16 products of sizeable matrices run about
    six times as fast as MKL's float32 ones (4096-square: 1,976 against 327 GFLOP/s on a
    2-core Xeon with AMX), so that work worth doing in float32 elsewhere is cheaper as
    more multiply-adds in bfloat16 there."""
    return "amx_bf16" in cpu_bf16_units()


MKL_BELOW_AVX512 = ("SSE4_2", "AVX", "AVX2")  # values of MKL_ENABLE_INSTRUCTIONS that cap it below AVX-512


def avx512_products() -> bool:
    """Whether capsviz's float32 products are taken to run AVX-512 code at full width: on an
    Intel CPU with ``avx512f`` (Linux: /proc/cpuinfo), where MKL's own account says
    AVX-512 (:func:`mkl_code_path`), unless ``MKL_ENABLE_INSTRUCTIONS`` caps MKL below it.
    False elsewhere: on AMD CPUs (Zen 4 runs AVX-512 on 256-bit units, AVX2's rate), CPUs
    without AVX-512, and other systems. Read from the CPU's flags, in microseconds, so a
    pass may ask (:func:`capsviz.model.conv.use_winograd`)."""
    info = _cpuinfo()
    capped = os.environ.get("MKL_ENABLE_INSTRUCTIONS", "").strip().upper() in MKL_BELOW_AVX512
    return intel_cpu() and "avx512f" in info.get("flags", "").split() and not capped


@functools.lru_cache(maxsize=1)
def mkl_code_path() -> str | None:
    """The instruction set MKL runs its products with here, as its verbose mode names it
    (``AVX-512``, ``AVX2``, ...; the whole phrase where it names none), or None where torch
    was built without MKL, in a frozen build, or where MKL said nothing. MKL picks its code
    by CPU, and not always the widest the CPU has; capsviz's float32 products run in MKL
    (oneDNN runs the reduced types). Runs one small product in a child process with
    ``MKL_VERBOSE=1`` (about 2 s, once per process)."""
    import subprocess

    import torch

    if not torch.backends.mkl.is_available() or getattr(sys, "frozen", False):
        return None
    probe = "import torch; a = torch.ones(64, 64); a @ a"
    env = {k: v for k, v in os.environ.items() if k != "MKL_VERBOSE_OUTPUT_FILE"} | {"MKL_VERBOSE": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (done.stdout + "\n" + done.stderr).splitlines()
    line = next((x for x in lines if x.startswith("MKL_VERBOSE") and " architecture " in x), None)
    if line is None:
        return None
    phrase = line.split(" architecture ", 1)[1].split(", Lnx", 1)[0].split(", Win", 1)[0].strip()
    short = re.search(r"\(Intel\(R\) ([A-Z0-9.-]+)\)", phrase)
    return short.group(1) if short else (phrase or None)


@functools.lru_cache(maxsize=1)
def bf16_speedup() -> float:
    """How many times faster this CPU multiplies matrices in bfloat16 than in float32: the
    least CPU time of seven (256 x 2048) @ (2048 x 256) products in each type
    (``BF16_PROBE_SHAPE``, after one warm-up each, the two types taking turns), on one
    intra-op thread, measured once per process in 55-75 ms.

    CPU time on one thread is what the product costs whatever else the machine runs: the
    calling thread's CPU time stops while it waits for a core, where the wall time of a
    product on every core grows with the other processes' load (a 2-core Xeon without AMX
    gave 0.55-0.69 beside one to three busy loops, wall times on two threads 0.57-6.3;
    docs/performance.md).

    Returns 0.0 without bfloat16 units (:func:`cpu_bf16_units`; not measured: there
    bfloat16 is converted in software, tens of times slower). Having the units is not
    enough: a Xeon whose AMX is not available (AVX-512 BF16 alone) multiplies in bfloat16
    at 0.52-0.69x its float32 rate, where 4096-square products ran 3.8x faster on an AMD
    Zen 5 and 6.2x on a Xeon with AMX (``benchmarks/train_speed.py``, docs/performance.md)."""
    if not cpu_bf16_units():
        return 0.0
    import time

    import torch

    m, k, n = BF16_PROBE_SHAPE
    generator = torch.Generator().manual_seed(0)
    a32, b32 = torch.randn(m, k, generator=generator), torch.randn(k, n, generator=generator)
    pairs = {"fp32": (a32, b32), "bf16": (a32.bfloat16(), b32.bfloat16())}
    best = dict.fromkeys(pairs, float("inf"))
    with torch.inference_mode(), intra_op_threads(1):
        for rep in range(8):
            for name, (a, b) in pairs.items():
                start = time.thread_time()
                torch.mm(a, b)
                if rep:  # the first is the warm-up (oneDNN builds its kernel)
                    best[name] = min(best[name], time.thread_time() - start)
    return best["fp32"] / best["bf16"]


def bf16_is_faster() -> bool:
    """Whether this CPU multiplies in bfloat16 at least ``BF16_MIN_SPEEDUP`` times as fast as
    in float32 (:func:`bf16_speedup`): where ``--precision auto`` trains in bfloat16 and the
    explorer's few-image passes use it."""
    return bf16_speedup() >= BF16_MIN_SPEEDUP


def bf16_inference() -> bool:
    """Whether the explorer's passes for a few images without gradients (the current input,
    the pose view's decoder aside) compute PrimaryCaps' matrix product in bfloat16 (float32
    sums out): on a CPU whose bfloat16 products are faster than float32's
    (:func:`bf16_is_faster`), unless the environment variable ``CAPSVIZ_INFERENCE`` is
    ``fp32``. On the 10,000 MNIST test digits the predictions are the same as in float32
    (``tests/unit/test_model.py``); elsewhere the pass stays float32, which is faster there."""
    return os.environ.get(INFERENCE_PRECISION_VARIABLE, "").strip().lower() != "fp32" and bf16_is_faster()


def _mps_available(torch) -> bool:
    return getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()


def select_device(name: str | None = "auto") -> torch.device:
    """The ``torch.device`` of ``name``: ``auto`` (or None, or "") picks CUDA, then Apple MPS,
    then the CPU; ``cpu``, ``cuda``, ``cuda:N`` and ``mps`` name one.

    Raises
    ------
    ValueError
        If ``name`` is not a device name or that device is not available here.
    """
    import torch

    if name in (None, "", "auto"):
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available(torch):
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise ValueError(_("unknown device {name!r}; use auto, cpu, cuda, cuda:N or mps", name=name)) from None
    if device.type == "cuda" and (not torch.cuda.is_available() or (device.index or 0) >= torch.cuda.device_count()):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(_("device {name!r} is not available here: no CUDA device", name=name))
        raise ValueError(
            _(
                "device {name!r} is not available here: the CUDA devices are cuda:0 to cuda:{last}",
                name=name,
                last=count - 1,
            )
        )
    if device.type == "mps" and not _mps_available(torch):
        raise ValueError(_("device 'mps' is not available here"))
    if device.type not in ("cpu", "cuda", "mps"):
        raise ValueError(_("unsupported device {name!r}; use auto, cpu, cuda, cuda:N or mps", name=name))
    return device


def available_devices() -> list[str]:
    """Device names that work here (for :func:`select_device`), ``auto`` first, then ``cpu``,
    ``cuda:0`` ... and ``mps`` where present."""
    import torch

    names = ["auto", "cpu"]
    if torch.cuda.is_available():
        names += [f"cuda:{k}" for k in range(torch.cuda.device_count())]
    if _mps_available(torch):
        names.append("mps")
    return names


M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MMAP_THRESHOLD_BYTES = 1 << 30
RELEASE_THRESHOLD_BYTES = 4 << 20
RELEASE_TRIM_THRESHOLD_BYTES = 16 << 20
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
    return all(
        mallopt(param, value) == 1
        for param, value in (
            (M_ARENA_MAX, 1),
            (M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES),
            (M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES),
        )
    )


def release_freed_memory() -> bool:
    """Map every block of 4 MiB or more on its own and unmap it when freed (a fixed
    ``M_MMAP_THRESHOLD``, which also stops glibc from raising it by itself), so the
    resident size follows the memory in use, and keep up to 16 MiB of freed memory at the
    top of each heap (``M_TRIM_THRESHOLD``). For long-running processes (the app).

    The trim threshold: fixing the mmap threshold also fixes glibc's trim threshold, at
    128 KiB by default, and with that the 2 MB temporaries of a pair's forward pass (u_hat,
    3,200 x 160 float32) go back to the system at every free and are page-faulted in again
    by the next pass: the pass takes 6.4-6.6 ms so, 5.8-5.9 ms with 16 MiB (2-core Xeon
    without AMX).

    Returns True when set (Linux with glibc), False otherwise. After
    :func:`retain_freed_memory` in the same process, that call's arena setting stays.
    """
    mallopt = _mallopt()
    return (
        mallopt is not None
        and mallopt(M_MMAP_THRESHOLD, RELEASE_THRESHOLD_BYTES) == 1
        and mallopt(M_TRIM_THRESHOLD, RELEASE_TRIM_THRESHOLD_BYTES) == 1
    )


def tune_process(kind: str) -> bool:
    """Set the malloc behaviour of a process of ``kind``: ``"train"`` or ``"eval"``
    (:func:`retain_freed_memory`) or ``"app"`` (:func:`release_freed_memory`).

    Returns whether the setting is in effect (Linux with glibc). Raises ``ValueError``
    for another kind.
    """
    if kind not in PROCESS_KINDS:
        raise ValueError(
            _(
                "unknown process kind {kind!r}; use one of {PROCESS_KINDS}",
                kind=kind,
                PROCESS_KINDS=", ".join(PROCESS_KINDS),
            )
        )
    return release_freed_memory() if kind == "app" else retain_freed_memory()


def after_startup() -> None:
    """Exempt everything alive after start-up (torch, numpy, Qt and pyqtgraph modules, the
    window's widgets) from Python's cyclic garbage collector (``gc.freeze``).

    A full (generation-2) collection walks every tracked object: with the ~400,000 objects
    these libraries leave, one takes 150-226 ms (measured in ``benchmarks/soak.py`` during
    start-up), and it stops every thread. Frozen objects are still freed normally by
    reference counting; only cycles among them would stay, and start-up objects live as
    long as the app.
    """
    gc.collect()
    gc.freeze()


def collect_due(thresholds: tuple[int, ...]) -> int | None:
    """Collect what Python's automatic cyclic garbage collection would collect now, on the
    calling thread: the oldest generation whose count and the counts of the younger ones
    passed their ``thresholds`` (``gc.get_threshold()``, taken while automatic collection
    was on); returns that generation (0-2), or None when none is due. For a process that
    turned automatic collection off (``gc.disable``) to collect on one thread only."""
    counts = gc.get_count()
    generation = next((g for g in (2, 1, 0) if all(counts[k] > thresholds[k] for k in range(g + 1))), None)
    if generation is not None:
        gc.collect(generation)
    return generation


def lower_thread_priority(niceness: int = BACKGROUND_NICENESS) -> bool:
    """Lower the CPU priority of the calling thread, and of the compute threads it starts
    later (they inherit it), by ``niceness`` (nice values; at most to 19), so the GUI
    thread wins a core whenever it has work to do while this thread keeps the idle time.
    Linux only (there ``setpriority`` takes a thread id); returns False where it is not
    available or not allowed."""
    if not sys.platform.startswith("linux"):
        return False
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + niceness))
    except OSError:
        return False
    return True


def _in_new_thread(fn):
    """``fn()`` run on a short-lived thread of its own; returns its result."""
    result = []
    thread = threading.Thread(target=lambda: result.append(fn()), name="capsviz-threads")
    thread.start()
    thread.join()
    return result[0]


def default_intra_op_threads() -> int:
    """The intra-op thread count that threads using torch for the first time start with."""
    import torch

    return _in_new_thread(torch.get_num_threads)


def own_intra_op_threads(n: int) -> int:
    """From now on the calling thread's torch operations run on ``n`` >= 1 intra-op threads;
    the count that threads using torch for the first time start with (the default) is not
    changed. Returns the calling thread's count before.

    ``torch.set_num_threads`` sets both the caller's own count (OpenMP keeps one per
    thread) and that default; the default is put back from a short-lived thread, whose own
    count does not matter. (With a thread pool that is not per thread, the default stays.)
    """
    import torch

    default = default_intra_op_threads()
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    _in_new_thread(lambda: torch.set_num_threads(default))
    return before


@contextlib.contextmanager
def intra_op_threads(n: int) -> Iterator[None]:
    """Within the block, the calling thread's torch operations run on ``n`` >= 1 intra-op
    threads (:func:`own_intra_op_threads`); afterwards its own count is what it was."""
    before = own_intra_op_threads(n)
    try:
        yield
    finally:
        own_intra_op_threads(before)


@contextlib.contextmanager
def worker_thread(kind: str) -> Iterator[None]:
    """Tune the calling thread for the work of ``kind`` (``"background"`` or ``"inference"``):
    its CPU priority goes down by ``WORKER_NICENESS[kind]`` (for good: a lowered priority
    cannot be raised again without privileges), and until the block ends it computes on
    one intra-op thread fewer than the machine has (at least one), leaving a core to the
    GUI thread. With every core asked of each operation, the GUI's own operations wait
    on threads kept busy by training (``benchmarks/soak.py`` on 2 cores).

    Raises ``ValueError`` for another kind.
    """
    import torch

    if kind not in WORKER_NICENESS:
        raise ValueError(
            _(
                "unknown worker kind {kind!r}; use one of {WORKER_NICENESS}",
                kind=kind,
                WORKER_NICENESS=", ".join(WORKER_NICENESS),
            )
        )
    lower_thread_priority(WORKER_NICENESS[kind])
    with intra_op_threads(max(1, torch.get_num_threads() - 1)):
        yield
