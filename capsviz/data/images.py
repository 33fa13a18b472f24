"""Read image files as ink: grayscale, light ink on a dark background, in [0, 1]; write a
grayscale image as a PNG (:func:`save_grey_png`)."""

from __future__ import annotations

import io
import os
from typing import BinaryIO

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from capsviz.data import background
from capsviz.texts import _

MAX_PIXELS = 50_000_000  # larger images are refused: a decompression bomb, or no digit photo
WORK_SIDE = 1024  # images are downscaled to this longer side before anything else


class ImageReadError(ValueError):
    """A file that cannot be read as an image; the message names the file and why."""


def _name(source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return getattr(source, "name", None) or "image data"


def load_ink(
    source: str | os.PathLike | BinaryIO | bytes,
    invert: bool | None = None,
    name: str | None = None,
    remove_background: bool = True,
) -> np.ndarray:
    """Read an image (a file, a binary file object or encoded bytes) as an ink image.

    - Colour, palette, CMYK and 16-bit images become grayscale.
    - In an image with transparent pixels, the opaque pixels are the ink.
    - Dark ink on a light background is inverted when ``invert`` is None and the image's
      border is brighter than its middle on average; pass True/False to force it.
    - A background that would count as ink (paper that is not white, uneven light, a
      shadow, grain) is taken away when ``remove_background`` is True:
      :func:`capsviz.data.background.remove_background`, with ``paper`` set when the image
      is inverted. For such a photo, when ``invert`` is None, the polarity is the strokes'
      own (:func:`~capsviz.data.background.dark_ink`), not the border's: light falling off
      towards the edges makes the border of a page darker than its middle. An image whose
      background is dark comes back as read.
    - Images with more than ``WORK_SIDE`` (1024) pixels on a side are downscaled (box
      filter; JPEGs already while decoding), so a 40-megapixel photo costs little memory.
    - Images of more than ``MAX_PIXELS`` (50 M) pixels are refused before decoding.

    Returns
    -------
    ndarray, float32, shape (H, W), values in [0, 1], ink bright; H, W <= 1024

    Raises
    ------
    ImageReadError
        If the file is missing, not an image, truncated, or too large to decode safely.
    """
    name = name or _name(source)
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(source)
    try:
        with Image.open(source) as im:
            if im.width * im.height > MAX_PIXELS:
                raise ImageReadError(
                    _(
                        "{name}: {width} × {height} pixels is more than capsviz opens ({megapixels} "
                        "megapixels; a decompression bomb?)",
                        name=name,
                        width=im.width,
                        height=im.height,
                        megapixels=MAX_PIXELS // 1_000_000,
                    )
                )
            if im.format == "JPEG":
                im.draft("L" if im.mode == "L" else "RGB", (WORK_SIDE, WORK_SIDE))
            im.load()
            im = ImageOps.exif_transpose(im)
            a, is_ink = _grayscale(im)
    except ImageReadError:
        raise
    except FileNotFoundError:
        raise ImageReadError(_("{name}: no such file", name=name)) from None
    except IsADirectoryError:
        raise ImageReadError(_("{name}: is a folder, not an image", name=name)) from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageReadError(_("{name}: image too large to open safely ({exc})", name=name, exc=exc)) from None
    except UnidentifiedImageError:
        raise ImageReadError(_("{name}: not an image file (or a format Pillow cannot read)", name=name)) from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ImageReadError(_("{name}: not a readable image ({exc})", name=name, exc=exc)) from None
    if a.ndim != 2 or a.size == 0:
        raise ImageReadError(_("{name}: not a 2-D image", name=name))
    auto = invert is None and not is_ink
    if invert is None:
        invert = not is_ink and light_background(a)
    ink = np.clip(1.0 - a if invert else a, 0.0, 1.0).astype(np.float32)
    if not remove_background:
        return ink
    cleaned = background.remove_background(ink, paper=invert)
    if cleaned is not ink and auto and background.dark_ink(a) != invert:
        # a photo: the strokes' own contrast decides the polarity (uneven light fools the border)
        invert = not invert
        ink = np.clip(1.0 - a if invert else a, 0.0, 1.0).astype(np.float32)
        cleaned = background.remove_background(ink, paper=invert)
    return cleaned


def load_input(
    source: str | os.PathLike | BinaryIO | bytes,
    invert: bool | None = None,
    name: str | None = None,
    remove_background: bool = True,
    size: int = 28,
) -> tuple[np.ndarray, np.ndarray]:
    """An image file as the input of a model for ``size`` x ``size`` images (the app,
    ``classify`` and ``trace``).

    - An image of exactly that size is the input as stored (grayscale, inverted when dark ink
      on light, per ``invert``): no background removal, crop or centring, like a MNIST digit
      (28) or a MultiMNIST pair (36).
    - Any other image: :func:`load_ink`, then MNIST-style
      :func:`~capsviz.data.preprocess.preprocess_ink` to 28 x 28; for ``size`` 36 (MultiMNIST)
      that field is placed in the middle of the 36 x 36 one, where the recipe places an
      unshifted digit (:data:`capsviz.data.multimnist.PAD` = 4 px around it).

    Returns (input (size, size) float32 in [0, 1], ink (H, W) float32 in [0, 1]).

    Raises
    ------
    ImageReadError
        As :func:`load_ink`, or when the image holds no ink; ``name`` (default: the path,
        or "image data") starts the message.
    ValueError
        If ``size`` is smaller than 28 or of another parity.
    """
    from capsviz.data.preprocess import FIELD, preprocess_ink

    if size < FIELD or (size - FIELD) % 2:
        raise ValueError(_("size must be 28 + an even number of pixels, got {size}", size=size))
    as_stored = _pixel_size(source) == (size, size)
    ink = load_ink(source, invert=invert, name=name, remove_background=remove_background and not as_stored)
    if as_stored:
        if not (ink > 0).any():
            raise ImageReadError(_("{source}: no ink found (an empty image)", source=name or _name(source)))
        return ink.copy(), ink
    image = preprocess_ink(ink)
    if image is None:
        raise ImageReadError(_("{source}: no ink found (an empty image)", source=name or _name(source)))
    pad = (size - FIELD) // 2
    return np.pad(image, pad), ink


def _pixel_size(source) -> tuple[int, int] | None:
    """(width, height) from the image header, or None when it cannot be read (then
    :func:`load_ink` says why). A file object is left at the position it was at."""
    try:
        if isinstance(source, (bytes, bytearray)):
            source = io.BytesIO(source)
        position = source.tell() if hasattr(source, "read") else None
        try:
            with Image.open(source) as im:
                return im.size
        finally:
            if position is not None:
                source.seek(position)
    except Exception:  # any unreadable file: load_ink reports it
        return None


def _grayscale(im: Image.Image) -> tuple[np.ndarray, bool]:
    """Any Pillow image -> ((H, W) float32 in [0, 1] downscaled to WORK_SIDE, is_ink).

    ``is_ink`` is True when the image has real transparency: then the alpha channel is
    the ink (opaque strokes, whatever their colour), already light on dark.
    """
    if im.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        a = np.asarray(im, dtype=np.float32)
        if im.mode != "F":
            a = a / (65535.0 if a.max() > 255 else 255.0)
        return _downscale(np.nan_to_num(a, nan=0.0, posinf=1.0, neginf=0.0)), False
    if "A" in im.getbands() or (im.mode == "P" and "transparency" in im.info):
        alpha = np.asarray(im.convert("RGBA").getchannel("A"), dtype=np.float32) / 255.0
        if alpha.min() < 0.5:
            return _downscale(alpha), True
    return _downscale(np.asarray(im.convert("L"), dtype=np.float32) / 255.0), False


def _downscale(a: np.ndarray) -> np.ndarray:
    h, w = a.shape
    if max(h, w) <= WORK_SIDE:
        return a
    scale = WORK_SIDE / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    image = Image.fromarray(np.ascontiguousarray(a, dtype=np.float32), mode="F")
    return np.asarray(image.resize(size, Image.Resampling.BOX), dtype=np.float32)


def light_background(a: np.ndarray) -> bool:
    """True when the border of ``a`` ((H, W) in [0, 1]) is brighter than the image on
    average and brighter than mid-grey: dark ink on paper."""
    border = np.concatenate([a[0], a[-1], a[:, 0], a[:, -1]])
    return float(border.mean()) > float(a.mean()) and float(border.mean()) > 0.5


def grey_levels(image) -> np.ndarray:
    """``image`` (values in [0, 1]; NaN as 0, values outside clipped) as 8-bit grey levels,
    rounded to the nearest: uint8 of its shape."""
    return (np.clip(np.nan_to_num(np.asarray(image, dtype=np.float32)), 0, 1) * 255).round().astype(np.uint8)


def save_grey_png(image: np.ndarray, path: str | os.PathLike, scale: int = 1) -> None:
    """Write ``image`` ((H, W) in [0, 1]; values outside are clipped) as an 8-bit grayscale
    image file at ``path`` (a PNG for a ``.png`` path; PIL picks the format by the suffix),
    each pixel ``scale`` x ``scale`` (``scale`` >= 1). Raises ``OSError`` when the file
    cannot be written, ``ValueError`` for a suffix PIL does not know."""
    img = Image.fromarray(grey_levels(image), mode="L")
    img.resize((img.width * scale, img.height * scale), Image.Resampling.NEAREST).save(path)
