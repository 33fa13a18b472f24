"""The benchmarks' own arithmetic: what they print is read as the project's figures."""

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


def benchmark(name: str):
    """benchmarks/<name>.py as a module; its folder is importable, as when the script runs
    (the benchmarks share train_speed's time_interleaved)."""
    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.append(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def train_speed():
    return benchmark("train_speed")


def by_call(lines: list[str]) -> dict[str, list[str]]:
    """The per-call table's rows after its header: the text after the three figure columns
    (operator, types, shapes) -> those figures (ms, calls, GFLOP/s or blank)."""
    width = len(lines[0]) - len("operator, types, shapes")
    return {line[width:]: line[:width].split() for line in lines[1:]}


def test_product_flop_counts_two_per_multiply_add(train_speed):
    assert train_speed.product_flop("aten::mm", [[3, 4], [4, 5]]) == 2 * 3 * 4 * 5
    assert train_speed.product_flop("aten::bmm", [[7, 3, 4], [7, 4, 5]]) == 2 * 7 * 3 * 4 * 5
    assert train_speed.product_flop("aten::addmm", [[5], [3, 4], [4, 5], [], []]) == 2 * 3 * 4 * 5
    assert train_speed.product_flop("aten::baddbmm", [[7, 3, 5], [7, 3, 4], [7, 4, 5], [], []]) == 2 * 7 * 3 * 4 * 5
    assert train_speed.product_flop("aten::copy_", [[3, 4], [3, 4], []]) == 0
    assert train_speed.product_flop("aten::mm", []) == 0  # a profile without record_shapes


def test_layout_marks_tell_transposed_from_broadcast_and_sliced(train_speed):
    def mark(t):
        return train_speed.layout_mark(list(t.shape), list(t.stride()))

    x = torch.zeros(4, 6, 8)
    assert mark(x) == "" and mark(x[:1]) == "" and mark(x[0]) == "" and mark(x[:, :1]) == "S"
    assert mark(x.transpose(1, 2)) == "T" and mark(x.permute(2, 0, 1)) == "T"
    assert mark(torch.zeros(6, 8).expand(4, 6, 8)) == "B"
    assert mark(x[:, :, :4]) == "S" and mark(x[:, ::2]) == "S"


def test_operator_calls_name_types_layouts_and_rates(train_speed):
    from torch.profiler import profile

    a = torch.randn(6, 64, 32)
    b = torch.randn(6, 16, 32)
    c, d = torch.randn(6, 256, 256), torch.randn(6, 256, 128)
    with profile(record_shapes=True) as prof:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for _ in range(3):
                torch.bmm(a, b.transpose(1, 2))  # b read transposed, both cast to bfloat16
        torch.bmm(c, d)  # float32, both row-major
    lines = train_speed.operator_calls(prof, rows=50)
    assert lines[0].split()[:3] == ["ms", "calls", "GFLOP/s"]
    rows = by_call(lines)
    bf16 = rows["aten::bmm bf16/bf16 6x64x32, 6x32x16T"]
    fp32 = rows["aten::bmm fp32/fp32 6x256x256, 6x256x128"]
    assert bf16[1] == "3" and fp32[1] == "1"
    # autocast's own bmm over the bfloat16 one (float32 in, its self time the dispatch) is no product call
    assert not any(key.startswith("aten::bmm fp32/fp32 6x64x32") for key in rows)
    ms, rate = float(fp32[0]), float(fp32[2])
    # the rate comes from the unrounded time: the shown ms are at most 0.005 off, the rate 0.05
    assert rate == pytest.approx(2 * 6 * 256 * 256 * 128 / (ms * 1e6), rel=0.006 / ms + 0.06 / rate)
    assert any(key.startswith("aten::copy_ fp32->bf16 6x64x32") for key in rows)
    assert not any(key.startswith("aten::copy_") and "bf16->fp32" in key for key in rows)


def test_operator_calls_name_conversions_from_any_type(train_speed):
    from torch.profiler import profile

    counts = torch.arange(12).reshape(3, 4)
    with profile(record_shapes=True) as prof:
        torch.zeros(3, 4).copy_(counts)  # int64 into float32
        torch.zeros(3, 4).copy_(torch.ones(3, 4))
    rows = by_call(train_speed.operator_calls(prof, rows=50))
    assert "aten::copy_ long int->fp32 3x4, 3x4" in rows and "aten::copy_ fp32 3x4, 3x4" in rows


def test_the_channel_products_two_ways_compute_the_spectral_paths_products():
    """channel_products.py times the same three products both ways: the forward X W^T and the
    gradients dP W and dP^T X, checked here against einsum in float64."""
    channel_products = benchmark("channel_products")
    gen = torch.Generator().manual_seed(0)
    groups, batch, c_in, c_out = 3, 4, 5, 6
    ways = channel_products.products(torch.float64, groups, batch, c_in, c_out, gen)
    gen = torch.Generator().manual_seed(0)  # the same draws as products made
    x = torch.randn(groups, batch, c_in, generator=gen, dtype=torch.float32).double()
    w = torch.randn(groups, c_out, c_in, generator=gen, dtype=torch.float32).double()
    grad_p = torch.randn(groups, batch, c_out, generator=gen, dtype=torch.float32).double()
    expected = (
        torch.einsum("gbi,goi->gbo", x, w),
        torch.einsum("gbo,goi->gbi", grad_p, w),
        torch.einsum("gbo,gbi->goi", grad_p, x),
    )
    assert set(ways) == {"MKL/oneDNN bmm", "oneDNN conv1d"}
    for forward, backward in ways.values():
        for got, want in zip((forward(), *backward()), expected):
            torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_the_spectral_convolutions_two_forms_compute_the_same_convolution():
    """spectral_dft.py times both forms of the spectral path (two-stage, dense): in float64
    each gives conv2d's values and gradients (PrimaryCaps on 2 maps of 8 channels), and its
    bfloat16 errors against float64 are those of bfloat16 rounding."""
    from capsviz.model.config import CapsNetConfig

    spectral_dft = benchmark("spectral_dft")
    cfg = CapsNetConfig(conv1_channels=8, primary_types=2)
    x, w, g = spectral_dft.inputs(torch.float64, cfg, 2, torch.Generator().manual_seed(0))
    x, w = x.requires_grad_(), w.requires_grad_()
    y = torch.nn.functional.conv2d(x, w, stride=cfg.primary_stride).permute(0, 2, 3, 1)
    expected = (y, *torch.autograd.grad(y, (x, w), g))
    passes = spectral_dft.passes(torch.float64, cfg, 2, torch.Generator().manual_seed(0))
    assert set(passes) == {"forward", "forward and backward"}
    for forms in passes.values():
        assert set(forms) == set(spectral_dft.FORMS) == {"two-stage", "dense"}
        for run in forms.values():
            for got, want in zip(run(), expected):
                if got is not None:
                    torch.testing.assert_close(got, want.detach(), rtol=1e-10, atol=1e-10)
    errors = spectral_dft.errors(torch.bfloat16, cfg)
    assert all(1e-4 < e < 2e-2 for values in errors.values() for e in values.values()), errors


def test_routing_products_forms_of_each_operation_agree():
    """routing_products.py times, for each operation, forms that compute the same values
    (float64, 3 examples, 10 classes, 40 primary capsules): the layouts' sums and
    agreements, and dL/du_hat in chunks, stacked either way, against einsum."""
    routing_products = benchmark("routing_products")
    gen = torch.Generator().manual_seed(0)
    forms = routing_products.forms(torch.float64, 30, 40, 16, gen, n_out=10)
    for name in ("weighted sum", "agreement", "Eq. 2, layouts", "agreement, layouts", "dL/du_hat"):
        first, second = (product() for product, _ in forms[name].values())
        torch.testing.assert_close(first.reshape(second.shape), second, rtol=1e-12, atol=1e-12)
    left = [torch.randn(30, 1, 40, dtype=torch.float64, generator=gen) for _ in range(5)]
    right = torch.randn(30, 5, 16, dtype=torch.float64, generator=gen)
    want = torch.einsum("nki,nkd->ind", torch.cat(left, 1), right)  # (I, B*J, D), re-laid (I, B, J*D)
    assert len(routing_products._spans(40, 30 * 16 * 8, routing_products.PREDICTION_CHUNK_BYTES, right.device)) == 1
    for strided in (False, True):  # one chunk holds all 40 capsules: the buffer returned is all of dL/du_hat
        got = routing_products.chunked(left, right, 10, strided)
        torch.testing.assert_close(got.reshape(want.shape), want, rtol=1e-12, atol=1e-12)
