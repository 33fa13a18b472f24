"""The main window driven by real mouse and keyboard events (pytest-qt, offscreen)."""

from __future__ import annotations

import dataclasses
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QPushButton

from capsviz.model.analysis import class_maps, mosaic_capsule, routed_mass
from tests.gui.events import settle

from ..conftest import mnist_root
from .events import drag, drag_slider, pause_training, start_training


def test_opens_with_shipped_model(window):
    assert "%" in window.model_label.text() and "test images" in window.model_label.text()
    inf = window.core.inference
    assert inf is not None and inf.prediction == 7  # MNIST test image 0 is a 7
    assert window.input_panel.prediction.text().startswith("7")
    np.testing.assert_allclose(inf.c.sum(axis=-1), 1.0, atol=1e-5)
    assert (inf.lengths < 1).all()


def test_drawing_a_vertical_stroke_reads_as_one(window, qtbot):
    canvas = window.input_panel.canvas
    qtbot.mouseClick(window.input_panel.clear_button, Qt.MouseButton.LeftButton)
    assert window.input_panel.prediction.text() == "no digit" and window.core.inference is None
    drag(canvas, [(140, 40 + 10 * k) for k in range(21)])
    qtbot.waitUntil(lambda: window.core.inference is not None and window.core.inference.prediction == 1, timeout=3000)
    # the label and the bars are drawn by the redraw scheduler in a pass after the result
    qtbot.waitUntil(lambda: window.input_panel.prediction.text().startswith("1"), timeout=3000)
    qtbot.waitUntil(lambda: window.lengths_view.lengths.argmax() == 1, timeout=3000)
    # undo with the keyboard brings the empty canvas back
    qtbot.keyClick(window.input_panel, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.core.inference is None, timeout=3000)
    # and redo with either of the platform's keys (the tooltip names Ctrl+Shift+Z), then undo again
    shift_ctrl = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    for key, modifiers in ((Qt.Key.Key_Z, shift_ctrl), (Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)):
        qtbot.keyClick(window.input_panel, key, modifiers)
        qtbot.waitUntil(
            lambda: window.core.inference is not None and window.core.inference.prediction == 1, timeout=3000
        )
        qtbot.keyClick(window.input_panel, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: window.core.inference is None, timeout=3000)


def test_a_cleared_canvas_leaves_blank_views_with_no_digit_named(window, qtbot):
    routing, pose = window.routing_view, window.pose_view
    assert routing.departure()  # the default colour scale: departure from uniform, white at 0
    qtbot.mouseClick(window.input_panel.clear_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    assert window.core.inference is None
    for image in (routing.class_image, routing.mosaic):
        low, high = image.levels
        assert (
            np.nanmax(np.abs(image.image)) == 0 and low == -high
        )  # 0 maps to the scale's white centre, not its blue end
    assert routing.mosaic_title.text == "c_ij by capsule type" and routing.overlay_title.text == "map over the input"
    assert pose.recon_panel.title.text == "reconstruction"


def test_drawing_changes_the_prediction_while_drawing(window, qtbot):
    before = window.core.inference.lengths[-1].copy()
    drag(window.input_panel.canvas, [(60, 60), (200, 60), (200, 90)])
    qtbot.waitUntil(lambda: not np.allclose(window.core.inference.lengths[-1], before), timeout=3000)


def test_pose_slider_changes_the_reconstruction(window, qtbot):
    pose = window.pose_view
    before = pose.reconstruction.copy()
    v_before = pose.pose().copy()
    drag_slider(pose.sliders[4]._slider, 60)
    assert pose.sliders[4].value() > 0.05
    after = pose.reconstruction
    assert np.abs(after - before).max() > 0.01
    delta = pose.pose() - v_before
    assert delta[4] == pytest.approx(pose.sliders[4].value()) and np.count_nonzero(delta) == 1
    qtbot.mouseClick(pose.reset_button, Qt.MouseButton.LeftButton)
    np.testing.assert_allclose(pose.reconstruction, before, atol=1e-6)


def test_the_pose_and_transform_sliders_move_by_keys_one_tab_stop_each(window, qtbot):
    """Without a mouse: an arrow moves a slider by its step, a Page key by ten, Home and End
    to its ends, and the reconstruction follows; Tab goes from one slider to the next."""
    pose = window.pose_view
    before, v_before = pose.reconstruction.copy(), pose.pose().copy()
    slider = pose.sliders[4]
    slider.setFocus()  # its slider inside takes the focus
    inner = window.focusWidget()
    assert inner is slider._slider
    step = slider.singleStep()
    qtbot.keyClick(inner, Qt.Key.Key_Right)
    assert slider.value() == pytest.approx(step) and pose.pose()[4] - v_before[4] == pytest.approx(step)
    qtbot.keyClick(inner, Qt.Key.Key_PageUp)
    assert slider.value() == pytest.approx(11 * step)
    assert np.abs(pose.reconstruction - before).max() > 0.01
    qtbot.keyClick(inner, Qt.Key.Key_End)
    assert slider.value() == slider.maximum() > 0
    qtbot.keyClick(inner, Qt.Key.Key_Down)
    assert slider.value() == pytest.approx(slider.maximum() - step)
    qtbot.keyClick(inner, Qt.Key.Key_Home)
    assert slider.value() == slider.minimum() < 0
    qtbot.keyClick(inner, Qt.Key.Key_Tab)
    assert window.focusWidget() is pose.sliders[5]._slider
    rotate = window.transform_view.sliders["rotation"]
    rotate.setFocus()
    for _ in range(3):
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Left)
    assert rotate.value() == pytest.approx(-3 * rotate.singleStep()) and rotate.value() < 0
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Home)
    assert rotate.value() == rotate.minimum()


def test_iteration_selector_changes_the_coefficients(window, qtbot):
    view = window.routing_view
    inf = window.core.inference
    np.testing.assert_allclose(view.shown, class_maps(inf.u_lengths, inf.c[2]), rtol=1e-6)
    slider = view.iteration
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_Home)
    assert view.iteration.value() == 1
    settle(qtbot, window)  # in the window, the routing plots redraw as stages
    np.testing.assert_allclose(view.shown, class_maps(inf.u_lengths, inf.c[0]), rtol=1e-6)
    assert view.iteration_label.text() == "r = 1 of 3"
    x, _ = view.entropy_curve.getData()
    assert view.mass_marker.value() == 1 and list(x) == [1, 2, 3]
    # iteration 1 couples uniformly (c = 0.1): every class map is the same
    np.testing.assert_allclose(view.shown[3], view.shown[7], rtol=1e-6)
    assert not np.allclose(class_maps(inf.u_lengths, inf.c[2])[3], class_maps(inf.u_lengths, inf.c[2])[7])


