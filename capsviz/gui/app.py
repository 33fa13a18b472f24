"""Start the capsviz Qt application."""

from __future__ import annotations

import sys
from pathlib import Path


def run_app(checkpoint: Path | None = None, data_root: Path | None = None, device: str = "auto") -> int:
    """Open the main window and run the event loop; returns the exit code."""
    from PySide6.QtWidgets import QApplication

    from capsviz.runtime import after_startup, tune_process

    tune_process("app")  # steady resident memory over hours of use
    app = QApplication.instance() or QApplication(sys.argv)
    app.setOrganizationName("capsviz")
    app.setApplicationName("capsviz")
    configure_pyqtgraph()
    from capsviz.gui.main_window import MainWindow

    window = MainWindow(checkpoint=checkpoint, data_root=data_root, device=device)
    install_excepthook(window)
    close_on_sigint(window)
    window.show()
    after_startup()
    return app.exec()


def close_on_sigint(window) -> None:
    """Ctrl+C in the terminal (SIGINT) closes ``window`` as File → Quit does (asking while a run
    trains); a timer lets Python, which handles signals between bytecodes, in while Qt waits."""
    import signal

    from PySide6.QtCore import QTimer

    signal.signal(signal.SIGINT, lambda *_: window.close())
    QTimer(window, interval=200, timeout=lambda: None).start()


def install_excepthook(window) -> None:
    """Route exceptions that escape a Qt slot to a dialog with the traceback (and the log
    file) instead of only the terminal; the previous hook still runs
    (:func:`capsviz.logs.chain_excepthook`)."""
    from capsviz.logs import chain_excepthook

    chain_excepthook(lambda exc: window.errors.show_exception("Unexpected error", exc))


def configure_pyqtgraph() -> None:
    import pyqtgraph as pg

    pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)
