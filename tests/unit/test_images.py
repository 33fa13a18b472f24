"""Image files as input: formats, polarity, size limits, bad files, and `capsviz classify`."""

from __future__ import annotations

import json
import struct
import sys
import zlib

import numpy as np
import pytest
from PIL import Image

from capsviz.data.images import WORK_SIDE, ImageReadError, grey_levels, load_ink, save_grey_png
from capsviz.data.mnist import load_sample
from capsviz.data.preprocess import preprocess_ink
from capsviz.model.inference import capsule_lengths

from ..conftest import ROOT
from .test_cli import capsviz

sys.path.insert(0, str(ROOT / "tools"))
from fine_lines import written  # noqa: E402  (tools/fine_lines.py: a pen path on a 400 px page)


@pytest.fixture(scope="module")
def model():
    from capsviz.paths import shipped_checkpoint
    from capsviz.train.checkpoint import load_checkpoint

    return load_checkpoint(shipped_checkpoint())[0]


@pytest.fixture(scope="module")
def digits():
    s = load_sample()
    return s.images[:6], s.labels[:6]


def big_paper_digit(digit: np.ndarray, side: int = 300) -> np.ndarray:
    """A 28x28 MNIST digit as dark ink on light paper, upscaled to side x side, uint8."""
    ink = np.asarray(Image.fromarray(digit).resize((side, side), Image.Resampling.BILINEAR))
    return 255 - ink


def predict(model, path_or_bytes, invert=None) -> tuple[int, np.ndarray]:
    x = preprocess_ink(load_ink(path_or_bytes, invert=invert))
    lengths = capsule_lengths(model, x[None])[0]
    return int(lengths.argmax()), x


def test_dark_on_light_and_light_on_dark_agree(model, digits, tmp_path):
    for k, (digit, label) in enumerate(zip(*digits, strict=True)):
        paper = big_paper_digit(digit)
        Image.fromarray(paper).save(tmp_path / f"dark{k}.png")
        Image.fromarray(255 - paper).save(tmp_path / f"light{k}.png")
        p_dark, x_dark = predict(model, tmp_path / f"dark{k}.png")
        p_light, x_light = predict(model, tmp_path / f"light{k}.png")
        assert p_dark == p_light == label
        np.testing.assert_allclose(x_dark, x_light, atol=1e-5)
        # forcing the wrong polarity reads what is lighter than the paper around it (the
        # gaps between strokes) as ink, or with the background kept, the paper: a different input
        _, x_forced = predict(model, tmp_path / f"dark{k}.png", invert=False)
        assert np.abs(x_forced - x_dark).mean() > 0.03
        x_paper = preprocess_ink(load_ink(tmp_path / f"dark{k}.png", invert=False, remove_background=False))
        assert np.abs(x_paper - x_dark).mean() > 0.1


def test_rgba_16bit_and_jpeg_of_one_digit_agree(model, digits, tmp_path):
    digit, label = digits[0][0], digits[1][0]
    paper = big_paper_digit(digit)
    rgba = np.zeros((*paper.shape, 4), np.uint8)
    rgba[..., :3] = (40, 30, 200)  # blue ink on a transparent background
    rgba[..., 3] = 255 - paper
    Image.fromarray(rgba, mode="RGBA").save(tmp_path / "d.png")
    Image.fromarray(paper.astype(np.uint16) * 257).save(tmp_path / "d16.png")
    Image.fromarray(np.stack([paper, paper, paper], -1)).save(tmp_path / "d.jpg", quality=90)
    Image.fromarray(paper).convert("P").save(tmp_path / "d.gif")
    with Image.open(tmp_path / "d16.png") as im:
        assert im.mode.startswith("I")  # really 16-bit
    names = ("d.png", "d16.png", "d.jpg", "d.gif")
    preds, inputs = zip(*(predict(model, tmp_path / name) for name in names), strict=True)
    assert set(preds) == {label}
    for x in inputs[1:]:
        assert np.abs(x - inputs[0]).max() < 0.1


