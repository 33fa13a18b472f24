"""Copy a training checkpoint to assets/ without its optimizer and RNG state.

Usage: python tools/ship_checkpoint.py RUN.safetensors [--out assets/capsnet_mnist.safetensors]

The metadata (recipe, epochs, step, measured test accuracy, creation time) is kept.
"""

import argparse
from pathlib import Path

from capsviz.paths import SHIPPED_CHECKPOINT_NAME, SOURCE_ASSETS
from capsviz.train.checkpoint import load_checkpoint, save_checkpoint

parser = argparse.ArgumentParser()
parser.add_argument("checkpoint", type=Path)
parser.add_argument("--out", type=Path, default=SOURCE_ASSETS / SHIPPED_CHECKPOINT_NAME)
args = parser.parse_args()
model, info, _ = load_checkpoint(args.checkpoint)
keep = {k: v for k, v in info.metadata.items() if k in ("completed_epochs", "created")}
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
)
print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes): {info.summary()}")
