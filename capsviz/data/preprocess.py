"""Turn a drawing (or any ink image) into the 28x28 input the model expects.

Follows how MNIST was made (LeCun et al., MNIST database description): the digit is
cropped to its ink, scaled to fit a 20x20 box keeping its aspect ratio with
anti-aliasing, and placed in a 28x28 field so that its centre of mass falls on the
centre pixel (row 14, column 14; MNIST test digits average 13.99 / 14.01).

A drawing made of pen strokes goes through :func:`preprocess_strokes` instead: its strokes
are drawn again at the model's scale with MNIST's stroke width, so that what the model
sees does not depend on the brush it was drawn with. An image whose strokes come out far
thinner (or fainter) than any MNIST digit's, a fine liner's or a hairline's, has its
centre line drawn again the same way (:func:`preprocess_ink`).
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

FIELD = 28
BOX = 20
CENTER = 14
INK_THRESHOLD = 0.05
# MNIST's stroke width in 28x28 pixels: the median of ink mass over centre-line length of
# 2,000 training digits (`python tools/drawn_digits.py --stroke-width` measures it: 2.347)
STROKE_WIDTH = 2.35
# an image's ink mass over its centre line's length below this (28x28 pixels) is drawn again
# at STROKE_WIDTH; the thinnest of 400 MNIST training digits measures 1.10, 1 % are below 1.21
RESTROKE_BELOW = 1.0
SUPERSAMPLE = 8  # strokes are drawn at 8x the model's scale, then box-averaged: anti-aliasing


def preprocess_ink(ink: np.ndarray, threshold: float = INK_THRESHOLD) -> np.ndarray | None:
    """MNIST-style normalisation of an ink image.

    Parameters
    ----------
    ink : ndarray, shape (H, W), any real dtype
        Ink intensity, light ink on dark background. Integer images are read as
        0..255 (uint16 as 0..65535); float images as 0..1. H, W >= 1.
    threshold : float
        Pixels above this (after scaling to [0, 1]) count as ink for the crop.

    Ink whose strokes would be thinner or fainter than :data:`RESTROKE_BELOW` model pixels
    (its mass over its centre line's length) is drawn again along its centre line with a
    round pen of MNIST's width (:data:`STROKE_WIDTH`), as :func:`preprocess_strokes` draws
    strokes.

    Returns
    -------
    ndarray, float32, shape (28, 28), values in [0, 1], or ``None`` if there is no ink.

    Raises
    ------
    ValueError
        If ``ink`` is not 2-D or is empty.
    """
    a = np.asarray(ink)
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"expected a non-empty 2-D ink image, got shape {a.shape}")
    if a.dtype == np.uint16:
        a = a.astype(np.float32) / 65535.0
    elif np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_:
        a = a.astype(np.float32) / (255.0 if a.dtype != np.bool_ else 1.0)
    else:
        a = np.nan_to_num(np.clip(a, 0.0, 1.0), nan=0.0).astype(np.float32)  # clip first: no overflow
    a = np.clip(a, 0.0, 1.0)
    rows = np.flatnonzero((a > threshold).any(axis=1))
    cols = np.flatnonzero((a > threshold).any(axis=0))
    if rows.size == 0:
        return None
    crop = a[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    restroked = _restroked(crop)
    if restroked is not None:
        return _place_by_mass(restroked)
    h, w = crop.shape
    scale = BOX / max(h, w)
    new_h, new_w = max(1, round(h * scale)), max(1, round(w * scale))
    resample = Image.Resampling.BOX if scale < 1 else Image.Resampling.BILINEAR
    small = np.asarray(Image.fromarray(crop, mode="F").resize((new_w, new_h), resample=resample), dtype=np.float32)
    return _place_by_mass(np.clip(small, 0.0, 1.0))


def preprocess_strokes(strokes, width: float = STROKE_WIDTH) -> np.ndarray | None:
    """MNIST-style model input of a drawing given as pen strokes, at MNIST's stroke width.

    The strokes' centre lines are scaled so that the drawing, drawn with a round pen of
    ``width``, fits a 20x20 box on its longer side; they are drawn at :data:`SUPERSAMPLE`
    times that scale (round caps and joins), box-averaged down (ink = the pen's coverage of
    each pixel) and placed by centre of mass as :func:`preprocess_ink` does. The brush the
    drawing was made with does not enter: only where the pen went.

    Parameters
    ----------
    strokes : sequence of (K, 2) array-likes
        Each stroke's pen positions (x, y) in any one unit (e.g. canvas pixels), K >= 1;
        a stroke of one position is a dot.
    width : float
        Pen width in 28x28 pixels, 0 < width < 20 (default: MNIST's, :data:`STROKE_WIDTH`).

    Returns
    -------
    ndarray, float32, shape (28, 28), values in [0, 1], or ``None`` when there is no stroke.

    Raises
    ------
    ValueError
        If a stroke is not (K, 2) with K >= 1, holds a non-finite position, or ``width`` is
        out of range.
    """
    if not 0 < width < BOX:
        raise ValueError(f"width must be between 0 and {BOX} pixels (got {width})")
    lines = [np.asarray(s, dtype=np.float64).reshape(-1, 2) for s in strokes]
    if any(len(line) == 0 or not np.isfinite(line).all() for line in lines):
        raise ValueError("every stroke needs at least one finite (x, y) position")
    if not lines:
        return None
    points = np.concatenate(lines)
    low = points.min(axis=0)
    extent = float((points.max(axis=0) - low).max())
    scale = SUPERSAMPLE * ((BOX - width) / extent if extent > 0 else 0.0)
    pen = width * SUPERSAMPLE
    side = BOX * SUPERSAMPLE
    canvas = Image.new("L", (side, side), 0)
    draw = ImageDraw.Draw(canvas)
    for line in lines:
        xy = [(float(x), float(y)) for x, y in _thinned((line - low) * scale + pen / 2, SUPERSAMPLE / 4)]
        if len(xy) > 1:
            draw.line(xy, fill=255, width=round(pen))
        for x, y in xy:  # round caps and joins: a disc of the pen at every position
            draw.ellipse((x - pen / 2, y - pen / 2, x + pen / 2, y + pen / 2), fill=255)
    big = np.asarray(canvas, dtype=np.float32) / 255.0
    rows, cols = np.flatnonzero(big.any(axis=1)), np.flatnonzero(big.any(axis=0))
    h = -(-(rows[-1] + 1) // SUPERSAMPLE)
    w = -(-(cols[-1] + 1) // SUPERSAMPLE)
    small = big[: h * SUPERSAMPLE, : w * SUPERSAMPLE].reshape(h, SUPERSAMPLE, w, SUPERSAMPLE).mean(axis=(1, 3))
    return _place_by_mass(small)


def thin(binary: np.ndarray) -> np.ndarray:
    """Zhang-Suen thinning of a (H, W) bool image to a one-pixel-wide skeleton (bool)."""
    b = np.pad(binary.astype(np.uint8), 1)
    while True:
        changed = False
        for first in (True, False):
            p2, p3, p4 = b[:-2, 1:-1], b[:-2, 2:], b[1:-1, 2:]
            p5, p6, p7 = b[2:, 2:], b[2:, 1:-1], b[2:, :-2]
            p8, p9 = b[1:-1, :-2], b[:-2, :-2]
            ring = [p2, p3, p4, p5, p6, p7, p8, p9, p2]
            count = sum(ring[:-1])
            transitions = sum((ring[k] == 0) & (ring[k + 1] == 1) for k in range(8))
            if first:
                side = (p2 * p4 * p6 == 0) & (p4 * p6 * p8 == 0)
            else:
                side = (p2 * p4 * p8 == 0) & (p2 * p6 * p8 == 0)
            remove = (b[1:-1, 1:-1] == 1) & (count >= 2) & (count <= 6) & (transitions == 1) & side
            if remove.any():
                b[1:-1, 1:-1][remove] = 0
                changed = True
        if not changed:
            return b[1:-1, 1:-1].astype(bool)


def _restroked(crop: np.ndarray) -> np.ndarray | None:
    """``crop`` ((H, W) float32 ink in [0, 1], cropped to its ink) drawn again along its centre
    line with a round pen of :data:`STROKE_WIDTH`, fitting the 20x20 box: (h, w) float32 in
    [0, 1], h, w <= 21; None when its strokes are :data:`RESTROKE_BELOW` model pixels wide or
    wider (it is scaled as it is).

    The centre line is the Zhang-Suen skeleton (:func:`thin`) of the ink above 30 % of its
    brightest, at :data:`SUPERSAMPLE` times the model's scale; the pen is a disc stamped on
    each of its pixels there, box-averaged down (anti-aliasing)."""
    h, w = crop.shape
    zoom = SUPERSAMPLE * (BOX - STROKE_WIDTH) / max(h, w)  # work pixels per crop pixel: ink and pen fit the box
    size = (max(1, round(w * zoom)), max(1, round(h * zoom)))
    resample = Image.Resampling.BOX if zoom < 1 else Image.Resampling.BILINEAR
    work = np.asarray(Image.fromarray(crop, mode="F").resize(size, resample=resample), dtype=np.float32)
    if float(work.max()) <= 0:
        return None
    skeleton = thin(work >= 0.3 * float(work.max()))
    if not skeleton.any():
        return None
    # mass (model px^2) over the centre line's length (model px), at the model's own scale BOX / max(h, w)
    width = float(crop.sum()) * BOX / max(h, w) * zoom / float(skeleton.sum())
    if width >= RESTROKE_BELOW:
        return None
    radius = STROKE_WIDTH * SUPERSAMPLE / 2
    reach = int(np.ceil(radius))
    pen = Image.new("L", (size[0] + 2 * reach, size[1] + 2 * reach), 0)
    draw = ImageDraw.Draw(pen)
    for y, x in zip(*np.nonzero(skeleton), strict=True):
        cx, cy = x + reach + 0.5, y + reach + 0.5
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=255)
    big = np.asarray(pen, dtype=np.float32) / 255.0
    rows, cols = np.flatnonzero(big.any(axis=1)), np.flatnonzero(big.any(axis=0))
    big = big[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    bh, bw = -(-big.shape[0] // SUPERSAMPLE), -(-big.shape[1] // SUPERSAMPLE)
    big = np.pad(big, ((0, bh * SUPERSAMPLE - big.shape[0]), (0, bw * SUPERSAMPLE - big.shape[1])))
    return big.reshape(bh, SUPERSAMPLE, bw, SUPERSAMPLE).mean(axis=(1, 3))


def _thinned(points: np.ndarray, spacing: float) -> np.ndarray:
    """``points`` (K, 2), keeping about one per ``spacing`` of path length (city-block), the
    first and the last always: a mouse reports a position every pixel or so, far finer than
    a quarter of a model pixel, and each position costs a disc in the drawing."""
    if len(points) < 3:
        return points
    travelled = np.cumsum(np.abs(np.diff(points, axis=0)).sum(axis=1))
    _, first = np.unique(np.floor(travelled / spacing), return_index=True)  # increasing: travelled is
    kept = np.concatenate(([0], first + 1, [len(points) - 1]))
    # sorted, so repeats are neighbours (np.unique would import numpy.ma, 11-22 ms, at the first stroke)
    return points[kept[np.concatenate(([True], kept[1:] != kept[:-1]))]]


def _place_by_mass(small: np.ndarray) -> np.ndarray | None:
    """Put ``small`` ((h, w) float32 in [0, 1], h, w <= 20) in a 28x28 field with its centre
    of mass on the centre pixel (rounded to whole pixels, kept inside the field); None when
    it holds no ink."""
    new_h, new_w = small.shape
    total = float(small.sum())
    if total <= 0:
        return None
    cy = float((small.sum(axis=1) * np.arange(new_h)).sum() / total)
    cx = float((small.sum(axis=0) * np.arange(new_w)).sum() / total)
    top = int(np.clip(round(CENTER - cy), 0, FIELD - new_h))
    left = int(np.clip(round(CENTER - cx), 0, FIELD - new_w))
    out = np.zeros((FIELD, FIELD), dtype=np.float32)
    out[top : top + new_h, left : left + new_w] = small
    return out


def preprocess_split(images: np.ndarray) -> np.ndarray:
    """:func:`preprocess_ink` over a stack: (N, H, W) uint8 or float -> (N, 28, 28) float32 in [0, 1].

    An image without ink becomes all zeros.
    """
    out = np.zeros((len(images), FIELD, FIELD), dtype=np.float32)
    for k, image in enumerate(images):
        done = preprocess_ink(image)
        if done is not None:
            out[k] = done
    return out
