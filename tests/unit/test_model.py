"""The CapsNet math, one test per known fault of public re-implementations (design §1)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from capsviz.model import (
    CapsNet,
    CapsNetConfig,
    capsule_length,
    dynamic_routing,
    margin_loss,
    reconstruction_loss,
    squash,
    total_loss,
)

from ..conftest import SHIPPED, mnist_root


@pytest.fixture(scope="module")
def model() -> CapsNet:
    torch.manual_seed(0)
    return CapsNet().eval()


def test_parameter_count():
    m = CapsNet()
    total = sum(p.numel() for p in m.parameters())
    decoder = sum(p.numel() for p in m.decoder.parameters())
    assert total == 8_215_568
    assert total - decoder == 6_804_224


def test_squash_formula_and_axis():
    s = torch.tensor([[3.0, 4.0], [0.0, 0.0]])  # norms 5 and 0, squashed along the last axis
    v = squash(s, dim=-1)
    assert torch.allclose(v[0], torch.tensor([3.0, 4.0]) / 5 * 25 / 26, atol=1e-6)
    assert torch.all(v[1] == 0)
    # along another axis the result differs: the axis is honoured
    assert not torch.allclose(squash(s, dim=0), v)
    assert capsule_length(s).tolist() == pytest.approx([5.0, 1e-4], rel=1e-3)  # 3-4-5; at 0 sqrt(eps = 1e-8)


def test_squash_zero_vector_has_finite_gradient():
    s = torch.zeros(4, 16, requires_grad=True)
    squash(s).sum().backward()
    assert torch.isfinite(s.grad).all()


def test_coupling_sums_to_one_over_classes_every_iteration(model):
    x = torch.rand(4, 1, 28, 28)
    out = model(x, routing_iterations=5, trace=True)
    c = out.trace.c  # (R, B, 1152, 10)
    assert c.shape == (5, 4, 1152, 10)
    torch.testing.assert_close(c.sum(dim=-1), torch.ones(5, 4, 1152))
    # the first iteration is uniform (b = 0), later ones are not
    torch.testing.assert_close(c[0], torch.full_like(c[0], 0.1))
    assert not torch.allclose(c[-1], c[0])
    # b[0] = 0 and c = softmax(b) over classes
    assert torch.all(out.trace.b[0] == 0)
    torch.testing.assert_close(c[2], torch.softmax(out.trace.b[2], dim=-1))


def test_routing_matches_procedure_1_written_out():
    torch.manual_seed(1)
    u_hat = torch.randn(2, 7, 3, 4) * 0.3  # (B, I, J, D)
    v, rec = dynamic_routing(u_hat, 3, record=True)
    for b in range(2):
        logits = torch.zeros(7, 3)
        for _ in range(3):
            c = torch.softmax(logits, dim=1)
            s = (c[:, :, None] * u_hat[b]).sum(0)
            vv = squash(s)
            logits = logits + (u_hat[b] * vv[None]).sum(-1)
        torch.testing.assert_close(v[b], vv, rtol=1e-5, atol=1e-6)


def test_lengths_below_one_and_no_softmax(model):
    out = model(torch.rand(8, 1, 28, 28))
    assert (out.lengths >= 0).all() and (out.lengths < 1).all()
    torch.testing.assert_close(out.lengths, torch.sqrt((out.v**2).sum(-1) + 1e-8))  # ||v_j||, eps in the root
    # not a probability distribution: an extra softmax would make every row sum to 1
    assert not torch.allclose(out.lengths.sum(1), torch.ones(8))


def test_batch_independence(model):
    torch.manual_seed(2)
    x = torch.rand(32, 1, 28, 28)
    with torch.no_grad():
        batch = model(x, reconstruct=False).lengths
        alone = model(x[5:6], reconstruct=False).lengths
    torch.testing.assert_close(alone[0], batch[5], rtol=1e-4, atol=1e-5)


def test_zero_input_is_finite(model):
    m = CapsNet()
    x = torch.zeros(2, 1, 28, 28, requires_grad=True)
    out = m(x, target=torch.tensor([0, 1]))
    assert torch.isfinite(out.lengths).all()
    loss, _, _ = total_loss(out.lengths, out.reconstruction, x.detach(), torch.tensor([0, 1]))
    loss.backward()
    for name, p in m.named_parameters():
        assert torch.isfinite(p.grad).all(), name


def test_primary_capsule_index_layout():
    cfg = CapsNetConfig()
    m = CapsNet(cfg).eval()
    h = torch.randn(1, 256, 20, 20)
    conv = torch.nn.functional.conv2d(h, m.primary_caps.kernel, m.primary_caps.conv.bias, stride=2)  # (1, 256, 6, 6)
    u = m.primary_caps(h)  # (1, 1152, 8)
    for t, y, x in [(0, 0, 0), (3, 2, 5), (31, 5, 5), (17, 4, 1)]:
        i = t * 36 + y * 6 + x
        raw = conv[0, 8 * t : 8 * t + 8, y, x]
        torch.testing.assert_close(u[0, i], squash(raw), rtol=1e-5, atol=1e-6)


def test_predictions_broadcast_W(model):
    """u_hat_{j|i} = W_ij u_i in both of predictions' layouts: (B, J, I, D) storage for
    training, and for a few images without gradients the product's own (I, B, J, D), which
    routing reads in place; the two route to the same v."""
    u = torch.randn(3, 1152, 8)
    u_hat = model.digit_caps.predictions(u)
    assert u_hat.shape == (3, 1152, 10, 16)
    i, j = 100, 7
    torch.testing.assert_close(u_hat[2, i, j], model.digit_caps.W[i, j] @ u[2, i], rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        few = model.digit_caps.predictions(u)
        v_few = dynamic_routing(few, 3)[0]
        v_many = dynamic_routing(u_hat.detach(), 3)[0]
    assert few.stride() == (160, 480, 16, 1) and u_hat.stride() == (184320, 16, 18432, 1)
    torch.testing.assert_close(few, u_hat.detach())
    torch.testing.assert_close(v_few, v_many, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("intel", [False, True], ids=["multiply-adds", "bmm"])
def test_one_image_predictions_follow_W(model, monkeypatch, intel):
    """One image's predictions without gradients (8 multiply-adds over W laid out
    (8, I, J*D) off Intel CPUs, a bmm over W laid out (I, 8, J*D) on them) equal W_ij u_i
    computed in float64, also after W changes in place."""
    from capsviz.model import capsnet

    monkeypatch.setattr(capsnet, "intel_cpu", lambda: intel)
    u = torch.randn(1, 1152, 8)
    saved = model.digit_caps.W.detach().clone()
    try:
        for _ in range(2):
            exact = torch.einsum("ijde,bie->bijd", model.digit_caps.W.detach().double(), u.double())
            with torch.no_grad():
                one = model.digit_caps.predictions(u)
            assert one.shape == (1, 1152, 10, 16) and one.dtype == torch.float32
            torch.testing.assert_close(one.double(), exact, rtol=1e-5, atol=1e-7)
            with torch.no_grad():
                model.digit_caps.W.mul_(-2.0)  # an optimizer step's in-place update
    finally:
        with torch.no_grad():
            model.digit_caps.W.copy_(saved)  # the module's other tests share the model


def test_margin_loss_hand_values():
    lengths = torch.tensor([[0.95, 0.05, 0.5], [0.2, 0.7, 0.0]])
    target = torch.tensor([0, 1])
    # example 0: present 0 (0.95 >= 0.9); absent: 0.5*(0)^2 + 0.5*(0.4)^2 = 0.08
    # example 1: present (0.9-0.7)^2 = 0.04; absent: 0.5*(0.1)^2 = 0.005 ; 0 for length 0.0
    expected = (0.08 + 0.045) / 2
    assert margin_loss(lengths, target).item() == pytest.approx(expected, rel=1e-6)


def test_reconstruction_loss_is_sum_not_mean():
    recon = torch.full((2, 1, 28, 28), 0.5)
    images = torch.zeros(2, 1, 28, 28)
    assert reconstruction_loss(recon, images).item() == pytest.approx(784 * 0.25)
    lengths = torch.tensor([[0.9] + [0.0] * 9] * 2)
    total, m, r = total_loss(lengths, recon, images, torch.tensor([0, 0]))
    assert total.item() == pytest.approx(0.0005 * 784 * 0.25)


def test_decoder_masks_training_target_not_prediction(model):
    torch.manual_seed(11)
    x = torch.rand(2, 1, 28, 28)
    with torch.no_grad():
        out = model(x)
        pred = out.lengths.argmax(1)
        other = (pred + 1) % 10
        by_target = model(x, target=other).reconstruction
        expected = model.decoder(out.v, other)
    torch.testing.assert_close(by_target, expected)
    # without a target the decoder sees the longest capsule; an untrained model's capsules
    # are short (about 1e-4), so the two reconstructions differ little, but they differ
    torch.testing.assert_close(out.reconstruction, model.decoder(out.v, pred), rtol=0, atol=0)
    assert not torch.equal(by_target, out.reconstruction)
    # the decoder sees only the chosen capsule: changing another capsule changes nothing
    v2 = out.v.clone()
    v2[:, (int(other[0]) + 3) % 10] += 1.0
    with torch.no_grad():
        torch.testing.assert_close(model.decoder(v2, other)[0], expected[0])


def test_device_follows_input_no_hardcoded_cuda():
    import inspect

    import capsviz.model.capsnet as capsnet
    import capsviz.model.routing as routing

    for mod in (capsnet, routing):
        assert ".cuda(" not in inspect.getsource(mod)


def test_W_is_not_tiled_over_the_batch(model):
    """Memory for the û computation grows with the batch only through û itself."""
    assert model.digit_caps.W.shape == (1152, 10, 16, 8)
    import inspect

    src = inspect.getsource(type(model.digit_caps))
    assert ".repeat(" not in src and ".expand(" not in src and ".tile(" not in src


def test_bad_input_shape_raises(model):
    with pytest.raises(ValueError, match="expected input of shape"):
        model(torch.rand(2, 28, 28))


def test_routing_iterations_validation():
    with pytest.raises(ValueError, match=">= 1"):
        dynamic_routing(torch.zeros(1, 2, 3, 4), 0)


def test_config_json_roundtrip_and_errors():
    cfg = CapsNetConfig()
    assert CapsNetConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(ValueError, match="unknown fields"):
        CapsNetConfig.from_json('{"bogus": 1}')
    with pytest.raises(ValueError):
        CapsNetConfig(num_classes=0)


def test_trace_shapes(model):
    out = model(torch.rand(2, 1, 28, 28), routing_iterations=4, trace=True)
    tr = out.trace.to_numpy(1)
    assert tr["u"].shape == (1152, 8) and tr["b"].shape == (4, 1152, 10)
    assert tr["v"].shape == (4, 10, 16) and tr["lengths"].shape == (4, 10)
    np.testing.assert_allclose(tr["lengths"][-1], out.lengths[1].detach().numpy(), rtol=1e-5)


def test_a_one_image_trace_reaches_numpy_shared_and_an_example_of_a_batch_copied(model):
    """A one-image trace's arrays share the trace's memory (no copies for the explorer's
    pass); an example of a batch is copied (it does not keep the batch); both hold the
    trace's values, with b and c (R, I, J) as routing recorded them (c sums to 1 over J)."""
    from capsviz.model.routing import stack_transposed

    with torch.inference_mode():
        one = model(torch.rand(1, 1, 28, 28), reconstruct=False, trace=True).trace
        batch = model(torch.rand(2, 1, 28, 28), reconstruct=False, trace=True).trace
    shared, copied = one.to_numpy(0), batch.to_numpy(1)
    for key, array in shared.items():
        tensor = getattr(one, key)[0] if key in ("u", "u_lengths", "u_hat") else getattr(one, key)[:, 0]
        assert np.shares_memory(array, tensor.numpy()) and np.array_equal(array, tensor.numpy())
    for key, array in copied.items():
        tensor = getattr(batch, key)[1] if key in ("u", "u_lengths", "u_hat") else getattr(batch, key)[:, 1]
        assert not np.shares_memory(array, tensor.numpy()) and np.array_equal(array, tensor.numpy())
    np.testing.assert_allclose(shared["c"].sum(-1), 1.0, rtol=1e-5)
    assert shared["b"].shape == shared["c"].shape == (3, 1152, 10) and not shared["b"][0].any()
    views = [torch.randn(2, 5, 7).transpose(1, 2) for _ in range(3)]  # as routing records b and c
    assert torch.equal(stack_transposed(views), torch.stack(views))


