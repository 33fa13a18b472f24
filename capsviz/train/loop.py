"""Training loop as a generator of events; Qt-free, stoppable within a second.

The recipe is the paper's (arXiv:1710.09829, Sec. 4, and the official code): Adam at
lr 1e-3 decayed by 0.96 every 2000 steps (smoothly), batch 128, random shifts of up
to 2 px with zero padding, margin loss + 0.0005 x per-image SSE reconstruction loss,
3 routing iterations.
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

import numpy as np
import torch
from torchvision.transforms import v2

from capsviz.data.datasets import IMAGE_SIZE, check_dataset
from capsviz.data.mnist import MnistSplit
from capsviz.data.multimnist import PAIRS_PER_EPOCH, MultiMnistPairs, fixed_test_pairs, training_pairs
from capsviz.model import CapsNet, CapsNetConfig, total_loss
from capsviz.model.baseline import PRESETS, BaselineCNN, BaselineConfig, preset
from capsviz.model.losses import two_digit_loss
from capsviz.train.checkpoint import (
    CheckpointError,
    best_path,
    check_destination,
    load_model,
    read_info,
    restore_optimizer,
    save_checkpoint,
)
from capsviz.train.precision import allow_tf32, autocast, check_precision, grad_scaler, resolve_precision


@dataclass(frozen=True)
class Limit:
    """The allowed range of a numeric setting: ``low`` <= x (or < x when ``low_open``) <= ``high``.

    ``high`` None: no upper bound. ``kind`` is ``int`` or ``float``.
    """

    kind: type
    low: float
    high: float | None = None
    low_open: bool = False

    def describe(self) -> str:
        """E.g. ``an integer >= 1``, ``a number > 0``, ``a number in (0, 1]``."""
        noun = "an integer" if self.kind is int else "a number"
        if self.high is None:
            return f"{noun} {'>' if self.low_open else '>='} {self.low:g}"
        return f"{noun} in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"

    def problem(self, value) -> str | None:
        """None when ``value`` is allowed, else what is wrong, e.g. ``must be an integer >= 1 (got 0)``."""
        ok = (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
            and (self.kind is float or float(value).is_integer())
        )
        if ok:
            ok = (value > self.low if self.low_open else value >= self.low) and (
                self.high is None or value <= self.high
            )
        return None if ok else f"must be {self.describe()} (got {value!r})"


# The range of every numeric training setting (the CLI checks its flags against these).
TRAIN_LIMITS = {
    "epochs": Limit(int, 1),
    "batch_size": Limit(int, 1),
    "lr": Limit(float, 0, low_open=True),
    "lr_decay": Limit(float, 0, 1, low_open=True),
    "lr_decay_steps": Limit(int, 1),
    "routing_iterations": Limit(int, 1, 100),
    "reconstruction_weight": Limit(float, 0),
    "max_shift": Limit(int, 0, 27),
    "seed": Limit(int, 0, 2**31 - 1),
    "train_subset": Limit(int, 0),
    "test_subset": Limit(int, 0),
    "pairs_per_epoch": Limit(int, 1),
}


MODELS = ("capsnet", *PRESETS)  # what ``capsviz train --model`` trains


@dataclass
class TrainConfig:
    """Training settings; the names are the CLI flags and the checkpoint metadata keys.

    epochs : int, >= 1          lr : float, Adam learning rate
    batch_size : int, >= 1      lr_decay : float, factor per ``lr_decay_steps`` steps
    routing_iterations : int    reconstruction_weight : float (0.0005 in the paper)
    max_shift : int, pixels     seed : int
    device : "auto", "cpu", "cuda", "cuda:N" or "mps"
    train_subset, test_subset : int, use only the first N images (0 = all)
    precision : "auto", "fp32", "bf16" or "fp16" (:mod:`capsviz.train.precision`)
    model : "capsnet", or a baseline CNN of :data:`capsviz.model.baseline.PRESETS`
        (``baseline``: the paper's, ``baseline-small``: the CapsNet's size), trained with the
        same data, shifts and Adam schedule (cross entropy on MNIST, binary cross entropy on
        MultiMNIST); routing and reconstruction settings do not apply to it
    dataset : "mnist" or "multimnist" (:mod:`capsviz.data.datasets`); MultiMNIST draws
        ``pairs_per_epoch`` fresh pairs of the training digits every epoch and evaluates on
        the fixed test pairs (``test_subset`` of them); ``max_shift`` is MNIST's, the
        pairs carry their own shifts
    """

    epochs: int = 10
    batch_size: int = 128
    lr: float = 1e-3
    lr_decay: float = 0.96
    lr_decay_steps: int = 2000
    routing_iterations: int = 3
    reconstruction_weight: float = 0.0005
    max_shift: int = 2
    seed: int = 0
    device: str = "auto"
    train_subset: int = 0
    test_subset: int = 0
    precision: str = "auto"
    dataset: str = "mnist"
    pairs_per_epoch: int = PAIRS_PER_EPOCH
    model: str = "capsnet"

    def __post_init__(self) -> None:
        for name, limit in TRAIN_LIMITS.items():
            problem = limit.problem(getattr(self, name))
            if problem:
                raise ValueError(f"{name} {problem}")
        check_precision(self.precision)
        check_dataset(self.dataset)
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)} (got {self.model!r})")

    @property
    def image_size(self) -> int:
        """Side of the model's input image for this dataset (28 or 36)."""
        return IMAGE_SIZE[self.dataset]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def lr_at(self, step: int) -> float:
        """Learning rate at a global step: lr * lr_decay ** (step / lr_decay_steps)."""
        return self.lr * self.lr_decay ** (step / self.lr_decay_steps)


