"""The overlapping-digits window: a MultiMNIST pair composed with real widget events, its
lengths, Fig. 5 reconstructions and the segmentation by routing, all from the model's trace."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from capsviz.data.mnist import load_mnist, load_sample
from capsviz.data.multimnist import compose, fixed_test_pairs, place
from capsviz.gui.app import configure_pyqtgraph
from capsviz.model.analysis import segmentation
from capsviz.model.inference import infer
from capsviz.train.checkpoint import load_checkpoint
from capsviz.train.loop import Trainer, two_digit_hits

from ..conftest import SHIPPED, mnist_root


@pytest.fixture(scope="module")
def pair_checkpoint(tmp_path_factory):
    """The shipped MNIST model widened to MultiMNIST and trained for 4 steps: a real
    MultiMNIST checkpoint."""
    path = tmp_path_factory.mktemp("pairs") / "mm.safetensors"
    overrides = {"dataset": "multimnist", "device": "cpu", "pairs_per_epoch": 64, "batch_size": 16, "epochs": 1}
    trainer = Trainer.continue_from_weights(SHIPPED, load_sample(), overrides=overrides, checkpoint_path=path)
    list(trainer.run())
    return path


@pytest.fixture
def explorer(qtbot, pair_checkpoint):
    configure_pyqtgraph()
    from capsviz.gui.widgets.pairs import PairExplorer

    model, _, _ = load_checkpoint(pair_checkpoint)
    w = PairExplorer(model, load_sample(), full_test_split=False, seed=3)
    qtbot.addWidget(w)
    w.resize(1100, 700)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_the_pair_follows_the_index_and_shift_controls(qtbot, explorer):
    a, b = explorer.controls
    qtbot.mouseClick(a.random, Qt.MouseButton.LeftButton)
    b.index.setFocus()
    b.index.selectAll()
    qtbot.keyClicks(b.index, "17")
    qtbot.keyClick(b.index, Qt.Key.Key_Return)
    for key, times in ((Qt.Key.Key_Right, 3), (Qt.Key.Key_Left, 0)):
        for _ in range(times):
            qtbot.keyClick(a.dx, key)
    for _ in range(4):
        qtbot.keyClick(b.dy, Qt.Key.Key_Left)  # a horizontal slider: Left lowers it
    assert b.index.value() == 17 and a.shift == (0, 3) and b.shift == (-4, 0)
    assert [label.text() for label in b.shift_labels] == ["-4 px", "+0 px"]
    digits = explorer.digits
    expected = compose(np.stack([place(digits.images[a.index.value()], (0, 3)), place(digits.images[17], (-4, 0))]))
    np.testing.assert_array_equal(explorer.pair_image, expected / np.float32(255))
    np.testing.assert_array_equal(explorer.input_panel.image, explorer.pair_image)


def test_lengths_fig5_and_segmentation_come_from_the_models_trace(qtbot, explorer):
    explorer.set_pair(3, 40, (2, -1), (-3, 4))
    model = explorer.model
    trace = infer(model, explorer.pair_image)
    lengths = trace.lengths[-1]
    np.testing.assert_allclose(explorer.inference.c, trace.c, atol=1e-6)
    top2 = list(np.argsort(-lengths)[:2])
    assert explorer.top2 == top2
    bar_heights = explorer.bars.opts["height"]
    np.testing.assert_allclose(bar_heights, lengths, atol=1e-6)
    a, b = explorer.labels
    found = len({a, b} & set(top2))
    assert explorer.verdict.text().endswith({2: "both right", 1: "one right", 0: "both wrong"}[found])
    with torch.no_grad():
        v = torch.from_numpy(trace.v[-1])[None]
        assert sorted(explorer.shown) == sorted(top2)
        if a in top2:
            assert explorer.shown[0] == a  # digit A's capsule in red, as digit A is drawn
        for k, digit in enumerate(explorer.shown):
            alone = model.decoder(v, torch.tensor([digit]))[0, 0].numpy()
            np.testing.assert_allclose(explorer.reconstructions[k], alone, atol=1e-5)
    for r in range(trace.iterations):
        qtbot.keyClick(explorer.iteration, Qt.Key.Key_Home)
        for _ in range(r):
            qtbot.keyClick(explorer.iteration, Qt.Key.Key_Right)
        share, _ = segmentation(trace.u_lengths, trace.c[r], (a, b))
        np.testing.assert_allclose(explorer.shares[r], share, atol=1e-5)
        from capsviz.gui.widgets.pairs import segmentation_image

        np.testing.assert_allclose(
            explorer.segment_panel.image, segmentation_image(explorer.pair_image, share, explorer.contrast), atol=1e-5
        )
    assert np.allclose(explorer.shares[0], 0.5)  # iteration 1: uniform couplings favour neither digit
    assert explorer.contrast > 0  # later iterations do


def test_the_absent_digit_reconstruction_uses_the_capsule_picked(qtbot, explorer):
    explorer.set_pair(3, 40)
    a, b = explorer.labels
    missing = next(k for k in range(10) if k not in (a, b))
    explorer.absent.setFocus()
    explorer.absent.setCurrentIndex(missing)
    with torch.no_grad():
        v = torch.from_numpy(explorer.inference.v[-1])[None]
        expected = explorer.model.decoder(v, torch.tensor([missing]))[0, 0].numpy()
    np.testing.assert_allclose(explorer.absent_panel.image, expected, atol=1e-5)
    assert "not there" in explorer.absent_panel.title.text


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_the_browser_shows_test_pairs_and_finds_the_wrong_ones(qtbot, pair_checkpoint):
    configure_pyqtgraph()
    from capsviz.gui.widgets.pairs import PairExplorer

    model, _, _ = load_checkpoint(pair_checkpoint)
    test = load_mnist(train=False, data_root=mnist_root())
    w = PairExplorer(model, test)
    qtbot.addWidget(w)
    w.show()
    w.test_pair.setValue(5)
    qtbot.mouseClick(w.show_test_pair, Qt.MouseButton.LeftButton)
    pairs = fixed_test_pairs(test, 200)
    np.testing.assert_array_equal(w.pair_image, pairs.images[5] / np.float32(255))
    qtbot.mouseClick(w.next_wrong, Qt.MouseButton.LeftButton)
    k = w.test_pair.value()
    assert k > 5
    lengths = torch.from_numpy(w.inference.lengths[-1][None])
    assert two_digit_hits(lengths, torch.from_numpy(pairs.labels[k][None])).item() < 2
    np.testing.assert_array_equal(w.pair_image, pairs.images[k] / np.float32(255))


def test_opening_a_multimnist_checkpoint_shows_the_overlapping_digits_window(qtbot, window, pair_checkpoint):
    assert window.open_checkpoint(pair_checkpoint)
    pair_window = window.pair_window
    assert pair_window is not None and pair_window.isVisible()
    assert pair_checkpoint.name in pair_window.windowTitle()
    assert window.core.info is not None and window.core.info.dataset == "mnist"  # the explorer keeps its model
    assert window.core.load_model(pair_checkpoint) is False  # the MNIST explorer refuses it, in one line
    qtbot.waitUntil(lambda: window.errors.error_box is not None, timeout=5000)
    assert "a model for MultiMNIST (36x36 images); the explorer takes MNIST models" in window.errors.error_box.text()


def draw_stroke(qtbot, canvas, points):
    """A real mouse stroke through ``points`` (canvas pixels)."""
    from PySide6.QtCore import QPoint

    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=QPoint(*points[0]))
    for p in points[1:]:
        qtbot.mouseMove(canvas, QPoint(*p))
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=QPoint(*points[-1]))


def test_a_drawn_digit_takes_the_place_of_a_test_digit(qtbot, explorer):
    from capsviz.data.preprocess import preprocess_ink

    a, b = explorer.controls
    explorer.set_pair(3, 40, (0, 0), (1, -2))
    b.source.setCurrentIndex(1)  # "drawing"
    assert b.canvas.isVisible() and not b.index.isEnabled()
    draw_stroke(qtbot, b.canvas, [(84, 20), (84, 60), (84, 100), (84, 148)])  # a vertical bar: a 1
    qtbot.waitUntil(lambda: explorer.inference is not None and not b.canvas.is_empty(), timeout=2000)
    qtbot.wait(50)
    drawn = np.round(preprocess_ink(b.canvas.ink()) * 255).astype(np.uint8)
    expected = compose(np.stack([place(explorer.digits.images[3], (0, 0)), place(drawn, (1, -2))]))
    np.testing.assert_array_equal(explorer.pair_image, expected / np.float32(255))
    assert explorer.labels[1] is None and explorer.segmented == tuple(explorer.top2)
    assert explorer.verdict.text().startswith(f"longest capsules: {explorer.top2[0]} and {explorer.top2[1]}")
    qtbot.mouseClick(b.clear, Qt.MouseButton.LeftButton)
    np.testing.assert_array_equal(explorer.pair_image, place(explorer.digits.images[3], (0, 0)) / np.float32(255))


def test_the_view_menu_opens_the_shipped_multimnist_model(qtbot, window):
    from capsviz.paths import shipped_multimnist_checkpoint

    window.actions["pairs"].trigger()
    pair_window = window.pair_window
    assert pair_window is not None and pair_window.isVisible()
    assert pair_window.path == shipped_multimnist_checkpoint()
    explorer = pair_window.explorer
    assert explorer.inference.c.shape == (3, 3200, 10) and explorer.pair_image.shape == (36, 36)
    np.testing.assert_allclose(explorer.inference.c.sum(axis=-1), 1.0, atol=1e-5)
    assert (explorer.inference.lengths < 1).all()
