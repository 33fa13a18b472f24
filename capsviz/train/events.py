"""What a training run reports: the events :meth:`capsviz.train.loop.Trainer.run` yields,
the curves they draw (:class:`TrainingCurves`), and the error it raises when the loss stops
being finite; the lines the app says about a run. Imports no torch and no Qt."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from capsviz.texts import english


@dataclass
class BatchEvent:
    """After each optimizer step. Losses are this batch's (float, >= 0); ``train_accuracy``
    is in [0, 1] (MultiMNIST: both digits right); ``epoch`` counts from 0, ``step`` and
    ``batch`` from 1."""

    epoch: int
    step: int
    batch: int
    batches_per_epoch: int
    loss: float
    margin_loss: float
    reconstruction_loss: float
    train_accuracy: float
    lr: float
    images_per_s: float

    def progress(self, epochs: int, batch_size: int, tr=english) -> str:
        """One line on the run's progress, a run of ``epochs`` epochs of batches of ``batch_size``:
        epoch, batch, speed, learning rate and the minutes to go at this speed; ``tr``: see
        :mod:`capsviz.texts`."""
        eta = (self.batches_per_epoch * epochs - self.step) * batch_size / max(self.images_per_s, 1e-9)
        return tr(
            "epoch {epoch}, batch {batch}/{batches}, {rate:.0f} images/s, lr {lr:.2e}, {minutes:.1f} min to go",
            epoch=self.epoch + 1,
            batch=self.batch,
            batches=self.batches_per_epoch,
            rate=self.images_per_s,
            lr=self.lr,
            minutes=eta / 60,
        )


@dataclass
class EpochEvent:
    """At the end of an epoch, after the test evaluation and the autosave. ``epoch``: the
    completed epochs (from 1); ``test_accuracy`` in [0, 1], NaN without a test set."""

    epoch: int
    step: int
    test_accuracy: float
    test_images: int
    checkpoint: Path | None


@dataclass
class PausedEvent:
    """The run paused between two steps (``Trainer.pause_event`` set): ``step`` steps taken,
    in epoch ``epoch`` (from 0). It waits, holding its optimizer state and its place in the
    epoch, until the event is cleared (it goes on) or a stop is requested."""

    epoch: int
    step: int


@dataclass
class StoppedEvent:
    """Training ended (finished, or stopped on request); ``checkpoint`` is the autosave."""

    epoch: int
    step: int
    finished: bool
    checkpoint: Path | None

    def sentence(self, tr=english) -> str:
        """One line: finished or stopped at which step, and the file saved."""
        if self.finished:
            return tr("finished at step {k}; saved {path}", k=self.step, path=self.checkpoint)
        return tr("stopped at step {k}; saved {path}", k=self.step, path=self.checkpoint)


TrainEvent = BatchEvent | EpochEvent | PausedEvent | StoppedEvent
STEP_CURVES = ("step", "loss", "margin", "recon", "train_acc")  # TrainingCurves.batches, in BatchEvent's order


@dataclass
class TrainingCurves:
    """A run's loss and accuracy curves, gathered from its events (the Training panel draws
    them): ``batches`` per optimizer step, lists ``step``, ``loss``, ``margin`` (the margin
    loss), ``recon`` (the reconstruction loss times its weight in the total) and ``train_acc``;
    ``tests`` per epoch with a test evaluation, lists ``step`` and ``acc``."""

    batches: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in STEP_CURVES})
    tests: dict[str, list[float]] = field(default_factory=lambda: {"step": [], "acc": []})

    def add_batch(self, ev: BatchEvent, reconstruction_weight: float) -> None:
        """Add a step's figures; ``reconstruction_weight`` is the run's (its TrainConfig's)."""
        values = (ev.step, ev.loss, ev.margin_loss, reconstruction_weight * ev.reconstruction_loss, ev.train_accuracy)
        for name, value in zip(STEP_CURVES, values):
            self.batches[name].append(value)

    def add_epoch(self, ev: EpochEvent) -> None:
        """Add an epoch's test accuracy (none without test images)."""
        if ev.test_images:
            self.tests["step"].append(ev.step)
            self.tests["acc"].append(ev.test_accuracy)


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""
