"""Training throughput of capsviz against a reference design, and against the hardware.

Usage: python benchmarks/train_speed.py [--steps 6] [--warmup 2] [--batch-size 128] [--device auto]
                                        [--precision fp32|bf16|fp16|fp32,bf16] [--dataset mnist|multimnist]
                                        [--no-reference] [--profile] [--default-allocator]

Measures, in one run and side by side:

- ``train_images_per_s``: capsviz's CapsNet, one full optimizer step (forward, margin +
  reconstruction loss, backward, Adam), 3 routing iterations, in ``--precision`` as
  ``capsviz train`` runs it (:mod:`capsviz.train.precision`); the median over ``--steps``
  steps after ``--warmup`` warm-up steps;
- ``reference_train_images_per_s``: the same network written the way much public
  PyTorch code does: W tiled over the batch to (B, 1152, 10, 16, 8) and multiplied with
  ``torch.matmul``; routing logits kept as a (B, 1152, 10, 1, 1) tensor;
- ``peak_gflops``: the median rate of a 4096 x 4096 matrix product in that precision (the
  reduced type for bf16 and fp16, which is what autocast gives the products);
- ``fraction_of_peak`` = train_images_per_s x 1.214 / peak_gflops (one training image
  costs about 1.214 GFLOP: 3 x the forward pass's 404.6 MFLOP, counted for a direct
  convolution). On the CPU capsviz computes PrimaryCaps through DFTs with about 3.4x
  fewer multiply-adds, so this can exceed 1; ``executed_fraction_of_peak`` counts the
  0.41 GFLOP per image actually computed instead.

Both networks run under the same autocast. ``--dataset multimnist`` times the 36x36
network (10x10 PrimaryCaps grid, 3,200 primary capsules) with the two-digit objective as
``capsviz train --dataset multimnist`` runs it (margin loss with both labels, one
reconstruction per digit against that digit alone), the reference likewise at 36x36 (its
decoder run once per digit); the GFLOP counts, and so ``fraction_of_peak``, are MNIST's only.
``--profile`` prints the 15 operators that take the most time in
one capsviz step (torch profiler, self CPU or CUDA time), then its 30 costliest operator
calls grouped by input shapes, types and layouts, with each matrix product's GFLOP/s
(:func:`operator_calls`). On 2 cores the profiler's own work slows some calls: time a call
alone before acting on its figure.

Both networks run in one process with the same allocator settings: by default those
of ``capsviz train`` (:func:`capsviz.runtime.retain_freed_memory`);
``--default-allocator`` leaves glibc's defaults, to show what that setting is worth.

``--precision fp32,bf16`` times both precisions in one process, their steps taking turns
(each precision's networks start from the same weights), and prints each rate against the
first precision's (``bf16_over_fp32``): the ratio the machine's load changes least.
``--no-reference`` leaves the reference network out.

The last line printed is a JSON object with these figures (those of the first precision,
and ``by_precision`` with each one's when there are several), ``precision``, ``device``,
the machine (:func:`capsviz.runtime.machine_summary`) and ``allocator``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from torch import nn

from capsviz.model import CapsNet, CapsNetConfig, total_loss
from capsviz.model.conv import _dft_matrices
from capsviz.model.losses import two_digit_loss
from capsviz.runtime import machine_line, machine_summary, retain_freed_memory, select_device
from capsviz.train.loop import adam
from capsviz.train.precision import DTYPES, allow_tf32, autocast, grad_scaler, resolve_precision

GFLOP_PER_TRAIN_IMAGE = 1.214


def executed_gflop_per_train_image(batch: int) -> float:
    """What capsviz's CPU path actually computes per training image, counted as
    ``GFLOP_PER_TRAIN_IMAGE`` is (3 x forward multiply-adds x 2, routing left out), with
    PrimaryCaps done by ``capsviz.model.conv.spectral_conv2d`` (19-point DFTs, 541 real
    channel products, its DFT matrices' multiply-adds per column); the kernel spectra are
    shared by the batch."""
    c, k, h = 256, 9, 20
    (_, ow, _, kh, _), *mats = _dft_matrices(h, h, k, 2)
    half_x, full_x0, full_x, half_w, full_w0, full_w, inv_a0, inv_a, inv_b = mats
    n_freq = full_x0.shape[0] + full_x.shape[0] * (kh - 1)
    conv1 = c * k * k * h * h
    spectral = (
        n_freq * c * c  # the channel contraction
        + (half_x.numel() * h + full_x0.numel() + full_x.numel() * (kh - 1)) * c  # the input's two DFT stages
        + (inv_a0.numel() + inv_a.numel() * (kh - 1) + inv_b.numel() * ow) * c  # the inverse's two stages
        + (half_w.numel() * k + full_w0.numel() + full_w.numel() * (kh - 1)) * c * c / batch
    )  # kernel spectra
    u_hat = 1152 * 10 * 16 * 8
    decoder = 160 * 512 + 512 * 1024 + 1024 * 784
    return 3 * 2 * (conv1 + spectral + u_hat + decoder) / 1e9


class ReferenceCapsNet(nn.Module):
    """The common public design: W tiled per batch, 5-D routing logits (for comparison only)."""

    def __init__(self, size: int = 28) -> None:
        super().__init__()
        self.size, self.grid = size, (size - 17) // 2 + 1  # 6 for 28, 10 for 36
        self.n = 32 * self.grid**2  # 1152, 3200
        self.conv1 = nn.Conv2d(1, 256, 9)
        self.primary = nn.Conv2d(256, 256, 9, stride=2)
        self.W = nn.Parameter(0.01 * torch.randn(1, self.n, 10, 16, 8))
        self.decoder = nn.Sequential(
            nn.Linear(160, 512), nn.ReLU(), nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, size * size), nn.Sigmoid()
        )

    @staticmethod
    def squash(s, dim):
        n2 = (s * s).sum(dim, keepdim=True)
        return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)

    def forward(self, x, y, iterations=3):
        bsz, n, g = x.shape[0], self.n, self.grid
        h = torch.relu(self.conv1(x))
        u = self.primary(h).view(bsz, 32, 8, g, g).permute(0, 1, 3, 4, 2).reshape(bsz, n, 8)
        u = self.squash(u, -1)
        W = self.W.repeat(bsz, 1, 1, 1, 1)  # (B, 1152, 10, 16, 8)
        u5 = u[:, :, None, :, None].repeat(1, 1, 10, 1, 1)  # (B, 1152, 10, 8, 1)
        u_hat = torch.matmul(W, u5)  # (B, 1152, 10, 16, 1)
        b = torch.zeros(bsz, n, 10, 1, 1, device=x.device)
        for r in range(iterations):
            c = torch.softmax(b, dim=2)
            s = (c * u_hat).sum(dim=1, keepdim=True)  # (B, 1, 10, 16, 1)
            v = self.squash(s, dim=3)
            if r < iterations - 1:
                b = b + torch.matmul(u_hat.transpose(3, 4), v.repeat(1, n, 1, 1, 1))
        v = v.squeeze(1).squeeze(-1)  # (B, 10, 16)
        lengths = torch.sqrt((v * v).sum(-1) + 1e-8)
        digits = y[:, None] if y.dim() == 1 else y  # (B, K): one reconstruction per digit
        recons = []
        for d in range(digits.shape[1]):
            mask = nn.functional.one_hot(digits[:, d], 10).float()
            recons.append(self.decoder((v * mask[:, :, None]).flatten(1)).view(bsz, 1, self.size, self.size))
        return lengths, recons[0] if y.dim() == 1 else torch.stack(recons, dim=1)


# the matrix products whose rate the per-call table gives: operator -> the positions of
# its two factors among its inputs (addmm and baddbmm take the added tensor first)
PRODUCTS = {"aten::mm": (0, 1), "aten::bmm": (0, 1), "aten::addmm": (1, 2), "aten::baddbmm": (1, 2)}
TYPE_NAMES = {"float": "fp32", "c10::BFloat16": "bf16", "c10::Half": "fp16", "double": "fp64"}


def product_flop(name: str, shapes: list) -> int:
    """Floating-point operations of one call of a matrix product (2 per multiply-add), from
    the input shapes the profiler recorded: the factors at ``PRODUCTS``' positions are
    (M, K) and (K, N), or batched (b, M, K) and (b, K, N). 0 for any other operator, and
    where the shapes were not recorded."""
    if name not in PRODUCTS:
        return 0
    i, j = PRODUCTS[name]
    if len(shapes) <= j or len(shapes[i]) < 2 or len(shapes[j]) < 2:
        return 0
    a, b = shapes[i], shapes[j]
    batch = a[0] if len(a) == 3 else 1
    return 2 * batch * a[-2] * a[-1] * b[-1]


def layout_mark(shape: list, strides: list) -> str:
    """How a tensor of ``shape`` lies in memory, as the per-call table marks it: "" row-major
    contiguous; "T" all its elements in order, but in another order of its axes (a
    transposed or permuted view); "B" broadcast (an axis of stride 0, as from ``expand``);
    "S" any other strides (a slice). Axes of length 1 do not count."""
    axes = [(n, s) for n, s in zip(shape, strides) if n > 1]
    if any(s == 0 for _, s in axes):
        return "B"
    for order, mark in ((axes, ""), (sorted(axes, key=lambda axis: -axis[1]), "T")):
        run = 1
        for n, s in reversed(order):
            if s != run:
                break
            run *= n
        else:
            return mark
    return "S"


def operator_calls(prof, rows: int = 30, cuda: bool = False) -> list[str]:
    """The ``rows`` costliest operator calls of a profile by self time, grouped by operator
    and by the shapes, types and layouts of its inputs, after a header line.

    Each line gives the total milliseconds, the number of calls, the input tensors' types
    (``fp32``, ``bf16``, ...; a converting copy as ``fp32->bf16``), their shapes, each
    followed by its :func:`layout_mark` (``T`` transposed or permuted, ``B`` broadcast,
    ``S`` sliced), and for a matrix product its rate in GFLOP/s. So one profile shows which
    products run in float32 under bf16 autocast, which run slowly for their size, and what
    each copy converts. Autocast's own layer over a product in another type (an event whose
    child is the same operator) is left out: its self time is the dispatch, not the product.

    ``prof``: a ``torch.profiler.profile`` run with ``record_shapes=True``; ``cuda``: the
    operators' CUDA self time (their kernels') instead of the CPU's, the kernels' own events
    left out.
    """
    groups: dict[tuple, list] = {}
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CPU:
            continue  # a kernel: its time is its operator's CUDA self time
        if any(child.name == event.name for child in event.cpu_children):
            continue
        us = event.self_device_time_total if cuda else event.self_cpu_time_total
        shapes = [list(s) for s in event.input_shapes or []]
        strides = [list(s) for s in (getattr(event, "structured_input_strides", None) or [])]
        dtypes = getattr(event, "input_dtypes", None) or []
        tensors = [k for k, shape in enumerate(shapes) if shape]
        types = tuple(TYPE_NAMES.get(dtypes[k], dtypes[k]) for k in tensors if k < len(dtypes))
        if event.name == "aten::copy_" and len(types) == 2:  # copy_(self, src): from src's type to self's
            types = (f"{types[1]}->{types[0]}",) if types[0] != types[1] else types[:1]
        shown = tuple(
            "x".join(map(str, shapes[k])) + (layout_mark(shapes[k], strides[k]) if k < len(strides) else "")
            for k in tensors
        )
        entry = groups.setdefault((event.name, shown, types), [0.0, 0, product_flop(event.name, shapes)])
        entry[0] += us
        entry[1] += 1
    lines = [f"{'ms':>8} {'calls':>5}  {'GFLOP/s':>7}  operator, types, shapes"]
    for (name, shown, types), (us, calls, flop) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:rows]:
        rate = f"{flop * calls / (us * 1e3):7.1f}" if flop and us else " " * 7
        lines.append(f"{us / 1e3:8.2f} {calls:5d}  {rate}  {name} {'/'.join(types)} {', '.join(shown)}")
    return lines


def time_interleaved(steps: dict, count: int, warmup: int, sync=lambda: None) -> dict[str, list[float]]:
    """Seconds of each of ``count`` calls of every function in ``steps`` (name -> function),
    after ``warmup`` calls each: the functions take turns, one call each per round, so a
    change in the machine's load falls on all of them alike. ``sync`` runs after each call
    inside its timing (a CUDA synchronize; nothing on the CPU). The other benchmarks time
    with it too."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for k in range(warmup + count):
        for name, step in steps.items():
            t0 = time.perf_counter()
            step()
            sync()
            if k >= warmup:
                times[name].append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--device", default="auto")
    parser.add_argument(
        "--precision",
        default="fp32",
        help="auto, fp32, bf16 or fp16, or several separated by commas (fp32,bf16): timed side by side",
    )
    parser.add_argument("--dataset", default="mnist", choices=("mnist", "multimnist"), help="28x28 or 36x36 pairs")
    parser.add_argument("--no-reference", action="store_true", help="time capsviz and the matrix product only")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print the top operators of one capsviz step, then its costliest calls by shape, type and layout",
    )
    parser.add_argument(
        "--default-allocator",
        action="store_true",
        help="keep glibc's malloc defaults instead of capsviz train's settings",
    )
    args = parser.parse_args()
    asked = [name.strip() for name in args.precision.split(",")]
    if not asked or any(name not in ("auto", *DTYPES) for name in asked):
        parser.error(f"--precision: auto, {', '.join(DTYPES)}, or several of them separated by commas")
    retained = False if args.default_allocator else retain_freed_memory()
    device = select_device(args.device)
    precisions = list(dict.fromkeys(resolve_precision(name, device) for name in asked))
    machine = machine_summary()
    print(machine_line(machine))
    allow_tf32(device)
    sync = (lambda: torch.cuda.synchronize()) if device.type == "cuda" else (lambda: None)
    torch.manual_seed(0)
    B, mnist = args.batch_size, args.dataset == "mnist"
    size = 28 if mnist else 36
    x = torch.rand(B, 1, size, size, device=device)
    y = torch.randint(0, 10, (B,), device=device)
    if not mnist:  # two different classes per pair, and each digit's own image as its target
        y = torch.stack([y, (y + torch.randint(1, 10, (B,), device=device)) % 10], dim=1)
        parts = torch.rand(B, 2, 1, size, size, device=device)

    def trainer(model, forward, precision):
        opt = adam(model.parameters(), lr=1e-3)  # as capsviz train
        scaler = grad_scaler(precision, device)

        def step():
            with autocast(precision, device):
                lengths, recon = forward(model)
            loss, _, _ = total_loss(lengths, recon, x, y) if mnist else two_digit_loss(lengths, recon, parts, y)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()

        return step

    def capsviz_forward(model):
        out = model(x, routing_iterations=3, target=y)
        return out.lengths, out.reconstruction

    def matmul_of(dtype):
        a = torch.randn(4096, 4096, device=device).to(dtype)
        b = torch.randn(4096, 4096, device=device).to(dtype)
        return lambda: torch.mm(a, b)

    capsviz_steps, reference_steps, matmuls = {}, {}, {}
    for precision in precisions:
        torch.manual_seed(0)  # the same initial weights in every precision
        model = CapsNet(CapsNetConfig(image_size=size)).to(device).train()
        capsviz_steps[precision] = trainer(model, capsviz_forward, precision)
        if not args.no_reference:
            reference = ReferenceCapsNet(size).to(device).train()
            reference_steps[precision] = trainer(reference, lambda r: r(x, y), precision)
        matmuls[precision] = matmul_of(DTYPES[precision])
    t_caps = time_interleaved(capsviz_steps, args.steps, args.warmup, sync)
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        key = "self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total"
        for precision, step in capsviz_steps.items():
            with profile(activities=activities, record_shapes=True) as prof:
                step()
                sync()
            print(f"one capsviz step, {precision}:")
            print(prof.key_averages().table(sort_by=key, row_limit=15))
            print(f"its operator calls by shape, {precision}:")
            print("\n".join(operator_calls(prof, cuda=device.type == "cuda")))
    t_ref = time_interleaved(reference_steps, args.steps, args.warmup, sync)
    t_mm = time_interleaved(matmuls, args.steps, 1, sync)
    results = {}
    for precision in precisions:
        ips = B / statistics.median(t_caps[precision])
        ref_ips = B / statistics.median(t_ref[precision]) if precision in t_ref else None
        peak = 2 * 4096**3 / statistics.median(t_mm[precision]) / 1e9
        steps = ", ".join(f"{t:.3f}" for t in t_caps[precision])
        print(f"capsviz {size}x{size}, {precision}: {ips:8.1f} images/s  (steps: {steps} s)")
        if ref_ips is not None:
            steps = ", ".join(f"{t:.3f}" for t in t_ref[precision])
            print(f"reference, {precision}: {ref_ips:8.1f} images/s  (steps: {steps} s)")
        print(f"matmul {precision}: {peak:8.1f} GFLOP/s")
        results[precision] = {
            "train_images_per_s": round(ips, 2),
            "reference_train_images_per_s": None if ref_ips is None else round(ref_ips, 2),
            "train_speedup": None if ref_ips is None else round(ips / ref_ips, 3),
            "peak_gflops": round(peak, 1),
            "fraction_of_peak": round(ips * GFLOP_PER_TRAIN_IMAGE / peak, 3) if mnist else None,
            # the same on the work actually done (CPU only; the GPU runs the direct convolution)
            "executed_fraction_of_peak": (
                round(ips * executed_gflop_per_train_image(B) / peak, 3) if device.type == "cpu" and mnist else None
            ),
        }
    first = precisions[0]
    result = {"precision": first, "dataset": args.dataset, **results[first]}
    if len(precisions) > 1:  # each precision against the first, measured in the same run
        result["by_precision"] = results
        for other in precisions[1:]:
            rate = results[other]["train_images_per_s"] / results[first]["train_images_per_s"]
            print(f"{other} / {first}: {rate:.2f}x images/s")
            result[f"{other}_over_{first}"] = round(rate, 3)
    result.update(
        {
            **machine,
            "device": str(device) if device.type != "cuda" else torch.cuda.get_device_name(device),
            "batch_size": B,
            "threads": torch.get_num_threads(),
            "allocator": "freed memory retained" if retained else "default",
        }
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
