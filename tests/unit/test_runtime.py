"""Process tuning (capsviz.runtime): malloc settings, worker-thread priorities and thread counts."""

from __future__ import annotations

import platform
import subprocess
import sys
import threading

import pytest

STEP_FAULTS = """
import resource, statistics, sys, torch
from capsviz.model import CapsNet, total_loss
from capsviz.runtime import retain_freed_memory
if sys.argv[1] == "retain":
    assert retain_freed_memory() and retain_freed_memory()  # applied, idempotent
torch.manual_seed(0)
model = CapsNet()
opt = torch.optim.Adam(model.parameters())
x, y = torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,))
faults = []
for _ in range(8):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    out = model(x, target=y)
    loss = total_loss(out.lengths, out.reconstruction, x, y)[0]
    opt.zero_grad()
    loss.backward()
    opt.step()
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(statistics.median(faults[2:]))
"""


def _run(script: str, *args: str, timeout: float = 300) -> str:
    """What ``script`` prints, run in a fresh Python process (malloc settings are per process)."""
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _faults(mode: str) -> float:
    """The median number of page faults of training steps 3 to 8 (a step at batch 64)."""
    return float(_run(STEP_FAULTS, mode))


@pytest.mark.slow
@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_retain_freed_memory_stops_page_faults_in_training_steps():
    """By default every training step maps (and the kernel zero-fills) its large tensors
    afresh; with the settings, steps after the first few reuse the memory of the last (one
    of steps 2 to 4 may still grow the heap by some 120 MB, as the intra-op threads' blocks
    land), so the test takes the median step."""
    default, retained = _faults("default"), _faults("retain")
    assert default > 10_000  # about 140,000 (550 MB) per step at batch 64
    assert retained * 10 < default


RSS_RETURNED = """
import sys, torch
from capsviz.runtime import release_freed_memory
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
if sys.argv[1] == "release":
    assert release_freed_memory()
t = torch.empty(7_500_000); t.fill_(1.0); del t  # 30 MB, freed: glibc raises its threshold to 30 MB
a = torch.empty(5_000_000); a.fill_(1.0)  # 20 MB
pins = [torch.ones(2000) for _ in range(50)]  # smaller blocks allocated after it
before = rss_mb()
del a
print(before - rss_mb())
"""


@pytest.mark.slow
@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_release_freed_memory_returns_freed_blocks():
    """The app's setting: freeing a 20 MB tensor gives its memory back to the system. By
    default glibc keeps it in the heap under the blocks allocated after it, once a
    larger block has raised glibc's own threshold (the soak's RSS wandered by 300 MB)."""
    returned = {}
    for mode in ("default", "release"):
        returned[mode] = float(_run(RSS_RETURNED, mode, timeout=120))
    assert returned["default"] < 5, returned
    assert returned["release"] > 15, returned


def test_lower_thread_priority_lowers_only_the_calling_thread():
    import os
    import sys

    import pytest

    from capsviz.runtime import lower_thread_priority

    if not sys.platform.startswith("linux"):
        pytest.skip("per-thread priorities are set on Linux only")
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = []

    def lower_twice() -> None:
        tid = threading.get_native_id()
        seen.append(lower_thread_priority(3))
        seen.append(os.getpriority(os.PRIO_PROCESS, tid))
        seen.append(lower_thread_priority(30))  # capped at the lowest priority, 19
        seen.append(os.getpriority(os.PRIO_PROCESS, tid))

    t = threading.Thread(target=lower_twice)
    t.start()
    t.join()
    assert seen == [True, min(19, own + 3), True, 19]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own  # the caller's thread only


def _count_in_new_thread() -> int:
    import torch

    seen = []
    t = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    t.start()
    t.join()
    return seen[0]


def test_a_background_worker_spares_a_core_for_itself_only():
    """Training's thread computes on one intra-op thread fewer; threads that start
    meanwhile (the inference thread) and the worker's own count afterwards are as before."""
    import torch

    from capsviz.runtime import worker_thread

    default = torch.get_num_threads()
    seen = {}

    def work() -> None:
        seen["before"] = torch.get_num_threads()
        with worker_thread("background"):
            seen["inside"] = torch.get_num_threads()
            seen["new thread"] = _count_in_new_thread()
        seen["after"] = torch.get_num_threads()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == {"before": default, "inside": max(1, default - 1), "new thread": default, "after": default}
    assert torch.get_num_threads() == default == _count_in_new_thread()


def test_unknown_kinds_are_refused():
    from capsviz.runtime import tune_process, worker_thread

    with pytest.raises(ValueError, match="unknown process kind 'gui'"):
        tune_process("gui")
    with pytest.raises(ValueError, match="unknown worker kind 'training'"):
        with worker_thread("training"):
            pass


def test_the_machine_is_named_for_the_benchmarks():
    import torch

    from capsviz.runtime import cpu_bf16_units, cpu_model, machine_line, machine_summary

    summary = machine_summary()
    assert summary["cpu"] == cpu_model() and summary["cpu"]
    line = machine_line(summary)
    assert line.startswith(f"machine: {summary['cpu']}; bfloat16 units: ") and line.endswith(
        f"torch {torch.__version__}"
    )
    assert summary["cpu_bf16_units"] == list(cpu_bf16_units()) and summary["torch"] == torch.__version__
    if summary["mkl"] is not None:
        assert f"; MKL: {summary['mkl']}; " in line
    if sys.platform.startswith("linux"):
        with open("/proc/cpuinfo") as f:
            name = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
        assert summary["cpu"].startswith(name) and "family" in summary["cpu"]


