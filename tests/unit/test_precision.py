"""Mixed-precision training: the choice of precision, the model's parts in bfloat16 against
float64, and a training run in bf16."""

from __future__ import annotations

import pytest
import torch

import capsviz.train.precision as precision
from capsviz.data.mnist import load_sample
from capsviz.model import CapsNet
from capsviz.model.conv import spectral_conv2d
from capsviz.model.routing import capsule_length, dynamic_routing, squash
from capsviz.train.checkpoint import load_checkpoint, read_info
from capsviz.train.config import TrainConfig
from capsviz.train.loop import Trainer

CPU = torch.device("cpu")


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.detach().double() - b.detach().double()).norm() / b.detach().double().norm())


def pretend_cpu(monkeypatch, units: tuple[str, ...], speedup: float) -> None:
    """Make this CPU read as one with bfloat16 ``units`` multiplying at ``speedup`` x float32's rate."""
    import capsviz.runtime as runtime

    monkeypatch.setattr(runtime, "cpu_bf16_units", lambda: units)
    monkeypatch.setattr(runtime, "bf16_speedup", lambda: speedup)
    monkeypatch.setattr(precision, "cpu_bf16_units", lambda: units)
    monkeypatch.setattr(precision, "bf16_speedup", lambda: speedup)


def test_the_amx_paths_are_taken_for_bfloat16_on_a_cpu_with_amx_only(monkeypatch):
    """The dense DFTs and routing on the (B, I, J, D) layout: bfloat16 on the CPU where its
    bfloat16 units include AMX; not for float32, not without AMX (a Zen 4, or a Xeon whose
    AMX the virtual machine hides), not off the CPU."""
    import capsviz.runtime as runtime
    from capsviz.model import conv, routing

    bf16 = torch.empty(0, dtype=torch.bfloat16)
    for units, amx in ((("amx_bf16", "avx512_bf16"), True), (("avx512_bf16",), False), ((), False)):
        pretend_cpu(monkeypatch, units, 4.0)
        assert runtime.amx_products() is amx
        assert conv.use_dense_dft(bf16) is amx and not conv.use_dense_dft(bf16.float())
        assert routing.routes_in_blocks(torch.bfloat16, CPU) is amx
        assert not routing.routes_in_blocks(torch.float32, CPU)
        assert not routing.routes_in_blocks(torch.bfloat16, torch.device("meta"))


def test_auto_is_bf16_only_where_the_hardware_runs_it_faster(monkeypatch):
    pretend_cpu(monkeypatch, (), 0.0)  # an AMD Zen 3: no bfloat16 units
    assert precision.resolve_precision("auto", CPU) == "fp32"
    assert "no bfloat16 units" in precision.why_precision("auto", CPU)
    pretend_cpu(monkeypatch, ("avx512_bf16",), 0.58)  # a Xeon whose AMX is not available
    assert precision.resolve_precision("auto", CPU) == "fp32"
    assert precision.why_precision("auto", CPU) == (
        "auto: this CPU's bfloat16 units (avx512_bf16) multiply at 0.58x float32's rate, no faster"
    )
    pretend_cpu(monkeypatch, ("amx_bf16", "avx512_bf16"), 6.2)
    assert precision.resolve_precision("auto", CPU) == "bf16"
    assert precision.why_precision("auto", CPU) == (
        "auto: this CPU's bfloat16 units (amx_bf16, avx512_bf16) multiply 6.2x as fast as float32"
    )
    assert precision.why_precision("fp32", CPU) == ""
    assert precision.resolve_precision("fp32", CPU) == "fp32" and precision.resolve_precision("bf16", CPU) == "bf16"
    with pytest.raises(ValueError, match="fp16 needs a CUDA GPU"):
        precision.resolve_precision("fp16", CPU)
    with pytest.raises(ValueError, match="precision must be one of auto, fp32, bf16, fp16"):
        precision.resolve_precision("half", CPU)
    with pytest.raises(ValueError, match="precision must be one of"):
        TrainConfig(precision="fp8")


def test_the_cpu_units_are_read_from_the_cpu_flags():
    units = precision.cpu_bf16_units()
    assert set(units) <= set(precision.CPU_BF16_FLAGS)
    with open("/proc/cpuinfo") as f:
        flags = next(line for line in f if line.startswith("flags")).split()
    assert set(units) == {u for u in precision.CPU_BF16_FLAGS if u in flags}


def test_the_bf16_rate_is_measured_where_the_cpu_has_the_units(monkeypatch):
    """Without the units nothing is timed (0.0); with them the rate is a measured ratio of
    two products' times, the same for the rest of the process."""
    import capsviz.runtime as runtime

    speedup = runtime.bf16_speedup()
    assert speedup == runtime.bf16_speedup()  # measured once
    if runtime.cpu_bf16_units():
        assert 0.05 < speedup < 50  # AVX-512 BF16 without AMX about 0.6, AMX about 6
        assert runtime.bf16_is_faster() == (speedup >= runtime.BF16_MIN_SPEEDUP)
    else:
        assert speedup == 0.0 and not runtime.bf16_is_faster()
    runtime.bf16_speedup.cache_clear()
    monkeypatch.setattr(runtime, "cpu_bf16_units", lambda: ())
    assert runtime.bf16_speedup() == 0.0 and not runtime.bf16_is_faster()
    runtime.bf16_speedup.cache_clear()  # the next call measures this machine again


