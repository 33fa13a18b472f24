"""Overlapping digits: compose a MultiMNIST pair and watch routing pull the two digits apart.

Paper Sec. 6 and Fig. 5: two MNIST digits of different classes, each shifted by up to 4 px,
in a 36 x 36 field; the two longest digit capsules name them; the decoder reconstructs
each from its own capsule (red and green over each other), and a digit that is not there
cannot be reconstructed (the (*) columns). Segmentation by routing: every pixel coloured by
the share of the couplings to digit A against digit B of the primary capsules that see it
(:func:`capsviz.model.analysis.segmentation`), per routing iteration.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import torch
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from capsviz.data.mnist import MnistSplit
from capsviz.data.multimnist import MAX_SHIFT, TEST_PAIRS, MultiMnistPairs, compose, fixed_test_pairs, place
from capsviz.data.preprocess import preprocess_ink
from capsviz.evaluate import model_lengths, two_digit_hits
from capsviz.gui.widgets.canvas import CANVAS_SIZE, DEFAULT_BRUSH, DrawingCanvas
from capsviz.gui.widgets.common import ImagePanel, capsule_bars
from capsviz.model import CapsNet
from capsviz.model.analysis import segmentation
from capsviz.model.inference import Inference, infer, two_longest

DRAW_SIZE = 168  # px of each digit's drawing canvas (6x the 28 x 28 digit)
RED, GREEN = np.array([1.0, 0.25, 0.2], np.float32), np.array([0.2, 1.0, 0.3], np.float32)
BAR, TOP, TRUE_EDGE = (90, 140, 200), (250, 180, 40), (255, 255, 255)
INFO = (
    "Two MNIST test digits of different classes, each shifted by up to 4 px, added and clipped "
    "in a 36×36 field (MultiMNIST, Sec. 6 of the paper). The two longest digit capsules are the "
    "model's answer. Fig. 5: the reconstructions from those two capsules in red and green over "
    "each other, and one from a digit you pick; a digit that is not there cannot be "
    "reconstructed. Segmentation by routing: each pixel coloured by how the primary capsules "
    "that see it divide their couplings between digit A (red) and digit B (green), at the "
    "routing iteration chosen."
)


def a_digit(k: int) -> str:
    """``a 7``, ``an 8``."""
    return f"{'an' if k == 8 else 'a'} {k}"


def by_digit(top2, labels, reconstructions: np.ndarray, parts: np.ndarray) -> tuple[int, int]:
    """Which of the two longest capsules ``top2`` stands for digit A and which for digit B,
    as indices into ``top2``: (0, 1) keeps the order, (1, 0) swaps it.

    A capsule of digit A's class is A's (``labels``: the classes of A and B, None for a
    drawing), else one of B's class is B's; when neither class is among the two (a wrong
    pair, or drawings) each capsule goes to the digit its reconstruction covers more of:
    the order with the larger sum of ``reconstructions[k] · parts[digit]`` over the pixels
    (``reconstructions``: (2, H, H) of top2's capsules; ``parts``: (2, H, H) digits A and B
    alone, both in [0, 1]).
    """
    a, b = labels
    if a is not None and a in top2:
        return (0, 1) if top2[0] == a else (1, 0)
    if b is not None and b in top2:
        return (0, 1) if top2[1] == b else (1, 0)
    overlap = np.einsum("khw,dhw->kd", reconstructions.astype(np.float64), parts.astype(np.float64))
    return (0, 1) if overlap[0, 0] + overlap[1, 1] >= overlap[1, 0] + overlap[0, 1] else (1, 0)


def layered(images, colours) -> np.ndarray:
    """(H, W) images in [0, 1], each in its colour (RGB in [0, 1]), added and clipped: (H, W, 3)."""
    return np.clip(sum(tinted(image, colour) for image, colour in zip(images, colours)), 0.0, 1.0)


def tinted(image: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """(H, W) in [0, 1] -> (H, W, 3): the image in one colour."""
    return np.asarray(image, np.float32)[..., None] * colour


def red_green(red: np.ndarray, green: np.ndarray) -> np.ndarray:
    """Two (H, W) images in [0, 1] over each other, the first in red and the second in green
    (yellow where both): (H, W, 3) in [0, 1]."""
    return layered((red, green), (RED, GREEN))


def share_contrast(image: np.ndarray, share: np.ndarray, ink: float = 0.2) -> float:
    """The largest departure |share - 0.5| on the input's ink (pixels above ``ink``); 0 when
    the couplings do not favour either digit anywhere (uniform routing, iteration 1)."""
    on_ink = np.asarray(image) > ink
    return float(np.abs(np.asarray(share)[on_ink] - 0.5).max()) if on_ink.any() else 0.0


def segmentation_image(image: np.ndarray, share: np.ndarray, contrast: float) -> np.ndarray:
    """The input's ink coloured by ``share``: red where the capsules that see a pixel send
    more to digit A, green where to digit B, yellow for even; ``contrast`` (> 0) is the
    departure from 0.5 drawn as pure red or green. (H, W, 3) in [0, 1]."""
    t = 0.5 if contrast <= 0 else np.clip(0.5 + (np.asarray(share, np.float32) - 0.5) / (2 * contrast), 0.0, 1.0)
    t = np.broadcast_to(np.asarray(t, np.float32), np.shape(image))[..., None]
    return np.clip(np.asarray(image, np.float32)[..., None] * (t * RED + (1.0 - t) * GREEN), 0.0, 1.0)


class DigitControls(QGroupBox):
    """One digit of the pair: a test digit (its index, or a random pick) or a drawing, and
    its shift."""

    changed = Signal()

    def __init__(self, title: str, count: int, parent=None) -> None:
        super().__init__(title, parent)
        self.source = QComboBox()
        self.source.addItems(["test digit", "drawing"])
        self.source.setToolTip("take this digit from the MNIST test digits, or draw it")
        self.canvas = DrawingCanvas(size=DRAW_SIZE)
        self.canvas.brush_width = round(DEFAULT_BRUSH * DRAW_SIZE / CANVAS_SIZE)  # the same stroke at 28 x 28
        self.canvas.setVisible(False)
        self.clear = QPushButton("Clear")
        self.clear.setVisible(False)
        self.index = QSpinBox()
        self.index.setRange(0, count - 1)
        self.index.setToolTip("index of the digit in the MNIST test digits")
        self.random = QPushButton("Random")
        self.dy, self.dx = (QSlider(Qt.Orientation.Horizontal) for _ in range(2))
        self.shift_labels: list[QLabel] = []
        layout = QGridLayout(self)
        layout.addWidget(QLabel("digit"), 0, 0)
        layout.addWidget(self.index, 0, 1)
        layout.addWidget(self.random, 0, 2)
        self.label = QLabel("")
        layout.addWidget(self.label, 0, 3)
        for row, (name, slider) in enumerate((("shift ↓", self.dy), ("shift →", self.dx)), start=1):
            slider.setRange(-MAX_SHIFT, MAX_SHIFT)
            slider.setPageStep(1)
            slider.setTickPosition(QSlider.TickPosition.TicksBelow)
            slider.setToolTip(f"rows / columns to move the digit by, −{MAX_SHIFT}…{MAX_SHIFT} px")
            value = QLabel("+0 px")
            self.shift_labels.append(value)
            layout.addWidget(QLabel(name), row, 0)
            layout.addWidget(slider, row, 1, 1, 2)
            layout.addWidget(value, row, 3)
            slider.valueChanged.connect(self.changed)
        self.index.valueChanged.connect(self.changed)
        self.changed.connect(self.show_shift)
        layout.addWidget(QLabel("from"), 3, 0)
        layout.addWidget(self.source, 3, 1)
        layout.addWidget(self.clear, 3, 2)
        layout.addWidget(self.canvas, 0, 4, 4, 1, Qt.AlignmentFlag.AlignTop)
        self.source.currentIndexChanged.connect(self._source_changed)
        self.canvas.inkChanged.connect(self.changed)
        self.clear.clicked.connect(self.canvas.clear)

    def _source_changed(self, _index: int) -> None:
        drawn = self.drawn
        self.canvas.setVisible(drawn)
        self.clear.setVisible(drawn)
        for widget in (self.index, self.random):
            widget.setEnabled(not drawn)
        self.changed.emit()

    @property
    def drawn(self) -> bool:
        """Whether this digit is the drawing (else the test digit of :attr:`index`)."""
        return self.source.currentIndex() == 1

    def digit_image(self, digits: MnistSplit) -> np.ndarray:
        """The digit as a 28 x 28 uint8 image: the test digit, or the drawing preprocessed as the
        explorer does (:func:`capsviz.data.preprocess.preprocess_ink`; blank when empty) and
        rounded to 8 bits like a stored MNIST digit."""
        if not self.drawn:
            return digits.images[self.index.value()]
        image = preprocess_ink(self.canvas.ink())
        if image is None:
            return np.zeros((28, 28), np.uint8)
        return np.round(image * 255.0).astype(np.uint8)

    @property
    def shift(self) -> tuple[int, int]:
        return self.dy.value(), self.dx.value()

    def show_shift(self) -> None:
        """Write the sliders' values beside them."""
        for label, value in zip(self.shift_labels, self.shift):
            label.setText(f"{value:+d} px")


