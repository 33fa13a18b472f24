"""Input paths in the app: image files, drag and drop, paste, ink polarity, MNIST digits."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage
from PySide6.QtWidgets import QApplication

from capsviz.data.images import load_ink
from capsviz.data.preprocess import preprocess_ink
from tests.gui.events import settle

from .events import drag_slider


def paper_digit(window, index: int, side: int = 300) -> tuple[np.ndarray, int]:
    """MNIST sample digit ``index`` as dark ink on white paper, side x side uint8, and its label."""
    digit = window.sources.sample.images[index]
    ink = np.asarray(Image.fromarray(digit).resize((side, side), Image.Resampling.BILINEAR))
    return 255 - ink, int(window.sources.sample.labels[index])


def test_an_mnist_digit_is_the_input_exactly(qtbot, window):
    window.sources.show_sample(5)
    settle(qtbot, window)  # the forward pass runs on the inference thread
    np.testing.assert_array_equal(window.input_panel.current, window.sources.sample.images[5] / np.float32(255))
    assert window.core.inference.prediction == window.sources.sample.labels[5]
    assert "MNIST test image 5" in window.input_panel.source.text()


def test_open_image_file_classifies_it(qtbot, window, tmp_path):
    paper, label = paper_digit(window, 1)
    Image.fromarray(paper).save(tmp_path / "two.png")
    assert window.sources.open_image(tmp_path / "two.png")
    expected = preprocess_ink(load_ink(tmp_path / "two.png"))  # what `capsviz classify` feeds the model
    np.testing.assert_array_equal(window.input_panel.current, expected)
    settle(qtbot, window)
    assert window.core.inference.prediction == label
    assert window.input_panel.source.text() == "image: two.png"


def test_a_bad_file_gives_a_message_and_keeps_the_input(window, qtbot, tmp_path):
    window.sources.show_sample(3)
    settle(qtbot, window)
    before = window.input_panel.current.copy()
    prediction = window.core.inference.prediction
    (tmp_path / "fake.png").write_text("this is text")
    assert not window.sources.open_image(tmp_path / "fake.png")
    box = window.errors.error_box
    assert box is not None and box.isVisible()
    assert "fake.png: not an image file" in box.text()
    np.testing.assert_array_equal(window.input_panel.current, before)
    assert window.core.inference.prediction == prediction
    box.close()


def test_closed_error_boxes_are_deleted_not_kept(window, qtbot, tmp_path):
    from PySide6.QtWidgets import QMessageBox

    (tmp_path / "fake.png").write_text("this is text")
    for _ in range(5):  # each unreadable file: a box, closed by the user
        assert not window.sources.open_image(tmp_path / "fake.png")
        assert window.errors.error_box.isVisible()
        window.errors.error_box.close()
    # a box only closed would stay a hidden child of the window (0.2 MB each)
    qtbot.waitUntil(lambda: not window.findChildren(QMessageBox), timeout=3000)
    assert window.errors.error_box is None
    assert not window.sources.open_image(tmp_path / "fake.png")  # and a new one still comes
    assert window.errors.error_box.isVisible() and "not an image file" in window.errors.error_box.text()
    window.errors.error_box.close()


def test_drop_an_image_file_on_the_window(window, qtbot, tmp_path):
    paper, label = paper_digit(window, 0)
    Image.fromarray(paper).save(tmp_path / "seven.jpg")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "seven.jpg"))])
    pos = QPoint(200, 200)
    enter = QDragEnterEvent(
        pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(
        QPointF(pos), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(window, drop)
    assert window.input_panel.source.text() == "image: seven.jpg"
    settle(qtbot, window)
    assert window.core.inference.prediction == label == 7


def test_paste_an_image_with_ctrl_v(window, qtbot):
    paper, label = paper_digit(window, 2)
    rgb = np.ascontiguousarray(np.stack([paper] * 3, -1))
    qimage = QImage(rgb.data, rgb.shape[1], rgb.shape[0], 3 * rgb.shape[1], QImage.Format.Format_RGB888).copy()
    QApplication.clipboard().setImage(qimage)
    assert paste_and_read(window, qtbot, "image: pasted image") == label


def paste_and_read(window, qtbot, source: str) -> int:
    """Ctrl+V in ``window``; once the input panel names ``source``, the model's answer."""
    window.activateWindow()
    window.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.input_panel.source.text() == source, timeout=3000)
    settle(qtbot, window)
    return window.core.inference.prediction


