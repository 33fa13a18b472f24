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
- Eq. 2's sum and the agreement in each of routing's two layouts of u_hat: (B*J, I, D)
  with the one-row products above, and (B, I, J, D) with J-row products whose diagonal
  blocks are kept, which the training path takes in bfloat16 on a CPU with AMX
  (``capsviz.model.routing.routes_in_blocks``);
- dL/du_hat from K = 2R - 1 = 5 rank-one factors, as the training path forms it: in
  chunks of primary capsules re-laid (i, B, J*D), each (i, K) @ (K, D) with the factors
  stacked (N, K, I) and read transposed, then a re-layout copy; against stacked (N, I, K)
  with the products written re-laid, as the AMX path takes them.

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
from capsviz.model.routing import (
    PREDICTION_CHUNK_BYTES,
    _agreements,
    _spans,
    _weighted_sum,
    relaid_gradient,
    routes_in_blocks,
)
from capsviz.runtime import machine_line, machine_summary, retain_freed_memory
from capsviz.train.precision import DTYPES


def chunked(left: list[torch.Tensor], right: torch.Tensor, n_out: int, strided: bool) -> torch.Tensor:
    """dL/du_hat from the K left factors (N, 1, I) and the right ones (N, K, D), formed as
    the training path forms it (``_PredictRouteFunction.backward``): in chunks of
    ``PREDICTION_CHUNK_BYTES`` of primary capsules, each re-laid (i, B, J*D)
    (``relaid_gradient``). ``strided``: the factors stacked (N, I, K) and each chunk's
    product written re-laid (the AMX path); else stacked (N, K, I), the product (N, i, D)
    and a re-layout copy. Returns the re-laid buffer: the last chunk's dL/du_hat, all of
    it where one chunk holds every primary capsule."""
    n, _, n_in = left[0].shape
    dim, batch = right.shape[2], n // n_out
    stacked = torch.stack([f.view(n, n_in) for f in left], dim=-1) if strided else torch.cat(left, 1)
    chunks = _spans(n_in, n * dim * right.element_size(), PREDICTION_CHUNK_BYTES, right.device)
    relaid = right.new_empty(chunks[0][1], batch, n_out * dim)
    products = None if strided else right.new_empty(n * chunks[0][1] * dim)
    for start, stop in chunks:
        relaid_gradient(stacked, right, start, stop, relaid[: stop - start], products, strided)
    return relaid


def forms(dtype: torch.dtype, n: int, n_in: int, dim: int, gen: torch.Generator, n_out: int = 10) -> dict[str, dict]:
    """name -> {form: (callable, used)} for one type (n = B * n_out matrices)."""
    u_hat = torch.randn(n, n_in, dim, generator=gen).to(dtype)
    batch = n // n_out
    blocks = routes_in_blocks(dtype, torch.device("cpu"))
    u_hat_blocks = u_hat.view(batch, n_out, n_in, dim).permute(0, 2, 1, 3).contiguous()  # (B, I, J, D)
    c_bji = torch.softmax(torch.randn(batch, n_out, n_in, generator=gen), dim=1)
    v_bjd = torch.randn(batch, n_out, dim, generator=gen)
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
        "Eq. 2, layouts": {
            "(B*J,I,D) rows": (lambda: _weighted_sum(u_hat, c_bji), not blocks),
            "(B,I,J,D) blocks": (lambda: _weighted_sum(u_hat_blocks, c_bji), blocks),
        },
        "agreement, layouts": {
            "(B*J,I,D) rows": (lambda: _agreements(u_hat, v_bjd), not blocks),
            "(B,I,J,D) blocks": (lambda: _agreements(u_hat_blocks, v_bjd), blocks),
        },
        "dL/du_hat": {
            "(N,K,I) stack": (lambda: chunked(left, right, n_out, strided=False), not blocks),
            "(N,I,K) stack": (lambda: chunked(left, right, n_out, strided=True), blocks),
        },
    }


def parse_arguments(description: str, repeats: int, precision: str) -> tuple[argparse.Namespace, list[str]]:
    """The options of the benchmarks of one layer's products (this one, spectral_dft.py):
    --batch-size, --image-size, --repeats, --precision; the args and the type names."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--image-size", type=int, default=28, help="28 (MNIST) or 36 (MultiMNIST pairs)")
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--precision", default=precision, help="types, separated by commas")
    args = parser.parse_args()
    names = [p.strip() for p in args.precision.split(",") if p.strip()]
    unknown = [p for p in names if p not in DTYPES]
    if unknown or not names:
        parser.error(f"--precision: expected some of {', '.join(DTYPES)}, got {args.precision!r}")
    return args, names


def main() -> None:
    args, names = parse_arguments(__doc__.split("\n\n")[0], 30, "fp32,bf16,fp16")
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
        for op, variants in forms(dtype, n, n_in, dim, gen, cfg.num_classes).items():
            times = time_interleaved({form: product for form, (product, _) in variants.items()}, args.repeats, 3)
            med = {form: 1000 * statistics.median(ts) for form, ts in times.items()}
            results[name][op] = {form: round(ms, 3) for form, ms in med.items()}
            used = next(form for form, (_, is_used) in variants.items() if is_used)
            other = next(form for form in variants if form != used)
            cells = "  ".join(f"{form}{'*' if form == used else ' '} {ms:7.3f} ms" for form, ms in med.items())
            print(f"{name} {op:18s} {cells}  (* {med[other] / med[used]:.2f}x as fast)")
    print(json.dumps({"medians_ms": results, "batch_size": args.batch_size, "image_size": args.image_size, **machine}))


if __name__ == "__main__":
    main()
