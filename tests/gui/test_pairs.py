"""The explorer on overlapping digits: a MultiMNIST pair composed with real widget events in
the window's pair mode, its lengths, Fig. 5 reconstructions and the segmentation by routing,
all from the model's trace, and every pass for the pair off the GUI thread."""

from __future__ import annotations

import threading

import numpy as np
import pyqtgraph as pg
import pytest
import torch
from PySide6.QtCore import QPoint, Qt

from capsviz.data.mnist import load_mnist, load_sample
from capsviz.data.multimnist import fixed_test_pairs, place
from capsviz.model.analysis import segmentation
from capsviz.model.pairs import a_digit
from capsviz.train.checkpoint import load_checkpoint
from capsviz.train.loop import Trainer

from ..conftest import SHIPPED, mnist_root
from .events import drag_slider, hover_vote, settle

RED, GREEN = np.array([1.0, 0.25, 0.2], np.float32), np.array([0.2, 1.0, 0.3], np.float32)  # the Fig. 5 colours


@pytest.fixture(scope="module")
def pair_checkpoint(tmp_path_factory):
    """The shipped MNIST model widened to MultiMNIST and trained for 4 steps: a real
    MultiMNIST checkpoint."""
    path = tmp_path_factory.mktemp("pairs") / "mm.safetensors"
    overrides = {"dataset": "multimnist", "device": "cpu", "pairs_per_epoch": 64, "batch_size": 16, "epochs": 1}
    trainer = Trainer.continue_from_weights(SHIPPED, load_sample(), overrides=overrides, checkpoint_path=path)
    list(trainer.run())
    return path


def wait_for_pairs(qtbot, window, timeout=20000):
    """Until the window shows a pair model's reading of its pair, every view drawn."""
    qtbot.waitUntil(
        lambda: (
            window.core.dataset == "multimnist"
            and not window.core.pending
            and window.core.inference is not None
            and window.core.inference.reading is not None
        ),
        timeout=timeout,
    )
    settle(qtbot, window, timeout)


@pytest.fixture
def pairs(qtbot, window, pair_checkpoint):
    """The main window in its overlapping-digits mode with the 4-step MultiMNIST model,
    showing digits 3 and 40 of its test digits."""
    assert window.open_checkpoint(pair_checkpoint)
    wait_for_pairs(qtbot, window)
    window.pair_panel.set_pair(3, 40, (2, -1), (-3, 4))
    wait_for_pairs(qtbot, window)
    return window


def traced(model, image, iterations=None):
    """The model's own forward pass with its trace, for an (H, H) image: (c, v, lengths) of every iteration."""
    with torch.no_grad():
        out = model(torch.from_numpy(image)[None, None], routing_iterations=iterations, trace=True)
    return out.trace.to_numpy(0, keys=("c", "v", "lengths", "u_lengths"))


def test_the_pair_follows_the_index_and_shift_controls(qtbot, pairs):
    panel = pairs.pair_panel
    a, b = panel.controls
    qtbot.mouseClick(a.random, Qt.MouseButton.LeftButton)
    b.index.setFocus()
    b.index.selectAll()
    qtbot.keyClicks(b.index, "17")
    qtbot.keyClick(b.index, Qt.Key.Key_Return)
    qtbot.keyClick(a.dx, Qt.Key.Key_Home)  # the slider's lowest: -4
    for _ in range(7):
        qtbot.keyClick(a.dx, Qt.Key.Key_Right)
    qtbot.keyClick(a.dy, Qt.Key.Key_Home)
    for _ in range(4):
        qtbot.keyClick(a.dy, Qt.Key.Key_Right)
    qtbot.keyClick(b.dy, Qt.Key.Key_Home)
    qtbot.keyClick(b.dx, Qt.Key.Key_Home)
    for _ in range(4):
        qtbot.keyClick(b.dx, Qt.Key.Key_Right)
    assert b.index.value() == 17 and a.shift == (0, 3) and b.shift == (-4, 0)
    assert [label.text() for label in b.shift_labels] == ["-4 px", "+0 px"]
    digits = panel.digits
    # digit A's 28x28 image 4 px in from the left and top of the 36x36 field, moved 3 px right; B's 4 px up
    expected = np.zeros((36, 36), np.int32)
    expected[4:32, 7:35] += digits.images[a.index.value()]
    expected[0:28, 4:32] += digits.images[17]
    expected = np.minimum(expected, 255).astype(np.float32) / 255
    np.testing.assert_array_equal(panel.pair_image, expected)
    np.testing.assert_array_equal(panel.input_panel.image, expected)
    wait_for_pairs(qtbot, pairs)
    assert np.array_equal(pairs.core.inference.input, expected)  # the pass read the pair composed


def test_lengths_fig5_and_segmentation_come_from_the_models_trace(qtbot, pairs):
    panel, core = pairs.pair_panel, pairs.core
    inf, reading, model = core.inference, core.inference.reading, core.model
    trace = traced(model, panel.pair_image)
    lengths = trace["lengths"][-1]
    np.testing.assert_allclose(inf.c, trace["c"], atol=1e-6)
    top2 = [int(j) for j in np.argsort(-lengths)[:2]]
    assert reading.top2 == top2
    np.testing.assert_allclose(pairs.lengths_view.bars.opts["height"], lengths, atol=1e-6)
    a, b = (int(panel.digits.labels[k]) for k in (3, 40))
    found = len({a, b} & set(top2))
    assert panel.verdict.text().split("\n")[0].endswith({2: "both right", 1: "one right", 0: "both wrong"}[found])
    with torch.no_grad():
        v = torch.from_numpy(trace["v"][-1])[None]
        assert sorted(reading.shown) == sorted(top2)
        if a in top2:
            assert reading.shown[0] == a  # digit A's capsule in red, as digit A is drawn
        alone = [model.decoder(v, torch.tensor([digit]))[0, 0].numpy() for digit in reading.shown]
    np.testing.assert_allclose(reading.reconstructions[reading.shown], alone, atol=1e-5)
    red, green = alone
    np.testing.assert_allclose(
        panel.fig5_panel.image, np.clip(red[..., None] * RED + green[..., None] * GREEN, 0, 1), atol=1e-5
    )
    routing = pairs.routing_view
    pairs.docks["routing"].raise_()
    shares = []
    for r in range(inf.iterations):
        routing.iteration.setFocus()
        qtbot.keyClick(routing.iteration, Qt.Key.Key_Home)
        for _ in range(r):
            qtbot.keyClick(routing.iteration, Qt.Key.Key_Right)
        settle(qtbot, pairs)
        share, _ = segmentation(trace["u_lengths"], trace["c"][r], (a, b))
        shares.append(share)
        np.testing.assert_allclose(reading.shares[r], share, atol=1e-5)
        assert panel.segment_panel.title.text.startswith(f"r = {r + 1}: {a} | {b}")
        assert pairs.votes_view.iteration.value() == r + 1  # one iteration for every view
        # each ink pixel coloured from green (share 0.5 - contrast) to red (0.5 + contrast)
        on_ink = panel.pair_image > 0.2
        contrast = max(np.abs(s[on_ink] - 0.5).max() for s in shares) if r == inf.iterations - 1 else None
        if contrast:
            t = np.clip(0.5 + (share - 0.5) / (2 * contrast), 0, 1)[..., None]
            expected = np.clip(panel.pair_image[..., None] * (t * RED + (1 - t) * GREEN), 0, 1)
            np.testing.assert_allclose(panel.segment_panel.image, expected, atol=1e-5)
            assert reading.contrast == pytest.approx(contrast, abs=1e-6)
    assert np.allclose(reading.shares[0], 0.5)  # iteration 1: uniform couplings favour neither digit
    assert reading.contrast > 0  # later iterations do


