"""What routing by agreement does for one input and over a test set (numpy, Qt-free).

Routing (Procedure 1) starts every primary capsule i with an even split c_ij = 1/J over the
J digit capsules and moves c_i towards the digits its vote u_hat_{j|i} agrees with. How far
it moves is a property of the trained model and of the input, and on the MNIST CapsNet it
is small: most capsules keep c_ij within a fraction of a per cent of 1/J, a few route
almost wholly to one digit, and one iteration (the even split) answers like three.

- :func:`routing_effect` measures this for one trace: the capsules that route decisively
  (``max_j |c_ij - 1/J| > DECISIVE / J`` at the last iteration), the share of the primary
  output ``sum_i ||u_i||`` they carry, the mean entropy of c_i per iteration, and the answers
  at r = 1 and at r = R.
- :func:`routing_check` counts, over a test set, the examples whose answer at r = 1 differs
  from the answer at r = R; :func:`cached_routing_check` keeps that count per model file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from capsviz.evaluate import answers_differ, check_answers, score
from capsviz.model.analysis import MOSAIC_COLS, RF_SIZE, RF_STRIDE, grid_side, mean_entropy
from capsviz.model.inference import longest

# A capsule routes decisively when some c_ij is more than half an even share from 1/J
# (for J = 10: above 0.15 or below 0.05).
DECISIVE = 0.5
CACHE_VERSION = 1


def departures(c: np.ndarray) -> np.ndarray:
    """``max_j |c_ij - 1/J|`` of each primary capsule: c (..., I, J) -> (..., I), in [0, 1 - 1/J]."""
    c = np.asarray(c)
    return np.abs(c - 1.0 / c.shape[-1]).max(axis=-1)


@dataclass(frozen=True)
class RoutingEffect:
    """What routing did for one input (see :func:`routing_effect`).

    primary : I, the number of primary capsules
    decisive : (K,) int64, the capsules i that route decisively, largest departure first
        (:func:`departures` at the last iteration)
    mass_share : share of ``sum_i ||u_i||`` the decisive capsules carry, in [0, 1]
    entropy : (R,) mean entropy of c_i per iteration, nats (ln J for the even split of r = 1)
    first, last : the answer at r = 1 and at r = R: a digit, or the two longest capsules,
        longest first (a tie: the lower class first), as the pair panel names them
    threshold : the departure above which a capsule counts as decisive (``DECISIVE / J``)
    """

    primary: int
    decisive: np.ndarray
    mass_share: float
    entropy: np.ndarray
    first: tuple[int, ...]
    last: tuple[int, ...]
    threshold: float

    @property
    def iterations(self) -> int:
        return len(self.entropy)

    @property
    def changed(self) -> bool:
        """Whether routing changed the answer: r = R answers other than the even split of r = 1
        (a pair: other digits, in whichever order)."""
        return set(self.first) != set(self.last)

    def lines(self, tr) -> list[str]:
        """What routing did here, a line each, composed with ``tr(template, **fields)`` (the app's
        translating one)."""
        first, last = (", ".join(map(str, a)) for a in (self.first, self.last))
        lines = [
            tr("decisive: {k:,} of {n:,}", k=len(self.decisive), n=self.primary),
            tr("(|c_ij − 0.1| > {t:.2f} at r = {r})", t=self.threshold, r=self.iterations),
            tr("share of Σ‖u_i‖: {share:.1f} %", share=100 * self.mass_share),
            tr("entropy {a:.4f} → {b:.4f}", a=self.entropy[0], b=self.entropy[-1]),
        ]
        if self.iterations == 1:  # r = 1 is r = R: nothing to set beside it
            return [*lines, tr("answer {first} (r = 1)", first=first), tr("one routing iteration: raise R to compare")]
        return [
            *lines,
            tr("answer {first} (r = 1), {last} (r = {r})", first=first, r=self.iterations, last=last),
            tr("routing changes the answer") if self.changed else tr("routing keeps the answer"),
        ]


def routing_effect(
    u_lengths: np.ndarray, c: np.ndarray, lengths: np.ndarray, answers: int = 1, threshold: float = DECISIVE
) -> RoutingEffect:
    """Measure what routing did in one trace.

    u_lengths : (I,) ||u_i|| in [0, 1); c : (R, I, J) couplings per iteration (rows sum to 1
    over J); lengths : (R, J) ||v_j|| per iteration; answers : 1 (single digits) or 2 (pairs of
    overlapping digits); threshold : the decisive departure in units of an even share 1/J.

    Raises ``ValueError`` when the shapes do not fit together.
    """
    u_lengths, c, lengths = np.asarray(u_lengths), np.asarray(c), np.asarray(lengths)
    if c.ndim != 3 or u_lengths.shape != c.shape[1:2] or lengths.shape != (c.shape[0], c.shape[2]):
        raise ValueError(
            "expected u_lengths (I,), c (R, I, J) and lengths (R, J); "
            f"got {u_lengths.shape}, {c.shape}, {lengths.shape}"
        )
    departure = departures(c[-1])
    limit = threshold / c.shape[-1]
    decisive = np.flatnonzero(departure > limit)
    decisive = decisive[np.argsort(-departure[decisive], kind="stable")]
    total = float(u_lengths.sum())
    share = float(u_lengths[decisive].sum()) / total if total > 0 else 0.0
    check_answers(answers)
    first, last = (tuple(longest(lengths[r], answers)) for r in (0, -1))
    return RoutingEffect(len(u_lengths), decisive, share, mean_entropy(c), first, last, limit)


@dataclass(frozen=True)
class RoutingCheck:
    """How often one routing iteration answers other than R over a test set.

    examples : N; iterations : R; differ : examples whose answer at r = 1 is not the answer at
    r = R; right_first, right_last : examples answered right at r = 1 and at r = R (pairs:
    both digits right).
    """

    examples: int
    iterations: int
    differ: int
    right_first: int
    right_last: int

    def sentence(self, tr) -> str:
        """The count as a sentence, composed with ``tr(template, **fields)``."""
        return tr(
            "test set: other answers at r = 1 than at r = {r} on {k:,} of {n:,} "
            "({a:,} right at r = 1, {b:,} at r = {r})",
            r=self.iterations,
            k=self.differ,
            n=self.examples,
            a=self.right_first,
            b=self.right_last,
        )


def routing_check(
    model,
    images: np.ndarray,
    labels: np.ndarray,
    iterations: int,
    batch_size: int = 500,
    after_batch: Callable[[int], None] | None = None,
    before_batch: Callable[[], None] | None = None,
) -> RoutingCheck:
    """Compare the answers of ``model`` (a CapsNet) at r = 1 and at r = ``iterations`` on
    ``images`` ((N, H, H) uint8 or float in [0, 1]) with ``labels`` ((N,) digits, or (N, 2)
    pairs; right means both digits right). Two passes over the images (one for ``iterations``
    1); ``after_batch`` / ``before_batch`` as for :func:`capsviz.evaluate.batched`. Raises
    ``ValueError`` for ``iterations`` < 1 or labels of another shape."""
    if iterations < 1:
        raise ValueError(f"routing iterations must be at least 1, not {iterations}")
    labels = np.asarray(labels)
    if labels.shape not in ((len(images),), (len(images), 2)):
        raise ValueError(f"expected labels of shape ({len(images)},) or ({len(images)}, 2); got {labels.shape}")
    scores = {
        r: score(model, images, labels, r, batch_size, before_batch=before_batch, after_batch=after_batch)
        for r in dict.fromkeys((1, iterations))
    }
    first, last = scores[1], scores[iterations]
    differ = int(answers_differ(first.answers, last.answers).sum())
    return RoutingCheck(len(images), iterations, differ, first.right, last.right)


def _cache_file(folder: Path, checkpoint: Path, iterations: int, examples: int) -> Path:
    checkpoint = Path(checkpoint).resolve()
    stat = checkpoint.stat()
    key = f"{checkpoint}|{stat.st_size}|{stat.st_mtime_ns}|{iterations}|{examples}|{CACHE_VERSION}"
    return Path(folder) / f"routing-{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def cached_routing_check(
    folder: Path, checkpoint: Path, iterations: int, examples: int, compute: Callable[[], RoutingCheck] | None = None
) -> RoutingCheck | None:
    """The :class:`RoutingCheck` of model file ``checkpoint`` at ``iterations`` on a test set
    of ``examples``, from the cache in ``folder`` (one JSON file per model file, its size and
    modification time, ``iterations`` and ``examples``). Absent there: ``compute()`` gives it and
    it is written (a cache that cannot be written is passed over); without ``compute``, None.
    A cache file that cannot be read counts as absent. Raises ``OSError`` when ``checkpoint``
    cannot be read."""
    path = _cache_file(folder, checkpoint, iterations, examples)
    try:
        found = RoutingCheck(**json.loads(path.read_text(encoding="utf-8")))
        if found.iterations == iterations and found.examples == examples:
            return found
    except (OSError, ValueError, TypeError):
        pass
    if compute is None:
        return None
    check = compute()
    keep_routing_check(folder, checkpoint, check)
    return check


def keep_routing_check(folder: Path, checkpoint: Path, check: RoutingCheck) -> None:
    """Write ``check`` (counted for model file ``checkpoint``) into the cache in ``folder``, where
    :func:`cached_routing_check` finds it; a cache that cannot be written is passed over."""
    path = _cache_file(folder, checkpoint, check.iterations, check.examples)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(check)), encoding="utf-8")
    except OSError:
        pass


def marked_capsules(indices: np.ndarray, n_primary: int) -> tuple[np.ndarray, np.ndarray]:
    """Where primary capsules ``indices`` ((K,) ints in 0..I-1) stand in the explorer's
    pictures: their cell centres in the :func:`~capsviz.model.analysis.type_mosaic`, (K, 2)
    float (x, y) in mosaic pixels, and the centres of their receptive fields on the input,
    (K, 2) float (x, y) in input pixels (each field ``RF_SIZE`` pixels square)."""
    g = grid_side(n_primary)
    t, rest = np.divmod(np.asarray(indices, dtype=np.int64), g * g)
    y, x = np.divmod(rest, g)
    row, col = np.divmod(t, MOSAIC_COLS)
    mosaic = np.stack([col * (g + 1) + x + 0.5, row * (g + 1) + y + 0.5], axis=1).astype(np.float64)
    field = np.stack([RF_STRIDE * x + RF_SIZE / 2, RF_STRIDE * y + RF_SIZE / 2], axis=1).astype(np.float64)
    return mosaic, field
