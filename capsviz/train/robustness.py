"""Accuracy of a model on the MNIST test digits under affine transforms (the question of
the paper's Sec. 5.2: how far do the capsules generalise to poses the training never showed?).

Two measures, both seeded and rebuilt bit for bit:

- **Sweeps**: one kind of transform at increasing strength (:data:`SWEEPS`). At strength s
  each digit is transformed by +s or by -s (a seeded coin per digit): rotation by s
  degrees; scale by the factor 1 + s (grown) or 1 / (1 + s) (shrunk); shear along x by s
  degrees; translation by s pixels along x or along y (a seeded choice), pixels moved past
  the 28 x 28 field lost. Strength 0 is the plain test set.
- **Affine test set**: every digit under its own random affine warp, drawn uniformly from
  :data:`AFFINE_RANGES` (rotation, scale, shear, translation in x and y). It is an
  affine-transformed MNIST test set built here, not affNIST (which places digits in a
  40 x 40 field); the paper's affNIST figures (79 % CapsNet, 66 % CNN, at the same MNIST
  accuracy) are the ones to hold it against.

The strengths, ranges and kinds are in :mod:`capsviz.train.sweeps`. The warps are
:func:`capsviz.data.transforms.apply_each` (torchvision's bilinear affine
about the centre, background 0), the same as the explorer's Transforms view.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from capsviz.data.mnist import MnistSplit, load_test_or_sample
from capsviz.data.transforms import InputTransform, apply_each
from capsviz.runtime import worker_thread
from capsviz.texts import _
from capsviz.train.sweeps import AFFINE_RANGES, KINDS, SWEEPS, sweep_title


def sweep_transforms(kind: str, strength: float, n: int, seed: int = 0) -> list[InputTransform]:
    """The ``n`` transforms of sweep ``kind`` at ``strength`` (see the module's docstring).

    Raises ``ValueError`` for an unknown kind or a negative strength."""
    if kind not in SWEEPS:
        raise ValueError(_("unknown transform {kind!r}; choose from {SWEEPS}", kind=kind, SWEEPS=", ".join(SWEEPS)))
    if strength < 0:
        raise ValueError(_("strength must be >= 0, got {strength}", strength=strength))
    rng = np.random.default_rng([seed, list(SWEEPS).index(kind)])
    sign = rng.choice([-1.0, 1.0], size=n)
    axis = rng.integers(0, 2, size=n)
    s = float(strength)
    if s == 0:
        return [InputTransform()] * n
    if kind == "rotation":
        return [InputTransform(rotation=k * s) for k in sign]
    if kind == "scale":
        return [InputTransform(scale=(1 + s) if k > 0 else 1 / (1 + s)) for k in sign]
    if kind == "shear":
        return [InputTransform(shear=k * s) for k in sign]
    return [InputTransform(tx=k * s) if a == 0 else InputTransform(ty=k * s) for k, a in zip(sign, axis)]


def affine_transforms(n: int, seed: int = 0) -> list[InputTransform]:
    """The ``n`` random warps of the affine test set, uniform in :data:`AFFINE_RANGES`."""
    rng = np.random.default_rng([seed, len(SWEEPS)])
    draw = {k: rng.uniform(*r, size=(n, 2) if k == "translation" else n) for k, r in AFFINE_RANGES.items()}
    return [
        InputTransform(
            rotation=float(draw["rotation"][k]),
            scale=float(draw["scale"][k]),
            shear=float(draw["shear"][k]),
            tx=float(draw["translation"][k, 0]),
            ty=float(draw["translation"][k, 1]),
        )
        for k in range(n)
    ]


@dataclass
class Curve:
    """One model's accuracy along one kind of transform: ``strengths`` (K,), ``correct`` (K,)
    counts out of ``n`` digits each (the affine test set: one strength, 1)."""

    kind: str
    strengths: tuple[float, ...]
    correct: list[int]
    n: int

    @property
    def accuracy(self) -> np.ndarray:
        """(K,) fractions in [0, 1]."""
        return np.asarray(self.correct, dtype=np.float64) / self.n


def measure(
    predict: Callable[[np.ndarray], np.ndarray], test: MnistSplit, kinds: tuple[str, ...] = KINDS, seed: int = 0
) -> Iterator[tuple[str, float, int]]:
    """Evaluate every test set of ``kinds`` in turn, yielding (kind, strength, correct) as
    each is done (the affine test set: strength 1.0). ``predict``: (N, 28, 28) float32 in
    [0, 1] -> (N,) classes. Raises ``ValueError`` for an unknown kind (before any work)."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(
            _("unknown transform {unknown!r}; choose from {KINDS}", unknown=unknown[0], KINDS=", ".join(KINDS))
        )
    n = len(test)
    for kind in kinds:
        for s in SWEEPS[kind] if kind in SWEEPS else (1.0,):
            transforms = sweep_transforms(kind, s, n, seed) if kind in SWEEPS else affine_transforms(n, seed)
            predictions = predict(apply_each(test.images, transforms))
            yield kind, float(s), int((np.asarray(predictions) == test.labels).sum())