def test_the_capsule_lengths_come_before_the_pairs_reading(qtbot, pairs):
    """A new pair: the lengths are shown first (the reading not yet in), the reading follows
    for the same inference, and until then the pair panel keeps its last reading drawn."""
    core, panel = pairs.core, pairs.pair_panel
    events = []
    core.inferenceReady.connect(lambda inf: events.append(("capsules", inf, inf.reading)))
    core.readingReady.connect(lambda: events.append(("reading", core.inference, core.inference.reading)))
    panel.set_pair(7, 12, (0, 0), (1, 1))
    wait_for_pairs(qtbot, pairs)
    assert [e[0] for e in events] == ["capsules", "reading"]
    assert events[0][2] is None and events[1][1] is events[0][1]  # the reading of the capsules shown
    reading = events[1][2]
    verdict, fig5 = panel.verdict.text(), panel.fig5_panel.image.copy()
    core.inference.reading = None  # as between the capsules and their reading: the last one stays drawn
    panel._draw_reading()
    assert panel.verdict.text() == verdict and np.array_equal(panel.fig5_panel.image, fig5)
    core.inference.reading = reading
    expected = pairs.core.reads["multimnist"](core.model, events[0][1], panel.setup)
    np.testing.assert_allclose(reading.reconstructions, expected.reconstructions, atol=1e-6)
    assert reading.verdict() == expected.verdict() and panel.verdict.text().startswith(reading.verdict())


def test_the_absent_digit_reconstruction_uses_the_capsule_picked(qtbot, pairs):
    panel = pairs.pair_panel
    a, b = (int(panel.digits.labels[k]) for k in (3, 40))
    missing = next(k for k in range(10) if k not in (a, b))
    panel.absent.setFocus()
    panel.absent.setCurrentIndex(missing)
    settle(qtbot, pairs)
    with torch.no_grad():
        v = torch.from_numpy(traced(pairs.core.model, panel.pair_image)["v"][-1])[None]
        expected = pairs.core.model.decoder(v, torch.tensor([missing]))[0, 0].numpy()
    np.testing.assert_allclose(panel.absent_panel.image, expected, atol=1e-5)
    assert panel.absent_panel.title.text == f"(*) {missing} absent"  # a digit that is not in the pair


