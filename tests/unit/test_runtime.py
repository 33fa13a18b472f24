"""glibc malloc settings for training (capsviz.train.allocator)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

STEP_FAULTS = """
import resource, sys, torch
from capsviz.model import CapsNet, total_loss
from capsviz.train.allocator import retain_freed_memory
if sys.argv[1] == "retain":
    assert retain_freed_memory() and retain_freed_memory()  # applied, idempotent
torch.manual_seed(0)
model = CapsNet()
opt = torch.optim.Adam(model.parameters())
x, y = torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,))
faults = []
for _ in range(5):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    out = model(x, target=y)
    loss = total_loss(out.lengths, out.reconstruction, x, y)[0]
    opt.zero_grad()
    loss.backward()
    opt.step()
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(sum(faults[-2:]))
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", STEP_FAULTS, mode], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_retain_freed_memory_stops_page_faults_in_training_steps():
    """By default every training step maps (and the kernel zero-fills) its large tensors
    afresh; with the settings, steps after the first reuse the memory of the last."""
    default, retained = _faults("default"), _faults("retain")
    assert default > 10_000  # about 200 MB per step at batch 64
    assert retained * 10 < default


RSS_RETURNED = """
import sys, torch
from capsviz.train.allocator import release_freed_memory
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


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_release_freed_memory_returns_freed_blocks():
    """The app's setting: freeing a 20 MB tensor gives its memory back to the system. By
    default glibc keeps it in the heap under the blocks allocated after it, once a
    larger block has raised glibc's own threshold (the soak's RSS wandered by 300 MB)."""
    returned = {}
    for mode in ("default", "release"):
        out = subprocess.run([sys.executable, "-c", RSS_RETURNED, mode], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        returned[mode] = float(out.stdout)
    assert returned["default"] < 5, returned
    assert returned["release"] > 15, returned
