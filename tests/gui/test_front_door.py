"""The app's side of a new user's first hour: training runs that keep each other, a browser
that leaves the input alone, and a prediction that says when nothing is recognised."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from capsviz.data.preprocess import preprocess_ink
from capsviz.model.losses import RECOGNITION_THRESHOLD
from capsviz.train.checkpoint import read_info
from tests.gui.events import settle, start_training

from ..conftest import mnist_root


def _train_briefly(window, qtbot) -> str:
    """Start training in the panel, stop it after two steps; returns the panel's final status."""
    panel = window.training_panel
    start_training(qtbot, window, 64, test_subset=32)
    with qtbot.waitSignal(window.core.trainingFinished, timeout=30000):
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    return panel.status.text()


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_a_second_training_run_in_the_app_keeps_the_first_runs_file(window, qtbot):
    folder = Path(os.environ["XDG_DATA_HOME"]) / "capsviz" / "checkpoints"
    first, second = folder / "gui-training.safetensors", folder / "gui-training-2.safetensors"
    assert str(first) in _train_briefly(window, qtbot)
    saved = first.read_bytes()
    assert str(second) in _train_briefly(window, qtbot)
    assert first.read_bytes() == saved and read_info(second).step >= 2


@pytest.mark.slow
def test_showing_the_browser_keeps_an_opened_image_as_the_input(window, qtbot, tmp_path):
    digit = window.sources.sample.images[1]  # a 2
    Image.fromarray(255 - np.asarray(Image.fromarray(digit).resize((200, 200)))).save(tmp_path / "two.png")
    assert window.sources.open_image(tmp_path / "two.png")
    settle(qtbot, window)
    before = window.input_panel.current.copy()
    window.docks["browser"].show()
    window.docks["browser"].raise_()
    qtbot.waitUntil(lambda: window.browser.predictions is not None, timeout=180000)
    settle(qtbot, window)
    assert window.input_panel.source.text() == "image: two.png"
    np.testing.assert_array_equal(window.input_panel.current, before)
    assert window.browser.index == 0 and "test image 0" in window.browser.current_label.text()
    count = f"{len(window.browser.data):,}"
    assert sum(count in label.text() for label in window.browser.findChildren(QLabel)) == 1  # said once
    status = window.browser.status.text()  # the CapsNet's mistakes, then the shipped CNN's and where they differ
    score = r"[\d,]+ mistakes \([\d.]+ % correct\)"
    assert re.fullmatch(rf"{score}; the CNN {score}; they disagree on [\d,]+", status)
    qtbot.mouseClick(window.browser.next_button, Qt.MouseButton.LeftButton)  # the user's choice does change it
    np.testing.assert_array_equal(window.input_panel.current, window.browser.data.images[1] / np.float32(255))


def test_the_browser_loading_its_digits_keeps_an_opened_image_as_the_input(window, qtbot, tmp_path, monkeypatch):
    """As above on 100 digits: the browser loads its set when first shown and selects its
    first digit without making it the input."""
    import capsviz.gui.jobs as jobs
    from capsviz.data.mnist import MnistSplit

    sample = window.sources.sample
    few = MnistSplit(sample.images[:100], sample.labels[:100])
    monkeypatch.setattr(jobs, "load_test_or_sample", lambda data_root: (few, "100 test digits"))
    digit = sample.images[1]  # a 2
    Image.fromarray(255 - np.asarray(Image.fromarray(digit).resize((200, 200)))).save(tmp_path / "two.png")
    assert window.sources.open_image(tmp_path / "two.png")
    settle(qtbot, window)
    before = window.input_panel.current.copy()
    assert window.browser.data is None  # loaded when first shown
    window.docks["browser"].show()
    window.docks["browser"].raise_()
    qtbot.waitUntil(lambda: window.browser.predictions is not None, timeout=60000)
    settle(qtbot, window)
    assert window.browser.data is few and window.browser.index == 0
    assert window.input_panel.source.text() == "image: two.png"
    np.testing.assert_array_equal(window.input_panel.current, before)
    qtbot.mouseClick(window.browser.next_button, Qt.MouseButton.LeftButton)  # the user's choice does change it
    np.testing.assert_array_equal(window.input_panel.current, sample.images[1] / np.float32(255))


def test_the_prediction_says_when_nothing_is_recognised(window, qtbot):
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.height() == 768, timeout=5000)
    widths = window.input_panel.width(), window.docks["lengths"].width()
    page = np.zeros((200, 200), np.float32)
    page[::8] = 1.0  # a ruled page: ink, but no digit
    window.input_panel.set_input(preprocess_ink(page), source="ruled page")
    settle(qtbot, window)
    # the longer message wraps in its column: the panel and the docks beside it keep their widths
    assert (window.input_panel.width(), window.docks["lengths"].width()) == widths
    inf = window.core.inference
    assert inf is not None and inf.lengths[-1].max() < RECOGNITION_THRESHOLD and not inf.recognised
    text = window.input_panel.prediction.text()
    assert "nothing recognised" in text and f"longest: {inf.prediction} " in text
    assert window.lengths_view.lengths.argmax() == inf.prediction  # the views still show the numbers
    window.sources.show_sample(0)
    settle(qtbot, window)
    assert window.core.inference.recognised and window.input_panel.prediction.text().startswith("7")