def test_every_pass_and_scan_of_the_pair_mode_runs_off_the_gui_thread(qtbot, window, pair_checkpoint, monkeypatch):
    """Opening the pair mode, a new pair, a test pair and *Next wrong pair*: the model and the
    pair's reading run on other threads only (each recorded where it ran)."""
    from capsviz.model.capsnet import CapsNet

    ran_on = []
    forward = CapsNet.forward

    def recording(self, *args, **kwargs):
        ran_on.append(("forward", threading.current_thread()))
        return forward(self, *args, **kwargs)

    monkeypatch.setattr(CapsNet, "forward", recording)
    read = window.core.reads["multimnist"]

    def reading(*args):
        ran_on.append(("read", threading.current_thread()))
        return read(*args)

    window.core.reads["multimnist"] = reading
    window.show_kind("multimnist", pair_checkpoint)
    wait_for_pairs(qtbot, window)
    panel = window.pair_panel
    panel.set_pair(5, 41, (0, 0), (1, -2))
    wait_for_pairs(qtbot, window)
    assert panel.test_pair.isEnabled() == (len(panel.digits) == 10_000)
    if panel.test_pair.isEnabled():
        panel.test_pair.setValue(7)
        qtbot.mouseClick(panel.show_test_pair, Qt.MouseButton.LeftButton)
        wait_for_pairs(qtbot, window)
        qtbot.mouseClick(panel.next_wrong, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.scan is None, timeout=60000)
        wait_for_pairs(qtbot, window)
        assert panel.test_pair.value() > 7 and panel.browse_status.text().startswith("test pair")
    kinds = {kind for kind, _ in ran_on}
    assert kinds == {"forward", "read"} and len(ran_on) >= 4
    gui = threading.main_thread()
    assert [kind for kind, thread in ran_on if thread is gui] == []


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_the_browser_shows_test_pairs_and_finds_the_wrong_ones(qtbot, window, pair_checkpoint):
    panel = window.pair_panel
    assert panel.test_pair.value() == 0 and panel.browse_status.text().startswith("test pair 0: digits")
    test = load_mnist(train=False, data_root=mnist_root())
    pairs = fixed_test_pairs(test, 200)
    np.testing.assert_array_equal(panel.pair_image, pairs.images[0] / np.float32(255))  # the pair its box shows
    assert window.open_checkpoint(pair_checkpoint)
    wait_for_pairs(qtbot, window)
    panel.test_pair.setFocus()
    panel.test_pair.selectAll()
    qtbot.keyClicks(panel.test_pair, "12")
    qtbot.keyClick(panel.test_pair, Qt.Key.Key_Return)  # Enter in the box shows the pair typed
    np.testing.assert_array_equal(panel.pair_image, pairs.images[12] / np.float32(255))
    assert panel.browse_status.text().startswith("test pair 12: digits")
    panel.test_pair.setValue(5)
    qtbot.mouseClick(panel.show_test_pair, Qt.MouseButton.LeftButton)
    np.testing.assert_array_equal(panel.pair_image, pairs.images[5] / np.float32(255))
    qtbot.mouseClick(panel.next_wrong, Qt.MouseButton.LeftButton)
    assert panel.next_wrong.text() == "Cancel scan"
    qtbot.waitUntil(lambda: window.scan is None, timeout=60000)
    assert panel.next_wrong.text() == "Next wrong pair"
    wait_for_pairs(qtbot, window)
    k = panel.test_pair.value()
    assert k > 5
    # the model's answers for every pair scanned over, from its own forward pass
    with torch.no_grad():
        lengths = window.core.model(torch.from_numpy(pairs.images[5 : k + 1] / np.float32(255))[:, None]).lengths
    answers = torch.argsort(-lengths, dim=1)[:, :2].numpy()
    right = [set(answer) == set(labels) for answer, labels in zip(answers, pairs.labels[5 : k + 1])]
    assert not right[-1] and all(right[1:-1])  # the first wrong pair after test pair 5
    np.testing.assert_array_equal(panel.pair_image, pairs.images[k] / np.float32(255))
    reading = window.core.inference.reading
    # a wrong pair keeps the colours of its digits: A's class red, B's green, wherever found
    a, b = (int(d) for d in pairs.labels[k])
    assert sorted(reading.shown) == sorted(reading.top2) and reading.shown[0] != b and reading.shown[1] != a
    if a in reading.top2:
        assert reading.shown[0] == a
    if b in reading.top2:
        assert reading.shown[1] == b
    assert panel.browse_status.text() == f"test pair {k}: digits {a} and {b}"
    control = panel.controls[1]
    control.dx.setValue(control.dx.value() + (1 if control.dx.value() < 4 else -1))
    assert panel.browse_status.text() == ""  # no longer that test pair


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_one_routing_iteration_beside_three_and_the_test_pairs_where_routing_changes_the_answer(qtbot, window):
    window.actions["pairs"].trigger()  # the shipped MultiMNIST model
    wait_for_pairs(qtbot, window)
    panel = window.pair_panel
    pairs = fixed_test_pairs(load_mnist(train=False, data_root=mnist_root()), 200)
    qtbot.mouseClick(panel.next_changed, Qt.MouseButton.LeftButton)
    assert panel.next_changed.text() == "Cancel scan" and panel.next_wrong.text() == "Next wrong pair"
    qtbot.waitUntil(lambda: window.scan is None, timeout=60000)
    assert panel.next_changed.text() == "Next routing change"
    wait_for_pairs(qtbot, window)
    k = panel.test_pair.value()

    def answers(j: int) -> tuple[set, set]:
        """The two longest capsules of test pair j after routing iterations 1 and 3, from the model's own trace."""
        lengths = traced(window.core.model, pairs.images[j] / np.float32(255))["lengths"]
        return set(np.argsort(-lengths[0])[:2].tolist()), set(np.argsort(-lengths[2])[:2].tolist())

    changed = [first != last for first, last in map(answers, range(1, k + 1))]
    assert k >= 1 and changed[-1] and not any(changed[:-1])  # the first such pair after test pair 0
    reading = window.core.inference.reading
    first, last = reading.first, reading.top2
    assert reading.routing_changed and (set(first), set(last)) == answers(k)
    text = panel.verdict.text()
    assert f"r = 1: {first[0]}, {first[1]}" in text and f"r = 3: {last[0]}, {last[1]}" in text
    assert text.endswith("routing changed the answer")

    # the routing view names the two answers as the pair panel does, longest capsule first:
    # at a test pair whose longer capsule is the higher class at both iterations
    def higher_class_longer(j: int) -> bool:
        lengths = traced(window.core.model, pairs.images[j] / np.float32(255))["lengths"]
        return all(np.argsort(-lengths[r])[0] > np.argsort(-lengths[r])[1] for r in (0, 2))

    j = next(j for j in range(1, 200) if higher_class_longer(j))
    panel.select_test_pair(j)
    wait_for_pairs(qtbot, window)
    settle(qtbot, window)
    first, last = window.core.inference.reading.first, window.core.inference.reading.top2
    assert first[0] > first[1] and last[0] > last[1]
    said = f"answer {first[0]}, {first[1]} (r = 1), {last[0]}, {last[1]} (r = 3)"
    assert said in window.routing_view.effect_label.text().replace("\u00a0", " ")
    assert f"r = 1: {first[0]}, {first[1]}" in panel.verdict.text()
    window.routing_view.iterations.setValue(1)  # one iteration at inference: nothing to set beside it
    wait_for_pairs(qtbot, window)
    assert panel.verdict.text().endswith("(one routing iteration: raise R to compare)")


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_a_scan_can_be_cancelled(qtbot, window, pair_checkpoint, monkeypatch):
    from capsviz.model import pairs as pair_reading

    panel = window.pair_panel
    window.show_kind("multimnist", pair_checkpoint)
    wait_for_pairs(qtbot, window)
    # every pair scored right: the scan would go on to the last of the 10,000
    monkeypatch.setattr(pair_reading, "pair_hits", lambda model, images, labels, **_: np.full(len(labels), 2))
    events = []
    window.scan_wrong_pairs(0)
    window.scan.yielded.connect(events.append)
    qtbot.waitUntil(lambda: len(events) >= 1, timeout=30000)
    qtbot.mouseClick(panel.next_wrong, Qt.MouseButton.LeftButton)  # Cancel scan
    qtbot.waitUntil(lambda: window.scan is None, timeout=30000)
    assert [ev[0] for ev in events] == ["progress"] * len(events) and events[-1][1] < 10_000
    assert panel.next_wrong.text() == "Next wrong pair" and panel.browse_status.text().startswith("scanning")


def test_the_pair_mode_opens_the_shipped_multimnist_model_and_an_mnist_model_switches_back(
    qtbot, window, shipped_checkpoint
):
    from capsviz.paths import shipped_multimnist_checkpoint

    window.actions["pairs"].trigger()  # View → Overlapping digits, with no MultiMNIST file given
    wait_for_pairs(qtbot, window)
    assert window.core.model_summary.startswith(shipped_multimnist_checkpoint().name)
    assert window.core.model.cfg.image_size == 36 and window.errors.error_box is None
    assert window.open_checkpoint(shipped_checkpoint)  # an MNIST model: back to single digits, no refusal
    qtbot.waitUntil(lambda: window.core.dataset == "mnist" and window.actions["digits"].isChecked(), timeout=10000)
    assert window.errors.error_box is None


