"""Shared fixtures. Qt runs offscreen; settings and user folders are redirected to tmp."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from capsviz.paths import shipped_checkpoint  # noqa: E402
from capsviz.runtime import retain_freed_memory  # noqa: E402

retain_freed_memory()  # as capsviz train and eval do (faster tests; the app releases instead)

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = shipped_checkpoint()


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
