"""Property-based tests: preprocessing and image loading never crash on odd input; they
give a 28x28 float32 in [0, 1] (or None for no ink), or a clear error."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from PIL import Image

from capsviz.data.images import ImageReadError, load_ink
from capsviz.data.preprocess import preprocess_ink

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

shapes = st.one_of(
    st.tuples(st.integers(1, 64), st.integers(1, 64)),
    st.sampled_from([(1, 1), (10000, 3), (3, 10000), (1, 500), (2000, 2000)]),
)
dtypes = st.sampled_from([np.uint8, np.uint16, np.int32, np.float32, np.float64, np.bool_])


def check_input(x):
    assert x is None or (
        x.shape == (28, 28) and x.dtype == np.float32 and np.isfinite(x).all() and x.min() >= 0 and x.max() <= 1
    )


@st.composite
def images(draw):
    shape = draw(shapes)
    dtype = draw(dtypes)
    kind = draw(st.sampled_from(["random", "constant", "sparse", "nan"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype == np.bool_:
        a = rng.random(shape) < 0.1
    elif np.issubdtype(dtype, np.integer):
        top = {np.uint8: 255, np.uint16: 65535, np.int32: 255}[dtype]
        a = rng.integers(0, top + 1, shape).astype(dtype)
    else:
        a = rng.random(shape).astype(dtype)
    if kind == "constant":
        a = np.full(shape, a.flat[0], dtype=dtype)
    elif kind == "sparse":
        a = (a * (rng.random(shape) < 0.02)).astype(dtype)
    elif kind == "nan" and np.issubdtype(dtype, np.floating):
        a[rng.random(shape) < 0.3] = np.nan
        a.flat[0] = np.inf
    return a


@SETTINGS
@given(images())
def test_preprocess_any_array(a):
    check_input(preprocess_ink(a))


@SETTINGS
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 40), st.integers(1, 40)),
        elements=st.floats(allow_nan=True, allow_infinity=True, width=64),
    )
)
def test_preprocess_any_floats(a):
    check_input(preprocess_ink(a))


@pytest.mark.parametrize("bad", [np.zeros((0, 5)), np.zeros((3, 3, 3)), np.zeros(7), np.array(1.0)])
def test_preprocess_bad_shapes_raise_value_error(bad):
    with pytest.raises(ValueError, match="2-D"):
        preprocess_ink(bad)


MODES = ["L", "RGB", "RGBA", "LA", "P", "1", "I;16", "I", "F", "CMYK"]


@SETTINGS
@given(
    st.sampled_from(MODES),
    st.tuples(st.integers(1, 80), st.integers(1, 80)),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["PNG", "TIFF", "BMP", "JPEG", "GIF", "WEBP"]),
    st.sampled_from([None, True, False]),
)
def test_load_any_image(mode, size, seed, fmt, invert):
    rng = np.random.default_rng(seed)
    base = Image.fromarray(rng.integers(0, 256, (size[1], size[0], 4), dtype=np.uint8), "RGBA")
    try:
        im = base.convert(mode)
        buf = io.BytesIO()
        im.save(buf, fmt)
    except (OSError, ValueError, KeyError):
        return  # Pillow cannot write this mode in this format: nothing to read
    ink = load_ink(buf.getvalue(), invert=invert)
    assert ink.dtype == np.float32 and ink.ndim == 2 and ink.size > 0
    assert np.isfinite(ink).all() and ink.min() >= 0 and ink.max() <= 1
    check_input(preprocess_ink(ink))


@SETTINGS
@given(st.binary(max_size=2048))
def test_random_bytes_are_a_clear_error_or_an_image(data):
    try:
        ink = load_ink(data)
    except ImageReadError as exc:
        assert str(exc).startswith("image data: ") and "\n" not in str(exc)
    else:
        check_input(preprocess_ink(ink))


@SETTINGS
@given(st.sampled_from(["PNG", "JPEG", "GIF"]), st.integers(1, 200))
def test_truncated_images_are_a_clear_error(fmt, cut):
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(cut).integers(0, 256, (40, 40), dtype=np.uint8)).save(buf, fmt)
    data = buf.getvalue()
    try:
        load_ink(data[: max(1, len(data) - cut)])
    except ImageReadError as exc:
        assert "\n" not in str(exc)
