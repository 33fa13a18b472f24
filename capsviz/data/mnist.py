"""Find, extract and load MNIST in torchvision's layout ``<root>/MNIST/raw/``.

The data root is, in order: an explicit argument (``--data-root``), ``$CAPSVIZ_DATA``,
then the platform's user data folder. Archives (``*-ubyte.gz``) are extracted next to
themselves, or into the user cache folder when the data folder is read-only.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from capsviz.paths import mnist_sample, user_cache_dir, user_data_dir
from capsviz.texts import N_, QT_TR_NOOP, _

# name -> (number of items, uncompressed size in bytes)
MNIST_FILES = {
    "train-images-idx3-ubyte": (60000, 16 + 60000 * 784),
    "train-labels-idx1-ubyte": (60000, 8 + 60000),
    "t10k-images-idx3-ubyte": (10000, 16 + 10000 * 784),
    "t10k-labels-idx1-ubyte": (10000, 8 + 10000),
}


class MnistNotFoundError(FileNotFoundError):
    """Raised when MNIST is not in the data root; the message says where to put it."""


def default_data_root() -> Path:
    """The user data folder for capsviz (:func:`capsviz.paths.user_data_dir`)."""
    return user_data_dir()


def resolve_data_root(data_root: str | os.PathLike | None = None) -> Path:
    """``data_root`` if given, else ``$CAPSVIZ_DATA``, else :func:`default_data_root`."""
    if data_root:
        return Path(data_root).expanduser()
    env = os.environ.get("CAPSVIZ_DATA")
    if env:
        return Path(env).expanduser()
    return default_data_root()


class MnistDataError(ValueError):
    """An MNIST file exists but is unusable; the message names the file and the fault."""


def _atomic_write(dest: Path, fill, expected_size: int, source: Path) -> None:
    """Write ``dest`` through a temporary file in its folder, check its size, then rename."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            fill(out)
        size = Path(tmp).stat().st_size
        if size != expected_size:
            raise MnistDataError(
                _(
                    "{source}: gives {size:,} bytes, expected {expected_size:,} (truncated or not an MNIST file)",
                    source=source,
                    size=size,
                    expected_size=expected_size,
                )
            )
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, dest)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        Path(tmp).unlink(missing_ok=True)
        raise MnistDataError(_("{source}: corrupt or truncated archive ({exc})", source=source, exc=exc)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _extract(archive: Path, dest: Path, expected_size: int) -> None:
    """Decompress ``archive`` to ``dest`` atomically; the result must have ``expected_size`` bytes."""

    def fill(out):
        with gzip.open(archive, "rb") as src:
            shutil.copyfileobj(src, out, length=1 << 20)

    _atomic_write(dest, fill, expected_size, archive)


IDX_MAGIC = {3: 0x00000803, 1: 0x00000801}  # unsigned bytes, 3 dimensions (images) or 1 (labels)


def check_idx(path: Path, count: int) -> None:
    """Check an extracted MNIST IDX file's header and size before anything reads it.

    ``count``: the number of images or labels the file must hold (60,000 or 10,000).

    Raises
    ------
    MnistDataError
        Naming the file and the fault: a bad magic number, a wrong count or image size,
        or a truncated (or over-long) file.
    """
    images = "images" in path.name
    dims = 3 if images else 1
    header = 4 * (1 + dims)
    with open(path, "rb") as f:
        head = f.read(header)
    if len(head) < header:
        raise MnistDataError(_("{path}: truncated: {head} bytes, not even an IDX header", path=path, head=len(head)))
    magic = int.from_bytes(head[:4], "big")
    if magic != IDX_MAGIC[dims]:
        raise MnistDataError(
            _(
                "{path}: bad magic number 0x{magic:08x}, expected 0x{expected:08x} (an IDX file of "
                "{items}); not an MNIST file",
                path=path,
                magic=magic,
                expected=IDX_MAGIC[dims],
                items=_("images") if images else _("labels"),
            )
        )
    shape = [int.from_bytes(head[4 * k : 4 * k + 4], "big") for k in range(1, dims + 1)]
    if shape[0] != count:
        raise MnistDataError(
            _(
                "{path}: holds {n:,} {items}, expected {count:,}; the image and label files do not belong together",
                path=path,
                n=shape[0],
                items=_("images") if images else _("labels"),
                count=count,
            )
        )
    if images and shape[1:] != [28, 28]:
        raise MnistDataError(
            _(
                "{path}: images of {height} x {width} pixels, expected 28 x 28",
                path=path,
                height=shape[1],
                width=shape[2],
            )
        )
    expected = header + count * (784 if images else 1)
    size = path.stat().st_size
    if size != expected:
        raise MnistDataError(
            _(
                "{path}: {problem}: {size:,} bytes, expected {expected:,}",
                path=path,
                problem=_("truncated") if size < expected else _("too long"),
                size=size,
                expected=expected,
            )
        )


# the way out, when the files are not where capsviz looks (the end of its messages)
ELSEWHERE = N_("or point --data-root / CAPSVIZ_DATA at a folder that contains MNIST/raw/.")


def is_complete(plain: Path, size: int) -> bool:
    """Whether the extracted MNIST file ``plain`` is there at its full ``size`` in bytes."""
    return plain.is_file() and plain.stat().st_size == size


def _writable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK)