def measure_networks(networks: dict, test: MnistSplit, stop=None) -> Iterator[tuple[str, float, int, int, str]]:
    """:func:`measure` for each of ``networks`` (name -> a CapsNet or a baseline CNN, in
    eval mode) in turn, the prediction the longest capsule or the likeliest class: yields
    (kind, strength, correct, digits, name). Ends early, between two batches, once ``stop``
    (a ``threading.Event``, or None) is set."""
    from capsviz.evaluate import model_lengths

    class Stopped(Exception):
        pass

    def check() -> None:
        if stop is not None and stop.is_set():
            raise Stopped

    try:
        for name, model in networks.items():

            def predict(images, model=model):
                return model_lengths(model, images, before_batch=check).argmax(axis=1)

            for kind, strength, correct in measure(predict, test):
                yield kind, strength, correct, len(test), name
    except Stopped:
        return


def networks_to_measure(capsnet, cnn=None) -> dict:
    """What :func:`measure_networks` measures for the explorer: CPU copies in eval mode of
    ``capsnet`` (name ``capsnet``) and of the CNN compared with it (``cnn``, when there is
    one), so that a training run may replace the originals while the measurement runs."""
    networks = {"capsnet": copy.deepcopy(capsnet).cpu().eval()}
    if cnn is not None:
        networks["cnn"] = copy.deepcopy(cnn).cpu().eval()
    return networks


def measure_first(networks: dict, data_root, n: int, stop=None) -> Iterator[tuple[str, float, int, int, str]]:
    """:func:`measure_networks` on the first ``n`` MNIST test digits in ``data_root`` (None:
    the default places; the shipped 2,000-digit sample where the test split is missing), run
    as a background worker (:func:`capsviz.runtime.worker_thread`): the explorer's
    Robustness view runs it on a thread of its own."""
    with worker_thread("background"):
        test, _source = load_test_or_sample(data_root)
        yield from measure_networks(networks, MnistSplit(test.images[:n], test.labels[:n]), stop)


def robustness(
    predict: Callable[[np.ndarray], np.ndarray],
    test: MnistSplit,
    kinds: tuple[str, ...] = KINDS,
    seed: int = 0,
    progress: Callable[[str, float], None] | None = None,
) -> dict[str, Curve]:
    """Accuracy along every kind of :data:`KINDS` asked for (see :func:`measure`):
    {kind: :class:`Curve`}. ``progress(kind, strength)`` is called after each test set.
    Raises ``ValueError`` for an unknown kind."""
    found: dict[str, list[tuple[float, int]]] = {}
    for kind, s, correct in measure(predict, test, kinds, seed):
        found.setdefault(kind, []).append((s, correct))
        if progress is not None:
            progress(kind, s)
    return {
        kind: Curve(kind, tuple(s for s, _ in points), [c for _, c in points], len(test))
        for kind, points in found.items()
    }


# per model, in order: blue for the first (the CapsNet), purple for the second (the CNN): the
# app's hues, darker for a white ground than its plots' on black
COLOURS = ((31, 119, 180), (148, 103, 189), (44, 160, 44), (214, 39, 40), (255, 127, 14), (23, 190, 207))


DASH = (6, 4)  # px drawn, px left out: the lines of every model after the first (the CNN), as in the app


