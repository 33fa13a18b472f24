"""Where errors go besides the screen: a rotating log file in the platform's user log
folder (e.g. ``~/.local/state/capsviz/log/capsviz.log`` on Linux), and the version
report shared by ``capsviz --version`` and the About box."""

from __future__ import annotations

import logging
import logging.handlers
import platform
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from capsviz import __version__
from capsviz.texts import english

LOGGER_NAME = "capsviz"
MAX_BYTES = 1_000_000
BACKUPS = 3


def exception_report(exc: BaseException) -> tuple[str, str]:
    """What the user is told of ``exc``: ``(message, details)``, the message
    ``"TypeName: text"`` and the details its formatted traceback."""
    details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return f"{type(exc).__name__}: {exc}", details


def chain_excepthook(report: Callable[[BaseException], None]) -> None:
    """After the hook it replaces, hand every exception that reaches ``sys.excepthook`` (in
    the app: one escaping a Qt slot) to ``report(exc)``, its traceback attached; not
    ``KeyboardInterrupt`` or ``SystemExit``. A report that fails itself (its window gone) is
    dropped: the previous hook has written the exception to the terminal already."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        if isinstance(value, (KeyboardInterrupt, SystemExit)):
            return
        try:
            report(value.with_traceback(tb))
        except Exception:  # the terminal and the log have it
            pass

    sys.excepthook = hook


def log_path() -> Path:
    from capsviz.paths import user_log_dir

    return user_log_dir() / "capsviz.log"


def setup_logging() -> logging.Logger:
    """The ``capsviz`` logger, writing warnings and errors (with tracebacks) to
    :func:`log_path`, rotated at 1 MB with 3 old files kept. Safe to call again; a log
    folder that cannot be created leaves logging to the screen only."""
    logger = logging.getLogger(LOGGER_NAME)
    path = log_path()
    if any(getattr(h, "baseFilename", None) == str(path) for h in logger.handlers):
        return logger
    logger.setLevel(logging.INFO)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    except OSError:
        return logger
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.WARNING)
    logger.addHandler(handler)
    return logger


def version_report(device: str | None = None) -> str:
    """One line: capsviz, Python, torch (with its CUDA), torchvision, Qt and the compute device.
    torchvision's version is read from its package data, not by importing it: a build that
    does not match torch fails to import, and this line is what names the two."""
    from importlib.metadata import PackageNotFoundError, version

    import torch

    parts = [f"capsviz {__version__}", f"Python {platform.python_version()}", f"torch {torch.__version__}"]
    try:
        parts.append(f"torchvision {version('torchvision')}")
    except PackageNotFoundError:
        parts.append("torchvision not installed")
    try:
        import PySide6
        from PySide6.QtCore import qVersion

        parts.append(f"Qt {qVersion()} (PySide6 {PySide6.__version__})")
    except ImportError:
        parts.append("Qt not installed")
    if device is None:
        if torch.cuda.is_available():
            device = f"cuda ({torch.cuda.get_device_name(0)})"
        elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            device = "mps"
        else:
            device = f"cpu ({torch.get_num_threads()} threads)"
    parts.append(f"device {device}")
    return ", ".join(parts)


def about_report(device, model: str, tr=english) -> str:
    """The About box's text: versions, ``device`` (a ``torch.device``, with the GPU's name),
    ``model`` (a description of the loaded model), the log file and the paper (``tr``: see
    :mod:`capsviz.texts`)."""
    import torch

    name = str(device)
    if device.type == "cuda":
        name += f" ({torch.cuda.get_device_name(device)})"
    versions = version_report(name).split(", ")
    versions[-1] = tr("device: {device}", device=name)
    return "\n".join(versions) + tr(
        "\n\nmodel: {model}\nlog file: {log}\n\nSabour, Frosst & Hinton (2017), Dynamic Routing Between Capsules, "
        "arXiv:1710.09829.",
        model=model,
        log=log_path(),
    )
