"""Training loop as a generator of events; Qt-free, stoppable within a second.

:class:`Trainer` runs the recipe of a :class:`~capsviz.train.config.TrainConfig` (the
paper's, arXiv:1710.09829, Sec. 4) on the examples of a :class:`~capsviz.train.tasks.Task`
(MNIST digits or MultiMNIST pairs), for a CapsNet or a baseline CNN, and yields the events
of :mod:`capsviz.train.events`.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch

from capsviz.data.mnist import MnistSplit
from capsviz.model import CapsNet, CapsNetConfig
from capsviz.model.baseline import BaselineCNN, BaselineConfig, preset
from capsviz.runtime import select_device
from capsviz.texts import _
from capsviz.train.checkpoint import (
    CheckpointError,
    CheckpointInfo,
    best_path,
    check_destination,
    load_model,
    read_info,
    restore_optimizer,
    save_checkpoint,
)
from capsviz.train.config import TrainConfig
from capsviz.train.events import BatchEvent, EpochEvent, PausedEvent, StoppedEvent, TrainEvent, TrainingDiverged
from capsviz.train.precision import allow_tf32, autocast, grad_scaler, resolve_precision
from capsviz.train.tasks import Batch, task_for

PAUSE_POLL_S = 0.05  # how often a paused run looks whether to go on or stop


class _StopRequested(Exception):
    pass


def _training_position(path, info) -> tuple[dict, int, int]:
    """The saved recipe (as a dict), completed epochs and batch within the epoch of a checkpoint.

    Raises CheckpointError when the metadata does not parse.
    """
    try:
        saved = TrainConfig.from_dict(info.train_config).to_dict() if info.train_config else {}
        epoch = int(info.metadata.get("completed_epochs", int(info.epoch)))
        batch_in_epoch = int(info.metadata.get("batch_in_epoch", "0"))
    except (TypeError, ValueError) as exc:
        raise CheckpointError(_("{path}: bad training metadata: {exc}", path=path, exc=exc)) from None
    return saved, epoch, batch_in_epoch


def fresh_model(config: TrainConfig, model_config: CapsNetConfig | BaselineConfig) -> CapsNet | BaselineCNN:
    """A newly initialised CapsNet (or baseline CNN) of ``model_config``, its weights drawn
    from ``config.seed`` (the global RNG is left as it was), so a run from scratch starts
    from the same weights wherever it is started."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        return BaselineCNN(model_config) if isinstance(model_config, BaselineConfig) else CapsNet(model_config)


def adam(params, lr: float = 1e-3) -> torch.optim.Adam:
    """Adam (the paper's optimizer, Sec. 4) over ``params``, as one fused kernel per step where
    this torch has it for the parameters' device (CUDA; the CPU from torch 2.4), else torch's
    default implementation.

    Why: on the CPU the default updates each parameter in several passes; for CapsNet's
    8.2 M parameters a step takes 12.7 ms that way and 5.4 ms fused (2-core Xeon without
    AMX). The two agree to float rounding (7e-9 on the first step).
    """
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, fused=True)
    except RuntimeError:  # no fused kernel for this device in this torch
        return torch.optim.Adam(params, lr=lr)


def default_model_config(config: TrainConfig) -> CapsNetConfig | BaselineConfig:
    """The network ``config`` trains when none is given: the paper's CapsNet, or the baseline
    preset ``config.model``, for ``config.dataset``'s image size."""
    if config.model == "capsnet":
        return CapsNetConfig(image_size=config.image_size)
    return preset(config.model, config.image_size)


def check_resumable(info: CheckpointInfo) -> None:
    """Refuse a checkpoint that holds no training state to resume from (a weights-only file,
    such as the shipped one): ``CheckpointError`` naming ``info.path``."""
    state = ("completed_epochs", "optimizer_param_groups")
    if not info.train_config or any(key not in info.metadata for key in state):
        raise CheckpointError(
            _(
                "{path}: holds no training state (optimizer, position), so training cannot resume "
                "from it; use --init to continue from its weights",
                path=info.path,
            )
        )


