"""Start the capsviz Qt application."""

from __future__ import annotations

import sys
from pathlib import Path


def run_app(checkpoint: Path | None = None, data_root: Path | None = None, device: str = "auto") -> int:
    """Open the main window and run the event loop; returns the exit code."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    app.setOrganizationName("capsviz")
    app.setApplicationName("capsviz")
    configure_pyqtgraph()
    from capsviz.gui.main_window import MainWindow

    window = MainWindow(checkpoint=checkpoint, data_root=data_root, device=device)
    window.show()
    return app.exec()


def configure_pyqtgraph() -> None:
    import pyqtgraph as pg

    pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)