def test_a_truncated_file_and_a_text_file_named_png_give_clear_errors(digits, tmp_path):
    Image.fromarray(big_paper_digit(digits[0][0])).save(tmp_path / "ok.png")
    data = (tmp_path / "ok.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(data[: len(data) // 2])
    (tmp_path / "notes.png").write_text("not an image at all\n")
    with pytest.raises(ImageReadError, match=r"cut\.png: not a readable image"):
        load_ink(tmp_path / "cut.png")
    with pytest.raises(ImageReadError, match=r"notes\.png: not an image file"):
        load_ink(tmp_path / "notes.png")
    with pytest.raises(ImageReadError, match=r"missing\.png: no such file"):
        load_ink(tmp_path / "missing.png")


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims width x height pixels (a decompression bomb)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    body = zlib.compress(b"\x00" * 64)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


@pytest.mark.parametrize("side", [8000, 40000])
def test_decompression_bombs_are_refused_before_decoding(side):
    with pytest.raises(ImageReadError, match="too large|more than capsviz opens"):
        load_ink(png_claiming(side, side))


def test_a_large_photo_is_downscaled(digits):
    paper = big_paper_digit(digits[0][0], side=3000)
    im = Image.fromarray(paper).resize((3000, 2000))
    import io

    buf = io.BytesIO()
    im.save(buf, "PNG")
    ink = load_ink(buf.getvalue())
    assert ink.shape == (683, WORK_SIDE) and ink.dtype == np.float32
    assert 0.0 <= ink.min() and ink.max() <= 1.0


@pytest.mark.slow
def test_classify_json_lines(digits, tmp_path):
    names = []
    for k, digit in enumerate(digits[0][:3]):
        Image.fromarray(big_paper_digit(digit)).save(tmp_path / f"d{k}.png")
        names.append(str(tmp_path / f"d{k}.png"))
    (tmp_path / "bad.png").write_text("hello")
    r = capsviz("classify", "--json", names[0], str(tmp_path / "bad.png"), *names[1:])
    assert r.returncode == 1, r.stderr  # one file failed
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert [d["file"] for d in lines] == [names[0], str(tmp_path / "bad.png"), *names[1:]]
    good = [d for d in lines if "error" not in d]
    assert [d["prediction"] for d in good] == digits[1][:3].tolist()
    for d in good:
        assert len(d["lengths"]) == 10 and all(0 <= v < 1 for v in d["lengths"])
        assert d["prediction"] == int(np.argmax(d["lengths"]))
    assert "bad.png: not an image file" in lines[1]["error"]
    ok = capsviz("classify", *names)
    assert ok.returncode == 0 and len(ok.stdout.splitlines()) == 3 and ok.stdout.startswith(f"{names[0]}: 7 (")


def test_a_grey_png_holds_the_image_in_8_bits_each_pixel_scaled(tmp_path):
    image = np.array([[0.0, 0.5], [1.0, 2.0]], np.float32)  # 2.0 is clipped to white
    save_grey_png(image, tmp_path / "grid.png", scale=3)
    with Image.open(tmp_path / "grid.png") as png:
        assert png.format == "PNG" and png.mode == "L" and png.size == (6, 6)
        pixels = np.asarray(png)
    assert pixels[::3, ::3].tolist() == [[0, 128], [255, 255]]
    assert (pixels[:3, :3] == 0).all() and (pixels[3:, 3:] == 255).all()


def test_grey_levels_round_to_8_bits_and_clip_what_is_outside():
    levels = grey_levels(np.array([[0.0, 0.5, 0.1], [1.0, 2.0, np.nan]], np.float64))
    assert levels.dtype == np.uint8 and levels.tolist() == [[0, 128, 26], [255, 255, 0]]


def mass_per_length(x: np.ndarray) -> float:
    """Ink mass over the skeleton's pixel count of a 28x28 input, at 8x (model pixels)."""
    from capsviz.data.preprocess import thin

    big = np.asarray(Image.fromarray(x, mode="F").resize((224, 224), Image.Resampling.BILINEAR))
    return float(x.sum()) / (thin(big >= 0.3 * big.max()).sum() / 8)


@pytest.mark.parametrize("width", [1, 3])
def test_a_fine_liners_digits_are_drawn_again_at_mnists_width_and_read(model, tmp_path, width):
    """Lines 1 and 3 px wide on a 400 px page come out 0.1-0.3 px wide in 28x28, fainter than
    any MNIST digit; their centre line is drawn again with MNIST's pen (2.35 px), and each
    digit reads as itself with a capsule longer than 0.5."""
    from capsviz.data.preprocess import RESTROKE_BELOW, STROKE_WIDTH

    for digit in (0, 1, 2, 4, 7):
        path = tmp_path / f"{digit}.png"
        Image.fromarray(written(digit, width)).save(path)
        answer, x = predict(model, path)
        assert answer == digit and capsule_lengths(model, x[None])[0].max() > 0.5
        assert mass_per_length(x) > RESTROKE_BELOW and abs(mass_per_length(x) - STROKE_WIDTH) < 0.8
        assert x.max() > 0.95  # full ink, not a faint trace


def test_strokes_of_mnists_width_are_scaled_as_they_are(digits):
    """Lines 40 px wide on the 400 px page (about 3 px in 28x28) and MNIST digits are scaled
    into the box as they are, not drawn again."""
    from capsviz.data.preprocess import BOX, _restroked

    for digit in (0, 1, 2, 4, 7):
        page = 255 - written(digit, 40)  # light ink on dark: the crop is the ink's box
        rows, cols = np.flatnonzero((page > 12).any(1)), np.flatnonzero((page > 12).any(0))
        crop = page[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1].astype(np.float32) / 255
        assert _restroked(crop) is None, (digit, 40 * BOX / max(crop.shape))
    for image in digits[0]:
        rows, cols = np.flatnonzero((image > 12).any(1)), np.flatnonzero((image > 12).any(0))
        crop = image[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1].astype(np.float32) / 255
        assert _restroked(crop) is None
    assert _restroked(np.zeros((5, 5), np.float32)) is None  # no ink: nothing to draw again
