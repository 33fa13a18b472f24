"""What a training run learns from, as data: single MNIST digits (:class:`DigitTask`) or
MultiMNIST pairs (:class:`PairTask`; Sabour et al. 2017, Sec. 6). Qt-free.

A task gives :class:`~capsviz.train.loop.Trainer` the examples of each epoch in their
order and in batches, the CapsNet's loss, the training accuracy of a batch and the test
evaluation; :func:`task_for` picks the one of ``TrainConfig.dataset``.

- Digits: each epoch is a permutation of the training images drawn from
  ``(seed, epoch)``; each batch is shifted by up to ``max_shift`` px with zero padding (drawn
  from the run's RNG); the loss is the margin loss + ``reconstruction_weight`` x the
  per-image SSE (Eq. 4 and Sec. 4.1); a digit is right when its longest capsule is its label.
- Pairs: each epoch draws ``pairs_per_epoch`` fresh pairs of the training digits
  (:func:`capsviz.data.multimnist.training_pairs`, already in random order); the loss is the
  margin loss on both digits + the reconstruction of each digit from its own capsule; a
  pair is right when its two longest capsules are its two digits
  (:func:`capsviz.evaluate.two_digit_hits`), and the test set is the fixed test pairs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torchvision.transforms import v2

from capsviz.data.mnist import MnistSplit
from capsviz.data.multimnist import TEST_PAIRS, MultiMnistPairs, fixed_test_pairs, training_pairs
from capsviz.evaluate import score, two_digit_hits
from capsviz.model.capsnet import CapsNetOutput
from capsviz.model.losses import total_loss, two_digit_loss
from capsviz.texts import N_
from capsviz.train.config import TrainConfig

# images per forward pass of the test evaluation: small enough to notice a stop request
# within a second on a CPU
TEST_BATCH = 128


@dataclass
class Batch:
    """One batch of training examples, on the CPU.

    images : uint8 (B, H, H) in 0..255
    labels : int64 (B,) digit classes, or (B, 2) the two digits of each pair
    parts : uint8 (B, 2, H, H), each digit of a pair alone in its field (its reconstruction
        target), or None for single digits
    """

    images: torch.Tensor
    labels: torch.Tensor
    parts: torch.Tensor | None = None


@dataclass
class Epoch:
    """The examples of one epoch: ``order`` (int64, one index per example, in training
    order) and ``take(indices, rng)``, the :class:`Batch` of those indices (``rng``: the run's
    generator, for random augmentation)."""

    order: torch.Tensor
    take: Callable[[torch.Tensor, torch.Generator], Batch]


class Task:
    """Training data, loss, accuracy and evaluation of one kind of example.

    ``measure`` names what the test accuracy counts and ``test_unit`` its examples (as the CLI
    prints them); ``examples_per_epoch`` is the number of training examples per epoch.
    """

    measure = N_("test accuracy")
    test_unit = N_("images")

    def __init__(self, config: TrainConfig, train_data: MnistSplit, test_data: MnistSplit | None = None) -> None:
        self.config = config
        n = len(train_data)
        if config.train_subset:
            n = min(n, config.train_subset)
        self.train = MnistSplit(train_data.images[:n], train_data.labels[:n])  # the training digits used
        self.test_data = test_data
        self.examples_per_epoch = n

    def epoch(self, epoch: int) -> Epoch:
        """The examples of epoch ``epoch`` (from 0), the same for the same seed wherever it runs."""
        raise NotImplementedError

    def loss(
        self, out: CapsNetOutput, x: torch.Tensor, labels: torch.Tensor, batch: Batch
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(total, margin, reconstruction) losses of a CapsNet's output ``out`` for input ``x``
        (B, 1, H, H) float in [0, 1] with ``labels`` (on x's device); float32 scalars."""
        raise NotImplementedError

    def hits(self, scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """bool (B,): which examples ``scores`` (B, 10) (capsule lengths or CNN logits) get right."""
        raise NotImplementedError

    def accuracy(self, scores: torch.Tensor, labels: torch.Tensor) -> float:
        """Fraction in [0, 1] of the batch that ``scores`` (B, 10) get right (:meth:`hits`)."""
        return self.hits(scores, labels).float().mean().item()

    def test_set(self) -> tuple[np.ndarray, np.ndarray]:
        """(images, labels) of the test evaluation; ``ValueError`` when it is empty."""
        raise NotImplementedError

    def evaluate(self, model, routing_iterations: int, device: torch.device, before_batch=None) -> tuple[float, int]:
        """Test accuracy of ``model`` in [0, 1] (:func:`capsviz.evaluate.score`) and the number
        of test examples; ``before_batch()`` is called before each batch (it may raise to stop).
        Leaves ``model`` in eval mode."""
        images, labels = self.test_set()
        result = score(model, images, labels, routing_iterations, TEST_BATCH, device, before_batch)
        return result.accuracy, result.examples


class DigitTask(Task):
    """Single MNIST digits, 28 x 28, shifted by up to ``max_shift`` px during training."""

    def __init__(self, config: TrainConfig, train_data: MnistSplit, test_data: MnistSplit | None = None) -> None:
        super().__init__(config, train_data, test_data)
        self.images = torch.from_numpy(self.train.images)
        self.labels = torch.from_numpy(self.train.labels)
        self.shift = v2.RandomCrop(config.image_size, padding=config.max_shift) if config.max_shift else None

    def epoch(self, epoch: int) -> Epoch:
        g = torch.Generator().manual_seed(self.config.seed * 100003 + epoch)
        return Epoch(torch.randperm(self.examples_per_epoch, generator=g), self._take)

    def _take(self, indices: torch.Tensor, rng: torch.Generator) -> Batch:
        return Batch(self.augment(self.images[indices], rng), self.labels[indices])

    def augment(self, images: torch.Tensor, rng: torch.Generator) -> torch.Tensor:
        """Random shift of each image by up to ``max_shift`` px with zero padding (uint8
        (B, 28, 28)), drawn from ``rng`` (its state advances)."""
        if self.shift is None:
            return images
        # torchvision's RandomCrop draws from the global RNG: run it under the run's generator's state.
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(rng.get_state())
            out = torch.stack([self.shift(img.unsqueeze(0)) for img in images]).squeeze(1)
            rng.set_state(torch.get_rng_state())
        return out

    def loss(self, out, x, labels, batch):
        return total_loss(out.lengths, out.reconstruction, x, labels, self.config.reconstruction_weight)

    def hits(self, scores, labels):
        return scores.argmax(1) == labels

    def test_set(self):
        n = len(self.test_data)
        if self.config.test_subset:
            n = min(n, self.config.test_subset)
        if n == 0:
            raise ValueError("the test set is empty")
        return self.test_data.images[:n], self.test_data.labels[:n]


class PairTask(Task):
    """MultiMNIST pairs, 36 x 36: fresh training pairs every epoch, the fixed test pairs
    (``test_subset`` of them, default :data:`~capsviz.data.multimnist.TEST_PAIRS`)."""

    measure = N_("both digits right")
    test_unit = N_("test pairs")

    def __init__(self, config: TrainConfig, train_data: MnistSplit, test_data: MnistSplit | None = None) -> None:
        super().__init__(config, train_data, test_data)
        self.examples_per_epoch = config.pairs_per_epoch
        self._test_pairs: MultiMnistPairs | None = None

    def epoch(self, epoch: int) -> Epoch:
        pairs = training_pairs(self.train, epoch, self.config.seed, self.config.pairs_per_epoch)

        def take(indices: torch.Tensor, rng: torch.Generator) -> Batch:
            chosen = pairs[indices.numpy()]
            return Batch(
                torch.from_numpy(chosen.images), torch.from_numpy(chosen.labels), torch.from_numpy(chosen.parts)
            )

        return Epoch(torch.arange(len(pairs)), take)  # drawn in random order already

    def loss(self, out, x, labels, batch):
        targets = batch.parts.to(x.device, non_blocking=True).unsqueeze(2).float().div_(255.0)
        return two_digit_loss(out.lengths, out.reconstruction, targets, labels, self.config.reconstruction_weight)

    def hits(self, scores, labels):
        return two_digit_hits(scores, labels) == 2

    def test_pairs(self) -> MultiMnistPairs:
        """The fixed MultiMNIST test pairs of this run (drawn once)."""
        if self._test_pairs is None:
            self._test_pairs = fixed_test_pairs(self.test_data, self.config.test_subset or TEST_PAIRS)
        return self._test_pairs

    def test_set(self):
        pairs = self.test_pairs()
        return pairs.images, pairs.labels


TASKS = {"mnist": DigitTask, "multimnist": PairTask}


def task_for(config: TrainConfig, train_data: MnistSplit, test_data: MnistSplit | None = None) -> Task:
    """The :class:`Task` of ``config.dataset`` on these splits (MultiMNIST pairs are drawn from
    the digits of each split)."""
    return TASKS[config.dataset](config, train_data, test_data)
