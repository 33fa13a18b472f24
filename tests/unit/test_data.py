"""MNIST location/extraction and the drawing preprocessing."""

from __future__ import annotations

import gzip
import shutil

import numpy as np
import pytest

from capsviz.data.mnist import MNIST_FILES, MnistNotFoundError, MnistSplit, load_mnist, load_sample, prepare_mnist
from capsviz.data.preprocess import STROKE_WIDTH, preprocess_ink, preprocess_strokes

from ..conftest import mnist_root


def test_missing_data_names_the_folder(tmp_path):
    with pytest.raises(MnistNotFoundError) as err:
        load_mnist(train=False, data_root=tmp_path)
    assert str(tmp_path / "MNIST" / "raw") in str(err.value)
    assert "t10k-images-idx3-ubyte" in str(err.value)


def test_env_var_is_the_default_root(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPSVIZ_DATA", str(tmp_path))
    with pytest.raises(MnistNotFoundError, match=str(tmp_path)):
        prepare_mnist()


def test_sample_is_real_mnist():
    s = load_sample()
    assert s.images.shape == (len(s), 28, 28) and s.images.dtype == np.uint8
    assert len(s) >= 1000 and set(np.unique(s.labels)) == set(range(10))
    assert s.labels[0] == 7  # the first MNIST test image is a 7


def test_a_digit_as_a_model_input_is_its_bytes_over_255():
    images = np.zeros((2, 28, 28), np.uint8)
    images[1, 0, :3] = (0, 51, 255)
    digit = MnistSplit(images, np.array([3, 4])).image(1)
    assert digit.dtype == np.float32 and digit.shape == (28, 28)
    assert digit[0, :3].tolist() == pytest.approx([0.0, 0.2, 1.0]) and digit[1:].sum() == 0


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_extracts_archives_into_a_writable_root(tmp_path):
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for name in MNIST_FILES:
        if name.startswith("t10k"):
            shutil.copy(mnist_root() / "MNIST" / "raw" / (name + ".gz"), raw)
        else:  # the training files may already be extracted
            with gzip.open(mnist_root() / "MNIST" / "raw" / (name + ".gz")) as src, open(raw / name, "wb") as dst:
                shutil.copyfileobj(src, dst)
    test = load_mnist(train=False, data_root=tmp_path)
    assert len(test) == 10000 and (raw / "t10k-images-idx3-ubyte").is_file()
    np.testing.assert_array_equal(test.images[: len(load_sample())], load_sample().images)
    assert not list(raw.glob("*.part"))


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_full_mnist_from_read_only_archives():
    train = load_mnist(train=True)
    assert train.images.shape == (60000, 28, 28)
    assert np.bincount(train.labels).tolist()[:3] == [5923, 6742, 5958]


def test_preprocess_empty_is_none():
    assert preprocess_ink(np.zeros((280, 280), np.float32)) is None


def test_preprocess_fits_20_box_and_centres_mass():
    ink = np.zeros((280, 280), np.float32)
    ink[30:250, 100:140] = 1.0  # tall bar, 220 x 40
    out = preprocess_ink(ink)
    assert out.shape == (28, 28) and out.dtype == np.float32
    assert 0 <= out.min() and out.max() <= 1
    rows = np.flatnonzero(out.any(1))
    assert rows[-1] - rows[0] + 1 == 20  # the longer side fills the 20 px box
    cols = np.flatnonzero(out.any(0))
    assert cols[-1] - cols[0] + 1 <= 5  # aspect ratio kept (40/220*20 = 3.6)
    ys, xs = np.mgrid[:28, :28]
    cy, cx = (out * ys).sum() / out.sum(), (out * xs).sum() / out.sum()
    assert abs(cy - 14) <= 0.5 and abs(cx - 14) <= 0.5


def test_preprocess_mnist_digit_is_nearly_unchanged():
    s = load_sample()
    diffs = []
    for img in s.images[:50]:
        out = preprocess_ink(img)
        diffs.append(np.abs(out - img / 255.0).mean())
    assert np.median(diffs) < 0.05


def test_preprocess_rejects_bad_shapes():
    with pytest.raises(ValueError, match="2-D"):
        preprocess_ink(np.zeros((3, 3, 3)))
    with pytest.raises(ValueError):
        preprocess_ink(np.zeros((0, 5)))


def test_a_straight_stroke_is_drawn_at_mnists_width_filling_the_box():
    out = preprocess_strokes([[(10, 50), (250, 50)]])
    assert out.shape == (28, 28) and out.dtype == np.float32
    assert 0 <= out.min() and out.max() <= 1
    cols = np.flatnonzero(out.any(0))
    assert cols[-1] - cols[0] + 1 == 20  # the longer side, caps included, fills the 20 px box
    # ink mass = the area of the pen's path: a w x (20 - w) band and two half-disc caps
    w = STROKE_WIDTH
    assert out.sum() == pytest.approx(w * (20 - w) + np.pi * w**2 / 4, rel=0.03)
    ys, xs = np.mgrid[:28, :28]
    cy, cx = (out * ys).sum() / out.sum(), (out * xs).sum() / out.sum()
    assert abs(cy - 14) <= 0.5 and abs(cx - 14) <= 0.5
    assert out[round(cy), 10] == pytest.approx(1.0, abs=0.02)  # the stroke's core is full ink


def test_strokes_give_the_same_input_at_any_scale_and_place():
    seven = np.array([(40.0, 30.0), (200.0, 30.0), (120.0, 250.0)])
    bar = np.array([(90.0, 140.0), (170.0, 140.0)])
    out = preprocess_strokes([seven, bar])
    moved = preprocess_strokes([seven * 0.5 + 7, bar * 0.5 + 7])
    np.testing.assert_allclose(moved, out, atol=1e-6)
    assert preprocess_strokes([seven, bar], width=4.0).sum() > out.sum() * 1.4


def test_a_dot_is_one_pen_disc_and_no_stroke_is_none():
    dot = preprocess_strokes([[(5.0, 5.0)]])
    assert dot.sum() == pytest.approx(np.pi * STROKE_WIDTH**2 / 4, rel=0.1)
    assert preprocess_strokes([]) is None


def test_a_first_stroke_does_not_import_numpy_ma():
    """numpy imports numpy.ma when first used (np.unique of plain indices does): 11-22 ms
    of the app's first stroke. Checked in a fresh interpreter, where no other test has
    loaded it."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from capsviz.data.preprocess import preprocess_strokes\n"
        "t = np.linspace(0, 6, 80)\n"
        "track = np.stack([40 * np.cos(t) + t * 9, 30 * np.sin(2 * t)], axis=1)\n"
        "assert preprocess_strokes([track, track[:3] + 40]) is not None\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_preprocess_strokes_refuses_bad_strokes_and_widths():
    with pytest.raises(ValueError, match="at least one finite"):
        preprocess_strokes([np.zeros((0, 2))])
    with pytest.raises(ValueError, match="at least one finite"):
        preprocess_strokes([[(0.0, 0.0), (np.nan, 3.0)]])
    with pytest.raises(ValueError, match="width must be between"):
        preprocess_strokes([[(0, 0), (5, 5)]], width=25)


def test_truncated_archive_is_named_and_leaves_no_file(tmp_path):
    from capsviz.data.mnist import MnistDataError

    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    payload = gzip.compress(
        b"\x00\x00\x08\x03" + (60000).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2 + bytes(60000 * 784)
    )
    (raw / "train-images-idx3-ubyte.gz").write_bytes(payload[: len(payload) // 2])  # an interrupted download
    for name in ("train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        (raw / (name + ".gz")).write_bytes(gzip.compress(b"x"))
    with pytest.raises(MnistDataError, match="train-images-idx3-ubyte.gz: corrupt or truncated"):
        load_mnist(train=True, data_root=tmp_path)
    assert sorted(p.name for p in raw.iterdir() if not p.name.endswith(".gz")) == []


def _accuracy_raw_and_preprocessed(split, checkpoint):
    from capsviz.data.mnist import MnistSplit
    from capsviz.data.preprocess import preprocess_split
    from capsviz.evaluate import evaluate_model
    from capsviz.train.checkpoint import load_checkpoint

    model = load_checkpoint(checkpoint)[0]
    pre = preprocess_split(split.images)
    assert pre.shape == split.images.shape and pre.dtype == np.float32
    raw_acc = (evaluate_model(model, split) == split.labels).mean()
    pre_acc = (evaluate_model(model, MnistSplit(pre, split.labels)) == split.labels).mean()
    return 100 * raw_acc, 100 * pre_acc


@pytest.mark.slow
def test_preprocessing_mnist_digits_keeps_the_accuracy_on_the_sample(shipped_checkpoint):
    """MNIST digits through the app's preprocessing: accuracy within 0.3 points of raw."""
    raw, pre = _accuracy_raw_and_preprocessed(load_sample(), shipped_checkpoint)
    assert raw > 98.5 and abs(pre - raw) <= 0.3, (raw, pre)


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_preprocessing_mnist_digits_keeps_the_accuracy_on_the_full_test_set(shipped_checkpoint):
    raw, pre = _accuracy_raw_and_preprocessed(load_mnist(train=False, data_root=mnist_root()), shipped_checkpoint)
    assert raw > 99.0 and abs(pre - raw) <= 0.3, (raw, pre)


def _idx(kind: str, count: int, magic: int | None = None, body: int | None = None) -> bytes:
    """An IDX file: kind 'images' (count x 28 x 28) or 'labels'; ``body`` bytes of payload."""
    if kind == "images":
        head = (
            (0x803 if magic is None else magic).to_bytes(4, "big")
            + count.to_bytes(4, "big")
            + (28).to_bytes(4, "big") * 2
        )
        return head + bytes(count * 784 if body is None else body)
    head = (0x801 if magic is None else magic).to_bytes(4, "big") + count.to_bytes(4, "big")
    return head + bytes(count if body is None else body)


def _test_split(tmp_path, images: bytes, labels: bytes):
    """A data root whose test split is ``images``/``labels`` (the training files are copied good)."""
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    (raw / "t10k-images-idx3-ubyte").write_bytes(images)
    (raw / "t10k-labels-idx1-ubyte").write_bytes(labels)
    (raw / "train-images-idx3-ubyte").write_bytes(_idx("images", 60000))
    (raw / "train-labels-idx1-ubyte").write_bytes(_idx("labels", 60000))
    return raw


def test_bad_magic_number_is_named(tmp_path):
    from capsviz.data.mnist import MnistDataError

    raw = _test_split(tmp_path, _idx("images", 10000, magic=0x1F8B0808), _idx("labels", 10000))
    with pytest.raises(MnistDataError, match=r"t10k-images-idx3-ubyte: bad magic number 0x1f8b0808"):
        load_mnist(train=False, data_root=tmp_path)
    assert raw.is_dir()


def test_truncated_extracted_file_is_named(tmp_path):
    from capsviz.data.mnist import MnistDataError

    _test_split(tmp_path, _idx("images", 10000, body=5000 * 784), _idx("labels", 10000))
    with pytest.raises(
        MnistDataError,
        match=r"t10k-images-idx3-ubyte: truncated: 3,920,016 bytes, expected "
        r"7,840,016",
    ):
        load_mnist(train=False, data_root=tmp_path)


def test_image_and_label_counts_that_disagree_are_named(tmp_path):
    from capsviz.data.mnist import MnistDataError

    # right sizes on disk, but the label file's header says 9,999 labels
    labels = _idx("labels", 9999, body=10001)
    _test_split(tmp_path, _idx("images", 10000), labels)
    with pytest.raises(
        MnistDataError,
        match=r"t10k-labels-idx1-ubyte: holds 9,999 labels, expected 10,000; "
        r"the image and label files do not belong together",
    ):
        load_mnist(train=False, data_root=tmp_path)


@pytest.mark.slow
def test_bad_data_in_the_cli_is_one_line(tmp_path):
    from .test_cli import capsviz

    _test_split(tmp_path, _idx("images", 10000, magic=0x0), _idx("labels", 10000))
    r = capsviz("eval", "--data-root", str(tmp_path))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "bad magic number" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
