"""PrimaryCaps' spectral convolution in its two forms, per type, side by side.

Usage: python benchmarks/spectral_dft.py [--batch-size 128] [--image-size 28]
[--repeats 10] [--precision bf16,fp32]

The spectral path (``capsviz.model.conv``) takes one of two forms. Two-stage: the DFTs as
small-by-wide products per axis ((57 x 40) @ (40 x 32,768) per row frequency and the
like) and Gauss's three real products per frequency (541 for a digit). Dense: one dense
product per transform ((362 x 400) @ (400 x 32,768) for a digit's input spectra) and the
four real products of each of 181 frequencies, [Xr; Xi] @ Wr^T and [Xr; Xi] @ Wi^T, in
two contiguous batches of (2B x C) @ (C x C) products; AMX runs both near its rate. For
each type the script times the convolution's forward pass and its forward and backward
passes in both forms, taking turns, and marks with ``*`` the form the path takes on this
machine (``capsviz.model.conv.use_dense_dft``), with the GFLOP of each form's products
(torch's ``FlopCounterMode``). It also gives each form's relative error against float64
(values, and the gradients of input and kernels). The last line is a JSON object with
the medians and the machine.
"""

from __future__ import annotations

import contextlib
import json
import statistics

import torch
from routing_products import parse_arguments
from torch.utils.flop_counter import FlopCounterMode
from train_speed import time_interleaved

from capsviz.model import conv
from capsviz.model.config import CapsNetConfig
from capsviz.runtime import machine_line, machine_summary, retain_freed_memory
from capsviz.train.precision import DTYPES

FORMS = ("two-stage", "dense")


@contextlib.contextmanager
def form(name: str):
    """The spectral path in the form ``name`` (one of ``FORMS``) for the duration."""
    chosen = conv.use_dense_dft
    conv.use_dense_dft = lambda t: name == "dense"
    try:
        yield
    finally:
        conv.use_dense_dft = chosen


def inputs(dtype: torch.dtype, cfg: CapsNetConfig, batch: int, gen: torch.Generator) -> tuple:
    """(x, w, grad_y) for PrimaryCaps of ``cfg`` on ``batch`` maps in ``dtype``: non-negative
    maps (ReLU outputs, as PrimaryCaps reads them) laid out (H, W, B, C_in) in memory as
    Conv1 gives them in training, kernels laid out (k, k, C_out, C_in) as PrimaryCaps keeps
    them, and a gradient of the output (B, oh, ow, C_out), the layout of the output."""
    k, stride, c = cfg.kernel_size, cfg.primary_stride, cfg.conv1_channels
    side = cfg.image_size - k + 1  # Conv1's output, PrimaryCaps' input
    c_out, out = cfg.primary_types * cfg.primary_dim, (side - k) // stride + 1
    x = torch.relu(torch.randn(side, side, batch, c, generator=gen)).to(dtype).permute(2, 3, 0, 1)
    w = (0.05 * torch.randn(k, k, c_out, c, generator=gen)).to(dtype).permute(2, 3, 0, 1)
    g = torch.randn(batch, out, out, c_out, generator=gen).to(dtype)
    return x, w, g


def passes(dtype: torch.dtype, cfg: CapsNetConfig, batch: int, gen: torch.Generator) -> dict[str, dict]:
    """pass -> {form: callable} for PrimaryCaps of ``cfg`` on ``batch`` maps in ``dtype``:
    the forward pass, and the forward and backward passes. Each callable returns the
    output and the gradients of input and kernels (None for the forward pass alone)."""
    x, w, g = inputs(dtype, cfg, batch, gen)

    def run(name: str, backward: bool):
        def call():
            with form(name), torch.set_grad_enabled(backward):
                xs, ws = x.detach().requires_grad_(backward), w.detach().requires_grad_(backward)
                y = conv.spectral_conv2d(xs, ws, None, cfg.primary_stride)
                return (y, *torch.autograd.grad(y, (xs, ws), g)) if backward else (y, None, None)

        return call

    return {
        "forward": {name: run(name, False) for name in FORMS},
        "forward and backward": {name: run(name, True) for name in FORMS},
    }


def gflop(fn) -> float:
    """The GFLOP of the matrix products ``fn`` runs (torch's FlopCounterMode)."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops() / 1e9


def errors(dtype: torch.dtype, cfg: CapsNetConfig) -> dict[str, dict[str, float]]:
    """form -> {"y", "grad x", "grad w"}: each form's relative errors in ``dtype`` against
    float64 ``conv2d`` and its gradients, 8 maps of 32 channels to 32 channels."""
    small = CapsNetConfig(image_size=cfg.image_size, conv1_channels=32, primary_types=4)
    x, w, g = inputs(torch.float64, small, 8, torch.Generator().manual_seed(5))
    x, w = x.requires_grad_(), w.requires_grad_()
    y = torch.nn.functional.conv2d(x, w, stride=small.primary_stride).permute(0, 2, 3, 1)
    want = (y, *torch.autograd.grad(y, (x, w), g))
    want = tuple(t.detach() for t in want)
    got = passes(dtype, small, 8, torch.Generator().manual_seed(5))["forward and backward"]
    return {
        name: {
            key: float((a.detach().double() - b).norm() / b.norm())
            for key, a, b in zip(("y", "grad x", "grad w"), got[name](), want)
        }
        for name in FORMS
    }


def main() -> None:
    args, names = parse_arguments(__doc__.split("\n\n")[0], 10, "bf16,fp32")
    retain_freed_memory()  # as capsviz train
    print(machine_line(machine_summary()))
    cfg = CapsNetConfig(image_size=args.image_size)
    gen = torch.Generator().manual_seed(0)
    medians: dict[str, dict] = {}
    flops: dict[str, dict] = {}
    errs: dict[str, dict] = {}
    for name in names:
        dtype = DTYPES[name]
        used = "dense" if conv.use_dense_dft(torch.empty(0, dtype=dtype)) else "two-stage"
        medians[name], flops[name] = {}, {}
        for which, forms in passes(dtype, cfg, args.batch_size, gen).items():
            times = time_interleaved(forms, args.repeats, 2)
            ms = {f: 1e3 * statistics.median(t) for f, t in times.items()}
            work = {f: gflop(fn) for f, fn in forms.items()}
            medians[name][which] = {f: round(value, 3) for f, value in ms.items()}
            flops[name][which] = {f: round(value, 3) for f, value in work.items()}
            cells = "  ".join(
                f"{f}{'*' if f == used else ' '} {value:7.2f} ms ({work[f]:5.1f} GFLOP)" for f, value in ms.items()
            )
            print(f"{name} {which:21s} {cells}")
        errs[name] = errors(dtype, cfg)
        for f, values in errs[name].items():
            print(
                f"{name} {f} relative error against float64: "
                + ", ".join(f"{key} {value:.2e}" for key, value in values.items())
            )
    print(
        json.dumps(
            {
                "medians_ms": medians,
                "gflop": flops,
                "relative_error": errs,
                "batch_size": args.batch_size,
                "image_size": args.image_size,
                **machine_summary(),
            }
        )
    )


if __name__ == "__main__":
    main()
