"""Votes view: the predictions u_hat_{j|i} that routing-by-agreement weighs, in 2-D."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QSizePolicy, QWidget

from capsviz import explanations
from capsviz.explorer import Redraws
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import (
    VIRIDIS,
    FlowRow,
    ImagePanel,
    InferenceView,
    KeyEntry,
    SeriesKey,
    WideEnoughForTexts,
    chosen_digit,
    clear_data,
    column,
    digit_choice,
    fit_iterations,
    iteration_slider,
    name_answer,
    plot,
    readout,
    row,
    selection_ring,
    set_label,
    sparse_ticks,
)
from capsviz.model.analysis import (
    chosen_fields,
    colour_steps,
    coupling_scale,
    fields_image,
    in_rectangle,
    projected_votes,
    vote_extent,
    vote_readout,
    widest_vote_readout,
)
from capsviz.model.inference import longest
from capsviz.texts import QT_TR_NOOP

LEVELS = 64  # colour steps for c_ij: few distinct brushes keep the scatter quick to restyle
SIZES = np.array([2.0, 3.0, 4.5, 6.0, 8.0])  # dot diameters in pixels, by the length of u_i
HINT = QT_TR_NOOP("hover over a vote to read it, click it to select its capsule")  # the readout while no vote is read
PATH, CURRENT = (255, 90, 60), (255, 255, 255)
FIELDS_LEAST = (92, 88)  # px: the least height of a panel's receptive-field image, with one panel and with two


class VotePanel(QWidget):
    """One digit capsule's votes: a digit choice, the scatter with v_j's path, and the input
    with the receptive fields of the votes inside the rectangle."""

    def __init__(self, default: str, rank: int, parent=None) -> None:
        super().__init__(parent)
        self.rank = rank  # the default digit: the rank-th longest capsule
        self.digit = digit_choice(tr("The digit capsule j whose votes are shown"), default)
        self.digit.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        # a title row, its text following the digit and iteration; its labelled ticks kept apart
        # (two panels in a low dock leave the plot a few text lines high); drag and scroll to far votes
        axes = {"bottom": tr("first axis of the votes"), "left": tr("second axis")}
        self.plot = plot(tr("votes"), size="9pt", **axes, mouse=True)
        self.plot.setAspectLocked(True)
        # its height from the panel's share of the view, not from its hint: a plot's hint is its
        # present size (pyqtgraph keeps its scene's rectangle at it), so of two panels one over
        # the other the one once taller would stay taller (117 against 246 px in another language)
        policy = self.plot.sizePolicy()
        policy.setVerticalPolicy(QSizePolicy.Policy.Ignored)
        self.plot.setSizePolicy(policy)
        self.plot.setMenuEnabled(False)
        for axis in ("bottom", "left"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        self.scatter = pg.ScatterPlotItem(pen=None, hoverable=True, tip=None)
        self.path = pg.PlotDataItem(pen=pg.mkPen(PATH, width=2), symbol="o", symbolSize=6, symbolBrush=PATH)
        self.current = pg.ScatterPlotItem(symbol="+", size=18, pen=pg.mkPen(CURRENT, width=2), brush=None)
        self.box = pg.RectROI((0, 0), (1, 1), pen=pg.mkPen((240, 240, 240), width=1, style=Qt.PenStyle.DashLine))
        for item in (self.scatter, self.path, self.current, self.box):
            self.plot.addItem(item)
        self.selected_ring = selection_ring(self.plot, 16, px=True)  # the window's selected capsule's vote
        dots = tuple(VIRIDIS.map(t, mode="qcolor") for t in (0.1, 0.5, 1.0))
        votes = KeyEntry(tr("votes û_j|i"), (self.scatter,), dots, "dot")
        path = KeyEntry(tr("v_j by iteration"), (self.path,), (PATH,), "line+dot")
        self.key = SeriesKey(self.plot, [votes, path, KeyEntry(tr("v_j at r"), (self.current,), (CURRENT,), "cross")])
        self.colorbar = pg.ColorBarItem(values=(0, 1), colorMap=VIRIDIS, interactive=False, width=10, label="c_ij")
        self.colorbar.setImageItem(pg.ImageItem())  # a scale for the dots' colours, no image of its own
        self.plot.getPlotItem().layout.addItem(self.colorbar, 2, 5)
        self.colorbar.axis.setWidth(None)  # as wide as its labels and its name (c_ij): beside the dots, not over them
        sparse_ticks(self.colorbar.axis)
        # two lines: the count and where, so the title fits the narrow panel
        self.fields = ImagePanel(tr("votes<br>in the rectangle"), least=(120, FIELDS_LEAST[0]))
        self.fields.setToolTip(tr(explanations.VOTE_FIELDS))
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(3)
        # the digit choice over the fields, so the scatter takes the panel's whole height
        grid.addWidget(self.plot, 0, 0, 2, 1)
        choice = QWidget()  # the choice under its name where the column is narrower than both
        FlowRow(tr("capsule"), self.digit, parent=choice)
        grid.addWidget(choice, 0, 1)
        grid.addWidget(self.fields, 1, 1)
        grid.setRowStretch(1, 1)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 1)
        self.j: int | None = None
        self.points: np.ndarray | None = None  # (I, 2) the votes projected
        self.centres: np.ndarray | None = None  # (R, 2) v_j's path projected
        self.drawn = None  # the Inference these votes are of
        self.selected = np.zeros(0, bool)  # (I,) votes inside the rectangle
        self.widened = False  # the view widened to take in the selected capsule's far vote


class VotesView(QWidget, InferenceView):
    """The votes u_hat_{j|i} of every primary capsule for one digit capsule (two, one over the
    other, with ``panels=2``: the overlapping-digits window's two longest), per routing iteration.

    :meth:`show_inference` takes an :class:`~capsviz.model.inference.Inference` with its
    votes (``u_hat``); the projection (:func:`~capsviz.model.analysis.vote_projection`) is
    computed once per input and digit, a new iteration only restyles the dots and moves the
    marker. Signals: ``hovered(str)`` with the readout of the vote under the mouse.
    """

    hovered = Signal(str)
    capsuleClicked = Signal(int)

    def __init__(self, panels: int = 1, parent=None) -> None:
        super().__init__(parent)
        self.setToolTip(tr(explanations.VOTES))
        self.iteration = iteration_slider(tr("Routing iteration r whose couplings colour the votes"))
        self.iteration_label = QLabel("r = 3")
        controls = row(tr("iteration"), (self.iteration, 1), self.iteration_label)
        # two panels, one over the other, for a model that gives two answers (set_answers)
        self.all_panels = [VotePanel(tr("predicted"), k) for k in range(2)]
        # each scatter as wide as the keys and colour scales of both need: one over the other, equally wide
        plots = [panel.plot for panel in self.all_panels]
        for panel in self.all_panels:
            panel.width_for_texts = WideEnoughForTexts(panel.plot, plots)
        self.panels = self.all_panels[:1]  # the panels shown
        self.readout = readout(tr(HINT))
        self.readout.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        # close rows: two panels one over the other fit the dock of a 640-pixel-high window
        stack = column(*((panel, 1) for panel in self.all_panels), spacing=3)
        column(controls, (stack, 1), self.readout, spacing=3, margins=(2, 2, 2, 2), parent=self)
        self._brushes = [pg.mkBrush(VIRIDIS.map(k / (LEVELS - 1), mode="qcolor")) for k in range(LEVELS)]
        self.redraws = Redraws("votes", {"votes": self._draw})
        self.selected_capsule: int | None = None  # the window's selected primary capsule, its votes ringed
        self._projected: dict[int, tuple] = {}  # digit j -> (mean, axes, points, centres) for this input
        self._stale = False  # an inference came while the view was hidden
        self.iteration.valueChanged.connect(self.show_iteration)
        self.set_answers(panels)
        self._show_panels()
        for panel in self.all_panels:
            panel.digit.currentIndexChanged.connect(lambda _=0, p=panel: self._draw_panel(p))
            panel.scatter.sigHovered.connect(lambda _item, points, ev, p=panel: self._hover(p, points, ev))
            # clicks from the scene: the rectangle over the votes, and the ring, take their own
            panel.plot.scene().sigMouseClicked.connect(lambda event, p=panel: self._click(p, event))
            panel.box.sigRegionChanged.connect(lambda _roi, p=panel: self._show_fields(p))

    def resizeEvent(self, event) -> None:
        """Keep room for the longest readout at this width, so that reading a vote does not
        shrink the plots under the mouse (and move the dot it points at)."""
        super().resizeEvent(event)
        self._reserve_readout()

    def _reserve_readout(self) -> None:
        width = max(self.readout.width(), 1)
        flags = int(Qt.TextFlag.TextWordWrap)
        texts = (widest_vote_readout(tr), tr(HINT))
        metrics = self.readout.fontMetrics()
        needed = max(metrics.boundingRect(0, 0, width, 10_000, flags, t).height() for t in texts)
        # at most two lines: the window's least size is set by the plots
        self.readout.setMinimumHeight(min(needed, 2 * metrics.lineSpacing()) + 2)

    def set_answers(self, answers: int) -> None:
        """Show the votes for the longest capsule (1: "predicted"), or for the two longest one
        over the other (2: a pair model's two answers). Off screen, the panels change when the
        view is shown (a panel shown or hidden lays out the docks around it again)."""
        self.panels = self.all_panels[:answers]
        for panel in self.all_panels:  # two panels and two lines of readout in a 640-pixel-high window
            panel.fields.setMinimumHeight(FIELDS_LEAST[answers - 1])
        self.figures = {f"votes_{k}": panel.plot for k, panel in enumerate(self.panels)}  # by file name
        self._name_answers()
        self._reserve_readout()
        if self.on_screen():
            self._show_panels()
        self.redraws.request()

    def _equal_choices(self) -> None:
        """The digit choices of the panels shown as wide as the widest needs: the scatters beside
        them equally wide, one over the other."""
        width = max(panel.digit.sizeHint().width() for panel in self.panels)
        for panel in self.panels:
            panel.digit.setMinimumWidth(width)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:  # the choices' texts in another language
            self._equal_choices()

    def _show_panels(self) -> None:
        for panel in self.all_panels:
            panel.setVisible(panel in self.panels)

    def show_inference(self, inference) -> None:
        self._projected = {}  # the projections of another input
        super().show_inference(inference)
        self._name_answers()

    def _name_answers(self) -> None:
        """Each panel's first choice named after the answer it stands for, with its digit."""
        names = (tr("predicted"),) if len(self.panels) == 1 else (tr("longest"), tr("second longest"))
        inf = self.inference
        digits = [None] * len(names) if inf is None else longest(inf.lengths[-1], len(names))
        for panel, name, digit in zip(self.panels, names, digits, strict=True):
            name_answer(panel.digit, name, digit)
        self._equal_choices()

    def digit_of(self, panel: VotePanel) -> int | None:
        """The digit capsule ``panel`` shows: its choice, else the rank-th longest capsule."""
        inf = self.inference
        if inf is None:
            return None
        return chosen_digit(panel.digit, longest(inf.lengths[-1], panel.rank + 1)[panel.rank])

    def projection(self, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(mean (16,), axes (2, 16), points (I, 2), centres (R, 2)) of digit j's votes, for this input."""
        if j not in self._projected:
            self._projected[j] = projected_votes(self.inference.u_hat[:, j, :], self.inference.c[:, :, j])
        return self._projected[j]

    def on_screen(self) -> bool:
        """Whether the view can be seen (a dock tabbed behind another cannot, though Qt calls it visible)."""
        return self.isVisible() and not self.visibleRegion().isEmpty()

    def refresh(self) -> None:
        """Draw what came while the view was off screen (the window calls this when its dock
        comes to the front)."""
        self._show_panels()
        if self._stale:
            self._stale = False
            self._render()

    def _draw(self) -> None:
        # off screen (a tab behind another) the view draws nothing until it is shown
        self._stale = not self.on_screen()
        if not self._stale:
            self._render()

    def _render(self) -> None:
        inf = self.inference
        if inf is not None:
            fit_iterations(self.iteration, inf.iterations)
        for panel in self.panels:
            self._draw_panel(panel)

    def _draw_panel(self, panel: VotePanel) -> None:
        inf = self.inference
        self.readout.setText(tr(HINT))  # a vote read was of the input or digit before
        j = self.digit_of(panel)
        if inf is None or inf.u_hat is None or j is None:
            panel.j, panel.points, panel.centres, panel.drawn = None, None, None, None
            clear_data(panel.scatter, panel.path, panel.current, panel.selected_ring)
            panel.fields.set_image(None)
            panel.fields.set_title(tr("votes<br>in the rectangle"))
            set_label(panel.plot.getPlotItem().titleLabel, tr("votes"), size="9pt")
            panel.box.setVisible(False)
            return
        _, _, points, centres = self.projection(j)
        panel.j, panel.points, panel.centres, panel.drawn = j, points, centres, inf
        size = np.searchsorted(np.linspace(0, 1, len(SIZES) + 1)[1:-1], inf.u_lengths)
        r = self.iteration.value() - 1
        panel.scatter.setData(
            pos=points, size=SIZES[size], data=np.arange(len(points)), brush=self._colours(j, r), pen=None
        )
        panel.path.setData(centres[:, 0], centres[:, 1])
        spread = points.std(axis=0)
        panel.box.setVisible(True)
        with QSignalBlocker(panel.box):
            panel.box.setPos(centres[-1] - spread / 2)
            panel.box.setSize(spread)
        # the view holds the bulk of the votes and v_j's path; a few far votes may lie outside
        # (drag or scroll the plot to reach them)
        self._show_bulk(panel)
        self._ring_selected(panel)
        self._read_selected()
        self._style(panel, brushes=False)
        self._show_fields(panel)

    def show_iteration(self) -> None:
        """Restyle every panel for the iteration on the slider (colours and the v_j marker only).
        A panel that holds another input's votes (a pair's 3,200 after the pair mode, while the
        view was off screen) is left to the redraw of the new input, at this r."""
        for panel in self.panels:
            if panel.drawn is self.inference:
                self._style(panel)
        self._read_selected()

    def colour_scale(self, j: int) -> tuple[float, float]:
        """The dots' colour scale for digit j: one for all iterations of this input
        (:func:`~capsviz.model.analysis.coupling_scale` of its couplings)."""
        return coupling_scale(self.inference.c[:, :, j])

    def _colours(self, j: int, r: int) -> list:
        """One brush per vote: c_ij at iteration r on :meth:`colour_scale`, in LEVELS steps."""
        steps = colour_steps(self.inference.c[r, :, j], *self.colour_scale(j), LEVELS)
        return [self._brushes[k] for k in steps]

    def _style(self, panel: VotePanel, brushes: bool = True) -> None:
        inf = self.inference
        r = self.iteration.value() - 1
        self.iteration_label.setText("r = –" if inf is None else tr("r = {r} of {n}", r=r + 1, n=inf.iterations))
        if panel.j is None:
            return
        if brushes:
            panel.scatter.setBrush(self._colours(panel.j, r))
        panel.current.setData([panel.centres[r, 0]], [panel.centres[r, 1]])
        panel.colorbar.setLevels(self.colour_scale(panel.j))
        title = tr("votes for digit {j}, iteration {r}", j=panel.j, r=r + 1)
        set_label(panel.plot.getPlotItem().titleLabel, title, size="9pt")

    def describe(self, j: int, i: int) -> str:
        """Readout for the vote of primary capsule i for digit j at the iteration shown."""
        return vote_readout(self.inference, i, j, self.iteration.value() - 1, tr)

    @staticmethod
    def _nearest(points, at) -> int:
        """The capsule of the dot among ``points`` (the scatter's, under the mouse) nearest ``at``
        (the mouse in the plot's coordinates): where dots overlap, the click and the hover
        readout name the same one."""
        nearest = min(points, key=lambda p: (p.pos().x() - at.x()) ** 2 + (p.pos().y() - at.y()) ** 2)
        return int(nearest.data())

    def _click(self, panel: VotePanel, event) -> None:
        """A single left click on a vote of ``panel``: its capsule (:meth:`_nearest`)."""
        if event.button() != Qt.MouseButton.LeftButton or event.double() or panel.points is None:
            return
        at = panel.scatter.mapFromScene(event.scenePos())
        points = panel.scatter.pointsAt(at)
        if len(points):
            self.capsuleClicked.emit(self._nearest(points, at))

    def set_selected_capsule(self, i: int | None) -> None:
        """Ring the vote of primary capsule ``i`` in each panel (None: none), and read it out."""
        self.selected_capsule = i
        for panel in self.panels:
            self._ring_selected(panel)
        if not self._read_selected():
            self.readout.setText(tr(HINT))

    def _read_selected(self) -> bool:
        """The selected capsule's vote in the first panel, read out; False where there is none."""
        i, panel = self.selected_capsule, self.panels[0]
        if i is None or panel.drawn is not self.inference or panel.points is None or i >= len(panel.points):
            return False
        self.readout.setText(self.describe(panel.j, i))
        return True

    @staticmethod
    def _show_bulk(panel: VotePanel) -> None:
        """Range ``panel``'s view over the bulk of its votes and v_j's path (a few far votes
        may lie outside: drag or scroll the plot to reach them)."""
        low, high = vote_extent(panel.points, panel.centres)
        panel.plot.setRange(xRange=(low[0], high[0]), yRange=(low[1], high[1]))
        panel.widened = False

    def _ring_selected(self, panel: VotePanel) -> None:
        """Ring the selected capsule's vote in ``panel``; a vote outside the view (the view holds
        the bulk of the votes) widens it to take the vote in."""
        i = self.selected_capsule
        if i is None or panel.points is None or i >= len(panel.points):
            clear_data(panel.selected_ring)
            if panel.widened and panel.points is not None:  # let go: the bulk of the votes again
                self._show_bulk(panel)
            panel.widened = False
            return
        x, y = panel.points[i]
        panel.selected_ring.setData(pos=panel.points[i : i + 1])
        (x0, x1), (y0, y1) = panel.plot.getViewBox().viewRange()
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
            dx, dy = 0.08 * (x1 - x0), 0.08 * (y1 - y0)  # the ring whole inside the axes
            panel.plot.setRange(xRange=(x0 - dx, x1 + dx), yRange=(y0 - dy, y1 + dy), padding=0)
            panel.widened = True

    def _hover(self, panel: VotePanel, points, event) -> None:
        if len(points) and panel.j is not None and not event.isExit():
            text = self.describe(panel.j, self._nearest(points, event.pos()))
            self.readout.setText(text)
            self.hovered.emit(text)

    def selected(self, panel: VotePanel) -> np.ndarray:
        """(I,) bool: the votes inside ``panel``'s rectangle."""
        if panel.points is None:
            return np.zeros(0, bool)
        return in_rectangle(panel.points, panel.box.pos(), panel.box.size())

    def fields_map(self, panel: VotePanel) -> np.ndarray | None:
        """(H, H): Σ ‖u_i‖ over the capsules whose votes are in the rectangle, spread over the
        input pixels each sees (:func:`~capsviz.model.analysis.receptive_overlay`)."""
        if self.inference is None or panel.points is None:
            return None
        return chosen_fields(self.inference.u_lengths, self.selected(panel))

    def _show_fields(self, panel: VotePanel) -> None:
        spread = self.fields_map(panel)
        panel.selected = self.selected(panel)
        if spread is None:
            panel.fields.set_image(None)
            return
        panel.fields.set_image(fields_image(self.inference.input, spread))
        panel.fields.set_title(tr("{k} votes<br>in the rectangle", k=int(panel.selected.sum())))
