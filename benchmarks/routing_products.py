"""Routing's batched products in each orientation, per type, side by side.

Usage: python benchmarks/routing_products.py [--batch-size 128] [--image-size 28]
[--repeats 30] [--precision fp32,bf16,fp16]

Procedure 1 and its backward pass (``capsviz.model.routing``) run on u_hat laid out as N
= B x 10 matrices (I, 16): a training batch of 128 digits is 1280 matrices of 1152 x 16,
94 MB in float32. Each product reads all of it once, so its speed is how fast the
kernel streams u_hat, and that differs between orientations and between the libraries
behind the types (MKL for float32, oneDNN for bfloat16 and float16). For each type the
script times, the forms taking turns (routing's first):

- Eq. 2's weighted sum and the backward's dL/dv: (1, I) @ (I, D) per matrix, against
  (D, I) @ (I, 1) (u_hat read transposed);
- the agreement u_hat . v and the backward's dL/dc: (1, D) @ (D, I) (u_hat read
  transposed), against (I, D) @ (D, 1);
- dL/du_hat from K = 2R - 1 = 5 rank-one factors: (I, K) @ (K, D) with the factors
  stacked (N, K, I) and read transposed, against stacked (N, I, K).

It prints medians in ms, marks the form ``capsviz.model.routing`` uses with ``*`` and
gives its speed relative to the other form. The last line is a JSON object with the medians and the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch
from train_speed import time_interleaved

from capsviz.model.config import CapsNetConfig
from capsviz.runtime import machine_line, machine_summary, retain_freed_memory
from capsviz.train.precision import DTYPES


def forms(dtype: torch.dtype, n: int, n_in: int, dim: int, gen: torch.Generator) -> dict[str, dict]:
    """name -> {form: (callable, used)} for one type."""
    u_hat = torch.randn(n, n_in, dim, generator=gen).to(dtype)
    c = torch.rand(n, 1, n_in, generator=gen).to(dtype)
    v = torch.randn(n, dim, generator=gen).to(dtype)
    left = [torch.randn(n, 1, n_in, generator=gen).to(dtype) for _ in range(5)]
    right = torch.randn(n, 5, dim, generator=gen).to(dtype)
    return {
        "weighted sum": {
            "(1,I)@(I,D)": (lambda: torch.bmm(c, u_hat), True),
            "(D,I)@(I,1)": (lambda: torch.bmm(u_hat.transpose(1, 2), c.reshape(n, n_in, 1)), False),
        },
        "agreement": {
            # v as routing passes it: a (1, D) row of unit stride (a transposed (D, 1) column
            # would send float32 to a path several times slower)
            "(1,D)@(D,I)": (lambda: torch.bmm(v.reshape(n, 1, dim), u_hat.transpose(1, 2)), True),
            "(I,D)@(D,1)": (lambda: torch.bmm(u_hat, v.reshape(n, dim, 1)), False),
        },
        "dL/du_hat": {
            "(N,K,I) stack": (lambda: torch.bmm(torch.cat(left, 1).transpose(1, 2), right), True),
            "(N,I,K) stack": (lambda: torch.bmm(torch.cat([f.transpose(1, 2) for f in left], 2), right), False),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--image-size", type=int, default=28, help="28 (MNIST) or 36 (MultiMNIST pairs)")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--precision", default="fp32,bf16,fp16", help="types, separated by commas")
    args = parser.parse_args()
    names = [p.strip() for p in args.precision.split(",") if p.strip()]
    unknown = [p for p in names if p not in DTYPES]
    if unknown or not names:
        parser.error(f"--precision: expected some of {', '.join(DTYPES)}, got {args.precision!r}")
    retain_freed_memory()  # as capsviz train: u_hat-sized blocks are reused, not mapped anew
    cfg = CapsNetConfig(image_size=args.image_size)
    n, n_in, dim = args.batch_size * cfg.num_classes, cfg.num_primary, cfg.digit_dim
    machine = machine_summary()
    print(machine_line(machine))
    print(f"u_hat: {n} matrices of {n_in} x {dim} (batch {args.batch_size}, {args.image_size}x{args.image_size})")
    gen = torch.Generator().manual_seed(0)
    results: dict[str, dict[str, dict[str, float]]] = {}
    for name in names:
        dtype = DTYPES[name]
        results[name] = {}
        for op, variants in forms(dtype, n, n_in, dim, gen).items():
            times = time_interleaved({form: product for form, (product, _) in variants.items()}, args.repeats, 3)
            med = {form: 1000 * statistics.median(ts) for form, ts in times.items()}
            results[name][op] = {form: round(ms, 3) for form, ms in med.items()}
            used = next(form for form, (_, is_used) in variants.items() if is_used)
            other = next(form for form in variants if form != used)
            cells = "  ".join(f"{form}{'*' if form == used else ' '} {ms:7.3f} ms" for form, ms in med.items())
            print(f"{name} {op:13s} {cells}  (* {med[other] / med[used]:.2f}x as fast)")
    print(json.dumps({"medians_ms": results, "batch_size": args.batch_size, "image_size": args.image_size, **machine}))


if __name__ == "__main__":
    main()
