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

import contextlib
import errno
import glob
import os
import tempfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from capsviz.texts import _

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


def temporary_pattern(path: Path) -> str:
    """The glob of the temporary files :func:`replacing` writes beside ``path``."""
    return f"{glob.escape(path.name)}.*.tmp{glob.escape(path.suffix)}"


def check_writable(path: str | os.PathLike) -> None:
    """Check that a file can be written at ``path``: a probe file is made and removed in its
    folder. Raises ``OSError`` naming ``path`` where the folder is missing or not writable."""
    _temporary(Path(path)).unlink()


def check_room(path: str | os.PathLike) -> None:
    """Check before any work is spent on it that a file can be written at ``path``: its
    missing folders are created, a probe file is written and removed beside it, and the
    folders made here are removed again, so a command that fails later leaves nothing
    behind (:func:`replacing` makes them for good when it writes). An existing ``path`` is
    left as it is.

    Raises ``OSError`` naming ``path``: ``ENOTDIR`` where the nearest folder above it that
    exists is a file, else the error of creating a folder or of the probe (no permission, a
    read-only file system)."""
    path = Path(os.path.abspath(path))  # "new/../keep/x": "keep" is not a folder made here
    made = _make_folders(path)
    try:
        check_writable(path)
    finally:
        for folder in made:  # the deepest first; only the empty folders made above
            with contextlib.suppress(OSError):
                folder.rmdir()


def _make_folders(path: Path) -> list[Path]:
    """Create ``path``'s missing folders; returns those created, the deepest first. Raises
    ``OSError`` naming ``path`` (``ENOTDIR`` where the nearest that exists is a file)."""
    missing = [p for p in path.parents if not p.exists()]
    folder = path.parents[len(missing)] if len(missing) < len(path.parents) else None
    if folder is not None and not folder.is_dir():
        raise OSError(errno.ENOTDIR, _("{folder} is a file, not a folder", folder=folder), str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    return missing


def _temporary(path: Path) -> Path:
    """A new empty file beside ``path``, named like :func:`temporary_pattern`. Raises
    ``OSError`` naming ``path`` where the folder is missing or not writable."""
    try:
        fd, name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp" + path.suffix, dir=path.parent)
    except OSError as exc:
        reason = _("no file can be written in {folder} ({error})", folder=path.parent, error=exc.strerror or exc)
        raise OSError(exc.errno, reason, str(path)) from None
    os.close(fd)
    return Path(name)


@contextlib.contextmanager
def replacing(path: str | os.PathLike) -> Iterator[Path]:
    """Write ``path`` whole or not at all: the block writes the temporary file it is given
    (in ``path``'s folder, named like :func:`temporary_pattern`, with ``path``'s suffix, so
    writers that choose a format by the suffix choose the same one), which is then synced to
    the disk and renamed over ``path`` with the permissions a new file gets. If the block or
    the writing fails (a full disk, a killed writer's exception), the temporary file is
    removed and ``path`` is as it was; an ``OSError`` then names ``path``, not the
    temporary file.

    Creates ``path``'s missing folders. Raises ``OSError`` naming ``path`` where they
    cannot be created or written."""
    path = Path(path)
    _make_folders(path)
    tmp = _temporary(path)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise
