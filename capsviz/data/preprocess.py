"""Turn a drawing (or any ink image) into the 28x28 input the model expects.

Follows how MNIST was made (LeCun et al., MNIST database description): the digit is
cropped to its ink, scaled to fit a 20x20 box keeping its aspect ratio with
anti-aliasing, and placed in a 28x28 field so that its centre of mass falls on the
centre pixel (row 14, column 14; MNIST test digits average 13.99 / 14.01).

A drawing made of pen strokes goes through :func:`preprocess_strokes` instead: its strokes
are drawn again at the model's scale with MNIST's stroke width, so that what the model
sees does not depend on the brush it was drawn with.
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
