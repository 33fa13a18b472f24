"""Routing view: coupling coefficients of every routing iteration (Procedure 1)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetricsF, QPainterPath, QTransform
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)

from capsviz import explanations
from capsviz.explorer import Redraws
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import (
    DIGIT_COLOURS,
    VIRIDIS,
    InferenceView,
    SeriesKey,
    VerticalScroll,
    WideEnoughForTexts,
    chosen_digit,
    clear_data,
    clicked_capsule,
    colour_bar,
    column,
    digit_choice,
    digit_lines,
    fit_iterations,
    fit_view,
    graphics_panel,
    image_view,
    iteration_axis,
    iteration_slider,
    level_line,
    marker,
    mosaic_hit,
    name_answer,
    plot,
    readout,
    ring_capsule,
    row,
    selection_ring,
    set_label,
    settle,
)
from capsviz.model.analysis import (
    GAP,
    RF_SIZE,
    UNIFORM_ENTROPY,
    capsule_index,
    capsule_readout,
    cell_readout,
    class_cell,
    class_grid,
    class_grid_shape,
    class_tile_origin,
    colour_levels,
    coupling_path,
    entropy_extent,
    field_side,
    grid_side,
    iteration_maps,
    maps_caption,
    mean_entropy,
    mosaic_shape,
    receptive_overlay,
    routed_mass,
    type_mosaic,
)
from capsviz.model.routing_effect import RoutingEffect, marked_capsules, routing_effect
from capsviz.texts import QT_TR_NOOP


class RoutingFigures(NamedTuple):
    """What the routing view draws from one inference (R iterations, G × G PrimaryCaps grid)."""

    mass: np.ndarray  # (R, 10) routed mass Σ_i ‖u_i‖ c_ij (analysis.routed_mass)
    entropy: np.ndarray  # (R,) mean entropy of c_i, nats
    maps: np.ndarray  # (R, 10, G, G) class maps Σ over types of ‖u_i‖ c_ij
    departures: np.ndarray  # (R, 10, G, G) the same of c_ij − 1/10
    uniform: np.ndarray  # (R,) bool, whether every c_ij of the iteration is 1/10
    effect: RoutingEffect  # what routing did for the input


MARKED = 12  # the decisive capsules mark decisive rings, at most
EFFECT_WIDTH = 150  # pixels: the least width of the column saying what routing does here
ITERATION_MS = 700
AXIS_WIDTH = 48  # pixels for the y tick labels of the mass and entropy plots ("2.3026", "100")
# colour scales of the class maps and the mosaic (the index is what the settings store)
SCALES = (
    QT_TR_NOOP("scale per iteration"),
    QT_TR_NOOP("scale shared by all iterations"),
    QT_TR_NOOP("departure from uniform"),
)
DEPARTURE = 2  # SCALES: departure from uniform
# the mosaic's and the overlay's titles while they show no digit
MOSAIC_TITLE, OVERLAY_TITLE = QT_TR_NOOP("c_ij by capsule type"), QT_TR_NOOP("map over the input")
TITLE, PREDICTED = (200, 200, 200), (250, 180, 40)  # class-map titles; the prediction's as its bar
READOUT_HINT = QT_TR_NOOP("hover over a map to read its values")  # the readout while nothing is read
MAPS_LEAST_WIDTH = 200  # pixels: the class maps' panel, where its title takes more lines
TITLE_POINTS = 8  # the class-map titles' font size (title_texts shortens them over narrow maps)
TITLE_GAP = 6  # pixels kept between neighbouring class-map titles
DIVERGING = pg.colormap.get("CET-D1")  # blue, light grey at the centre (0), red
SMALL_PLOT_HEIGHT = 90  # pixels: title, x axis and a plot area with room for two y tick labels
# the mosaic's least height in pixels per capsule: its 4 rows of G x G tiles stay readable
# beside the curves in a dock a 700-pixel-high window leaves (a tile 20 pixels high for G = 6)
MOSAIC_CELL = 3.3
NAME_PX = 13  # the routed-mass plot's digit names at its two top lines' ends, in pixels
SPACING = 3  # pixels between the panels
PANEL_MARGIN = 6  # pixels around the small panels' titles, so none touches a neighbour or the dock's edge


def glyph(text: str) -> QPainterPath:
    """``text`` as a scatter symbol: its outline scaled into the unit box pyqtgraph draws
    symbols in, centred on 0."""
    path = QPainterPath()
    path.addText(0, 0, QFont("Sans", 10, QFont.Weight.Bold), text)
    box = path.boundingRect()
    scale = 1.0 / max(box.width(), box.height())
    return QTransform().scale(scale, scale).translate(-box.center().x(), -box.center().y()).map(path)


class RoutingView(QWidget, InferenceView):
    """Iteration controls, class maps, per-class mosaic, overlay, and mass/entropy curves.

    Signals
    -------
    iterationsChanged(int) : the number of routing iterations to run at inference (1..7).
    checkRequested() : count, over the test set, the answers one iteration changes (the
        window answers with :meth:`show_check`).

    :attr:`effect` is what routing did for the input shown
    (:func:`~capsviz.model.routing_effect.routing_effect`), stated under the maps; *mark
    decisive* rings those capsules on the mosaic and their receptive fields on the input.
    """

    iterationsChanged = Signal(int)
    checkRequested = Signal()
    capsuleClicked = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setToolTip(tr(explanations.ROUTING))
        # -- controls ------------------------------------------------------------
        self.iteration = iteration_slider(tr("Routing iteration r whose coupling coefficients are shown"))
        self.iteration_label = QLabel("r = 3")
        step = self.iteration.setValue
        self.prev_button = QPushButton("◀", fixedWidth=32, clicked=lambda: step(self.iteration.value() - 1))
        self.next_button = QPushButton("▶", fixedWidth=32, clicked=lambda: step(self.iteration.value() + 1))
        tip = tr("Step through the iterations r = 1…R repeatedly")
        self.play_button = QPushButton(tr("Play"), checkable=True, toolTip=tip)
        self._timer = QTimer(self, interval=ITERATION_MS, timeout=self._advance)
        self.play_button.toggled.connect(lambda on: self._timer.start() if on else self._timer.stop())
        self.play_button.toggled.connect(lambda on: self.play_button.setText(tr("Stop") if on else tr("Play")))
        tip = tr("Routing iterations R run at inference (the model was trained with 3)")
        self.iterations = QSpinBox(minimum=1, maximum=7, value=3, toolTip=tip)
        self.iterations.valueChanged.connect(self.iterationsChanged)
        self.digit = digit_choice(tr("Digit j shown in the mosaic and the overlay (or click a class map)"))
        self.digit.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # "predicted (7)" fits
        self.scale = QComboBox(toolTip=tr(explanations.ROUTING_SCALE))
        self.scale.addItems([tr(s) for s in SCALES])
        self.scale.setCurrentIndex(DEPARTURE)
        stepping = (tr("iteration"), self.prev_button, (self.iteration, 1), self.next_button, self.iteration_label)
        controls = row(*stepping, self.play_button, "R", self.iterations, tr("digit"), self.digit, self.scale)

        # -- maps -------------------------------------------------------------------
        # One image holds the ten 6x6 class maps (two rows of five, each under its title),
        # so they share one aspect-locked view, one colour scale and one repaint.
        # what the maps show (the quantity and iteration, then how to read the colours: two lines,
        # wrapped to more where the panel is narrower)
        self.graphics, self.maps_title = graphics_panel(
            tr("class maps") + "<br>", wrap=MAPS_LEAST_WIDTH, colspan=2, size="8pt"
        )
        self.grid = 6  # side G of the PrimaryCaps grid on screen (6 for MNIST, 10 for MultiMNIST)
        self.map_view, self.class_image = image_view(self.graphics, 1, 0, class_grid_shape(6), VIRIDIS)
        self.titles: list[pg.TextItem] = []
        title_font = QFont()
        title_font.setPointSize(TITLE_POINTS)
        self.title_metrics = QFontMetricsF(title_font)
        for j in range(10):
            title = pg.TextItem(f"{j}", color=TITLE, anchor=(0.5, 1.0))
            title.setFont(title_font)
            self.map_view.addItem(title)
            self.titles.append(title)
        self.map_view.sigResized.connect(lambda *_: self._set_titles())
        self.colorbar = colour_bar(self.graphics, self.class_image, 1, 1)
        self.maps_width = WideEnoughForTexts(self.graphics, [self.graphics])  # its title's least, its scale's
        self._departure_colours = False  # the class maps' and the mosaic's colour map is VIRIDIS

        # narrow margins: in a low dock the mosaic gets the height
        # the title over the mosaic and its colour scale: in a narrow dock it would push the scale out
        self.detail, self.mosaic_title = graphics_panel(tr(MOSAIC_TITLE), (4, 2, 4, 2), colspan=2, size="8pt")
        self.detail.ci.layout.setVerticalSpacing(1)
        self.mosaic_title.item.document().setDocumentMargin(1)
        self.detail.setToolTip(tr(explanations.ROUTING_MOSAIC))
        self.mosaic_view, self.mosaic = image_view(self.detail, 1, 0, mosaic_shape(6), VIRIDIS)
        self.mosaic_bar = colour_bar(self.detail, self.mosaic, 1, 1)
        margins = (PANEL_MARGIN, 2, PANEL_MARGIN, 2)
        self.overlay_panel, self.overlay_title = graphics_panel(tr(OVERLAY_TITLE), margins, size="8pt")
        # wide enough for its longest title and the margins
        self.overlay_title.setText(tr("map of {j} on the input", j=8), size="8pt")
        self.overlay_panel.setMinimumWidth(int(self.overlay_title.item.boundingRect().width()) + 2 * PANEL_MARGIN + 4)
        self.overlay_title.setText(tr(OVERLAY_TITLE), size="8pt")
        self.overlay_view, self.overlay_input = image_view(self.overlay_panel, 1, 0, (28, 28))
        self.overlay = pg.ImageItem(np.zeros((28, 28), dtype=np.float32))
        self.overlay.setColorMap(pg.colormap.get("inferno"))
        self.overlay.setOpacity(0.55)
        self.overlay_view.addItem(self.overlay)
        # the decisive capsules, ringed (mark decisive): on the mosaic, and their fields on the input
        # a white ring over a black one: seen on the near-white tiles of the departure scale
        # and on the dark ones of the others
        edge, ring = pg.mkPen((0, 0, 0), width=4), pg.mkPen((255, 255, 255), width=1.5)
        self.mosaic_marks_edge = pg.ScatterPlotItem(pxMode=False, size=1.0, symbol="s", pen=edge, brush=None)
        self.mosaic_marks = pg.ScatterPlotItem(pxMode=False, size=1.0, symbol="s", pen=ring, brush=None)
        self.mosaic_view.addItem(self.mosaic_marks_edge)
        self.mosaic_view.addItem(self.mosaic_marks)
        field = pg.mkPen((250, 180, 40), width=1)  # thinner: twelve 17-pixel fields overlap on the input
        self.field_marks = pg.ScatterPlotItem(pxMode=False, size=RF_SIZE, symbol="s", pen=field, brush=None)
        self.overlay_view.addItem(self.field_marks)
        # the window's selected primary capsule (selected_capsule): its cell, and its field on the input
        self.selected_capsule: int | None = None
        self.selected_cell = selection_ring(self.mosaic_view, 1.6)
        self.selected_field = selection_ring(self.overlay_view, RF_SIZE)

        tip = tr("Σ_i ‖u_i‖ c_ij: how much of the primary capsules' output each digit receives")
        self.mass_plot = plot(bottom=tr("iteration r"), tip=tip, axis_width=AXIS_WIDTH)
        self.mass_points = pg.ScatterPlotItem(size=6, pen=None)  # R = 1: a point per digit, no line to draw
        # the two digits that receive the most, named at the ends of their lines (glyphs as
        # symbols of one scatter item: a TextItem asks for another paint after each update)
        self.mass_names = pg.ScatterPlotItem(size=NAME_PX, pen=None)
        self._glyphs = [glyph(str(k)) for k in range(10)]
        # each digit's colour: its line, its point (R = 1) and its name at the line's end; the
        # small plots: a smaller title fits
        self.mass_key, self.mass_curves = digit_lines(
            self.mass_plot, tr("routed mass per digit"), "8pt", self.mass_points, self.mass_names
        )
        self.mass_marker = marker()
        for item in (self.mass_marker, self.mass_points, self.mass_names):
            self.mass_plot.addItem(item)
        tip = tr(explanations.ROUTING_ENTROPY)
        self.entropy_plot = plot(
            tr("mean entropy of c_i"), size="8pt", bottom=tr("iteration r"), tip=tip, axis_width=AXIS_WIDTH
        )
        SeriesKey(self.entropy_plot)  # one series, no key: its title row as high as the title, not 30 px
        self.entropy_curve = self.entropy_plot.plot(
            pen=pg.mkPen("w", width=1.5), symbol="o", symbolSize=5, dynamicRangeLimit=None
        )  # nats in [0, ln 10]: see digit_lines
        for small in (self.mass_plot, self.entropy_plot):
            small.getPlotItem().layout.setContentsMargins(2, 2, PANEL_MARGIN, 2)
            # wide enough for the title over the plot area, tall enough for three tick labels
            title = small.getPlotItem().titleLabel.item.boundingRect().width()
            small.setMinimumSize(int(AXIS_WIDTH + title + 2 * PANEL_MARGIN), SMALL_PLOT_HEIGHT)
        # Entropy never exceeds ln 10, so above the 'uniform' line there is no data: the label
        # sits there, at the right end, and the y range leaves room for it (see _entropy_range).
        self.uniform_line = level_line(UNIFORM_ENTROPY, tr("uniform"), (150, 150, 150))
        self.entropy_plot.addItem(self.uniform_line)
        self._entropy_y: tuple[float, float] | None = None
        self.entropy_plot.getViewBox().sigResized.connect(lambda *_: self._entropy_range())

        # the value under the mouse, at the top of the right-hand column
        self.readout = readout(tr(READOUT_HINT), styleSheet="font-size: 8pt; color: #505050;")
        # the mosaic's panel keeps the height its tiles need to be read, also in a low dock
        self.detail.setMinimumHeight(self.mosaic_min_height(6))
        grid = QGridLayout()
        grid.setSpacing(SPACING)
        # beside the class maps (under them in a narrow dock): the selected digit's mosaic
        # and overlay, under them the curves
        grid.addWidget(self.graphics, 0, 0, 2, 1)
        grid.addLayout(row((self.detail, 3), (self.overlay_panel, 1), spacing=SPACING), 0, 1)
        grid.addLayout(row((self.mass_plot, 1), (self.entropy_plot, 1), spacing=SPACING), 1, 1)
        grid.setColumnStretch(0, 6)
        grid.setColumnStretch(1, 5)
        # what routing does here: the figures of the input shown, and of the test set
        top_left = Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft
        self.effect_label = readout(
            toolTip=tr(explanations.ROUTING_EFFECT), styleSheet="font-size: 8pt;", alignment=top_left
        )
        # the readout and these lines wrapped to the column, scrolled where a low dock leaves
        # them less height
        texts = QWidget()
        column(self.readout, (self.effect_label, 1), spacing=2 * SPACING, margins=(0, 0, 0, 0), parent=texts)
        effect = VerticalScroll(texts, EFFECT_WIDTH)
        tip = tr(explanations.MARK_DECISIVE, k=MARKED)
        self.mark_button = QPushButton(tr("mark decisive"), checkable=True, toolTip=tip)
        tip = tr("How often one routing iteration (the even split) answers other than R")
        self.check_button = QPushButton(tr("count on the test set"), toolTip=tip)
        self.check_button.clicked.connect(self.checkRequested)
        # a column at the right, beside the mosaic and the curves
        grid.addLayout(column((effect, 1), self.mark_button, self.check_button, spacing=SPACING), 0, 2, 2, 1)
        grid.setColumnStretch(2, 0)
        self._analysed = None  # (inference, answers, figures): what analysis last derived
        self.answers = 1  # the answers the model gives: 1 digit, or 2 overlapping digits
        self.check_text = ""  # the test-set sentence (show_check)
        column(controls, (grid, 1), spacing=SPACING, margins=(2, 2, 2, 2), parent=self)
        names = ("routing_class_maps", "routing_mosaic", "routed_mass", "routing_entropy", "routing_overlay")
        plots = (self.graphics, self.detail, self.mass_plot, self.entropy_plot, self.overlay_panel)
        self.figures = dict(zip(names, plots))  # its plots, by the file name an export gives them

        # the three parts a change redraws: drawn at once, or in a scheduler's turns once registered
        self._lay_out_grid(6)
        self.redraws = Redraws(
            "routing", {"maps": self._draw_maps, "detail": self._draw_detail, "curves": self._draw_curves}
        )
        self.shown: np.ndarray | None = None  # (10, G, G) class maps Σ ‖u_i‖ c_ij of the iteration on screen
        for signal in (self.iteration.valueChanged, self.digit.currentIndexChanged, self.scale.currentIndexChanged):
            signal.connect(self._redraw)
        self.mark_button.toggled.connect(self._redraw)
        self.graphics.scene().sigMouseMoved.connect(self._hover_maps)
        self.detail.scene().sigMouseMoved.connect(self._hover_mosaic)
        self.detail.scene().sigMouseClicked.connect(self._click_mosaic)
        self.graphics.scene().sigMouseClicked.connect(self._click_maps)

    def mosaic_min_height(self, grid: int) -> int:
        """Least height of the mosaic's panel: its title and MOSAIC_CELL pixels per capsule row."""
        _, top, _, bottom = self.detail.ci.layout.getContentsMargins()
        title = self.mosaic_title.itemRect().height() + self.detail.ci.layout.verticalSpacing()
        return int(np.ceil(top + title + MOSAIC_CELL * mosaic_shape(grid)[0] + bottom))

    # -- data -------------------------------------------------------------------------
    def _lay_out_grid(self, grid: int) -> None:
        """Fit the class maps' titles and the views' ranges to a G x G PrimaryCaps grid."""
        self.grid = grid
        fit_view(self.map_view, class_grid_shape(grid), padding=0.02)
        for j, title in enumerate(self.titles):
            y0, x0 = class_tile_origin(j, grid)
            title.setPos(x0 + grid / 2, y0 - 0.1)
        fit_view(self.mosaic_view, mosaic_shape(grid))
        fit_view(self.overlay_view, (field_side(grid),) * 2)

    def show_inference(self, inference) -> None:
        """Show an :class:`~capsviz.model.inference.Inference` (or clear with None): its
        derived maps now, the plots through :attr:`redraws`."""
        if inference is not None:
            fit_iterations(self.iteration, inference.iterations)
            grid = grid_side(len(inference.u_lengths))
            if grid != self.grid:
                self._lay_out_grid(grid)
            name_answer(self.digit, tr("predicted"), inference.prediction)
        else:
            self.shown = None
            name_answer(self.digit, tr("predicted"), None)
        super().show_inference(inference)

    @property
    def analysis(self) -> RoutingFigures | None:
        """What the parts draw from the inference shown (None without one). Derived when
        first asked for after the inference came, in a turn of the redraw scheduler, not
        when the result arrives: the length bars are drawn first, and under a stream of
        inputs the results the view's turn never comes to are not analysed."""
        inf = self.inference
        if inf is None:
            return None
        if self._analysed is None or self._analysed[0] is not inf or self._analysed[1] != self.answers:
            figures = RoutingFigures(
                routed_mass(inf.u_lengths, inf.c),
                mean_entropy(inf.c),
                *iteration_maps(inf.u_lengths, inf.c),
                routing_effect(inf.u_lengths, inf.c, inf.lengths, self.answers),
            )
            self._analysed = (inf, self.answers, figures)
        return self._analysed[2]

    @property
    def mass(self) -> np.ndarray | None:
        """(R, 10) the routed mass Σ_i ‖u_i‖ c_ij per iteration, or None without an input."""
        return None if self.analysis is None else self.analysis.mass

    @property
    def entropy(self) -> np.ndarray | None:
        """(R,) the mean entropy of c_i per iteration in nats, or None without an input."""
        return None if self.analysis is None else self.analysis.entropy

    @property
    def effect(self):
        """The :class:`~capsviz.model.routing_effect.RoutingEffect` of the input shown, or None."""
        return None if self.analysis is None else self.analysis.effect

    def selected_digit(self) -> int | None:
        return None if self.inference is None else chosen_digit(self.digit, self.inference.prediction)

    def _advance(self) -> None:
        r = self.iteration.value()
        self.iteration.setValue(1 if r >= self.iteration.maximum() else r + 1)

    def departure(self) -> bool:
        """Whether the maps show their departure from uniform routing (c_ij − 1/10)."""
        return self.scale.currentIndex() == DEPARTURE

    def _levels(self, current: np.ndarray, every: np.ndarray) -> tuple[float, float]:
        """Colour levels: from ``current`` (this iteration) or ``every`` (all iterations); for
        departures symmetric about 0 over all iterations, so 0 is the centre colour."""
        departure = self.departure()
        return colour_levels(every if departure or self.scale.currentIndex() == 1 else current, symmetric=departure)

    def _blank_levels(self) -> tuple[float, float]:
        """The colour levels of maps of zeros: 0 at the bottom of VIRIDIS, at the white centre of
        DIVERGING (a departure of 0 from uniform is none)."""
        return (-1.0, 1.0) if self.departure() else (0.0, 1.0)

    def _use_colours(self) -> None:
        """The class maps and the mosaic in VIRIDIS, or for departures in DIVERGING."""
        departure = self.departure()
        if departure != self._departure_colours:
            self._departure_colours = departure
            cmap = DIVERGING if departure else VIRIDIS
            self.colorbar.setColorMap(cmap)
            self.mosaic_bar.setColorMap(cmap)

    def maps_caption(self) -> str:
        """The class maps' title: what they show at the iteration on screen, and how to read it."""
        r = None if self.inference is None else self.iteration.value() - 1
        uniform = r is not None and bool(self.analysis.uniform[r])
        return maps_caption(r, self.departure(), uniform, self.scale.currentIndex() == 1, tr)

    def _redraw(self) -> None:
        self.redraws.request()

    def _draw_maps(self) -> None:
        inf = self.inference
        self._use_colours()
        set_label(self.maps_title, self.maps_caption(), size="8pt")
        if inf is None:  # no input: blank maps, in the colour of nothing (a departure of 0 is white)
            g = self.grid
            levels = self._blank_levels()
            self.class_image.setImage(class_grid(np.zeros((10, g, g), np.float32)), autoLevels=False, levels=levels)
            self.colorbar.setLevels(levels)
            self._set_titles()
            self.iteration_label.setText("r = –")
            return
        r = self.iteration.value() - 1
        self.iteration_label.setText(tr("r = {r} of {n}", r=r + 1, n=inf.iterations))
        analysis = self.analysis
        self.shown = analysis.maps[r]
        every = analysis.departures if self.departure() else analysis.maps
        maps = every[r]
        levels = self._levels(maps, every)
        self.class_image.setImage(class_grid(maps), autoLevels=False, levels=levels)
        self._set_titles()
        self.colorbar.setLevels(levels)

    def title_decimals(self) -> int | None:
        """Decimals of the routed mass in the class maps' titles: 1, or 0, the most with which
        every title "j: mass" of every iteration fits over a map as wide as the view shows
        one, TITLE_GAP pixels kept to the next (one form for all iterations, so playing them
        does not switch it); None: the digit alone fits, or there is no inference."""
        if self.inference is None or self.mass is None:
            return None
        pixel = self.map_view.viewPixelSize()[0]  # map cells per screen pixel
        room = (self.grid + GAP) / pixel - TITLE_GAP if pixel > 0 else 0.0
        for decimals in (1, 0):
            widest = max(
                self.title_metrics.horizontalAdvance(f"{j}: {m:.{decimals}f}") for j, m in enumerate(self.mass.max(0))
            )
            if widest <= room:
                return decimals
        return None

    def title_texts(self) -> list[str]:
        """The class maps' titles: "j: mass", Σ_i ‖u_i‖ c_ij at the iteration shown with
        :meth:`title_decimals` decimals, or "j" alone."""
        decimals = self.title_decimals()
        if decimals is None:
            return [f"{j}" for j in range(10)]
        mass = self.mass[self.iteration.value() - 1]
        return [f"{j}: {m:.{decimals}f}" for j, m in enumerate(mass)]

    def _set_titles(self) -> None:
        """The class maps' titles (:meth:`title_texts`), the prediction's in the bar chart's colour."""
        predicted = None if self.inference is None else self.inference.prediction
        for j, (title, text) in enumerate(zip(self.titles, self.title_texts())):
            set_label(title, text, color=PREDICTED if j == predicted else TITLE)

    def effect_text(self) -> str:
        """What routing did for the input shown (:attr:`effect`), then over the test set, as lines."""
        lines = [
            tr("<b>what routing does here</b>"),
            *(self.effect.lines(tr) if self.effect is not None else [tr("no input")]),
        ]
        text = "<br>".join(lines + ([self.check_text] if self.check_text else []))
        return text.replace("r = ", "r\u00a0=\u00a0")  # the narrow column wraps lines, never inside "r = 3"

    def show_check(self, text: str) -> None:
        """The test-set sentence: how often r = 1 answers other than R (or the count's progress)."""
        self.check_text = text
        self.effect_label.setText(self.effect_text())

    def _draw_detail(self) -> None:
        inf = self.inference
        self.effect_label.setText(self.effect_text())
        marked = self.effect.decisive[:MARKED] if inf is not None and self.mark_button.isChecked() else []
        mosaic, field = marked_capsules(marked, len(inf.u_lengths)) if len(marked) else ([], [])
        self.mosaic_marks_edge.setData(pos=mosaic)
        self.mosaic_marks.setData(pos=mosaic)
        self.field_marks.setData(pos=field)
        self._ring_selected()
        if inf is None:
            self.readout.setText(tr(READOUT_HINT))  # a capsule's values were of the input gone
            side = field_side(self.grid)
            self._use_colours()
            levels = self._blank_levels()
            self.mosaic.setImage(np.zeros(mosaic_shape(self.grid), np.float32), autoLevels=False, levels=levels)
            self.mosaic_bar.setLevels(levels)
            set_label(self.mosaic_title, tr(MOSAIC_TITLE), size="8pt")
            set_label(self.overlay_title, tr(OVERLAY_TITLE), size="8pt")
            self.overlay_input.setImage(np.zeros((side, side), np.float32), autoLevels=False, levels=(0, 1))
            self.overlay.setImage(np.zeros((side, side), np.float32), autoLevels=False, levels=(0, 1))
            return
        self._use_colours()
        r = self.iteration.value() - 1
        j = self.selected_digit()
        c = inf.c[:, :, j]  # (R, I)
        shift, minus = (1.0 / inf.c.shape[-1], " − 0.1") if self.departure() else (0.0, "")
        mosaic = type_mosaic(c[r] - shift)
        mlevels = self._levels(c[r] - shift, c - shift)
        self.mosaic.setImage(mosaic, autoLevels=False, levels=mlevels)
        self.mosaic_bar.setLevels(mlevels)
        # short enough for a narrow dock; the tooltip tells the tiles' order (4 × 8 types of G × G)
        title = tr("c_i{j}{minus} of {n:,} capsules, r = {r}", j=j, minus=minus, n=len(c[r]), r=r + 1)
        set_label(self.mosaic_title, title, size="8pt")
        self.overlay_input.setImage(inf.input, autoLevels=False, levels=(0, 1))
        spread = receptive_overlay(self.analysis.maps[r][j])
        self.overlay.setImage(spread, autoLevels=False, levels=(float(spread.min()), float(spread.max()) + 1e-9))
        set_label(self.overlay_title, tr("map of {j} on the input", j=j), size="8pt")

    def _draw_curves(self) -> None:
        inf = self.inference
        if inf is None:
            clear_data(*self.mass_curves, self.mass_points, self.mass_names, self.entropy_curve)
            return
        r = self.iteration.value() - 1
        rr = np.arange(1, inf.iterations + 1)
        for k, curve in enumerate(self.mass_curves):
            curve.setData(rr, self.mass[:, k])
        last = self.mass[-1]
        if inf.iterations == 1:  # every digit receives the same: a point each, one scale around them
            self.mass_points.setData(x=np.ones(10), y=last, brush=[DIGIT_COLOURS[k] for k in range(10)])
            middle = float(last.mean())
            self.mass_plot.setYRange(0.99 * middle, 1.01 * middle, padding=0)
            clear_data(self.mass_names)
        else:
            if len(self.mass_points.data):
                clear_data(self.mass_points)
                self.mass_plot.enableAutoRange(axis="y")  # the lines' range again
            top = np.argsort(-last, kind="stable")[:2]
            rise = 0.07 * max(float(np.ptp(self.mass)), 1e-9)  # the names sit over the lines' ends
            y = last[top] + rise
            view = self.mass_plot.getViewBox()
            apart = (NAME_PX + 1) * view.viewPixelSize()[1] if view.height() > 0 else 0.0  # a name's height
            if y[0] - y[1] < apart:  # ends this close: the second name under its line, clear of the first
                y[1] = min(last[top[1]] - rise, y[0] - apart)
            glyphs, colours = [self._glyphs[k] for k in top], [DIGIT_COLOURS[int(k)] for k in top]
            self.mass_names.setData(x=np.full(2, inf.iterations - 0.1), y=y, symbol=glyphs, brush=colours)
        self.mass_marker.setValue(r + 1)
        # never above ln 10 but for float32 rounding, which a flat curve's scale would show
        self.entropy_curve.setData(rr, np.minimum(self.entropy.astype(np.float64), UNIFORM_ENTROPY))
        self._entropy_range()
        for small in (self.mass_plot, self.entropy_plot):
            iteration_axis(small, inf.iterations)
            settle(small)

    def _entropy_range(self) -> None:
        """y range of the entropy plot: the curve, and above ln 10 room for the 'uniform' label
        (its height in pixels, at the plot's present height). A plot too low for the label
        over half its height shows the dashed line alone (the plot's tooltip says what it is)."""
        if self.entropy is None:
            return
        view_px = self.entropy_plot.getViewBox().height()
        label_px = self.uniform_line.label.boundingRect().height() + 2
        share = label_px / view_px if view_px > 0 else 0.5  # of the height, for the label
        label, fits = self.uniform_line.label, share <= 0.5
        if label.isVisible() != fits:  # pyqtgraph sets its text again whenever it is shown
            label.setVisible(fits)
        y = entropy_extent(self.entropy, share if fits else 0.05)  # for a hidden label only a margin
        if y != self._entropy_y:
            self._entropy_y = y
            self.entropy_plot.setYRange(*y, padding=0)

    # -- hover and click -------------------------------------------------------------------
    def _map_cell(self, scene_pos) -> tuple[int, int, int] | None:
        return mosaic_hit(self.map_view, scene_pos, self.grid, class_cell)

    def class_map_scene_pos(self, j: int, y: int, x: int):
        """Scene position of the centre of cell (y, x) of digit j's map (for tests and tools)."""
        y0, x0 = class_tile_origin(j, self.grid)
        return self.map_view.mapViewToScene(QPointF(x0 + x + 0.5, y0 + y + 0.5))

    def _hover_maps(self, scene_pos) -> None:
        cell = self._map_cell(scene_pos)
        if cell is not None and self.inference is not None:
            self.readout.setText(self.describe_cell(*cell))

    def _click_maps(self, event) -> None:
        cell = self._map_cell(event.scenePos())
        if cell is not None:
            self.digit.setCurrentIndex(cell[0] + 1)

    def _click_mosaic(self, event) -> None:
        i = None if self.inference is None else clicked_capsule(event, self.mosaic_view, self.grid)
        if i is not None:
            self.capsuleClicked.emit(i)

    def set_selected_capsule(self, i: int | None) -> None:
        """Ring primary capsule ``i`` (None: none) on the mosaic and its receptive field on the
        input, and read its values out (the window's selection, :class:`CapsuleSelection`)."""
        self.selected_capsule = i
        if not self._ring_selected():
            self.readout.setText(tr(READOUT_HINT))

    def _ring_selected(self) -> bool:
        inf, i = self.inference, self.selected_capsule
        n = None if inf is None else len(inf.u_lengths)
        if not ring_capsule(i, n, self.selected_cell, self.selected_field):
            return False
        j = self.selected_digit()
        text = capsule_readout(inf, i, j, self.iteration.value() - 1, tr)
        self.readout.setText(f"{text}<br>{coupling_path(inf, i, j, tr)}")  # the selected one: its routing too
        return True

    def _hover_mosaic(self, scene_pos) -> None:
        hit = None if self.inference is None else mosaic_hit(self.mosaic_view, scene_pos, self.grid)
        if hit is not None:
            self.readout.setText(self.describe_capsule(*hit))

    def describe_cell(self, j: int, y: int, x: int) -> str:
        """Readout for class map j at grid cell (y, x)."""
        analysis = self.analysis
        return cell_readout(analysis.maps, analysis.departures, j, y, x, self.iteration.value() - 1, tr)

    def describe_capsule(self, t: int, y: int, x: int) -> str:
        """Readout for primary capsule (type t, y, x) and the selected digit j."""
        i = capsule_index(t, y, x, self.grid)
        return capsule_readout(self.inference, i, self.selected_digit(), self.iteration.value() - 1, tr)
