"""The explorer's traced pass for one input, eager against ``torch.compile``, side by side.

Usage: python benchmarks/compiled_pass.py [--repeats 60] [--mode default]

For each shipped model (a digit, 28x28; a pair, 36x36) times the pass the explorer runs
for an input (``CapsNet.forward`` with the routing trace, no decoder, no gradients, one
image), as written and as compiled by ``torch.compile`` (TorchInductor, CPU code built with
the machine's C++ compiler, compiled anew for each thread count, which its code holds),
taking turns, on 1 thread (the inference thread's count on 2 cores) and on the machine's
count. Prints the compile time (the first call, what a start of the app would wait for or
spend in the background, with TorchInductor's cache empty), the medians in ms, their ratio
and the largest difference of the outputs; the last line is a JSON object with the machine.
The process runs with the app's malloc settings (``tune_process("app")``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from train_speed import time_interleaved

from capsviz.runtime import machine_line, machine_summary, tune_process
from capsviz.train.checkpoint import load_checkpoint

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def first_test_input(size: int) -> torch.Tensor:
    """The assets sample's first test digit, centred in a ``size`` x ``size`` field: (1, 1, size, size)."""
    with np.load(ASSETS / "mnist_test_sample.npz") as sample:
        digit = sample["images"][0].astype(np.float32) / 255.0
    field = np.zeros((size, size), np.float32)
    at = (size - digit.shape[0]) // 2
    field[at : at + digit.shape[0], at : at + digit.shape[1]] = digit
    return torch.from_numpy(field).reshape(1, 1, size, size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--mode", default="default", help="torch.compile's mode (default, max-autotune, ...)")
    args = parser.parse_args()
    # an empty cache for TorchInductor's code: the compile times are a first start's
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="capsviz-inductor-")
    tune_process("app")
    machine = machine_summary()
    print(machine_line(machine))
    all_threads = torch.get_num_threads()
    results = {}
    for name in ("mnist", "multimnist"):
        model = load_checkpoint(ASSETS / f"capsnet_{name}.safetensors")[0]
        x = first_test_input(model.cfg.image_size)

        def traced(x=x, model=model):
            out = model(x, reconstruct=False, trace=True)
            t = out.trace
            return out.v, t.u, t.u_hat, t.b, t.c, t.v

        with torch.inference_mode():
            for threads in sorted({1, all_threads}):
                # TorchInductor builds the thread count into its code: compiled anew for each
                torch.set_num_threads(threads)
                torch._dynamo.reset()
                compiled = torch.compile(traced, mode=None if args.mode == "default" else args.mode, dynamic=False)
                t0 = time.perf_counter()
                try:
                    fast = compiled()
                except Exception as exc:  # no C++ compiler, or an operation inductor cannot build
                    print(f"{name}: torch.compile failed: {type(exc).__name__}: {str(exc).splitlines()[0]}")
                    break
                compile_s = time.perf_counter() - t0
                diff = max(float((a - b).abs().max()) for a, b in zip(fast, traced()))
                times = time_interleaved({"eager": traced, "compiled": compiled}, args.repeats, 5)
                med = {k: 1000 * statistics.median(t) for k, t in times.items()}
                results[f"{name} t{threads}"] = {
                    **{k: round(v, 3) for k, v in med.items()},
                    "compile_s": round(compile_s, 1),
                }
                print(
                    f"{name}, {threads} thread(s): eager {med['eager']:.3f} ms, compiled {med['compiled']:.3f} ms "
                    f"({med['eager'] / med['compiled']:.2f}x); compile {compile_s:.1f} s; "
                    f"largest difference {diff:.1e}"
                )
        torch.set_num_threads(all_threads)
    print(json.dumps({"ms": results, "mode": args.mode, "torch": torch.__version__, **machine}))


if __name__ == "__main__":
    main()