class PairExplorer(QWidget):
    """The overlapping-digits view of a MultiMNIST model.

    ``model``: a CapsNet for 36 x 36 inputs; ``digits``: MNIST test digits (uint8
    (N, 28, 28) with labels) to pick the two from; ``full_test_split``: whether they are the
    whole MNIST test split (the fixed test pairs are drawn from it; else the browser is off).
    Everything is recomputed when a control changes (:meth:`update_pair`); :attr:`inference`
    is the current trace, :attr:`pair_image` the exact 36 x 36 input, :attr:`shares` the
    segmentation share per iteration (R, 36, 36).
    """

    computed = Signal()

    def __init__(
        self, model: CapsNet, digits: MnistSplit, full_test_split: bool = True, seed: int = 0, parent=None
    ) -> None:
        super().__init__(parent)
        self.setToolTip(INFO)
        self.model, self.digits = model, digits
        self.rng = np.random.default_rng(seed)
        self.by_class = [np.flatnonzero(digits.labels == k) for k in range(10)]
        self.controls = [DigitControls(f"digit {name}", len(digits)) for name in ("A (red)", "B (green)")]
        self.iteration = QSlider(Qt.Orientation.Horizontal)
        self.iteration.setRange(1, model.cfg.routing_iterations)
        self.iteration.setValue(model.cfg.routing_iterations)
        self.iteration.setToolTip("routing iteration r of the segmentation")
        self.iteration_label = QLabel("")
        self.scale_label = QLabel("")  # the segmentation's colour scale
        self.scale_label.setWordWrap(True)
        self.scale_label.setToolTip(
            "The segmentation's colours span the largest departure from an even split over all "
            "iterations of this pair: where routing barely divides the capsules, faint differences "
            "show as full colours. The shares are the couplings themselves."
        )
        self.absent = QComboBox()
        self.absent.addItems([str(k) for k in range(10)])
        self.absent.setToolTip("reconstruct from this digit's capsule (the paper's (*) columns)")
        self.verdict = QLabel("")
        self.verdict.setWordWrap(True)
        self.test_pair = QSpinBox()
        self.test_pair.setRange(0, TEST_PAIRS - 1)
        self.test_pair.setToolTip(
            "a pair of the fixed MultiMNIST test set (capsviz.data.multimnist.fixed_test_pairs): its digits and shifts"
        )
        self.show_test_pair = QPushButton("Show test pair")
        self.next_wrong = QPushButton("Next wrong pair")
        self.next_wrong.setToolTip("the next test pair whose two longest capsules are not its two digits")
        self.browse_status = QLabel("")
        self._browsed: tuple | None = None  # setup() of the test pair browse_status names
        if not full_test_split:  # the fixed test pairs are drawn from all 10,000 test digits
            for widget in (self.test_pair, self.show_test_pair, self.next_wrong):
                widget.setEnabled(False)
            self.browse_status.setText("the test pairs need the MNIST test files (see README: MNIST)")

        side = model.cfg.image_size
        # short titles: five panels share the window's width (a 1366-pixel screen leaves about 150 each)
        self.composed_panel = ImagePanel("digits: A red, B green", (side, side))
        self.input_panel = ImagePanel(f"model input ({side}×{side})", (side, side))
        self.fig5_panel = ImagePanel("reconstructions", (side, side))
        self.absent_panel = ImagePanel("(*) from digit", (side, side))
        self.segment_panel = ImagePanel("segmentation by routing", (side, side))
        for panel, tip in (
            (self.composed_panel, "the two digits, each alone in its shifted 36×36 field: A in red, B in green"),
            (self.input_panel, "the model's input: the two digits summed and clipped at 1"),
            (self.fig5_panel, "the reconstructions from the two longest capsules over each other (paper Fig. 5)"),
            (self.absent_panel, "the reconstruction from the capsule picked under (*): a digit that is not there"),
            (self.segment_panel, "each pixel coloured by how the primary capsules that see it split their couplings"),
        ):
            panel.setToolTip(tip)
        self.bars_plot, self.bars = capsule_bars(
            "capsule lengths ‖v_j‖ (orange: the two longest; outlined: the digits)", BAR
        )
        self.bars_plot.setMinimumHeight(170)

        top = QHBoxLayout()
        for control in self.controls:
            top.addWidget(control)
        options = QGridLayout()
        options.addWidget(QLabel("segmentation at iteration"), 0, 0)
        options.addWidget(self.iteration, 0, 1)
        options.addWidget(self.iteration_label, 0, 2)
        options.addWidget(QLabel("(*) reconstruct digit"), 1, 0)
        options.addWidget(self.absent, 1, 1)
        options.addWidget(self.scale_label, 1, 2)
        browse = QHBoxLayout()
        for widget in (QLabel("test pair"), self.test_pair, self.show_test_pair, self.next_wrong, self.browse_status):
            browse.addWidget(widget)
        browse.addStretch(1)
        options.addLayout(browse, 2, 0, 1, 3)
        images = QGridLayout()
        for k, panel in enumerate(
            (self.composed_panel, self.input_panel, self.fig5_panel, self.absent_panel, self.segment_panel)
        ):
            panel.setMinimumSize(150, 170)
            images.addWidget(panel, 0, k)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(options)
        layout.addLayout(images, 3)
        layout.addWidget(self.bars_plot, 2)
        layout.addWidget(self.verdict)

        for k, control in enumerate(self.controls):
            control.changed.connect(self.update_pair)
            control.random.clicked.connect(lambda _=False, k=k: self.pick_random(k))
        self.iteration.valueChanged.connect(self.show_segmentation)
        self.show_test_pair.clicked.connect(lambda: self.select_test_pair(self.test_pair.value()))
        self.next_wrong.clicked.connect(self.find_next_wrong)
        self._test_pairs: MultiMnistPairs | None = None
        self._hits: dict[int, int] = {}  # test pair -> digits found among the two longest capsules
        self.absent.currentIndexChanged.connect(lambda _index: self.update_pair())
        self.inference: Inference | None = None
        self.iterations = model.cfg.routing_iterations  # routing iterations R run on the pair
        self.pair_image = np.zeros((side, side), np.float32)
        self.shares: np.ndarray | None = None
        self.pick_random(0, update=False)
        self.pick_random(1)

    def set_model(self, model: CapsNet) -> None:
        """Show the current pair through another MultiMNIST ``model`` (with the same routing iterations)."""
        self.model = model
        self._hits.clear()
        self.update_pair()

    def set_iterations(self, iterations: int) -> None:
        """Run ``iterations`` routing iterations (R >= 1) on the pair; the segmentation shows the last."""
        self.iterations = int(iterations)
        self.iteration.blockSignals(True)  # the segmentation is drawn once the pair is traced again
        self.iteration.setMaximum(self.iterations)
        self.iteration.setValue(self.iterations)
        self.iteration.blockSignals(False)
        self.update_pair()

    def figures(self) -> dict[str, QWidget]:
        """This view's plots, by the file name an export gives them."""
        return {
            "pair_digits": self.composed_panel,
            "pair_input": self.input_panel,
            "pair_reconstructions": self.fig5_panel,
            "pair_absent_digit": self.absent_panel,
            "pair_segmentation": self.segment_panel,
            "pair_capsule_lengths": self.bars_plot,
        }

    # -- input ------------------------------------------------------------------------
    @property
    def labels(self) -> tuple[int | None, int | None]:
        """The classes of digit A and digit B; None for a drawing (its class is not known)."""
        return tuple(None if c.drawn else int(self.digits.labels[c.index.value()]) for c in self.controls)

    @property
    def segmented(self) -> tuple[int, int] | None:
        """The two digit capsules the segmentation compares, digit A's first: the true
        classes of two test digits, else the two longest capsules as :func:`by_digit` orders
        them (a drawing's class is not known); None for two test digits of one class."""
        a, b = self.labels
        if a is None or b is None:
            return tuple(self.shown)
        return None if a == b else (a, b)

    def set_pair(self, a: int, b: int, shift_a=(0, 0), shift_b=(0, 0)) -> None:
        """Show digits ``a`` and ``b`` (indices into the digit set) with their shifts (rows, columns)."""
        for control, index, shift in zip(self.controls, (a, b), (shift_a, shift_b)):
            for widget, value in ((control.index, index), (control.dy, shift[0]), (control.dx, shift[1])):
                widget.blockSignals(True)
                widget.setValue(int(value))
                widget.blockSignals(False)
            control.show_shift()
        self.update_pair()

    def pick_random(self, which: int, update: bool = True) -> None:
        """A random test digit for A (0) or B (1), of another class than the other digit."""
        other = self.labels[1 - which]
        avoid = -1 if other is None else other
        classes = [k for k in range(10) if k != avoid and len(self.by_class[k])]
        members = self.by_class[int(self.rng.choice(classes))]
        control = self.controls[which]
        control.index.blockSignals(True)
        control.index.setValue(int(self.rng.choice(members)))
        control.index.blockSignals(False)
        if update:
            self.update_pair()

    def test_pairs(self) -> MultiMnistPairs:
        """The fixed MultiMNIST test pairs of the digit set (built on first use)."""
        if self._test_pairs is None:
            self._test_pairs = fixed_test_pairs(self.digits, TEST_PAIRS)
        return self._test_pairs

    def select_test_pair(self, k: int) -> None:
        """Show test pair ``k``: its two digits with their shifts, the same 36 x 36 image."""
        pairs = self.test_pairs()
        self.test_pair.setValue(k)
        self.set_pair(*pairs.sources[k], pairs.shifts[k, 0], pairs.shifts[k, 1])
        self._browsed = self.setup()  # the label holds while the pair stays as it is
        self.browse_status.setText(f"test pair {k}: digits {pairs.labels[k, 0]} and {pairs.labels[k, 1]}")

    def setup(self) -> tuple:
        """What makes the pair: per digit, drawn or not, its test index and its shift."""
        return tuple((c.drawn, c.index.value(), c.shift) for c in self.controls)

    @torch.inference_mode()
    def find_next_wrong(self, chunk: int = 64) -> int | None:
        """Show the first test pair after the current one that the model gets wrong (not both
        digits among its two longest capsules), scanning forward in chunks; returns its index,
        or None (with a message) when there is none up to the end of the test set."""
        pairs = self.test_pairs()
        start = self.test_pair.value() + 1
        for begin in range(start, len(pairs), chunk):
            end = min(begin + chunk, len(pairs))
            todo = [k for k in range(begin, end) if k not in self._hits]
            if todo:
                lengths = model_lengths(self.model, pairs.images[todo], batch_size=chunk)
                hits = two_digit_hits(torch.from_numpy(lengths), torch.from_numpy(pairs.labels[todo]))
                self._hits.update(zip(todo, hits.tolist()))
            wrong = next((k for k in range(begin, end) if self._hits[k] < 2), None)
            if wrong is not None:
                self.select_test_pair(wrong)
                return wrong
        self.browse_status.setText(f"no wrong pair after test pair {start - 1}")
        return None

    def parts(self) -> np.ndarray:
        """(2, 36, 36) uint8: digit A and digit B, each alone in its shifted field."""
        return np.stack([place(c.digit_image(self.digits), c.shift) for c in self.controls])

    # -- compute and show ---------------------------------------------------------------
    @torch.inference_mode()
    def update_pair(self) -> None:
        """Compose the pair, run the model with a trace and redraw every panel."""
        parts = self.parts()
        self.pair_image = compose(parts).astype(np.float32) / 255.0
        if self._browsed is not None and self._browsed != self.setup():
            self._browsed = None  # no longer the test pair the label names
            self.browse_status.setText("")
        a, b = self.labels
        for control, label in zip(self.controls, (a, b)):
            control.label.setText("" if label is None else a_digit(label))
        self.inference = inference = infer(self.model, self.pair_image, self.iterations)
        lengths = inference.lengths[-1]
        self.top2 = two_longest(lengths)
        absent = self.absent.currentIndex()
        v = torch.from_numpy(inference.v[-1]).to(next(self.model.parameters()).device)
        classes = torch.tensor([*self.top2, absent], device=v.device)
        by_length = self.model.decoder(v.expand(3, -1, -1), classes)[:, 0].float().cpu().numpy()
        # Fig. 5 in the digits' colours: digit A's capsule in red, digit B's in green
        order = by_digit(self.top2, (a, b), by_length[:2], parts / 255.0)
        self.shown = [self.top2[k] for k in order]
        # (3, 36, 36): the two longest capsules (as shown), the picked digit
        self.reconstructions = recon = by_length[[*order, 2]]
        self.pair_digits = pair = self.segmented
        self.shares = (
            None if pair is None else np.stack([segmentation(inference.u_lengths, c, pair)[0] for c in inference.c])
        )
        # one colour scale for all iterations of this pair: the largest departure over them
        self.contrast = 0.0 if pair is None else max(share_contrast(self.pair_image, share) for share in self.shares)
        self.composed_panel.set_image(red_green(parts[0] / 255.0, parts[1] / 255.0))
        self.input_panel.set_image(self.pair_image)
        self.fig5_panel.set_image(red_green(recon[0], recon[1]))
        self.fig5_panel.set_title(f"decoded: {self.shown[0]} red, {self.shown[1]} green")
        self.absent_panel.set_image(recon[2])
        there = absent in (a, b) or (None in (a, b) and absent in self.top2)
        self.absent_panel.set_title(f"(*) from {absent}" + ("" if there else ": not there"))
        brushes = [TOP if j in self.top2 else BAR for j in range(10)]
        pens = [pg.mkPen(TRUE_EDGE, width=2) if j in (a, b) else pg.mkPen(None) for j in range(10)]
        self.bars.setOpts(height=lengths, brushes=brushes, pens=pens)
        found = len({a, b} & set(self.top2))
        if a is None or b is None:
            verdict = f"longest capsules: {self.top2[0]} and {self.top2[1]}"
            if a is not None or b is not None:
                known = a if a is not None else b
                verdict += f"; the test digit is {a_digit(known)} — " + ("found" if known in self.top2 else "not found")
        elif a == b:
            verdict = f"both digits are {a}s: pick digits of two different classes"
        else:
            verdict = (
                f"longest capsules: {self.top2[0]} and {self.top2[1]}; the digits are {a} and {b} — "
                + {2: "both right", 1: "one right", 0: "both wrong"}[found]
            )
        self.verdict.setText(verdict)
        self.show_segmentation()
        self.computed.emit()

    def show_segmentation(self) -> None:
        """Draw the segmentation of the routing iteration on the slider."""
        r = self.iteration.value() - 1
        self.iteration_label.setText(f"r = {r + 1} of {self.iteration.maximum()}")
        if self.shares is None:
            self.segment_panel.set_image(None)
            self.scale_label.setText("")
            return
        a, b = self.pair_digits
        self.segment_panel.set_image(segmentation_image(self.pair_image, self.shares[r], self.contrast))
        self.segment_panel.set_title(f"r = {r + 1}: to {a} red, {b} green")
        self.scale_label.setText(
            f"colours stretched: full red at a share of {0.5 + self.contrast:.4f} to {a}, "
            f"full green at {0.5 - self.contrast:.4f} (0.5: an even split)"
        )
