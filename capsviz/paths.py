"""Where capsviz finds its shipped files and keeps the user's: one place for every path.

- Shipped resources (the pretrained checkpoint, the MNIST test sample) are package data
  of ``capsviz.assets`` (the repository's ``assets/`` folder, mapped into the package by
  ``pyproject.toml``), found with :mod:`importlib.resources`, so an ordinary
  ``pip install`` carries them. In a source checkout that is not installed, the
  repository's ``assets/`` is used.
- User folders come from platformdirs (e.g. on Linux ``~/.local/share/capsviz`` for data
  and checkpoints, ``~/.cache/capsviz``, ``~/.local/state/capsviz/log``).

Qt-free; importing this module imports neither torch nor Qt.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

APP_NAME = "capsviz"
SHIPPED_CHECKPOINT_NAME = "capsnet_mnist.safetensors"
SHIPPED_MULTIMNIST_NAME = "capsnet_multimnist.safetensors"
SHIPPED_BASELINE_NAMES = {"mnist": "baseline_mnist.safetensors", "multimnist": "baseline_multimnist.safetensors"}
MNIST_SAMPLE_NAME = "mnist_test_sample.npz"
SOURCE_ASSETS = Path(__file__).resolve().parents[1] / "assets"


def assets_dir() -> Path:
    """The folder of the shipped resources (installed package data, else ``assets/`` of the
    source tree). It may lack a file: callers say so when one is missing."""
    try:
        folder = resources.files("capsviz.assets")
    except ModuleNotFoundError:
        return SOURCE_ASSETS
    return Path(str(folder))


def shipped_checkpoint() -> Path:
    """The pretrained MNIST CapsNet shipped with capsviz (a safetensors checkpoint)."""
    return assets_dir() / SHIPPED_CHECKPOINT_NAME


def shipped_multimnist_checkpoint() -> Path:
    """The pretrained MultiMNIST CapsNet (36x36 pairs of overlapping digits) shipped with capsviz."""
    return assets_dir() / SHIPPED_MULTIMNIST_NAME


def shipped_baseline(dataset: str = "mnist") -> Path:
    """The baseline CNN shipped for ``dataset`` (``mnist`` or ``multimnist``), shown beside
    the capsules; ``KeyError`` for another dataset."""
    return assets_dir() / SHIPPED_BASELINE_NAMES[dataset]


def mnist_sample() -> Path:
    """The shipped sample of the MNIST test split (``.npz`` with ``images``, ``labels``)."""
    return assets_dir() / MNIST_SAMPLE_NAME


def user_data_dir() -> Path:
    """The user data folder (MNIST may live here; checkpoints go below it)."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def user_cache_dir() -> Path:
    """The user cache folder (MNIST extracted from read-only archives goes here)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def user_log_dir() -> Path:
    """The user log folder (``capsviz.log``)."""
    import platformdirs

    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def user_checkpoint_dir() -> Path:
    """Where training runs write by default: ``<user data folder>/checkpoints``."""
    return user_data_dir() / "checkpoints"
