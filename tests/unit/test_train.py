"""The training loop: learning, stopping, resuming, diverging."""

from __future__ import annotations

import threading

import pytest
import torch

from capsviz.data.mnist import MnistSplit, load_sample
from capsviz.model import CapsNetConfig
from capsviz.train.checkpoint import best_path, load_checkpoint, read_info
from capsviz.train.config import TrainConfig
from capsviz.train.events import BatchEvent, EpochEvent, PausedEvent, StoppedEvent, TrainingCurves, TrainingDiverged
from capsviz.train.loop import Trainer


@pytest.fixture(scope="module")
def sample() -> MnistSplit:
    return load_sample()


NET = CapsNetConfig(conv1_channels=16, primary_types=4, decoder_hidden=(32, 64))  # a small CapsNet: quick steps


def small(**kw) -> TrainConfig:
    base = dict(epochs=2, batch_size=16, train_subset=64, test_subset=64, device="cpu", seed=3)
    base.update(kw)
    return TrainConfig(**base)


def test_events_and_learning_rate_schedule(sample, tmp_path):
    t = Trainer(small(lr_decay_steps=2), sample, sample, checkpoint_path=tmp_path / "c.safetensors", model_config=NET)
    events = list(t.run())
    batches = [e for e in events if isinstance(e, BatchEvent)]
    epochs = [e for e in events if isinstance(e, EpochEvent)]
    assert [e.step for e in batches] == list(range(1, 9))
    assert len(epochs) == 2 and epochs[-1].test_images == 64
    assert isinstance(events[-1], StoppedEvent) and events[-1].finished
    assert batches[-1].lr == pytest.approx(1e-3 * 0.96 ** (7 / 2))  # the rate used by step 8
    info = load_checkpoint(tmp_path / "c.safetensors")[1]
    assert info.step == 8 and info.epoch == 2 and info.train_config["batch_size"] == 16


def test_loss_decreases_on_real_digits(sample):
    t = Trainer(small(epochs=6, train_subset=32, batch_size=32, max_shift=0), sample)
    losses = [e.loss for e in t.run() if isinstance(e, BatchEvent)]
    assert losses[-1] < 0.6 * losses[0]


def test_resume_is_exact(sample, tmp_path):
    full = Trainer(small(), sample, checkpoint_path=tmp_path / "full.safetensors", model_config=NET)
    list(full.run())

    part = Trainer(small(), sample, checkpoint_path=tmp_path / "part.safetensors", model_config=NET)
    for ev in part.run():
        if isinstance(ev, BatchEvent) and ev.step == 3:
            part.request_stop()
    assert part.step == 3
    resumed = Trainer.resume(tmp_path / "part.safetensors", sample)
    assert resumed.step == 3 and resumed.epoch == 0
    assert resumed.optimizer.param_groups[0]["lr"] == pytest.approx(part.optimizer.param_groups[0]["lr"])
    events = [e for e in resumed.run() if isinstance(e, BatchEvent)]
    assert [e.step for e in events] == [4, 5, 6, 7, 8]
    for (k, a), (_, b) in zip(full.model.state_dict().items(), resumed.model.state_dict().items()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6, msg=k)


