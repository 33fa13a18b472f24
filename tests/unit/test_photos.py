"""Photos of digits on paper: background removal, and clean images read exactly as without it."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from capsviz.data import background
from capsviz.data.images import ImageReadError, light_background, load_ink, load_input
from capsviz.data.mnist import load_sample
from capsviz.data.photo import KINDS, kind_rng, render_photo
from capsviz.data.preprocess import preprocess_ink
from capsviz.model.inference import capsule_lengths

from ..conftest import SHIPPED

PER_KIND = 16


@pytest.fixture(scope="module")
def model():
    from capsviz.train.checkpoint import load_checkpoint

    return load_checkpoint(SHIPPED)[0]


@pytest.fixture(scope="module")
def sample():
    return load_sample()


def encode(array: np.ndarray, fmt: str = "PNG", **options) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, fmt, **options)
    return buf.getvalue()


def upscaled(digit: np.ndarray, side: int = 300) -> np.ndarray:
    return np.asarray(Image.fromarray(digit).resize((side, side), Image.Resampling.BILINEAR))


CLEAN_FORMS = {
    "mnist png": lambda d: encode(d),
    "dark on light 300 px": lambda d: encode(255 - upscaled(d)),
    "light on dark 300 px": lambda d: encode(upscaled(d)),
    "jpeg scan": lambda d: encode(np.stack([255 - upscaled(d)] * 3, -1), "JPEG", quality=90),
    "off-white scan": lambda d: encode((250 - 0.9 * upscaled(d)).astype(np.uint8)),
    "transparent png": lambda d: encode(np.dstack([np.full((300, 300, 3), (40, 30, 200), np.uint8), upscaled(d)])),
    "16-bit": lambda d: encode((255 - upscaled(d)).astype(np.uint16) * 257),
}


@pytest.mark.parametrize("form", CLEAN_FORMS)
def test_clean_images_give_exactly_the_plain_crop(sample, form):
    count = 300 if form == "mnist png" else 60
    for digit in sample.images[:count]:
        data = CLEAN_FORMS[form](digit)
        plain = load_ink(data, remove_background=False)
        x, ink = load_input(data)
        assert np.array_equal(ink, plain)
        if form == "mnist png":  # already the model's input size: the digit as stored
            assert np.array_equal(x, digit / np.float32(255.0))
        else:
            assert np.array_equal(x, preprocess_ink(plain))


def tight_crop(digit: np.ndarray, scale: int = 10) -> bytes:
    """``digit`` cropped to its ink (its strokes run off every side), magnified, dark on light."""
    rows, cols = np.flatnonzero(digit.any(axis=1)), np.flatnonzero(digit.any(axis=0))
    crop = Image.fromarray(np.ascontiguousarray(digit[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]))
    return encode(255 - np.asarray(crop.resize((crop.width * scale, crop.height * scale), Image.Resampling.BILINEAR)))


def test_tight_crops_are_read_as_the_plain_crop_reads_them(model, sample):
    """A stroke that runs along the image's edge at a grey level looks like background
    there: the border test keeps all but a few such images as read, and those few are
    read as the same digit."""
    cleaned, plain = zip(
        *(
            (load_input(data)[0], load_input(data, remove_background=False)[0])
            for data in map(tight_crop, sample.images[:100])
        ),
        strict=True,
    )
    same = sum(np.array_equal(x, y) for x, y in zip(cleaned, plain, strict=True))
    assert same >= 97
    assert np.array_equal(
        capsule_lengths(model, np.stack(cleaned)).argmax(1), capsule_lengths(model, np.stack(plain)).argmax(1)
    )


def test_an_mnist_digit_is_its_own_background_free_ink(sample):
    for digit in sample.images[:300]:
        a = digit.astype(np.float32) / 255
        assert background.remove_background(a, paper=False) is a
        assert background.remove_background(a, paper=True) is a


@pytest.mark.parametrize("kind", KINDS)
def test_photos_are_read_as_their_digit(model, sample, kind):
    order = np.random.default_rng(7).permutation(len(sample))[:PER_KIND]
    inputs = np.stack([load_input(render_photo(sample.images[i], kind, kind_rng(7, kind, int(i))))[0] for i in order])
    predictions = capsule_lengths(model, inputs).argmax(1)
    correct = int((predictions == sample.labels[order]).sum())
    assert correct >= PER_KIND - 1, f"{kind}: {correct} of {PER_KIND} read correctly"
    border = np.concatenate([inputs[:, 0], inputs[:, -1], inputs[:, :, 0], inputs[:, :, -1]], axis=1)
    assert (border == 0).mean() > 0.95  # cropped to the digit, not to the photo


def paper_photo(digit: np.ndarray) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A 360 x 480 photo of ``digit`` on grey paper under light falling off from left to
    right (0.9 to 0.45), grain sigma 0.02; uint8 RGB and the digit's ink box (inclusive)."""
    rng = np.random.default_rng(3)
    coverage = np.zeros((360, 480))
    coverage[100:300, 220:420] = upscaled(digit, 200) / 255
    light = np.linspace(0.9, 0.45, 480)[None, :, None]
    photo = light * ((1 - coverage[..., None]) * (0.85, 0.84, 0.80) + coverage[..., None] * 0.1)
    photo = np.clip(photo + rng.normal(0, 0.02, photo.shape), 0, 1)
    rows = np.flatnonzero(coverage.max(axis=1) > 0.25)
    cols = np.flatnonzero(coverage.max(axis=0) > 0.25)
    return (photo * 255).round().astype(np.uint8), (rows[0], rows[-1], cols[0], cols[-1])


