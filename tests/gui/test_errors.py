"""Errors are never lost: dialogs with details, the log file, the About box."""

from __future__ import annotations

import sys

import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from ..conftest import mnist_root
from .events import start_training


def test_a_training_thread_error_reaches_a_dialog_with_copyable_details_and_the_log(window, qtbot, tmp_path):
    from capsviz.logs import log_path, setup_logging

    setup_logging()
    window.core.data_root = tmp_path  # no MNIST here: the worker thread raises
    window.core.data_ready = lambda: True  # (not the download offer: the run starts and fails)
    qtbot.mouseClick(window.training_panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.errors.error_box is not None and window.errors.error_box.isVisible(), timeout=20000)
    qtbot.waitUntil(lambda: not window.core.is_training, timeout=10000)
    box = window.errors.error_box
    assert box.windowTitle() == "Training failed"
    assert "MnistNotFoundError" in box.text() and str(tmp_path) in box.text()
    assert "Traceback" in box.detailedText() and "training_events" in box.detailedText()
    qtbot.mouseClick(box.copy_button, Qt.MouseButton.LeftButton)
    copied = QApplication.clipboard().text()
    assert copied.startswith("Training failed: MnistNotFoundError") and "Traceback" in copied
    assert box.isVisible()  # copying does not close it
    assert window.training_panel.start_button.isEnabled()
    for h in __import__("logging").getLogger("capsviz").handlers:
        h.flush()
    logged = log_path().read_text()
    assert "Training failed: MnistNotFoundError" in logged and "Traceback" in logged
    box.close()


@pytest.mark.qt_no_exception_capture  # the hook under test is installed over the default one
def test_exceptions_escaping_slots_become_dialogs(window, qtbot):
    from capsviz.gui.app import install_excepthook

    previous = sys.excepthook
    install_excepthook(window)
    try:
        try:
            raise RuntimeError("a slot failed")
        except RuntimeError as exc:
            sys.excepthook(type(exc), exc, exc.__traceback__)
    finally:
        sys.excepthook = previous
    box = window.errors.error_box
    assert box.isVisible() and box.text() == "RuntimeError: a slot failed"
    assert "raise RuntimeError" in box.detailedText()
    box.close()


def test_about_box_names_versions_device_and_model(window, qtbot):
    window.actions["about"].trigger()
    text = window.errors.about_box.text()
    assert f"torch {torch.__version__}" in text and "Qt 6." in text and "device: cpu" in text
    assert "99." in text and "capsviz.log" in text
    box = window.errors.about_box
    box.close()
    window.actions["about"].trigger()  # the same box again, not one more
    assert window.errors.about_box is box and box.isVisible() and box.text() == text
    box.close()


def test_the_app_refuses_bad_checkpoints_and_keeps_its_model(window, qtbot, tmp_path):
    from ..unit.test_refusal import MARKER, bad_checkpoints

    files = bad_checkpoints(tmp_path)
    model, label = window.core.model, window.model_label.text()
    prediction = window.core.inference.prediction
    for kind, path in files.items():
        assert not window.core.load_model(path), kind
        box = window.errors.error_box
        assert box.isVisible() and box.windowTitle() == "Cannot load checkpoint"
        first = box.text().splitlines()[0]
        assert first.startswith(f"{path}: ") and "current model stays loaded" in box.text(), kind
        assert window.core.model is model and window.model_label.text() == label
        assert window.core.inference.prediction == prediction
    assert not (tmp_path / MARKER).exists()
    box.close()
    assert window.statusBar().currentMessage() == box.text()  # the last refusal, for 10 s
    assert window.core.load_model(None)  # a model that loads: the refusal leaves the status bar
    assert window.statusBar().currentMessage() == ""


def test_a_message_given_before_the_bar_is_shown_is_fitted_to_it_once_shown(qtbot):
    from PySide6.QtWidgets import QLabel, QStatusBar

    from capsviz.gui.widgets.common import StatusBar

    bar = StatusBar()
    qtbot.addWidget(bar)
    bar.addPermanentWidget(QLabel("model: capsnet_mnist.safetensors — 99.64 %"))
    message = "settings: " + "a value that was out of range and is back to its default; " * 4
    bar.showMessage(message, 15000)  # as a start-up notice comes, before the window is laid out
    bar.resize(900, 24)
    bar.show()
    qtbot.waitExposed(bar)
    shown = QStatusBar.currentMessage(bar)  # what the bar draws
    assert len(shown) > 40 and shown.endswith("…") and message.startswith(shown[:-1])
    assert bar.currentMessage() == message


def test_a_long_message_shows_its_first_line_cut_short_of_the_model_label(window, qtbot):
    bar = window.statusBar()
    shown = []
    bar.messageChanged.connect(shown.append)
    message = "a file that is not a checkpoint: " + "very long reason " * 30 + "\n\nThe current model stays loaded."
    window.errors.show_error("Cannot load checkpoint", message)
    window.errors.error_box.close()
    assert shown[-1].endswith("…") and "\n" not in shown[-1] and shown[-1].startswith("a file that is not")
    room = window.model_label.geometry().left() - bar.contentsRect().left()
    assert bar.fontMetrics().horizontalAdvance(shown[-1]) < room  # none of it under the model's label
    assert bar.currentMessage() == message and bar.toolTip() == message
    bar.clearMessage()
    assert bar.currentMessage() == "" and bar.toolTip() == ""