def test_opening_a_multimnist_checkpoint_switches_the_window_and_back(qtbot, window, pair_checkpoint):
    before = window.core.model
    window.input_panel.canvas.clear()
    settle(qtbot, window)
    assert window.core.load_model(pair_checkpoint) is False  # the MNIST explorer refuses it, in one line
    qtbot.waitUntil(lambda: window.errors.error_box is not None, timeout=5000)
    assert "a model for MultiMNIST (36x36 images); the explorer takes MNIST models" in window.errors.error_box.text()
    window.errors.error_box.close()
    window.capsule_selection.set(1100)  # a capsule of the 6 x 6 grid: not one of the pair model's
    assert window.open_checkpoint(pair_checkpoint)
    wait_for_pairs(qtbot, window)
    assert pair_checkpoint.name in window.windowTitle() and window.actions["pairs"].isChecked()
    assert window.capsule_selection.index is None and len(window.routing_view.selected_cell.getData()[0]) == 0
    assert window.central.currentWidget() is window.pair_panel
    assert {name for name, dock in window.docks.items() if not dock.isHidden()} == {
        "lengths",
        "pose",
        "routing",
        "training",
        "votes",
    }
    assert not window.actions["open_image"].isEnabled() and window.training_panel.config().dataset == "multimnist"
    window.actions["digits"].trigger()  # View → Single digits: the MNIST model and its input are back
    qtbot.waitUntil(lambda: window.core.dataset == "mnist" and window.core.inference is None, timeout=5000)
    settle(qtbot, window)
    assert window.core.model is before and window.central.currentWidget() is window.input_panel
    assert not window.docks["browser"].isHidden() and window.training_panel.config().dataset == "mnist"
    assert window.windowTitle() == f"capsviz — Capsule Network explorer — {window.core.model_file.name}"


def draw_stroke(qtbot, canvas, points):
    """A real mouse stroke through ``points`` (canvas pixels)."""
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=QPoint(*points[0]))
    for p in points[1:]:
        qtbot.mouseMove(canvas, QPoint(*p))
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=QPoint(*points[-1]))


def test_a_drawn_digit_takes_the_place_of_a_test_digit(qtbot, pairs):
    panel = pairs.pair_panel
    a, b = panel.controls
    panel.set_pair(3, 40, (0, 0), (1, -2))
    settle(qtbot, pairs)
    heights = panel.height(), b.height()
    b.source.setCurrentIndex(1)  # "drawing"
    settle(qtbot, pairs)
    assert b.canvas.isVisible() and not b.index.isVisible() and not b.random.isVisible()
    assert (panel.height(), b.height()) == heights  # the views under the composer stay where they were
    assert b.canvas.geometry().bottom() < b.clear.geometry().top()  # Clear under the canvas, in the box
    draw_stroke(qtbot, b.canvas, [(58, 14), (58, 40), (58, 68), (58, 100)])  # a vertical bar: a 1
    qtbot.waitUntil(lambda: not b.canvas.is_empty(), timeout=2000)
    wait_for_pairs(qtbot, pairs)
    drawn = b.digit_image(panel.digits)
    assert drawn.dtype == np.uint8 and drawn.shape == (28, 28) and drawn.max() > 200
    cols = np.flatnonzero(drawn.max(axis=0) > 0)
    assert cols.max() - cols.min() < 10  # a narrow upright stroke
    expected = np.minimum(place(panel.digits.images[3], (0, 0)).astype(np.int32) + place(drawn, (1, -2)), 255)
    np.testing.assert_array_equal(panel.pair_image, expected.astype(np.float32) / 255)
    reading = pairs.core.inference.reading
    assert reading.labels == (int(panel.digits.labels[3]), None) and reading.segmented == tuple(reading.shown)
    assert panel.verdict.text().startswith(f"longest capsules: {reading.top2[0]} and {reading.top2[1]}")
    # the keys its tooltip names, on the canvas a stroke gave the focus
    ctrl = Qt.KeyboardModifier.ControlModifier
    qtbot.keyClick(b.canvas, Qt.Key.Key_Z, ctrl)
    assert b.canvas.is_empty()
    qtbot.keyClick(b.canvas, Qt.Key.Key_Z, ctrl | Qt.KeyboardModifier.ShiftModifier)
    assert not b.canvas.is_empty()
    np.testing.assert_array_equal(b.digit_image(panel.digits), drawn)
    qtbot.keyClick(b.canvas, Qt.Key.Key_Delete)
    assert b.canvas.is_empty()
    qtbot.keyClick(b.canvas, Qt.Key.Key_Z, ctrl)  # the clear undone
    assert not b.canvas.is_empty()
    qtbot.mouseClick(b.clear, Qt.MouseButton.LeftButton)
    np.testing.assert_array_equal(panel.pair_image, place(panel.digits.images[3], (0, 0)) / np.float32(255))
    # an empty canvas is no digit: the input is digit A alone, and the longest capsule its answer
    wait_for_pairs(qtbot, pairs)
    reading = pairs.core.inference.reading
    label, top = int(panel.digits.labels[3]), reading.top2[0]
    assert reading.blank == (False, True) and reading.segmented is None
    found = "found" if top == label else "not found"
    verdict, routing = panel.verdict.text().split("\n")
    one = "digit B is blank, so the input is one digit"
    assert verdict == f"{one}; longest capsule: {top}; the test digit is {a_digit(label)} — {found}"
    assert routing.startswith(f"r = 1: {reading.first[0]} (") and f"r = 3: {top} (" in routing
    assert panel.segment_panel.title.text == "segmentation"
    # Fig. 5 and the other views name the longest capsule alone, in digit A's red
    assert [j for j, _ in reading.painted] == [top] and panel.fig5_panel.title.text == f"decoded {top}"
    np.testing.assert_allclose(panel.fig5_panel.image, reading.reconstructions[top][..., None] * RED, atol=1e-6)
    effect = pairs.routing_view.effect
    assert (effect.first, effect.last) == ((reading.first[0],), (top,))
    assert pairs.lengths_view.answers == 1
    # a test pair shown is the test pair: both digits from the test set again, as its label says
    draw_stroke(qtbot, b.canvas, [(58, 14), (58, 40), (58, 68), (58, 100)])
    qtbot.mouseClick(panel.show_test_pair, Qt.MouseButton.LeftButton)
    block, j = panel.test_block.pair(panel.test_pair.value())
    assert not b.drawn and b.index.isVisible() and not b.canvas.isVisible()
    np.testing.assert_array_equal(panel.pair_image, block.images[j].astype(np.float32) / 255)
    assert panel.browse_status.text().startswith(f"test pair {panel.test_pair.value()}:")


