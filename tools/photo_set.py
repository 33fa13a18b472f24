"""Accuracy of the shipped model on MNIST test digits rendered as photos of paper.

Each digit is rendered by :func:`capsviz.data.photo.render_photo` once per kind (the same
digits for every kind), encoded as PNG or JPEG bytes and read back with
:func:`capsviz.data.images.load_input`, exactly as a file a user opens. A file read as
"no ink" counts as wrong. Seeded: the same command gives the same images and numbers.

Usage: python tools/photo_set.py [--per-kind N] [--kinds a,b] [--seed S] [--data-root DIR]
           [--checkpoint FILE] [--save-dir DIR]
Last line: JSON with accuracy and counts per kind.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from capsviz.data.images import ImageReadError, load_input
from capsviz.data.mnist import MnistSplit, load_test_or_sample
from capsviz.data.photo import KINDS, kind_rng, render_photo
from capsviz.evaluate import evaluate_model
from capsviz.paths import shipped_checkpoint
from capsviz.train.checkpoint import load_checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-kind", type=int, default=500, help="digits per kind (default 500)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--checkpoint", default=None, help="default: the shipped model")
    parser.add_argument("--save-dir", type=Path, default=None, help="also write the first 20 files of each kind here")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"unknown kinds {unknown}; choose from {', '.join(KINDS)}")
    model, _, _ = load_checkpoint(args.checkpoint or shipped_checkpoint())
    test, source = load_test_or_sample(args.data_root)
    n = min(args.per_kind, len(test))
    order = np.random.default_rng(args.seed).permutation(len(test))[:n]
    labels = test.labels[order]
    results = {}
    print(f"{source}, {n:,} digits per kind, seed {args.seed}")
    print("| kind | correct | accuracy | no ink |")
    print("|---|---|---|---|")
    for kind in kinds:
        inputs = np.zeros((n, 28, 28), np.float32)
        empty = np.zeros(n, bool)
        for k, index in enumerate(order):
            data = render_photo(test.images[index], kind, kind_rng(args.seed, kind, int(index)))
            if args.save_dir is not None and k < 20:
                args.save_dir.mkdir(parents=True, exist_ok=True)
                suffix = "jpg" if data[:2] == b"\xff\xd8" else "png"
                (args.save_dir / f"{kind}_{k:02d}_{labels[k]}.{suffix}").write_bytes(data)
            try:
                inputs[k], _ = load_input(data, name=f"{kind} {index}")
            except ImageReadError:
                empty[k] = True
        predictions = evaluate_model(model, MnistSplit(inputs, labels))
        correct = int(((predictions == labels) & ~empty).sum())
        results[kind] = {"correct": correct, "images": n, "accuracy": correct / n, "no_ink": int(empty.sum())}
        print(f"| {kind} | {correct} / {n} | {100 * correct / n:.1f} % | {int(empty.sum())} |", flush=True)
    print(json.dumps({"source": source, "per_kind": n, "seed": args.seed, "kinds": results}))


if __name__ == "__main__":
    main()