def test_a_paused_run_waits_then_ends_with_the_weights_of_an_unpaused_one(sample):
    full = Trainer(small(), sample, model_config=NET)
    list(full.run())
    paused = Trainer(small(), sample, model_config=NET)
    run = paused.run()
    steps = []
    for ev in run:
        if isinstance(ev, BatchEvent):
            steps.append(ev.step)
            if ev.step == 3:  # mid-epoch (4 steps an epoch)
                paused.pause_event.set()
        if isinstance(ev, PausedEvent):
            break
    assert (ev.epoch, ev.step, paused.batch_in_epoch) == (0, 3, 3)
    waiter = threading.Thread(target=lambda: steps.append(next(run).step))
    waiter.start()
    waiter.join(0.3)
    assert waiter.is_alive() and paused.step == 3  # it waits: no step while paused
    paused.pause_event.clear()
    waiter.join(5)
    steps += [e.step for e in run if isinstance(e, BatchEvent)]
    assert steps == list(range(1, 9))
    for (k, a), (_, b) in zip(full.model.state_dict().items(), paused.model.state_dict().items(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6, msg=k)


def test_a_paused_run_stops_when_asked(sample, tmp_path):
    t = Trainer(small(), sample, checkpoint_path=tmp_path / "p.safetensors", model_config=NET)
    t.pause_event.set()
    run = t.run()
    assert isinstance(next(run), PausedEvent)
    t.request_stop()
    last = list(run)[-1]
    assert isinstance(last, StoppedEvent) and not last.finished and last.step == 0
    assert load_checkpoint(tmp_path / "p.safetensors")[1].step == 0


def test_a_stop_mid_step_ends_the_run_without_another_step(sample, tmp_path):
    t = Trainer(small(train_subset=128, epochs=1), sample, checkpoint_path=tmp_path / "s.safetensors", model_config=NET)
    in_step, stopped, step_at_stop = threading.Event(), threading.Event(), []

    def mid_forward(module, inputs, output):  # after PrimaryCaps, inside the forward pass of step 2
        if t.step == 1 and not in_step.is_set():
            in_step.set()
            assert stopped.wait(60)  # the stop comes from another thread while this step is in flight

    def stopper():
        assert in_step.wait(60)
        step_at_stop.append(t.step)
        t.request_stop()
        stopped.set()

    t.model.primary_caps.register_forward_hook(mid_forward)
    thread = threading.Thread(target=stopper)
    thread.start()
    events = list(t.run())
    thread.join(60)
    assert isinstance(events[-1], StoppedEvent) and not events[-1].finished
    # the step in flight is discarded: the run ends at the step it had completed
    assert step_at_stop == [1] and t.step == 1 and t.step < 8
    assert [e.step for e in events if isinstance(e, BatchEvent)] == [1]
    assert load_checkpoint(tmp_path / "s.safetensors")[1].step == t.step


def test_nan_loss_stops_and_keeps_last_checkpoint(sample, tmp_path):
    path = tmp_path / "n.safetensors"
    t = Trainer(small(), sample, checkpoint_path=path, model_config=NET)
    run = t.run()
    for ev in run:
        if isinstance(ev, EpochEvent):
            break
    saved = path.read_bytes()
    with torch.no_grad():
        t.model.conv1.weight.fill_(float("nan"))
    with pytest.raises(TrainingDiverged, match="diverged at step 5"):
        for _ in run:
            pass
    assert path.read_bytes() == saved


def test_config_validation():
    with pytest.raises(ValueError):
        TrainConfig(lr=-1)
    with pytest.raises(ValueError):
        TrainConfig(epochs=0)


def test_resume_refuses_batch_size_change_mid_epoch_but_allows_it_between_epochs(sample, tmp_path):
    path = tmp_path / "r.safetensors"
    t = Trainer(small(), sample, checkpoint_path=path, model_config=NET)
    for ev in t.run():
        if isinstance(ev, BatchEvent) and ev.step == 2:
            t.request_stop()
    with pytest.raises(ValueError, match="cannot change batch_size"):
        Trainer.resume(path, sample, overrides={"batch_size": 8})

    t = Trainer(small(epochs=1), sample, checkpoint_path=path, model_config=NET)
    list(t.run())  # one full epoch: 4 steps of 16
    resumed = Trainer.resume(path, sample, overrides={"batch_size": 32, "epochs": 2})
    steps = [e.step for e in resumed.run() if isinstance(e, BatchEvent)]
    assert steps == [5, 6]  # the second epoch in 2 batches of 32, the step count continues


def test_a_run_stopped_mid_epoch_resumes_only_on_as_many_processes(sample, tmp_path):
    """The rest of the epoch is where the stopped run's processes left it: resumed on another
    number of processes (the world attach sets) the run says how to go on exactly; a
    checkpoint stopped between epochs resumes on any number."""
    path = tmp_path / "w.safetensors"
    t = Trainer(small(), sample, checkpoint_path=path, model_config=NET)
    for ev in t.run():
        if isinstance(ev, BatchEvent) and ev.step == 2:
            t.request_stop()
    assert read_info(path).metadata["processes"] == "1"
    resumed = Trainer.resume(path, sample)
    resumed.world = 2  # as distributed.attach sets it under torchrun --nproc-per-node 2
    with pytest.raises(ValueError, match="batch 2 of epoch 1 of a run in one process; resume it without torchrun"):
        next(resumed.run())
    assert resumed.step == 2
    with pytest.raises(ValueError, match="cannot change pairs_per_epoch"):
        Trainer.resume(path, sample, overrides={"pairs_per_epoch": 512})
    list(Trainer(small(epochs=1), sample, checkpoint_path=path, model_config=NET).run())
    between = Trainer.resume(path, sample, overrides={"epochs": 2})
    assert between.resumed_processes is None


def test_a_stop_while_the_last_epoch_is_evaluated_resumes_to_evaluate_it(sample, tmp_path):
    """Ctrl+C during the test of the last epoch: the epoch is saved as trained but not yet
    evaluated, and resuming that checkpoint (what the stop line says to run) measures its
    test accuracy and keeps it as the best epoch; then there is nothing left to train."""
    from capsviz.commands.train import _nothing_to_train

    path = tmp_path / "e.safetensors"
    t = Trainer(small(epochs=1), sample, sample, checkpoint_path=path, model_config=NET)
    measure = t.evaluate

    def stopped_while_measuring():
        t.request_stop()  # the stop comes once the test has begun: its next forward pass ends it
        return measure()

    t.evaluate = stopped_while_measuring
    events = list(t.run())
    assert isinstance(events[-1], StoppedEvent) and not events[-1].finished
    assert not any(isinstance(e, EpochEvent) for e in events)
    info = read_info(path)
    assert info.metadata["completed_epochs"] == "1" and info.metadata["evaluated"] == "0"
    assert info.test_accuracy is None and not best_path(path).exists()
    resumed = Trainer.resume(path, sample, sample)
    assert not resumed.evaluated and _nothing_to_train(resumed, path) is None
    events = list(resumed.run())
    assert [type(e) for e in events] == [EpochEvent, StoppedEvent] and events[-1].finished
    assert resumed.step == t.step == 4  # no step trained again
    info = read_info(path)
    assert info.metadata["evaluated"] == "1" and info.test_accuracy == events[0].test_accuracy > 0
    assert read_info(best_path(path)).test_accuracy == info.test_accuracy
    assert "nothing to train" in _nothing_to_train(Trainer.resume(path, sample, sample), path)


def test_routing_iterations_become_the_models_default(sample, tmp_path):
    path = tmp_path / "it.safetensors"
    list(Trainer(small(epochs=1, routing_iterations=2), sample, checkpoint_path=path, model_config=NET).run())
    model, info, _ = load_checkpoint(path)
    assert info.model_config.routing_iterations == 2 and info.train_config["routing_iterations"] == 2


def test_weights_only_checkpoint_cannot_resume(sample, tmp_path):
    from capsviz.model import CapsNet
    from capsviz.train.checkpoint import CheckpointError, save_checkpoint

    path = save_checkpoint(tmp_path / "w.safetensors", CapsNet(NET))
    with pytest.raises(CheckpointError, match="holds no training state"):
        Trainer.resume(path, sample)


def test_bad_device_is_a_clear_error():
    from capsviz.runtime import select_device

    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        select_device("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="^device 'cuda' is not available here: no CUDA device$"):
            select_device("cuda")
    else:
        last = torch.cuda.device_count() - 1
        with pytest.raises(ValueError, match=f"the CUDA devices are cuda:0 to cuda:{last}$"):
            select_device(f"cuda:{last + 1}")


def test_continue_from_weights_keeps_step_and_epoch(sample, tmp_path):
    from capsviz.model import CapsNet
    from capsviz.train.checkpoint import save_checkpoint

    src = save_checkpoint(
        tmp_path / "w.safetensors",
        CapsNet(NET),
        train_config=small().to_dict(),
        epoch=2,
        step=8,
        extra_metadata={"completed_epochs": "2"},
    )
    t = Trainer.continue_from_weights(src, sample, overrides={"epochs": 3}, checkpoint_path=tmp_path / "o.safetensors")
    assert (t.step, t.epoch) == (8, 2)
    steps = [e.step for e in t.run() if isinstance(e, BatchEvent)]
    assert steps == [9, 10, 11, 12]
    assert load_checkpoint(tmp_path / "o.safetensors")[1].epoch == 3


def test_best_epoch_is_kept_beside_the_autosave(sample, tmp_path):
    from capsviz.train.checkpoint import best_path

    path = tmp_path / "run.safetensors"
    t = Trainer(small(epochs=3, lr=3e-3), sample, sample, checkpoint_path=path, model_config=NET)
    accs = [e.test_accuracy for e in t.run() if isinstance(e, EpochEvent)]
    best = load_checkpoint(best_path(path))[1]
    assert best_path(path).name == "run.best.safetensors"
    assert best.test_accuracy == pytest.approx(max(accs))
    assert best.epoch == 1 + accs.index(max(accs))


def test_a_new_run_over_an_old_one_drops_the_old_best_epoch_at_its_first_save(sample, tmp_path):
    from capsviz.train.checkpoint import best_path

    path = tmp_path / "run.safetensors"
    old = Trainer(small(epochs=1, lr=3e-3), sample, sample, checkpoint_path=path, model_config=NET)
    list(old.run())
    assert best_path(path).is_file()  # the earlier run's best epoch
    new = Trainer(small(epochs=2, seed=5), sample, sample, checkpoint_path=path, model_config=NET)
    for ev in new.run():
        if isinstance(ev, BatchEvent) and ev.step == 2:
            new.request_stop()  # stopped before its first epoch ends: an autosave, no best epoch
    assert not best_path(path).exists() and load_checkpoint(path)[1].step == 2
    resumed = Trainer.resume(path, sample, sample)
    assert resumed.best_test_accuracy is None
    list(resumed.run())
    best = read_info(best_path(path))
    assert best.train_config["seed"] == 5 and best.step in (4, 8)  # one of this run's two tested epochs


def test_the_curves_of_a_run_gather_its_steps_and_tested_epochs():
    curves = TrainingCurves()
    for step in (1, 2):
        curves.add_batch(BatchEvent(0, step, step, 2, 0.5 / step, 0.4 / step, 20.0, 0.9, 1e-3, 100.0), 0.0005)
    curves.add_epoch(EpochEvent(1, 2, 0.97, 2000, None))
    curves.add_epoch(EpochEvent(2, 4, float("nan"), 0, None))  # no test set: no point
    assert curves.batches["step"] == [1, 2] and curves.batches["loss"] == [0.5, 0.25]
    assert curves.batches["margin"] == [0.4, 0.2] and curves.batches["train_acc"] == [0.9, 0.9]
    assert curves.batches["recon"] == pytest.approx([0.01, 0.01])  # the weighted reconstruction loss
    assert curves.tests == {"step": [2], "acc": [0.97]}
    assert TrainingCurves().batches["step"] == []  # each its own lists


def test_the_events_say_the_progress_and_the_end_of_a_run():
    ev = BatchEvent(0, 10, 10, 100, 0.5, 0.4, 0.1, 0.9, 1e-3, 1000.0)
    assert ev.progress(2, 128) == "epoch 1, batch 10/100, 1000 images/s, lr 1.00e-03, 0.4 min to go"
    assert StoppedEvent(1, 200, True, "run.safetensors").sentence() == "finished at step 200; saved run.safetensors"
    assert StoppedEvent(0, 7, False, "b.safetensors").sentence() == "stopped at step 7; saved b.safetensors"