def select_device(name: str | None = "auto") -> torch.device:
    """``auto`` (or None) picks CUDA, then Apple MPS, then the CPU.

    Raises
    ------
    ValueError
        If ``name`` is not a device name or that device is not available here.
    """
    if name in (None, "", "auto"):
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise ValueError(f"unknown device {name!r}; use auto, cpu, cuda, cuda:N or mps") from None
    if device.type == "cuda" and (not torch.cuda.is_available() or (device.index or 0) >= torch.cuda.device_count()):
        raise ValueError(f"device {name!r} is not available here (CUDA devices: {torch.cuda.device_count()})")
    if device.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError("device 'mps' is not available here")
    if device.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"unsupported device {name!r}; use auto, cpu, cuda, cuda:N or mps")
    return device


def available_devices() -> list[str]:
    """Device names that work here, ``auto`` first."""
    names = ["auto", "cpu"]
    if torch.cuda.is_available():
        names += [f"cuda:{k}" for k in range(torch.cuda.device_count())]
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        names.append("mps")
    return names


@dataclass
class BatchEvent:
    """After each optimizer step. Losses are this batch's; accuracy is in [0, 1]."""

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


@dataclass
class EpochEvent:
    """At the end of an epoch, after the test evaluation and the autosave."""

    epoch: int
    step: int
    test_accuracy: float
    test_images: int
    checkpoint: Path | None


@dataclass
class StoppedEvent:
    """Training ended (finished, or stopped on request); ``checkpoint`` is the autosave."""

    epoch: int
    step: int
    finished: bool
    checkpoint: Path | None


TrainEvent = BatchEvent | EpochEvent | StoppedEvent


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


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
        raise CheckpointError(f"{path}: bad training metadata: {exc}") from None
    return saved, epoch, batch_in_epoch


def fresh_model(config: TrainConfig, model_config: CapsNetConfig | BaselineConfig) -> CapsNet | BaselineCNN:
    """A newly initialised CapsNet (or baseline CNN) of ``model_config``, its weights drawn
    from ``config.seed`` (the global RNG is left as it was), so a run from scratch starts
    from the same weights wherever it is started."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        return BaselineCNN(model_config) if isinstance(model_config, BaselineConfig) else CapsNet(model_config)


def default_model_config(config: TrainConfig) -> CapsNetConfig | BaselineConfig:
    """The network ``config`` trains when none is given: the paper's CapsNet, or the baseline
    preset ``config.model``, for ``config.dataset``'s image size."""
    if config.model == "capsnet":
        return CapsNetConfig(image_size=config.image_size)
    return preset(config.model, config.image_size)