def test_the_crop_of_a_photo_of_paper_is_tight_around_the_ink(model, sample):
    for k in range(4):
        photo, (top, bottom, left, right) = paper_photo(sample.images[k])
        data = encode(photo, "JPEG", quality=60)
        plain = load_ink(data, remove_background=False)
        assert background.crop_box(plain) == (0, 359, 0, 479)  # all paper counts as ink
        ink = load_ink(data)
        box = background.crop_box(ink)
        assert box is not None
        assert abs(box[0] - top) <= 8 and abs(box[1] - bottom) <= 8
        assert abs(box[2] - left) <= 8 and abs(box[3] - right) <= 8
        x = preprocess_ink(ink)
        assert int(capsule_lengths(model, x[None])[0].argmax()) == sample.labels[k]


def test_vignetted_paper_is_inverted_although_its_border_is_dark(sample):
    """Light falling off towards the corners makes the border darker than the middle:
    the border test reads such a page as light ink on dark, the strokes do not."""
    coverage = np.zeros((300, 300))
    coverage[50:250, 50:250] = upscaled(sample.images[0], 200) / 255
    y, x = np.mgrid[0:300, 0:300] / 300
    light = 1 - 0.6 * ((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.5
    photo = light * (1 - 0.9 * coverage)
    a = photo.astype(np.float32)
    assert not light_background(a)
    assert background.dark_ink(a)
    ink = load_ink(encode((photo * 255).round().astype(np.uint8)))
    assert ink[150, 150] == 0 and ink[5, 5] == 0 and ink.max() == 1  # background gone, strokes at 1


def test_blank_paper_has_no_ink():
    rng = np.random.default_rng(0)
    page = np.clip(np.linspace(0.9, 0.55, 400)[None, :] + rng.normal(0, 0.02, (300, 400)), 0, 1)
    data = encode((page * 255).round().astype(np.uint8))
    assert background.crop_box(load_ink(data, remove_background=False)) is not None
    assert not load_ink(data).any()
    with pytest.raises(ImageReadError, match="no ink found"):
        load_input(data, name="blank.png")


def test_remove_background_refuses_a_non_2d_array():
    with pytest.raises(ValueError, match="2-D"):
        background.remove_background(np.zeros((3, 3, 3), np.float32), paper=True)
    with pytest.raises(ValueError, match="2-D"):
        background.subtract_background(np.zeros((0, 4), np.float32), paper=False)