def test_collect_due_collects_the_generation_whose_threshold_passed():
    import gc
    import weakref

    from capsviz.runtime import collect_due

    class Node:
        pass

    was_on = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        assert collect_due((10**9, 10**9, 10**9)) is None  # nothing is due
        node = Node()
        node.self = node  # a cycle: only the cyclic collector frees it
        gone = weakref.ref(node)
        del node
        assert gone() is not None
        assert collect_due((0, -1, -1)) == 2 and gone() is None  # every count passed: all generations
        kept = [Node() for _ in range(10)]  # new tracked objects: generation 0's count passes 0
        assert collect_due((0, 10**9, 10**9)) == 0 and len(kept) == 10
    finally:
        if was_on:
            gc.enable()


PASS_FAULTS = """
import resource, sys, torch
from capsviz.model import CapsNet, CapsNetConfig
from capsviz.runtime import release_freed_memory
assert release_freed_memory()
torch.manual_seed(0)
model = CapsNet(CapsNetConfig(image_size=36)).eval()
x = torch.rand(1, 1, 36, 36)
faults = []
with torch.inference_mode():
    for _ in range(20):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        model(x, trace=True)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(sum(faults[-10:]))
"""


@pytest.mark.slow
@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_the_apps_setting_keeps_a_pairs_pass_from_page_faulting():
    """Under the app's malloc setting a traced pass of the 36x36 pair model reuses its
    memory: its temporaries (u_hat's 2 MB, the Winograd path's transformed inputs of up to
    3.7 MB, all under the 4 MiB mmap threshold) stay at the heap's top (16 MiB trim
    threshold). With glibc's 128 KiB trim threshold each pass page-faults about 1,900
    pages (4 KiB) in anew."""
    assert int(_run(PASS_FAULTS)) < 1000  # over the last 10 passes; 500 is one 2 MB block


def mkl_available() -> bool:
    import torch

    return torch.backends.mkl.is_available()


def test_avx512_products_on_intel_cpus_with_avx512_whose_mkl_is_not_capped(monkeypatch):
    """Full-width AVX-512 products are assumed on an Intel CPU with avx512f only, and not
    where MKL_ENABLE_INSTRUCTIONS caps MKL below AVX-512."""
    import capsviz.runtime as runtime

    def cpu(vendor: str, flags: str) -> None:
        monkeypatch.setattr(runtime, "_cpuinfo", lambda: {"vendor_id": vendor, "flags": flags})

    monkeypatch.delenv("MKL_ENABLE_INSTRUCTIONS", raising=False)
    cpu("GenuineIntel", "fma avx2 avx512f avx512_bf16")
    assert runtime.avx512_products()
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "avx2")
    assert not runtime.avx512_products()
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "AVX512")
    assert runtime.avx512_products()
    cpu("AuthenticAMD", "fma avx2 avx512f avx512_bf16")  # Zen 4: AVX-512 on 256-bit units
    assert not runtime.avx512_products()
    cpu("GenuineIntel", "fma avx2 avx512fp16x")  # a flag that only starts with avx512f
    assert not runtime.avx512_products()
    cpu("", "")  # no /proc/cpuinfo
    assert not runtime.avx512_products()


def test_intel_cpu_reads_the_vendor(monkeypatch):
    """Intel's CPUs are told by /proc/cpuinfo's vendor_id, whatever their flags; none without it."""
    import capsviz.runtime as runtime

    for vendor, flags, expected in (
        ("GenuineIntel", "fma avx2", True),
        ("GenuineIntel", "fma avx2 avx512f avx512_bf16", True),
        ("AuthenticAMD", "fma avx2 avx512f avx512_bf16", False),
        ("", "", False),
    ):
        fields = {"vendor_id": vendor, "flags": flags}
        monkeypatch.setattr(runtime, "_cpuinfo", lambda fields=fields: fields)
        assert runtime.intel_cpu() is expected


@pytest.mark.skipif(not mkl_available(), reason="needs torch with MKL")
def test_mkl_names_the_code_it_runs(monkeypatch):
    """MKL's own account of its code path: on an Intel CPU with AVX2, AVX2 where it is told
    to go no further (a ceiling: elsewhere MKL may choose less), AVX-512 where the CPU has it."""
    from capsviz.runtime import _cpuinfo, mkl_code_path

    for name in ("MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "MKL_VERBOSE_OUTPUT_FILE"):
        monkeypatch.delenv(name, raising=False)
    path = mkl_code_path.__wrapped__()
    assert path, path
    cpu = _cpuinfo()
    flags = set(cpu.get("flags", "").split())
    if cpu.get("vendor_id") == "GenuineIntel" and "avx2" in flags:
        assert path == ("AVX-512" if "avx512f" in flags else "AVX2")
        monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "AVX2")
        assert mkl_code_path.__wrapped__() == "AVX2"
