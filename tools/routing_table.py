"""Print a Markdown table of test error against routing iterations for one checkpoint.

Usage: python tools/routing_table.py [--checkpoint FILE] [--max 5] [--data-root DIR]
Each row is what `capsviz eval --routing-iterations N` reports, computed in one process.
"""

import argparse
from pathlib import Path

from capsviz.data.mnist import load_mnist
from capsviz.evaluate import evaluate_model
from capsviz.paths import shipped_checkpoint
from capsviz.train.checkpoint import load_checkpoint

parser = argparse.ArgumentParser()
parser.add_argument("--checkpoint", type=Path, default=shipped_checkpoint())
parser.add_argument("--max", type=int, default=5)
parser.add_argument("--data-root", type=Path, default=None)
args = parser.parse_args()
model, info, _ = load_checkpoint(args.checkpoint)
test = load_mnist(train=False, data_root=args.data_root)
print(f"{args.checkpoint.name}: {info.summary()}, trained with {info.model_config.routing_iterations} iterations\n")
print("| routing iterations | correct | test error |")
print("|---|---|---|")
for n in range(1, args.max + 1):
    correct = int((evaluate_model(model, test, routing_iterations=n) == test.labels).sum())
    print(f"| {n} | {correct:,} / {len(test):,} | {100 * (len(test) - correct) / len(test):.2f} % |", flush=True)