def test_in_chinese_the_composer_and_the_training_dock_read_in_chinese(qtbot, window):
    """The language set before the pair mode opens: each digit's box and its canvas's Clear
    button (a child of the box in either source, never a window of its own), and the Training
    dock's tooltip, which names the pairs' data set."""
    window.set_language("zh_CN")
    window.actions["pairs"].trigger()
    wait_for_pairs(qtbot, window)
    settle(qtbot, window)
    for control in window.pair_panel.controls:
        for widget in (control.canvas, control.clear):
            assert widget.parentWidget() is control and not widget.isWindow()
        control.source.setCurrentIndex(1)  # drawing: no test digit's class in the title
        settle(qtbot, window)
        assert control.title() in ("数字 A（红）", "数字 B（绿）") and control.clear.text() == "清除"
    tip = window.docks["training"].toolTip()
    assert "MultiMNIST" in tip and tip == window.training_panel.toolTip() and tip.startswith("在后台")
    # the votes' two panels share the dock evenly, whatever height their texts once gave them
    window.docks["votes"].raise_()
    settle(qtbot, window)
    heights = [panel.height() for panel in window.votes_view.panels]
    assert len(heights) == 2 and abs(heights[0] - heights[1]) <= 2 and min(heights) > 117, heights


def test_the_view_menu_opens_the_shipped_multimnist_model(qtbot, window):
    from capsviz.paths import shipped_multimnist_checkpoint

    window.actions["pairs"].trigger()
    wait_for_pairs(qtbot, window)
    assert window.core.model_file == shipped_multimnist_checkpoint()
    assert window.core.baseline is not None and window.core.baseline.cfg.image_size == 36  # its CNN too
    inf = window.core.inference
    assert inf.c.shape == (3, 3200, 10) and inf.input.shape == (36, 36)
    np.testing.assert_allclose(inf.c.sum(axis=-1), 1.0, atol=1e-5)
    assert (inf.lengths < 1).all()
    # each kind keeps its own R, and the R box shows the one of the kind shown
    window.routing_view.iterations.setValue(5)
    qtbot.waitUntil(lambda: window.core.inference is not None and window.core.inference.iterations == 5, timeout=10000)
    qtbot.mouseClick(window.routing_view.check_button, Qt.MouseButton.LeftButton)  # a count on the test pairs
    assert window.routing_checker.worker is not None
    window.actions["digits"].trigger()
    qtbot.waitUntil(lambda: window.kind == "mnist" and window.core.inference is not None, timeout=10000)
    assert window.routing_view.iterations.value() == window.core.input.iterations == 3
    qtbot.waitUntil(lambda: window.routing_checker.worker is None, timeout=30000)  # the pairs' count stops
    assert window.routing_view.check_button.isEnabled() and "counting" not in window.routing_view.check_text
    window.actions["pairs"].trigger()
    wait_for_pairs(qtbot, window)
    assert window.routing_view.iterations.value() == window.core.input.iterations == 5