def test_conv1_matches_conv2d_with_and_without_gradients():
    """Conv1 as one product over 9x9 patches (the bias a column of ones when training) gives
    conv2d's values, and its weight and bias gradients."""
    torch.manual_seed(3)
    for size in (28, 36):
        net = CapsNet(CapsNetConfig(image_size=size, conv1_channels=32, primary_types=4, decoder_hidden=(16, 32)))
        conv = net.conv1
        x = torch.rand(3, 1, size, size)
        ref = torch.nn.functional.conv2d(x, conv.weight, conv.bias)
        with torch.no_grad():  # the explorer's few images: channels-last, PrimaryCaps' patch rows
            few = net._conv1(x)
        torch.testing.assert_close(few, ref, rtol=1e-5, atol=1e-5)
        assert few.permute(0, 2, 3, 1).is_contiguous()
        out = net._conv1(x)  # training: (F, F, B, C) in memory, the spectral path's layout
        torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
        assert out.permute(2, 3, 0, 1).is_contiguous()
        g = torch.randn_like(ref)
        grads = torch.autograd.grad(out, (conv.weight, conv.bias), g)
        ref_grads = torch.autograd.grad(ref, (conv.weight, conv.bias), g)
        for a, b in zip(grads, ref_grads):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_conv1_patch_columns_are_its_patch_rows_transposed():
    """Conv1's patch rows, and their transpose gathered in its own order, are the 9x9
    patches of the images (ky, kx order, rows (y, x, image)) with a column of ones."""
    from capsviz.model import conv

    images = torch.rand(3, 12, 12, dtype=torch.float64)
    rows = conv.conv1_patch_rows(images, 9)  # (4 * 4 * 3, 82)
    assert rows.shape == (48, 82)
    assert torch.equal(rows[:, 81], torch.ones(48, dtype=torch.float64))
    y, x, b = 2, 1, 1  # row (y * 4 + x) * 3 + b
    assert torch.equal(rows[(y * 4 + x) * 3 + b, :81], images[b, y : y + 9, x : x + 9].reshape(81))
    assert torch.equal(conv.conv1_patch_columns_t(images, 9), rows.t())


