"""The overlapping-digits window: a MultiMNIST pair composed with real widget events, its
lengths, Fig. 5 reconstructions and the segmentation by routing, all from the model's trace."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
import torch
from PySide6.QtCore import Qt

from capsviz.data.mnist import load_mnist, load_sample
from capsviz.data.multimnist import compose, fixed_test_pairs, place
from capsviz.evaluate import two_digit_hits
from capsviz.gui.app import configure_pyqtgraph
from capsviz.model.analysis import segmentation
from capsviz.model.inference import infer
from capsviz.train.checkpoint import load_checkpoint
from capsviz.train.loop import Trainer

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
    from capsviz.gui.widgets.pairs import PairExplorer, red_green

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
    # a wrong pair keeps the colours of its digits: A's class red, B's green, wherever found
    a, b = (int(d) for d in pairs.labels[k])
    assert sorted(w.shown) == sorted(w.top2) and w.shown[0] != b and w.shown[1] != a
    if a in w.top2:
        assert w.shown[0] == a
    if b in w.top2:
        assert w.shown[1] == b
    with torch.no_grad():
        v = torch.from_numpy(w.inference.v[-1])[None].expand(2, -1, -1)
        decoded = w.model.decoder(v, torch.tensor(w.shown))[:, 0].numpy()
    np.testing.assert_allclose(w.reconstructions[:2], decoded, atol=1e-5)
    np.testing.assert_allclose(w.fig5_panel.image, red_green(*decoded), atol=1e-5)  # painted in the same order
    assert w.browse_status.text() == f"test pair {k}: digits {a} and {b}"
    w.controls[1].dx.setValue(w.controls[1].dx.value() + (1 if w.controls[1].dx.value() < 4 else -1))
    assert w.browse_status.text() == ""  # no longer that test pair


def test_red_is_digit_as_capsule_and_green_digit_bs():
    from capsviz.gui.widgets.pairs import by_digit

    left, right = np.zeros((36, 36)), np.zeros((36, 36))
    left[:, :18], right[:, 18:] = 1.0, 1.0
    parts = np.stack([left, right])  # digit A on the left, B on the right
    assert by_digit((4, 6), (5, 4), np.zeros((2, 36, 36)), parts) == (1, 0)  # B's class found: 4 goes green
    assert by_digit((5, 6), (5, 4), np.zeros((2, 36, 36)), parts) == (0, 1)  # A's class found: 5 stays red
    assert by_digit((6, 5), (5, None), np.zeros((2, 36, 36)), parts) == (1, 0)  # A a test digit, B drawn
    # neither class known (drawings) or found: each capsule to the digit its reconstruction covers
    assert by_digit((7, 1), (None, None), np.stack([right, left]), parts) == (1, 0)
    assert by_digit((7, 1), (2, 3), np.stack([left, right]), parts) == (0, 1)


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


@pytest.fixture
def pair_window(qtbot, pair_checkpoint):
    configure_pyqtgraph()
    from capsviz.gui.pair_window import PairWindow
    from capsviz.gui.widgets.pairs import PairExplorer

    model, _, _ = load_checkpoint(pair_checkpoint)
    w = PairWindow(PairExplorer(model, load_sample(), full_test_split=False, seed=3), pair_checkpoint)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    w.explorer.set_pair(3, 40, (2, -1), (-3, 4))
    assert w.scheduler.wait_idle()  # the docks have drawn this pair
    return w


def test_the_routing_view_maps_the_10x10_grid_of_the_pair(qtbot, pair_window):
    from PySide6.QtCore import QPointF

    from capsviz.gui.widgets.routing import class_cell, class_grid_shape, class_tile_origin
    from capsviz.model.analysis import class_maps, mosaic_capsule

    for j in range(10):  # the 10 x 10 layout and its inverse agree on every cell
        y0, x0 = class_tile_origin(j, 10)
        assert all(class_cell(y0 + y, x0 + x, 10) == (j, y, x) for y in range(10) for x in range(10))
    pair_window.docks["routing"].raise_()
    view, inf = pair_window.routing_view, pair_window.explorer.inference
    assert view.inference is inf and inf.c.shape[1] == 3200
    r = view.iteration.value() - 1
    assert view.class_image.image.shape == class_grid_shape(10) == (29, 54)
    departure = class_maps(inf.u_lengths, inf.c[r] - 0.1)  # (10, 10, 10): the default scale
    y0, x0 = class_tile_origin(7, 10)
    np.testing.assert_allclose(view.class_image.image[y0 : y0 + 10, x0 : x0 + 10], departure[7], rtol=1e-5, atol=1e-7)
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
    assert f"0.1) = {departure[7, 8, 9]:+.4f}" in view.readout.text()


def test_more_routing_iterations_reach_the_pair_and_its_segmentation(qtbot, pair_window):
    view, explorer = pair_window.routing_view, pair_window.explorer
    pair_window.docks["routing"].raise_()
    for _ in range(2):
        qtbot.keyClick(view.iterations, Qt.Key.Key_Up)
    assert pair_window.scheduler.wait_idle()
    assert explorer.inference.iterations == 5 and explorer.shares.shape[0] == 5
    assert explorer.iteration.maximum() == 5 and view.iteration.maximum() == 5
    np.testing.assert_allclose(explorer.inference.c, infer(explorer.model, explorer.pair_image, 5).c, atol=1e-6)


def test_the_lengths_view_shows_the_pairs_primary_capsules(qtbot, pair_window):
    from PySide6.QtCore import QPointF

    pair_window.docks["lengths"].raise_()
    view, inf = pair_window.lengths_view, pair_window.explorer.inference
    qtbot.waitUntil(lambda: view.primary_maps.image.shape == (43, 87), timeout=3000)
    np.testing.assert_allclose(view.primary_maps.image[11:21, 22:32], inf.u_lengths[1000:1100].reshape(10, 10))
    np.testing.assert_allclose(view.lengths, inf.lengths[-1])
    from capsviz.gui.widgets.lengths import PREDICTED

    marked = [
        k for k, brush in enumerate(view.bars.opts["brushes"]) if pg.mkBrush(brush).color() == pg.mkColor(PREDICTED)
    ]
    assert marked == sorted(pair_window.explorer.top2)  # the model's two answers, as in the pair's own bars
    scene = view.primary_view.mapViewToScene(QPointF(22 + 3.5, 11 + 8.5))  # type 10, y=8, x=3
    qtbot.mouseMove(view.primary.viewport(), view.primary.mapFromScene(scene))
    qtbot.waitUntil(lambda: "capsule i=1083 " in view.primary_title.text, timeout=3000)
    assert f"{inf.u_lengths[1083]:.4f}" in view.primary_title.text


def test_the_pose_sliders_move_one_digit_and_keep_the_other(qtbot, pair_window):
    from capsviz.gui.widgets.pairs import GREEN, RED, layered
    from capsviz.model.inference import reconstruct

    from .events import drag_slider

    pair_window.docks["pose"].raise_()
    pose, explorer = pair_window.pose_view, pair_window.explorer
    red, green = explorer.shown
    pose.digit.setCurrentIndex(green + 1)  # edit the capsule drawn in green
    qtbot.waitExposed(pose)
    assert pair_window.scheduler.wait_idle()
    before = pose.recon_panel.image.copy()
    drag_slider(pose.sliders[4]._slider, 60)
    assert pose.offsets()[4] > 0
    edited = reconstruct(explorer.model, pose.pose(), green)
    kept = explorer.reconstructions[0]  # the red capsule, as inferred
    np.testing.assert_allclose(pose.recon_panel.image, layered([edited, kept], [GREEN, RED]), atol=1e-6)
    np.testing.assert_allclose(pose.diff_panel.image, np.clip(edited + kept, 0, 1) - explorer.pair_image, atol=1e-6)
    assert not np.allclose(pose.recon_panel.image[..., 1], before[..., 1])  # green moved
    inferred = reconstruct(explorer.model, explorer.inference.v[-1][red], red)
    np.testing.assert_allclose(kept, inferred, atol=1e-5)  # the red one stays as inferred


def test_the_pair_windows_figures_and_trace_export(qtbot, pair_window, tmp_path):
    from capsviz.model.inference import save_trace

    files = pair_window.export_figures(tmp_path / "figures")
    names = {f.stem for f in files}
    assert {"pair_reconstructions", "pair_segmentation", "routing_class_maps", "pose_reconstruction"} <= names
    assert all(f.stat().st_size > 0 for f in files)
    save_trace(pair_window.explorer.inference, tmp_path / "trace.npz")
    with np.load(tmp_path / "trace.npz") as trace:
        assert trace["c"].shape == (3, 3200, 10) and trace["input"].shape == (36, 36)
        np.testing.assert_allclose(trace["c"], pair_window.explorer.inference.c)


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_the_training_panel_trains_a_multimnist_model_the_pair_follows(qtbot, pair_window):
    from capsviz.train.checkpoint import read_info

    pair_window.core.data_root = mnist_root()
    pair_window.docks["training"].raise_()
    panel, explorer = pair_window.training_panel, pair_window.explorer
    assert panel.config().dataset == "multimnist" and not panel.max_shift.isEnabled()
    panel.batch_size.setValue(8)
    panel.train_subset.setValue(200)
    panel.pairs_per_epoch.setValue(48)
    panel.test_subset.setValue(20)
    panel.epochs.setValue(1)
    panel.from_scratch.setChecked(False)  # fine-tune the loaded model
    before = explorer.model
    with qtbot.waitSignal(pair_window.core.trainingStarted, timeout=5000) as started:
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not pair_window.core.is_training, timeout=120000)
    assert explorer.model is not before and explorer.model is pair_window.core.model  # the pair follows
    assert len(panel.history["step"]) == 6 and np.isfinite(panel.history["loss"]).all()
    assert len(panel.test_history["acc"]) == 1 and panel.status.text().startswith("finished at step 6")
    np.testing.assert_allclose(explorer.inference.c, infer(explorer.model, explorer.pair_image).c, atol=1e-6)
    info = read_info(started.args[0])
    assert info.dataset == "multimnist" and info.step == 6 and info.test_images == 20


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_fine_tuning_the_shipped_model_starts_where_its_schedule_ended_and_keeps_its_accuracy(qtbot):
    from capsviz.evaluate import model_lengths
    from capsviz.gui.pair_window import PairWindow
    from capsviz.gui.widgets.pairs import PairExplorer
    from capsviz.paths import shipped_multimnist_checkpoint
    from capsviz.train.checkpoint import read_info

    configure_pyqtgraph()
    path = shipped_multimnist_checkpoint()
    model, info, _ = load_checkpoint(path)
    window = PairWindow(PairExplorer(model, load_sample(), full_test_split=False, seed=3), path, mnist_root())
    qtbot.addWidget(window)
    panel = window.training_panel
    assert panel.lr.value() == pytest.approx(1e-3)  # fresh weights: the paper's rate
    panel.from_scratch.setChecked(False)
    recipe = info.train_config
    ended = recipe["lr"] * recipe["lr_decay"] ** (info.step / recipe["lr_decay_steps"])
    assert 1e-5 < ended < 2e-5 and panel.lr.value() == pytest.approx(ended, rel=1e-3)
    panel.from_scratch.setChecked(True)
    assert panel.lr.value() == pytest.approx(1e-3)
    panel.from_scratch.setChecked(False)

    pairs = fixed_test_pairs(load_mnist(train=False, data_root=mnist_root()), 100)
    before = two_digit_hits(torch.from_numpy(model_lengths(model, pairs.images)), torch.from_numpy(pairs.labels))
    panel.batch_size.setValue(16)
    panel.pairs_per_epoch.setValue(64)
    panel.test_subset.setValue(100)
    panel.epochs.setValue(1)
    panel.device.setCurrentText("cpu")
    with qtbot.waitSignal(window.core.trainingStarted, timeout=5000) as started:
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert "training into" in window.windowTitle()
    qtbot.waitUntil(lambda: not window.core.is_training, timeout=180000)
    tuned = read_info(started.args[0])
    assert tuned.step == 4 and tuned.test_images == 100
    # four steps at the rate the schedule ended with move the model little (at 1e-3 the
    # same four steps bring it to about 10 % both right)
    assert tuned.test_accuracy >= float((before == 2).float().mean()) - 0.05
    assert window.windowTitle().endswith(started.args[0].name)


def test_the_votes_dock_shows_the_two_longest_capsules_side_by_side(qtbot, pair_window):
    from capsviz.model.analysis import project, vote_projection

    pair_window.docks["votes"].raise_()
    qtbot.waitUntil(lambda: pair_window.votes_view.isVisible(), timeout=3000)
    assert pair_window.scheduler.wait_idle()
    view, inf = pair_window.votes_view, pair_window.explorer.inference
    assert [panel.j for panel in view.panels] == pair_window.explorer.top2
    for panel in view.panels:
        assert inf.u_hat.shape == (3200, 10, 16)
        mean, axes = vote_projection(inf.u_hat[:, panel.j])
        np.testing.assert_allclose(panel.points, project(inf.u_hat[:, panel.j], mean, axes))
        assert view.fields_map(panel).shape == (36, 36)


def test_a_multimnist_cnn_stands_beside_the_pairs_capsule_lengths(qtbot, pair_window, tmp_path):
    from capsviz.model.baseline import baseline_probabilities
    from tests.gui.test_baseline import cnn_file

    shipped = pair_window.core.baseline  # the shipped MultiMNIST CNN
    assert shipped is not None and shipped.cfg.image_size == 36
    with qtbot.waitSignal(pair_window.core.error, timeout=1000) as error:
        assert not pair_window.load_baseline(cnn_file(tmp_path, "mnist"))  # a 28x28 CNN: not for pairs
    assert "a model for MNIST" in error.args[1] and pair_window.core.baseline is shipped
    assert pair_window.load_baseline(cnn_file(tmp_path, "multimnist"))
    pair_window.explorer.set_pair(5, 41, (0, 0), (1, -2))
    assert pair_window.scheduler.wait_idle()
    inf = pair_window.explorer.inference
    expected = baseline_probabilities(pair_window.core.baseline, inf.input)
    np.testing.assert_allclose(inf.baseline, expected, atol=1e-6)
    assert ((expected > 0) & (expected < 1)).all()  # ten sigmoids, one per digit
    np.testing.assert_allclose(pair_window.lengths_view.cnn_bars.opts["height"], expected, atol=1e-6)
    from capsviz.gui.widgets.lengths import CNN_PREDICTED

    brushes = pair_window.lengths_view.cnn_bars.opts["brushes"]
    red = [k for k, brush in enumerate(brushes) if pg.mkBrush(brush).color() == pg.mkColor(CNN_PREDICTED)]
    assert red == sorted(int(k) for k in np.argsort(-expected)[:2])  # the CNN's two answers