def test_paste_a_path_copied_as_text(window, qtbot, tmp_path):
    """A file's path copied from a terminal or a file manager's address bar, quoted or as a
    file URL, opens as the file would; text that names no file is refused, the input kept."""
    paper, label = paper_digit(window, 3)
    image = tmp_path / "my digit.png"
    Image.fromarray(paper).save(image)
    clipboard = QApplication.clipboard()
    for text in (f"'{image}'\n", image.as_uri()):
        window.sources.show_sample(0)  # another input between the two pastes
        clipboard.setText(text)
        assert paste_and_read(window, qtbot, "image: my digit.png") == label
    before = window.input_panel.current.copy()
    errors = []
    window.sources._show_error = lambda title, text: errors.append(text)
    for text in (str(tmp_path / "none.png"), "~nobody-here/a.png", "x" * 300 + ".png", "a\nb"):
        clipboard.setText(text)  # no file, an unknown user's home, a name too long, two lines
        assert not window.sources.paste_image()
    assert errors == ["the clipboard or the drop holds no image and no image file"] * 4
    np.testing.assert_array_equal(window.input_panel.current, before)


def test_ink_polarity_override_reloads_the_image(qtbot, window, tmp_path):
    paper, label = paper_digit(window, 4)
    Image.fromarray(paper).save(tmp_path / "d.png")
    window.sources.open_image(tmp_path / "d.png")
    auto = window.input_panel.current.copy()
    settle(qtbot, window)
    assert window.core.inference.prediction == label
    combo = window.input_panel.polarity
    combo.setCurrentIndex(combo.findData(False))  # "light on dark": the image is read as it is, not inverted
    forced = window.input_panel.current
    np.testing.assert_array_equal(forced, preprocess_ink(load_ink(tmp_path / "d.png", invert=False)))
    assert np.abs(forced - auto).mean() > 0.03
    combo.setCurrentIndex(combo.findData(True))  # "dark on light": what auto detected
    np.testing.assert_array_equal(window.input_panel.current, auto)


def open_browser(window, qtbot, n: int = 1000):
    """Open the browser dock on the first ``n`` digits of the assets sample (quick to classify)."""
    from capsviz.data.mnist import MnistSplit

    window.browser.set_data(MnistSplit(window.sources.sample.images[:n], window.sources.sample.labels[:n]), "sample")
    window.docks["browser"].show()
    window.docks["browser"].raise_()
    qtbot.waitUntil(lambda: window.browser.predictions is not None, timeout=180000)
    return window.browser