def _onednn_bf16_linear() -> bool:
    """Whether oneDNN's fused bfloat16 linear operator runs on this CPU (it needs AVX-512
    or AVX-NE-CONVERT); capsviz takes it only on a CPU with AMX."""
    try:
        ones = torch.ones(2, 4, dtype=torch.bfloat16)
        torch.ops.mkldnn._linear_pointwise(ones, ones[:1], None, "relu", [], "")
    except (AttributeError, RuntimeError):
        return False
    return True


def _same_or_within_rounding(a: torch.Tensor, b: torch.Tensor) -> None:
    """Bit for bit on a CPU with AMX (where the fused path runs); elsewhere the two
    products may sum in another order."""
    from capsviz.runtime import amx_products

    if amx_products():
        assert torch.equal(a, b)
    else:
        torch.testing.assert_close(a.float(), b.float(), rtol=8e-3, atol=1e-2)


@pytest.mark.skipif(not _onednn_bf16_linear(), reason="oneDNN's bfloat16 linear operator does not run on this CPU")
def test_fused_conv1_relu_matches_product_then_relu():
    """oneDNN's fused product and ReLU (Conv1's training path on a CPU with AMX) gives
    ``torch.relu(rows @ weight.T)`` in bfloat16 (bit for bit on that CPU), and the weight's
    gradient within a bfloat16 rounding step of autograd's (the product's sums run in
    another order)."""
    from capsviz.model import conv

    torch.manual_seed(5)
    images = torch.rand(6, 28, 28).to(torch.bfloat16)
    weight = (0.2 * torch.randn(64, 82)).to(torch.bfloat16).requires_grad_()
    out = conv.conv1_relu(images, weight, 9)
    ref = torch.relu(conv.conv1_patch_rows(images, 9) @ weight.t())
    _same_or_within_rounding(out, ref)
    assert 0.2 < (out > 0).float().mean() < 0.8  # both sides of the ReLU are exercised
    g = torch.randn_like(ref)
    (grad,), (ref_grad,) = torch.autograd.grad(out, weight, g), torch.autograd.grad(ref, weight, g)
    torch.testing.assert_close(grad.float(), ref_grad.float(), rtol=8e-3, atol=1e-2)


def test_a_nan_or_infinity_keeps_conv1_off_the_fused_relu(monkeypatch):
    """oneDNN's fused ReLU gives 0 for NaN, so a NaN or an infinity (times a zero pixel, a
    NaN) in Conv1's weight or in the images takes the unfused path, whose ReLU keeps it
    (a diverged run must show a NaN loss)."""
    from capsviz.model import conv

    monkeypatch.setattr(conv, "amx_products", lambda: True)
    images = torch.rand(4, 28, 28).to(torch.bfloat16)
    weight = torch.randn(8, 82)
    assert conv.use_fused_relu(images, weight) == hasattr(torch.ops.mkldnn, "_linear_pointwise")
    assert not conv.use_fused_relu(images.float(), weight)  # bfloat16 only
    for value in (float("nan"), float("inf"), -float("inf")):
        bad = weight.clone()
        bad[3, 5] = value
        assert not conv.use_fused_relu(images, bad)
        dirty = images.clone()
        dirty[1, 4, 4] = value
        assert not conv.use_fused_relu(dirty, weight)
    net = CapsNet(CapsNetConfig(conv1_channels=8, primary_types=1, decoder_hidden=(16, 32)))
    with torch.no_grad():
        net.conv1.weight[3, 0, 0, 0] = float("nan")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = net._conv1(torch.rand(16, 1, 28, 28), relu=True)
    assert torch.isnan(out[:, 3]).all() and not torch.isnan(out[:, :3]).any()