def test_the_routing_view_maps_the_10x10_grid_of_the_pair(qtbot, pairs):
    from PySide6.QtCore import QPointF

    from capsviz.model.analysis import class_cell, class_grid_shape, class_tile_origin, mosaic_capsule

    for j in range(10):  # the 10 x 10 layout and its inverse agree on every cell
        y0, x0 = class_tile_origin(j, 10)
        assert all(class_cell(y0 + y, x0 + x, 10) == (j, y, x) for y in range(10) for x in range(10))
    pairs.docks["routing"].raise_()
    view, inf = pairs.routing_view, pairs.core.inference
    assert view.inference is inf and inf.c.shape[1] == 3200
    r = view.iteration.value() - 1
    assert view.class_image.image.shape == class_grid_shape(10) == (29, 54)
    # the default scale: Σ over the 32 types of ‖u_i‖ (c_ij - 0.1), at each of the 10 x 10 positions
    departure = (inf.u_lengths[:, None] * (inf.c[r] - 0.1)).reshape(32, 10, 10, 10).sum(axis=0)  # (y, x, j)
    y0, x0 = class_tile_origin(7, 10)
    tile = view.class_image.image[y0 : y0 + 10, x0 : x0 + 10]
    np.testing.assert_allclose(tile, departure[..., 7], rtol=1e-5, atol=1e-6)
    j = view.selected_digit()
    assert view.mosaic.image.shape == (43, 87)
    np.testing.assert_allclose(view.mosaic.image[0:10, 0:10], inf.c[r, 0:100, j].reshape(10, 10) - 0.1, atol=1e-6)
    assert view.overlay_input.image.shape == (36, 36)
    # hovering the mosaic reads capsule i = type * 100 + y * 10 + x of the trace
    t, y, x = 13, 9, 4
    i = t * 100 + y * 10 + x
    col, row = (t % 8) * 11 + x, (t // 8) * 11 + y
    assert mosaic_capsule(row, col, grid=10) == (t, y, x)
    scene = view.mosaic_view.mapViewToScene(QPointF(col + 0.5, row + 0.5))
    qtbot.mouseMove(view.detail.viewport(), view.detail.mapFromScene(scene))
    qtbot.waitUntil(lambda: f"capsule i={i} " in view.readout.text(), timeout=3000)
    assert f"c_i{j} = {inf.c[r, i, j]:.4f}" in view.readout.text()
    qtbot.mouseMove(view.graphics.viewport(), view.graphics.mapFromScene(view.class_map_scene_pos(7, 8, 9)))
    qtbot.waitUntil(lambda: "digit 7, grid y=8 x=9" in view.readout.text(), timeout=3000)
    assert f"0.1) = {departure[8, 9, 7]:+.4f}" in view.readout.text()


def test_more_routing_iterations_reach_the_pair_and_its_segmentation(qtbot, pairs):
    view = pairs.routing_view
    pairs.docks["routing"].raise_()
    for _ in range(2):
        qtbot.keyClick(view.iterations, Qt.Key.Key_Up)
    qtbot.waitUntil(lambda: pairs.core.inference.iterations == 5, timeout=10000)
    settle(qtbot, pairs)
    inf = pairs.core.inference
    assert inf.reading.shares.shape[0] == 5 and view.iteration.maximum() == 5 and view.iteration.value() == 5
    assert pairs.pair_panel.segment_panel.title.text.startswith("r = 5:")
    np.testing.assert_allclose(inf.c, traced(pairs.core.model, pairs.pair_panel.pair_image, 5)["c"], atol=1e-6)


def test_the_lengths_view_shows_the_pairs_primary_capsules(qtbot, pairs):
    from PySide6.QtCore import QPointF

    from capsviz.gui.widgets.lengths import PREDICTED

    pairs.docks["lengths"].raise_()
    view, inf = pairs.lengths_view, pairs.core.inference
    qtbot.waitUntil(lambda: view.primary_maps.image.shape == (43, 87), timeout=3000)
    np.testing.assert_allclose(view.primary_maps.image[11:21, 22:32], inf.u_lengths[1000:1100].reshape(10, 10))
    np.testing.assert_allclose(view.lengths, inf.lengths[-1])
    marked = [
        k for k, brush in enumerate(view.bars.opts["brushes"]) if pg.mkBrush(brush).color() == pg.mkColor(PREDICTED)
    ]
    assert marked == sorted(int(k) for k in np.argsort(-inf.lengths[-1])[:2])  # the model's two answers
    scene = view.primary_view.mapViewToScene(QPointF(22 + 3.5, 11 + 8.5))  # type 10, y=8, x=3
    qtbot.mouseMove(view.primary.viewport(), view.primary.mapFromScene(scene))
    qtbot.waitUntil(lambda: "capsule i=1083 " in view.primary_title.text, timeout=3000)
    assert f"{inf.u_lengths[1083]:.4f}" in view.primary_title.text


def test_the_pose_sliders_move_one_digit_and_keep_the_other(qtbot, pairs):
    pairs.docks["pose"].raise_()
    pose, model = pairs.pose_view, pairs.core.model
    reading = pairs.core.inference.reading
    red, green = reading.shown
    pose.digit.setCurrentIndex(green + 1)  # edit the capsule drawn in green
    qtbot.waitExposed(pose)
    settle(qtbot, pairs)
    before = pose.recon_panel.image.copy()
    drag_slider(pose.sliders[4]._slider, 60)
    assert pose.offsets()[4] > 0
    v = traced(model, pairs.pair_panel.pair_image)["v"][-1]
    with torch.no_grad():
        edited = model.decoder(
            torch.from_numpy(pose.pose())[None, None].expand(1, 10, 16).clone(), torch.tensor([green])
        )
        edited = edited[0, 0].numpy()
        kept = model.decoder(torch.from_numpy(v)[None], torch.tensor([red]))[0, 0].numpy()  # as inferred
    np.testing.assert_allclose(pose.pose(), (v[green] + pose.offsets()) * np.float32(pose.scale.value()), atol=1e-6)
    expected = np.clip(edited[..., None] * GREEN + kept[..., None] * RED, 0, 1)
    np.testing.assert_allclose(pose.recon_panel.image, expected, atol=1e-5)
    np.testing.assert_allclose(
        pose.diff_panel.image, np.clip(edited + kept, 0, 1) - pairs.pair_panel.pair_image, atol=1e-5
    )
    assert not np.allclose(pose.recon_panel.image[..., 1], before[..., 1])  # green moved
    # the offsets are of this model's poses: the digits' model starts from its own, as inferred
    pose.scale.setValue(1.5)
    assert pairs.show_kind("mnist")
    qtbot.waitUntil(lambda: pairs.core.inference is not None and not pairs.core.pending, timeout=20000)
    settle(qtbot, pairs)
    inf = pairs.core.inference
    assert inf.input.shape == (28, 28) and not pose.offsets().any() and pose.scale.value() == 1.0
    np.testing.assert_allclose(pose.pose(), inf.v[-1][pose.selected_digit()], atol=1e-6)


def test_the_pair_modes_figures_and_trace_export(qtbot, pairs, tmp_path, monkeypatch):
    panel = pairs.pair_panel.fig5_panel
    shown, view = panel.size(), panel.view.geometry()
    files = pairs.export_figures(tmp_path / "figures")
    # what a user sees in the pair mode: the five panels and the docks' plots
    expected = {
        "pair_digits", "pair_input", "pair_reconstructions", "pair_absent_digit", "pair_segmentation",
        "capsule_lengths", "lengths_per_iteration", "primary_capsule_lengths",
        "routing_class_maps", "routing_mosaic", "routed_mass", "routing_entropy", "routing_overlay",
        "votes_0", "votes_1", "pose_input", "pose_reconstruction", "pose_difference",
        "training_loss", "training_accuracy", "training_reconstructions",
    }  # fmt: skip
    assert {f.stem for f in files} == expected  # no plot of the single-digit docks (transforms, robustness)
    assert {f.suffix for f in files} == {".png", ".svg"} and all(f.stat().st_size > 0 for f in files)
    from PIL import Image

    title = panel.height() - view.height()
    assert panel.height() > title + view.width() + 20  # on screen a slot taller than title and image
    with Image.open(tmp_path / "figures" / "pair_reconstructions.png") as im:  # small on screen, 640 px in a file
        # the title and the square image, without the black bands above and below it on screen
        assert im.size[0] >= 640 and abs(im.size[1] / im.size[0] - (title + view.width()) / panel.width()) < 0.02
    assert panel.size() == shown and panel.view.geometry() == view  # given back its size on screen
    import capsviz.gui.export as export

    monkeypatch.setattr(export, "ask_file_to_save", lambda *a: tmp_path / "trace.npz")
    pairs.actions["export_trace"].trigger()  # File → Export routing trace
    inf = pairs.core.inference
    with np.load(tmp_path / "trace.npz") as trace:
        assert trace["c"].shape == (3, 3200, 10) and trace["input"].shape == (36, 36)
        np.testing.assert_allclose(trace["c"], inf.c)
        longest = np.argsort(-inf.lengths[-1])[:2]  # the pair's two answers, longest first
        assert trace["predictions"].tolist() == longest.tolist() and int(trace["prediction"]) == longest[0]


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_the_training_panel_trains_a_multimnist_model_the_pair_follows(qtbot, pairs):
    from capsviz.train.checkpoint import read_info

    pairs.core.data_root = mnist_root()
    pairs.docks["training"].raise_()
    panel = pairs.training_panel
    assert panel.config().dataset == "multimnist" and not panel.max_shift.isEnabled()
    panel.batch_size.setValue(8)
    panel.train_subset.setValue(200)
    panel.pairs_per_epoch.setValue(48)
    panel.test_subset.setValue(20)
    panel.epochs.setValue(1)
    panel.from_scratch.setChecked(False)  # fine-tune the loaded model
    before, loaded = pairs.core.model, pairs.core.model_file.name
    with qtbot.waitSignal(pairs.core.trainingStarted, timeout=5000) as started:
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert pairs.windowTitle().endswith(f" — {loaded}, training into {started.args[0].name}")  # the model's file kept
    assert not pairs.show_kind("mnist")  # no switch while the run trains
    qtbot.waitUntil(lambda: not pairs.core.is_training, timeout=120000)
    wait_for_pairs(qtbot, pairs)
    assert pairs.core.model is not before  # the pair follows the weights learned
    assert len(panel.history["step"]) == 6 and np.isfinite(panel.history["loss"]).all()
    assert len(panel.test_history["acc"]) == 1 and panel.status.text().startswith("finished at step 6")
    assert pairs.training_panels["mnist"].history["step"] == []  # the other kind's panel saw nothing of it
    np.testing.assert_allclose(
        pairs.core.inference.c, traced(pairs.core.model, pairs.pair_panel.pair_image)["c"], atol=1e-6
    )
    info = read_info(started.args[0])
    assert info.dataset == "multimnist" and info.step == 6 and info.test_images == 20


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_fine_tuning_the_shipped_model_starts_where_its_schedule_ended_and_keeps_its_accuracy(qtbot, window):
    from capsviz.paths import shipped_multimnist_checkpoint
    from capsviz.train.checkpoint import read_info

    window.core.data_root = mnist_root()
    window.actions["pairs"].trigger()
    wait_for_pairs(qtbot, window)
    panel = window.training_panel
    panel.from_scratch.setChecked(True)
    assert panel.lr.value() == pytest.approx(1e-3)  # fresh weights: the paper's rate
    panel.from_scratch.setChecked(False)
    model, info, _ = load_checkpoint(shipped_multimnist_checkpoint())
    recipe = info.train_config
    ended = recipe["lr"] * recipe["lr_decay"] ** (info.step / recipe["lr_decay_steps"])
    assert 1e-5 < ended < 2e-5 and panel.lr.value() == pytest.approx(ended, rel=1e-3)

    pairs = fixed_test_pairs(load_mnist(train=False, data_root=mnist_root()), 100)
    with torch.no_grad():
        lengths = model(torch.from_numpy(pairs.images / np.float32(255))[:, None]).lengths
    answers = torch.argsort(-lengths, dim=1)[:, :2].numpy()
    before = np.mean([set(a) == set(b) for a, b in zip(answers, pairs.labels)])
    panel.batch_size.setValue(16)
    panel.pairs_per_epoch.setValue(64)
    panel.test_subset.setValue(100)
    panel.epochs.setValue(1)
    panel.device.setCurrentIndex(panel.device.findData("cpu"))
    with qtbot.waitSignal(window.core.trainingStarted, timeout=5000) as started:
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.core.is_training, timeout=180000)
    tuned = read_info(started.args[0])
    assert tuned.step == 4 and tuned.test_images == 100
    # four steps at the rate the schedule ended with move the model little (at 1e-3 the
    # same four steps bring it to about 10 % both right)
    assert tuned.test_accuracy >= before - 0.05
    assert window.windowTitle().endswith(started.args[0].name)