def test_a_start_up_refusal_reads_whole_in_the_apps_language(qtbot, tmp_path):
    """Started on a bad checkpoint with Chinese chosen, the app shows the shipped model and
    says why in Chinese, the reason the core gives included (its sentences are made in the
    app's language from the start, not only the dialog's own)."""
    from capsviz.gui.main_window import MainWindow
    from capsviz.view_settings import FORMAT

    from .conftest import temp_settings

    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a checkpoint" * 20)
    settings = temp_settings(tmp_path)
    settings.setValue("format", FORMAT)
    settings.setValue("app/language", "zh_CN")
    settings.sync()
    window = MainWindow(checkpoint=bad, device="cpu", settings=settings)
    qtbot.addWidget(window)
    window.show()
    box = window.errors.error_box
    qtbot.waitUntil(lambda: box.isVisible(), timeout=5000)
    assert box.windowTitle() == "无法载入检查点"
    assert (
        box.text().startswith(f"{bad}：不是 safetensors 文件，或文件不完整（前 8 个字节声明文件头有 ")
        and "随附的模型" in box.text()
    )
    assert window.core.checkpoint_path is None and window.core.info is not None  # the shipped model
    box.close()


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_closing_while_training_asks_then_stops_and_saves(window, qtbot):
    from capsviz.paths import user_checkpoint_dir
    from capsviz.train.checkpoint import load_checkpoint

    autosave = user_checkpoint_dir() / "gui-training.safetensors"
    start_training(qtbot, window, 3200)
    asked = []
    window.confirm_close = lambda: asked.append(1) or False  # the user says no
    window.close()
    assert asked and window.isVisible() and window.core.is_training
    window.confirm_close = lambda: asked.append(2) or True  # the user confirms
    window.close()
    assert asked == [1, 2] and not window.isVisible()
    qtbot.waitUntil(lambda: not window.core.is_training, timeout=5000)
    _, info, state = load_checkpoint(autosave)
    assert info.step >= 2 and "rng.torch" in state


def test_ctrl_c_in_the_terminal_closes_the_window_as_quit_does(window, qtbot):
    import os
    import signal

    from capsviz.gui.app import close_on_sigint

    previous = signal.getsignal(signal.SIGINT)
    try:
        close_on_sigint(window)
        asked = []
        window.confirm_close = lambda: asked.append(1) or True
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl+C, while Qt's event loop waits
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
        assert asked == [] and window.core.closing  # closed as File → Quit closes it
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_missing_shipped_model_is_said_plainly(qtbot, tmp_path, monkeypatch):
    from capsviz.gui import core, main_window
    from capsviz.gui.app import configure_pyqtgraph

    from .conftest import temp_settings

    configure_pyqtgraph()
    missing = tmp_path / "capsnet_mnist.safetensors"
    monkeypatch.setattr(core, "shipped_checkpoint", lambda: missing)
    w = main_window.MainWindow(checkpoint=None, device="cpu", settings=temp_settings(tmp_path))
    qtbot.addWidget(w)
    assert w.core.info is None and w.model_label.text() == "model: untrained (the shipped model is missing)"
    box = w.errors.error_box
    assert box is not None and box.windowTitle() == "No model"
    assert box.text().startswith(f"The shipped model cannot be loaded: {missing}: no such file")
    assert "untrained model" in box.text()


def test_a_checkpoint_given_at_start_that_cannot_load_gives_the_shipped_model(qtbot, tmp_path, shipped_checkpoint):
    from capsviz.gui import main_window
    from capsviz.gui.app import configure_pyqtgraph

    from .conftest import temp_settings

    configure_pyqtgraph()
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(shipped_checkpoint.read_bytes()[:100_000])  # a download cut short
    w = main_window.MainWindow(checkpoint=cut, device="cpu", settings=temp_settings(tmp_path))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.core.inference is not None, timeout=10000)
    box = w.errors.error_box
    assert box is not None and box.windowTitle() == "Cannot load checkpoint"
    assert box.text().startswith(f"{cut}: ") and box.text().endswith("The shipped model is shown instead.")
    assert w.core.info is not None and w.core.info.path == shipped_checkpoint and w.core.checkpoint_path is None
    assert w.model_label.text().startswith("model: capsnet_mnist.safetensors")
    assert w.core.inference.prediction == 7 and w.core.baseline is not None  # sample 0, the shipped CNN beside
    assert cut.stat().st_size == 100_000


def test_a_cnn_given_at_start_stands_beside_the_shipped_capsnet(qtbot, tmp_path, shipped_checkpoint):
    import shutil

    from capsviz.gui import main_window
    from capsviz.gui.app import configure_pyqtgraph
    from capsviz.paths import shipped_baseline

    from .conftest import temp_settings

    configure_pyqtgraph()
    cnn = tmp_path / "my_cnn.safetensors"
    shutil.copy(shipped_baseline("mnist"), cnn)
    w = main_window.MainWindow(checkpoint=cnn, device="cpu", settings=temp_settings(tmp_path))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.core.inference is not None, timeout=10000)
    assert w.core.info is not None and w.core.info.path == shipped_checkpoint
    assert w.core.baseline_info is not None and w.core.baseline_info.path == cnn
    assert w.core.inference.prediction == 7


def test_an_error_with_details_closes_with_esc_and_gives_way_to_the_next(window, qtbot):
    errors = window.errors
    errors.show_error("Unexpected error", "first", "Traceback (most recent call last): …")
    first = errors.error_box
    assert first.isVisible() and first.copy_button is not None
    qtbot.keyClick(first, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: errors.error_box is None, timeout=3000)  # closed and forgotten
    errors.show_error("Unexpected error", "second", "details")
    second = errors.error_box
    errors.show_error("Unexpected error", "third", "details")  # the second gives way
    qtbot.waitUntil(lambda: errors.error_box is not second, timeout=2000)
    shown = {b.text() for b in window.findChildren(QMessageBox) if b.isVisible()}
    assert shown == {"third"}
    errors.error_box.close()