@pytest.mark.skipif(not _onednn_bf16_linear(), reason="oneDNN's bfloat16 linear operator does not run on this CPU")
def test_conv1_takes_the_fused_relu_where_chosen(monkeypatch):
    """Under bfloat16 autocast, Conv1 with its ReLU fused into the product equals Conv1
    and then ReLU, values (bit for bit on a CPU with AMX) and weight gradients within
    bfloat16 rounding, and the fused path is taken."""
    from capsviz.model import capsnet, conv

    torch.manual_seed(6)
    net = CapsNet(CapsNetConfig(conv1_channels=32, primary_types=4, decoder_hidden=(16, 32)))
    x = torch.rand(16, 1, 28, 28)
    calls = []
    fused = conv.conv1_relu
    monkeypatch.setattr(capsnet, "conv1_relu", lambda *a: calls.append(1) or fused(*a))
    results = {}
    for chosen in (False, True):
        monkeypatch.setattr(capsnet, "use_fused_relu", lambda images, weight, chosen=chosen: chosen)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = net._conv1(x, relu=True)
        g = torch.ones_like(out)
        results[chosen] = (out, *torch.autograd.grad(out, (net.conv1.weight, net.conv1.bias), g))
    assert calls == [1]
    assert results[True][0].permute(2, 3, 0, 1).is_contiguous()
    _same_or_within_rounding(results[True][0], results[False][0])
    for a, b in zip(results[True][1:], results[False][1:]):
        torch.testing.assert_close(a, b, rtol=8e-3, atol=1e-2)


@pytest.mark.parametrize("dense", [False, True], ids=["two-stage", "dense"])
def test_spectral_conv_matches_conv2d(dense, monkeypatch):
    """The DFT form of PrimaryCaps' convolution gives conv2d's values and gradients, with
    its DFTs in two stages or as one dense product per transform (bfloat16 with AMX)."""
    from capsviz.model import conv
    from capsviz.model.conv import spectral_conv2d

    monkeypatch.setattr(conv, "use_dense_dft", lambda t: dense)

    torch.manual_seed(4)
    # PrimaryCaps' case (odd 19-point span), other strides, an even span (Nyquist column),
    # a non-square map; NCHW, channels-last and (H, W, B, C) memory (Conv1's in training)
    for shape, k, stride in (
        ((3, 16, 20, 20), 9, 2),
        ((2, 5, 11, 13), 3, 3),
        ((2, 4, 12, 10), 4, 2),
        ((2, 3, 7, 7), 7, 1),
        ((2, 3, 4, 6), 1, 4),  # a one-row span: no row frequency but the first
    ):
        for layout in ("nchw", "channels_last", "hwbc"):
            x = torch.randn(*shape)
            if layout == "channels_last":
                x = x.contiguous(memory_format=torch.channels_last)
            elif layout == "hwbc":
                x = x.permute(2, 3, 0, 1).contiguous().permute(2, 3, 0, 1)
            x.requires_grad_()
            w = torch.randn(7, shape[1], k, k, requires_grad=True)
            bias = torch.randn(7, requires_grad=True)
            out = spectral_conv2d(x, w, bias, stride).permute(0, 3, 1, 2)
            ref = torch.nn.functional.conv2d(x, w, bias, stride=stride)
            torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
            g = torch.randn_like(out)
            grads = torch.autograd.grad(out, (x, w, bias), g)
            ref_grads = torch.autograd.grad(ref, (x, w, bias), g)
            for a, b in zip(grads, ref_grads):
                assert a.shape == b.shape
                torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_the_spectral_stages_in_row_blocks_give_conv2d(monkeypatch):
    """The second DFT stage's batched products, whole or in row blocks (where an output
    matrix is larger than STAGE_BLOCK_BYTES), give conv2d's values and gradients, with
    PrimaryCaps' kernel layout (fewer channels, the same DFTs)."""
    from capsviz.model import conv

    torch.manual_seed(5)
    x = torch.randn(4, 24, 20, 20, requires_grad=True)
    w = torch.randn(9, 9, 16, 24).permute(2, 3, 0, 1).requires_grad_()  # (C_out, C_in, k, k), laid out (k, k, ...)
    ref = torch.nn.functional.conv2d(x, w, stride=2)
    g = torch.randn_like(ref)
    ref_grads = torch.autograd.grad(ref, (x, w), g)
    real_bmm, calls = torch.bmm, []

    def counted(a, b, **kwargs):
        calls.append(tuple(a.shape))
        return real_bmm(a, b, **kwargs)

    monkeypatch.setattr(torch, "bmm", counted)
    # the kernels' second stage: (57 x 18) @ (18 x 16*24) per row frequency; its output
    # matrices, 57 x 384 float32, whole and in two blocks of 29 and 28 rows
    for block_bytes, blocks in ((conv.STAGE_BLOCK_BYTES, [(9, 57, 18)]), (57 * 384 * 2, [(9, 29, 18), (9, 28, 18)])):
        monkeypatch.setattr(conv, "STAGE_BLOCK_BYTES", block_bytes)
        calls.clear()
        out = conv.spectral_conv2d(x, w, None, 2).permute(0, 3, 1, 2)
        assert [c for c in calls if c[2] == 18] == blocks
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
        grads = torch.autograd.grad(out, (x, w), g)
        assert grads[1].permute(2, 3, 0, 1).is_contiguous()  # laid out as the kernels
        for got, want in zip(grads, ref_grads):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=2e-3)


@pytest.mark.parametrize("dense", [False, True], ids=["two-stage", "dense"])
def test_spectral_conv_gradcheck(dense, monkeypatch):
    from capsviz.model import conv
    from capsviz.model.conv import spectral_conv2d

    monkeypatch.setattr(conv, "use_dense_dft", lambda t: dense)

    torch.manual_seed(6)
    x = torch.randn(2, 3, 11, 11, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 3, 5, 5, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda *a: spectral_conv2d(*a, 2), (x, w, bias))