@pytest.mark.skipif(not precision.cpu_bf16_units(), reason="the rate is measured only where the CPU has the units")
def test_a_busy_machine_does_not_change_the_bf16_decision():
    """The probe times CPU time on one intra-op thread: beside two busy processes (on this
    2-core machine, every core taken) it decides as on a quiet machine, and leaves the calling
    thread's intra-op thread count as it was."""
    import subprocess
    import sys

    import capsviz.runtime as runtime

    threads = torch.get_num_threads()
    runtime.bf16_speedup.cache_clear()
    quiet = runtime.bf16_speedup()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        loaded = []
        for _ in range(3):
            runtime.bf16_speedup.cache_clear()
            loaded.append(runtime.bf16_speedup())
    finally:
        for process in busy:
            process.kill()
            process.wait()
        runtime.bf16_speedup.cache_clear()
    assert torch.get_num_threads() == threads
    faster = quiet >= runtime.BF16_MIN_SPEEDUP
    assert [rate >= runtime.BF16_MIN_SPEEDUP for rate in loaded] == [faster] * 3, (quiet, loaded)
    # on the wall clock, two threads: 0.96-2.74 beside two busy loops where quiet gave about 0.6
    assert all(1 / 1.6 < rate / quiet < 1.6 for rate in loaded), (quiet, loaded)


@pytest.mark.parametrize("amx", [False, True], ids=["two-stage", "dense"])
def test_the_spectral_primarycaps_conv_in_bf16_is_as_close_to_float64_as_onednns(amx, monkeypatch):
    """Under autocast the DFT path runs its products in bfloat16, its DFTs as one dense
    product per transform on a CPU with AMX; its values and gradients stay within
    bfloat16's rounding of a float64 reference, as close as oneDNN's own bfloat16
    convolution."""
    from capsviz.model import conv

    monkeypatch.setattr(conv, "amx_products", lambda: amx)
    torch.manual_seed(2)
    x = torch.relu(torch.randn(12, 64, 20, 20, dtype=torch.float64))
    w = 0.05 * torch.randn(32, 64, 9, 9, dtype=torch.float64)
    bias = 0.1 * torch.randn(32, dtype=torch.float64)
    g = torch.randn(12, 32, 6, 6, dtype=torch.float64)
    ref_x, ref_w = (t.clone().requires_grad_() for t in (x, w))
    ref = torch.nn.functional.conv2d(ref_x, ref_w, bias, stride=2)
    ref_grads = torch.autograd.grad(ref, (ref_x, ref_w), g)

    def run(conv):
        xs, ws = x.float().requires_grad_(), w.float().requires_grad_()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = conv(xs, ws)
        grads = torch.autograd.grad(out, (xs, ws), g.to(out.dtype))
        assert grads[0].dtype == torch.float32 and grads[1].dtype == torch.float32  # the inputs' types
        return out, grads

    out, grads = run(lambda xs, ws: spectral_conv2d(xs, ws, bias.float(), 2).permute(0, 3, 1, 2))
    onednn, onednn_grads = run(lambda xs, ws: torch.nn.functional.conv2d(xs, ws, bias.float(), stride=2))
    assert relative_error(out, ref) < 2e-2 and relative_error(out, ref) < 3 * relative_error(onednn, ref)
    for ours, theirs, exact in zip(grads, onednn_grads, ref_grads):
        assert relative_error(ours, exact) < 3e-2
        assert relative_error(ours, exact) < 3 * relative_error(theirs, exact)


def test_routing_in_bf16_keeps_c_and_v_float32_and_its_gradient_close_to_float64():
    torch.manual_seed(7)
    u_hat = 0.3 * torch.randn(4, 50, 10, 16, dtype=torch.float64)
    g = torch.randn(4, 10, 16, dtype=torch.float64)
    exact = u_hat.clone().requires_grad_()
    v_ref = dynamic_routing(exact, 3, record=True)[0]
    (grad_ref,) = torch.autograd.grad(v_ref, exact, g)
    low = u_hat.to(torch.bfloat16).requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        v = dynamic_routing(low, 3)[0]  # the hand-written backward
        _, record = dynamic_routing(low.detach(), 3, record=True)
    assert v.dtype == torch.float32 and record["c"][-1].dtype == torch.float32
    torch.testing.assert_close(record["c"][-1].sum(-1), torch.ones(4, 50), rtol=0, atol=1e-6)
    (grad,) = torch.autograd.grad(v, low, g.float())
    assert grad.dtype == torch.bfloat16
    assert relative_error(v, v_ref) < 2e-2 and relative_error(grad, grad_ref) < 3e-2
    s = torch.randn(3, 16, dtype=torch.bfloat16)
    assert squash(s).dtype == torch.float32 and capsule_length(s).dtype == torch.float32


