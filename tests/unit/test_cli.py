"""Headless commands: eval on the shipped model, clear errors for bad input."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from capsviz.data.mnist import load_sample
from capsviz.train.checkpoint import load_checkpoint
from capsviz.train.loop import evaluate_model

from ..conftest import mnist_root


def capsviz(*args, env=None):
    import os

    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "capsviz", *args], capture_output=True, text=True, env=e)


def test_version():
    r = capsviz("--version")
    assert r.returncode == 0 and r.stdout.startswith("capsviz ")


def test_shipped_checkpoint_on_the_assets_sample(shipped_checkpoint):
    model, info, _ = load_checkpoint(shipped_checkpoint)
    sample = load_sample()
    acc = float((evaluate_model(model, sample) == sample.labels).mean())
    assert acc >= 0.99, acc
    assert info.test_images == 10000 and info.test_accuracy >= 0.99


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_eval_prints_full_test_accuracy(shipped_checkpoint):
    r = capsviz("eval", "--checkpoint", str(shipped_checkpoint))
    assert r.returncode == 0, r.stderr
    m = re.search(r"test accuracy: ([\d.]+) % \(([\d,]+) / 10,000\)", r.stdout)
    assert m, r.stdout
    assert float(m.group(1)) >= 99.0
    assert "confusion matrix" in r.stdout


def test_eval_without_data_says_where_to_put_it(tmp_path, shipped_checkpoint):
    r = capsviz("eval", "--checkpoint", str(shipped_checkpoint), "--data-root", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.startswith("error: MNIST not found in " + str(tmp_path / "MNIST" / "raw"))
    assert "Traceback" not in r.stderr


def test_eval_refuses_a_corrupt_checkpoint(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(np.random.default_rng(0).bytes(5000))
    r = capsviz("eval", "--checkpoint", str(bad))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr
    assert str(bad) in r.stderr
