"""Shared fixtures. Qt runs offscreen; settings and user folders are redirected to tmp."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Float32 passes on every CPU, so that expected values hold to float32 tolerances whatever
# the machine; the tests of the bfloat16 path (capsviz.runtime.bf16_inference) turn it on.
os.environ["CAPSVIZ_INFERENCE"] = "fp32"

from capsviz.paths import shipped_checkpoint  # noqa: E402
from capsviz.runtime import retain_freed_memory  # noqa: E402

retain_freed_memory()  # as capsviz train and eval do (faster tests; the app releases instead)
if os.environ.get("PYTEST_XDIST_WORKER"):  # tests spread over the cores (-n): one thread each
    import torch

    torch.set_num_threads(1)

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = shipped_checkpoint()


def pytest_collection_modifyitems(items):
    """A test that needs the full MNIST data set (skipped without ``CAPSVIZ_DATA``) is
    ``slow``, as are those marked so: ``-m "not slow"`` (``python3 run.py test --fast``)
    leaves them out."""
    for item in items:
        if any(m.kwargs.get("reason", "").startswith("needs CAPSVIZ_DATA") for m in item.iter_markers("skipif")):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _english_messages():
    """The core's messages in English whatever the machine's locale (a test of the other
    language sets it, and the app's language switch sets it too)."""
    from capsviz import texts

    texts.set_language("en")
    yield
    texts.set_language("en")


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Point platformdirs' user folders (data, cache, config) at a temporary folder."""
    home = tmp_path_factory.mktemp("home")
    for var in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    yield


def mnist_root() -> Path | None:
    """The data root when the full MNIST archives are available, else None."""
    env = os.environ.get("CAPSVIZ_DATA")
    if env and (Path(env) / "MNIST" / "raw").is_dir():
        return Path(env)
    return None


@pytest.fixture
def shipped_checkpoint() -> Path:
    if not SHIPPED.is_file():
        pytest.fail(f"the shipped checkpoint is missing: {SHIPPED}")
    return SHIPPED


@pytest.fixture
def winograd_calls(monkeypatch) -> list[int]:
    """The batch sizes of PrimaryCaps' calls of ``winograd_conv2d`` during the test (the
    calls still compute)."""
    import capsviz.model.capsnet as capsnet

    calls, winograd = [], capsnet.winograd_conv2d
    monkeypatch.setattr(capsnet, "winograd_conv2d", lambda x, *a: calls.append(x.shape[0]) or winograd(x, *a))
    return calls


def forward_scores(model, images, routing_iterations: int | None = None) -> np.ndarray:
    """Scores (N, 10) of ``images`` (N, H, H), uint8 or floats in [0, 1], from the network's
    own forward pass alone (no capsviz evaluation helper): a CapsNet's capsule lengths
    ||v_j|| (its output ``lengths``), a CNN's softmax or sigmoid of its logits. An
    expectation from outside the helpers the commands and views use."""
    import torch

    from capsviz.model import CapsNet

    images = np.asarray(images)
    x = torch.from_numpy(images.astype(np.float32) / (255.0 if images.dtype == np.uint8 else 1.0)).unsqueeze(1)
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(x), 250):
            chunk = x[start : start + 250]
            if isinstance(model, CapsNet):
                out.append(model(chunk, routing_iterations=routing_iterations, reconstruct=False).lengths)
            else:
                logits = model(chunk)
                out.append(torch.softmax(logits, 1) if model.cfg.output == "softmax" else torch.sigmoid(logits))
    return torch.cat(out).numpy()
