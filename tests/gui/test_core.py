"""The explorer core without a window: its input value, inference, sweeps, model loading
and training session, followed through its signals."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import capsviz.gui.core as core_module
from capsviz.data.mnist import load_sample
from capsviz.data.transforms import InputTransform, apply_transform
from capsviz.explorer import ExplorerInput
from capsviz.gui.core import ExplorerCore
from capsviz.model import CapsNet
from capsviz.model.inference import infer
from capsviz.train.config import TrainConfig
from capsviz.train.events import BatchEvent, StoppedEvent
from tests.conftest import mnist_root

SAMPLE = load_sample()


def digit(index: int) -> np.ndarray:
    return SAMPLE.images[index].astype(np.float32) / 255


@pytest.fixture
def core(qtbot, shipped_checkpoint):
    c = ExplorerCore(CapsNet(), device="cpu")
    assert c.load_model(shipped_checkpoint)
    yield c
    c.close()


def test_the_input_is_a_value_replaced_never_changed():
    image = digit(0).copy()
    value = ExplorerInput(image)
    image[:] = 0  # the caller's array changes: the input does not
    assert value.image.sum() > 10 and value.model_image is value.image
    with pytest.raises(ValueError, match="read-only"):
        value.image[0, 0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.iterations = 1
    turned = value.replace(transform=InputTransform(rotation=30.0))
    assert turned is not value and turned.image is value.image and value.transform.is_identity()
    np.testing.assert_allclose(turned.model_image, apply_transform(value.image, InputTransform(rotation=30.0)))
    assert not turned.model_image.flags.writeable
    assert ExplorerInput().model_image is None


def test_each_change_of_the_input_brings_its_inference(core, qtbot):
    with qtbot.waitSignal(core.inferenceReady, timeout=5000) as ready:
        core.set_image(digit(0))
    inf = ready.args[0]
    assert core.inference is inf and inf.prediction == SAMPLE.labels[0] and not core.pending
    np.testing.assert_allclose(inf.c.sum(-1), 1.0, atol=1e-5)
    assert (inf.lengths < 1).all() and inf.iterations == 3
    with qtbot.waitSignal(core.inferenceReady, timeout=5000) as ready:
        core.set_iterations(5)
    assert ready.args[0].iterations == 5 and core.input.iterations == 5
    with pytest.raises(ValueError, match="at least 1"):
        core.set_iterations(0)
    assert core.input.iterations == 5
    with qtbot.waitSignal(core.inferenceReady, timeout=5000) as ready:
        core.set_transform(InputTransform(rotation=20.0))
    np.testing.assert_allclose(ready.args[0].input, core.input.model_image)
    with qtbot.waitSignal(core.inferenceReady, timeout=100) as ready:
        core.set_image(None)  # no input: said at once
    assert ready.args == [None] and core.inference is None and not core.pending


def test_a_sweep_gives_the_digit_capsules_along_the_transform(core, qtbot):
    core.set_image(digit(3))
    values = np.array([-20.0, 0.0, 20.0], np.float32)
    with qtbot.waitSignal(core.sweepReady, timeout=5000) as ready:
        core.request_sweep("rotation", values, [InputTransform(rotation=float(a)) for a in values])
    request, v, cnn = ready.args
    assert cnn is None  # no CNN to compare in this core
    assert request.name == "rotation" and v.shape == (3, 10, 16) and (np.linalg.norm(v, axis=-1) < 1).all()
    np.testing.assert_allclose(v[1], infer(core.model, digit(3), 3).v[-1], atol=1e-5)
    core.set_image(None)
    with qtbot.waitSignal(core.sweepReady, timeout=100) as ready:
        core.request_sweep("rotation", values, [InputTransform()] * 3)
    assert ready.args == [None, None, None]


def test_a_checkpoint_that_cannot_load_is_refused_and_the_model_stays(core, qtbot, tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a checkpoint at all")
    model, summary = core.model, core.model_summary
    with qtbot.waitSignal(core.error, timeout=1000) as error:
        assert not core.load_model(bad)
    title, message, _ = error.args
    assert title == "Cannot load checkpoint" and "bad.safetensors" in message
    assert message.endswith("The current model stays loaded.")
    assert core.model is model and core.model_summary == summary


def test_without_the_shipped_model_the_core_says_so(qtbot, monkeypatch, tmp_path):
    monkeypatch.setattr(core_module, "shipped_checkpoint", lambda: tmp_path / "missing.safetensors")
    core = ExplorerCore(CapsNet(), device="cpu")
    errors = []
    core.error.connect(lambda *args: errors.append(args))
    with qtbot.waitSignals([core.modelChanged, core.error], timeout=1000):
        assert not core.load_model(None)
    assert errors[0][0] == "No model" and "missing.safetensors" in errors[0][1]
    assert core.model_summary == "untrained (the shipped model is missing)" and core.info is None
    core.close()


def test_a_failed_pass_is_reported_once_and_ends_the_wait(core, qtbot, monkeypatch):
    import capsviz.explorer as explorer

    def broken(*args):
        raise RuntimeError("out of memory in conv1")

    monkeypatch.setattr(explorer, "infer", broken)
    errors = []
    core.error.connect(lambda *args: errors.append(args))
    for k in range(2):
        with qtbot.waitSignal(core.resultHandled, timeout=5000):
            core.set_image(digit(k))
    assert len(errors) == 1 and errors[0][0] == "Cannot classify the input"
    assert "out of memory in conv1" in errors[0][1] and "Traceback" in errors[0][2]
    assert not core.pending


def test_a_reading_that_will_not_come_ends_the_wait(core, qtbot, monkeypatch):
    """An input with a reading to follow (``reads`` and a setup): when its pass fails, or a
    training snapshot brings a newer inference with its reading, no reading is awaited."""
    from PySide6.QtWidgets import QApplication

    import capsviz.explorer as explorer
    from capsviz.explorer import WeightsSnapshot

    core.reads["mnist"] = lambda model, inference, setup: ("read", setup)
    with qtbot.waitSignal(core.readingReady, timeout=5000):
        core.set_image(digit(0), setup="first")
    qtbot.waitUntil(lambda: not core.pending, timeout=5000)
    assert core.inference.reading == ("read", "first")

    inference = infer(core.model, digit(1))
    inference.reading = ("read", "snapshot")
    monkeypatch.setattr(explorer, "infer", lambda *args: (_ for _ in ()).throw(RuntimeError("no pass")))
    core.set_image(digit(1), setup="second")  # its pass fails
    qtbot.waitUntil(lambda: not core.inference_pending, timeout=5000)
    assert not core.pending
    monkeypatch.undo()
    core.set_image(digit(1), setup="third")  # the snapshot below replaces what this pass would show
    core.apply_snapshot(WeightsSnapshot(core.model, inference, core.input))
    qtbot.waitUntil(lambda: not core.computing, timeout=5000)
    QApplication.processEvents()  # the dropped pass's result, posted as the thread went idle
    assert core.inference is inference and not core.pending


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_a_training_session_reports_its_run_and_replaces_the_model(core, qtbot):
    core.data_root = mnist_root()
    core.set_image(digit(0))
    shipped = core.model
    events = []
    core.trainingEvent.connect(events.append)
    config = TrainConfig(epochs=1, batch_size=16, train_subset=64, test_subset=32, device="cpu")
    with qtbot.waitSignal(core.modelChanged, timeout=2000), qtbot.waitSignal(core.trainingStarted) as started:
        checkpoint = core.start_training(config)
    assert started.args == [checkpoint] and checkpoint.name == "gui-training.safetensors"
    assert core.is_training and core.model is not shipped and core.model_summary == "training from scratch"
    assert core.start_training(config) is None  # one run at a time
    with qtbot.waitSignals([core.trainingFinished, core.modelChanged], timeout=120000):
        pass  # four steps and a test pass
    assert not core.is_training and checkpoint.is_file()
    assert any(isinstance(ev, BatchEvent) for ev in events)
    stopped = events[-1]
    assert isinstance(stopped, StoppedEvent) and stopped.finished and stopped.checkpoint == checkpoint
    assert core.model_summary.startswith("trained here — ")
    trained = infer(core.model, digit(0), 3)  # the views' model is the trained one's last snapshot
    np.testing.assert_allclose(core.inference.lengths, trained.lengths, atol=1e-5)


def test_cycles_holding_qt_objects_are_collected_on_the_gui_thread(core, qtbot):
    import gc
    import threading

    from PySide6.QtCore import QObject

    finalized = []

    class Cycle:
        def __init__(self) -> None:
            self.me, self.qt = self, QObject()

        def __del__(self) -> None:
            finalized.append(threading.current_thread())

    assert not gc.isenabled()  # no collection in whichever thread happens to allocate
    Cycle()
    # a worker thread allocating many times the first generation's threshold collects nothing
    kept = []
    worker = threading.Thread(target=lambda: kept.extend([] for _ in range(20 * gc.get_threshold()[0])))
    worker.start()
    worker.join()
    assert finalized == []
    qtbot.waitUntil(lambda: bool(finalized), timeout=5000)
    assert finalized == [threading.main_thread()]


def test_the_gui_thread_computes_on_one_thread_while_a_core_lives(qtbot):
    """The GUI thread's own torch work runs on GUI_INTRA_OP_THREADS (1) while a core lives;
    threads that start meanwhile get the default, and closing the core gives it back."""
    import torch

    from capsviz.runtime import GUI_INTRA_OP_THREADS, default_intra_op_threads

    before = default_intra_op_threads()
    torch.set_num_threads(2)  # this thread's count and the default: two, whatever the run's
    try:
        core = ExplorerCore(CapsNet(), device="cpu")
        assert GUI_INTRA_OP_THREADS == 1 and torch.get_num_threads() == 1
        assert default_intra_op_threads() == 2
        core.close()
        assert torch.get_num_threads() == 2 and default_intra_op_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("close", [False, True])
def test_a_closed_background_job_drops_what_it_still_sends(qtbot, close):
    """A view's background job closed with its window: the values it yielded, its end and
    its failure wait in the event queue, and none of them reaches the view, which may be
    deleted by then (its widgets would raise RuntimeError); a job left open delivers all."""
    import shiboken6
    from PySide6.QtCore import QObject, QThreadPool
    from PySide6.QtWidgets import QLabel

    from capsviz.gui.core import BackgroundJob

    def work():
        yield from range(50)
        raise ValueError("the job failed after its last value")

    parent, label, seen, failures = QObject(), QLabel(), [], []
    job = BackgroundJob(parent, lambda title, exc: failures.append(exc), "failure")
    job.run(work, yielded=lambda k: (seen.append(k), label.setText(str(k))), finished=lambda: label.setText("end"))
    assert QThreadPool.globalInstance().waitForDone(10_000)  # everything it sends is queued now
    if close:
        job.close()
        shiboken6.delete(label)  # the view goes before the queue is read
    qtbot.waitUntil(lambda: job.worker is None, timeout=5000)
    if close:
        assert seen == [] and failures == []
    else:
        assert seen == list(range(50)) and label.text() == "end"
        assert [str(exc) for exc in failures] == ["the job failed after its last value"]
