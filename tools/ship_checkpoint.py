"""Copy a training checkpoint to assets/ without its optimizer and RNG state.

Usage: python tools/ship_checkpoint.py RUN.safetensors [MORE.safetensors ...] [--out FILE]
       [--float16] [--measure] [--initialised-from NAME]

Several checkpoints of one run (its epoch-end autosaves) ship as the mean of their weights
(stochastic weight averaging, ``capsviz.train.checkpoint.average_checkpoints``): the recipe
and position are the last file's, and the header's ``averaged_epochs`` lists the completed
epochs of each file averaged.

``--out`` defaults to assets/capsnet_mnist.safetensors, or assets/capsnet_multimnist.safetensors
for a MultiMNIST model (a baseline CNN: assets/baseline_mnist.safetensors or
assets/baseline_multimnist.safetensors). ``--float16`` stores the weights as float16 (half the size; ship it
only when ``capsviz eval`` gives the same counts). The metadata (recipe, dataset, epochs,
step, measured test accuracy, creation time, the model a widened run started from) is kept.

``--measure`` replaces the run's test accuracy (often measured on a subset after its last
epoch) with the shipped file's own on the whole test set: the 10,000 MNIST test digits, or
the 10,000 fixed MultiMNIST test pairs (both digits right), as ``capsviz eval`` counts it;
with ``--float16`` it also prints the float32 count beside it. Needs MNIST
(``CAPSVIZ_DATA``).
"""

import argparse
from pathlib import Path

import torch

from capsviz.data.mnist import load_mnist
from capsviz.data.multimnist import TEST_PAIRS, fixed_test_pairs
from capsviz.evaluate import score
from capsviz.paths import SHIPPED_BASELINE_NAMES, SHIPPED_CHECKPOINT_NAME, SHIPPED_MULTIMNIST_NAME, SOURCE_ASSETS
from capsviz.train.checkpoint import average_checkpoints, load_model, read_info, save_checkpoint

parser = argparse.ArgumentParser()
parser.add_argument("checkpoints", type=Path, nargs="+", help="one checkpoint, or several to average")
parser.add_argument("--out", type=Path, default=None)
parser.add_argument("--float16", action="store_true", help="store the weights as float16")
parser.add_argument(
    "--initialised-from", metavar="NAME", help="the model the run started from, where its header does not say"
)
parser.add_argument("--measure", action="store_true", help="record the shipped weights' whole-test-set accuracy")
args = parser.parse_args()
model, info, infos = average_checkpoints(args.checkpoints)
if args.out is None and info.kind == "baseline":
    args.out = SOURCE_ASSETS / SHIPPED_BASELINE_NAMES[info.dataset]
elif args.out is None:
    args.out = SOURCE_ASSETS / (SHIPPED_MULTIMNIST_NAME if info.dataset == "multimnist" else SHIPPED_CHECKPOINT_NAME)
kept = ("completed_epochs", "created", "dataset", "initialised_from")
keep = {k: v for k, v in info.metadata.items() if k in kept}
keep["trained_with"] = "capsviz train"
if args.initialised_from:
    keep["initialised_from"] = args.initialised_from
if len(infos) > 1:
    keep["averaged_epochs"] = ", ".join(i.metadata.get("completed_epochs", f"{i.epoch:g}") for i in infos)


def right_of(network, test, pairs) -> int:
    """Right on the whole test set: digits, or pairs (``pairs`` not None) with both digits right."""
    images, labels = (test.images, test.labels) if pairs is None else (pairs.images, pairs.labels)
    return score(network, images, labels).right


def save(accuracy: float | None, images: int | None) -> None:
    save_checkpoint(
        args.out,
        model,
        train_config=info.train_config,
        epoch=info.epoch,
        step=info.step,
        test_accuracy=accuracy,
        test_images=images,
        extra_metadata=keep,
        weights_dtype=torch.float16 if args.float16 else torch.float32,
    )


save(info.test_accuracy, info.test_images)
if args.measure:  # the file as written, read back: what is measured is what ships
    test = load_mnist(train=False)
    pairs = fixed_test_pairs(test, TEST_PAIRS) if info.dataset == "multimnist" else None
    total = len(test) if pairs is None else len(pairs)
    right = right_of(load_model(args.out)[0], test, pairs)
    if args.float16:
        print(f"float32: {right_of(model, test, pairs):,} / {total:,}; float16 (shipped): {right:,} / {total:,}")
    save(right / total, total)
print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes): {read_info(args.out).summary()}")
