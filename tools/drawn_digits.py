"""How well the shipped model reads digits drawn on the real canvas, per brush width.

A drawn digit here is an MNIST test digit traced into pen strokes: the digit is scaled to
the 280 px canvas (10 canvas px per MNIST px), thinned to a one-pixel skeleton
(Zhang & Suen 1984), and the skeleton walked into strokes, each replayed on the app's
``InputPanel`` canvas as mouse press, moves and release (real ``QMouseEvent``s), at the
canvas's thinnest, default and thickest brush, and at two drawing speeds (a mouse event
every 3 or every 15 canvas px along the stroke). The model reads what the panel gives it
(``InputPanel.current``), or with ``--raster`` the canvas's pixels preprocessed as an image
(``preprocess_ink``, the path of image files); beside that, the same digits as MNIST images.

Usage: QT_QPA_PLATFORM=offscreen python tools/drawn_digits.py [--count 1000] [--first 0]
           [--checkpoint FILE] [--data-root DIR] [--brushes 4 22 60] [--steps 3 15] [--raster]
       python tools/drawn_digits.py --stroke-width [--data-root DIR]
Last line: JSON with the accuracy of the MNIST images and of each (brush, step) drawing.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
from PIL import Image

from capsviz.data.preprocess import thin

SCALE = 10  # canvas px per MNIST px: a 20 px MNIST digit is 200 px tall on the 280 px canvas
MIN_STROKE = 12  # canvas px: shorter branches of a skeleton are thinning's spurs, not strokes
STEPS = (3, 15)  # canvas px between mouse events: a slow and a fast hand


def _neighbours(pixels: set[tuple[int, int]], p: tuple[int, int]) -> list[tuple[int, int]]:
    """m-adjacency: the 4 orthogonal neighbours, and a diagonal one only where neither
    pixel between them is set (no little triangles at a skeleton's corners)."""
    y, x = p
    out = [q for q in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)) if q in pixels]
    for dy in (-1, 1):
        for dx in (-1, 1):
            q = (y + dy, x + dx)
            if q in pixels and (y + dy, x) not in pixels and (y, x + dx) not in pixels:
                out.append(q)
    return out


def trace_strokes(image: np.ndarray, scale: int = SCALE) -> list[np.ndarray]:
    """Pen strokes that draw ``image`` ((28, 28) float in [0, 1], or uint8) at ``scale``.

    Returns a list of (K, 2) float arrays of canvas positions (x, y), one per stroke, in
    drawing order (strokes start at skeleton end points, topmost first, then at junctions
    and loops). Branches shorter than MIN_STROKE canvas px are dropped unless nothing
    else is left.
    """
    a = np.asarray(image, dtype=np.float32)
    if a.max() > 1:
        a = a / 255.0
    h, w = a.shape
    big = np.asarray(Image.fromarray(a, mode="F").resize((w * scale, h * scale), Image.Resampling.BILINEAR))
    pixels = {(int(y), int(x)) for y, x in zip(*np.nonzero(thin(big > 0.5)), strict=True)}
    adjacent = {p: _neighbours(pixels, p) for p in pixels}
    done: set[frozenset] = set()

    def free(p):
        return [q for q in adjacent[p] if frozenset((p, q)) not in done]

    ends = sorted(p for p in pixels if len(adjacent[p]) == 1)
    forks = sorted(p for p in pixels if len(adjacent[p]) >= 3)
    rest = sorted(pixels)
    paths: list[list[tuple[int, int]]] = []
    for start in [*ends, *forks, *rest]:
        while free(start) or (not adjacent[start] and not any(start in path for path in paths)):
            path, here, heading = [start], start, None
            while options := free(here):
                # keep going the way the pen goes: the neighbour with the least turn
                nxt = max(options, key=lambda q: 0 if heading is None else np.dot(heading, np.subtract(q, here)))
                done.add(frozenset((here, nxt)))
                heading = np.subtract(nxt, here)
                path.append(nxt)
                here = nxt
            paths.append(path)
            if len(path) == 1:
                break
    long = [p for p in paths if len(p) >= MIN_STROKE]
    kept = long or sorted(paths, key=len)[-1:]
    return [np.array([(x + 0.5, y + 0.5) for y, x in path], dtype=np.float64) for path in kept]


def stroke_width(images: np.ndarray) -> float:
    """MNIST's stroke width in 28x28 pixels: the median over ``images`` ((N, 28, 28) uint8) of
    each digit's ink mass over the length of its traced centre line (:func:`trace_strokes`)."""
    widths = []
    for image in images:
        ink = image.astype(np.float32) / 255.0
        length = sum(np.linalg.norm(np.diff(s, axis=0), axis=1).sum() for s in trace_strokes(ink)) / SCALE
        widths.append(ink.sum() / max(length, 1.0))
    return float(np.median(widths))