def test_primary_caps_paths_agree():
    """Training (spectral), batch evaluation (spectral, no grad), mid-size batches (oneDNN)
    and the explorer's im2col path give the same capsules as a plain conv2d PrimaryCaps."""
    from capsviz.model.capsnet import PrimaryCaps
    from capsviz.model.config import CapsNetConfig
    from capsviz.model.conv import use_spectral
    from capsviz.model.routing import squash

    torch.manual_seed(8)
    caps = PrimaryCaps(CapsNetConfig())
    x = torch.relu(torch.randn(24, 256, 20, 20))
    conv = torch.nn.functional.conv2d(x, caps.kernel, caps.conv.bias, stride=2)
    ref = squash(conv.reshape(24, 32, 8, 6, 6).permute(0, 1, 3, 4, 2).reshape(24, 1152, 8))
    assert use_spectral(x)
    torch.testing.assert_close(caps(x), ref, rtol=1e-4, atol=1e-5)
    with torch.no_grad():
        assert use_spectral(x) and not use_spectral(x[:12])
        for n in (24, 12, 2):
            torch.testing.assert_close(caps(x[:n]), ref[:n], rtol=1e-4, atol=1e-5)


def test_on_bfloat16_units_the_few_image_pass_rounds_only_primarycaps_product(monkeypatch):
    """With bfloat16 units (here pretended) the explorer's im2col product runs in bfloat16:
    within its rounding of conv2d's numbers, not equal to them, following weight updates;
    CAPSVIZ_INFERENCE=fp32 keeps float32."""
    import capsviz.runtime as runtime
    from capsviz.model.capsnet import PrimaryCaps
    from capsviz.model.config import CapsNetConfig

    monkeypatch.setattr(runtime, "bf16_speedup", lambda: 6.0)  # AMX's rate
    monkeypatch.setenv("CAPSVIZ_INFERENCE", "auto")
    assert runtime.bf16_inference()
    torch.manual_seed(3)
    caps = PrimaryCaps(CapsNetConfig())
    x = torch.relu(torch.randn(3, 256, 20, 20))
    with torch.no_grad():
        fast = caps(x)
    reference = caps(x).detach()  # with gradients: float32 oneDNN convolution
    error = (fast - reference).abs().max()
    assert 1e-6 < error < 2e-2 and fast.dtype == torch.float32  # bfloat16 rounding, no more
    with torch.no_grad():
        caps.conv.weight.mul_(-0.5)
        moved = caps(x)
    assert (moved - caps(x).detach()).abs().max() < 2e-2 and (moved - fast).abs().max() > 1e-2
    monkeypatch.setenv("CAPSVIZ_INFERENCE", "fp32")
    assert not runtime.bf16_inference()
    with torch.no_grad():
        fp32 = caps(x)
    torch.testing.assert_close(fp32, caps(x).detach(), rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_the_bfloat16_pass_predicts_every_mnist_test_digit_as_float32(monkeypatch):
    """On a CPU with bfloat16 units, the explorer's few-image pass (batches of 8) in bfloat16
    names the same class as float32 for each of the 10,000 MNIST test digits (used where
    those units are faster than float32; checked wherever they exist)."""
    import capsviz.runtime as runtime
    from capsviz.data.mnist import load_mnist
    from capsviz.train.checkpoint import load_checkpoint

    if not runtime.cpu_bf16_units():
        pytest.skip("no bfloat16 units: the few-image pass stays float32 here")
    monkeypatch.setattr(runtime, "bf16_speedup", lambda: 6.0)  # the bfloat16 path, whatever its rate here
    model = load_checkpoint(SHIPPED)[0].eval()
    images = torch.from_numpy(load_mnist(train=False, data_root=mnist_root()).images.astype(np.float32) / 255)
    predictions = {}
    for precision in ("auto", "fp32"):
        monkeypatch.setenv("CAPSVIZ_INFERENCE", precision)
        with torch.no_grad():
            batches = [model(x[:, None], reconstruct=False).lengths.argmax(1) for x in images.split(8)]
        predictions[precision] = torch.cat(batches)
    assert torch.equal(predictions["auto"], predictions["fp32"])


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_the_winograd_pass_predicts_every_mnist_test_digit_as_the_batch_evaluation(monkeypatch, winograd_calls):
    """Where a digit's few-image pass takes the Winograd path (products without full-width
    AVX-512, here pretended), it names the class of the batch evaluation (spectral path)
    for each of the 10,000 MNIST test digits, its lengths within 2e-5."""
    import capsviz.model.conv as conv
    from capsviz.data.mnist import load_mnist
    from capsviz.evaluate import model_lengths
    from capsviz.train.checkpoint import load_checkpoint

    monkeypatch.setattr(conv, "avx512_products", lambda: False)
    model = load_checkpoint(SHIPPED)[0].eval()
    digits = load_mnist(train=False, data_root=mnist_root()).images
    batch = model_lengths(model, digits)
    images = torch.from_numpy(digits.astype(np.float32) / 255)[:, None]
    with torch.no_grad():
        few = torch.cat([model(x, reconstruct=False).lengths for x in images.split(8)]).numpy()
    assert sum(winograd_calls) == 10_000
    assert np.abs(few - batch).max() < 2e-5
    assert np.array_equal(few.argmax(1), batch.argmax(1))


@pytest.mark.parametrize("group_bytes", [None, 2 * 11 * 4 * 5 * 4])
def test_routing_gradients_match_plain_autograd(monkeypatch, group_bytes):
    """The hand-written backward of dynamic routing equals autograd through Procedure 1,
    with the examples routed at once or in groups (2, 2 and 1 of 5 examples)."""
    from capsviz.model import routing

    if group_bytes is not None:
        monkeypatch.setattr(routing, "ROUTING_GROUP_BYTES", group_bytes)
    groups = routing._spans(5, 11 * 4 * 5 * 4, routing.ROUTING_GROUP_BYTES, torch.device("cpu"))
    assert groups == ([(0, 5)] if group_bytes is None else [(0, 2), (2, 4), (4, 5)])
    meta = routing._spans(5, 11 * 4 * 5 * 4, routing.ROUTING_GROUP_BYTES, torch.device("meta"))
    assert meta == [(0, 5)]  # grouped on the CPU only
    torch.manual_seed(5)
    for iterations in (1, 2, 3, 5):
        u_hat = (0.3 * torch.randn(5, 11, 4, 5)).requires_grad_()
        v = dynamic_routing(u_hat, iterations)[0]
        g = torch.randn_like(v)
        (grad,) = torch.autograd.grad(v, u_hat, g)
        # record=True takes the plain loop, differentiated by autograd
        v_ref = dynamic_routing(u_hat, iterations, record=True)[0]
        torch.testing.assert_close(v, v_ref)
        (ref,) = torch.autograd.grad(v_ref, u_hat, g)
        torch.testing.assert_close(grad, ref, rtol=1e-5, atol=1e-6)


def test_routing_groups_follow_the_layout(monkeypatch):
    """Routing's groups of examples span at most ROUTING_GROUP_BYTES of u_hat laid out
    (B*J, I, D) and BLOCKS_GROUP_BYTES laid out (B, I, J, D); c, s and v equal routing all
    at once either way, with c_0 = 1/J where the first s is given."""
    from capsviz.model import routing

    torch.manual_seed(12)
    per_example = 6 * 3 * 4 * 8  # I * J * D float64 values
    monkeypatch.setattr(routing, "ROUTING_GROUP_BYTES", per_example)
    monkeypatch.setattr(routing, "BLOCKS_GROUP_BYTES", 2 * per_example)
    u_hat = torch.randn(5, 6, 3, 4, dtype=torch.float64)  # (B, I, J, D)
    first_s = torch.randn(5, 3, 4, dtype=torch.float64)
    rows = u_hat.transpose(1, 2).reshape(15, 6, 4).contiguous()  # (B*J, I, D)
    for u, expected in ((u_hat, [(0, 2), (2, 4), (4, 5)]), (rows, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)])):
        spans = []
        cs, ss, vs = routing._route(u, 5, 3, lambda a, b, spans=spans: spans.append((a, b)), first_s)
        assert spans == expected
        run = routing._iterate(u, 5, 3, first_s)  # all at once
        for kept, key in ((cs, "c"), (ss, "s"), (vs, "v")):
            torch.testing.assert_close(kept, torch.stack(run[key]), rtol=1e-12, atol=1e-14)
        assert torch.equal(cs[0], torch.full_like(cs[0], 1 / 3))
        assert len(run["b"]) == 2  # b_1, b_2: the zero b_0 is implicit
        torch.testing.assert_close(cs[1].sum(dim=1), torch.ones(5, 6, dtype=torch.float64))


