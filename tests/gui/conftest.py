from __future__ import annotations

import pytest

from capsviz.gui.app import configure_pyqtgraph
from tests.gui.events import settle


@pytest.fixture(autouse=True)
def _english_app():
    """Every GUI test ends with the app in English: a test that switches it to Chinese
    leaves Qt's translators installed, and the next test on the same worker would find
    them."""
    yield
    from PySide6.QtCore import QCoreApplication

    from capsviz.gui import i18n

    if i18n.language() != "en" and QCoreApplication.instance() is not None:
        i18n.install("en")


def temp_settings(folder):
    """A settings file of its own for each test: tests never read or write the user's."""
    from PySide6.QtCore import QSettings

    return QSettings(str(folder / "capsviz.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, shipped_checkpoint, tmp_path):
    configure_pyqtgraph()
    from capsviz.gui.main_window import MainWindow

    w = MainWindow(checkpoint=shipped_checkpoint, device="cpu", settings=temp_settings(tmp_path))
    w.confirm_close = lambda: True
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: w.docks_ready, timeout=5000)
    settle(qtbot, w)
    yield w
    if w.core.is_training:
        w.core.stop_training()
        qtbot.waitUntil(lambda: not w.core.is_training, timeout=10000)
