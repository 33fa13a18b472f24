"""Digit-capsule lengths: bars with the margin-loss thresholds, and their course over iterations."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Signal
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QWidget

from capsviz import explanations
from capsviz.explorer import Redraws
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import (
    VIRIDIS,
    InferenceView,
    KeyEntry,
    SeriesKey,
    WideEnoughForTexts,
    capsule_bars,
    clear_data,
    clicked_capsule,
    colour_bar,
    column,
    digit_lines,
    fit_view,
    graphics_panel,
    image_view,
    iteration_axis,
    level_line,
    mosaic_hit,
    plot,
    ring_capsule,
    selection_ring,
    settle,
)
from capsviz.model.analysis import capsule_index, colour_levels, grid_side, mosaic_shape, primary_readout, type_mosaic
from capsviz.model.inference import longest
from capsviz.model.losses import M_MINUS, M_PLUS

BAR = (90, 140, 200)
PREDICTED = (250, 180, 40)
CNN_BAR = (190, 110, 210)  # the baseline CNN's probabilities, to the right of each capsule's bar
CNN_PREDICTED = (250, 120, 120)
# the margin loss's levels, each named at the right end of its dashed line (the left one when
# the last class's bars are the taller), inside the band between the lines (m⁺ under its
# line, m⁻ over it: never clipped by the plot's edge)
MARGIN_LABELS = ((M_PLUS, "m⁺", (1, 0)), (M_MINUS, "m⁻", (1, 1)))


class LengthsView(QWidget, InferenceView):
    """Bar chart of ‖v_j‖ (10 classes) plus lengths per routing iteration. ``answers``: how
    many digits the model names, its longest capsules (and the CNN's most probable classes)
    marked: 1 for MNIST, 2 for MultiMNIST. ``capsuleClicked(int)``: the primary capsule i
    clicked on in the length maps (the window selects it: :meth:`set_selected_capsule`)."""

    capsuleClicked = Signal(int)

    def __init__(self, answers: int = 1, parent=None) -> None:
        super().__init__(parent)
        self.answers = answers
        self.setToolTip(tr(explanations.LENGTHS))
        self.bars_plot, self.bars = capsule_bars(tr("capsule lengths ‖v_j‖"), BAR)
        self.cnn_bars = pg.BarGraphItem(x=np.arange(10) + 0.2, height=np.zeros(10), width=0.38, brushes=[CNN_BAR] * 10)
        self.cnn_bars.setVisible(False)
        self.bars_plot.addItem(self.cnn_bars)
        # with the CNN's bars beside them, a key under the title names the two
        self.bars_key = SeriesKey(self.bars_plot)
        self.baseline: np.ndarray | None = None  # the CNN's probabilities shown (10,), or None
        self.margin_lines = [level_line(y, name, (200, 80, 80), anchor) for y, name, anchor in MARGIN_LABELS]
        for line in self.margin_lines:
            self.bars_plot.addItem(line)
        self.bars_plot.getViewBox().sigResized.connect(lambda *_: self._fit_margin_labels())
        # labelled ticks far enough apart for the plot's small height (0, 0.5, 1 there)
        self.iter_plot = plot(bottom=tr("iteration r"), y_range=(0, 1))
        self.iter_plot.setMinimumHeight(106)  # its title, key and x axis, and two labelled ticks (0 and 1)
        self.iter_key, self.iter_curves = digit_lines(self.iter_plot, tr("length ‖v_j‖ per routing iteration"), "9pt")
        # narrow margins: in a low dock the maps get the height; a title of two lines, so the
        # title and the hover readout fit a narrow dock
        self.primary, self.primary_title = graphics_panel(self._primary_caption(6), (2, 2, 2, 2), size="8pt")
        self.grid = 6  # side G of the PrimaryCaps grid on screen
        self.primary_view, self.primary_maps = image_view(self.primary, 1, 0, mosaic_shape(6), VIRIDIS)
        self.primary_bar = colour_bar(self.primary, self.primary_maps, 1, 1)
        # room under the colour scale for the lower half of a label on its last tick (in a low
        # dock the scale is a few labels high, and its end may be the one tick labelled)
        half_label = math.ceil(QFontMetricsF(self.primary_bar.axis.font()).height() / 2)
        self.primary.ci.setContentsMargins(2, 2, 2, half_label + 1)
        self.primary.scene().sigMouseMoved.connect(self._hover_primary)
        self.primary.scene().sigMouseClicked.connect(self._click_primary)
        self.primary.viewport().installEventFilter(self)  # the mouse gone: the maps' own title again
        self.selected_capsule: int | None = None
        self.selected_cell = selection_ring(self.primary_view, 1.6)
        column((self.bars_plot, 4), (self.iter_plot, 3), (self.primary, 4), margins=(2, 2, 2, 2), parent=self)
        # never narrower than its titles and keys (beside the pair panel, the dock is squeezed)
        margins = self.layout().contentsMargins()
        views = [self.bars_plot, self.iter_plot, self.primary]
        self.width_for_texts = WideEnoughForTexts(self, views, margins.left() + margins.right())
        names = ("capsule_lengths", "lengths_per_iteration", "primary_capsule_lengths")  # of its plots' files
        self.figures = dict(zip(names, (self.bars_plot, self.iter_plot, self.primary)))
        self.lengths = np.zeros(10, dtype=np.float32)
        self.u_lengths: np.ndarray | None = None
        self.cnn = False  # a CNN is compared: its bars stay until the new input's probabilities come
        self.redraws = Redraws(
            "lengths",
            {
                "bars": self._draw_bars,
                "cnn": self._draw_cnn,
                "iterations": self._draw_iterations,
                "primary": self._draw_primary,
            },
            urgent=("bars", "cnn"),  # what a user watches while drawing; the curves follow in a turn of their own
        )

    def _fit_margin_labels(self) -> None:
        """The names m⁺ and m⁻ where the band between their lines holds both, one over the
        other; in a lower plot the dashed lines alone (the plot's tooltip names them)."""
        view = self.bars_plot.getViewBox()
        band = view.mapViewToDevice(QPointF(0, M_MINUS)).y() - view.mapViewToDevice(QPointF(0, M_PLUS)).y()
        fits = band >= sum(line.label.boundingRect().height() for line in self.margin_lines)
        for line in self.margin_lines:
            if line.label.isVisible() != fits:  # pyqtgraph sets its text again whenever it is shown
                line.label.setVisible(fits)

    def _place_margin_labels(self) -> None:
        """m⁺ and m⁻ at the end of their lines whose class's bars (0 at the left, 9 at the
        right; the capsule's and the CNN's) are the shorter: a name covers no answer's bar."""
        heights = [self.lengths] + ([] if self.baseline is None else [self.baseline])
        left = max(h[9] for h in heights) > max(h[0] for h in heights)
        for line, (_y, _name, (_x, above)) in zip(self.margin_lines, MARGIN_LABELS, strict=True):
            anchor = (0 if left else 1, above)
            if line.label.anchors[0] != anchor:
                line.label.anchors = [anchor, anchor]
                line.label.setPosition(0.0 if left else 1.0)

    def _draw_bars(self) -> None:
        self.set_bars(None if self.inference is None else self.inference.lengths[-1])

    def _draw_iterations(self) -> None:
        self.set_iterations(None if self.inference is None else self.inference.lengths)

    def _draw_cnn(self) -> None:
        probabilities = None if self.inference is None else self.inference.baseline
        if probabilities is not None or not self.cnn or self.inference is None:  # else they are coming
            self.set_baseline(probabilities)

    def set_baseline(self, probabilities: np.ndarray | None) -> None:
        """``probabilities``: (10,) the compared CNN's class probabilities in [0, 1], drawn
        beside the capsule lengths; None: no CNN bars (the capsule bars take the full width)."""
        shown = probabilities is not None
        if shown != (self.baseline is not None):
            self.cnn_bars.setVisible(shown)
            self.bars.setOpts(x=np.arange(10) - (0.2 if shown else 0.0), width=0.38 if shown else 0.7)
            capsules = KeyEntry(tr("capsule ‖v_j‖"), (self.bars,), (BAR, PREDICTED), "bar")
            cnn = KeyEntry("CNN p(j)", (self.cnn_bars,), (CNN_BAR, CNN_PREDICTED), "bar")
            self.bars_key.set_entries([capsules, cnn] if shown else [])
            self.bars_key.setText(tr("lengths ‖v_j‖ · CNN p(j)") if shown else tr("capsule lengths ‖v_j‖"))
        self.baseline = None if probabilities is None else np.asarray(probabilities, np.float32).copy()
        if shown:
            picked = longest(self.baseline, self.answers)  # the CNN's answers (a tie: the lower class)
            brushes = [CNN_PREDICTED if k in picked else CNN_BAR for k in range(10)]
            self.cnn_bars.setOpts(height=self.baseline, brushes=brushes)
        self._place_margin_labels()

    def _draw_primary(self) -> None:
        self.set_primary(None if self.inference is None else self.inference.u_lengths)

    @staticmethod
    def _primary_caption(grid: int) -> str:
        return tr("primary capsule lengths ‖u_i‖<br>32 types × {grid}×{grid}", grid=grid)

    def set_primary(self, u_lengths: np.ndarray | None) -> None:
        """``u_lengths``: (I,) primary capsule lengths in [0, 1) (I = 1152 for MNIST, 3200 for
        MultiMNIST), or None to clear."""
        self.u_lengths = u_lengths
        if u_lengths is not None and grid_side(len(u_lengths)) != self.grid:
            self.grid = grid_side(len(u_lengths))
            fit_view(self.primary_view, mosaic_shape(self.grid))
            self._show_caption()
        image = np.zeros(mosaic_shape(self.grid), np.float32) if u_lengths is None else type_mosaic(u_lengths)
        # Most primary capsules are close to saturation (length near 1): scale the colours
        # from this input's shortest to its longest capsule so the differences show.
        levels = (0.0, 1.0) if u_lengths is None else colour_levels(u_lengths)
        self.primary_maps.setImage(image, autoLevels=False, levels=levels)
        self.primary_bar.setLevels(levels)
        self._ring_selected()

    def set_selected_capsule(self, i: int | None) -> None:
        """Ring primary capsule ``i`` on the length maps (None: none)."""
        self.selected_capsule = i
        self._ring_selected()

    def _ring_selected(self) -> None:
        n = None if self.u_lengths is None else len(self.u_lengths)
        ring_capsule(self.selected_capsule, n, self.selected_cell)

    def _click_primary(self, event) -> None:
        i = None if self.u_lengths is None else clicked_capsule(event, self.primary_view, self.grid)
        if i is not None:
            self.capsuleClicked.emit(i)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Leave and watched is self.primary.viewport():
            self._show_caption()
        return super().eventFilter(watched, event)

    def _show_caption(self) -> None:
        """The maps' own title, for the grid shown (a hover puts a capsule's values there)."""
        self.primary_title.setText(self._primary_caption(self.grid), size="8pt")

    def _hover_primary(self, scene_pos) -> None:
        hit = None if self.u_lengths is None else mosaic_hit(self.primary_view, scene_pos, self.grid)
        if hit is not None:
            text = primary_readout(self.u_lengths, capsule_index(*hit, self.grid), tr)
            self.primary_title.setText(text, size="8pt")

    def set_lengths(self, lengths: np.ndarray | None) -> None:
        """``lengths``: (R, 10) lengths ‖v_j‖ in [0, 1) per routing iteration, or None to clear:
        the bars (the last iteration's) and the curves per iteration."""
        self.set_bars(None if lengths is None else lengths[-1])
        self.set_iterations(lengths)

    def set_bars(self, final: np.ndarray | None) -> None:
        """``final``: (10,) the capsule lengths ‖v_j‖ in [0, 1) after the last routing iteration,
        the model's answers marked; None: empty bars."""
        if final is None:
            self.lengths = np.zeros(10, dtype=np.float32)
            self.bars.setOpts(height=self.lengths, brushes=[BAR] * 10)
            self._place_margin_labels()
            return
        self.lengths = np.array(final, np.float32)
        picked = longest(self.lengths, self.answers)  # the capsules the model names
        self.bars.setOpts(height=self.lengths, brushes=[PREDICTED if k in picked else BAR for k in range(10)])
        self._place_margin_labels()

    def set_iterations(self, lengths: np.ndarray | None) -> None:
        """``lengths``: (R, 10) capsule lengths per routing iteration, one curve per class; None clears."""
        if lengths is None:
            clear_data(*self.iter_curves)
            return
        r = np.arange(1, lengths.shape[0] + 1)
        for k, curve in enumerate(self.iter_curves):
            curve.setData(r, lengths[:, k])
        iteration_axis(self.iter_plot, lengths.shape[0])
        settle(self.iter_plot)
