"""Reading a pair of overlapping digits (MultiMNIST, paper Sec. 6 and Fig. 5), without widgets.

The two longest digit capsules are a pair model's answer. :func:`read_pair` adds to a
routing trace of the 36 x 36 input what the overlapping-digits view shows: the
reconstruction from every digit capsule, which of the two longest capsules stands for
digit A and which for digit B, the segmentation by routing per iteration and its colour
scale, the verdict, and what one routing iteration answers beside the last
(:func:`routing_comparison`). The image helpers paint them in the Fig. 5 colours (digit A red,
digit B green, yellow where both). numpy in, numpy out; safe on any thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from capsviz.data.multimnist import TEST_BLOCK, TEST_PAIRS
from capsviz.evaluate import answers_differ, answers_of, model_lengths, pair_hits
from capsviz.model.analysis import segmentation
from capsviz.model.inference import Inference, two_longest
from capsviz.runtime import lower_thread_priority
from capsviz.texts import english

RED = np.array([1.0, 0.25, 0.2], np.float32)
GREEN = np.array([0.2, 1.0, 0.3], np.float32)
OTHER = np.array([0.85, 0.85, 0.85], np.float32)  # an edited capsule that is neither of the two longest
SCAN_CHUNK = 100  # test pairs per batch of :func:`scan_test_pairs` (it can be stopped between batches)
INK = 0.2  # input pixels above this are the ink the segmentation's colour scale is fitted to


@dataclass(frozen=True)
class PairSetup:
    """What makes a pair: ``parts`` (2, H, H) uint8, digit A and digit B each alone in its
    shifted field (their sum clipped at 255 is the input), and ``labels``, the classes of A
    and B (None for a drawing, whose class is not known)."""

    parts: np.ndarray
    labels: tuple[int | None, int | None]

    @property
    def blank(self) -> tuple[bool, bool]:
        """Per digit (A, B), whether it has no ink (a drawing's empty canvas)."""
        return tuple(not np.any(part) for part in self.parts)


@dataclass(frozen=True, eq=False)
class PairReading:
    """What the overlapping-digits view shows for one traced pair.

    labels : (a, b), the classes of digits A and B (None for a drawing), as in the setup read
    top2 : [j1, j2], the two longest capsules, longest first (the model's answer)
    shown : [jA, jB], the same two capsules, the one standing for digit A first (painted red)
    reconstructions : (10, H, H) float32 in (0, 1), the decoder's image from each digit
        capsule's v_j of the last iteration (Sec. 4.1; a digit that is not there cannot be
        reconstructed: the (*) columns of Fig. 5)
    segmented : (a, b), the two digit capsules the segmentation compares (A's first), or None
        when the two test digits are of one class
    shares : (R, H, H) float32 in [0, 1], :func:`capsviz.model.analysis.segmentation`'s share
        to ``a`` per routing iteration, or None with ``segmented``
    contrast : the largest |share - 0.5| on the ink over all iterations (0: routing favours
        neither digit anywhere), the departure the segmentation's colours are stretched to
    first : [j1, j2], the two longest capsules after one routing iteration (what the same
        weights answer with r = 1: uniform couplings, Sec. 2)
    iterations : R, the routing iterations of the trace
    blank : per digit (A, B), whether it has no ink (an empty drawing): with one blank the
        input is one digit, and the answer read is the longest capsule alone
    """

    labels: tuple[int | None, int | None]
    top2: list[int]
    shown: list[int]
    reconstructions: np.ndarray
    segmented: tuple[int, int] | None
    shares: np.ndarray | None
    contrast: float
    first: list[int]
    iterations: int
    blank: tuple[bool, bool] = (False, False)

    def verdict(self, tr=english) -> str:
        """One line on the answer: :func:`verdict` of ``top2``, ``labels`` and ``blank``, e.g.
        "longest capsules: 4 and 1; the digits are 4 and 1 — both right" (``tr``: see
        :mod:`capsviz.texts`)."""
        return verdict(self.top2, self.labels, tr, self.blank)

    def routing(self, tr=english) -> str:
        """One line, :func:`routing_comparison` of ``first`` and ``top2``."""
        return routing_comparison(self.first, self.top2, self.iterations, self.labels, tr, self.blank)

    def colour_scale(self, tr=english) -> str:
        """One line on the segmentation's colours: the shares of the couplings to digit A drawn
        as full red and full green (0.5 -/+ ``contrast``); for a reading with ``segmented``."""
        return tr(
            "colours: full red at a share to {a} of {red:.4f}, full green at {green:.4f} (0.5: even)",
            red=0.5 + self.contrast,
            a=self.segmented[0],
            green=0.5 - self.contrast,
        )

    @property
    def routing_changed(self) -> bool:
        """Whether routing past the first iteration changed the answer (the two digits named;
        with one digit blank, the longest capsule; with both, nothing is answered)."""
        return set(answered(self.first, self.blank)) != set(answered(self.top2, self.blank))

    @property
    def painted(self) -> list[tuple[int, np.ndarray]]:
        """The capsules drawn for the digits there, each with its digit's colour (RGB): ``shown``
        as (jA, red), (jB, green); with one digit blank, the longest capsule alone in the other
        digit's colour; none with both blank."""
        if all(self.blank):
            return []
        if any(self.blank):
            return [(self.top2[0], GREEN if self.blank[0] else RED)]
        return list(zip(self.shown, (RED, GREEN)))

    @property
    def fig5(self) -> np.ndarray:
        """(H, H, 3): the reconstructions of :attr:`painted` over each other, A's red and B's
        green (Fig. 5); black with both digits blank."""
        if not self.painted:
            return np.zeros((*self.reconstructions.shape[1:], 3), np.float32)
        return layered([self.reconstructions[j] for j, _ in self.painted], [colour for _, colour in self.painted])

    def segmentation_image(self, image: np.ndarray, r: int) -> np.ndarray | None:
        """(H, H, 3): ``image``'s ink coloured by iteration ``r``'s shares (0-based), or None."""
        return None if self.shares is None else segmentation_image(image, self.shares[r], self.contrast)

    def compose_pose(self, digit: int, reconstruction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """An edited ``reconstruction`` (H, H) of capsule ``digit`` with the other capsules of
        :attr:`painted` reconstructed as inferred: (RGB (H, H, 3) in the Fig. 5 colours, light
        grey for a capsule not painted; their clipped sum (H, H), to compare with the input)."""
        own = next((colour for j, colour in self.painted if j == digit), OTHER)
        kept = [(self.reconstructions[j], colour) for j, colour in self.painted if j != digit]
        images = [reconstruction] + [image for image, _ in kept]
        return layered(images, [own] + [colour for _, colour in kept]), np.clip(sum(images), 0.0, 1.0)


def a_digit(k: int, tr=english) -> str:
    """``a 7``, ``an 8`` (``tr``: see :mod:`capsviz.texts`)."""
    return tr("an {k}", k=k) if k == 8 else tr("a {k}", k=k)


def by_digit(top2, labels, reconstructions: np.ndarray, parts: np.ndarray) -> tuple[int, int]:
    """Which of the two longest capsules ``top2`` stands for digit A and which for digit B,
    as indices into ``top2``: (0, 1) keeps the order, (1, 0) swaps it.

    A capsule of digit A's class is A's (``labels``: the classes of A and B, None for a
    drawing), else one of B's class is B's; when neither class is among the two (a wrong
    pair, or drawings) each capsule goes to the digit its reconstruction covers more of:
    the order with the larger sum of ``reconstructions[k] · parts[digit]`` over the pixels
    (``reconstructions``: (2, H, H) of top2's capsules; ``parts``: (2, H, H) digits A and B
    alone, both in [0, 1]).
    """
    a, b = labels
    if a is not None and a in top2:
        return (0, 1) if top2[0] == a else (1, 0)
    if b is not None and b in top2:
        return (0, 1) if top2[1] == b else (1, 0)
    overlap = np.einsum("khw,dhw->kd", reconstructions.astype(np.float64), parts.astype(np.float64))
    return (0, 1) if overlap[0, 0] + overlap[1, 1] >= overlap[1, 0] + overlap[0, 1] else (1, 0)


def layered(images, colours) -> np.ndarray:
    """(H, W) images in [0, 1], each in its colour (RGB in [0, 1]), added and clipped: (H, W, 3)."""
    return np.clip(sum(tinted(image, colour) for image, colour in zip(images, colours)), 0.0, 1.0)


def tinted(image: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """(H, W) in [0, 1] -> (H, W, 3): the image in one colour."""
    return np.asarray(image, np.float32)[..., None] * colour


def red_green(red: np.ndarray, green: np.ndarray) -> np.ndarray:
    """Two (H, W) images in [0, 1] over each other, the first in red and the second in green
    (yellow where both): (H, W, 3) in [0, 1]."""
    return layered((red, green), (RED, GREEN))


def share_contrast(image: np.ndarray, share: np.ndarray, ink: float = INK) -> float:
    """The largest departure |share - 0.5| on the input's ink (pixels above ``ink``); 0 when
    the couplings do not favour either digit anywhere (uniform routing, iteration 1)."""
    on_ink = np.asarray(image) > ink
    return float(np.abs(np.asarray(share)[on_ink] - 0.5).max()) if on_ink.any() else 0.0


def segmentation_image(image: np.ndarray, share: np.ndarray, contrast: float) -> np.ndarray:
    """The input's ink coloured by ``share``: red where the capsules that see a pixel send
    more to digit A, green where to digit B, yellow for even; ``contrast`` (> 0) is the
    departure from 0.5 drawn as pure red or green. (H, W, 3) in [0, 1]."""
    t = 0.5 if contrast <= 0 else np.clip(0.5 + (np.asarray(share, np.float32) - 0.5) / (2 * contrast), 0.0, 1.0)
    t = np.broadcast_to(np.asarray(t, np.float32), np.shape(image))[..., None]
    return np.clip(np.asarray(image, np.float32)[..., None] * (t * RED + (1.0 - t) * GREEN), 0.0, 1.0)


def answered(top2, blank=(False, False)) -> list[int]:
    """The digits an answer ``top2`` (the two longest capsules) names for an input whose digits
    A and B are ``blank`` or not: both capsules; the longest alone where one digit is blank
    (the input is one digit); none where both are."""
    return [] if all(blank) else list(top2[:1]) if any(blank) else list(top2)


def verdict(top2, labels, tr=english, blank=(False, False)) -> str:
    """One line on the model's answer ``top2`` (the two longest capsules) against ``labels``
    (the classes of digits A and B, None for a drawing); with one of the digits ``blank`` (an
    empty drawing) the input is one digit, and the longest capsule alone is its answer;
    ``tr``: see :mod:`capsviz.texts`."""
    a, b = labels
    if all(blank):
        return tr("both digits are blank: draw a digit or pick a test digit")
    if any(blank):
        known = b if blank[0] else a
        if blank[0]:
            answer = tr("digit A is blank, so the input is one digit; longest capsule: {j}", j=top2[0])
        else:
            answer = tr("digit B is blank, so the input is one digit; longest capsule: {j}", j=top2[0])
        if known is None:
            return answer
        if known == top2[0]:
            return answer + tr("; the test digit is {digit} — found", digit=a_digit(known, tr))
        return answer + tr("; the test digit is {digit} — not found", digit=a_digit(known, tr))
    answer = tr("longest capsules: {j} and {k}", j=top2[0], k=top2[1])
    if a is None and b is None:
        return answer
    if a is None or b is None:
        known = a if a is not None else b
        if known in top2:
            return answer + tr("; the test digit is {digit} — found", digit=a_digit(known, tr))
        return answer + tr("; the test digit is {digit} — not found", digit=a_digit(known, tr))
    if a == b:
        return tr("both digits are {a}s: pick digits of two different classes", a=a)
    found = len({a, b} & set(top2))
    if found == 2:
        return answer + tr("; the digits are {a} and {b} — both right", a=a, b=b)
    if found == 1:
        return answer + tr("; the digits are {a} and {b} — one right", a=a, b=b)
    return answer + tr("; the digits are {a} and {b} — both wrong", a=a, b=b)


def routing_comparison(first, last, iterations: int, labels, tr=english, blank=(False, False)) -> str:
    """One line setting the answer after one routing iteration (``first``, the two longest
    capsules) beside the answer after ``iterations`` (``last``), each with how many of
    ``labels`` (the classes of digits A and B; None for a drawing) it names, and whether
    routing changed it: "r = 1: 3, 5 (one right) · r = 3: 3, 8 (both right) — routing changed
    the answer". With one of the digits ``blank`` the answers are the longest capsules alone
    (:func:`answered`); with both, the line is empty. ``tr``: see :mod:`capsviz.texts`."""
    if all(blank):
        return ""
    first, last = answered(first, blank), answered(last, blank)
    if iterations == 1:
        if len(first) == 1:
            return tr("r = 1: {j} (one routing iteration: raise R to compare)", j=first[0])
        return tr("r = 1: {j}, {k} (one routing iteration: raise R to compare)", j=first[0], k=first[1])
    a, b = labels
    digits = {a, b} - {None} if any(blank) else {a, b} if None not in labels and a != b else set()

    def said(top) -> str:
        found = len(digits & set(top))
        named = (tr("none right"), tr("one right"), tr("both right")) if len(top) == 2 else (tr("wrong"), tr("right"))
        return ", ".join(map(str, top)) + (tr(" ({found})", found=named[found]) if digits else "")

    fields = {"first": said(first), "last": said(last), "r": iterations}
    if set(first) == set(last):
        return tr("r = 1: {first} · r = {r}: {last} — routing kept the answer", **fields)
    return tr("r = 1: {first} · r = {r}: {last} — routing changed the answer", **fields)


def routing_changes(model, images: np.ndarray, iterations: int = 3, batch_size: int = SCAN_CHUNK) -> np.ndarray:
    """(N,) bool: for each of ``images`` ((N, 36, 36) float32 in [0, 1], or uint8), whether the
    two longest capsules after ``iterations`` routing iterations are other digits than after one
    (with ``iterations`` 1, none: no pass is run)."""
    if iterations == 1:
        return np.zeros(len(images), bool)
    one, many = (answers_of(model_lengths(model, images, r, batch_size), 2) for r in (1, iterations))
    return answers_differ(one, many)


@torch.inference_mode()
def read_pair(model, inference: Inference, setup: PairSetup) -> PairReading:
    """Read ``inference`` (the routing trace of ``setup``'s pair through ``model``, a CapsNet
    with a decoder) as the overlapping-digits view shows it; see :class:`PairReading`.

    The decoder runs once on all ten digit capsules of the last iteration (a batch of 10).
    """
    lengths = inference.lengths[-1]
    top2 = two_longest(lengths)
    device = next(model.parameters()).device
    v = torch.from_numpy(inference.v[-1]).to(device)
    classes = torch.arange(v.shape[0], device=device)
    recon = model.decoder(v.expand(len(classes), -1, -1), classes)[:, 0].float().cpu().numpy()
    a, b = setup.labels
    parts = np.asarray(setup.parts, np.float32) / 255.0
    order = by_digit(top2, setup.labels, recon[top2], parts)
    shown = [top2[k] for k in order]
    blank = setup.blank
    segmented = None if any(blank) else tuple(shown) if a is None or b is None else None if a == b else (a, b)
    shares = contrast = None
    if segmented is not None:
        shares = np.stack([segmentation(inference.u_lengths, c, segmented)[0] for c in inference.c])
        contrast = max(share_contrast(inference.input, share) for share in shares)
    first = two_longest(inference.lengths[0])
    return PairReading(
        labels=setup.labels,
        top2=top2,
        shown=shown,
        reconstructions=recon,
        segmented=segmented,
        shares=shares,
        contrast=contrast or 0.0,
        first=first,
        iterations=len(inference.lengths),
        blank=blank,
    )


SCANS = ("wrong", "routing")  # what scan_test_pairs looks for


def scan_test_pairs(model, block, start: int, chunk: int = SCAN_CHUNK, find: str = "wrong", iterations: int = 3):
    """Generator: go through the fixed MultiMNIST test pairs from index ``start`` with
    ``model``, in batches of ``chunk``, for the first one that is ``find``: ``wrong`` (not
    both digits among the two longest capsules) or ``routing`` (:func:`routing_changes` with
    ``iterations``). ``block(b)`` gives block ``b`` of the test set
    (:func:`capsviz.data.multimnist.fixed_test_block`). Yields ``("progress", done, total)``
    after each batch, then ``("found", k)`` for the first such pair k, or ``("none", start)``
    when there is none up to the last of the ``TEST_PAIRS`` (for ``routing`` with
    ``iterations`` 1, ``("one iteration", start)`` at once); a consumer may stop between
    batches. Both scans route with ``iterations``. Raises ``ValueError`` for another ``find``."""
    if find not in SCANS:
        raise ValueError(f"find must be one of {', '.join(SCANS)}, not {find!r}")
    if find == "routing" and iterations == 1:  # r = 1 against R = 1: no pair can differ
        yield ("one iteration", start)
        return
    for begin in range(start, TEST_PAIRS, chunk):
        pairs, j = block(begin // TEST_BLOCK), begin % TEST_BLOCK
        end = min(j + chunk, TEST_BLOCK)
        images = pairs.images[j:end]
        if find == "wrong":
            answers = pair_hits(model, images, pairs.labels[j:end], routing_iterations=iterations, batch_size=chunk)
            hits = np.flatnonzero(answers < 2)
        else:
            hits = np.flatnonzero(routing_changes(model, images, iterations, chunk))
        if len(hits):
            yield ("found", begin + int(hits[0]))
            return
        yield ("progress", begin + end - j - start, TEST_PAIRS - start)
    yield ("none", start)


def no_pair_found(find: str, start: int, tr=english) -> str:
    """What a scan for a pair that is ``find`` (``wrong``, ``routing``; see :func:`scan_test_pairs`)
    from test pair ``start`` says when it finds none; ``tr``: see :mod:`capsviz.texts`."""
    if find == "wrong":
        return tr("no wrong pair after test pair {k}", k=start - 1)
    return tr("no pair where routing changes the answer after test pair {k}", k=start - 1)


def scan_in_background(model, block, start: int, find: str = "wrong", iterations: int = 3):
    """:func:`scan_test_pairs` of ``model`` from ``start`` for a pair that is ``find``, at a
    background worker's lower CPU priority (:func:`capsviz.runtime.lower_thread_priority`):
    the generator a worker thread of the explorer runs, yielding what that one yields."""
    lower_thread_priority()
    yield from scan_test_pairs(model, block, start, find=find, iterations=iterations)
