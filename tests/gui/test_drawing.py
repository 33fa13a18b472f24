"""Drawing on the canvas: the strokes it keeps, and digits drawn with real mouse events at
every brush read as surely as the same digits as MNIST images (tools/drawn_digits.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from capsviz.data.mnist import MnistSplit, load_sample
from capsviz.data.preprocess import preprocess_ink
from capsviz.evaluate import evaluate_model
from capsviz.gui.widgets.canvas import CANVAS_LEAST, CANVAS_SIZE, DEFAULT_BRUSH, InputPanel
from capsviz.train.checkpoint import load_checkpoint

from .events import drag, press_move_release

TOOL = Path(__file__).resolve().parents[2] / "tools" / "drawn_digits.py"


def drawn_digits():
    spec = importlib.util.spec_from_file_location("drawn_digits", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def panel(qtbot):
    p = InputPanel()
    qtbot.addWidget(p)
    return p


def test_the_canvas_keeps_its_strokes_through_undo_redo_and_clear(panel):
    canvas = panel.canvas
    assert canvas.strokes() == []
    drag(canvas, [(60, 60), (200, 60), (200, 90)])
    drag(canvas, [(100, 150), (100, 250)])
    strokes = canvas.strokes()
    assert [s.tolist() for s in strokes] == [[[60, 60], [200, 60], [200, 90]], [[100, 150], [100, 250]]]
    canvas.undo()
    assert len(canvas.strokes()) == 1
    np.testing.assert_array_equal(panel.current, canvas.model_input())
    canvas.redo()
    assert len(canvas.strokes()) == 2
    canvas.clear()
    assert canvas.strokes() == [] and panel.current is None
    canvas.undo()
    assert len(canvas.strokes()) == 2


def test_undo_or_clear_in_the_middle_of_a_stroke_ends_that_stroke(panel):
    """Ctrl+Z or Del with the button still down (the canvas's undo and clear): the stroke
    in progress ends there, so the button's further moves neither draw nor join the
    drawing's last stroke, and the next press starts a stroke of its own."""
    canvas = panel.canvas
    drag(canvas, [(60, 60), (200, 60)])
    first = [[[60, 60], [200, 60]]]
    press_move_release(canvas, (100, 150), [(100, 200)])
    canvas.undo()
    assert [s.tolist() for s in canvas.strokes()] == first
    ink = canvas.ink().copy()
    press_move_release(canvas, None, [(120, 250), (150, 250)], release=(150, 250))
    assert [s.tolist() for s in canvas.strokes()] == first
    np.testing.assert_array_equal(canvas.ink(), ink)
    press_move_release(canvas, (100, 150), [(100, 200)])
    canvas.clear()
    press_move_release(canvas, None, [(120, 250)], release=(120, 250))
    assert canvas.strokes() == [] and canvas.is_empty() and panel.current is None
    drag(canvas, [(60, 60), (60, 200)])
    assert [s.tolist() for s in canvas.strokes()] == [[[60, 60], [60, 200]]]


def test_the_brush_changes_the_canvas_not_what_the_model_sees(panel):
    inputs, inks = [], []
    for brush in (4, DEFAULT_BRUSH, 60):
        panel.canvas.clear()
        panel.brush.setValue(brush)
        drag(panel.canvas, [(80, 40), (200, 40), (130, 240)])  # a 7
        inputs.append(panel.current.copy())
        inks.append(panel.canvas.ink().sum())
    assert inks[0] * 5 < inks[1] < inks[2] / 2  # the canvas shows each brush
    for x in inputs[1:]:
        np.testing.assert_allclose(x, inputs[0], atol=1e-6)


def test_an_image_on_the_canvas_is_read_as_an_image_even_when_drawn_on(panel):
    digit = load_sample().images[3]
    panel.canvas.set_ink(digit / 255.0)
    assert panel.canvas.strokes() is None
    drag(panel.canvas, [(20, 20), (40, 40)])
    assert panel.canvas.strokes() is None
    np.testing.assert_array_equal(panel.current, preprocess_ink(panel.canvas.ink()))
    panel.canvas.clear()  # an empty canvas takes strokes again
    drag(panel.canvas, [(20, 20), (40, 40)])
    assert len(panel.canvas.strokes()) == 1


@pytest.mark.slow  # about 15 s: 300 digits drawn at three brushes
def test_digits_drawn_with_the_mouse_read_as_surely_as_mnist_at_every_brush(qtbot, shipped_checkpoint):
    """The first 300 digits of the MNIST test sample, traced into strokes and drawn on the
    canvas with mouse events at the thinnest, the default and the thickest brush: each
    brush reads >= 98.5 % right, and within 1 point of the same digits as MNIST images."""
    tool = drawn_digits()
    model, _, _ = load_checkpoint(shipped_checkpoint)
    sample = load_sample()
    images, labels = sample.images[:300], sample.labels[:300]
    result = tool.measure(model, images, labels, brushes=(4, DEFAULT_BRUSH, 60), steps=(8,))
    assert result["mnist"] >= 0.985
    for (brush, _step), accuracy in result["drawn"].items():
        assert accuracy >= 0.985, (brush, accuracy, result["wrong"][(brush, _step)])
        assert accuracy >= result["mnist"] - 0.01, (brush, accuracy, result["mnist"])


def test_a_canvas_shown_smaller_draws_on_its_ink_to_scale(qtbot, shipped_checkpoint):
    """In a window too short for the whole canvas it is shown smaller, square and at least
    CANVAS_LEAST px: each pointer position lands on the ink at its place scaled up to
    CANVAS_SIZE, so 60 MNIST digits drawn on it to scale read as they do on the whole canvas."""
    tool = drawn_digits()
    whole, small = InputPanel(), InputPanel()
    for panel in (whole, small):
        qtbot.addWidget(panel)
        panel.show()
    small.resize(small.width(), small.minimumSizeHint().height())
    QApplication.processEvents()
    assert whole.canvas.side() == whole.canvas.width() == whole.canvas.height() == CANVAS_SIZE
    side = small.canvas.side()
    assert small.canvas.width() == small.canvas.height() == side and CANVAS_LEAST <= side < CANVAS_SIZE - 20
    assert small.canvas.geometry().bottom() < small.clear_button.geometry().top()
    scale = side / CANVAS_SIZE
    sample = load_sample()
    images, labels = sample.images[:60], sample.labels[:60]
    inputs = {id(whole): [], id(small): []}
    for image in images:
        strokes = tool.trace_strokes(image)
        inputs[id(whole)].append(tool.replay(whole, strokes, DEFAULT_BRUSH, 8))
        inputs[id(small)].append(tool.replay(small, [s * scale for s in strokes], DEFAULT_BRUSH, 8))
        for on_ink, stroke in zip(small.canvas.strokes(), strokes, strict=True):
            on_screen = np.round(stroke * scale)[np.r_[0 : len(stroke) : 8, len(stroke) - 1]]
            on_screen = on_screen[np.r_[True, (np.diff(on_screen, axis=0) != 0).any(1)]]  # a pause adds no point
            np.testing.assert_allclose(on_ink, on_screen / scale, atol=1e-6)  # each position on screen, scaled
    model, _, _ = load_checkpoint(shipped_checkpoint)
    right = {k: evaluate_model(model, MnistSplit(np.stack(v), labels)) == labels for k, v in inputs.items()}
    assert right[id(small)].sum() >= right[id(whole)].sum() - 1 >= 57


def test_traced_strokes_cover_the_digit(qtbot):
    """The tracer's strokes run through the digit's ink: every stroke point lies on ink of
    the digit scaled to the canvas, and the strokes reach across the digit's extent."""
    tool = drawn_digits()
    digit = load_sample().images[0].astype(np.float32) / 255.0
    strokes = tool.trace_strokes(digit)
    points = np.concatenate(strokes)
    on = digit[(points[:, 1] // tool.SCALE).astype(int), (points[:, 0] // tool.SCALE).astype(int)]
    assert (on > 0.2).mean() > 0.98
    rows = np.flatnonzero(digit.max(1) > 0.5)
    span = (points[:, 1].max() - points[:, 1].min()) / tool.SCALE
    assert span >= 0.8 * (rows[-1] - rows[0])
