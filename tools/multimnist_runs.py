"""Start or resume the MultiMNIST runs behind docs/table1.md's routing rows, at equal budgets.

Usage: python tools/multimnist_runs.py [--folder DIR] [--runs r1 r3 cnn] [--pairs 500000]
                                       [--pairs-per-epoch 50000] [--threads 1] [--nice 19]

Runs (Sabour et al. 2017, Table 1, MultiMNIST column), each ``capsviz train --dataset
multimnist`` with the same seed, the same pairs (drawn per epoch from the seed), the same
schedule and ``--precision auto`` (bfloat16 where the CPU has bfloat16 units):

- ``r1``, ``r3``: the CapsNet with 1 or 3 routing iterations and the reconstruction loss,
  both started from the shipped MNIST CapsNet's weights widened to 36x36
  (:mod:`capsviz.model.transfer`), so that the budget goes to overlap rather than strokes;
- ``cnn``: the CapsNet-sized baseline CNN (``--model baseline-small``) from scratch.

Each run writes ``DIR/NAME.safetensors`` (autosaved after every epoch) and appends its
output to ``DIR/NAME.log``; a run whose file exists is resumed exactly (``--resume``), one
that has reached ``--pairs`` is skipped. The runs go in parallel, each with ``--threads``
threads at niceness ``--nice``, so that at any moment they have seen about the same number
of pairs. Once they finish: ``capsviz eval --checkpoint DIR/NAME.safetensors --per-iteration 5``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = {
    "r1": ["--routing-iterations", "1", "--init", str(ROOT / "assets" / "capsnet_mnist.safetensors")],
    "r3": ["--routing-iterations", "3", "--init", str(ROOT / "assets" / "capsnet_mnist.safetensors")],
    "cnn": ["--model", "baseline-small"],
}


def command(name: str, folder: Path, epochs: int, pairs_per_epoch: int) -> list[str] | None:
    """The ``capsviz train`` command that starts or resumes run ``name``; None when its
    checkpoint has reached ``epochs``."""
    from capsviz.train.checkpoint import read_info

    out = folder / f"{name}.safetensors"
    base = [sys.executable, "-m", "capsviz", "train", "--dataset", "multimnist", "--epochs", str(epochs)]
    if out.exists():
        if read_info(out).epoch >= epochs:
            return None
        return [*base, "--resume", str(out)]
    recipe = ["--pairs-per-epoch", str(pairs_per_epoch), "--seed", "0", "--precision", "auto", "--test-subset", "2000"]
    return [*base, *recipe, *RUNS[name], "--out", str(out)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, default=Path("runs"))
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS))
    parser.add_argument("--pairs", type=int, default=500_000, help="pairs each run sees in all")
    parser.add_argument("--pairs-per-epoch", type=int, default=50_000)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--nice", type=int, default=19)
    args = parser.parse_args()
    epochs = -(-args.pairs // args.pairs_per_epoch)
    args.folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    running = []
    for name in args.runs:
        cmd = command(name, args.folder, epochs, args.pairs_per_epoch)
        if cmd is None:
            print(f"{name}: done ({epochs} epochs of {args.pairs_per_epoch:,} pairs)")
            continue
        print(f"{name}: {' '.join(cmd)}", flush=True)
        log = open(args.folder / f"{name}.log", "a")  # noqa: SIM115 (held open while the run lasts)
        running.append((name, log, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                                    preexec_fn=lambda: os.nice(args.nice))))  # fmt: skip
    failed = 0
    for name, log, process in running:
        code = process.wait()
        log.close()
        print(f"{name}: exit {code}")
        failed += code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