@dataclass
class Trainer:
    """Owns the model, optimizer and position of one training run.

    Use :meth:`run` to iterate over events; :meth:`request_stop` (thread-safe) ends the
    run within about a second, discarding the unfinished step, and autosaves. Setting
    ``pause_event`` (thread-safe) pauses a single-process run after the step under way
    (:class:`PausedEvent`); clearing it goes on with the same run, as if never paused.

    Raises ``OSError`` (naming the file) when ``checkpoint_path`` cannot be written, before
    any step is taken (see :func:`~capsviz.train.checkpoint.check_destination`).
    """

    config: TrainConfig
    train_data: MnistSplit
    test_data: MnistSplit | None = None
    model: CapsNet | BaselineCNN | None = None
    checkpoint_path: Path | None = None
    model_config: CapsNetConfig | BaselineConfig | None = None  # default: default_model_config(config)
    stop_event: threading.Event = field(default_factory=threading.Event)
    pause_event: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        size = self.config.image_size
        if self.model_config is None:
            self.model_config = self.model.cfg if self.model is not None else default_model_config(self.config)
        if (self.model.cfg if self.model is not None else self.model_config).image_size != size:
            raise ValueError(
                _(
                    "a model for {image_size}x{image_size} images cannot train on {dataset} "
                    "({size}x{size}); give --dataset of the model",
                    image_size=self.model_config.image_size,
                    dataset=self.config.dataset,
                    size=size,
                )
            )
        self.checkpoint_path = check_destination(self.checkpoint_path) if self.checkpoint_path else None
        self.device = select_device(self.config.device)
        if self.model is None:
            self.model = fresh_model(self.config, self.model_config)
        self.is_cnn = isinstance(self.model, BaselineCNN)  # the baseline CNN, not a CapsNet
        if self.is_cnn != (self.config.model != "capsnet"):
            raise ValueError(
                _(
                    "the model is {kind}, the recipe says --model {model}",
                    kind=_("a baseline CNN") if self.is_cnn else _("a CapsNet"),
                    model=self.config.model,
                )
            )
        if not self.is_cnn:  # the iterations trained with become the model's default at inference
            self.model.cfg = dataclasses.replace(self.model.cfg, routing_iterations=self.config.routing_iterations)
        self.model.to(self.device)
        self.precision = resolve_precision(self.config.precision, self.device)  # what "auto" means here
        allow_tf32(self.device)
        self.scaler = grad_scaler(self.precision, self.device)
        self.optimizer = adam(self.model.parameters(), lr=self.config.lr)
        self.step = 0  # optimizer steps taken (sets the learning rate)
        self.epoch = 0  # completed epochs
        self.batch_in_epoch = 0  # batches of the current epoch already taken
        self.resumed_processes: int | None = None  # the processes of the run resumed in the middle of an epoch
        self.evaluated = True  # False from the end of an epoch's last step until its test accuracy is measured
        self.rng = torch.Generator().manual_seed(self.config.seed)
        self.last_test_accuracy: float | None = None
        self.best_test_accuracy: float | None = None  # best epoch so far, copied to best_path()
        self.last_test_images: int | None = None
        self._stop = self.stop_event
        self._lock = threading.Lock()
        self.task = task_for(self.config, self.train_data, self.test_data)  # the data set's examples and measure
        self.rank, self.world = 0, 1  # set by capsviz.train.distributed for data-parallel runs
        self.initialised_from: Path | str | None = None  # the file of the weights the run started from
        self.widened = False  # True when this run widened a smaller model's weights (step 0)

    # -- resume ---------------------------------------------------------------
    @classmethod
    def resume(
        cls,
        path: str | Path,
        train_data: MnistSplit,
        test_data: MnistSplit | None = None,
        overrides: dict | None = None,
        checkpoint_path: Path | None = None,
    ) -> Trainer:
        """Continue the run saved in ``path`` at the same step, learning rate and RNG state.

        Raises
        ------
        CheckpointError
            If the file is not a checkpoint with training state.
        """
        model, info, state = load_model(path)
        overrides = dict(overrides or {})
        check_resumable(info)
        saved, epoch, batch_in_epoch = _training_position(path, info)
        if batch_in_epoch:
            fixed = ("batch_size", "train_subset", "seed", "max_shift", "pairs_per_epoch")
            changed = [k for k in fixed if k in overrides and overrides[k] != saved[k]]
            if changed:
                raise ValueError(
                    _(
                        "cannot change {changed} when resuming in the middle of an epoch (this checkpoint "
                        "stopped at batch {batch_in_epoch} of epoch {epoch})",
                        changed=", ".join(changed),
                        batch_in_epoch=batch_in_epoch,
                        epoch=epoch + 1,
                    )
                )
        cfg = TrainConfig.from_dict({**saved, **overrides})
        trainer = cls(
            cfg,
            train_data,
            test_data,
            model=model,
            checkpoint_path=checkpoint_path or Path(path),
            model_config=info.model_config,
        )
        restore_optimizer(trainer.optimizer, info, state, trainer.model)
        trainer.step = info.step
        trainer.epoch = epoch
        trainer.batch_in_epoch = batch_in_epoch
        trainer.resumed_processes = int(info.metadata.get("processes", "1")) if batch_in_epoch else None
        trainer.evaluated = info.metadata.get("evaluated", "1") != "0"
        if "rng.torch" in state:
            try:
                trainer.rng.set_state(state["rng.torch"])
            except (RuntimeError, TypeError):
                raise CheckpointError(_("{path}: tensor 'rng.torch' is not a valid RNG state", path=path)) from None
        trainer.last_test_accuracy = info.test_accuracy
        trainer.last_test_images = info.test_images
        trainer.initialised_from = info.metadata.get("initialised_from")  # a widened run keeps its origin
        best = best_path(trainer.checkpoint_path)
        if best.is_file():
            try:
                trainer.best_test_accuracy = read_info(best).test_accuracy
            except CheckpointError:
                pass
        return trainer

    @classmethod
    def continue_from_weights(
        cls,
        path: str | Path,
        train_data: MnistSplit,
        test_data: MnistSplit | None = None,
        overrides: dict | None = None,
        checkpoint_path: Path | None = None,
    ) -> Trainer:
        """Continue training a weights-only checkpoint (such as the shipped one).

        The weights, the recipe, the step (hence the learning rate) and the completed
        epochs come from the checkpoint; Adam starts with fresh moments, because a
        weights-only file has none. ``overrides`` change the recipe.

        Raises
        ------
        CheckpointError
            If the file is not a capsviz checkpoint.
        """
        model, info, _state = load_model(path)
        saved, epoch, _batch = _training_position(path, info)
        overrides = dict(overrides or {})
        dataset = overrides.get("dataset", info.dataset)
        if dataset != info.dataset:
            if isinstance(model, BaselineCNN):
                raise CheckpointError(
                    _(
                        "{path}: a baseline CNN for {dataset}; it cannot be widened to {dataset2}",
                        path=path,
                        dataset=info.dataset,
                        dataset2=dataset,
                    )
                )
            cfg = TrainConfig(**overrides)  # overrides name the other dataset
            size = info.model_config.image_size
            if cfg.image_size < size:
                raise CheckpointError(
                    _(
                        "{path}: a model for {size}x{size} images cannot train on {dataset} "
                        "({image_size}x{image_size}); give --dataset {dataset2}, or --init an MNIST model "
                        "to widen it",
                        path=path,
                        size=size,
                        dataset=dataset,
                        image_size=cfg.image_size,
                        dataset2=info.dataset,
                    )
                )
            return cls._widened(model, info, cfg, train_data, test_data, checkpoint_path)
        cfg = TrainConfig.from_dict({**saved, **overrides})
        trainer = cls(
            cfg, train_data, test_data, model=model, checkpoint_path=checkpoint_path, model_config=info.model_config
        )
        trainer.step, trainer.epoch = info.step, epoch
        trainer.rng.manual_seed(cfg.seed * 7919 + epoch)
        trainer.initialised_from = info.metadata.get("initialised_from")  # a widened run keeps its origin
        return trainer

    @classmethod
    def _widened(cls, model, info, cfg, train_data, test_data, checkpoint_path) -> Trainer:
        """A run from step 0 on ``cfg.dataset`` whose model starts from the weights of
        ``model``, trained on another dataset with a smaller input
        (:func:`capsviz.model.transfer.widen_state`)."""
        from capsviz.model.transfer import widen_state

        target = dataclasses.replace(info.model_config, image_size=cfg.image_size)
        try:
            state = widen_state(model.state_dict(), info.model_config, target)
        except ValueError as exc:
            raise CheckpointError(_("{path}: {exc}", path=info.path, exc=exc)) from None
        wide = CapsNet(target)
        wide.load_state_dict(state)
        trainer = cls(cfg, train_data, test_data, model=wide, checkpoint_path=checkpoint_path)
        trainer.initialised_from = info.path
        trainer.widened = True
        return trainer

    # -- control --------------------------------------------------------------
    def request_stop(self) -> None:
        self._stop.set()

    @property
    def batches_per_epoch(self) -> int:
        return math.ceil(self.task.examples_per_epoch / (self.config.batch_size * self.world))

    def snapshot_state_dict(self) -> dict[str, torch.Tensor]:
        """A CPU copy of the current weights (thread-safe, between optimizer steps)."""
        with self._lock:
            return {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}

    def save(self, path: Path | None = None) -> Path | None:
        """Autosave model, optimizer, step and RNG state (atomic). A best-epoch file beside
        the run's checkpoint that is not this run's (no best epoch yet: another run's, which
        ``--overwrite`` replaces) goes with the first save, so that a resume never takes its
        accuracy for this run's best."""
        path = path or self.checkpoint_path
        if path is None:
            return None
        if self.best_test_accuracy is None and Path(path) == Path(self.checkpoint_path or ""):
            best_path(path).unlink(missing_ok=True)
        recipe = self.recipe_record()
        return save_checkpoint(
            path,
            self.model,
            train_config=recipe["train_config"],
            epoch=self.epoch + self.batch_in_epoch / self.batches_per_epoch,
            step=self.step,
            test_accuracy=self.last_test_accuracy,
            test_images=self.last_test_images,
            optimizer=self.optimizer,
            rng_state=self.rng.get_state(),
            extra_metadata={
                "completed_epochs": str(self.epoch),
                "batch_in_epoch": str(self.batch_in_epoch),
                "processes": str(self.world),  # the batches of an epoch taken: batch_in_epoch x this x batch_size
                "evaluated": "1" if self.evaluated else "0",  # the last completed epoch's test accuracy measured
                "dataset": self.config.dataset,
                **recipe["extra_metadata"],
            },
        )

    def recipe_record(self) -> dict:
        """The run's recipe as :func:`~capsviz.train.checkpoint.save_checkpoint` keywords, as its
        checkpoints hold it: ``train_config`` (with the precision used, not ``auto``) and
        ``extra_metadata`` naming the file of the weights it started from (``initialised_from``),
        if any."""
        origin = {"initialised_from": Path(self.initialised_from).name} if self.initialised_from else {}
        return {"train_config": {**self.config.to_dict(), "precision": self.precision}, "extra_metadata": origin}

    # -- the loop ---------------------------------------------------------------
    def _end_epoch(self) -> Iterator[EpochEvent]:
        """The epoch just completed: its test accuracy (rank 0), its autosave, a copy as the
        best epoch where it is the best so far; yields its :class:`EpochEvent`. A stop during
        the evaluation saves the epoch as not yet evaluated (:attr:`evaluated` False), and
        resuming that checkpoint evaluates it first."""
        self.evaluated = False
        self.last_test_accuracy = self.last_test_images = None
        if self.test_data is not None and self.rank == 0:
            self.last_test_accuracy, self.last_test_images = self.evaluate()
        self.evaluated = True
        path = self.save()
        if (
            path is not None
            and self.last_test_accuracy is not None
            and (self.best_test_accuracy is None or self.last_test_accuracy > self.best_test_accuracy)
        ):
            self.best_test_accuracy = self.last_test_accuracy
            shutil.copyfile(path, best_path(path))
        yield EpochEvent(
            self.epoch,
            self.step,
            float("nan") if self.last_test_accuracy is None else self.last_test_accuracy,
            self.last_test_images or 0,
            path,
        )

    def _check_stop(self, *args) -> None:
        if self._stop.is_set() and self.world == 1:
            raise _StopRequested

    def _agreed(self, flag: bool) -> bool:
        """``flag`` of any rank (True on one rank makes it True on all); ``flag`` itself in a
        single process. Data-parallel ranks stop, and fail, at the same step."""
        if self.world == 1:
            return flag
        value = torch.tensor([1.0 if flag else 0.0])
        torch.distributed.all_reduce(value, op=torch.distributed.ReduceOp.MAX)
        return bool(value.item())

    def _batch_generator(self, epoch: int, batch: int) -> None:
        """Data-parallel runs: reseed the augmentation RNG of this rank for one batch from
        (seed, epoch, batch, rank), so a resumed run continues exactly on any rank without the
        other ranks' RNG states in the checkpoint."""
        if self.world > 1:
            self.rng.manual_seed(((self.config.seed * 1_000_003 + epoch) * 1_000_003 + batch) * 1009 + self.rank)

    def _train_step(self, batch: Batch) -> tuple[float, float, float, float]:
        """One optimizer step on ``batch`` (:class:`~capsviz.train.tasks.Batch`, uint8 images).
        Returns (loss, margin loss, reconstruction SSE, accuracy) of the batch; a baseline CNN
        reports its (binary) cross entropy as the margin loss and 0 reconstruction."""
        cfg = self.config
        x = batch.images.to(self.device, non_blocking=True).unsqueeze(1).float().div_(255.0)
        y = batch.labels.to(self.device)
        lr = cfg.lr_at(self.step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        if self.is_cnn:  # cross entropy (MNIST) or binary cross entropy on both digits (MultiMNIST)
            # dropout draws from a generator seeded by (seed, step, rank): a resumed run continues exactly
            cpu = self.device.type == "cpu"
            with (
                torch.random.fork_rng(devices=[] if cpu else [self.device.index or 0], device_type=self.device.type),
                autocast(self.precision, self.device),
            ):
                torch.manual_seed((cfg.seed * 1_000_003 + self.step) * 1009 + self.rank)
                logits = self.network(x)
            loss = self.model.loss(logits, y)
            margin, recon, scores = loss.detach(), torch.zeros(()), logits.detach().float()
        else:
            with autocast(self.precision, self.device):  # reduced-precision products; the losses stay float32
                out = self.network(x, routing_iterations=cfg.routing_iterations, target=y)
            scores = out.lengths.detach()
            loss, margin, recon = self.task.loss(out, x, y, batch)
        if self._agreed(not torch.isfinite(loss)):
            raise TrainingDiverged(
                f"training diverged at step {self.step + 1}: loss is {loss.item()} "
                f"(margin {margin.item()}, reconstruction {recon.item()}); lower the learning rate"
            )
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()  # the scaler passes the loss through unless fp16
        self._check_stop()
        with self._lock:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        return loss.item(), margin.item(), recon.item(), self.task.accuracy(scores, y)

    @property
    def network(self) -> torch.nn.Module:
        """What a training step calls: the model, or its DistributedDataParallel wrapper."""
        return getattr(self, "ddp", None) or self.model

    def evaluate(self) -> tuple[float, int]:
        """Test accuracy in [0, 1] and the number of test examples used (the task's measure:
        MNIST digits right, or MultiMNIST test pairs with both digits right)."""
        assert self.test_data is not None
        result = self.task.evaluate(self.model, self.config.routing_iterations, self.device, self._check_stop)
        self.model.train()
        return result

    def run(self) -> Iterator[TrainEvent]:
        """Train until ``config.epochs`` epochs are complete or a stop is requested.

        Yields :class:`BatchEvent` after every step, :class:`EpochEvent` after every
        epoch and one final :class:`StoppedEvent`.

        Raises
        ------
        TrainingDiverged
            If the loss is NaN or infinite (nothing is saved over the last checkpoint).
        ValueError
            If it resumes a run stopped in the middle of an epoch on another number of
            processes: the rest of that epoch is where the first run's processes left it.
        """
        cfg = self.config
        if self.resumed_processes is not None and self.resumed_processes != self.world:
            where = dict(batch=self.batch_in_epoch, epoch=self.epoch + 1, n=self.resumed_processes)
            if self.resumed_processes == 1:
                message = _(
                    "this checkpoint stopped at batch {batch} of epoch {epoch} of a run in one process; "
                    "resume it without torchrun to go on exactly",
                    **where,
                )
            else:
                message = _(
                    "this checkpoint stopped at batch {batch} of epoch {epoch} of a run on {n} processes; "
                    "resume it with torchrun --nproc-per-node {n} to go on exactly",
                    **where,
                )
            raise ValueError(message)
        hooks = []
        if self.world == 1:  # stop inside a step; data-parallel ranks stop together between steps
            hooks = [m.register_forward_pre_hook(self._check_stop) for m in self.model.children()]
            hooks += [m.register_full_backward_pre_hook(self._check_stop) for m in self.model.children()]
        self.model.train()
        finished = False
        try:
            if not self.evaluated:  # resumed from a stop during the evaluation of its last epoch
                yield from self._end_epoch()
            while self.epoch < cfg.epochs:
                examples = self.task.epoch(self.epoch)
                bpe = self.batches_per_epoch
                while self.batch_in_epoch < bpe:
                    batch = self.batch_in_epoch
                    # this rank's share of the global batch (all of it in a single process)
                    start = batch * cfg.batch_size * self.world + self.rank * cfg.batch_size
                    idx = examples.order[start : start + cfg.batch_size]
                    if self.pause_event.is_set() and self.world == 1 and not self._stop.is_set():
                        yield PausedEvent(self.epoch, self.step)
                        while self.pause_event.is_set() and not self._stop.is_set():
                            time.sleep(PAUSE_POLL_S)
                    if self._agreed(self._stop.is_set()):
                        raise _StopRequested
                    t0 = time.perf_counter()
                    self._batch_generator(self.epoch, batch)
                    rng_before = self.rng.get_state()
                    try:
                        loss, margin, recon, acc = self._train_step(examples.take(idx, self.rng))
                    except _StopRequested:
                        self.rng.set_state(rng_before)  # the unfinished step is discarded
                        raise
                    self.step += 1
                    self.batch_in_epoch += 1
                    dt = time.perf_counter() - t0
                    yield BatchEvent(
                        self.epoch,
                        self.step,
                        batch + 1,
                        bpe,
                        loss,
                        margin,
                        recon,
                        acc,
                        cfg.lr_at(self.step - 1),
                        len(idx) * self.world / dt,
                    )
                    self._check_stop()
                self.epoch += 1
                self.batch_in_epoch = 0
                yield from self._end_epoch()
            finished = True
        except _StopRequested:
            pass
        finally:
            for h in hooks:
                h.remove()
            self.model.eval()
        path = (
            self.save()
            if not finished or self.checkpoint_path and not self.checkpoint_path.exists()
            else (self.checkpoint_path)
        )
        yield StoppedEvent(self.epoch, self.step, finished, path)