def _model_line(draw, points: list[tuple[float, float]], colour, m: int, width: int = 2) -> None:
    """Model ``m``'s polyline through ``points``: solid for the first model, else in dashes of
    :data:`DASH`, the pattern running on over its corners."""
    if m == 0:
        draw.line(points, fill=colour, width=width)
        return
    on, off = DASH
    phase = 0.0  # the length into the pattern where the next segment starts
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = float(np.hypot(x1 - x0, y1 - y0))
        t = 0.0
        while t < length:
            into = phase % (on + off)
            step = min((on - into) if into < on else (on + off - into), length - t)
            if into < on:
                a, b = t / length, (t + step) / length
                start, end = (x0 + a * (x1 - x0), y0 + a * (y1 - y0)), (x0 + b * (x1 - x0), y0 + b * (y1 - y0))
                draw.line((*start, *end), fill=colour, width=width)
            t += step
            phase += step


def plot_curves(curves: dict[str, dict[str, Curve]], path, size: tuple[int, int] = (300, 230), note: str = ""):
    """Draw every sweep as a small panel (accuracy, 0-100 %, against strength; one line per
    model, solid for the first, dashed for the others) and the affine test set as bars, side
    by side, and save a PNG to ``path``.

    curves : {model name: {kind: Curve}} as :func:`robustness` returns per model.
    note : a line under the panels, at the right (what was measured: digits, seed).
    Returns the path written.
    """
    from PIL import Image, ImageDraw, ImageFont

    kinds = [k for k in KINDS if any(k in c for c in curves.values())]
    w, h = size
    legend = 22 * len(curves) + 10
    image = Image.new("RGB", (w * len(kinds), h + legend), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=12)  # smaller, its built-in font loses the space in "test set"
    left, right, top, bottom = 42, 12, 24, 34  # the plot area's margins in a panel
    for p, kind in enumerate(kinds):
        x0 = p * w
        area = (x0 + left, top, x0 + w - right, h - bottom)
        draw.rectangle(area, outline=(120, 120, 120))
        draw.text((x0 + left, 6), sweep_title(kind), fill="black", font=font)  # in English: the font has no Chinese
        for acc in (0, 25, 50, 75, 100):
            y = area[3] - (area[3] - area[1]) * acc / 100
            draw.line((area[0] - 4, y, area[0], y), fill=(120, 120, 120))
            draw.text((x0 + 6, y - 6), f"{acc}%", fill=(80, 80, 80), font=font)
        strengths = SWEEPS.get(kind, (1.0,))
        span = max(strengths[-1] - strengths[0], 1e-9)

        def px(s: float, area=area, strengths=strengths, span=span, kind=kind) -> float:
            return area[0] + (area[2] - area[0]) * ((s - strengths[0]) / span if kind != "affine" else 0.5)

        if kind != "affine":
            for s in strengths:
                draw.text((px(s) - 6, area[3] + 6), f"{s:g}", fill=(80, 80, 80), font=font)
        for m, model_curves in enumerate(curves.values()):
            curve = model_curves.get(kind)
            if curve is None:
                continue
            colour = COLOURS[m % len(COLOURS)]
            points = [(px(s), area[3] - (area[3] - area[1]) * a) for s, a in zip(curve.strengths, curve.accuracy)]
            if kind == "affine":
                bar = (area[2] - area[0]) / (len(curves) + 1)
                bx = area[0] + bar * (m + 0.5)
                draw.rectangle((bx, points[0][1], bx + bar * 0.8, area[3]), fill=colour)
                label, y = f"{100 * curve.accuracy[0]:.1f}%", points[0][1] - 14
                if y < top + 2:  # a tall bar: its figure inside its top, clear of the panel's title
                    draw.text((bx + 3, points[0][1] + 3), label, fill="white", font=font)
                else:
                    draw.text((bx, y), label, fill=colour, font=font)
            else:
                _model_line(draw, points, colour, m)
                for x, y in points:
                    draw.ellipse((x - 3, y - 3, x + 3, y + 3), fill=colour)
    for m, name in enumerate(curves):
        y = h + 6 + 22 * m
        colour = COLOURS[m % len(COLOURS)]
        draw.rectangle((10, y + 3, 30, y + 13), fill=colour)  # the bar's colour
        _model_line(draw, [(36.0, y + 8.0), (56.0, y + 8.0)], colour, m)  # and the line's style
        draw.text((62, y + 2), name, fill="black", font=font)
    if note:
        draw.text((image.width - 10, h + 8), note, fill=(80, 80, 80), font=font, anchor="ra")
    image.save(path)
    return path