def test_more_routing_iterations_at_inference(window, qtbot):
    spin = window.routing_view.iterations
    spin.setFocus()
    for _ in range(2):
        qtbot.keyClick(spin, Qt.Key.Key_Up)
    settle(qtbot, window)
    assert window.core.inference.iterations == 5 and window.routing_view.iteration.maximum() == 5
    np.testing.assert_allclose(window.core.inference.c.sum(-1), 1.0, atol=1e-5)


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_training_updates_curves_and_stop_ends_it(window, qtbot):
    panel = window.training_panel
    panel.batch_size.setValue(16)
    panel.train_subset.setValue(320)
    panel.test_subset.setValue(100)
    before = window.core.inference.lengths[-1].copy()
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert window.core.is_training and not panel.start_button.isEnabled()
    qtbot.waitUntil(lambda: len(panel.history["step"]) >= 3, timeout=60000)

    def drawn_steps() -> int:  # the curves are redrawn in a later event-loop turn than the batch came in
        x, _ = panel.loss_curve.getData()
        return 0 if x is None else len(x)

    qtbot.waitUntil(lambda: drawn_steps() >= 3, timeout=30000)
    x, y = panel.loss_curve.getData()
    assert np.isfinite(y).all() and np.array_equal(x, np.asarray(panel.history["step"][: len(x)], dtype=float))
    if sys.platform.startswith("linux"):
        # training and its compute threads yield the CPU to the GUI thread
        nice = {
            int(t.name): int(open(t / "stat").read().rsplit(")", 1)[1].split()[16])
            for t in Path("/proc/self/task").iterdir()
        }
        assert nice[threading.get_native_id()] == 0
        assert sum(v == 10 for v in nice.values()) >= 1
    # the views show the weights being learned (fresh weights replaced the shipped model)
    qtbot.waitUntil(lambda: not np.allclose(window.core.inference.lengths[-1], before), timeout=30000)
    # the run ends after its step under way and its autosave: a few seconds on a loaded machine
    with qtbot.waitSignal(window.core.trainingFinished, timeout=30000):
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    assert not window.core.is_training and panel.start_button.isEnabled()
    assert "stopped" in panel.status.text()


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_pause_shows_the_paused_weights_and_resume_ends_as_an_unpaused_run(window, qtbot, monkeypatch):
    import torch

    from capsviz.data.mnist import load_mnist, load_test_or_sample
    from capsviz.runtime import worker_thread
    from capsviz.train.loop import Trainer, fresh_model

    panel = window.training_panel
    panel.batch_size.setValue(16)
    panel.train_subset.setValue(96)  # 6 steps an epoch
    panel.test_subset.setValue(100)
    panel.epochs.setValue(2)
    panel.precision.setCurrentIndex(panel.precision.findData("fp32"))
    assert not panel.pause_button.isEnabled()
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.history["step"]) >= 2, timeout=60000)
    pause_training(qtbot, window)
    trainer = window.core._holder["trainer"]
    paused_at = trainer.step
    assert 2 <= paused_at < 12 and panel.pause_button.text() == "Resume" and "paused at step" in panel.status.text()

    # the views show the paused weights: the snapshot sent on pausing is the model, and a new input is read with it
    def shows_paused_weights() -> bool:
        shown, paused = window.core.model.state_dict(), trainer.snapshot_state_dict()
        return all(torch.equal(shown[k], paused[k]) for k in paused)

    qtbot.waitUntil(shows_paused_weights, timeout=10000)
    window.sources.show_sample(7)
    settle(qtbot, window)
    expected = window.core.model(torch.from_numpy(window.sources.sample.images[7] / np.float32(255))[None, None])
    np.testing.assert_allclose(window.core.inference.lengths[-1], expected.lengths[0].detach().numpy(), atol=1e-5)
    assert trainer.step == paused_at and window.core.is_training  # no step taken while paused
    with qtbot.waitSignal(window.core.trainingFinished, timeout=120000):
        qtbot.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)  # Resume
    assert trainer.step == 12 and "finished" in panel.status.text() and panel.pause_button.text() == "Pause"

    # the same run without a pause, in a thread set up as the app's training thread is
    config = window.core.train_config
    reference = {}

    def train() -> None:
        with worker_thread("background"):
            test, _ = load_test_or_sample(window.core.data_root)
            t = Trainer(config, load_mnist(True, window.core.data_root), test, fresh_model(config, trainer.model.cfg))
            list(t.run())
            reference.update(t.model.state_dict())

    thread = threading.Thread(target=train)
    thread.start()
    thread.join(120)
    assert reference
    for key, value in trainer.model.state_dict().items():
        torch.testing.assert_close(value, reference[key], rtol=0, atol=1e-6, msg=key)


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_a_run_keeps_the_views_and_saves_as_its_own_record(window, qtbot, tmp_path, shipped_checkpoint):
    import torch

    from capsviz.train.checkpoint import read_info

    start_training(qtbot, window, 96)
    pause_training(qtbot, window)
    core, shown = window.core, window.core.model
    # another CapsNet opened meanwhile is refused: the run's snapshots would replace it unseen
    assert not window.open_checkpoint(shipped_checkpoint)
    assert (
        core.model is shown
        and core.training_into is not None
        and "Stop the training run" in window.errors.status_message
    )
    assert "capsnet_mnist" not in window.windowTitle() and "capsnet_mnist" not in window.model_label.text()
    # the weights shown, saved with the run's recipe and the place they were taken at
    trainer = core._holder["trainer"]
    qtbot.waitUntil(lambda: core._shown_position is not None and core._shown_position[1] == trainer.step, timeout=10000)
    saved = core.save_model(tmp_path / "mid.safetensors")
    info = read_info(saved)
    assert info.step == trainer.step and info.epoch == pytest.approx(trainer.step / 6)
    assert info.train_config["train_subset"] == 96 and info.train_config["batch_size"] == 16
    assert all(torch.equal(v, core.model.state_dict()[k]) for k, v in load_weights(saved).items())


def load_weights(path: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(path))


def test_a_run_that_cannot_save_starts_not_and_the_model_stays(window, qtbot, tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("a file where the checkpoints' folder would be")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "afile"))
    panel, core = window.training_panel, window.core
    core.data_ready = lambda: True
    shown, title = core.model, window.windowTitle()
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert not core.is_training and core.model is shown and window.windowTitle() == title
    assert panel.start_button.isEnabled() and "loading MNIST" not in panel.status.text()
    assert "is a file, not a folder" in window.errors.status_message
    assert str(tmp_path / "afile") in window.errors.status_message


def test_a_run_that_fails_before_its_first_step_gives_the_model_back(window, qtbot, tmp_path):
    from capsviz.data.mnist import MNIST_FILES

    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for name, (_, size) in MNIST_FILES.items():  # all there, the training images cut short
        (raw / name).write_bytes(bytes(100_000 if name.startswith("train-images") else size))
    panel, core = window.training_panel, window.core
    core.data_ready = lambda: True
    core.data_root = tmp_path
    shown, summary = core.model, window.model_label.text()
    with qtbot.waitSignal(core.trainingFinished, timeout=60000):
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert core.model is shown and window.model_label.text() == summary
    assert panel.status.text() == "the run failed; see the message" and panel.start_button.isEnabled()
    assert "train-images-idx3-ubyte" in window.errors.status_message
    assert window.statusBar().currentMessage() == window.errors.status_message  # still in the bar