def test_the_votes_dock_shows_the_two_longest_capsules_one_over_the_other(qtbot, pairs):
    from capsviz.model.analysis import project, vote_projection

    pairs.docks["votes"].raise_()
    qtbot.waitUntil(lambda: pairs.votes_view.isVisible(), timeout=3000)
    settle(qtbot, pairs)
    view, inf = pairs.votes_view, pairs.core.inference
    assert [panel.j for panel in view.panels] == [int(j) for j in np.argsort(-inf.lengths[-1])[:2]]
    assert all(panel.isVisible() for panel in view.panels)
    for panel in view.panels:
        assert inf.u_hat.shape == (3200, 10, 16)
        mean, axes = vote_projection(inf.u_hat[:, panel.j])
        np.testing.assert_allclose(panel.points, project(inf.u_hat[:, panel.j], mean, axes))
        assert view.fields_map(panel).shape == (36, 36)
    # a vote read in the lower panel: the readout had room, both plots stay where they were
    from PySide6.QtWidgets import QApplication

    lower, plots = view.panels[1], [panel.plot.geometry() for panel in view.panels]
    hover_vote(qtbot, lower, int(np.argmin(np.linalg.norm(lower.points - lower.points.mean(axis=0), axis=1))))
    qtbot.waitUntil(lambda: "capsule i=" in view.readout.text(), timeout=3000)
    QApplication.processEvents()  # the layout's turn after the longer text
    assert [panel.plot.geometry() for panel in view.panels] == plots


def test_a_multimnist_cnn_stands_beside_the_pairs_capsule_lengths(qtbot, pairs, tmp_path):
    from capsviz.gui.widgets.lengths import CNN_PREDICTED
    from tests.gui.test_baseline import cnn_file

    shipped = pairs.core.baseline  # the shipped MultiMNIST CNN
    assert shipped is not None and shipped.cfg.image_size == 36
    with qtbot.waitSignal(pairs.core.error, timeout=1000) as error:
        assert not pairs.core.load_baseline(cnn_file(tmp_path, "mnist"))  # a 28x28 CNN: not for pairs
    assert "a model for MNIST" in error.args[1] and pairs.core.baseline is shipped
    assert pairs.open_baseline(cnn_file(tmp_path, "multimnist"))
    pairs.pair_panel.set_pair(5, 41, (0, 0), (1, -2))
    wait_for_pairs(qtbot, pairs)
    inf, cnn = pairs.core.inference, pairs.core.baseline
    with torch.no_grad():
        expected = torch.sigmoid(cnn(torch.from_numpy(inf.input)[None, None])).numpy()[0]  # ten sigmoids
    np.testing.assert_allclose(inf.baseline, expected, atol=1e-6)
    assert ((expected > 0) & (expected < 1)).all()
    np.testing.assert_allclose(pairs.lengths_view.cnn_bars.opts["height"], expected, atol=1e-6)
    brushes = pairs.lengths_view.cnn_bars.opts["brushes"]
    red = [k for k, brush in enumerate(brushes) if pg.mkBrush(brush).color() == pg.mkColor(CNN_PREDICTED)]
    assert red == sorted(int(k) for k in np.argsort(-expected)[:2])  # the CNN's two answers