@pytest.mark.parametrize("blocks", [False, True], ids=["rows", "blocks"])
@pytest.mark.parametrize("chunk_bytes", [None, 7 * 3 * 3 * 5 * 8])
def test_predictions_and_routing_in_one_backward_match_plain_autograd(monkeypatch, chunk_bytes, blocks):
    """The training path of DigitCaps, u_hat = W u and Procedure 1 with one hand-written
    backward, equals autograd through the predictions and the plain loop, in float64: all
    capsules at once, or in chunks of 7, 7, 7 and 2 (the last one shorter), with the
    examples routed in groups of 2, 1 and their predictions made at once or per group; the
    gradient of u alone and of W alone too; u_hat laid out (B*J, I, D), or (B, I, J, D) as
    in bfloat16 on a CPU with AMX."""
    from capsviz.model import routing
    from capsviz.model.routing import predict_and_route

    monkeypatch.setattr(routing, "routes_in_blocks", lambda low, device: blocks)
    monkeypatch.setattr(routing, "ROUTING_GROUP_BYTES", 2 * 3 * 23 * 5 * 8)
    monkeypatch.setattr(routing, "BLOCKS_GROUP_BYTES", 2 * 3 * 23 * 5 * 8)
    if chunk_bytes is not None:
        monkeypatch.setattr(routing, "PREDICTION_CHUNK_BYTES", chunk_bytes)
        monkeypatch.setattr(routing, "PREDICTION_MIN_EXAMPLES", 1)  # one product per routing group
    expected = [(0, 23)] if chunk_bytes is None else [(0, 7), (7, 14), (14, 21), (21, 23)]
    chunk = routing.PREDICTION_CHUNK_BYTES
    assert routing._spans(23, 3 * 3 * 5 * 8, chunk, torch.device("cpu")) == expected
    assert routing._spans(23, 3 * 3 * 5 * 8, chunk, torch.device("meta")) == [(0, 23)]  # chunked on the CPU only
    torch.manual_seed(11)
    u = (0.4 * torch.randn(3, 23, 6, dtype=torch.float64)).requires_grad_()
    W = (0.3 * torch.randn(23, 3, 5, 6, dtype=torch.float64)).requires_grad_()
    u_hat = torch.einsum("ijde,bie->bijd", W, u)  # (B, I, J, D), Sec. 2
    for iterations in (1, 3):
        v = predict_and_route(u, W, iterations)
        v_ref = dynamic_routing(u_hat, iterations, record=True)[0]  # autograd through the plain loop
        torch.testing.assert_close(v, v_ref, rtol=1e-12, atol=1e-14)
        g = torch.randn_like(v)
        grads = torch.autograd.grad(v, (u, W), g)
        refs = torch.autograd.grad(v_ref, (u, W), g, retain_graph=True)
        assert grads[0].is_contiguous()  # dL/du laid out (B, I, E), as the squash's backward reads it fastest
        assert grads[1].is_contiguous() and grads[1].dtype == W.dtype  # dL/dW as W: autograd keeps it as is
        for grad, ref in zip(grads, refs):
            assert grad.shape == ref.shape
            torch.testing.assert_close(grad, ref, rtol=1e-10, atol=1e-13)
        (grad_u,) = torch.autograd.grad(predict_and_route(u, W.detach(), iterations), u, g)
        (grad_w,) = torch.autograd.grad(predict_and_route(u.detach(), W, iterations), W, g)
        torch.testing.assert_close(grad_u, refs[0], rtol=1e-10, atol=1e-13)
        torch.testing.assert_close(grad_w, refs[1], rtol=1e-10, atol=1e-13)
    with pytest.raises(ValueError, match=">= 1"):
        predict_and_route(u, W, 0)


