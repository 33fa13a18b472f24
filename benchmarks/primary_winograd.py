"""PrimaryCaps for a few images: the im2col product against the Winograd path, side by side.

Usage: python benchmarks/primary_winograd.py [--repeats 60]

For a digit's PrimaryCaps (20x20 map -> 6x6 grid) and a pair's (28x28 -> 10x10), both
256 -> 256 channels, 9x9, stride 2, at 1, 2 and 4 images and on 1 thread and on the
machine's count, times ``capsviz.model.conv.im2col_conv2d`` (the weight laid out once,
the product split per thread as the explorer runs it) and ``winograd_conv2d`` (the
transformed weight made once), and where bfloat16 products are the faster
(``bf16_is_faster()``) ``im2col_conv2d_bf16``, which the explorer takes there, taking
turns on the same channels-last input, without gradients. Prints the medians in ms, the
ratio of the first two and each path's largest error relative to float64 ``conv2d``; the
last line is a JSON object with the machine. The explorer's inference thread computes on
one intra-op thread fewer than the machine has (one on 2 cores), a pass on the main
thread on all of them.
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch
from train_speed import time_interleaved

from capsviz.model.conv import (
    im2col_conv2d,
    im2col_conv2d_bf16,
    patch_weight,
    patch_weight_bf16,
    use_winograd,
    winograd_conv2d,
    winograd_weight,
)
from capsviz.runtime import bf16_is_faster, machine_line, machine_summary

CHANNELS, KERNEL, STRIDE = 256, 9, 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=60)
    args = parser.parse_args()
    machine = machine_summary()
    print(machine_line(machine))
    gen = torch.Generator().manual_seed(0)
    weight = torch.randn(CHANNELS, CHANNELS, KERNEL, KERNEL, generator=gen) / (KERNEL * CHANNELS**0.5)
    bias = torch.randn(CHANNELS, generator=gen) * 0.1
    packed, u = patch_weight(weight), winograd_weight(weight, STRIDE)
    packed_bf16 = patch_weight_bf16(weight) if bf16_is_faster() else None
    all_threads = torch.get_num_threads()
    results = {}
    with torch.inference_mode():
        for side, name in ((20, "digit"), (28, "pair")):
            for threads in sorted({1, all_threads}):
                torch.set_num_threads(threads)
                for batch in (1, 2, 4):
                    x = torch.randn(batch, CHANNELS, side, side, generator=gen).relu()
                    x = x.contiguous(memory_format=torch.channels_last)
                    exact = torch.nn.functional.conv2d(x.double(), weight.double(), bias.double(), stride=STRIDE)
                    exact = exact.permute(0, 2, 3, 1)
                    paths = {
                        "im2col": lambda x=x: im2col_conv2d(x, packed, bias, KERNEL, STRIDE),
                        "winograd": lambda x=x: winograd_conv2d(x, u, bias, KERNEL, STRIDE),
                    }
                    if packed_bf16 is not None:
                        paths["im2col_bf16"] = lambda x=x: im2col_conv2d_bf16(x, packed_bf16, bias, KERNEL, STRIDE)
                    err = {k: ((f().double() - exact).abs().max() / exact.abs().max()).item() for k, f in paths.items()}
                    med = {k: 1000 * statistics.median(t) for k, t in time_interleaved(paths, args.repeats, 3).items()}
                    i, w = med["im2col"], med["winograd"]
                    results[f"{name} b{batch} t{threads}"] = [round(ms, 3) for ms in med.values()]
                    taken = use_winograd(x, KERNEL, STRIDE)
                    bf16 = ""
                    if "im2col_bf16" in med:
                        bf16 = f", im2col in bfloat16 {med['im2col_bf16']:6.3f} ms"
                        bf16 += f" (largest error {err['im2col_bf16']:.1e})"
                    print(
                        f"{name} ({side}x{side}), {batch} image(s), {threads} thread(s): im2col {i:6.3f} ms, "
                        f"winograd {w:6.3f} ms ({i / w:.2f}x; largest error {err['im2col']:.1e} against "
                        f"{err['winograd']:.1e}; the explorer takes winograd in float32: {taken}){bf16}"
                    )
    torch.set_num_threads(all_threads)
    print(json.dumps({"ms": results, "paths": list(med), **machine}))


if __name__ == "__main__":
    main()
