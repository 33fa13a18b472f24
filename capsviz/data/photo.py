"""MNIST digits rendered as photos of a digit written on paper, one corruption per kind.

Each digit is upscaled (bilinear) to a pen-written size, placed off-centre on a page of
a few hundred pixels, and photographed: dark ink on light paper, then one of the kinds
below, then encoded by Pillow's real PNG or JPEG encoder. The bytes are what a user
would open, so they are read back through :func:`capsviz.data.images.load_input`.

Kinds (ranges are drawn uniformly per image):

- ``scan``: white paper, near-black pen, PNG (a clean scan; the control).
- ``tint``: paper that is not white (off-white, cream, yellowish, grey), RGB, exposed
  at 0.70-1.00 of full scale.
- ``gradient``: light falling off across the page, linear (to 0.35-0.55 of the
  brightest side) or radial (to 0.35-0.55 in the farthest corner).
- ``shadow``: a soft shadow, a band or a corner, 35-60 % darker, penumbra 8-40 px.
- ``grain``: sensor noise, Gaussian per channel, sigma 0.03-0.06 of full scale, on
  paper exposed at 0.80-0.92 (so that the noise is not clipped at white).
- ``blur``: defocus, Gaussian radius 1.5-4 px.
- ``jpeg``: JPEG at quality 30-60.
- ``perspective``: a small projective warp, each corner moved by up to 6 % of the side.
- ``ink``: blue, red, green or violet ink, or pencil grey.
- ``combined``: all of the above at once (one lighting: gradient or shadow, half as
  strong), blur 0.8-2 px, sigma 0.02-0.04, JPEG 40-75.
- ``board``: chalk on a blackboard, light on dark: a dark green, black or grey board
  (0.10-0.30 of full scale), chalk at 0.75-0.95 and patchy (strokes 60-100 % covered),
  then the ``combined`` lighting, blur, grain and JPEG.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from capsviz.texts import _

KINDS = ("scan", "tint", "gradient", "shadow", "grain", "blur", "jpeg", "perspective", "ink", "combined", "board")

PAPERS = np.array(
    [
        (0.95, 0.94, 0.91),  # off-white
        (0.97, 0.93, 0.80),  # cream
        (0.96, 0.90, 0.70),  # yellowish (notepad)
        (0.86, 0.86, 0.84),  # light grey (recycled)
        (0.74, 0.74, 0.72),  # grey
    ]
)
BOARDS = np.array(
    [
        (0.10, 0.20, 0.14),  # green board
        (0.12, 0.12, 0.13),  # black board
        (0.26, 0.27, 0.28),  # grey slate
    ]
)
INKS = np.array(
    [
        (0.10, 0.14, 0.50),  # blue ballpoint
        (0.16, 0.28, 0.72),  # light blue gel
        (0.72, 0.10, 0.12),  # red
        (0.10, 0.42, 0.20),  # green
        (0.38, 0.16, 0.55),  # violet
        (0.42, 0.42, 0.42),  # pencil
    ]
)


def kind_rng(seed: int, kind: str, index: int) -> np.random.Generator:
    """The generator for one (kind, digit) pair: the same render whatever else is drawn."""
    return np.random.default_rng([seed, KINDS.index(kind), index])


def render_photo(digit: np.ndarray, kind: str, rng: np.random.Generator) -> bytes:
    """One MNIST digit as an encoded photo of it written on paper.

    Parameters
    ----------
    digit : ndarray, uint8, shape (28, 28)
        An MNIST digit, 0 = background, 255 = ink.
    kind : str
        One of :data:`KINDS`.
    rng : numpy Generator
        The source of every random choice (size, place, corruption strength).

    Returns
    -------
    bytes
        A PNG (RGB) or, for ``jpeg``, ``combined`` and ``board``, a JPEG file, 240-400 px a side.

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`KINDS` or ``digit`` is not (28, 28).
    """
    if kind not in KINDS:
        raise ValueError(_("unknown kind {kind!r}; expected one of {KINDS}", kind=kind, KINDS=", ".join(KINDS)))
    digit = np.asarray(digit)
    if digit.shape != (28, 28):
        raise ValueError(_("expected a (28, 28) MNIST digit, got shape {digit}", digit=digit.shape))
    board = kind == "board"
    combined = kind in ("combined", "board")
    width, height = (int(v) for v in rng.integers(240, 401, size=2))
    coverage = _place(digit, width, height, rng)  # (H, W) in [0, 1]

    paper = np.ones(3)
    ink = np.full(3, rng.uniform(0.06, 0.20))  # a dark pen: it reflects a little light
    if kind == "tint" or combined:
        paper = np.clip(PAPERS[rng.integers(len(PAPERS))] + rng.normal(0, 0.015, 3), 0, 1)
        paper = paper * rng.uniform(0.70, 1.00)
    if kind == "ink" or kind == "combined":
        ink = np.clip(INKS[rng.integers(len(INKS))] + rng.normal(0, 0.03, 3), 0, 1)
    if board:
        paper = np.clip(BOARDS[rng.integers(len(BOARDS))] * rng.uniform(0.8, 1.2), 0, 1)
        ink = np.full(3, rng.uniform(0.75, 0.95))
        coverage = coverage * rng.uniform(0.6, 1.0, coverage.shape)  # chalk leaves gaps
    page = paper * (1 - coverage[..., None]) + ink * coverage[..., None]  # (H, W, 3)

    if kind == "perspective" or combined:
        page = _perspective(page, paper, 0.06, rng)
    light = np.ones((height, width))
    lighting = kind if kind in ("gradient", "shadow") else ("gradient", "shadow")[rng.integers(2)] if combined else ""
    mildness = 0.5 if combined else 0.0
    if lighting == "gradient":
        light = _gradient(width, height, rng, mildness)
    elif lighting == "shadow":
        light = _shadow(width, height, rng, mildness)
    exposure = rng.uniform(0.80, 0.92) if kind == "grain" else 1.0
    photo = page * (exposure * light)[..., None]

    if kind == "blur" or combined:
        radius = rng.uniform(0.8, 2.0) if combined else rng.uniform(1.5, 4.0)
        photo = _blur(photo, radius)
    if kind == "grain" or combined:
        sigma = rng.uniform(0.02, 0.04) if combined else rng.uniform(0.03, 0.06)
        photo = photo + rng.normal(0.0, sigma, photo.shape)
    rgb = Image.fromarray(np.round(np.clip(photo, 0, 1) * 255).astype(np.uint8), mode="RGB")
    buf = io.BytesIO()
    if kind == "jpeg" or combined:
        quality = int(rng.integers(40, 76)) if combined else int(rng.integers(30, 61))
        rgb.save(buf, "JPEG", quality=quality)
    else:
        rgb.save(buf, "PNG")
    return buf.getvalue()


def _place(digit: np.ndarray, width: int, height: int, rng: np.random.Generator) -> np.ndarray:
    """Ink coverage (H, W) float in [0, 1]: the digit upscaled to 45-75 % of the shorter
    side (bilinear: strokes a pen's width, soft edges) at a random place inside the page."""
    side = round(rng.uniform(0.45, 0.75) * min(width, height))
    big = np.asarray(Image.fromarray(np.asarray(digit, np.uint8)).resize((side, side), Image.Resampling.BILINEAR))
    top = int(rng.integers(0, height - side + 1))
    left = int(rng.integers(0, width - side + 1))
    out = np.zeros((height, width))
    out[top : top + side, left : left + side] = big / 255.0
    return out


def _gradient(width: int, height: int, rng: np.random.Generator, mildness: float) -> np.ndarray:
    """Illumination (H, W) in (0, 1]: linear or radial falloff to ``low`` at its darkest."""
    low = rng.uniform(0.35, 0.55)
    low = low + mildness * (1 - low)
    y, x = np.mgrid[0:height, 0:width] / max(width, height)
    if rng.random() < 0.5:
        angle = rng.uniform(0, 2 * np.pi)
        t = x * np.cos(angle) + y * np.sin(angle)
        t = (t - t.min()) / (t.max() - t.min())
    else:
        cy, cx = rng.uniform(0, height / max(width, height)), rng.uniform(0, width / max(width, height))
        r = np.hypot(x - cx, y - cy)
        t = (r / r.max()) ** 2
    return 1 - (1 - low) * t


def _shadow(width: int, height: int, rng: np.random.Generator, mildness: float) -> np.ndarray:
    """Illumination (H, W) in (0, 1]: a soft-edged band across the page or a corner in shadow."""
    depth = rng.uniform(0.35, 0.60) * (1 - mildness)
    soft = rng.uniform(8.0, 40.0)
    y, x = np.mgrid[0:height, 0:width].astype(float)
    angle = rng.uniform(0, 2 * np.pi)
    d = (x - width / 2) * np.cos(angle) + (y - height / 2) * np.sin(angle)  # signed distance, px
    reach = 0.5 * abs(width * np.cos(angle)) + 0.5 * abs(height * np.sin(angle))
    if rng.random() < 0.5:  # a band
        centre = rng.uniform(-0.5, 0.5) * reach
        half = rng.uniform(0.10, 0.30) * min(width, height)
        inside = _smoothstep((half - np.abs(d - centre)) / soft)
    else:  # a corner or a side: everything past a line
        edge = rng.uniform(0.2, 0.7) * reach
        inside = _smoothstep((d - edge) / soft)
    return 1 - depth * inside


def _smoothstep(t: np.ndarray) -> np.ndarray:
    """0 below -1, 1 above 1, a smooth ramp between."""
    u = np.clip((t + 1) / 2, 0, 1)
    return u * u * (3 - 2 * u)


def _blur(photo: np.ndarray, radius: float) -> np.ndarray:
    """Gaussian blur (sigma ``radius`` px) of an (H, W, 3) float image, per channel, edges extended."""
    half = int(np.ceil(3 * radius))
    taps = np.exp(-0.5 * (np.arange(-half, half + 1) / radius) ** 2)
    taps /= taps.sum()
    for axis in (0, 1):
        pad = [(0, 0)] * 3
        pad[axis] = (half, half)
        padded = np.pad(photo, pad, mode="edge")
        n = photo.shape[axis]
        photo = sum(w * np.take(padded, np.arange(k, k + n), axis=axis) for k, w in enumerate(taps))
    return photo


def _perspective(page: np.ndarray, paper: np.ndarray, amount: float, rng: np.random.Generator) -> np.ndarray:
    """``page`` (H, W, 3) seen slightly askew: each corner moved by up to ``amount`` of the
    side; uncovered pixels show ``paper``."""
    height, width = page.shape[:2]
    corners = np.array([(0, 0), (width, 0), (width, height), (0, height)], float)
    moved = corners + rng.uniform(-amount, amount, (4, 2)) * (width, height)
    coeffs = _perspective_coeffs(corners, moved)
    out = []
    for k in range(3):
        channel = Image.fromarray(np.ascontiguousarray(page[..., k], np.float32), mode="F")
        warped = channel.transform(
            (width, height), Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.BILINEAR, fillcolor=float(paper[k])
        )
        out.append(np.asarray(warped))
    return np.stack(out, -1)


def _perspective_coeffs(source: np.ndarray, target: np.ndarray) -> tuple[float, ...]:
    """Pillow's 8 PERSPECTIVE coefficients that map output points ``target`` (4, 2) to
    input points ``source`` (4, 2): x_in = (a x + b y + c) / (g x + h y + 1), likewise y."""
    rows, rhs = [], []
    for (xs, ys), (xt, yt) in zip(source, target, strict=True):
        rows.append([xt, yt, 1, 0, 0, 0, -xs * xt, -xs * yt])
        rows.append([0, 0, 0, xt, yt, 1, -ys * xt, -ys * yt])
        rhs += [xs, ys]
    return tuple(float(v) for v in np.linalg.solve(np.array(rows), np.array(rhs)))