def test_digitcaps_trains_through_one_backward_and_traces_through_the_predictions(model):
    """With gradients DigitCaps takes predict_and_route (no u_hat leaves it); with a record,
    or without gradients, the predictions and dynamic_routing, with the same v."""
    u = 0.1 * torch.randn(2, 1152, 8, requires_grad=True)
    v, u_hat, rec = model.digit_caps(u, 3)
    assert u_hat is None and rec is None and type(v.grad_fn).__name__ == "_PredictRouteFunctionBackward"
    v_rec, u_hat_rec, rec = model.digit_caps(u, 3, record=True)
    assert u_hat_rec.shape == (2, 1152, 10, 16) and len(rec["c"]) == 3
    with torch.no_grad():
        v_plain, u_hat_plain, _ = model.digit_caps(u, 3)
    torch.testing.assert_close(v, v_rec, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(v, v_plain, rtol=1e-5, atol=1e-6)


def test_small_batch_inference_conv_matches_conv2d(monkeypatch):
    """The explorer's im2col path (a digit's, on a CPU with AVX-512 products) gives
    conv2d's numbers and follows weight updates."""
    import capsviz.model.conv as conv
    from capsviz.model.capsnet import PrimaryCaps
    from capsviz.model.config import CapsNetConfig

    monkeypatch.setattr(conv, "avx512_products", lambda: True)
    products, split = [], conv.split_product
    monkeypatch.setattr(conv, "split_product", lambda cols, *a: products.append(tuple(cols.shape)) or split(cols, *a))

    torch.manual_seed(3)
    caps = PrimaryCaps(CapsNetConfig())
    x = torch.relu(torch.randn(3, 256, 20, 20))
    with torch.no_grad():
        fast = caps(x)  # im2col path (no grad, CPU, batch <= 8)
    assert products == [(108, 20736)]  # 3 digits' 36 patch rows
    slow = caps(x).detach()  # autograd path: oneDNN convolution
    assert torch.allclose(fast, slow, atol=1e-5)
    with torch.no_grad():
        caps.conv.weight.mul_(-0.5)  # an optimizer-style in-place update
        fast2 = caps(x)
    assert torch.allclose(fast2, caps(x).detach(), atol=1e-5)
    assert not torch.allclose(fast2, fast, atol=1e-3)


def test_winograd_matrices_compute_the_correlation_of_an_r_tap_filter():
    """A_T ((G g) * (B_T d)) is the 2-output correlation y[t] = sum_a g[a] d[t + a] for 3, 4
    and 5 taps, with n = m + r - 1 multiplications; a filter needing more points than
    WINOGRAD_POINTS is refused."""
    from capsviz.model.conv import winograd_matrices

    gen = torch.Generator().manual_seed(0)
    for r in (3, 4, 5):
        a_t, g_mat, b_t = winograd_matrices(2, r)
        assert a_t.shape == (2, r + 1) and g_mat.shape == (r + 1, r) and b_t.shape == (r + 1, r + 1)
        for _ in range(5):
            g, d = torch.randn(2 * r + 1, generator=gen, dtype=torch.float64).split([r, r + 1])
            y = a_t @ ((g_mat @ g) * (b_t @ d))
            expected = torch.stack([(g * d[t : t + r]).sum() for t in range(2)])
            torch.testing.assert_close(y, expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="finite points"):
        winograd_matrices(2, 9)


def test_winograd_conv_matches_conv2d_in_float64(monkeypatch):
    """The Winograd path equals a float64 conv2d to 1e-5 of its largest output: a pair's
    PrimaryCaps (256 -> 256, 9x9, stride 2, 28 -> 10) for 1 and 3 maps, channels-last or
    not; a 5x5 kernel (F(2, 3)) on a 24 x 28 map without a bias. It is used only where
    ``winograd_fits`` (even grids, every read inside the map), and the explorer takes it in
    float32 for grids of 10 or more, and for a digit's 6x6 where the products do not run
    AVX-512 at full width (``use_winograd``)."""
    import capsviz.model.conv as conv
    from capsviz.model.conv import use_winograd, winograd_conv2d, winograd_fits, winograd_weight

    gen = torch.Generator().manual_seed(1)
    cases = [
        (1, 256, 256, 9, (28, 28), True),
        (3, 256, 256, 9, (28, 28), False),
        (2, 8, 16, 5, (24, 28), False),
        (2, 32, 16, 9, (20, 20), True),  # a digit's geometry: computed right, not taken
    ]
    for batch, c_in, c_out, k, (h, w), last in cases:
        x = torch.relu(torch.randn(batch, c_in, h, w, generator=gen))
        if last:
            x = x.contiguous(memory_format=torch.channels_last)
        weight = torch.randn(c_out, c_in, k, k, generator=gen) / (k * c_in**0.5)
        bias = torch.randn(c_out, generator=gen) if k == 9 else None
        b64 = None if bias is None else bias.double()
        exact = torch.nn.functional.conv2d(x.double(), weight.double(), b64, stride=2)
        assert winograd_fits(h, w, k, 2)
        y = winograd_conv2d(x, winograd_weight(weight, 2), bias, k, 2)
        assert y.shape == (batch, *exact.shape[2:], c_out) and y.dtype == torch.float32
        error = (y.double() - exact.permute(0, 2, 3, 1)).abs().max() / exact.abs().max()
        assert error < 1e-5, (batch, k, h, w, float(error))
    x = torch.relu(torch.randn(2, 8, 28, 28, dtype=torch.float64, generator=gen))  # float64 in, float64 out
    weight = torch.randn(16, 8, 9, 9, dtype=torch.float64, generator=gen)
    exact = torch.nn.functional.conv2d(x, weight, stride=2).permute(0, 2, 3, 1)
    y = winograd_conv2d(x, winograd_weight(weight, 2), None, 9, 2)
    assert y.dtype == torch.float64 and (y - exact).abs().max() < 1e-10 * exact.abs().max()
    pair, digit = torch.rand(1, 256, 28, 28), torch.rand(1, 256, 20, 20)
    for avx512 in (True, False):
        monkeypatch.setattr(conv, "avx512_products", lambda avx512=avx512: avx512)
        assert use_winograd(pair, 9, 2) and use_winograd(digit, 9, 2) == (not avx512)
        assert not use_winograd(pair.double(), 9, 2)
    assert not winograd_fits(27, 27, 9, 2)  # its last tile would read row 27
    assert not winograd_fits(30, 30, 9, 2)  # 11x11: not a whole number of 2x2 tiles
    assert not winograd_fits(28, 28, 9, 1)  # F(2, 9) needs more points
    assert not winograd_fits(28, 28, 1, 2)  # a kernel narrower than the stride: a phase without taps
    u = winograd_weight(torch.randn(16, 8, 9, 9), 2)
    with pytest.raises(ValueError, match="no Winograd path for a 9x9 stride-2 convolution of 30x30"):
        winograd_conv2d(torch.rand(1, 8, 30, 30), u, None, 9, 2)
    with pytest.raises(ValueError, match="without gradients"):
        winograd_conv2d(torch.rand(1, 8, 28, 28, requires_grad=True), u, None, 9, 2)


def test_a_pairs_few_image_pass_takes_the_winograd_path_and_follows_weight_updates(winograd_calls):
    """A 36x36 model's PrimaryCaps for up to 8 images without gradients goes through
    winograd_conv2d, gives oneDNN's convolution's capsules and follows in-place weight
    updates; 9 images, or a pass with gradients, does not take it."""
    from capsviz.model.capsnet import PrimaryCaps
    from capsviz.model.config import CapsNetConfig

    torch.manual_seed(6)
    caps = PrimaryCaps(CapsNetConfig(image_size=36))
    x = torch.relu(torch.randn(9, 256, 28, 28))
    with torch.no_grad():
        fast = caps(x[:2])
        assert winograd_calls == [2]
        caps(x)
        assert winograd_calls == [2]
    slow = caps(x[:2]).detach()
    assert winograd_calls == [2] and fast.shape == (2, 3200, 8)
    torch.testing.assert_close(fast, slow, rtol=1e-4, atol=1e-5)
    with torch.no_grad():
        caps.conv.weight.mul_(-0.5)
        moved = caps(x[:2])
    assert winograd_calls == [2, 2]
    torch.testing.assert_close(moved, caps(x[:2]).detach(), rtol=1e-4, atol=1e-5)
    assert (moved - fast).abs().max() > 1e-2


def test_patch_rows_reuse_one_buffer_per_thread_and_stay_correct():
    """The few-image patch matrix is written into a buffer its thread keeps (the app would
    otherwise map and page-fault a pair's 8.3 MB in every pass): two passes on one thread
    share it, another thread has its own, a request over ``PATCH_BUFFER_MAX_BYTES`` is not
    kept, and each pass gives conv2d's numbers although the next one rewrites the rows."""
    import capsviz.model.conv as conv

    torch.manual_seed(5)
    weight, bias = torch.randn(256, 256, 9, 9) / 144, torch.randn(256)
    packed = conv.patch_weight(weight)
    x1, x2 = torch.rand(1, 256, 28, 28), torch.rand(1, 256, 28, 28)
    ptr = conv._patch_columns(x1, 9, 2)[0].data_ptr()
    y1 = conv.im2col_conv2d(x1, packed, bias, 9, 2)  # a pair's 100 rows
    y2 = conv.im2col_conv2d(x2, packed, bias, 9, 2)
    for x, y in ((x1, y1), (x2, y2)):
        ref = torch.nn.functional.conv2d(x, weight, bias, stride=2).permute(0, 2, 3, 1)
        torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-4)
    assert conv._patch_columns(torch.rand(1, 256, 20, 20), 9, 2)[0].data_ptr() == ptr  # a digit's 36 rows
    bf16 = conv._patch_columns(x1, 9, 2, torch.bfloat16)[0]  # a buffer of its own type ...
    rows1 = conv._patch_columns(x1, 9, 2)[0]  # ... which the float32 rows do not overwrite
    assert bf16.dtype == torch.bfloat16 and bf16.data_ptr() != ptr == rows1.data_ptr()
    torch.testing.assert_close(bf16.float(), rows1, rtol=1e-2, atol=1e-2)
    other = []
    worker = threading.Thread(target=lambda: other.append(conv._patch_columns(x1, 9, 2)[0].data_ptr()))
    worker.start()
    worker.join()
    assert other[0] != ptr
    with torch.inference_mode():  # the buffer serves passes in and outside inference mode
        y1_again = conv.im2col_conv2d(x1, packed, bias, 9, 2)
    torch.testing.assert_close(y1_again, y1)
    conv._patch_buffers.kept.clear()
    with torch.inference_mode():
        conv.im2col_conv2d(x2, packed, bias, 9, 2)
    with torch.no_grad():
        torch.testing.assert_close(conv.im2col_conv2d(x1, packed, bias, 9, 2), y1)
    big = torch.rand(2, 256, 28, 28)  # 200 x 20,736 float32: 16.6 MB
    assert conv._patch_columns(big, 9, 2)[0].shape == (200, 20736)
    kept = conv._patch_buffers.kept["patches", torch.float32]
    assert kept.numel() * 4 <= conv.PATCH_BUFFER_MAX_BYTES