@pytest.mark.slow
def test_browser_confusion_matrix_and_mistakes(window, qtbot):
    from tests.conftest import forward_scores

    browser = open_browser(window, qtbot)
    data = browser.data
    cm = browser.confusion()
    assert cm.sum() == len(data) == int(browser.source.text().split(": ")[1].split()[0].replace(",", ""))
    # the matrix is the model's: row sums are the label counts, the diagonal its correct answers
    np.testing.assert_array_equal(cm.sum(1), np.bincount(data.labels, minlength=10))
    preds = forward_scores(window.core.model, data.images).argmax(1)
    np.testing.assert_array_equal(browser.predictions, preds)
    assert np.trace(cm) == int((preds == data.labels).sum()) == 997  # the shipped model: 3 of the 1,000 wrong
    assert browser.matrix.item(3, 3).text() == f"{cm[3, 3]:,}"
    assert all(browser.matrix.item(r, c).text() in ("", f"{cm[r, c]:,}") for r in range(10) for c in range(10))
    # only mistakes: every step lands on a misclassified digit, shown as the input
    qtbot.mouseClick(browser.errors_only, Qt.MouseButton.LeftButton)
    assert browser.errors_only.isChecked()
    wrong = np.flatnonzero(preds != data.labels)
    assert len(wrong) >= 2 and browser.index == wrong[0]
    for k in range(min(3, len(wrong) - 1)):
        qtbot.mouseClick(browser.next_button, Qt.MouseButton.LeftButton)
        assert browser.index == wrong[k + 1]
        np.testing.assert_array_equal(window.input_panel.current, data.images[browser.index] / np.float32(255))
        settle(qtbot, window)
        assert window.core.inference.prediction == preds[browser.index] != data.labels[browser.index]
    # clicking a confusion-matrix cell browses its digits
    r, c = np.unravel_index(np.argmax(cm - np.diag(np.diag(cm))), cm.shape)
    rect = browser.matrix.visualItemRect(browser.matrix.item(r, c))
    qtbot.mouseClick(browser.matrix.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert browser.cell == (r, c)
    cell = browser.indices()
    assert len(cell) == cm[r, c] and data.labels[browser.index] == r and preds[browser.index] == c
    qtbot.mouseClick(browser.random_button, Qt.MouseButton.LeftButton)
    assert browser.index in cell


@pytest.mark.slow
def test_browser_goto_and_previous(window, qtbot):
    browser = open_browser(window, qtbot)
    browser.goto.setValue(42)
    assert browser.index == 42
    np.testing.assert_array_equal(window.input_panel.current, browser.data.images[42] / np.float32(255))
    qtbot.mouseClick(browser.prev_button, Qt.MouseButton.LeftButton)
    assert browser.index == 41 and browser.goto.value() == 41
    assert f"label {browser.data.labels[41]}" in browser.current_label.text()


def test_the_browsers_line_is_bold_only_while_its_digit_is_the_input(window, qtbot):
    from .events import drag

    browser = open_browser(window, qtbot, n=40)
    qtbot.mouseClick(browser.next_button, Qt.MouseButton.LeftButton)
    assert browser.is_input and browser.current_label.font().bold()
    assert "not the input" not in browser.current_label.text()
    canvas = window.input_panel.canvas
    drag(canvas, [(140, 60), (140, 140), (140, 220)])  # a stroke over it: a drawing now
    qtbot.waitUntil(lambda: not browser.is_input, timeout=3000)
    assert not browser.current_label.font().bold()
    assert browser.current_label.text().startswith(f"test image {browser.index}: label ")
    assert browser.current_label.text().endswith(" (not the input)")
    window.sources.show_sample(3)  # a digit of the sample, not the browser's current one
    assert not browser.is_input
    qtbot.mouseClick(browser.next_button, Qt.MouseButton.LeftButton)
    assert browser.is_input and browser.current_label.font().bold()


def test_transforms_change_the_input_live_and_the_sweep_is_the_models(window, qtbot, monkeypatch):
    import threading

    import capsviz.explorer as explorer
    from capsviz.data.transforms import InputTransform, apply_transform
    from capsviz.model.inference import infer

    sweep_threads = []  # the sweep's forward passes (one per step) run on the inference thread
    digit_capsules = explorer.digit_capsules
    monkeypatch.setattr(
        explorer,
        "digit_capsules",
        lambda *a: (sweep_threads.append(threading.current_thread()), digit_capsules(*a))[-1],
    )

    window.sources.show_sample(0)  # a 7
    settle(qtbot, window)
    base = window.input_panel.current.copy()
    window.docks["transforms"].show()
    window.docks["transforms"].raise_()
    view = window.transform_view
    slider = view.sliders["rotation"]
    drag_slider(slider._slider, 40)
    angle = slider.value()
    assert angle > 3
    assert window.core.input.transform == InputTransform(rotation=angle)
    expected = apply_transform(base, window.core.input.transform)
    settle(qtbot, window)
    np.testing.assert_allclose(window.core.inference.input, expected)
    np.testing.assert_allclose(window.input_panel.preview.image, expected)
    assert not np.allclose(window.core.inference.input, base)
    # the sweep: 16 pose curves over the rotation range, equal to the model's capsule at the marker
    qtbot.waitUntil(lambda: view.sweep is not None and view.sweep["name"] == "rotation", timeout=5000)
    view.sliders["rotation"].setValue(0.0)
    qtbot.waitUntil(lambda: view.marker.value() == 0.0, timeout=5000)
    sweep = view.sweep
    assert sweep["poses"].shape == (21, 16) and sweep["values"][0] == -90 and sweep["values"][-1] == 90
    digit = sweep["digit"]
    assert digit == window.core.inference.prediction == 7
    at_zero = infer(window.core.model, base).v[-1, digit]
    np.testing.assert_allclose(sweep["poses"][10], at_zero, atol=1e-4)
    x, y = view.pose_curves[5].getData()
    np.testing.assert_allclose(y, sweep["poses"][:, 5])
    # equivariance, not invariance: the pose moves along the sweep while the 7 stays recognised near 0
    assert np.ptp(sweep["poses"], axis=0).max() > 0.1
    assert sweep["lengths"][8:13].min() > 0.5
    # where it stops being read as a 7: the 0.5 line, and the run of angles around 0 named
    assert view.threshold.value() == 0.5 and view.plot.getAxis("bottom").labelText == "rotate (°)"
    rotated = [apply_transform(base, InputTransform(rotation=float(a))) for a in sweep["values"]]
    every = np.stack([infer(window.core.model, image).lengths[-1] for image in rotated])
    reads = (every.argmax(axis=1) == 7) & (every.max(axis=1) >= 0.5)  # the longest capsule, 0.5 long at least
    first, last = 10, 10
    while first > 0 and reads[first - 1]:
        first -= 1
    while last < 20 and reads[last + 1]:
        last += 1
    values = sweep["values"]
    assert view.summary.text().startswith(f"read as 7 from {values[first]:g}° to {values[last]:g}°; length ")
    assert sweep_threads and threading.main_thread() not in sweep_threads
    # another capsule chosen (here in the routing view: one digit for the window) is drawn from
    # the sweep on screen, which holds every capsule: no sweep is computed again
    passes = len(sweep_threads)
    routing = window.routing_view.digit
    routing.setCurrentIndex(routing.findData(1))
    settle(qtbot, window)
    assert view.sweep["digit"] == 1 and view.sweep["poses"].shape == (21, 16)
    np.testing.assert_allclose(view.sweep["poses"][10], infer(window.core.model, base).v[-1, 1], atol=1e-4)
    assert len(sweep_threads) == passes
    view.reset_button.click()
    settle(qtbot, window)
    np.testing.assert_allclose(window.core.inference.input, base)


def test_the_sweep_follows_another_model_and_a_runs_weights(window, qtbot, tmp_path):
    import torch

    from capsviz.explorer import WeightsSnapshot
    from capsviz.model import CapsNet
    from capsviz.model.inference import infer
    from capsviz.train.checkpoint import save_checkpoint

    window.sources.show_sample(0)
    window.docks["transforms"].show()
    window.docks["transforms"].raise_()
    view = window.transform_view
    settle(qtbot, window)
    base = window.core.input.model_image

    def sweep_is_of(model) -> bool:
        if view.sweep is None:
            return False
        at_zero = infer(model, base).v[-1, view.sweep["digit"]]  # rotation 0: the sweep's middle
        return np.allclose(view.sweep["poses"][10], at_zero, atol=1e-4)

    qtbot.waitUntil(lambda: sweep_is_of(window.core.model), timeout=10000)
    torch.manual_seed(1)
    other = save_checkpoint(tmp_path / "other.safetensors", CapsNet())
    assert window.open_checkpoint(other)
    qtbot.waitUntil(lambda: sweep_is_of(window.core.model), timeout=10000)
    torch.manual_seed(2)
    weights = CapsNet().eval()  # as a training run's snapshot brings them
    window.core.apply_snapshot(WeightsSnapshot(weights, None, window.core.input))
    qtbot.waitUntil(lambda: sweep_is_of(weights), timeout=10000)


def test_the_sample_and_open_buttons_change_the_input(qtbot, window, tmp_path, monkeypatch):
    """Clicked with the mouse, *Open image…* classifies the file the dialog gives, and then
    *MNIST sample* shows the sample digit its label names."""
    import re

    from PySide6.QtWidgets import QFileDialog

    panel = window.input_panel
    paper, _ = paper_digit(window, 1)
    Image.fromarray(paper).save(tmp_path / "two.png")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(tmp_path / "two.png"), ""))
    qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    assert panel.source.text() == "image: two.png"
    np.testing.assert_array_equal(panel.current, preprocess_ink(load_ink(tmp_path / "two.png")))
    qtbot.mouseClick(panel.sample_button, Qt.MouseButton.LeftButton)
    index = int(re.search(r"MNIST test image (\d+)", panel.source.text()).group(1))
    np.testing.assert_array_equal(panel.current, window.sources.sample.images[index] / np.float32(255))
