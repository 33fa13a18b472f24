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
