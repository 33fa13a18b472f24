"""Turn a drawing (or any ink image) into the 28x28 input the model expects.

Follows how MNIST was made (LeCun et al., MNIST database description): the digit is
cropped to its ink, scaled to fit a 20x20 box keeping its aspect ratio with
anti-aliasing, and placed in a 28x28 field so that its centre of mass falls on the
centre pixel (row 14, column 14; MNIST test digits average 13.99 / 14.01).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

FIELD = 28
BOX = 20
CENTER = 14
INK_THRESHOLD = 0.05


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
    small = np.clip(small, 0.0, 1.0)
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
