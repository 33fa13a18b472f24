"""Overlapping digits: compose a MultiMNIST pair and watch routing pull the two digits apart.

Paper Sec. 6 and Fig. 5: two MNIST digits of different classes, each shifted by up to 4 px,
in a 36 x 36 field; the two longest digit capsules name them; the decoder reconstructs
each from its own capsule (red and green over each other), and a digit that is not there
cannot be reconstructed (the (*) columns). Segmentation by routing: every pixel coloured by
the share of the couplings to digit A against digit B of the primary capsules that see it
(:func:`capsviz.model.analysis.segmentation`), per routing iteration.

:class:`PairPanel` is the explorer's central widget for a pair model: the pair composer (an
input source: two test digits or drawings and their shifts, or a pair of the fixed test
set) above the view of the pair's reading (:class:`capsviz.model.pairs.PairReading`, made
with the pass on the inference thread). Nothing here runs the model on the GUI thread.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QWidget,
)

from capsviz import explanations
from capsviz.data.images import grey_levels
from capsviz.data.mnist import MnistSplit
from capsviz.data.multimnist import FIELD, MAX_SHIFT, TEST_PAIRS, FixedTestBlocks, compose, place, random_partner
from capsviz.explorer import Redraws
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.canvas import CANVAS_SIZE, DEFAULT_BRUSH, DrawingCanvas, canvas_keys
from capsviz.gui.widgets.common import ImagePanel, InferenceView, column, row, set_quietly
from capsviz.model.pairs import PairSetup, a_digit, answered, no_pair_found, red_green
from capsviz.texts import QT_TR_NOOP

SCANS = {  # scan_test_pairs' finds: the text and tooltip of the button that asks for the next
    "wrong": (QT_TR_NOOP("Next wrong pair"), explanations.NEXT_WRONG),
    "routing": (QT_TR_NOOP("Next routing change"), explanations.NEXT_ROUTING_CHANGE),
}
DRAW_SIZE = 84  # px of each digit's drawing canvas (3x the 28 x 28 digit): the height of the shift rows beside it


class DigitControls(QGroupBox):
    """One digit of the pair: a test digit (its index, or a random pick) or a drawing, and
    its shift."""

    changed = Signal()

    def __init__(self, title: str, count: int, parent=None) -> None:
        super().__init__(tr(title), parent)
        self.title_source = title  # the English source of the box's title
        self.source = QComboBox(toolTip=tr("take this digit from the MNIST test digits, or draw it"))
        self.source.addItems([tr("test digit"), tr("drawing")])
        self.canvas = DrawingCanvas(size=DRAW_SIZE, parent=self)  # its own, in or out of the layout
        self.canvas.brush_width = round(DEFAULT_BRUSH * DRAW_SIZE / CANVAS_SIZE)  # the same stroke at 28 x 28
        self.canvas.setVisible(False)
        # its keys while it (or the box) has the focus, which a stroke gives it
        self.canvas.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        canvas_keys(self.canvas, self, Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.clear = QPushButton(tr("Clear"), self, visible=False, clicked=self.canvas.clear)
        self.index = QSpinBox(minimum=0, maximum=count - 1, toolTip=tr("index of the digit in the MNIST test digits"))
        self.random = QPushButton(tr("Random"), toolTip=tr("a random test digit of another class than the other digit"))
        self.dy, self.dx = (QSlider(Qt.Orientation.Horizontal) for _ in range(2))
        self.index_label = QLabel(tr("digit"))
        self.shift_names = [QLabel(tr("shift ↓")), QLabel(tr("shift →"))]
        self.shift_labels = [QLabel("+0 px") for _ in range(2)]
        for slider in (self.dy, self.dx):
            slider.setRange(-MAX_SHIFT, MAX_SHIFT)
            slider.setPageStep(1)
            slider.setTickPosition(QSlider.TickPosition.TicksBelow)
            slider.setToolTip(tr("rows / columns to move the digit by, −{k}…{k} px", k=MAX_SHIFT))
            slider.valueChanged.connect(self.changed)
        self.index.valueChanged.connect(self.changed)
        self.changed.connect(self.show_shift)
        grid = QGridLayout(self)
        grid.setContentsMargins(6, 2, 6, 4)
        grid.setVerticalSpacing(3)
        self._fit_either_source()
        self.source.currentIndexChanged.connect(self._source_changed)
        self.canvas.inkChanged.connect(self.changed)

    def _fit_either_source(self) -> None:
        """As high for a test digit as for a drawing, so switching does not move the views under it."""
        self._arrange(drawn=True)
        self.setMinimumHeight(self.sizeHint().height())
        self._arrange()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:  # the texts, and so the rows, of another height
            self._fit_either_source()

    def _arrange(self, drawn: bool | None = None) -> None:
        """Lay the controls out for the source (``drawn``, default :attr:`drawn`): a test
        digit's index and Random above the two shift rows; or the drawing canvas at the left,
        each shift's name and value above its slider beside it, and Clear under it. Either
        fits half the pair panel's least width, so a drawn digit does not widen the window;
        room left over stays under the controls."""
        layout: QGridLayout = self.layout()
        (name_y, name_x), (value_y, value_x) = self.shift_names, self.shift_labels
        right = Qt.AlignmentFlag.AlignRight
        if self.drawn if drawn is None else drawn:
            cells = [
                (self.canvas, 0, 0, 4, 1, Qt.AlignmentFlag.AlignTop),
                (name_y, 0, 1, 1, 1),
                (value_y, 0, 2, 1, 1, right),
                (self.dy, 1, 1, 1, 2),
                (name_x, 2, 1, 1, 1),
                (value_x, 2, 2, 1, 1, right),
                (self.dx, 3, 1, 1, 2),
                (self.source, 4, 0, 1, 1),
                (self.clear, 4, 1, 1, 2),
            ]
            hidden, shown = [self.index_label, self.index, self.random], [self.canvas, self.clear]
        else:
            cells = [
                (self.index_label, 0, 0, 1, 1),
                (self.index, 0, 1, 1, 1),
                (self.random, 0, 2, 1, 2),
                (name_y, 1, 0, 1, 1),
                (self.dy, 1, 1, 1, 2),
                (value_y, 1, 3, 1, 1),
                (name_x, 2, 0, 1, 1),
                (self.dx, 2, 1, 1, 2),
                (value_x, 2, 3, 1, 1),
                (self.source, 3, 0, 1, 4),
            ]
            hidden, shown = [self.canvas, self.clear], [self.index_label, self.index, self.random]
        # hidden first, shown last: the box never needs room for both sets at once (a
        # layout that asks for more than the window has widens the window)
        for widget in hidden:
            widget.setVisible(False)
        for widget in hidden + [widget for widget, *_ in cells]:  # every control of the box
            layout.removeWidget(widget)
        for widget, *cell in cells:
            layout.addWidget(widget, *cell)
        below = 1 + max(cell[1] + cell[3] - 1 for cell in cells)
        for r in range(max(layout.rowCount(), below + 1)):
            layout.setRowStretch(r, 1 if r == below else 0)  # the row under the last takes what is left
        for widget in shown:
            widget.setVisible(True)

    def _source_changed(self, _index: int) -> None:
        self._arrange()
        self.changed.emit()

    def take_test_digit(self) -> None:
        """Set the source to the test digit of :attr:`index`, without ``changed`` (the caller
        composes the pair); a drawing stays on its canvas for a later switch back."""
        if self.drawn:
            with QSignalBlocker(self.source):
                self.source.setCurrentIndex(0)
            self._arrange()

    @property
    def drawn(self) -> bool:
        """Whether this digit is the drawing (else the test digit of :attr:`index`)."""
        return self.source.currentIndex() == 1

    def digit_image(self, digits: MnistSplit) -> np.ndarray:
        """The digit as a 28 x 28 uint8 image: the test digit, or the drawing preprocessed as the
        explorer does (:meth:`DrawingCanvas.model_input`; blank when empty) and
        rounded to 8 bits like a stored MNIST digit."""
        if not self.drawn:
            return digits.images[self.index.value()]
        image = self.canvas.model_input()
        return np.zeros((28, 28), np.uint8) if image is None else grey_levels(image)

    @property
    def shift(self) -> tuple[int, int]:
        return self.dy.value(), self.dx.value()

    def show_shift(self) -> None:
        """Write the sliders' values beside them."""
        for label, value in zip(self.shift_labels, self.shift):
            label.setText(f"{value:+d} px")


