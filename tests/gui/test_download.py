"""MNIST fetched in the app, against a local stand-in mirror: the offer on Start, the
progress dialog and its Cancel, and File → Download MNIST…."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QProgressDialog, QPushButton

from capsviz.data import download
from capsviz.data.download import missing_archives
from tests.gui.events import settle
from tests.mirror import Mirror, archives, md5s

FILES = archives()


@pytest.fixture
def mirror(monkeypatch):
    with Mirror(FILES) as m:
        monkeypatch.setattr(download, "mnist_sources", lambda: ([m.url], md5s(FILES)))
        yield m


def test_start_offers_the_download_and_cancel_keeps_nothing(window, qtbot, tmp_path, mirror, monkeypatch):
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a: asked.append(a[2]) or QMessageBox.StandardButton.Yes)
    window.core.data_root = tmp_path
    mirror.mode["train-images-idx3-ubyte.gz"] = "slow"
    seen = {}

    def cancel_halfway() -> None:  # the dialog runs its own event loop: watch it from a timer
        dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, QProgressDialog) and w.isVisible()]
        if dialogs and dialogs[0].value() > 100:
            seen.update(value=dialogs[0].value(), text=dialogs[0].labelText(), title=dialogs[0].windowTitle())
            qtbot.mouseClick(dialogs[0].findChild(QPushButton), Qt.MouseButton.LeftButton)  # Cancel
            watch.stop()

    watch = QTimer(interval=20, timeout=cancel_halfway)
    watch.start()
    qtbot.mouseClick(window.training_panel.start_button, Qt.MouseButton.LeftButton)
    watch.stop()
    assert len(asked) == 1 and str(tmp_path / "MNIST" / "raw") in asked[0] and "Training needs" in asked[0]
    assert seen["title"] == "Downloading MNIST" and "MB" in seen["text"] and 100 < seen["value"] < 1000
    assert not window.core.is_training and window.training_panel.start_button.isEnabled()
    raw = tmp_path / "MNIST" / "raw"
    assert not raw.exists() or list(raw.iterdir()) == []  # nothing half-downloaded is left
    assert len(missing_archives(tmp_path)) == 4


def test_declining_the_offer_starts_nothing(window, qtbot, tmp_path, mirror, monkeypatch):
    monkeypatch.setattr(QMessageBox, "question", lambda *a: QMessageBox.StandardButton.No)
    window.core.data_root = tmp_path
    qtbot.mouseClick(window.training_panel.start_button, Qt.MouseButton.LeftButton)
    assert not window.core.is_training and mirror.requests == []


def test_file_download_mnist_fetches_it_and_the_browser_lists_all_10000(window, qtbot, tmp_path, mirror):
    window.core.data_root = tmp_path
    window.docks["browser"].show()
    window.docks["browser"].raise_()
    qtbot.waitUntil(lambda: window.browser.data is not None and window.browser_evaluator.worker is None, timeout=20000)
    assert len(window.browser.data) == 2000  # the shipped sample while MNIST is missing
    window.actions["download"].trigger()
    assert missing_archives(tmp_path) == []
    qtbot.waitUntil(lambda: window.browser.data is not None and len(window.browser.data) == 10000, timeout=20000)
    assert window.browser.source.text().startswith("MNIST test set")
    settle(qtbot, window)


def test_a_file_cut_short_is_called_incomplete_not_missing(window, qtbot, tmp_path, mirror, monkeypatch):
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a: asked.append(a[1:3]) or QMessageBox.StandardButton.No)
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    (raw / "train-images-idx3-ubyte").write_bytes(bytes(100_000))
    window.core.data_root = tmp_path
    qtbot.mouseClick(window.training_panel.start_button, Qt.MouseButton.LeftButton)
    assert not window.core.is_training and mirror.requests == []
    [(title, text)] = asked
    assert title == "MNIST is damaged" and "Missing: train-labels-idx1-ubyte.gz, t10k-images" in text
    assert "train-images-idx3-ubyte has 100,000 of its 47,040,016 bytes" in text and "Download it" in text
