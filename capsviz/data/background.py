"""Remove the background of an ink image: paper tone, uneven light, shadows, grain.

A photo of a digit on paper, once inverted to light ink on dark, has a background that is
neither black nor even: the paper's tone, light falling off across the page, a shadow,
sensor grain, JPEG noise. The MNIST-style crop (:func:`~capsviz.data.preprocess.preprocess_ink`)
counts every pixel above ``INK_THRESHOLD`` as ink, so such a background makes it keep the
whole photo. :func:`subtract_background` estimates the background and takes it away:

1. A light box filter (about an eighth of a block wide) takes the edge off pixel noise.
2. The image is cut into blocks (about 32 along the longer side, at least 4 px). A
   block's median is its background where ink covers less than half of it; the spread
   between its median and its 90th percentile, in the quietest quarter of the blocks,
   is the noise.
3. A grey-scale opening (minimum, then maximum, over 5 x 5 blocks) takes out the blocks
   that ink covers: strokes are narrower than the window, the background varies slowly.
   Smoothed and upscaled bilinearly, this is the background field.
4. Ink is what stands above the field: ``(a - field) / (1 - field)`` for paper (the light
   that ink takes away relative to the paper next to it, so strokes in a shadow keep
   their strength), ``a - field`` otherwise (chalk on a board).
5. A floor of 4 noise standard deviations becomes 0 and the darkest stroke 1 (a page
   where nothing stands 0.1 above the floor has no ink). Ink more than a block away from
   the digit's strokes (those at half the darkest stroke's strength or more, in groups
   with at least a tenth of the largest group's ink) becomes 0: specks, and what an
   opening cannot follow of a shadow's sharp corners.

:func:`remove_background` returns the cleaned image only when the background would
count as ink: somewhere along the image's border it (or its noise) reaches
``INK_THRESHOLD``, and the plain crop reaches more than a block (at least 8 px, a JPEG
block) beyond the crop of the cleaned image. Otherwise (MNIST digits, clean scans,
drawings, transparent PNGs) the image comes back as it was, the same array, so the
model sees exactly what the plain MNIST-style crop gives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from capsviz.data.preprocess import INK_THRESHOLD

BLOCKS = 32  # blocks along the longer side
MIN_BLOCK = 4  # pixels: enough for a block's percentiles to mean something
OPENING = 5  # the opening's window in blocks: strokes up to 5/32 of the longer side are ink
NOISE_SIGMAS = 4.0  # ink must stand this many noise standard deviations above the background
MIN_CONTRAST = 0.1  # the darkest stroke stands at least this far above the noise floor, or there is no ink
STRONG = 0.5  # a stroke: at least this share of the darkest stroke's strength
CROP_MARGIN = 8  # pixels, at least: how far the plain crop may reach beyond the cleaned one (a JPEG block)
FLAT = 0.2  # a block of background varies less than this between its quartiles (plus noise)
STROKE_LEVEL = 0.8  # a block this close to the brightest block may be a stroke's core
KEEP = 0.1  # groups of strokes with less ink than this share of the largest are not the digit


def block_size(shape: tuple[int, int]) -> int:
    """Side in pixels of the square blocks for an image of ``shape`` (H, W): at least
    ``MIN_BLOCK``, and about 1/``BLOCKS`` of the longer side."""
    return max(MIN_BLOCK, -(-max(shape) // BLOCKS))


@dataclass(frozen=True)
class BlockStats:
    """Statistics of the square blocks of an image (see :func:`block_stats`).

    median, low, high : ndarray, float32, shape (gh, gw)
        Each block's median, 25th and 75th percentile.
    sigma : float
        Robust standard deviation of the pixel noise, >= 0: the 25th percentile over
        blocks of (90th percentile - median) / 1.2816, so blocks crossed by ink (up to
        three in four) do not raise it and noise clipped at black still counts.
    """

    median: np.ndarray
    low: np.ndarray
    high: np.ndarray
    sigma: float


def block_stats(a: np.ndarray) -> BlockStats:
    """:class:`BlockStats` of ``a`` ((H, W) float in [0, 1]) over blocks of
    :func:`block_size`; the last row and column of blocks are filled by mirroring."""
    h, w = a.shape
    b = block_size(a.shape)
    gh, gw = -(-h // b), -(-w // b)
    padded = np.pad(a, ((0, gh * b - h), (0, gw * b - w)), mode="symmetric")
    blocks = np.sort(padded.reshape(gh, b, gw, b).transpose(0, 2, 1, 3).reshape(gh, gw, b * b), axis=-1)
    n = b * b - 1
    median, low, high, upper = (blocks[..., round(q * n)] for q in (0.5, 0.25, 0.75, 0.9))
    return BlockStats(median, low, high, float(np.quantile(upper - median, 0.25)) / 1.2816)


def estimate_background(a: np.ndarray) -> tuple[np.ndarray, BlockStats]:
    """The slowly varying background of an ink image.

    Parameters
    ----------
    a : ndarray, float32, shape (H, W), values in [0, 1]
        Ink bright on a darker background (after any inversion).

    Returns
    -------
    field : ndarray, float32, shape (H, W), values in [0, 1]
        The background level at each pixel: block medians, opened over ``OPENING`` x
        ``OPENING`` blocks (so bright strokes narrower than that go), smoothed, upscaled.
    stats : BlockStats
        The block statistics it was made from (``stats.sigma`` is the pixel noise).
    """
    stats = block_stats(a)
    grid = _box(_max_filter(_min_filter(stats.median, OPENING), OPENING), 3)  # opening, then smoothing
    return _upscale(grid, a.shape), stats


def _upscale(grid: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """A (gh, gw) grid of block values as an (H, W) float32 field in [0, 1], bilinear."""
    b = block_size(shape)
    gh, gw = grid.shape
    image = Image.fromarray(np.ascontiguousarray(grid, np.float32), mode="F")
    field = np.asarray(image.resize((gw * b, gh * b), Image.Resampling.BILINEAR), dtype=np.float32)
    return np.clip(field[: shape[0], : shape[1]], 0.0, 1.0)


def remove_background(a: np.ndarray, paper: bool) -> np.ndarray:
    """:func:`subtract_background` where the background would count as ink, else ``a``.

    Two tests, both needed:

    - :func:`background_at_border`: along the image's border the background (or its
      noise) reaches ``INK_THRESHOLD``; a clean image's border is dark.
    - The plain crop (the pixels of ``a`` above ``INK_THRESHOLD``) reaches more than
      ``max(block, CROP_MARGIN)`` pixels beyond the crop of the cleaned image on a side:
      the background would be cropped as ink.

    Parameters
    ----------
    a : ndarray, float32, shape (H, W), values in [0, 1]
        Ink bright on a darker background (after any inversion).
    paper : bool
        As for :func:`subtract_background`.

    Returns
    -------
    ndarray, float32, shape (H, W), values in [0, 1]
        ``a`` itself (the same object) or the cleaned image: background 0, darkest stroke
        1, all zeros when no ink stands out of the background.

    Raises
    ------
    ValueError
        If ``a`` is not a non-empty 2-D array.
    """
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"expected a non-empty 2-D ink image, got shape {a.shape}")
    plain = crop_box(a)
    stats = block_stats(_smooth(a))
    if plain is None or not background_at_border(stats):
        return a
    cleaned = subtract_background(a, paper)
    if not background_at_border(stats, ink=cleaned):
        return a
    box = crop_box(cleaned)
    if box is None:
        return cleaned
    margin = max(block_size(a.shape), CROP_MARGIN)
    inside = (
        plain[0] >= box[0] - margin
        and plain[1] <= box[1] + margin
        and plain[2] >= box[2] - margin
        and plain[3] <= box[3] + margin
    )
    return a if inside else cleaned


def background_at_border(stats: BlockStats, threshold: float = INK_THRESHOLD, ink: np.ndarray | None = None) -> bool:
    """True when a block on the image's border holds background that would count as ink.

    Such a block's 25th percentile plus ``NOISE_SIGMAS`` noise standard deviations
    exceeds ``threshold``: paper, light falling off, a shadow cast from outside the
    frame, grain. When that holds for less than half of the border, the block must also
    not look like a stroke running off the image: it is flat (over it and its 8
    neighbours, 75th minus 25th percentile under ``FLAT`` plus 2 sigma; a stroke's edge
    is not) and below ``STROKE_LEVEL`` of the image's brightest block (a stroke's core
    is not).

    ``ink`` ((H, W) in [0, 1], the cleaned image), if given, also excludes the border
    blocks where it has pixels above ``threshold``.
    """
    level = stats.low + NOISE_SIGMAS * stats.sigma
    spread = _max_filter(stats.high, 3) - _min_filter(stats.low, 3)  # over the block and its neighbours
    background = level > threshold
    if np.median(_ring(background)) == 0:  # under half of the border: strokes running off the image?
        background &= (spread < FLAT + 2 * stats.sigma) & (stats.low < STROKE_LEVEL * float(stats.high.max()))
    if ink is not None:
        h, w = ink.shape
        b = block_size(ink.shape)
        gh, gw = level.shape
        covered = np.pad(ink > threshold, ((0, gh * b - h), (0, gw * b - w))).reshape(gh, b, gw, b).any(axis=(1, 3))
        background &= ~covered
    return bool(_ring(background).any())


def _ring(grid: np.ndarray) -> np.ndarray:
    """The blocks of a (gh, gw) grid along the image's border, as one 1-D array."""
    return np.concatenate([grid[0], grid[-1], grid[:, 0], grid[:, -1]])


