"""Scoring a model on many images, Qt-free: one batched loop for the CapsNet and the
baseline CNN, predictions, the MultiMNIST top-2 rule, and confusion matrices.

- :func:`batched` runs any per-batch output of a model over a stack of images; the
  capsule lengths (:func:`model_lengths`), the digit capsules
  (:func:`capsviz.model.inference.digit_capsules`) and a CNN's probabilities
  (:func:`capsviz.model.baseline.baseline_probabilities`) all go through it.
- A single digit is right when its longest capsule (a CNN: its most probable class) is its
  label (:func:`evaluate_model`).
- A MultiMNIST pair is right when its two longest capsules are its two digits, in either
  order (Sabour et al. 2017, Sec. 6: "both digits right"; :func:`top_two`,
  :func:`two_digit_hits`, :func:`pair_hits`).
- :func:`score` gives either measure as a :class:`Score`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from capsviz.model.baseline import BaselineCNN
from capsviz.model.capsnet import CapsNet
from capsviz.texts import _


def batched(
    model: torch.nn.Module,
    images: np.ndarray,
    output: Callable[[torch.Tensor], torch.Tensor],
    row_shape: tuple[int, ...],
    batch_size: int = 500,
    device: torch.device | None = None,
    before_batch: Callable[[], None] | None = None,
    after_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """``output(x)`` of every batch of ``images``, concatenated: float32 numpy (N, *row_shape).

    ``images``: (N, H, H) uint8 in 0..255 (divided by 255 here) or float in [0, 1], H the
    model's input size ``model.cfg.image_size``; a read-only array is copied, never written.
    ``output`` gets x, float32 (B, 1, H, H) in [0, 1] on ``device`` (default: the model's),
    B <= ``batch_size``, and returns (B, *row_shape). It runs in inference mode with the
    model in eval mode (left so). ``before_batch()``, if given, is called before each batch
    (it may raise to stop); ``after_batch(n)`` after each, with the number of images the
    batch held (a progress bar).

    Raises ``ValueError`` when ``images`` is not (N, H, H) or ``batch_size`` < 1.
    """
    size = model.cfg.image_size
    images = np.asarray(images)
    if images.ndim != 3 or images.shape[1:] != (size, size):
        raise ValueError(
            _(
                "expected {size}x{size} images, an array of shape (N, {size}, {size}); got {images}",
                size=size,
                images=images.shape,
            )
        )
    if batch_size < 1:
        raise ValueError(_("batch_size must be >= 1 (got {batch_size})", batch_size=batch_size))
    device = device or next(model.parameters()).device
    out = [np.zeros((0, *row_shape), np.float32)]
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(images), batch_size):
            if before_batch is not None:
                before_batch()
            chunk = images[start : start + batch_size]
            x = torch.from_numpy(chunk if chunk.flags.writeable else chunk.copy()).to(device).unsqueeze(1).float()
            if images.dtype == np.uint8:
                x = x / 255.0
            out.append(output(x).float().cpu().numpy())
            if after_batch is not None:
                after_batch(len(x))
    return np.concatenate(out)


def model_lengths(
    model: CapsNet | BaselineCNN,
    images: np.ndarray,
    routing_iterations: int | None = None,
    batch_size: int = 500,
    device: torch.device | None = None,
    before_batch: Callable[[], None] | None = None,
    after_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Digit-capsule lengths ||v_j|| of all ``images``: float32 numpy array (N, 10) in [0, 1)
    (a baseline CNN: its class probabilities, in [0, 1]; ``routing_iterations`` is ignored).

    ``images``, ``before_batch``, ``after_batch``: as for :func:`batched`;
    ``routing_iterations`` >= 1, default the model's. Leaves ``model`` in eval mode.
    Raises ``ValueError`` for images of another size.
    """
    if isinstance(model, BaselineCNN):
        output = model.scores
    else:

        def output(x: torch.Tensor) -> torch.Tensor:
            return model(x, routing_iterations=routing_iterations, reconstruct=False).lengths

    rows = (model.cfg.num_classes,)
    return batched(model, images, output, rows, batch_size, device, before_batch, after_batch)


def evaluate_model(
    model: CapsNet | BaselineCNN,
    data,
    routing_iterations: int | None = None,
    batch_size: int = 500,
    device: torch.device | None = None,
    before_batch: Callable[[], None] | None = None,
    after_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Predicted classes for all images of ``data`` (a :class:`~capsviz.data.mnist.MnistSplit`):
    int64 numpy array (N,), the longest capsule of each (a CNN: the most probable class).

    ``data.images``: (N, 28, 28) uint8 in 0..255, or float in [0, 1] (e.g. preprocessed);
    the rest as for :func:`model_lengths`. Leaves ``model`` in eval mode.
    """
    lengths = model_lengths(model, data.images, routing_iterations, batch_size, device, before_batch, after_batch)
    return lengths.argmax(1).astype(np.int64)


def top_two(lengths: torch.Tensor) -> torch.Tensor:
    """The two longest capsules of each row, longest first (a tie: the lower class first):
    ``lengths`` (N, C) float -> (N, 2) int64 class indices. A MultiMNIST model's answer (Sec. 6)."""
    return torch.argsort(-lengths, dim=1, stable=True)[:, :2]


def two_digit_hits(lengths, labels):
    """How many of each example's two digits are among its two longest capsules: (N,) int64
    in {0, 1, 2}. ``lengths`` (N, 10) float, ``labels`` (N, 2) int with two different classes;
    torch tensors give a tensor (on their device), numpy arrays a numpy array.

    2 is the paper's MultiMNIST measure (Sec. 6: both digits right, error = 1 - mean(hits == 2));
    >= 1: at least one digit right.

    Raises ``ValueError`` when the shapes are not (N, C) and (N, 2).
    """
    if not (isinstance(lengths, torch.Tensor) and isinstance(labels, torch.Tensor)):
        return two_digit_hits(torch.tensor(np.asarray(lengths)), torch.tensor(np.asarray(labels))).numpy()
    if lengths.ndim != 2 or labels.shape != (len(lengths), 2):
        shapes = f"{tuple(lengths.shape)} and {tuple(labels.shape)}"
        raise ValueError(_("expected lengths (N, C) and labels (N, 2); got {shapes}", shapes=shapes))
    top2 = top_two(lengths)  # (N, 2)
    return (top2.unsqueeze(2) == labels.unsqueeze(1)).any(dim=1).sum(dim=1)


def pair_hits(
    model: CapsNet | BaselineCNN,
    images: np.ndarray,
    labels: np.ndarray,
    routing_iterations: int | None = None,
    batch_size: int = 500,
    device: torch.device | None = None,
    before_batch: Callable[[], None] | None = None,
    after_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """:func:`two_digit_hits` of ``model`` on MultiMNIST pairs: (N,) int64 numpy in {0, 1, 2}
    (2: both digits right). ``images`` (N, 36, 36) as for :func:`model_lengths`, ``labels``
    (N, 2) int."""
    lengths = model_lengths(model, images, routing_iterations, batch_size, device, before_batch, after_batch)
    return two_digit_hits(lengths, labels)


def confusion_matrix(labels: np.ndarray, predictions: np.ndarray, classes: int = 10) -> np.ndarray:
    """(classes, classes) int64 counts: row = true label, column = prediction; ``labels`` and
    ``predictions`` (N,) ints in 0..classes-1."""
    cm = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(cm, (np.asarray(labels, dtype=np.int64), np.asarray(predictions, dtype=np.int64)), 1)
    return cm


@dataclass(frozen=True)
class Score:
    """A model's result on a test set of ``examples`` images.

    right : int, single digits: predicted right; pairs: both digits right (Sec. 6)
    at_least_one : int, pairs: at least one digit right; None for single digits
    confusion : (10, 10) int64, single digits: rows true label, columns prediction; None for pairs
    answers : the answer for each example (:func:`answers_of`): (N,) int64 digits, or (N, 2)
        sorted pairs of digits
    """

    examples: int
    right: int
    at_least_one: int | None = None
    confusion: np.ndarray | None = None
    answers: np.ndarray | None = None

    @property
    def accuracy(self) -> float:
        """``right / examples`` in [0, 1]; NaN for an empty test set."""
        return self.right / self.examples if self.examples else float("nan")


def score(
    model: CapsNet | BaselineCNN,
    images: np.ndarray,
    labels: np.ndarray,
    routing_iterations: int | None = None,
    batch_size: int = 500,
    device: torch.device | None = None,
    before_batch: Callable[[], None] | None = None,
    after_batch: Callable[[int], None] | None = None,
) -> Score:
    """How ``model`` does on ``images`` with ``labels``: (N,) ints for single digits (MNIST),
    (N, 2) for pairs (MultiMNIST, top-2 rule). The rest as for :func:`model_lengths`.

    Raises ``ValueError`` when ``labels`` is neither (N,) nor (N, 2).
    """
    labels = np.asarray(labels)
    if labels.ndim not in (1, 2) or len(labels) != len(images) or labels.shape[1:] not in ((), (2,)):
        raise ValueError(
            _(
                "expected labels of shape ({images},) or ({images}, 2); got {labels}",
                images=len(images),
                labels=labels.shape,
            )
        )
    lengths = model_lengths(model, images, routing_iterations, batch_size, device, before_batch, after_batch)
    answers = answers_of(lengths, labels.ndim)
    if labels.ndim == 1:
        cm = confusion_matrix(labels, answers, lengths.shape[1])
        return Score(len(labels), int((answers == labels).sum()), confusion=cm, answers=answers)
    hits = two_digit_hits(lengths, labels)
    return Score(len(labels), int((hits == 2).sum()), at_least_one=int((hits >= 1).sum()), answers=answers)


def check_answers(answers: int) -> None:
    """Raise ``ValueError`` unless ``answers`` is 1 (one digit) or 2 (a pair's two digits)."""
    if answers not in (1, 2):
        raise ValueError(_("answers must be 1 or 2, not {answers}", answers=answers))


def answers_of(lengths: np.ndarray, answers: int = 1) -> np.ndarray:
    """The model's answer for each row of ``lengths`` (..., C): the longest capsule (a CNN: the
    most probable class), (...) int64 (``answers`` 1), or the two longest as a sorted pair
    (..., 2) (``answers`` 2, MultiMNIST's top-2 rule, Sec. 6). Raises ``ValueError`` for another
    ``answers``."""
    check_answers(answers)
    lengths = np.asarray(lengths)
    if answers == 1:
        return lengths.argmax(axis=-1).astype(np.int64)
    flat = torch.from_numpy(np.ascontiguousarray(lengths.reshape(-1, lengths.shape[-1]), dtype=np.float32))
    return np.sort(top_two(flat).numpy(), axis=1).reshape(*lengths.shape[:-1], 2)


def answers_differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether two sets of :func:`answers_of` differ, example by example: (N,) bool."""
    a, b = np.asarray(a), np.asarray(b)
    return (a != b).any(axis=-1) if a.ndim == 2 else a != b


def test_examples(dataset: str, test, pairs: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(images, labels) a model of ``dataset`` is scored on: the images and labels of ``test``
    (an MNIST test split, :class:`~capsviz.data.mnist.MnistSplit`) for ``mnist``; for
    ``multimnist`` the first ``pairs`` (default 10,000) fixed MultiMNIST test pairs drawn from
    it, (N, 36, 36) uint8 with labels (N, 2)."""
    if dataset != "multimnist":
        return test.images, test.labels
    from capsviz.data.multimnist import TEST_PAIRS, fixed_test_pairs

    chosen = fixed_test_pairs(test, pairs or TEST_PAIRS)
    return chosen.images, chosen.labels
