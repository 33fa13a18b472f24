"""How much the app's preprocessing changes what the model sees on real MNIST digits.

MNIST test digits are already cropped, fitted into 20x20 and centred by mass; running
them through ``preprocess_ink`` again (as every drawing and image file is) should leave
the shipped model's accuracy within 0.3 points of the raw digits'.

Usage: python tools/preprocess_fidelity.py [--data-root DIR] [--checkpoint FILE] [--limit N]
Last line: JSON with raw and preprocessed accuracy, their difference in points, and N.
"""

from __future__ import annotations

import argparse
import json

from capsviz.data.mnist import MnistSplit, load_test_or_sample
from capsviz.data.preprocess import preprocess_split
from capsviz.evaluate import evaluate_model
from capsviz.paths import shipped_checkpoint
from capsviz.train.checkpoint import load_checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--checkpoint", default=None)
    parser.add_argument("--limit", type=int, default=0, help="first N test images only (0: all)")
    args = parser.parse_args()
    model, _, _ = load_checkpoint(args.checkpoint or shipped_checkpoint())
    test, source = load_test_or_sample(args.data_root)
    n = len(test) if args.limit <= 0 else min(args.limit, len(test))
    raw = MnistSplit(test.images[:n], test.labels[:n])
    pre = MnistSplit(preprocess_split(raw.images), raw.labels)
    acc_raw = float((evaluate_model(model, raw) == raw.labels).mean())
    acc_pre = float((evaluate_model(model, pre) == pre.labels).mean())
    print(f"{source}, {n:,} digits: raw {100 * acc_raw:.2f} %, preprocessed {100 * acc_pre:.2f} %")
    print(
        json.dumps(
            {
                "images": n,
                "source": source,
                "raw_accuracy": acc_raw,
                "preprocessed_accuracy": acc_pre,
                "difference_points": round(100 * (acc_pre - acc_raw), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