def replay(panel, strokes: list[np.ndarray], brush: int, step: int, raster: bool = False) -> np.ndarray | None:
    """Clear ``panel``'s canvas and draw ``strokes`` on it with real mouse events: a press
    at each stroke's start, a move every ``step`` canvas px of its path, a release at its
    end. Returns the model input the panel made of it (``panel.current``), or with
    ``raster`` the canvas's pixels through ``preprocess_ink``."""
    from PySide6.QtCore import QEvent, QPointF, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    canvas = panel.canvas
    canvas.clear()
    panel.brush.setValue(brush)
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    for stroke in strokes:
        points = np.round(stroke[np.r_[0 : len(stroke) : step, len(stroke) - 1]]).astype(int)
        events = [(QEvent.Type.MouseButtonPress, left, left)]
        events += [(QEvent.Type.MouseMove, none, left)] * (len(points) - 2)
        events += [(QEvent.Type.MouseButtonRelease, left, none)]
        for (kind, button, buttons), (x, y) in zip(events, [points[0], *points[1:-1], points[-1]], strict=True):
            pos = QPointF(float(x), float(y))
            event = QMouseEvent(kind, pos, canvas.mapToGlobal(pos), button, buttons, Qt.KeyboardModifier.NoModifier)
            QApplication.sendEvent(canvas, event)
    if raster:
        from capsviz.data.preprocess import preprocess_ink

        return preprocess_ink(canvas.ink())
    return None if panel.current is None else panel.current.copy()


def measure(model, images: np.ndarray, labels: np.ndarray, brushes, steps, raster: bool = False) -> dict:
    """Accuracy of ``model`` on ``images`` (N, 28, 28) as MNIST images and as drawings
    replayed at each brush and step: {"mnist": acc, "drawn": {(brush, step): acc}, ...}."""
    from PySide6.QtWidgets import QApplication

    from capsviz.data.mnist import MnistSplit
    from capsviz.evaluate import evaluate_model
    from capsviz.gui.widgets.canvas import InputPanel

    app = QApplication.instance() or QApplication([])  # noqa: F841 (the panel needs one)
    panel = InputPanel()
    strokes = [trace_strokes(image) for image in images]
    mnist = evaluate_model(model, MnistSplit(images, labels)) == labels
    drawn, wrong = {}, {}
    for brush in brushes:
        for step in steps:
            inputs = [replay(panel, s, brush, step, raster) for s in strokes]
            stack = np.stack([np.zeros((28, 28), np.float32) if x is None else x for x in inputs])
            hits = evaluate_model(model, MnistSplit(stack, labels)) == labels
            drawn[(brush, step)] = float(hits.mean())
            wrong[(brush, step)] = np.flatnonzero(~hits).tolist()
    mnist_wrong = np.flatnonzero(~mnist).tolist()
    return {"mnist": float(mnist.mean()), "mnist_wrong": mnist_wrong, "drawn": drawn, "wrong": wrong}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="test digits to draw")
    parser.add_argument("--first", type=int, default=0, help="index of the first test digit")
    parser.add_argument("--checkpoint", default=None)
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--brushes", type=int, nargs="+", default=None, help="brush widths (default: 4 22 60)")
    parser.add_argument("--steps", type=int, nargs="+", default=list(STEPS), help="canvas px between mouse events")
    parser.add_argument("--raster", action="store_true", help="read the canvas's pixels as an image file is read")
    parser.add_argument(
        "--stroke-width",
        action="store_true",
        help="only measure MNIST's stroke width (capsviz.data.preprocess.STROKE_WIDTH) on 2,000 training digits",
    )
    args = parser.parse_args()
    if args.stroke_width:
        from capsviz.data.mnist import load_mnist

        train = load_mnist(train=True, data_root=args.data_root)
        pick = np.random.default_rng(0).choice(len(train), 2000, replace=False)
        width = stroke_width(train.images[pick])
        print(f"MNIST stroke width (median of 2,000 training digits, seed 0): {width:.3f} px")
        return
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from capsviz.data.mnist import load_test_or_sample
    from capsviz.gui.widgets.canvas import DEFAULT_BRUSH
    from capsviz.paths import shipped_checkpoint
    from capsviz.train.checkpoint import load_checkpoint

    model, _, _ = load_checkpoint(args.checkpoint or shipped_checkpoint())
    test, source = load_test_or_sample(args.data_root)
    pick = slice(args.first, args.first + args.count)
    images, labels = test.images[pick], test.labels[pick]
    brushes = args.brushes or [4, DEFAULT_BRUSH, 60]
    result = measure(model, images, labels, brushes, args.steps, args.raster)
    print(f"{source}, test digits {args.first}-{args.first + len(images) - 1} ({len(images):,}):")
    print(f"  as MNIST images          {100 * result['mnist']:6.2f} %")
    for (brush, step), acc in result["drawn"].items():
        print(f"  drawn, brush {brush:2d} px, step {step:2d} px  {100 * acc:6.2f} %")
    print(
        json.dumps(
            {
                "digits": len(images),
                "first": args.first,
                "source": source,
                "path": "raster" if args.raster else "strokes",
                "mnist_accuracy": result["mnist"],
                "drawn_accuracy": {f"brush {b}, step {s}": acc for (b, s), acc in result["drawn"].items()},
            }
        )
    )


if __name__ == "__main__":
    main()