def split_files(train: bool | None = None) -> dict[str, tuple[int, int]]:
    """The entries of ``MNIST_FILES`` of one split (``train`` True or False), or all four (None)."""
    if train is None:
        return dict(MNIST_FILES)
    prefix = "train" if train else "t10k"
    return {name: spec for name, spec in MNIST_FILES.items() if name.startswith(prefix)}


def prepare_mnist(data_root: str | os.PathLike | None = None, train: bool | None = None) -> Path:
    """Make sure the extracted MNIST files exist and return the root to read them from.

    ``train``: True for the two training files, False for the two test files, None for all four.

    Returns
    -------
    Path
        A folder ``root`` such that ``root/MNIST/raw/<name>`` holds the IDX files asked for.
        It is the data root itself, or the user cache folder when the data root is
        read-only and holds only ``.gz`` archives.

    Raises
    ------
    MnistNotFoundError
        If a file is neither present nor available as a ``.gz`` archive; the message
        names the folder and the expected file names.
    """
    root = resolve_data_root(data_root)
    raw = root / "MNIST" / "raw"
    cache_root = user_cache_dir()
    cache_raw = cache_root / "MNIST" / "raw"
    use_cache = False
    missing = []
    files = split_files(train)
    for name, (count, size) in files.items():
        plain, archive = raw / name, raw / (name + ".gz")
        if is_complete(plain, size):
            continue
        if not archive.is_file():
            if plain.is_file():
                check_idx(plain, count)  # present but the wrong size: say what is wrong with it
            missing.append(name)
            continue
        if _writable(raw):
            _extract(archive, plain, size)
        else:
            use_cache = True
    if missing:
        raise MnistNotFoundError(
            _(
                "MNIST not found in {raw}: missing {missing} (or the .gz archives). Put the MNIST "
                "files there, {ELSEWHERE}",
                raw=raw,
                missing=", ".join(missing),
                ELSEWHERE=_(ELSEWHERE),
            )
        )
    if not use_cache:
        return root
    # A read-only folder with archives: give torchvision an extracted copy in the cache.
    for name, (_count, size) in files.items():
        cached = cache_raw / name
        if is_complete(cached, size):
            continue
        plain = raw / name
        if is_complete(plain, size):
            _atomic_write(cached, lambda out, src=plain: out.write(src.read_bytes()), size, plain)
        else:
            _extract(raw / (name + ".gz"), cached, size)
    return cache_root


@dataclass
class MnistSplit:
    """One MNIST split in memory.

    images : uint8 numpy array, shape (N, 28, 28), 0 = background, 255 = ink
    labels : int64 numpy array, shape (N,), values 0..9
    """

    images: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)

    def image(self, index: int) -> np.ndarray:
        """Digit ``index`` as a model input: (28, 28) float32 in [0, 1], exactly as stored."""
        return self.images[index].astype(np.float32) / np.float32(255)

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(N, 1, 28, 28) float32 in [0, 1] and (N,) int64."""
        x = torch.from_numpy(self.images).unsqueeze(1).float().div_(255.0)
        return x, torch.from_numpy(self.labels)


def load_mnist(train: bool, data_root: str | os.PathLike | None = None) -> MnistSplit:
    """Load the MNIST training (60,000) or test (10,000) split with torchvision.

    Raises
    ------
    MnistNotFoundError
        If the data is missing (see :func:`prepare_mnist`).
    MnistDataError
        If a file is there but is not what it should be (see :func:`check_idx`).
    """
    from torchvision.datasets.mnist import read_image_file, read_label_file

    root = prepare_mnist(data_root, train=train)
    raw = root / "MNIST" / "raw"
    files = split_files(train)
    for name, (count, _size) in files.items():
        check_idx(raw / name, count)
    images_file, labels_file = sorted(files, key=lambda name: "labels" in name)
    try:  # torchvision's IDX readers, on this split's two files only
        images, labels = read_image_file(str(raw / images_file)), read_label_file(str(raw / labels_file))
    except (RuntimeError, ValueError, AssertionError) as exc:
        raise MnistDataError(_("cannot read MNIST in {raw}: {exc}", raw=raw, exc=exc)) from None
    return MnistSplit(images=images.numpy().astype(np.uint8), labels=labels.numpy().astype(np.int64))


def load_sample(path: str | os.PathLike | None = None) -> MnistSplit:
    """The MNIST test-set sample shipped with capsviz (the first 2,000 images of the test
    split; :func:`capsviz.paths.mnist_sample`), or the ``.npz`` file at ``path``."""
    with np.load(path or mnist_sample(), allow_pickle=False) as data:
        return MnistSplit(images=data["images"].astype(np.uint8), labels=data["labels"].astype(np.int64))


def load_test_or_sample(data_root: str | os.PathLike | None = None) -> tuple[MnistSplit, str]:
    """The full test split when available, else the shipped sample; also returns a description
    (an English source, which the app translates)."""
    try:
        return load_mnist(train=False, data_root=data_root), QT_TR_NOOP("MNIST test set")
    except MnistNotFoundError:
        return load_sample(), QT_TR_NOOP("assets sample")
