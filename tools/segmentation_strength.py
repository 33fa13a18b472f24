"""How far segmentation by routing departs from an even split on the shipped MultiMNIST
model (or --checkpoint), over the first N fixed test pairs, at the last routing iteration.

Prints two figures (median, 90th percentile, maximum over the pairs):
- the largest |share - 0.5| over the pair's ink (pixels above 0.2), where share is
  capsviz.model.analysis.segmentation's fraction of the couplings sent to digit A;
- the mean share on pixels of digit A alone minus that on pixels of digit B alone (> 0:
  routing leans each digit's pixels towards its own capsule), and how often it is > 0.

Usage: python tools/segmentation_strength.py [--pairs 300] [--data-root DIR] [--checkpoint F]
"""

import argparse
from pathlib import Path

import numpy as np

from capsviz.data.mnist import load_mnist
from capsviz.data.multimnist import fixed_test_pairs
from capsviz.model.analysis import segmentation
from capsviz.model.inference import infer
from capsviz.paths import shipped_multimnist_checkpoint
from capsviz.train.checkpoint import load_checkpoint

parser = argparse.ArgumentParser()
parser.add_argument("--pairs", type=int, default=300)
parser.add_argument("--data-root", type=Path, default=None)
parser.add_argument("--checkpoint", type=Path, default=None)
args = parser.parse_args()

model, _, _ = load_checkpoint(args.checkpoint or shipped_multimnist_checkpoint())
pairs = fixed_test_pairs(load_mnist(train=False, data_root=args.data_root), args.pairs)
departure, lean = [], []
for k in range(args.pairs):
    image = pairs.images[k].astype(np.float32) / 255.0
    inference = infer(model, image)
    share, _ = segmentation(inference.u_lengths, inference.c[-1], tuple(int(d) for d in pairs.labels[k]))
    departure.append(np.abs(share[image > 0.2] - 0.5).max())
    a, b = pairs.parts[k, 0] > 51, pairs.parts[k, 1] > 51  # each digit's ink (> 0.2)
    lean.append(share[a & ~b].mean() - share[b & ~a].mean())
for name, values in (("largest |share - 0.5| on the ink", departure), ("A-only minus B-only share", lean)):
    v = np.asarray(values)
    print(f"{name}: median {np.median(v):.4f}, 90th percentile {np.percentile(v, 90):.4f}, max {v.max():.4f}")
right_way = np.mean(np.asarray(lean) > 0)
print(f"pairs whose digit-A pixels lean more to A than digit-B pixels: {right_way:.1%} of {args.pairs}")