@dataclass
class Trainer:
    """Owns the model, optimizer and position of one training run.

    Use :meth:`run` to iterate over events; :meth:`request_stop` (thread-safe) ends the
    run within about a second, discarding the unfinished step, and autosaves.

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

    def __post_init__(self) -> None:
        size = self.config.image_size
        if self.model_config is None:
            self.model_config = self.model.cfg if self.model is not None else default_model_config(self.config)
        if (self.model.cfg if self.model is not None else self.model_config).image_size != size:
            raise ValueError(
                f"a model for {self.model_config.image_size}x{self.model_config.image_size} images cannot train on "
                f"{self.config.dataset} ({size}x{size}); give --dataset of the model"
            )
        self.checkpoint_path = check_destination(self.checkpoint_path) if self.checkpoint_path else None
        self.device = select_device(self.config.device)
        if self.model is None:
            self.model = fresh_model(self.config, self.model_config)
        self.baseline = isinstance(self.model, BaselineCNN)
        if self.baseline != (self.config.model != "capsnet"):
            raise ValueError(
                f"the model is {'a baseline CNN' if self.baseline else 'a CapsNet'}, the recipe says "
                f"--model {self.config.model}"
            )
        if not self.baseline:  # the iterations trained with become the model's default at inference
            self.model.cfg = dataclasses.replace(self.model.cfg, routing_iterations=self.config.routing_iterations)
        self.model.to(self.device)
        self.precision = resolve_precision(self.config.precision, self.device)  # what "auto" means here
        allow_tf32(self.device)
        self.scaler = grad_scaler(self.precision, self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.config.lr)
        self.step = 0  # optimizer steps taken (sets the learning rate)
        self.epoch = 0  # completed epochs
        self.batch_in_epoch = 0  # batches of the current epoch already taken
        self.rng = torch.Generator().manual_seed(self.config.seed)
        self.last_test_accuracy: float | None = None
        self.best_test_accuracy: float | None = None  # best epoch so far, copied to best_path()
        self.last_test_images: int | None = None
        self._stop = self.stop_event
        self._lock = threading.Lock()
        n = len(self.train_data)
        if self.config.train_subset:
            n = min(n, self.config.train_subset)
        self.n_train = n  # training images used (MultiMNIST: the digits its pairs are drawn from)
        self.multi = self.config.dataset == "multimnist"
        self.n_examples = self.config.pairs_per_epoch if self.multi else n  # per epoch
        self.shift = (
            v2.RandomCrop(size, padding=self.config.max_shift) if self.config.max_shift and not self.multi else None
        )
        self._test_pairs: MultiMnistPairs | None = None
        self.rank, self.world = 0, 1  # set by capsviz.train.distributed for data-parallel runs
        self.initialised_from: Path | str | None = None  # the smaller model a widened run started from
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
        if (
            not info.train_config
            or "completed_epochs" not in info.metadata
            or ("optimizer_param_groups" not in info.metadata)
        ):
            raise CheckpointError(
                f"{path}: holds no training state (optimizer, position), so training cannot "
                "resume from it; use --init to continue from its weights"
            )
        saved, epoch, batch_in_epoch = _training_position(path, info)
        if batch_in_epoch:
            fixed = ("batch_size", "train_subset", "seed", "max_shift")
            changed = [k for k in fixed if k in overrides and overrides[k] != saved[k]]
            if changed:
                raise ValueError(
                    f"cannot change {', '.join(changed)} when resuming in the middle of an epoch "
                    f"(this checkpoint stopped at batch {batch_in_epoch} of epoch {epoch + 1})"
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
        restore_optimizer(trainer.optimizer, info, state)
        trainer.step = info.step
        trainer.epoch = epoch
        trainer.batch_in_epoch = batch_in_epoch
        if "rng.torch" in state:
            try:
                trainer.rng.set_state(state["rng.torch"])
            except (RuntimeError, TypeError):
                raise CheckpointError(f"{path}: tensor 'rng.torch' is not a valid RNG state") from None
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
        model, info, _ = load_model(path)
        saved, epoch, _ = _training_position(path, info)
        overrides = dict(overrides or {})
        dataset = overrides.get("dataset", info.dataset)
        if dataset != info.dataset:
            if isinstance(model, BaselineCNN):
                raise CheckpointError(f"{path}: a baseline CNN for {info.dataset}; it cannot be widened to {dataset}")
            cfg = TrainConfig(**overrides)  # overrides name the other dataset
            size = info.model_config.image_size
            if cfg.image_size < size:
                raise CheckpointError(
                    f"{path}: a model for {size}x{size} images cannot train on {dataset} "
                    f"({cfg.image_size}x{cfg.image_size}); give --dataset {info.dataset}, or --init an MNIST "
                    "model to widen it"
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
            raise CheckpointError(f"{info.path}: {exc}") from None
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
        return math.ceil(self.n_examples / (self.config.batch_size * self.world))

    def snapshot_state_dict(self) -> dict[str, torch.Tensor]:
        """A CPU copy of the current weights (thread-safe, between optimizer steps)."""
        with self._lock:
            return {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}

    def save(self, path: Path | None = None) -> Path | None:
        """Autosave model, optimizer, step and RNG state (atomic)."""
        path = path or self.checkpoint_path
        if path is None:
            return None
        return save_checkpoint(
            path,
            self.model,
            train_config={**self.config.to_dict(), "precision": self.precision},  # the precision used
            epoch=self.epoch + self.batch_in_epoch / self.batches_per_epoch,
            step=self.step,
            test_accuracy=self.last_test_accuracy,
            test_images=self.last_test_images,
            optimizer=self.optimizer,
            rng_state=self.rng.get_state(),
            extra_metadata={
                "completed_epochs": str(self.epoch),
                "batch_in_epoch": str(self.batch_in_epoch),
                "dataset": self.config.dataset,
                **({"initialised_from": Path(self.initialised_from).name} if self.initialised_from else {}),
            },
        )

    # -- the loop ---------------------------------------------------------------
    def _epoch_order(self, epoch: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(self.config.seed * 100003 + epoch)
        return torch.randperm(self.n_train, generator=g)

    def _augment(self, images: torch.Tensor) -> torch.Tensor:
        """Random shift of each image by up to ``max_shift`` px with zero padding (uint8 (B,28,28))."""
        if self.shift is None:
            return images
        # torchvision's RandomCrop draws from the global RNG: run it under our generator's state.
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(self.rng.get_state())
            out = torch.stack([self.shift(img.unsqueeze(0)) for img in images]).squeeze(1)
            self.rng.set_state(torch.get_rng_state())
        return out

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

    def _train_step(
        self, images: torch.Tensor, labels: torch.Tensor, parts: torch.Tensor | None = None
    ) -> tuple[float, float, float, float]:
        """One optimizer step on uint8 ``images`` (B, H, W) with ``labels`` (B,); MultiMNIST:
        ``labels`` (B, 2) and ``parts`` (B, 2, H, W), each digit alone (its reconstruction target).
        Returns (loss, margin loss, reconstruction SSE, accuracy) of the batch; a baseline CNN
        reports its (binary) cross entropy as the margin loss and 0 reconstruction."""
        cfg = self.config
        x = images.to(self.device, non_blocking=True).unsqueeze(1).float().div_(255.0)
        y = labels.to(self.device)
        lr = cfg.lr_at(self.step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        if self.baseline:  # cross entropy (MNIST) or binary cross entropy on both digits (MultiMNIST)
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
            if parts is None:
                loss, margin, recon = total_loss(out.lengths, out.reconstruction, x, y, cfg.reconstruction_weight)
            else:
                targets = parts.to(self.device, non_blocking=True).unsqueeze(2).float().div_(255.0)
                loss, margin, recon = two_digit_loss(
                    out.lengths, out.reconstruction, targets, y, cfg.reconstruction_weight
                )
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
        if y.ndim == 1:
            acc = (scores.argmax(1) == y).float().mean().item()
        else:
            acc = (two_digit_hits(scores, y) == 2).float().mean().item()
        return loss.item(), margin.item(), recon.item(), acc

    @property
    def network(self) -> torch.nn.Module:
        """What a training step calls: the model, or its DistributedDataParallel wrapper."""
        return getattr(self, "ddp", None) or self.model

    def test_pairs(self) -> MultiMnistPairs:
        """The fixed MultiMNIST test pairs of this run (``test_subset`` of them, default 10,000)."""
        if self._test_pairs is None:
            self._test_pairs = fixed_test_pairs(self.test_data, self.config.test_subset or 10_000)
        return self._test_pairs

    def evaluate(self) -> tuple[float, int]:
        """Test accuracy in [0, 1] and the number of test images used (MultiMNIST: the
        fraction of test pairs whose two longest capsules are exactly their two digits)."""
        assert self.test_data is not None
        if self.multi:
            pairs = self.test_pairs()
            lengths = model_lengths(
                self.model,
                pairs.images,
                self.config.routing_iterations,
                batch_size=128,
                device=self.device,
                before_batch=self._check_stop,
            )
            self.model.train()
            hits = two_digit_hits(torch.from_numpy(lengths), torch.from_numpy(pairs.labels))
            return float((hits == 2).float().mean()), len(pairs)
        n = len(self.test_data)
        if self.config.test_subset:
            n = min(n, self.config.test_subset)
        if n == 0:
            raise ValueError("the test set is empty")
        data = MnistSplit(self.test_data.images[:n], self.test_data.labels[:n])
        # batches small enough to notice a stop request within a second on a CPU
        preds = evaluate_model(
            self.model,
            data,
            self.config.routing_iterations,
            batch_size=128,
            device=self.device,
            before_batch=self._check_stop,
        )
        self.model.train()
        correct = int((preds == data.labels).sum())
        return correct / n, n

    def run(self) -> Iterator[TrainEvent]:
        """Train until ``config.epochs`` epochs are complete or a stop is requested.

        Yields :class:`BatchEvent` after every step, :class:`EpochEvent` after every
        epoch and one final :class:`StoppedEvent`.

        Raises
        ------
        TrainingDiverged
            If the loss is NaN or infinite (nothing is saved over the last checkpoint).
        """
        cfg = self.config
        images_all = torch.from_numpy(self.train_data.images[: self.n_train])
        labels_all = torch.from_numpy(self.train_data.labels[: self.n_train])
        digits = MnistSplit(self.train_data.images[: self.n_train], self.train_data.labels[: self.n_train])
        hooks = []
        if self.world == 1:  # stop inside a step; data-parallel ranks stop together between steps
            hooks = [m.register_forward_pre_hook(self._check_stop) for m in self.model.children()]
            hooks += [m.register_full_backward_pre_hook(self._check_stop) for m in self.model.children()]
        self.model.train()
        finished = False
        try:
            while self.epoch < cfg.epochs:
                if self.multi:
                    pairs = training_pairs(digits, self.epoch, cfg.seed, cfg.pairs_per_epoch)
                    order = torch.arange(len(pairs))  # drawn in random order already
                else:
                    order = self._epoch_order(self.epoch)
                bpe = self.batches_per_epoch
                while self.batch_in_epoch < bpe:
                    batch = self.batch_in_epoch
                    # this rank's share of the global batch (all of it in a single process)
                    start = batch * cfg.batch_size * self.world + self.rank * cfg.batch_size
                    idx = order[start : start + cfg.batch_size]
                    if self._agreed(self._stop.is_set()):
                        raise _StopRequested
                    t0 = time.perf_counter()
                    self._batch_generator(self.epoch, batch)
                    rng_before = self.rng.get_state()
                    try:
                        if self.multi:
                            chosen = pairs[idx.numpy()]
                            loss, margin, recon, acc = self._train_step(
                                torch.from_numpy(chosen.images),
                                torch.from_numpy(chosen.labels),
                                torch.from_numpy(chosen.parts),
                            )
                        else:
                            loss, margin, recon, acc = self._train_step(self._augment(images_all[idx]), labels_all[idx])
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
                self.last_test_accuracy = self.last_test_images = None
                if self.test_data is not None and self.rank == 0:
                    self.last_test_accuracy, self.last_test_images = self.evaluate()
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


def model_lengths(
    model: CapsNet | BaselineCNN,
    images: np.ndarray,
    routing_iterations: int | None = None,
    batch_size: int = 500,
    device: torch.device | None = None,
    before_batch=None,
    after_batch=None,
) -> np.ndarray:
    """Digit-capsule lengths ||v_j|| of all ``images``: float32 numpy array (N, 10) in [0, 1)
    (a baseline CNN: its class probabilities, in [0, 1]; ``routing_iterations`` is ignored).

    ``images``: (N, H, H) uint8 in 0..255, or float in [0, 1], H the model's input size.
    ``before_batch()``, if given, is called before each batch (it may raise to stop);
    ``after_batch(n)`` after each, with the number of images the batch held (a progress bar).
    Leaves ``model`` in eval mode.
    """
    device = device or next(model.parameters()).device
    out_lengths = []
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(images), batch_size):
            if before_batch is not None:
                before_batch()
            x = torch.from_numpy(images[start : start + batch_size]).to(device).unsqueeze(1).float()
            if images.dtype == np.uint8:
                x = x / 255.0
            if isinstance(model, BaselineCNN):
                scores = model.scores(x)
            else:
                scores = model(x, routing_iterations=routing_iterations, reconstruct=False).lengths
            out_lengths.append(scores.float().cpu().numpy())
            if after_batch is not None:
                after_batch(len(x))
    return np.concatenate(out_lengths) if out_lengths else np.zeros((0, model.cfg.num_classes), dtype=np.float32)


def two_digit_hits(lengths: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """How many of each example's two digits are among its two longest capsules: (N,) int64
    in {0, 1, 2}. ``lengths`` (N, 10), ``labels`` (N, 2) with two different classes.

    2 is the paper's MultiMNIST measure (Sec. 6: both digits right, error = 1 - mean(hits == 2));
    >= 1: at least one digit right.
    """
    top2 = torch.argsort(-lengths, dim=1, stable=True)[:, :2]  # (N, 2); a tie: the lower class, as two_longest
    return (top2.unsqueeze(2) == labels.unsqueeze(1)).any(dim=1).sum(dim=1)


def evaluate_model(
    model: CapsNet | BaselineCNN,
    data: MnistSplit,
    routing_iterations: int | None = None,
    batch_size: int = 500,
    device: torch.device | None = None,
    before_batch=None,
    after_batch=None,
) -> np.ndarray:
    """Predicted classes for all images of ``data``: int64 numpy array (N,).

    ``data.images``: (N, 28, 28) uint8 in 0..255, or float in [0, 1] (e.g. preprocessed).
    ``before_batch()``, if given, is called before each batch (it may raise to stop);
    ``after_batch(n)`` after each, with the number of images the batch held (a progress bar).
    Leaves ``model`` in eval mode.
    """
    lengths = model_lengths(model, data.images, routing_iterations, batch_size, device, before_batch, after_batch)
    return lengths.argmax(1).astype(np.int64)


def confusion_matrix(labels: np.ndarray, predictions: np.ndarray, classes: int = 10) -> np.ndarray:
    """(classes, classes) int64 counts: row = true label, column = prediction."""
    cm = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(cm, (np.asarray(labels, dtype=np.int64), np.asarray(predictions, dtype=np.int64)), 1)
    return cm