def test_an_mnist_cnn_opened_in_the_pair_mode_returns_to_the_digit_and_model_left(qtbot, window, tmp_path):
    from tests.gui.test_baseline import cnn_file

    model, shown = window.core.model, window.core.inference.input
    window.actions["pairs"].trigger()
    wait_for_pairs(qtbot, window)
    assert window.open_baseline(cnn_file(tmp_path, "mnist"))  # File → Open comparison CNN, a 28x28 CNN
    qtbot.waitUntil(
        lambda: window.core.dataset == "mnist" and window.core.inference is not None and not window.core.pending,
        timeout=10000,
    )
    settle(qtbot, window)
    inf = window.core.inference
    assert window.core.model is model and window.core.baseline_info.path.name == "cnn_mnist.safetensors"
    np.testing.assert_array_equal(inf.input, shown)  # the digit left, read again: sample 0, a 7
    assert inf.prediction == 7 and inf.baseline is not None
    assert window.input_panel.prediction.text().startswith("7")  # not "no digit"


def test_the_names_of_the_two_top_routed_masses_stand_apart(qtbot, window):
    from capsviz.gui.widgets.routing import NAME_PX

    window.actions["pairs"].trigger()
    wait_for_pairs(qtbot, window)
    view = window.routing_view
    for pair in ((0, 12), (49, 34), (28, 34)):  # the two top lines end 0.4 to 4 pixels apart
        window.pair_panel.set_pair(*pair, (0, 0), (1, -2))
        wait_for_pairs(qtbot, window)
        settle(qtbot, window)
        names = view.mass_names.data
        box = view.mass_plot.getViewBox()
        centres = [box.mapViewToScene(pg.Point(x, y)).y() for x, y in zip(names["x"], names["y"])]
        assert abs(centres[0] - centres[1]) >= NAME_PX, (pair, centres)  # neither drawn over the other


def test_the_training_panels_gallery_shows_test_pairs_reconstructed_in_red_and_green(qtbot, pairs):
    from capsviz.data.mnist import load_test_or_sample
    from capsviz.explorer import GALLERY_PAIRS
    from capsviz.gui.widgets.training import GALLERY_GAP

    panel = pairs.training_panel
    qtbot.waitUntil(lambda: panel.gallery.gallery is not None and panel.gallery.gallery.pairs, timeout=10000)
    g = panel.gallery.gallery
    assert g is pairs.core.gallery and pairs.training_panels["mnist"].gallery.gallery is not g
    expected = fixed_test_pairs(load_test_or_sample(pairs.core.data_root)[0], GALLERY_PAIRS)
    np.testing.assert_array_equal(g.labels, expected.labels)
    np.testing.assert_allclose(g.images, expected.images / np.float32(255), atol=1e-6)
    with torch.no_grad():
        lengths = pairs.core.model(torch.from_numpy(g.images)[:, None], reconstruct=False).lengths
    for k in range(GALLERY_PAIRS):  # the two longest capsules, each digit's in its place where it is one of them
        top = set(torch.topk(lengths[k], 2).indices.tolist())
        assert set(g.answers[k].tolist()) == top
        assert g.right[k] == (top == set(g.labels[k].tolist()))
        for slot in (0, 1):
            if g.answers[k, 1 - slot] == g.labels[k, slot]:
                raise AssertionError(f"pair {k}: the capsule of digit {g.labels[k, slot]} is in the other's place")
    right = int(g.right.sum())
    assert panel.gallery.title.text == f"test pairs: {right} of {GALLERY_PAIRS} right"
    # the bottom row: the first answer's reconstruction in red, the second's in green
    step = 36 + GALLERY_GAP
    tile = panel.gallery.item.image[GALLERY_GAP + step : GALLERY_GAP + step + 36, GALLERY_GAP : GALLERY_GAP + 36]
    layered = np.clip(g.reconstructions[0, 0][..., None] * RED + g.reconstructions[0, 1][..., None] * GREEN, 0, 1)
    np.testing.assert_allclose(tile, layered, atol=1e-6)


def test_each_training_panel_gets_only_its_own_kinds_gallery(qtbot, window, pair_checkpoint, monkeypatch):
    from capsviz.gui.widgets.training import TrainingPanel

    shown = {"mnist": [], "multimnist": []}
    original = TrainingPanel.show_gallery
    monkeypatch.setattr(
        TrainingPanel, "show_gallery", lambda self, g: (shown[self.dataset].append(g), original(self, g))
    )
    window.core.load_model(None)  # a digits gallery asked for, and at once the switch to pairs
    assert window.show_kind("multimnist", pair_checkpoint)
    qtbot.waitUntil(lambda: bool(shown["multimnist"]), timeout=20000)
    wait_for_pairs(qtbot, window)
    assert all(g is not None and g.pairs for g in shown["multimnist"])
    assert all(g is not None and not g.pairs for g in shown["mnist"])
    assert window.core.gallery is shown["multimnist"][-1]


def test_a_gallery_that_cannot_be_made_is_said_once_and_leaves_an_empty_strip(qtbot, window, monkeypatch):
    import capsviz.explorer as explorer
    from capsviz.train.checkpoint import load_checkpoint

    errors = []
    window.core.error.connect(lambda title, message, details: errors.append((title, message)))
    monkeypatch.setattr(explorer, "reconstruction_gallery", lambda *a: (_ for _ in ()).throw(ValueError("no decoder")))
    panel = window.training_panel
    for _ in range(2):  # two more models: one message
        window.core.apply_snapshot(explorer.WeightsSnapshot(load_checkpoint(SHIPPED)[0], None, window.core.input))
        qtbot.waitUntil(lambda: not window.core.pending, timeout=10000)
        settle(qtbot, window)
    assert errors == [("Cannot reconstruct the test examples", "ValueError: no decoder")]
    assert window.core.gallery is None and panel.gallery.gallery is None
    assert panel.gallery.title.text == "test examples" and not panel.gallery.item.image.any()
