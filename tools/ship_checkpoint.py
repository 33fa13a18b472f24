"""Copy a training checkpoint to assets/ without its optimizer and RNG state.

Usage: python tools/ship_checkpoint.py RUN.safetensors [--out FILE] [--float16]

``--out`` defaults to assets/capsnet_mnist.safetensors, or assets/capsnet_multimnist.safetensors
for a MultiMNIST model (a baseline CNN: assets/baseline_mnist.safetensors or
assets/baseline_multimnist.safetensors). ``--float16`` stores the weights as float16 (half the size; ship it
only when ``capsviz eval`` gives the same counts). The metadata (recipe, dataset, epochs,
step, measured test accuracy, creation time, the model a widened run started from) is kept.
"""

import argparse
from pathlib import Path

import torch

from capsviz.paths import SHIPPED_BASELINE_NAMES, SHIPPED_CHECKPOINT_NAME, SHIPPED_MULTIMNIST_NAME, SOURCE_ASSETS
from capsviz.train.checkpoint import load_model, save_checkpoint

parser = argparse.ArgumentParser()
parser.add_argument("checkpoint", type=Path)
parser.add_argument("--out", type=Path, default=None)
parser.add_argument("--float16", action="store_true", help="store the weights as float16")
args = parser.parse_args()
model, info, _ = load_model(args.checkpoint)
if args.out is None and info.kind == "baseline":
    args.out = SOURCE_ASSETS / SHIPPED_BASELINE_NAMES[info.dataset]
elif args.out is None:
    args.out = SOURCE_ASSETS / (SHIPPED_MULTIMNIST_NAME if info.dataset == "multimnist" else SHIPPED_CHECKPOINT_NAME)
kept = ("completed_epochs", "created", "dataset", "initialised_from")
keep = {k: v for k, v in info.metadata.items() if k in kept}
keep["trained_with"] = "capsviz train"
save_checkpoint(
    args.out,
    model,
    train_config=info.train_config,
    epoch=info.epoch,
    step=info.step,
    test_accuracy=info.test_accuracy,
    test_images=info.test_images,
    extra_metadata=keep,
    weights_dtype=torch.float16 if args.float16 else torch.float32,
)
print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes): {info.summary()}")