@pytest.mark.parametrize("amx", [False, True], ids=["float32-routing", "amx"])
def test_predictions_in_bf16_are_routed_as_documented_and_stay_near_float64(amx, monkeypatch):
    """Under bfloat16 autocast the training path of DigitCaps (predict_and_route) makes the
    predictions in bfloat16. On the CPU it routes them in float32, or in bfloat16 on a CPU
    with AMX (u_hat then laid out (B, I, J, D)): v equals autocast's predictions routed by
    dynamic_routing in that type (bit for bit in float32, within a bfloat16 rounding step
    in bfloat16, whose products sum in another order there); the gradients
    of u and W, whose products stay in bfloat16, are within bfloat16's rounding of that
    path's; all are float32 like their inputs, and within bfloat16's rounding of float64."""
    from capsviz.model import routing
    from capsviz.model.routing import predict_and_route

    monkeypatch.setattr(routing, "amx_products", lambda: amx)
    assert routing.routes_in_blocks(torch.bfloat16, torch.device("cpu")) == amx
    torch.manual_seed(3)
    u64 = 0.5 * torch.randn(4, 40, 8, dtype=torch.float64)
    w64 = 0.3 * torch.randn(40, 10, 16, 8, dtype=torch.float64)
    g = torch.randn(4, 10, 16, dtype=torch.float64)

    def plain(u, w, record):  # the predictions by (autocast's) bmm, then dynamic_routing
        u_hat = torch.bmm(u.transpose(0, 1), w.reshape(40, 160, 8).transpose(1, 2)).view(40, 4, 10, 16)
        return dynamic_routing(u_hat.transpose(0, 1), 3, record=record)[0]

    def routed_as_documented(u, w):  # autocast's predictions, routed in float32 without autocast or in bfloat16
        u_hat = torch.bmm(u.transpose(0, 1), w.reshape(40, 160, 8).transpose(1, 2)).view(40, 4, 10, 16)
        assert u_hat.dtype == torch.bfloat16
        if amx:
            return dynamic_routing(u_hat.transpose(0, 1), 3)[0]
        with torch.autocast("cpu", enabled=False):
            return dynamic_routing(u_hat.transpose(0, 1).float(), 3)[0]

    results = []
    for f in (predict_and_route, lambda u, w, _: routed_as_documented(u, w)):
        u, w = u64.float().requires_grad_(), w64.float().requires_grad_()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            v = f(u, w, 3)
        results.append((v, *torch.autograd.grad(v, (u, w), g.float())))
    (v, *grads), (v_routed, *grads_routed) = results
    if amx:  # the same sums in another order, each product rounded to bfloat16: one step of it at most
        assert relative_error(v, v_routed) < 5e-3
    else:
        torch.testing.assert_close(v, v_routed, rtol=0, atol=0)
    for ours, theirs in zip(grads, grads_routed):
        assert ours.dtype == torch.float32
        assert relative_error(ours, theirs) < 1e-2
    exact = (u64.requires_grad_(), w64.requires_grad_())
    v_ref = plain(*exact, True)  # autograd through the plain loop
    refs = (v_ref, *torch.autograd.grad(v_ref, exact, g))
    for ours, ref in zip(results[0], refs):
        assert relative_error(ours, ref) < 3e-2


@pytest.mark.slow
def test_a_bf16_training_run_learns_keeps_float32_weights_and_records_its_precision(tmp_path):
    sample = load_sample()
    config = TrainConfig(
        epochs=2, batch_size=16, train_subset=160, test_subset=100, device="cpu", precision="bf16", seed=1
    )
    path = tmp_path / "bf16.safetensors"
    trainer = Trainer(config, sample, sample, checkpoint_path=path)
    losses = [ev.loss for ev in trainer.run() if type(ev).__name__ == "BatchEvent"]
    assert all(torch.isfinite(torch.tensor(losses)))
    assert sum(losses[-5:]) < sum(losses[:5])  # it learns
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters())
    assert read_info(path).train_config["precision"] == "bf16"
    model, info, _ = load_checkpoint(path)
    assert isinstance(model, CapsNet) and info.train_config["precision"] == "bf16"


def test_auto_records_the_precision_it_chose(tmp_path, monkeypatch):
    pretend_cpu(monkeypatch, (), 0.0)
    sample = load_sample()
    config = TrainConfig(epochs=1, batch_size=16, train_subset=32, test_subset=16, device="cpu")
    assert config.precision == "auto"
    path = tmp_path / "auto.safetensors"
    trainer = Trainer(config, sample, sample, checkpoint_path=path)
    list(trainer.run())
    assert trainer.precision == "fp32" and read_info(path).train_config["precision"] == "fp32"