class PairPanel(QWidget, InferenceView):
    """The overlapping-digits explorer's central widget: the pair composer and the view of its reading.

    Parameters
    ----------
    digits : MnistSplit
        MNIST test digits (uint8 (N, 28, 28) with labels) to pick the two from.
    full_test_split : bool
        Whether ``digits`` is the whole MNIST test split (the fixed test pairs are drawn
        from it; else the test-pair browser is off).
    iteration : callable
        Returns the routing iteration r (1-based) the window shows; the segmentation is drawn at it.
    seed : int
        Seed of the random picks.

    Signals
    -------
    pairChanged() : the pair changed; :attr:`pair_image` and :attr:`setup` describe it.
    scanRequested(int, str) : *Next wrong pair* (``wrong``) or *Next routing change*
        (``routing``) asks the window to scan the fixed test pairs from this index for the
        next such pair (:func:`capsviz.model.pairs.scan_in_background` over :attr:`test_block`,
        on a worker thread).

    :meth:`show_inference` draws an :class:`~capsviz.model.inference.Inference` whose
    ``reading`` is the pair's :class:`~capsviz.model.pairs.PairReading`.
    """

    pairChanged = Signal()
    scanRequested = Signal(int, str)

    def __init__(
        self, digits: MnistSplit, full_test_split: bool = True, iteration=lambda: 1, seed: int = 0, parent=None
    ):
        super().__init__(parent)
        self.setToolTip(tr(explanations.PAIRS))
        self.digits = digits
        self.full_test_split = full_test_split
        self.iteration = iteration
        self.rng = np.random.default_rng(seed)
        self.controls = [
            DigitControls(QT_TR_NOOP("digit A (red)"), len(digits)),
            DigitControls(QT_TR_NOOP("digit B (green)"), len(digits)),
        ]
        # the segmentation's colour scale
        self.scale_label = QLabel("", wordWrap=True, toolTip=tr(explanations.SEGMENTATION_SCALE))
        self.absent = QComboBox(toolTip=tr("reconstruct from this digit's capsule (the paper's (*) columns)"))
        self.absent.addItems([str(k) for k in range(10)])
        self.verdict = QLabel("", wordWrap=True)
        tip = tr("a pair of the fixed MultiMNIST test set: its digits and shifts")
        self.test_pair = QSpinBox(minimum=0, maximum=TEST_PAIRS - 1, toolTip=tip)
        self.show_test_pair = QPushButton(tr("Show test pair"))
        self._scans = {find: QPushButton(tr(text), toolTip=tr(tip)) for find, (text, tip) in SCANS.items()}
        self.next_wrong, self.next_changed = self._scans.values()
        self.finding = "wrong"  # what the scan running (or the last one) looks for
        self.browse_status = QLabel("", wordWrap=True)
        self._browsed: tuple | None = None  # setup() of the test pair browse_status names
        if not full_test_split:  # the fixed test pairs are drawn from all 10,000 test digits
            for widget in (self.test_pair, self.show_test_pair, self.next_wrong, self.next_changed):
                widget.setEnabled(False)
            self.browse_status.setText(tr("the test pairs need the MNIST test files (File → Download MNIST…)"))

        side = FIELD
        self.figures: dict[str, ImagePanel] = {}  # by the file name an export gives them
        for name, (title, tip) in explanations.PAIR_PANELS.items():
            panel = self.figures[name] = ImagePanel(tr(title), (side, side), least=(72, 72))
            panel.setToolTip(tr(tip, k=side))
        panels = self.figures.values()
        self.composed_panel, self.input_panel, self.fig5_panel, self.absent_panel, self.segment_panel = panels

        absent = row(tr("(*) reconstruct digit"), self.absent, (self.scale_label, 1))
        browse = row(tr("test pair"), self.test_pair, self.show_test_pair, self.next_wrong, self.next_changed, 1)
        images = row(*((panel, 1) for panel in panels))  # equally wide
        # close rows, as in the single-digit input panel: the pair mode fits a 1280 x 720 screen
        parts = (row(*self.controls), absent, browse, self.browse_status, (images, 1), self.verdict)
        column(*parts, spacing=3, margins=(9, 2, 9, 2), parent=self)

        for k, control in enumerate(self.controls):
            control.changed.connect(self.update_pair)
            control.random.clicked.connect(lambda _=False, k=k: self.pick_random(k))
        self.show_test_pair.clicked.connect(lambda: self.select_test_pair(self.test_pair.value()))
        self.test_pair.lineEdit().returnPressed.connect(self.show_test_pair.click)  # Enter in the box shows it
        for find, button in self._scans.items():
            button.clicked.connect(lambda _=False, find=find: self.scanRequested.emit(self.test_pair.value() + 1, find))
        self.test_block = FixedTestBlocks(digits)  # test_block(b): block b of the fixed test pairs, once drawn
        self.absent.currentIndexChanged.connect(lambda _index: self.redraws.request("reading"))
        self.pair_image = np.zeros((side, side), np.float32)
        self.setup = PairSetup(np.zeros((2, side, side), np.uint8), (None, None))
        self.redraws = Redraws("pair", {"reading": self._draw_reading})
        if full_test_split:
            self.select_test_pair(0, emit=False)
        else:
            self.pick_random(0, update=False)
            self.pick_random(1, update=False)
            self.update_pair(emit=False)

    # -- input ------------------------------------------------------------------------
    @property
    def labels(self) -> tuple[int | None, int | None]:
        """The classes of digit A and digit B; None for a drawing (its class is not known)."""
        return tuple(None if c.drawn else int(self.digits.labels[c.index.value()]) for c in self.controls)

    def set_pair(self, a: int, b: int, shift_a=(0, 0), shift_b=(0, 0), emit: bool = True) -> None:
        """Show test digits ``a`` and ``b`` (indices into the digit set; a drawn digit's source
        goes back to the test digit) with their shifts (rows, columns)."""
        for control, index, shift in zip(self.controls, (a, b), (shift_a, shift_b)):
            control.take_test_digit()
            for widget, value in ((control.index, index), (control.dy, shift[0]), (control.dx, shift[1])):
                set_quietly(widget, int(value))
            control.show_shift()
        self.update_pair(emit)

    def pick_random(self, which: int, update: bool = True) -> None:
        """A random test digit for A (0) or B (1), of another class than the other digit."""
        set_quietly(self.controls[which].index, random_partner(self.digits.labels, self.labels[1 - which], self.rng))
        if update:
            self.update_pair()

    def select_test_pair(self, k: int, emit: bool = True) -> None:
        """Show test pair ``k``: its two digits with their shifts, the same 36 x 36 image."""
        block, j = self.test_block.pair(k)
        self.test_pair.setValue(k)
        self.set_pair(*block.sources[j], block.shifts[j, 0], block.shifts[j, 1], emit=emit)
        self._browsed = self.composition()  # the label holds while the pair stays as it is
        self.browse_status.setText(
            tr("test pair {k}: digits {a} and {b}", k=k, a=block.labels[j, 0], b=block.labels[j, 1])
        )

    def composition(self) -> tuple:
        """What makes the pair: per digit, drawn or not, its test index and its shift."""
        return tuple((c.drawn, c.index.value(), c.shift) for c in self.controls)

    def update_pair(self, emit: bool = True) -> None:
        """Compose the pair from the controls and draw the digits and the model input (the
        reading follows with the pass, :meth:`show_inference`); ``pairChanged`` unless not ``emit``."""
        parts = np.stack([place(c.digit_image(self.digits), c.shift) for c in self.controls])
        self.pair_image = compose(parts).astype(np.float32) / 255.0
        self.setup = PairSetup(parts, self.labels)
        if self._browsed is not None and self._browsed != self.composition():
            self._browsed = None  # no longer the test pair the label names
            self.browse_status.setText("")
        for control, label in zip(self.controls, self.setup.labels):
            name = tr(control.title_source)
            control.setTitle(name if label is None else tr("{name}: {digit}", name=name, digit=a_digit(label, tr)))
        self.composed_panel.set_image(red_green(parts[0] / 255.0, parts[1] / 255.0))
        self.input_panel.set_image(self.pair_image)
        if emit:
            self.pairChanged.emit()

    def scanning(self, running: bool, find: str = "wrong") -> None:
        """Show whether a scan for ``find`` runs: its button then reads *Cancel scan*."""
        self.finding = find
        for name, button in self._scans.items():
            button.setText(tr("Cancel scan") if running and name == find else tr(SCANS[name][0]))

    def scan_event(self, ev) -> None:
        """Show an event of the scan (:func:`~capsviz.model.pairs.scan_test_pairs`; on the GUI thread)."""
        if ev[0] == "progress":
            self.browse_status.setText(tr("scanning the test pairs: {k:,} / {n:,}", k=ev[1], n=ev[2]))
        elif ev[0] == "found":
            self.select_test_pair(ev[1])
        elif ev[0] == "one iteration":
            self.browse_status.setText(
                tr("R = 1: routing runs once, so no answer can change; raise R to find where it does")
            )
        else:
            self.browse_status.setText(no_pair_found(self.finding, ev[1], tr))

    # -- the reading ------------------------------------------------------------------
    def show_iteration(self) -> None:
        """The window's routing iteration changed: draw the segmentation at it."""
        self.redraws.request()

    def _draw_reading(self) -> None:
        inf = self.inference
        reading = None if inf is None else inf.reading
        if inf is not None and reading is None:
            return  # its reading follows the capsules (readingReady): the last one stays until then
        if reading is None:
            for panel in (self.fig5_panel, self.absent_panel, self.segment_panel):
                panel.set_image(None)
            self.verdict.setText("")
            self.scale_label.setText("")
            return
        self.fig5_panel.set_image(reading.fig5)
        decoded = [j for j, _ in reading.painted]
        if len(decoded) == 2:
            self.fig5_panel.set_title(tr("decoded {a}, {b}", a=decoded[0], b=decoded[1]))
        else:
            self.fig5_panel.set_title(tr("decoded {a}", a=decoded[0]) if decoded else tr("decoded: none"))
        absent = self.absent.currentIndex()
        self.absent_panel.set_image(reading.reconstructions[absent])
        labels = reading.labels
        there = absent in labels or (None in labels and absent in answered(reading.top2, reading.blank))
        self.absent_panel.set_title(f"(*) {absent}" if there else tr("(*) {k} absent", k=absent))
        self.verdict.setText(f"{reading.verdict(tr)}\n{reading.routing(tr)}")  # 2 lines (both blank: the 2nd empty)
        r = min(max(self.iteration(), 1), inf.iterations) - 1
        if reading.shares is None:
            self.segment_panel.set_image(None)
            self.segment_panel.set_title(tr("segmentation"))
            self.scale_label.setText("")
            return
        a, b = reading.segmented
        self.segment_panel.set_image(reading.segmentation_image(inf.input, r))
        self.segment_panel.set_title(f"r = {r + 1}: {a} | {b}")
        self.scale_label.setText(reading.colour_scale(tr))
