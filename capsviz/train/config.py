"""Training settings as data: :class:`TrainConfig`, the range of each numeric setting
(:data:`TRAIN_LIMITS`), the networks ``capsviz train`` trains (:data:`MODELS`) and the
precisions it runs in (:data:`PRECISIONS`).

The CLI's flags and the training panel's controls read their ranges from here. Imports no
torch (``capsviz train --help`` lists these without loading it) and no Qt.

The recipe is the paper's (arXiv:1710.09829, Sec. 4, and the official code): Adam at
lr 1e-3 decayed by 0.96 every 2000 steps (smoothly), batch 128, random shifts of up
to 2 px with zero padding, margin loss + 0.0005 x per-image SSE reconstruction loss,
3 routing iterations.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from capsviz.data.datasets import IMAGE_SIZE, MNIST_TEST_IMAGES, MNIST_TRAIN_IMAGES, PAIRS_PER_EPOCH, check_dataset
from capsviz.model.config import PRESETS
from capsviz.texts import _

PRECISIONS = ("auto", "fp32", "bf16", "fp16")  # see capsviz.train.precision
MODELS = ("capsnet", *PRESETS)  # what ``capsviz train --model`` trains


def check_precision(precision: str) -> str:
    """``precision`` if it is one of ``PRECISIONS``; else ``ValueError`` naming them."""
    if precision not in PRECISIONS:
        raise ValueError(
            _("precision must be one of {names}, not {given!r}", names=", ".join(PRECISIONS), given=precision)
        )
    return precision


@dataclass(frozen=True)
class Limit:
    """The allowed range of a numeric setting: ``low`` <= x (or < x when ``low_open``) <= ``high``.

    ``high`` None: no upper bound. ``kind`` is ``int`` or ``float``. ``offered``: the range a
    control of the training panel offers, inside the allowed one (None: ``low`` to ``high``).
    """

    kind: type
    low: float
    high: float | None = None
    low_open: bool = False
    offered: tuple[float, float] | None = None

    def describe(self) -> str:
        """E.g. ``an integer >= 1``, ``a number > 0``, ``a number in (0, 1]``, ``an integer in
        [0, 2,147,483,647]`` (integers written out in full)."""
        noun = _("an integer") if self.kind is int else _("a number")
        low, high = (f"{int(v):,}" if self.kind is int else f"{v:g}" for v in (self.low, self.high or 0))
        if self.high is None:
            return (_("{noun} > {low}") if self.low_open else _("{noun} >= {low}")).format(noun=noun, low=low)
        interval = f"{'(' if self.low_open else '['}{low}, {high}]"
        return _("{noun} in {interval}", noun=noun, interval=interval)

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
        return None if ok else _("must be {range} (got {value!r})", range=self.describe(), value=value)

    def control_range(self) -> tuple[float, float]:
        """(minimum, maximum) of a spin box for this setting: ``offered``, else ``low`` to ``high``.

        Raises ``ValueError`` when neither gives a finite, allowed range.
        """
        low, high = self.offered or (self.low, self.high)
        if high is None or self.problem(self.kind(low)) or self.problem(self.kind(high)):
            raise ValueError(f"no control range for {self.describe()} (offered {self.offered})")
        return self.kind(low), self.kind(high)


# The range of every numeric training setting (the CLI checks its flags against these;
# ``offered`` is what the training panel's spin boxes go to).
TRAIN_LIMITS = {
    "epochs": Limit(int, 1, 10_000, offered=(1, 1000)),
    "batch_size": Limit(int, 1, offered=(1, 4096)),
    "lr": Limit(float, 0, low_open=True, offered=(1e-7, 1.0)),
    "lr_decay": Limit(float, 0, 1, low_open=True, offered=(0.5, 1.0)),
    "lr_decay_steps": Limit(int, 1, offered=(1, 1_000_000)),
    "routing_iterations": Limit(int, 1, 100, offered=(1, 7)),
    "reconstruction_weight": Limit(float, 0, offered=(0.0, 1.0)),
    "max_shift": Limit(int, 0, 27, offered=(0, 6)),
    "seed": Limit(int, 0, 2**31 - 1),
    "train_subset": Limit(int, 0, MNIST_TRAIN_IMAGES),
    "test_subset": Limit(int, 0, 1_000_000, offered=(0, MNIST_TEST_IMAGES)),  # MultiMNIST: test pairs
    "pairs_per_epoch": Limit(int, 1, offered=(1, 10_000_000)),
}


@dataclass
class TrainConfig:
    """Training settings; the names are the CLI flags and the checkpoint metadata keys.

    epochs : int, 1 to 10,000   lr : float, Adam learning rate
    batch_size : int, >= 1      lr_decay : float, factor per ``lr_decay_steps`` steps
    routing_iterations : int    reconstruction_weight : float (0.0005 in the paper)
    max_shift : int, pixels     seed : int
    device : "auto", "cpu", "cuda", "cuda:N" or "mps"
    train_subset, test_subset : int, use only the first N images (0 = all): at most 60,000
        training images and, on MNIST, 10,000 test images (MultiMNIST: up to 1,000,000
        test pairs)
    precision : "auto", "fp32", "bf16" or "fp16" (:mod:`capsviz.train.precision`)
    model : "capsnet", or a baseline CNN of :data:`capsviz.model.config.PRESETS`
        (``baseline``: the paper's, ``baseline-small``: the CapsNet's size), trained with the
        same data, shifts and Adam schedule (cross entropy on MNIST, binary cross entropy on
        MultiMNIST); routing and reconstruction settings do not apply to it
    dataset : "mnist" or "multimnist" (:mod:`capsviz.data.datasets`); MultiMNIST draws
        ``pairs_per_epoch`` fresh pairs of the training digits every epoch and evaluates on
        the fixed test pairs (``test_subset`` of them); ``max_shift`` is MNIST's, the
        pairs carry their own shifts

    Raises ``ValueError`` naming the first setting outside its :data:`TRAIN_LIMITS`, or an
    unknown precision, dataset or model.
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
                raise ValueError(_("{name} {problem}", name=name, problem=problem))
        check_precision(self.precision)
        check_dataset(self.dataset)
        if self.dataset == "mnist" and self.test_subset > MNIST_TEST_IMAGES:
            raise ValueError(
                _(
                    "test_subset must be at most {n:,}, the MNIST test images (got {value!r})",
                    n=MNIST_TEST_IMAGES,
                    value=self.test_subset,
                )
            )
        if self.model not in MODELS:
            raise ValueError(
                _("model must be one of {names} (got {given!r})", names=", ".join(MODELS), given=self.model)
            )

    @property
    def image_size(self) -> int:
        """Side of the model's input image for this dataset (28 or 36)."""
        return IMAGE_SIZE[self.dataset]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        """The settings of ``data`` (a checkpoint's recipe; unknown keys ignored). Subsets and
        epochs past their limits, which older runs could store, are taken at the limit:
        a subset larger than its data set means all of it. Raises ``ValueError`` as the
        constructor does for the rest."""
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("epochs", "train_subset", "test_subset"):
            high = TRAIN_LIMITS[name].high
            if isinstance(values.get(name), int) and high is not None and values[name] > high:
                values[name] = high
        if values.get("dataset", "mnist") == "mnist" and isinstance(values.get("test_subset"), int):
            values["test_subset"] = min(values["test_subset"], MNIST_TEST_IMAGES)
        return cls(**values)

    def lr_at(self, step: int) -> float:
        """Learning rate at a global step: lr * lr_decay ** (step / lr_decay_steps)."""
        return self.lr * self.lr_decay ** (step / self.lr_decay_steps)


def fine_tune_lr(info) -> float | None:
    """The learning rate at which the run that wrote a checkpoint ended: its recipe's
    ``lr * lr_decay ** (step / lr_decay_steps)`` at the file's step (float, > 0), or None
    when ``info`` (a :class:`~capsviz.train.checkpoint.CheckpointInfo`) is None or records
    no recipe."""
    if info is None or "lr" not in info.train_config:
        return None
    return TrainConfig.from_dict(info.train_config).lr_at(info.step)
