from __future__ import annotations

import pytest

from capsviz.gui.app import configure_pyqtgraph


@pytest.fixture
def window(qtbot, shipped_checkpoint):
    configure_pyqtgraph()
    from capsviz.gui.main_window import MainWindow

    w = MainWindow(checkpoint=shipped_checkpoint, device="cpu")
    w._confirm_close = lambda: True
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    if w.is_training:
        w.stop_training()
        qtbot.waitUntil(lambda: not w.is_training, timeout=10000)
