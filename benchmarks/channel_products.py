"""PrimaryCaps' spectral channel products in a training step: MKL's batched products against
one oneDNN grouped convolution, side by side.

Usage: python benchmarks/channel_products.py [--image-size 28] [--batch-size 128]
[--repeats 10] [--precision fp32,bf16]

The spectral path (``capsviz.model.conv``) contracts the channels once per frequency and
Gauss factor: G = 541 products for MNIST (1,093 for 36x36 pairs). In a
training step that is three batched products, as ``_SpectralConv2d`` runs them:

- forward P = X W^T: (G, B, C_in) @ (G, C_in, C_out);
- backward dX = dP W: (G, B, C_out) @ (G, C_out, C_in);
- backward dW = dP^T X: (G, C_out, B) @ (G, B, C_in).

``torch.bmm`` runs them in MKL for float32 and in oneDNN for the reduced types. The same
three are one grouped 1-D convolution over the batch (``F.conv1d``, G groups, kernel 1,
the input laid out (G, C_in, B)) and its backward (``aten.convolution_backward``, the
input and the weight gradients in one call), which oneDNN runs in every type. The script
times the two ways, taking turns, and prints medians in ms, GFLOP/s and the ratio, with
the largest difference between their results relative to the largest value. It leaves out
the re-layouts the convolution would need in the model. The last line is a JSON object
with the medians (forward and backward of each way) and the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch
import torch.nn.functional as F
from train_speed import time_interleaved

from capsviz.model.config import CapsNetConfig
from capsviz.model.conv import _dft_matrices
from capsviz.runtime import machine_line, machine_summary, retain_freed_memory
from capsviz.train.precision import DTYPES


def products(dtype: torch.dtype, groups: int, batch: int, c_in: int, c_out: int, gen: torch.Generator) -> dict:
    """way -> (forward, backward) callables, each returning its results."""
    x = torch.randn(groups, batch, c_in, generator=gen).to(dtype)
    w = torch.randn(groups, c_out, c_in, generator=gen).to(dtype)
    grad_p = torch.randn(groups, batch, c_out, generator=gen).to(dtype)
    x_conv = x.transpose(1, 2).contiguous().view(1, groups * c_in, batch)
    w_conv = w.reshape(groups * c_out, c_in, 1)
    grad_conv = grad_p.transpose(1, 2).contiguous().view(1, groups * c_out, batch)

    def conv_backward():
        dx, dw, _ = torch.ops.aten.convolution_backward(
            grad_conv, x_conv, w_conv, None, [1], [0], [1], False, [0], groups, [True, True, False]
        )
        return dx.view(groups, c_in, batch).transpose(1, 2), dw.view(groups, c_out, c_in)

    return {
        "MKL/oneDNN bmm": (
            lambda: torch.bmm(x, w.transpose(1, 2)),
            lambda: (torch.bmm(grad_p, w), torch.bmm(grad_p.transpose(1, 2), x)),
        ),
        "oneDNN conv1d": (
            lambda: F.conv1d(x_conv, w_conv, groups=groups).view(groups, c_out, batch).transpose(1, 2),
            conv_backward,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image-size", type=int, default=28, help="28 (MNIST) or 36 (MultiMNIST pairs)")
    parser.add_argument("--batch-size", type=int, default=None, help="default 128 for 28, 64 for 36")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--precision", default="fp32,bf16", help="types, separated by commas")
    args = parser.parse_args()
    names = [p.strip() for p in args.precision.split(",") if p.strip()]
    if not names or any(p not in DTYPES for p in names):
        parser.error(f"--precision: expected some of {', '.join(DTYPES)}, got {args.precision!r}")
    retain_freed_memory()  # as capsviz train
    cfg = CapsNetConfig(image_size=args.image_size)
    batch = args.batch_size or (128 if args.image_size == 28 else 64)
    side = cfg.conv1_size  # PrimaryCaps' input: 20 x 20, or 28 x 28 for pairs
    (_, _, nw, kh, m0), *_ = _dft_matrices(side, side, cfg.kernel_size, cfg.primary_stride)
    groups, c_in, c_out = m0 + 3 * nw * (kh - 1), cfg.conv1_channels, cfg.primary_types * cfg.primary_dim
    flop = 2 * groups * batch * c_in * c_out  # each of the three products
    machine = machine_summary()
    print(machine_line(machine))
    size = f"{args.image_size}x{args.image_size}"
    print(f"3 x {groups} channel products of {batch} x {c_in} x {c_out} ({size}, batch {batch})")
    gen = torch.Generator().manual_seed(0)
    results = {}
    for name in names:
        ways = products(DTYPES[name], groups, batch, c_in, c_out, gen)
        runs = {(way, part): run for way, passes in ways.items() for part, run in zip(("forward", "backward"), passes)}
        times = time_interleaved(runs, args.repeats, 2)
        outs = {way: (forward(), *backward()) for way, (forward, backward) in ways.items()}
        a, b = outs.values()
        error = max(float((u.float() - v.float()).abs().max() / u.float().abs().max()) for u, v in zip(a, b))
        med = {key: 1000 * statistics.median(ts) for key, ts in times.items()}
        results[name] = {f"{way} {part}": round(ms, 2) for (way, part), ms in med.items()}
        results[name]["relative_difference"] = error
        for way in ways:
            fwd, bwd = med[way, "forward"], med[way, "backward"]
            rate = 3 * flop / (fwd + bwd) / 1e6
            parts = f"forward {fwd:7.1f} ms  backward {bwd:7.1f} ms  all {fwd + bwd:7.1f} ms"
            print(f"{name}  {way:15s} {parts} ({rate:4.0f} GFLOP/s)")
        bmm, conv = (med[w, "forward"] + med[w, "backward"] for w in ways)
        print(f"{name}  conv1d {bmm / conv:.2f}x as fast in all; results differ by {error:.1e} of the largest value")
    print(json.dumps({"medians_ms": results, "groups": groups, "batch_size": batch, **machine}))


if __name__ == "__main__":
    main()
