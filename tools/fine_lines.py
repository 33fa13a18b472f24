"""How surely digits written with a fine line read: ten digits' pen paths drawn in black
on a white 400 x 400 page at widths from 1 to 30 px, written as PNGs and read back with
``load_input`` as ``capsviz classify`` reads a file, then the shipped model. Prints, per
width, the digits read right with a capsule longer than 0.5 and the median time of
``load_input``, with ink far thinner than MNIST's drawn again at MNIST's width (what capsviz
does, ``capsviz.data.preprocess.RESTROKE_BELOW``) and scaled as it is.

    python tools/fine_lines.py [--widths 1,2,3,4,6,10,16,30]
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

import numpy as np
from PIL import Image, ImageDraw

# each digit's pen path on the 400 px page, (x, y) px
PEN_PATHS = {
    0: [(200, 70), (280, 120), (300, 200), (280, 290), (200, 330), (120, 290), (100, 200), (120, 110), (200, 70)],
    1: [(180, 110), (220, 70), (220, 330)],
    2: [(110, 120), (160, 75), (240, 75), (290, 130), (270, 190), (110, 330), (300, 330)],
    3: [(110, 90), (280, 90), (190, 190), (270, 230), (280, 290), (220, 335), (120, 310)],
    4: [(240, 330), (240, 70), (90, 250), (310, 250)],
    5: [(290, 75), (130, 75), (120, 190), (220, 175), (285, 230), (270, 305), (200, 335), (110, 310)],
    6: [(260, 70), (160, 150), (120, 240), (150, 320), (230, 330), (280, 270), (240, 200), (150, 215)],
    7: [(100, 80), (300, 80), (170, 330)],
    8: [
        (200, 200), (270, 140), (250, 80), (150, 80), (130, 140), (200, 200),
        (280, 260), (250, 330), (150, 330), (120, 260), (200, 200),
    ],
    9: [(270, 150), (200, 200), (130, 150), (160, 80), (250, 80), (270, 150), (250, 330)],
}  # fmt: skip


def written(digit: int, width: int) -> np.ndarray:
    """``digit``'s pen path drawn ``width`` px wide in black on a white 400 px page: (400, 400) uint8."""
    page = Image.new("L", (400, 400), 255)
    ImageDraw.Draw(page).line(PEN_PATHS[digit], fill=0, width=width, joint="curve")
    return np.asarray(page)


def main() -> None:
    import capsviz.data.preprocess as preprocess
    from capsviz.data.images import load_input
    from capsviz.model.inference import capsule_lengths
    from capsviz.paths import shipped_checkpoint
    from capsviz.train.checkpoint import load_model

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", default="1,2,3,4,6,10,16,30", help="line widths in px, comma-separated")
    args = parser.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    model = load_model(shipped_checkpoint())[0]
    files = {}
    for width in widths:
        for digit in PEN_PATHS:
            buffer = io.BytesIO()
            Image.fromarray(written(digit, width)).save(buffer, "PNG")
            files[width, digit] = buffer.getvalue()
    below = preprocess.RESTROKE_BELOW
    print("| line width (px on a 400 px page) | read right, drawn again below", below, "px | as it is | ms |")
    print("|---|---|---|---|")
    for width in widths:
        right, times = {}, []
        for name, threshold in (("again", below), ("as is", float("-inf"))):
            preprocess.RESTROKE_BELOW = threshold
            right[name] = 0
            for digit in PEN_PATHS:
                start = time.perf_counter()
                x, _ink = load_input(files[width, digit])
                if name == "again":
                    times.append(1000 * (time.perf_counter() - start))
                lengths = capsule_lengths(model, x[None])[0]
                right[name] += int(lengths.argmax() == digit and lengths.max() > 0.5)
        preprocess.RESTROKE_BELOW = below
        n = len(PEN_PATHS)
        print(f"| {width} | {right['again']} / {n} | {right['as is']} / {n} | {statistics.median(times):.1f} |")


if __name__ == "__main__":
    main()
