from __future__ import annotations

import pytest

from capsviz.gui.app import configure_pyqtgraph


def temp_settings(folder):
    """A settings file of its own for each test: tests never read or write the user's."""
    from PySide6.QtCore import QSettings

    return QSettings(str(folder / "capsviz.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, shipped_checkpoint, tmp_path):
    configure_pyqtgraph()
    from capsviz.gui.main_window import MainWindow

    w = MainWindow(checkpoint=shipped_checkpoint, device="cpu", settings=temp_settings(tmp_path))
    w._confirm_close = lambda: True
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: w.docks_ready, timeout=5000)
    w.wait_for_views()
    yield w
    if w.is_training:
        w.stop_training()
        qtbot.waitUntil(lambda: not w.is_training, timeout=10000)
