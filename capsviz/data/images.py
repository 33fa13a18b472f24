"""Read image files as ink: grayscale, light ink on a dark background, in [0, 1]."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError


class ImageReadError(ValueError):
    """A file that cannot be read as an image; the message names the file and why."""


def load_ink(path: str | os.PathLike, invert: bool | None = None) -> np.ndarray:
    """Read an image file as an ink image.

    Colour, palette and 16-bit images become grayscale; in an image with transparent
    pixels the opaque pixels are the ink. Dark ink on a light background is inverted when ``invert`` is None
    and the image's border is brighter than its middle on average; pass True/False to
    force it.

    Returns
    -------
    ndarray, float32, shape (H, W), values in [0, 1], ink bright

    Raises
    ------
    ImageReadError
        If the file is missing, not an image, truncated, or too large to decode safely.
    """
    path = Path(path)
    try:
        with Image.open(path) as im:
            im.load()
            im = ImageOps.exif_transpose(im)
            if im.mode in ("I;16", "I;16B", "I;16L", "I"):
                a = np.asarray(im, dtype=np.float64)
                a = a / (65535.0 if a.max() > 255 else 255.0)
            else:
                if "A" in im.getbands() or (im.mode == "P" and "transparency" in im.info):
                    im = im.convert("RGBA")
                    alpha = np.asarray(im.getchannel("A"), dtype=np.float64) / 255.0
                    if alpha.min() < 0.5:
                        # real transparency: the strokes are the opaque pixels
                        a, invert = alpha, False if invert is None else invert
                    else:
                        a = np.asarray(im.convert("L"), dtype=np.float64) / 255.0
                else:
                    a = np.asarray(im.convert("L"), dtype=np.float64) / 255.0
    except FileNotFoundError:
        raise ImageReadError(f"{path}: no such file") from None
    except Image.DecompressionBombError as exc:
        raise ImageReadError(f"{path}: image too large to open safely ({exc})") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise ImageReadError(f"{path}: not a readable image ({exc})") from None
    if a.ndim != 2 or a.size == 0:
        raise ImageReadError(f"{path}: not a 2-D image")
    if invert is None:
        border = np.concatenate([a[0], a[-1], a[:, 0], a[:, -1]])
        invert = float(border.mean()) > float(a.mean()) and float(border.mean()) > 0.5
    if invert:
        a = 1.0 - a
    return np.clip(a, 0.0, 1.0).astype(np.float32)
