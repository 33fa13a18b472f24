"""Write assets/mnist_test_sample.npz: the first N images of the MNIST test split.

Usage: python tools/make_sample.py [--n 2000] [--data-root DIR]
"""

import argparse
from pathlib import Path

import numpy as np

from capsviz.data.mnist import load_mnist
from capsviz.paths import MNIST_SAMPLE_NAME, SOURCE_ASSETS

SAMPLE_PATH = SOURCE_ASSETS / MNIST_SAMPLE_NAME

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=2000)
parser.add_argument("--data-root", type=Path, default=None)
args = parser.parse_args()
test = load_mnist(train=False, data_root=args.data_root)
np.savez_compressed(
    SAMPLE_PATH,
    images=test.images[: args.n],
    labels=test.labels[: args.n],
    source=np.array(f"MNIST t10k images 0..{args.n - 1} (LeCun, Cortes, Burges; CC BY-SA 3.0)"),
)
print(f"wrote {SAMPLE_PATH} ({SAMPLE_PATH.stat().st_size:,} bytes)")
