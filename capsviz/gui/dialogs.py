"""Messages and questions to the user: the error relay (message box, status bar, stderr,
log file), the About box, and the checkpoint file and quit questions."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMessageBox

from capsviz.gui.i18n import tr
from capsviz.logs import exception_report


class ErrorRelay(QObject):
    """The message boxes of ``window``: errors (``error_box``, the one open, else None) and
    the About box (``about_box``, made on first use and reused).

    Parameters
    ----------
    window : QMainWindow
        Parent of the boxes; its status bar repeats each error.
    about : callable
        Returns the About box's current text.
    """

    def __init__(self, window: QMainWindow, about: Callable[[], str]) -> None:
        super().__init__(window)
        self._window = window
        self._about = about
        self.error_box: QMessageBox | None = None
        self.about_box: QMessageBox | None = None
        self.status_message = ""  # the last error shown in the status bar

    def show_error(self, title: str, message: str, details: str | None = None) -> None:
        """Tell the user, and keep a record: a window-modal message box that does not block
        the event loop (``error_box`` until it is closed; with ``details``, e.g. a traceback, behind
        "Show Details…" and a "Copy details" button), the status bar, stderr, and the
        log file (:func:`capsviz.logs.log_path`)."""
        print(f"capsviz: {message}", file=sys.stderr)
        logging.getLogger("capsviz").error("%s: %s%s", title, message, f"\n{details}" if details else "")
        self._window.statusBar().showMessage(message, 10000)
        self.status_message = message
        if self.error_box is not None:
            self.error_box.close()
        box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, self._window)
        # Esc and close() close it (with a button of its own added, QMessageBox finds no escape
        # button and ignores both, so boxes with details piled up)
        box.setEscapeButton(QMessageBox.StandardButton.Ok)
        if details:
            box.setDetailedText(details)
            copy = box.addButton(tr("Copy details"), QMessageBox.ButtonRole.ActionRole)
            copy.clicked.disconnect()  # keep the box open after copying
            copy.clicked.connect(lambda: QApplication.clipboard().setText(f"{title}: {message}\n\n{details}"))
            box.copy_button = copy
        # deleted when closed: a box only closed stays a hidden child of the window, about
        # 0.2 MB each, so a session that opens 300 unreadable files would hold 300 (+60 MB)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.destroyed.connect(lambda *_: self._forget_error_box(box))
        self.error_box = box
        box.open()

    def clear_status(self) -> None:
        """Take the last error off the status bar if it is still there (a later success makes it stale)."""
        bar = self._window.statusBar()
        if self.status_message and bar.currentMessage() == self.status_message:
            bar.clearMessage()

    def _forget_error_box(self, box: QMessageBox) -> None:
        if self.error_box is box:
            self.error_box = None

    def show_exception(self, title: str, exc: BaseException) -> None:
        """:meth:`show_error` for an exception, with its traceback as the details."""
        message, details = exception_report(exc)
        self.show_error(title, message, details=details)

    def show_about(self) -> None:
        """Open the About box (one box, brought up to date)."""
        if self.about_box is None:
            ok = QMessageBox.StandardButton.Ok
            self.about_box = QMessageBox(QMessageBox.Icon.Information, tr("About capsviz"), "", ok, self._window)
        self.about_box.setText(self._about())
        self.about_box.open()


def ask_checkpoint_to_open(window: QMainWindow) -> Path | None:
    """Ask for a checkpoint file to load; None when the user cancels."""
    path, _ = QFileDialog.getOpenFileName(
        window, tr("Open checkpoint"), "", tr("safetensors (*.safetensors);;All files (*)")
    )
    return Path(path) if path else None


def ask_file_to_save(parent, title: str, name: str, kind: str) -> Path | None:
    """Ask where to write a file, offering ``name`` (``kind``: the dialog's filter, such as
    ``PNG (*.png)``); a name typed without ``name``'s suffix gets it (``grid`` -> ``grid.png``,
    ``run-0.5`` -> ``run-0.5.png``; ``grid.PNG`` stays). None when the user cancels."""
    path, _ = QFileDialog.getSaveFileName(parent, title, name, kind)
    if not path:
        return None
    path, suffix = Path(path), Path(name).suffix
    return path if path.suffix.lower() == suffix.lower() else path.with_name(path.name + suffix)


def write_or_warn(parent, title: str, path: Path, write: Callable[[Path], object]) -> bool:
    """``write(path)``; a file that cannot be written (a folder that is not there or not
    writable, a suffix no writer knows) is said in a message box titled ``title``, in one
    line, and nothing else changes. Returns whether the file was written."""
    try:
        write(path)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        QMessageBox.warning(parent, title, tr("Could not write {path}: {error}", path=path, error=reason))
        return False
    return True


def ask_checkpoint_to_save(window: QMainWindow, name: str = "capsnet.safetensors") -> Path | None:
    """Ask where to save the model as a checkpoint, offering ``name``; None when the user cancels."""
    return ask_file_to_save(window, tr("Save checkpoint"), name, "safetensors (*.safetensors)")


def confirm_stop_training(window: QMainWindow, paused: bool, into: Path) -> bool:
    """Ask whether to stop the training run (running or ``paused``) and quit; it autosaves to ``into``."""
    answer = QMessageBox.question(
        window,
        tr("Training is paused") if paused else tr("Training is running"),
        tr("Stop training, save it to {path} and quit?", path=into),
    )
    return answer == QMessageBox.StandardButton.Yes
