"""PrimaryCaps' spectral DFTs in their two forms, per type, side by side.

Usage: python benchmarks/spectral_dft.py [--batch-size 128] [--image-size 28]
[--repeats 10] [--precision bf16,fp32]

The spectral path (``capsviz.model.conv``) takes six transforms per training step: the
Gauss factors of the input's and the kernels' spectra, the inverse to the strided outputs,
and the transposes of the three in the backward pass. Each is either two small-by-wide
products per axis (the two-stage DFTs: (57 x 40) @ (40 x 32,768) per row frequency and
the like) or one dense product ((541 x 400) @ (400 x 32,768) for a digit's input): 2.8
to 7.5 times the multiply-adds per transform (5.6 times in all for digits) in a shape
that AMX runs near its rate. For each type the
script times both forms of each transform, taking turns, and marks with ``*`` the form
the path takes on this machine (``capsviz.model.conv.use_dense_dft``), with the GFLOP of
each form's products (torch's ``FlopCounterMode``). It also gives the
relative error of each form's input spectra against float64 (the dense matrices are
rounded with the error carried along their rows, ``_carried_rounding``). The last line
is a JSON object with the medians and the machine.
"""

from __future__ import annotations

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


def transforms(dtype: torch.dtype, cfg: CapsNetConfig, batch: int, gen: torch.Generator) -> dict[str, dict]:
    """transform -> {form: callable} for PrimaryCaps of ``cfg`` on ``batch`` images in ``dtype``."""
    k, stride, c = cfg.kernel_size, cfg.primary_stride, cfg.conv1_channels
    side = cfg.image_size - k + 1  # Conv1's output, PrimaryCaps' input
    like = torch.empty(0, dtype=dtype)
    half_x, full_x0, full_x, half_w, full_w0, full_w, *inverse = conv._matrices(side, side, k, stride, like)
    dft_x, dft_w, inv = conv._dense_dft(side, side, k, stride, dtype, transposed=False)
    dft_x_t, dft_w_t, inv_t = conv._dense_dft(side, side, k, stride, dtype, transposed=True)
    n_freq, oh = dft_x.shape[0], (side - k) // stride + 1
    x = torch.randn(side, side * batch * c, generator=gen).to(dtype)
    w = torch.randn(k, k * c * c, generator=gen).to(dtype)
    p = torch.randn(n_freq, batch * c, generator=gen).to(dtype)
    grad_y = torch.randn(oh, oh, batch * c, generator=gen).to(dtype)
    grad_x3 = torch.randn(n_freq, batch * c, generator=gen).to(dtype)
    grad_w3 = torch.randn(n_freq, c * c, generator=gen).to(dtype)
    return {
        "input spectra": {
            "two-stage": lambda: conv._spectrum(x, half_x, full_x0, full_x),
            "dense": lambda: torch.mm(dft_x, x.view(side * side, -1)),
        },
        "kernel spectra": {
            "two-stage": lambda: conv._spectrum(w, half_w, full_w0, full_w),
            "dense": lambda: torch.mm(dft_w, w.view(k * k, -1)),
        },
        "inverse": {
            "two-stage": lambda: conv._inverse(p, *inverse),
            "dense": lambda: torch.mm(inv, p),
        },
        "inverse, transposed": {
            "two-stage": lambda: conv._inverse_transposed(grad_y, *inverse),
            "dense": lambda: torch.mm(inv_t, grad_y.view(oh * oh, -1)),
        },
        "input spectra, transposed": {
            "two-stage": lambda: conv._spectrum_transposed(grad_x3, half_x, full_x0, full_x),
            "dense": lambda: torch.mm(dft_x_t, grad_x3),
        },
        "kernel spectra, transposed": {
            "two-stage": lambda: conv._spectrum_transposed(grad_w3, half_w, full_w0, full_w),
            "dense": lambda: torch.mm(dft_w_t, grad_w3),
        },
    }


def gflop(fn) -> float:
    """The GFLOP of the matrix products ``fn`` runs (torch's FlopCounterMode)."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops() / 1e9


def spectra_errors(dtype: torch.dtype, cfg: CapsNetConfig, gen: torch.Generator) -> dict[str, float]:
    """Relative error against float64 of the input spectra of non-negative maps (ReLU
    outputs, as PrimaryCaps reads them) in each form, 8 images of 32 channels."""
    k, stride = cfg.kernel_size, cfg.primary_stride
    side = cfg.image_size - k + 1
    x64 = torch.relu(torch.randn(side, side * 8 * 32, dtype=torch.float64, generator=gen))
    exact = conv._spectrum(x64, *conv._matrices(side, side, k, stride, x64)[:3])
    x = x64.to(dtype)
    half_x, full_x0, full_x = conv._matrices(side, side, k, stride, x)[:3]
    dft_x = conv._dense_dft(side, side, k, stride, dtype, transposed=False)[0]
    ours = {
        "two-stage": conv._spectrum(x, half_x, full_x0, full_x),
        "dense": torch.mm(dft_x, x.view(side * side, -1)),
    }
    return {form: float((got.double() - exact).norm() / exact.norm()) for form, got in ours.items()}


def main() -> None:
    args, names = parse_arguments(__doc__.split("\n\n")[0], 10, "bf16,fp32")
    retain_freed_memory()  # as capsviz train
    print(machine_line(machine_summary()))
    cfg = CapsNetConfig(image_size=args.image_size)
    gen = torch.Generator().manual_seed(0)
    medians: dict[str, dict] = {}
    flops: dict[str, dict] = {}
    errors: dict[str, dict] = {}
    for name in names:
        dtype = DTYPES[name]
        used = "dense" if conv.use_dense_dft(torch.empty(0, dtype=dtype)) else "two-stage"
        medians[name], flops[name] = {}, {}
        for transform, forms in transforms(dtype, cfg, args.batch_size, gen).items():
            times = time_interleaved(forms, args.repeats, 2)
            ms = {form: 1e3 * statistics.median(t) for form, t in times.items()}
            work = {form: gflop(fn) for form, fn in forms.items()}
            medians[name][transform] = {form: round(value, 3) for form, value in ms.items()}
            flops[name][transform] = {form: round(value, 3) for form, value in work.items()}
            cells = "  ".join(
                f"{form}{'*' if form == used else ' '} {value:7.2f} ms ({work[form]:5.2f} GFLOP)"
                for form, value in ms.items()
            )
            print(f"{name} {transform:27s} {cells}")
        totals = {form: sum(row[form] for row in medians[name].values()) for form in ("two-stage", "dense")}
        errors[name] = spectra_errors(dtype, cfg, gen)
        print(f"{name} all six                     " + "  ".join(f"{form}  {v:7.2f} ms" for form, v in totals.items()))
        print(
            f"{name} input spectra, relative error against float64: "
            + ", ".join(f"{form} {value:.2e}" for form, value in errors[name].items())
        )
    print(
        json.dumps(
            {
                "medians_ms": medians,
                "gflop": flops,
                "spectra_relative_error": errors,
                "batch_size": args.batch_size,
                "image_size": args.image_size,
                **machine_summary(),
            }
        )
    )


if __name__ == "__main__":
    main()
