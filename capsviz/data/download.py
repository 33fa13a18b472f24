"""Fetch the MNIST archives from torchvision's mirrors, checked against its checksums.

The mirrors and each archive's MD5 are torchvision's own (``torchvision.datasets.MNIST``
``.mirrors`` and ``.resources``), and the check is its ``check_integrity``. Each archive is
streamed into a temporary file beside its destination and renamed into
``<root>/MNIST/raw/`` only once its checksum is right, so a failed, truncated or cancelled
download leaves no file that a later run could take as good. A mirror that refuses the
connection, answers with an error or serves a file with the wrong checksum is passed over
for the next one.
"""

from __future__ import annotations

import http.client
import os
import tempfile
import threading
import urllib.request
from collections.abc import Callable
from pathlib import Path

from capsviz.data.mnist import ELSEWHERE, MNIST_FILES, MnistNotFoundError, is_complete, resolve_data_root, split_files
from capsviz.texts import _

CHUNK = 1 << 16  # bytes read between progress reports and cancel checks
TIMEOUT_S = 30  # per connection attempt and per read


class DownloadCancelled(Exception):
    """The download was cancelled; nothing of it was kept."""


class MnistDownloadError(MnistNotFoundError):
    """No mirror gave an archive with the right checksum; the message names each attempt,
    where to put the files by hand, and which files."""


def mnist_sources() -> tuple[list[str], dict[str, str]]:
    """torchvision's MNIST mirrors (base URLs, tried in order) and {archive name: MD5}."""
    from torchvision.datasets import MNIST

    return list(MNIST.mirrors), dict(MNIST.resources)


def missing_archives(data_root: str | os.PathLike | None = None, train: bool | None = None) -> list[str]:
    """The ``.gz`` archive names of the split (``train`` True / False, None: both) that the
    data root has neither extracted nor as an archive."""
    raw = resolve_data_root(data_root) / "MNIST" / "raw"
    return [
        name + ".gz"
        for name, (_, size) in split_files(train).items()
        if not is_complete(raw / name, size) and not (raw / (name + ".gz")).is_file()
    ]


def download_mnist(
    data_root: str | os.PathLike | None = None,
    train: bool | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    mirrors: list[str] | None = None,
    checksums: dict[str, str] | None = None,
) -> list[Path]:
    """Download the MNIST archives the data root lacks into ``<root>/MNIST/raw/``.

    Parameters
    ----------
    data_root : the folder to fill (default: :func:`~capsviz.data.mnist.resolve_data_root`).
    train : True for the training split's two archives, False for the test split's, None for all four.
    progress : called as ``progress(name, done, total)`` as an archive's data arrives: its
        name and its bytes so far and in all (total 0 when the mirror does not say).
    cancelled : polled between chunks; when it returns True the download stops.
    mirrors, checksums : base URLs and {archive name: MD5} (default: :func:`mnist_sources`).

    Returns
    -------
    The archives written, in order (empty when nothing was missing).

    Raises
    ------
    DownloadCancelled
        When ``cancelled()`` turned True; the archive being fetched is removed.
    MnistDownloadError
        When every mirror failed for an archive (its message gives each mirror's fault and
        where to put the files by hand); archives already complete are kept.
    OSError
        When the data folder cannot be written.
    """
    default_mirrors, default_checksums = mnist_sources()
    mirrors = mirrors or default_mirrors
    checksums = checksums or default_checksums
    raw = resolve_data_root(data_root) / "MNIST" / "raw"
    names = missing_archives(data_root, train)
    if not names:
        return []
    raw.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        faults = []
        for mirror in mirrors:
            url = mirror.rstrip("/") + "/" + name

            def report(done: int, total: int, name=name) -> None:
                if progress is not None:
                    progress(name, done, total)

            try:
                written.append(_fetch(url, raw / name, checksums[name], report, cancelled))
                break
            except (OSError, ValueError, http.client.HTTPException) as exc:  # URLError is an OSError
                if isinstance(exc, PermissionError):
                    raise
                faults.append(f"{url}: {getattr(exc, 'reason', None) or exc}")
        else:
            raise MnistDownloadError(
                _(
                    "cannot download {name} ({faults}). Put the MNIST files in {raw} by hand "
                    "({MNIST_FILES}, or their .gz archives), {ELSEWHERE}",
                    name=name,
                    faults="; ".join(faults),
                    raw=raw,
                    MNIST_FILES=", ".join(MNIST_FILES),
                    ELSEWHERE=_(ELSEWHERE),
                )
            )
    return written


def _fetch(url: str, dest: Path, md5: str, report, cancelled) -> Path:
    """Stream ``url`` into a temporary file beside ``dest``; rename it to ``dest`` when its
    MD5 is ``md5``. Raises ``ValueError`` for a wrong checksum or a short body, the
    ``urllib`` errors for a failed connection, ``DownloadCancelled`` when cancelled."""
    from torchvision.datasets.utils import check_integrity

    fd, tmp = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "capsviz"})
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            total = int(response.headers.get("Content-Length") or 0)
            done = 0
            report(0, total)
            while chunk := response.read(CHUNK):
                if cancelled is not None and cancelled():
                    raise DownloadCancelled(f"download of {dest.name} cancelled")
                out.write(chunk)
                done += len(chunk)
                report(done, total)
        if total and done != total:
            raise ValueError(_("the connection closed after {done:,} of {total:,} bytes", done=done, total=total))
        if not check_integrity(tmp, md5):
            raise ValueError(_("wrong checksum (MD5 is not {md5}): a damaged or different file", md5=md5))
        os.replace(tmp, dest)
        return dest
    finally:
        Path(tmp).unlink(missing_ok=True)


class BackgroundDownload:
    """:func:`download_mnist` of ``data_root`` on a daemon thread of its own, started at once,
    for a caller that polls it (the app's progress dialog).

    ``name``, ``done`` and ``total`` are the file under way and its bytes so far and in all
    (total 0 until a mirror says); :attr:`running` says whether it still runs; ``error`` is
    the exception it ended with (``DownloadCancelled`` after :meth:`cancel`), else None.
    """

    def __init__(self, data_root: str | os.PathLike | None = None) -> None:
        self.name, self.done, self.total = "", 0, 0
        self.error: Exception | None = None
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(data_root,), name="capsviz-download", daemon=True)
        self._thread.start()

    def _run(self, data_root) -> None:
        try:
            download_mnist(data_root, progress=self._progress, cancelled=self._cancel.is_set)
        except Exception as exc:  # the caller polls for it
            self.error = exc

    def _progress(self, name: str, done: int, total: int) -> None:
        self.name, self.done, self.total = name, done, total

    def cancel(self) -> None:
        """Stop at the next chunk, keeping nothing of the file under way."""
        self._cancel.set()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()
