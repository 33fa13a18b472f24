"""PrimaryCaps' few-image product, whole and split along its inner dimension, side by side.

Usage: python benchmarks/primary_product.py [--repeats 60] [--threads 2]

For each row count M (36 patch rows per MNIST digit, 100 per 36x36 pair) times
``(M x 20,736) @ (20,736 x 256) + bias`` as one ``addmm`` and as
``capsviz.model.conv.split_product`` with the inner dimension in one part per thread (a
batched product, then the sum; forced at every M), the two taking turns, and prints the
medians in ms and their ratio, on ``--threads`` intra-op threads (default: the machine's
count, as a pass on the main thread runs: ``capsviz classify``, ``trace``, the figures of
``benchmarks/interactive.py``). ``split_product`` splits up to ``SPLIT_MAX_ROWS`` rows, on
2 or more threads whose count divides 20,736; the explorer's inference thread computes on
one intra-op thread fewer than the machine has (one on 2 cores, where it does not split).
The last line is a JSON object: ``rows`` -> ``[whole_ms, split_ms]``, with the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch
from train_speed import time_interleaved

from capsviz.model.conv import SPLIT_MAX_ROWS, split_product
from capsviz.runtime import machine_line, machine_summary

K, N = 20736, 256  # 9 x 9 x 256 patch values, 256 output channels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    if args.threads < 2 or K % args.threads:
        parser.error(f"--threads {args.threads}: the split needs 2 or more threads whose count divides {K:,}")
    torch.set_num_threads(args.threads)
    machine = machine_summary()
    print(machine_line(machine))
    print(f"{args.threads} intra-op threads; split_product splits up to {SPLIT_MAX_ROWS} rows")
    gen = torch.Generator().manual_seed(0)
    packed, bias = torch.randn(K, N, generator=gen), torch.randn(N, generator=gen)
    results = {}
    with torch.inference_mode():
        for rows in (36, 72, 100, 144, 200, 288):
            cols = torch.randn(rows, K, generator=gen)
            products = {
                "whole": lambda cols=cols: torch.addmm(bias, cols, packed),
                "split": lambda cols=cols, rows=rows: split_product(cols, packed, bias, max_rows=rows),
            }
            whole, split = products["whole"](), products["split"]()
            err = ((split - whole).abs().max() / whole.abs().max()).item()
            times = time_interleaved(products, args.repeats, 3)
            w, s = (1000 * statistics.median(times[name]) for name in ("whole", "split"))
            results[rows] = [round(w, 3), round(s, 3)]
            print(f"{rows:4d} rows: whole {w:6.3f} ms, split {s:6.3f} ms ({w / s:.2f}x; largest difference {err:.1e})")
    print(json.dumps({"rows": results, "threads": args.threads, **machine}))


if __name__ == "__main__":
    main()
