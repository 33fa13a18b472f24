"""MultiMNIST: two overlapping MNIST digits of different classes (Sabour et al. 2017, Sec. 6).

Recipe (the paper's): each digit is placed in a 36 x 36 field (4 px of padding around its
28 x 28 image) and shifted by an integer offset in [-4, 4] rows and [-4, 4] columns, drawn
independently for the two digits; the two fields are added pixel by pixel and clipped at 1
(here on the uint8 values: min(255, a + b)). The two digits come from the same split and
have different classes. Each digit's own shifted field is kept with its label: they are
the two reconstruction targets.

A pair is drawn by :func:`draw_pairs` from a ``numpy.random.Generator`` (PCG64), in this
order: the first digits' indices (uniform over the split), then per pair an offset in
[1, 9] added to the first label modulo 10 (the second class, uniform over the nine
others), then for each class 0..9 in turn the indices of the second digits of that class
(uniform over the split's digits of that class), then the shifts, an integer array
(N, 2, 2) in [-4, 4]: (pair, first/second digit, row/column).

- Training pairs are drawn afresh for every epoch from ``default_rng([seed, epoch])``
  (:func:`training_pairs`), so an epoch's pairs depend only on the seed and its number.
- The test set (:func:`fixed_test_pairs`) is drawn from the MNIST test split in blocks of
  1,000 pairs, block ``b`` by ``draw_pairs(split, 1000, default_rng([TEST_SEED, b]))``,
  ``TEST_SEED = 20171026``; ``n`` pairs are the first ``n`` of blocks 0, 1, ..., so the
  default 10,000 are blocks 0-9 and asking for more appends blocks. With numpy's PCG64 anyone can
  rebuild it bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from capsviz.data.datasets import PAIRS_PER_EPOCH
from capsviz.data.mnist import MnistSplit
from capsviz.texts import _

FIELD = 36  # side of a MultiMNIST image
PAD = (FIELD - 28) // 2  # 4 px around a 28 x 28 digit
MAX_SHIFT = 4  # each digit moves up to this many pixels each way
TEST_SEED = 20171026  # the paper's arXiv date
TEST_PAIRS = 10_000
TEST_BLOCK = 1_000


@dataclass
class MultiMnistPairs:
    """Pairs of overlapping digits.

    images : (N, 36, 36) uint8, the composite, min(255, first + second)
    parts : (N, 2, 36, 36) uint8, each digit alone in its shifted field (the reconstruction targets)
    labels : (N, 2) int64, the classes of the first and second digit (always different)
    sources : (N, 2) int64, the digits' indices in the MNIST split they came from
    shifts : (N, 2, 2) int64, each digit's (row, column) offset in [-4, 4]
    """

    images: np.ndarray
    parts: np.ndarray
    labels: np.ndarray
    sources: np.ndarray
    shifts: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index) -> MultiMnistPairs:
        """The pairs at ``index`` (a slice or an index array), as a new set."""
        return MultiMnistPairs(
            self.images[index], self.parts[index], self.labels[index], self.sources[index], self.shifts[index]
        )


FIELDS = ("images", "parts", "labels", "sources", "shifts")


def place(digit: np.ndarray, shift) -> np.ndarray:
    """A 28 x 28 digit in a 36 x 36 field, moved by ``shift`` = (rows, columns), each in [-4, 4].

    Raises ``ValueError`` for another digit size or a larger shift."""
    digit = np.asarray(digit)
    dy, dx = (int(s) for s in shift)
    if digit.shape != (28, 28):
        raise ValueError(_("expected a 28x28 digit, got shape {digit}", digit=digit.shape))
    if max(abs(dy), abs(dx)) > MAX_SHIFT:
        raise ValueError(
            _("shifts must be within [-{MAX_SHIFT}, {MAX_SHIFT}], got {shift}", MAX_SHIFT=MAX_SHIFT, shift=shift)
        )
    field = np.zeros((FIELD, FIELD), dtype=digit.dtype)
    field[PAD + dy : PAD + dy + 28, PAD + dx : PAD + dx + 28] = digit
    return field


def compose(fields: np.ndarray) -> np.ndarray:
    """The sum of ``fields`` (..., K, H, W) uint8 over K, clipped at 255: (..., H, W) uint8."""
    return np.minimum(fields.astype(np.uint16).sum(axis=-3), 255).astype(np.uint8)


def random_partner(labels: np.ndarray, other: int | None, rng: np.random.Generator) -> int:
    """The index of a random digit of ``labels`` ((N,) ints in 0..9) of another class than
    ``other`` (None: of any class), for the explorer's pair of digits: a class first, uniform
    among the others present, then a digit of it. Raises ``ValueError`` when no other class
    is present."""
    classes = [k for k in range(10) if k != other and (labels == k).any()]
    if not classes:
        raise ValueError(_("no digit of another class than {other}", other=other))
    return int(rng.choice(np.flatnonzero(labels == int(rng.choice(classes)))))


def draw_pairs(split: MnistSplit, n: int, rng: np.random.Generator) -> MultiMnistPairs:
    """Draw ``n`` pairs from ``split`` with ``rng`` (the order of the draws is in the module
    docstring). Raises ``ValueError`` for ``n < 0`` or a split lacking one of the ten classes."""
    if n < 0:
        raise ValueError(_("the number of pairs must be >= 0, got {n}", n=n))
    labels = np.asarray(split.labels, dtype=np.int64)
    by_class = [np.flatnonzero(labels == k) for k in range(10)]
    if any(len(members) == 0 for members in by_class):
        raise ValueError(_("the split must hold digits of all ten classes"))
    first = rng.integers(len(labels), size=n)
    second_class = (labels[first] + rng.integers(1, 10, size=n)) % 10
    second = np.empty(n, dtype=np.int64)
    for k, members in enumerate(by_class):
        chosen = second_class == k
        second[chosen] = members[rng.integers(len(members), size=int(chosen.sum()))]
    shifts = rng.integers(-MAX_SHIFT, MAX_SHIFT + 1, size=(n, 2, 2))
    sources = np.stack([first, second], axis=1)
    parts = np.zeros((n, 2, FIELD, FIELD), dtype=np.uint8)
    for p in range(n):
        for d in range(2):
            dy, dx = shifts[p, d]
            parts[p, d, PAD + dy : PAD + dy + 28, PAD + dx : PAD + dx + 28] = split.images[sources[p, d]]
    return MultiMnistPairs(compose(parts), parts, labels[sources], sources, shifts)


def training_pairs(split: MnistSplit, epoch: int, seed: int = 0, n: int = PAIRS_PER_EPOCH) -> MultiMnistPairs:
    """The ``n`` training pairs of epoch ``epoch`` (>= 0), drawn from ``default_rng([seed, epoch])``."""
    if epoch < 0 or seed < 0:
        raise ValueError(_("epoch and seed must be >= 0, got epoch {epoch}, seed {seed}", epoch=epoch, seed=seed))
    return draw_pairs(split, n, np.random.default_rng([seed, epoch]))


def fixed_test_pairs(split: MnistSplit, n: int = TEST_PAIRS) -> MultiMnistPairs:
    """The fixed MultiMNIST test set of ``n`` pairs (>= 1) from the MNIST test split
    ``split``, in blocks of ``TEST_BLOCK`` (see the module docstring): the first ``k``
    pairs are the same for every ``n >= k``."""
    if n < 1:
        raise ValueError(_("the number of test pairs must be >= 1, got {n}", n=n))
    blocks = [fixed_test_block(split, b) for b in range(-(-n // TEST_BLOCK))]
    return MultiMnistPairs(*(np.concatenate([getattr(blk, f) for blk in blocks])[:n] for f in FIELDS))


def fixed_test_block(split: MnistSplit, b: int) -> MultiMnistPairs:
    """Block ``b`` (>= 0) of the fixed test set: its pairs ``b * TEST_BLOCK`` to
    ``(b + 1) * TEST_BLOCK - 1``, drawn from ``default_rng([TEST_SEED, b])``."""
    return draw_pairs(split, TEST_BLOCK, np.random.default_rng([TEST_SEED, b]))


class FixedTestBlocks:
    """The fixed test pairs of ``split`` by blocks: ``blocks(b)`` is :func:`fixed_test_block`
    ``b``, drawn on first use and kept (the explorer browses the pairs one block at a time)."""

    def __init__(self, split: MnistSplit) -> None:
        self.split = split
        self._drawn: dict[int, MultiMnistPairs] = {}

    def __call__(self, b: int) -> MultiMnistPairs:
        if b not in self._drawn:
            self._drawn[b] = fixed_test_block(self.split, b)
        return self._drawn[b]

    def pair(self, k: int) -> tuple[MultiMnistPairs, int]:
        """(block, j): test pair ``k`` (0 <= k < TEST_PAIRS) is pair ``j`` of ``block``."""
        return self(k // TEST_BLOCK), k % TEST_BLOCK