def test_the_few_image_product_split_per_thread_equals_one_product(monkeypatch):
    """PrimaryCaps' few-image product, its inner dimension in one part per intra-op thread,
    gives one addmm's numbers on 1, 2, 3 and 5 threads, at a digit's 36 rows, a pair's 100
    and past ``SPLIT_MAX_ROWS``; it splits (a batched product) exactly on 2 or 3 threads up
    to ``SPLIT_MAX_ROWS`` rows (5 does not divide K)."""
    import capsviz.model.conv as conv
    from capsviz.runtime import intra_op_threads

    batched, bmm = [], torch.bmm
    monkeypatch.setattr(torch, "bmm", lambda *a: batched.append(a[0].shape[0]) or bmm(*a))
    torch.manual_seed(4)
    packed, bias = torch.randn(20736, 256), torch.randn(256)
    for rows in (36, 100, conv.SPLIT_MAX_ROWS + 1):
        cols = torch.relu(torch.randn(rows, 20736))
        whole = torch.addmm(bias, cols, packed)  # entries up to about 400
        for threads in (1, 2, 3, 5):
            batched.clear()
            with intra_op_threads(threads):
                split = conv.split_product(cols, packed, bias)
                torch.testing.assert_close(split, whole, rtol=1e-5, atol=1e-3)
                torch.testing.assert_close(conv.split_product(cols, packed, None), whole - bias, rtol=1e-5, atol=1e-3)
            splits = threads in (2, 3) and rows <= conv.SPLIT_MAX_ROWS
            assert batched == ([threads, threads] if splits else [])