def test_a_capsnet_opened_while_a_cnn_run_starts_stays_when_the_run_fails(window, qtbot, tmp_path, monkeypatch):
    import threading

    import capsviz.explorer as explorer
    from capsviz.model import CapsNet
    from capsviz.train.checkpoint import save_checkpoint

    opened = threading.Event()

    def failing_trainer(run):
        opened.wait(30)  # the CNN run is still setting up while the user opens a CapsNet
        raise OSError(5, "Input/output error", "MNIST")

    monkeypatch.setattr(explorer.TrainingRun, "trainer", failing_trainer)
    panel, core = window.training_panel, window.core
    core.data_ready = lambda: True
    panel.network.setCurrentIndex(panel.network.findData("baseline-small"))
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert core.is_training
    other = save_checkpoint(tmp_path / "other.safetensors", CapsNet())
    with qtbot.waitSignal(core.trainingFinished, timeout=30000):
        assert window.open_checkpoint(other)  # a CNN trains: opening a CapsNet is allowed
        opened.set()
    assert core.checkpoint_path == other.resolve() and "other.safetensors" in window.model_label.text()


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_a_fine_tune_names_the_model_it_started_from(window, qtbot, shipped_checkpoint):
    from capsviz.train.checkpoint import read_info

    panel = window.training_panel
    panel.from_scratch.setChecked(False)  # train the shipped model further
    with qtbot.waitSignal(window.core.trainingStarted) as started:
        start_training(qtbot, window, 96)
    with qtbot.waitSignal(window.core.trainingFinished, timeout=60000):
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    assert read_info(started.args[0]).metadata["initialised_from"] == shipped_checkpoint.name
    assert window.model_label.text().startswith(f"model: trained here from {shipped_checkpoint.name} — ")
    panel.from_scratch.setChecked(True)  # fresh weights: no origin
    with qtbot.waitSignal(window.core.trainingStarted) as started:
        start_training(qtbot, window, 96)
    with qtbot.waitSignal(window.core.trainingFinished, timeout=60000):
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    assert "initialised_from" not in read_info(started.args[0]).metadata
    assert window.model_label.text().startswith("model: trained here — ")
    assert window.core.checkpoint_path == started.args[0].resolve()  # the file the settings keep for the next start


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_stopping_a_paused_run_says_where_it_stopped(window, qtbot):
    panel = window.training_panel
    start_training(qtbot, window, 96)
    pause_training(qtbot, window)
    with qtbot.waitSignal(window.core.trainingFinished, timeout=60000):
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    assert panel.status.text().startswith("stopped at step") and "saved" in panel.status.text()
    assert panel.pause_button.text() == "Pause" and not panel.pause_button.isChecked()


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_closing_while_paused_asks_then_autosaves_the_paused_run(window, qtbot, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from capsviz.gui import dialogs
    from capsviz.train.checkpoint import read_info

    asked = []
    monkeypatch.setattr(
        dialogs.QMessageBox, "question", lambda *a: asked.append(a[1:3]) or QMessageBox.StandardButton.Yes
    )
    monkeypatch.setattr(window, "confirm_close", type(window).confirm_close.__get__(window))  # the real question
    panel = window.training_panel
    panel.batch_size.setValue(16)
    panel.train_subset.setValue(320)
    with qtbot.waitSignal(window.core.trainingStarted) as started:
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    # a run from fresh weights: its model is in no file yet, only the one it trains into
    name = started.args[0].name
    assert window.windowTitle() == f"capsviz — Capsule Network explorer — training into {name}"
    window.set_language("zh_CN")  # the title in the other language keeps the run
    assert window.windowTitle().endswith(f"正在训练并保存到 {name}")
    window.set_language("en")
    qtbot.waitUntil(lambda: len(panel.history["step"]) >= 1, timeout=60000)
    pause_training(qtbot, window)
    paused_at = window.core._holder["trainer"].step
    window.close()
    assert asked == [("Training is paused", f"Stop training, save it to {started.args[0]} and quit?")]
    assert read_info(started.args[0]).step == paused_at


def test_hovering_the_mosaic_reads_the_trace_values(window, qtbot):
    view = window.routing_view
    inf = window.core.inference
    t, y, x = 13, 2, 4  # capsule i = 13*36 + 2*6 + 4
    i = t * 36 + y * 6 + x
    col, row = (t % 8) * 7 + x, (t // 8) * 7 + y
    assert mosaic_capsule(row, col) == (t, y, x)
    scene = view.mosaic_view.mapViewToScene(QPointF(col + 0.5, row + 0.5))
    pos = view.detail.mapFromScene(scene)
    qtbot.mouseMove(view.detail.viewport(), pos)
    qtbot.waitUntil(lambda: f"capsule i={i} " in view.readout.text(), timeout=3000)
    j, r = inf.prediction, inf.iterations - 1
    text = view.readout.text()
    assert f"‖u_i‖ = {inf.u_lengths[i]:.4f}" in text
    assert f"c_i{j} = {inf.c[r, i, j]:.4f}" in text and f"b_i{j} = {inf.b[r, i, j]:.4f}" in text


def click_view_at(qtbot, widget, view_box, x: float, y: float) -> None:
    """A real left click on ``widget`` (a pyqtgraph view) at data point (x, y) of ``view_box``."""
    pos = widget.mapFromScene(view_box.mapViewToScene(QPointF(x, y)))
    qtbot.mouseClick(widget.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def double_click_view_at(qtbot, widget, view_box, x: float, y: float) -> None:
    """A real double-click as Qt delivers one: press and release, then the double-click event
    in place of the second press, and its release (QTest's mouseDClick sends no first release)."""
    from PySide6.QtGui import QMouseEvent

    viewport, left = widget.viewport(), Qt.MouseButton.LeftButton
    pos = widget.mapFromScene(view_box.mapViewToScene(QPointF(x, y)))
    qtbot.mouseClick(viewport, left, pos=pos)
    global_pos = QPointF(viewport.mapToGlobal(pos))
    event = QMouseEvent(
        QEvent.Type.MouseButtonDblClick, QPointF(pos), global_pos, left, left, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(viewport, event)
    qtbot.mouseRelease(viewport, left, pos=pos)


def test_a_primary_capsule_clicked_is_selected_in_every_view(window, qtbot):
    """One selected primary capsule for the window (design §7): clicked on the routing
    mosaic, a vote (also one under the rectangle) or the length maps, it is ringed in all
    three, its receptive field on the input, and read out; clicked again it is let go, the
    readouts back to their hints; a double-click selects, another button does nothing; a new
    input keeps the selection, and another digit keeps its readout."""
    from capsviz.gui.widgets.common import SELECTED

    routing, lengths, votes = window.routing_view, window.lengths_view, window.votes_view
    panel = votes.panels[0]
    window.docks["votes"].raise_()
    qtbot.waitUntil(lambda: panel.j is not None, timeout=5000)
    inf = window.core.inference

    def cell_of(i: int) -> tuple[float, float]:
        t, rest = divmod(i, 36)
        y, x = divmod(rest, 6)
        return (t % 8) * 7 + x + 0.5, (t // 8) * 7 + y + 0.5  # its centre in the mosaics (x, y)

    def ringed_at(i: int) -> bool:
        y, x = divmod(i % 36, 6)
        field = [2 * x + 8.5, 2 * y + 8.5]  # the centre of the 17 x 17 input pixels it sees
        return (
            np.allclose(np.column_stack(routing.selected_cell.getData()), [cell_of(i)])
            and np.allclose(np.column_stack(lengths.selected_cell.getData()), [cell_of(i)])
            and np.allclose(np.column_stack(routing.selected_field.getData()), [field])
            and np.allclose(np.column_stack(panel.selected_ring.getData()), panel.points[i : i + 1])
        )

    def no_ring() -> bool:
        rings = (routing.selected_cell, routing.selected_field, lengths.selected_cell, panel.selected_ring)
        return all(len(ring.getData()[0]) == 0 for ring in rings)

    def click_vote(i: int) -> None:
        click_view_at(qtbot, panel.plot, panel.plot.getViewBox(), *panel.points[i])

    assert routing.selected_cell.opts["pen"].color().getRgb()[:3] == SELECTED
    i = 13 * 36 + 2 * 6 + 4  # type 13, y = 2, x = 4
    click_view_at(qtbot, routing.detail, routing.mosaic_view, *cell_of(i))
    assert window.capsule_selection.index == i and ringed_at(i)
    assert f"capsule i={i} " in routing.readout.text() and f"capsule i={i} " in votes.readout.text()
    j = inf.prediction  # the routing readout says how its coupling to the digit shown moved
    assert " → ".join(f"{value:.3f}" for value in inf.c[:, i, j]) in routing.readout.text()
    # a vote clicked, and clicked again on its ring: selected, then let go
    points = panel.points
    gaps = np.linalg.norm(points[:, None] - points[None], axis=-1) + np.eye(len(points)) * 1e9
    far = int(gaps.min(axis=1).argmax())  # the vote farthest from any other
    panel.plot.setRange(
        xRange=(points[:, 0].min(), points[:, 0].max()), yRange=(points[:, 1].min(), points[:, 1].max())
    )
    settle(qtbot, window)
    click_vote(far)
    assert window.capsule_selection.index == far and ringed_at(far)
    click_vote(far)
    assert window.capsule_selection.index is None and no_ring()
    assert routing.readout.text() == "hover over a map to read its values"
    # a vote under the dashed rectangle (which takes drags): the one nearest the mouse, here
    # the one under the rectangle farthest on screen from any other
    (x0, y0), (w, h) = panel.box.pos(), panel.box.size()
    panel.plot.setRange(xRange=(x0, x0 + w), yRange=(y0, y0 + h), padding=0)  # zoomed in on the rectangle
    settle(qtbot, window)
    vb = panel.plot.getViewBox()
    on_screen = np.array(
        [(q.x(), q.y()) for q in (panel.plot.mapFromScene(vb.mapViewToScene(QPointF(*xy))) for xy in points)]
    )
    apart = np.linalg.norm(on_screen[:, None] - on_screen[None], axis=-1) + np.eye(len(points)) * 1e9
    inside = np.flatnonzero(votes.selected(panel))
    near = int(inside[apart[inside].min(axis=1).argmax()])
    assert apart[near].min() >= 2  # pixels
    click_vote(near)
    assert window.capsule_selection.index == near and ringed_at(near)
    assert f"capsule i={near} " in votes.readout.text()  # the hover under the mouse names the same vote
    # a double-click selects: its second click does not let go again; a right click does nothing
    double_click_view_at(qtbot, lengths.primary, lengths.primary_view, *cell_of(far))
    assert window.capsule_selection.index == far and ringed_at(far)
    pos = routing.detail.mapFromScene(routing.mosaic_view.mapViewToScene(QPointF(*cell_of(i))))
    qtbot.mouseClick(routing.detail.viewport(), Qt.MouseButton.RightButton, pos=pos)
    assert window.capsule_selection.index == far
    # let go with the mouse off the votes: their readout back to its hint too
    click_view_at(qtbot, lengths.primary, lengths.primary_view, *cell_of(far))
    assert window.capsule_selection.index is None and no_ring()
    assert votes.readout.text() == "hover over a vote to read it, click it to select its capsule"
    click_view_at(qtbot, lengths.primary, lengths.primary_view, *cell_of(far))
    # another digit keeps the selected vote read out; a new input keeps the selection
    digit = routing.digit
    digit.setCurrentIndex(digit.findData((inf.prediction + 1) % 10))
    settle(qtbot, window)
    assert panel.j == (inf.prediction + 1) % 10 and f"capsule i={far} " in votes.readout.text()
    digit.setCurrentIndex(0)
    qtbot.mouseClick(window.input_panel.sample_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.core.inference is not inf and not window.core.pending, timeout=10000)
    settle(qtbot, window)
    qtbot.waitUntil(lambda: panel.drawn is window.core.inference, timeout=5000)
    assert window.capsule_selection.index == far and ringed_at(far)
    # a vote far from the rest widens the view to take it in; let go, the view holds the bulk again
    points = panel.points
    outside = np.abs(points - np.median(points, axis=0)).max(axis=1).argmax()
    (x0, x1), (y0, y1) = panel.plot.getViewBox().viewRange()
    if not (x0 <= points[outside, 0] <= x1 and y0 <= points[outside, 1] <= y1):
        window.capsule_selection.set(int(outside))
        (x0, x1), (y0, y1) = panel.plot.getViewBox().viewRange()
        assert x0 <= points[outside, 0] <= x1 and y0 <= points[outside, 1] <= y1
        window.capsule_selection.set(None)
        (x0, x1), (y0, y1) = panel.plot.getViewBox().viewRange()
        assert not (x0 <= points[outside, 0] <= x1 and y0 <= points[outside, 1] <= y1)
    # the canvas cleared: no input, no values of one read out, no votes' titles of the last
    window.capsule_selection.set(far)
    qtbot.mouseClick(window.input_panel.clear_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.core.inference is None, timeout=5000)
    settle(qtbot, window)
    assert routing.readout.text() == "hover over a map to read its values" and no_ring()
    assert panel.plot.getPlotItem().titleLabel.title == "votes" and not panel.box.isVisible()


def test_routed_mass_and_entropy_are_the_traces(window):
    view = window.routing_view
    inf = window.core.inference
    np.testing.assert_allclose(view.mass, (inf.u_lengths[None, :, None] * inf.c).sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(view.mass, routed_mass(inf.u_lengths, inf.c))
    x, y = view.mass_curves[inf.prediction].getData()
    np.testing.assert_allclose(y, view.mass[:, inf.prediction])
    # routing concentrates: the predicted digit gains mass and the entropy falls over the iterations
    assert view.mass[-1, inf.prediction] > view.mass[0, inf.prediction]
    assert view.entropy[-1] < view.entropy[0]
    # the two digits that receive the most are named at the ends of their lines
    top = np.argsort(-view.mass[-1])[:2]
    assert top[0] == inf.prediction
    names = view.mass_names.data
    assert [s is view._glyphs[k] for s, k in zip(names["symbol"], top)] == [True, True]
    assert (names["x"] < 3).all() and (names["y"] > view.mass[-1, top]).all()


def test_one_routing_iteration_shows_a_point_per_digit_on_labelled_axes(window, qtbot):
    view = window.routing_view
    view.iterations.setValue(1)
    settle(qtbot, window)
    inf = window.core.inference
    assert inf.iterations == 1 and len(view.mass_names.data) == 0
    np.testing.assert_allclose(view.mass_points.data["y"], view.mass[-1])  # every c_ij = 0.1: one level
    for plot in (view.mass_plot, view.entropy_plot):
        low, high = plot.getViewBox().viewRange()[1]
        axis = plot.getAxis("left")
        assert len(axis.tickValues(low, high, axis.height())[0][1]) >= 2  # labelled ticks, not a collapsed range
    _, y = view.entropy_curve.getData()
    assert y[0] <= np.log(10)  # never over the 'uniform' line


def test_hovering_a_class_map_reads_its_value(window, qtbot):
    from capsviz.model.analysis import class_cell, class_tile_origin

    for j in range(10):  # the layout and its inverse agree on every cell
        y0, x0 = class_tile_origin(j)
        assert all(class_cell(y0 + y, x0 + x) == (j, y, x) for y in range(6) for x in range(6))
    assert class_cell(0, 0) is None  # the title band
    view = window.routing_view
    inf = window.core.inference
    r = view.iteration.value() - 1
    expected = class_maps(inf.u_lengths, inf.c[r])[7, 4, 1]
    departure = class_maps(inf.u_lengths, inf.c[r] - 0.1)[7, 4, 1]  # what the default scale shows
    y0, x0 = class_tile_origin(7)
    assert view.class_image.image[y0 + 4, x0 + 1] == pytest.approx(departure, rel=1e-5)
    qtbot.mouseMove(view.graphics.viewport(), view.graphics.mapFromScene(view.class_map_scene_pos(7, 4, 1)))
    qtbot.waitUntil(lambda: "digit 7, grid y=4 x=1" in view.readout.text(), timeout=3000)
    assert f"c_ij = {expected:.4f}" in view.readout.text() and f"0.1) = {departure:+.4f}" in view.readout.text()


def test_clicking_a_class_map_selects_that_digit(window, qtbot):
    view = window.routing_view
    pos = view.graphics.mapFromScene(view.class_map_scene_pos(3, 2, 2))
    qtbot.mouseClick(view.graphics.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert view.selected_digit() == 3
    settle(qtbot, window)
    inf = window.core.inference
    r = view.iteration.value() - 1
    shown = view.mosaic.image
    assert shown.shape == (27, 55)
    # the default scale shows each c_ij's departure from uniform, c_ij - 0.1
    np.testing.assert_allclose(shown[0:6, 0:6], inf.c[r, 0:36, 3].reshape(6, 6) - 0.1, rtol=1e-5, atol=1e-7)
    # one digit capsule for the window: the pose, the votes and the transforms sweep show 3 too
    pose, votes = window.pose_view, window.votes_view
    assert pose.selected_digit() == 3 and votes.digit_of(votes.panels[0]) == 3
    assert window.transform_view.capsule.currentData() == 3 and inf.prediction != 3
    from capsviz.model.inference import reconstruct

    expected = reconstruct(window.core.model, inf.v[-1][3], 3)
    np.testing.assert_allclose(pose.reconstruction, expected, atol=1e-6)
    window.docks["votes"].raise_()
    qtbot.waitUntil(lambda: votes.panels[0].j == 3, timeout=5000)
    # the default chosen on the pose view: every view back on the prediction
    pose.digit.setFocus()
    qtbot.keyClick(pose.digit, Qt.Key.Key_Home)
    assert view.selected_digit() == inf.prediction and view.digit.currentIndex() == 0
    assert votes.digit_of(votes.panels[0]) == inf.prediction and window.transform_view.capsule.currentIndex() == 0


def test_primary_capsule_length_maps(window, qtbot):
    view = window.lengths_view
    inf = window.core.inference
    image = view.primary_maps.image
    assert image.shape == (27, 55)
    np.testing.assert_allclose(image[7:13, 14:20], inf.u_lengths[10 * 36 : 11 * 36].reshape(6, 6), rtol=1e-6)
    scene = view.primary_view.mapViewToScene(QPointF(14 + 3.5, 7 + 1.5))  # type 10, y=1, x=3
    qtbot.mouseMove(view.primary.viewport(), view.primary.mapFromScene(scene))
    i = 10 * 36 + 1 * 6 + 3
    qtbot.waitUntil(lambda: f"capsule i={i} " in view.primary_title.text, timeout=3000)
    assert f"{inf.u_lengths[i]:.4f}" in view.primary_title.text
    # the mouse gone from the maps: their own title again
    QApplication.sendEvent(view.primary.viewport(), QEvent(QEvent.Type.Leave))
    assert view.primary_title.text == "primary capsule lengths ‖u_i‖<br>32 types × 6×6"


def test_perturbation_grid_and_png_export(window, qtbot, tmp_path):
    from PIL import Image

    pose = window.pose_view
    qtbot.mouseClick(pose.grid_button, Qt.MouseButton.LeftButton)
    dialog = pose.grid_dialog
    qtbot.addWidget(dialog)
    assert dialog.grid.shape == (16, 11, 28, 28)
    for d in (0, 7, 15):  # the middle column is the unperturbed reconstruction
        np.testing.assert_allclose(dialog.grid[d, 5], pose.reconstruction, atol=1e-5)
    assert not np.allclose(dialog.grid[3, 0], dialog.grid[3, 10])
    out = dialog.save_png(tmp_path / "grid.png", scale=1)
    with Image.open(out) as im:
        assert im.size == (11 * 30 - 2, 16 * 30 - 2) and im.mode == "L"


def test_a_file_named_without_its_suffix_gets_it_and_one_that_cannot_be_written_is_said_in_a_line(
    window, qtbot, tmp_path, monkeypatch
):
    from PIL import Image
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    answers, warnings = [], []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(answers.pop(0)), ""))
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text, *a: warnings.append((title, text)))
    qtbot.mouseClick(window.pose_view.grid_button, Qt.MouseButton.LeftButton)
    dialog = window.pose_view.grid_dialog
    qtbot.addWidget(dialog)
    save = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Save PNG…")
    answers.append(tmp_path / "grid_b")  # typed without ".png"
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    with Image.open(tmp_path / "grid_b.png") as im:
        assert im.format == "PNG" and im.mode == "L"
    answers.append(tmp_path / "run-0.5")  # a dot in the name is not a suffix
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    assert (tmp_path / "run-0.5.png").is_file()
    answers.append(tmp_path / "grid_b")
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    assert dialog.saved.text() == f"saved {tmp_path / 'grid_b.png'}" and warnings == []
    answers.append(tmp_path / "no such folder" / "grid.png")
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    missing = tmp_path / "no such folder" / "grid.png"
    assert warnings == [("Save grid", f"Could not write {missing}: No such file or directory")]
    # the routing trace: "trace_b" becomes trace_b.npz, and the status bar names that file
    from capsviz.gui.export import export_trace_dialog

    answers.append(tmp_path / "trace_b")
    export_trace_dialog(window, window.core.inference)
    assert (tmp_path / "trace_b.npz").is_file() and not (tmp_path / "trace_b").exists()
    assert window.statusBar().currentMessage() == f"saved {tmp_path / 'trace_b.npz'}"
    answers.append(tmp_path / "no such folder" / "trace.npz")
    export_trace_dialog(window, window.core.inference)
    assert warnings[-1] == (
        "Export routing trace",
        f"Could not write {tmp_path / 'no such folder' / 'trace.npz'}: No such file or directory",
    )
    # a checkpoint named without ".safetensors" gets it (the Open dialog lists only those)
    answers.append(tmp_path / "saved_noext")
    window.actions["save"].trigger()
    assert (tmp_path / "saved_noext.safetensors").is_file() and len(warnings) == 2


def test_length_scale_and_difference(window, qtbot):
    pose = window.pose_view
    base = pose.pose().copy()
    pose.scale.setFocus()
    qtbot.keyClick(pose.scale, Qt.Key.Key_Down)  # 1.00 -> 0.95
    np.testing.assert_allclose(pose.pose(), base * 0.95, rtol=1e-5)
    np.testing.assert_allclose(pose.diff_panel.image, pose.reconstruction - window.core.inference.input, atol=1e-6)
    assert pose.inferred_labels[2].text() == f"{window.core.inference.v[-1, window.core.inference.prediction, 2]:+.3f}"


def test_every_figure_exports_as_png_and_svg(window, qtbot, tmp_path):
    from PIL import Image

    window.docks["transforms"].show()
    window.docks["transforms"].raise_()  # its sweep is computed while it is shown
    qtbot.waitUntil(lambda: not window.transform_view.stale and window.transform_view.sweep is not None, timeout=30000)
    files = window.export_figures(tmp_path)
    # every plot a user sees in the single-digit explorer, by the file name it is exported to
    expected = {
        "model_input",
        "transform_sweep",
        "capsule_lengths",
        "lengths_per_iteration",
        "primary_capsule_lengths",
        "routing_class_maps",
        "routing_mosaic",
        "routed_mass",
        "routing_entropy",
        "routing_overlay",
        "votes_0",
        "pose_input",
        "pose_reconstruction",
        "pose_difference",
        "training_loss",
        "training_accuracy",
        "training_reconstructions",
    }  # fmt: skip  (the robustness curves once measured)
    assert {f.stem for f in files} == expected and len(files) == 2 * len(expected)
    assert window.figures_left_out() == ["the robustness curves are not measured: Measure in their dock"]
    for f in files:
        assert f.is_file() and f.stat().st_size > 200, f
        if f.suffix == ".png":
            with Image.open(f) as im:
                assert im.size[0] >= 640 and im.size[1] > 50, (f.name, im.size)  # small on screen, readable in a file
        else:
            assert f.read_text(errors="ignore").lstrip().startswith(("<?xml", "<svg"))
    # the votes' 1,152 dots as vector paths, not one embedded image each (10 MB)
    votes = (tmp_path / "votes_0.svg").read_text()
    assert (tmp_path / "votes_0.svg").stat().st_size < 1_000_000 and votes.count("<image") <= 2
    assert votes.count("<path") >= 1000


def test_an_export_right_after_a_new_input_waits_for_its_views(window, qtbot, tmp_path):
    window.sources.show_sample(3)  # and export at once, while its pass may be under way
    window.export_figures(tmp_path)
    inf = window.core.inference
    assert not window.core.inference_pending and inf is not None
    np.testing.assert_array_equal(inf.input, window.input_panel.current)
    np.testing.assert_array_equal(window.lengths_view.lengths, inf.lengths[-1])
    assert window.votes_view.panels[0].drawn is inf and window.pose_view.inference is inf


def test_an_export_holds_the_current_input_not_what_hidden_docks_drew_before(window, qtbot, tmp_path):
    """Behind a tab the votes wait to be drawn and the transforms sweep is not computed: an
    export draws the votes for the input of the moment, and leaves the sweep out, saying why.
    The votes come out at the size of the tab in front, not squashed."""
    from PIL import Image

    window.docks["pose"].raise_()  # the votes' tab goes behind
    window.docks["transforms"].hide()
    settle(qtbot, window)
    assert not window.dock_shown("votes")
    window.sources.show_random_sample()
    qtbot.waitUntil(lambda: window.core.inference is not None and not window.core.inference_pending, timeout=10000)
    settle(qtbot, window)
    panel = window.votes_view.panels[0]
    assert panel.drawn is not window.core.inference  # not drawn while hidden
    strip = panel.plot.size()  # behind a tab, Qt leaves the view a strip of the window
    files = window.export_figures(tmp_path)
    assert panel.drawn is window.core.inference and panel.j == window.core.inference.prediction
    assert "transform_sweep" not in {f.stem for f in files} and "votes_0" in {f.stem for f in files}
    # drawn as the tab in front would show it, not squashed into the strip; the strip given back
    with Image.open(tmp_path / "votes_0.png") as im:
        assert im.size[1] / im.size[0] > 0.5 > strip.height() / strip.width(), (im.size, strip)
    assert panel.plot.size() == strip
    window.docks["votes"].close()  # closed: laid out at a dock's size of its own for the export
    (tmp_path / "closed").mkdir()
    window.export_figures(tmp_path / "closed")
    with Image.open(tmp_path / "closed" / "votes_0.png") as im:
        assert im.size[1] / im.size[0] > 0.5, im.size
    assert window.figures_left_out()[0] == (
        "the transforms sweep is of an earlier input: show the Transforms dock to bring it up to date"
    )
    window.docks["transforms"].show()
    window.docks["transforms"].raise_()
    qtbot.waitUntil(lambda: not window.transform_view.stale, timeout=30000)
    assert "transform_sweep" in window.figures() and len(window.figures_left_out()) == 1  # robustness


def test_file_export_figures_writes_the_folder_chosen_or_says_why_it_cannot(window, qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    warnings = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: warnings.append(text))
    for folder in (blocked / "figures", Path("/proc/1"), tmp_path / "figures"):  # /proc/1: no file can go there
        window.statusBar().clearMessage()
        monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *args, folder=folder: str(folder))
        window.actions["export_figures"].trigger()
        if folder.name != "figures" or folder.parent != tmp_path:
            assert window.statusBar().currentMessage() == ""  # no "wrote ... files" for what was not written
    assert len(warnings) == 2 and all(w.startswith("Could not write the figures: ") for w in warnings)
    assert "a file" in warnings[0] and "cannot write files there: '/proc/1'" in warnings[1]
    assert QApplication.overrideCursor() is None  # the wait cursor is gone either way
    written = sorted((tmp_path / "figures").iterdir())
    assert len(written) >= 30 and {f.suffix for f in written} == {".png", ".svg"}
    assert window.statusBar().currentMessage().startswith(f"wrote {len(written)} files to {tmp_path / 'figures'}")


def test_predicted_entries_name_the_prediction(window, qtbot):
    """The first choice of every digit capsule choice (routing, pose, votes, transforms) names
    the answer it stands for, with its digit; a pair's votes the longest and second longest."""
    for name in ("votes", "transforms"):
        window.docks[name].show()
        window.docks[name].raise_()
        settle(qtbot, window)
    qtbot.waitUntil(lambda: window.transform_view.capsule.itemText(0) != "predicted", timeout=30000)
    choices = (window.routing_view.digit, window.pose_view.digit, window.votes_view.panels[0].digit)
    pred = window.core.inference.prediction
    assert pred == 7  # MNIST test image 0
    assert [choice.itemText(0) for choice in (*choices, window.transform_view.capsule)] == ["predicted (7)"] * 4
    window.input_panel.canvas.clear()
    qtbot.waitUntil(lambda: window.core.inference is None, timeout=3000)
    settle(qtbot, window)
    assert [choice.itemText(0) for choice in (*choices, window.transform_view.capsule)] == ["predicted"] * 4
    assert window.show_kind("multimnist")
    qtbot.waitUntil(lambda: (inf := window.core.inference) is not None and inf.reading is not None, timeout=60000)
    settle(qtbot, window)
    first, second = window.core.inference.reading.top2
    names = [panel.digit.itemText(0) for panel in window.votes_view.panels]
    assert names == [f"longest ({first})", f"second longest ({second})"]
    assert window.routing_view.digit.itemText(0) == f"predicted ({first})"


def test_a_result_draws_its_bars_first_and_the_routing_view_analyses_the_one_it_draws(qtbot, window, monkeypatch):
    """A result's length bars are an urgent part of their own: the lengths per iteration and
    the routing view follow in ordinary turns. The routing view derives its figures (class
    maps, routed mass, entropy, effect) when it draws, once for the newest of several results
    that came meanwhile, and they are those of that result."""
    import capsviz.gui.widgets.routing as routing_widgets
    from capsviz.data.mnist import load_test_or_sample
    from capsviz.model.analysis import mean_entropy
    from capsviz.model.inference import infer

    analysed = []
    maps = routing_widgets.iteration_maps
    monkeypatch.setattr(routing_widgets, "iteration_maps", lambda *a: analysed.append(1) or maps(*a))
    images = load_test_or_sample(mnist_root())[0].images[:3].astype(np.float32) / 255
    results = [infer(window.core.model, image) for image in images]
    for inference in results:  # three results before any turn of the scheduler
        window._show_inference(inference)
    assert analysed == []
    newest = results[-1]
    requested = window.scheduler.requested
    assert {"lengths/bars", "lengths/iterations", "routing/maps"} <= requested
    window.scheduler.draw_urgent()  # the turn after a result: the bars only
    np.testing.assert_allclose(window.lengths_view.lengths, newest.lengths[-1])
    assert analysed == [] and "lengths/iterations" in window.scheduler.requested
    window.scheduler.flush()  # the ordinary turns
    assert analysed == [1]  # once, for the newest
    view = window.routing_view
    np.testing.assert_allclose(view.mass, routed_mass(newest.u_lengths, newest.c), rtol=1e-6)
    np.testing.assert_allclose(view.entropy, mean_entropy(newest.c), rtol=1e-6)
    assert view.effect.last == (newest.prediction,)
    np.testing.assert_allclose(
        view.shown, class_maps(newest.u_lengths, newest.c[view.iteration.value() - 1]), rtol=1e-6
    )
    for k, curve in enumerate(window.lengths_view.iter_curves):
        np.testing.assert_allclose(curve.getData()[1], newest.lengths[:, k])
    assert view.mass is view.mass and analysed == [1]  # read again: not derived again


def test_views_keep_updating_under_a_stream_of_input(qtbot, window):
    """Input arriving faster than the views redraw (a stroke, the soak's driver): each
    turn of the redraw scheduler draws the newest result's prediction and length bars,
    even while newer input waits, and one of the other parts, in turn, so none starves.
    At the end all show the last input."""
    from PySide6.QtCore import QTimer

    views = {
        "primary": lambda: window.lengths_view.u_lengths,
        "routing": lambda: window.routing_view.inference,
        "pose": lambda: window.pose_view.v,
    }
    urgent = {"input/prediction", "lengths/bars", "lengths/cnn"}
    ordinary = lambda: window.scheduler.requested - urgent  # noqa: E731
    updated = {name: 0 for name in views}
    last = {name: get() for name, get in views.items()}
    results = set()
    turn = {"k": 0, "before": None, "shown": None}
    failed = []

    def next_turn() -> None:
        """Check the event-loop pass since the last call, then give a new input: one is always
        waiting for the thread."""
        try:
            if turn["before"] is not None:
                inf = window.core.inference
                results.add(id(inf))
                if not window.scheduler.requested & urgent:  # the newest result's prediction and bars are drawn
                    assert window.input_panel.prediction.text().startswith(str(inf.prediction))
                    np.testing.assert_allclose(window.lengths_view.lengths, inf.lengths[-1])
                if inf is turn["shown"] and turn["before"]:  # no new result this turn
                    assert len(ordinary()) >= len(turn["before"]) - 1  # at most one ordinary part per turn
                for name, get in views.items():
                    if get() is not last[name]:
                        updated[name] += 1
                        last[name] = get()
            if min(updated.values()) >= 2:
                driver.stop()
                return
            window.sources.show_sample(turn["k"] % 15)
            turn["k"] += 1
            turn["before"], turn["shown"] = ordinary(), window.core.inference
        except Exception as exc:  # raised by the test below, once the timer is stopped
            failed.append(exc)
            driver.stop()

    driver = QTimer(interval=0)  # one call per pass of the event loop
    driver.timeout.connect(next_turn)
    driver.start()
    try:
        qtbot.waitUntil(lambda: bool(failed) or not driver.isActive(), timeout=120000)  # bounds a hang only
    finally:
        driver.stop()
    if failed:
        raise failed[0]
    assert min(updated.values()) >= 2, updated  # each view redrew during the stream
    assert len(results) >= 3
    settle(qtbot, window)
    np.testing.assert_array_equal(window.core.inference.input, window.core.input.model_image)
    assert window.routing_view.inference is window.core.inference
    np.testing.assert_allclose(window.pose_view.v, window.core.inference.v[-1])


def test_the_forward_pass_runs_off_the_gui_thread_and_late_results_are_dropped(window, qtbot, monkeypatch):
    import capsviz.explorer as explorer

    threads = []
    release = threading.Event()  # holds the second pass until the canvas is cleared
    infer = explorer.infer

    def held_infer(*a):
        threads.append(threading.current_thread())
        if len(threads) == 2:
            assert release.wait(60)
        return infer(*a)

    monkeypatch.setattr(explorer, "infer", held_infer)
    window.sources.show_sample(3)
    assert window.core.inference_pending
    settle(qtbot, window)
    assert threads and all(t is not threading.main_thread() for t in threads)
    assert window.core.inference.prediction == window.sources.sample.labels[3]
    # the canvas is cleared while a pass for a digit runs: its result must not come back
    window.sources.show_sample(4)
    qtbot.waitUntil(lambda: len(threads) == 2, timeout=2000)
    window.input_panel.canvas.clear()
    assert window.core.inference is None and not window.core.inference_pending
    assert window.core.computing  # the pass for digit 4 is still running
    release.set()
    qtbot.waitUntil(lambda: not window.core.computing, timeout=3000)  # the pass for digit 4 has ended
    QApplication.processEvents()  # and its result, if it sent one, has come
    assert window.core.inference is None and window.input_panel.prediction.text() == "no digit"


def test_a_failed_forward_pass_is_shown_in_a_dialog(window, qtbot, monkeypatch):
    import capsviz.explorer as explorer

    def broken(*args):
        raise RuntimeError("out of memory in conv1")

    monkeypatch.setattr(explorer, "infer", broken)
    before = window.core.inference
    window.sources.show_sample(6)
    qtbot.waitUntil(lambda: window.errors.error_box is not None and window.errors.error_box.isVisible(), timeout=3000)
    assert "out of memory in conv1" in window.errors.error_box.text()
    assert window.core.inference is before and not window.core.inference_pending
    window.errors.error_box.close()


class PaintCounter(QObject):
    """Counts the paint events a widget receives."""

    def __init__(self, widget) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def test_plots_whose_range_follows_the_data_paint_once_per_update(qtbot, window):
    if QGuiApplication.platformName() != "offscreen":
        pytest.skip("exact paint counts: a windowing system may add expose paints")
    # pyqtgraph applies an auto-range while painting, which asks for another paint; the
    # views settle their ranges with the data instead (common.settle)
    rv = window.routing_view
    counters = {
        name: PaintCounter(plot.viewport())
        for name, plot in (
            ("mass", rv.mass_plot),
            ("entropy", rv.entropy_plot),
            ("lengths", window.lengths_view.iter_plot),
        )
    }
    for index in (1, 2, 3):
        before = rv.mass_plot.getViewBox().viewRange()[1]
        window.sources.show_sample(index)
        settle(qtbot, window)
        for _ in range(3):
            QApplication.processEvents()
        assert rv.mass_plot.getViewBox().viewRange()[1] != before  # the y range followed the data
    assert counters["mass"].count == 3 and counters["entropy"].count == 3
    window.routing_view.iterations.setValue(5)  # the x range of the iteration plots changes too
    settle(qtbot, window)
    for _ in range(3):
        QApplication.processEvents()
    assert counters["mass"].count == 4 and counters["lengths"].count == 4


def test_set_y_extent_rounds_out_to_steps_and_sets_a_range_only_when_it_changes(qtbot, monkeypatch):
    import pyqtgraph as pg

    from capsviz.gui.widgets.common import set_y_extent

    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    calls = []
    set_range = plot.setYRange
    monkeypatch.setattr(plot, "setYRange", lambda *a, **k: (calls.append(a), set_range(*a, **k)))
    assert set_y_extent(plot, -0.3, 0.9, 0.25, limits=(-1, 1)) == (-0.5, 1.0)
    low, high = plot.getViewBox().viewRange()[1]
    assert low <= -0.5 and high >= 1.0 and high - low < 1.6  # the range shown, with a little padding
    assert set_y_extent(plot, -0.26, 0.76, 0.25, limits=(-1, 1)) == (-0.5, 1.0)
    assert len(calls) == 1  # the same rounded range is not set again
    assert set_y_extent(plot, -0.2, 0.7, 0.25, limits=(-1, 1)) == (-0.25, 0.75)
    assert len(calls) == 2
    assert set_y_extent(plot, -3.0, 3.0, 0.25, limits=(-1, 1)) == (-1.0, 1.0)  # kept within the limits
    assert set_y_extent(plot, 0.3, 0.3, 0.25) == (0.25, 0.5)  # flat data: the step around it
    assert set_y_extent(plot, 1.0, 1.0, 0.25, limits=(-1, 1)) == (0.75, 1.0)  # flat at the top limit


def test_the_sweep_plot_paints_once_per_sweep_and_its_range_holds_the_data(window, qtbot, monkeypatch):
    if QGuiApplication.platformName() != "offscreen":
        pytest.skip("exact paint counts: a windowing system may add expose paints")
    view = window.transform_view
    window.docks["transforms"].show()
    window.docks["transforms"].raise_()
    window.sources.show_sample(0)
    qtbot.waitUntil(lambda: view.sweep is not None, timeout=5000)
    for _ in range(3):
        QApplication.processEvents()
    counter = PaintCounter(view.plot.viewport())
    shown = []
    set_sweep = view.set_sweep
    monkeypatch.setattr(view, "set_sweep", lambda *a: (shown.append(a), set_sweep(*a)))
    for index in (1, 2, 3, 4):  # other digits: other poses and lengths, and so other ranges
        window.sources.show_sample(index)
        qtbot.waitUntil(lambda index=index: len(shown) == index, timeout=5000)
        for _ in range(3):
            QApplication.processEvents()
        poses = view.sweep["poses"]
        low, high = view.plot.getViewBox().viewRange()[1]
        assert low <= poses.min() and max(poses.max(), view.sweep["lengths"].max()) <= high
        assert -1.05 <= low and high <= 1.05  # |v_jd| <= ‖v_j‖ < 1
    # one paint per sweep: the y axis keeps its width, and its range moves only in steps
    assert counter.count == len(shown) == 4


def test_a_weight_snapshot_for_the_current_input_is_shown_as_it_came(window, qtbot):
    from capsviz.explorer import WeightsSnapshot
    from capsviz.model.capsnet import CapsNet
    from capsviz.model.inference import infer

    core = window.core
    model = CapsNet().eval()  # untrained weights: other lengths than the shipped model's
    made = infer(model, core.input.model_image, core.input.iterations)
    with qtbot.waitSignal(core.inferenceReady, timeout=1000) as ready:
        core.apply_snapshot(WeightsSnapshot(model, made, core.input))
    assert ready.args == [made] and core.inference is made and core.model is model
    assert not core.inference_pending  # no second pass for it
    settle(qtbot, window)
    np.testing.assert_allclose(window.lengths_view.lengths, made.lengths[-1])


def test_a_weight_snapshot_keeps_the_cnn_probabilities_of_its_thread_unless_the_cnn_changed(window, qtbot):
    from capsviz.explorer import WeightsSnapshot
    from capsviz.model.baseline import baseline_probabilities
    from capsviz.model.capsnet import CapsNet
    from capsviz.model.inference import infer

    core = window.core
    cnn = core.baseline
    assert cnn is not None  # the shipped CNN is compared by default
    model = CapsNet().eval()
    made = infer(model, core.input.model_image, core.input.iterations)
    made.baseline = baseline_probabilities(cnn, made.input)  # as the training thread adds them
    kept = made.baseline
    core.apply_snapshot(WeightsSnapshot(model, made, core.input, cnn))
    assert core.inference is made and core.inference.baseline is kept
    # made while no CNN was compared (or another one): the CNN of the moment is asked here
    other = infer(model, core.input.model_image, core.input.iterations)
    core.apply_snapshot(WeightsSnapshot(model, other, core.input, None))
    np.testing.assert_allclose(other.baseline, baseline_probabilities(cnn, other.input))
    assert other.baseline.sum() == pytest.approx(1.0, abs=1e-5)


def test_a_weight_snapshot_for_an_older_input_is_inferred_again_with_its_weights(window, qtbot):
    from capsviz.explorer import WeightsSnapshot
    from capsviz.model.capsnet import CapsNet
    from capsviz.model.inference import infer

    core = window.core
    model = CapsNet().eval()
    older_input = core.input.replace(image=window.sources.sample.images[9].astype(np.float32) / 255)
    older = infer(model, older_input.model_image, 3)  # made for another input
    before = core.inference
    core.apply_snapshot(WeightsSnapshot(model, older, older_input))
    assert core.model is model and core.inference is before and core.inference_pending
    with qtbot.waitSignal(core.inferenceReady, timeout=3000) as ready:
        pass
    expected = infer(model, core.input.model_image, core.input.iterations)
    np.testing.assert_allclose(ready.args[0].lengths, expected.lengths, atol=1e-5)
    assert core.inference is ready.args[0] and core.inference is not older


def test_a_routing_control_change_while_views_are_pending_loses_none(qtbot, window, monkeypatch):
    # the turns wait (a long interval) until the control has changed, however fast the machine
    monkeypatch.setattr(window.scheduler, "interval", lambda: 60_000)
    window.sources.show_sample(3)  # its views follow in turns, once the forward pass is done
    qtbot.waitUntil(lambda: not window.core.inference_pending, timeout=10000)
    QApplication.processEvents()
    pending = window.scheduler.requested
    assert {"routing/maps", "routing/detail", "routing/curves", "pose/capsules"} <= pending
    shown = window.routing_view.shown
    window.routing_view.iteration.setValue(1)  # the routing parts are requested again: merged, none drawn now
    assert window.scheduler.requested == pending and window.routing_view.shown is shown
    monkeypatch.undo()
    window.scheduler.flush()
    assert not window.scheduler.requested
    inf = window.core.inference
    assert window.pose_view.prediction == inf.prediction
    np.testing.assert_allclose(window.pose_view.v, inf.v[-1])
    np.testing.assert_allclose(window.routing_view.shown, class_maps(inf.u_lengths, inf.c[0]), rtol=1e-6)


def test_the_play_button_says_what_a_click_does(window, qtbot):
    play = window.routing_view.play_button
    assert play.text() == "Play"
    qtbot.mouseClick(play, Qt.MouseButton.LeftButton)
    assert play.isChecked() and play.text() == "Stop" and window.routing_view._timer.isActive()
    qtbot.mouseClick(play, Qt.MouseButton.LeftButton)
    assert not play.isChecked() and play.text() == "Play" and not window.routing_view._timer.isActive()


def test_the_margin_lines_names_stand_in_front_of_the_bars(window, qtbot):
    """m⁺ and m⁻ where the bars at both ends reach past the lines: the bars do not hide their
    names."""
    import pyqtgraph as pg

    view = window.lengths_view
    lengths = np.full((3, 10), 0.05, np.float32)
    lengths[:, 9] = 0.95  # bar 9 through both lines
    view.set_lengths(lengths)
    view.set_baseline(np.full(10, 0.95, np.float32))
    settle(qtbot, window)
    lines = [item for item in view.bars_plot.plotItem.items if isinstance(item, pg.InfiniteLine)]
    assert sorted(line.label.toPlainText() for line in lines) == ["m⁺", "m⁻"]
    scene = view.bars_plot.scene()
    for line in lines:
        centre = line.label.mapToScene(line.label.boundingRect().center())
        under = [item for item in scene.items(centre) if item in (view.bars, view.cnn_bars)]
        assert under, line.label.toPlainText()  # the name lies over a bar ...
        drawn = [item for item in scene.items(centre) if item in (view.bars, view.cnn_bars, line.label)]
        assert drawn[0] is line.label, line.label.toPlainText()  # ... in front of it (items: top first)
        # ... on a dark ground of its own, its text in contrast with that ground (WCAG's 4.5:1)
        # whatever the bar's colour under it
        ground = line.label.fill
        assert ground.style() != Qt.BrushStyle.NoBrush and ground.color().alpha() >= 190
        assert ground.color().lightness() < 30
        assert contrast(line.label.color, pg.mkColor(0, 0, 0)) >= 4.5, line.label.color.getRgb()


def test_the_margin_lines_names_keep_off_a_long_last_bar(window, qtbot):
    """A 9 (bar 9 past both lines) has m⁺ and m⁻ named at the plot's left end, over no bar;
    a 0 has them at the right end."""
    view = window.lengths_view
    view.set_baseline(None)

    def names_at(answer: int) -> tuple[list[float], list[int]]:
        """The names' centres (x in classes) and the classes whose bars they cover."""
        lengths = np.full((3, 10), 0.05, np.float32)
        lengths[:, answer] = 0.95
        view.set_lengths(lengths)
        settle(qtbot, window)
        vb = view.bars_plot.plotItem.vb
        rects = [vb.mapSceneToView(line.label.mapRectToScene(line.label.boundingRect())).boundingRect()
                 for line in view.margin_lines]  # fmt: skip
        width = view.bars.opts["width"]  # each bar: (k - width / 2, 0) to (k + width / 2, its length)
        under = [k for r in rects for k in range(10) if r.intersects(QRectF(k - width / 2, 0, width, lengths[-1, k]))]
        return [r.center().x() for r in rects], under

    xs, under = names_at(9)
    assert all(x < 0.5 for x in xs) and under == [], xs  # left of bar 0's middle, over no bar
    xs, under = names_at(0)
    assert all(x > 8.5 for x in xs) and under == [], xs


def contrast(a, b) -> float:
    """WCAG 2 contrast ratio of two QColors (1 to 21)."""

    def luminance(c) -> float:
        channels = [x / 255 for x in c.getRgb()[:3]]
        r, g, b = (x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_training_panel_shows_the_models_reconstructions_of_test_digits(window, qtbot, tmp_path):
    import torch

    from capsviz.data.mnist import load_test_or_sample
    from capsviz.gui.widgets.training import gallery_mosaic

    panel = window.training_panel
    qtbot.waitUntil(lambda: panel.gallery.gallery is not None, timeout=10000)
    g = panel.gallery.gallery
    assert g is window.core.gallery and g.labels.tolist() == list(range(10))
    # the first test digit of each class, and the decoder on each one's longest capsule
    digits, _ = load_test_or_sample(window.core.data_root)
    first = [int(np.flatnonzero(digits.labels == k)[0]) for k in range(10)]
    np.testing.assert_allclose(g.images, digits.images[first] / np.float32(255), atol=1e-6)
    with torch.no_grad():
        out = window.core.model(torch.from_numpy(g.images)[:, None])
    assert g.answers.tolist() == out.lengths.argmax(1).tolist() == list(range(10))  # the shipped model reads all 10
    np.testing.assert_allclose(g.reconstructions, out.reconstruction[:, 0].numpy(), atol=1e-5)
    assert panel.gallery.title.text == "test digits: 10 of 10 right"
    np.testing.assert_array_equal(panel.gallery.item.image, gallery_mosaic(g))
    # hovering over the reconstruction of the 3 tells its label and answer
    view = panel.gallery.view
    point = view.mapViewToScene(QPointF(3 + 3 * 31 + 14, 3 + 31 + 14))  # gaps of 3 px around 28 px tiles
    panel.gallery.scene().sigMouseMoved.emit(point)
    assert panel.gallery.toolTip() == "test example: 3; read as 3"
    # a wrong answer: its reconstruction framed in orange in the gap around it, the others not
    labels = g.labels.copy()
    labels[4] = 9
    panel.gallery.show_gallery(dataclasses.replace(g, labels=labels))
    assert panel.gallery.title.text == "test digits: 9 of 10 right"
    mosaic, orange = panel.gallery.item.image, np.array([1.0, 0.6, 0.1], np.float32)
    framed = np.all(mosaic == orange, axis=-1)
    x, y = 3 + 4 * 31, 3 + 31  # the corner of the 4's reconstruction
    assert framed[y - 2, x - 2 : x + 30].all() and framed[y + 29, x - 2 : x + 30].all()
    assert framed[y - 2 : y + 30, x - 2].all() and framed[y - 2 : y + 30, x + 29].all()
    assert framed.sum() == 4 * 31 and not framed[y : y + 28, x : x + 28].any()
    panel.gallery.scene().sigMouseMoved.emit(view.mapViewToScene(QPointF(x + 14, y + 14)))
    assert panel.gallery.toolTip() == "test example: 9; read as 4, wrong"
    panel.gallery.show_gallery(g)
    # with no input, a model opened still gets its gallery
    from capsviz.train.checkpoint import save_checkpoint

    other = save_checkpoint(tmp_path / "other.safetensors", window.core.model)
    qtbot.mouseClick(window.input_panel.clear_button, Qt.MouseButton.LeftButton)
    assert window.core.inference is None and window.open_checkpoint(other)
    assert window.windowTitle() == "capsviz — Capsule Network explorer — other.safetensors"  # the model shown
    qtbot.waitUntil(lambda: panel.gallery.gallery is not g, timeout=10000)
    assert panel.gallery.gallery is window.core.gallery and window.core.info.path.name == "other.safetensors"
    np.testing.assert_allclose(panel.gallery.gallery.reconstructions, g.reconstructions, atol=1e-6)  # the same weights
    g = panel.gallery.gallery
    # a run from fresh weights shows the fresh model's reconstructions, made again as it learns
    if mnist_root() is None:
        return
    start_training(qtbot, window, train_subset=320)
    qtbot.waitUntil(lambda: panel.gallery.gallery is not g, timeout=10000)
    fresh = panel.gallery.gallery
    assert not np.allclose(fresh.reconstructions, g.reconstructions, atol=0.05)
    qtbot.waitUntil(lambda: panel.gallery.gallery is not fresh, timeout=20000)  # the next snapshot's
    assert panel.gallery.gallery is window.core.gallery


def test_tab_goes_round_the_controls_on_screen_and_only_those(window, qtbot):
    import pyqtgraph as pg

    from capsviz.gui.main_window import on_screen

    window.activateWindow()
    start = window.input_panel.clear_button
    start.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is start, timeout=3000)

    def round_of_tabs() -> list:
        visited = []
        for _ in range(400):
            qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
            widget = QApplication.focusWidget()
            if widget is start:
                return visited
            visited.append(widget)
        raise AssertionError(f"Tab did not come back to Clear; it stays in {type(widget).__name__}")

    visited = round_of_tabs()
    assert all(on_screen(w) for w in visited), [type(w).__name__ for w in visited if not on_screen(w)]
    docks = {name for name, dock in window.docks.items() for w in visited if dock.isAncestorOf(w)}
    # the controls of the docks shown, each pose slider one stop; no plot or image (they take no keys)
    assert {"pose", "routing", "training"} <= docks and not docks & {"votes", "browser", "robustness"}
    assert {s._slider for s in window.pose_view.sliders} <= set(visited)
    assert [type(w).__name__ for w in visited if isinstance(w, pg.GraphicsView)] == []
    # a dock raised over its neighbours' tabs takes its place in the round; the browser's matrix lets Tab through
    for name, control in (("browser", window.browser.matrix), ("robustness", window.robustness_view.measure_button)):
        window.docks[name].raise_()
        qtbot.waitUntil(lambda control=control: on_screen(control), timeout=3000)
        visited = round_of_tabs()
        assert control in visited and all(on_screen(w) for w in visited)

    def docks_in_turn(visited: list) -> list[str]:
        names = [next((n for n, d in window.docks.items() if d.isAncestorOf(w)), "") for w in visited]
        return [n for k, n in enumerate(names) if n and n not in names[:k]]

    # the pose view's neighbours in its tabs take its turn in the round, before the routing view's
    assert docks_in_turn(round_of_tabs())[:2] == ["pose", "routing"]
    window.docks["transforms"].raise_()
    qtbot.waitUntil(lambda: on_screen(window.transform_view), timeout=3000)
    assert docks_in_turn(round_of_tabs())[:2] == ["transforms", "routing"]