def crop_box(a: np.ndarray, threshold: float = INK_THRESHOLD) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right), inclusive, of the pixels of ``a`` ((H, W) in [0, 1])
    above ``threshold``: what :func:`~capsviz.data.preprocess.preprocess_ink` crops to;
    None when there are none."""
    rows = np.flatnonzero((a > threshold).any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero((a > threshold).any(axis=0))
    return int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1])


def subtract_background(a: np.ndarray, paper: bool) -> np.ndarray:
    """Ink with the background taken away (steps 1-5 of the module's description).

    Parameters
    ----------
    a : ndarray, float32, shape (H, W), values in [0, 1]
        Ink bright on a darker background (after any inversion).
    paper : bool
        True when ``a`` is an inverted photo of dark ink on paper: ink is then measured
        relative to the paper's local brightness, ``(a - field) / (1 - field)``; False
        subtracts the field (light ink on a dark surface).

    Returns
    -------
    ndarray, float32, shape (H, W), values in [0, 1]
        The background 0, the darkest stroke 1; all zeros when nothing stands
        ``MIN_CONTRAST`` above the noise floor (a blank page).

    Raises
    ------
    ValueError
        If ``a`` is not a non-empty 2-D array.
    """
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"expected a non-empty 2-D ink image, got shape {a.shape}")
    b = block_size(a.shape)
    smooth = _smooth(a)
    field, stats = estimate_background(smooth)
    if paper:
        scale = np.maximum(1.0 - field, 0.02)  # the paper's brightness
        ink, floor = (smooth - field) / scale, NOISE_SIGMAS * stats.sigma / scale
    else:
        ink, floor = smooth - field, np.float32(NOISE_SIGMAS * stats.sigma)
    ink = ink - floor
    peak = float(ink.max())
    if peak < MIN_CONTRAST:
        return np.zeros_like(a)
    ink = np.clip(ink / peak, 0.0, 1.0)
    strokes = _main_strokes(ink >= STRONG, ink, b)
    return np.where(_max_filter(strokes, 2 * b + 1), ink, 0.0).astype(np.float32)


def dark_ink(a: np.ndarray) -> bool:
    """True when the strokes of ``a`` are darker than the surface around them.

    The surface is the median of the block medians over ``OPENING`` x ``OPENING`` blocks,
    which treats both polarities alike; the strokes are what departs from it by more than
    ``NOISE_SIGMAS`` noise standard deviations, and the side (darker or lighter) that
    departs by more in total wins. Unlike a comparison of the border with the middle,
    this holds under light falling off towards the border.

    Parameters
    ----------
    a : ndarray, float, shape (H, W), values in [0, 1]
        A grayscale image as read, 1 = white.
    """
    stats = block_stats(a)
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(stats.median, OPENING // 2, mode="edge"), (OPENING, OPENING)
    )
    surface = _upscale(np.median(windows, axis=(-2, -1)), a.shape)
    r = a - surface
    margin = NOISE_SIGMAS * stats.sigma
    return float(np.clip(-r - margin, 0, None).sum()) > float(np.clip(r - margin, 0, None).sum())


def _smooth(a: np.ndarray) -> np.ndarray:
    """Step 1: a box filter about an eighth of a block wide (odd; none for small images)."""
    return _box(a, 1 + 2 * round(block_size(a.shape) / 16))


def _main_strokes(strong: np.ndarray, ink: np.ndarray, b: int) -> np.ndarray:
    """The pixels of ``strong`` ((H, W) bool) that belong to the digit: blocks of side
    ``b`` holding strong pixels, joined when at most one block apart (8-connected), form
    groups; groups whose ink (sum of ``ink``) is under ``KEEP`` of the largest group's are
    dropped (specks, what a shadow's edge leaves). Returns an (H, W) bool mask."""
    h, w = strong.shape
    gh, gw = -(-h // b), -(-w // b)
    pad = ((0, gh * b - h), (0, gw * b - w))
    occupied = np.pad(strong, pad).reshape(gh, b, gw, b).any(axis=(1, 3))
    mass = np.pad(np.where(strong, ink, 0.0), pad).reshape(gh, b, gw, b).sum(axis=(1, 3))
    labels = _label(_max_filter(occupied, 3))
    totals = np.bincount(labels[occupied], weights=mass[occupied], minlength=labels.max() + 1)
    keep = totals >= KEEP * totals.max()
    keep[0] = False
    cells = keep[labels] & occupied
    return strong & np.repeat(np.repeat(cells, b, axis=0), b, axis=1)[:h, :w]


def _label(mask: np.ndarray) -> np.ndarray:
    """8-connected components of a small (gh, gw) bool grid: int labels, 0 = outside."""
    labels = np.zeros(mask.shape, dtype=np.int64)
    gh, gw = mask.shape
    count = 0
    for start in map(tuple, np.argwhere(mask)):
        if labels[start]:
            continue
        count += 1
        labels[start] = count
        stack = [start]
        while stack:
            i, j = stack.pop()
            for y in range(max(i - 1, 0), min(i + 2, gh)):
                for x in range(max(j - 1, 0), min(j + 2, gw)):
                    if mask[y, x] and not labels[y, x]:
                        labels[y, x] = count
                        stack.append((y, x))
    return labels


def _min_filter(a: np.ndarray, size: int) -> np.ndarray:
    return _separable(a, size, np.min)


def _max_filter(a: np.ndarray, size: int) -> np.ndarray:
    return _separable(a, size, np.max)


def _separable(a: np.ndarray, size: int, reduce) -> np.ndarray:
    """``reduce`` (min or max) over size x size windows, as a row pass then a column pass."""
    if size <= 1:
        return a
    half = size // 2
    rows = reduce(
        np.lib.stride_tricks.sliding_window_view(np.pad(a, ((0, 0), (half, half)), mode="edge"), size, axis=1), axis=-1
    )
    return reduce(
        np.lib.stride_tricks.sliding_window_view(np.pad(rows, ((half, half), (0, 0)), mode="edge"), size, axis=0),
        axis=-1,
    )


def _box(a: np.ndarray, size: int) -> np.ndarray:
    """Mean over size x size windows (size odd), edges extended, float32; ``a`` when size is 1."""
    if size <= 1:
        return a
    half = size // 2
    padded = np.pad(a.astype(np.float64), half, mode="edge")
    c = np.pad(padded.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    h, w = a.shape
    total = c[size : size + h, size : size + w] - c[:h, size : size + w] - c[size : size + h, :w] + c[:h, :w]
    return (total / (size * size)).astype(np.float32)
