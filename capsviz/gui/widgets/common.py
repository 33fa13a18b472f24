"""Shared pieces of the views: rows and columns of widgets, plots and their lines, sliders, a
titled image panel, colour maps and the key under a plot's title."""

from __future__ import annotations

import html
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QSignalBlocker, QSize, Qt, Signal
from PySide6.QtGui import QFontMetricsF, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QScrollArea,
    QSlider,
    QStackedWidget,
    QStatusBar,
    QStyle,
    QVBoxLayout,
    QWidget,
)
from superqt import QFlowLayout, QLabeledDoubleSlider

from capsviz.gui import i18n
from capsviz.gui.i18n import tr
from capsviz.model.analysis import capsule_index, mosaic_capsule, rounded_extent, tick_spacing
from capsviz.model.routing_effect import marked_capsules

VIRIDIS = pg.colormap.get("viridis")
# one colour per digit j, for the plots with a line per digit; not fully saturated, so that
# the blues stand out from the black background as well as the other hues
DIGIT_COLOURS = [pg.intColor(k, 10, sat=170) for k in range(10)]


def _fill(layout, items, spacing: int | None, margins: tuple[int, int, int, int] | None):
    if spacing is not None:
        layout.setSpacing(spacing)
    if margins is not None:
        layout.setContentsMargins(*margins)
    for item in items:
        item, stretch = item if isinstance(item, tuple) else (item, 0)
        if isinstance(item, int):
            layout.addStretch(item)
        elif isinstance(item, str):
            layout.addWidget(QLabel(item), stretch)
        elif isinstance(item, QLayout):
            layout.addLayout(item, stretch)
        else:
            layout.addWidget(item, stretch)
    return layout


def row(*items, spacing: int | None = None, margins=None, parent=None) -> QHBoxLayout:
    """A horizontal box of ``items``, left to right (see :func:`column`)."""
    return _fill(QHBoxLayout(parent) if parent is not None else QHBoxLayout(), items, spacing, margins)


def column(*items, spacing: int | None = None, margins=None, parent=None) -> QVBoxLayout:
    """A vertical box of ``items``, top to bottom (the layout of ``parent``, when given): each a
    widget, a layout, a text (a QLabel of it), a number (a stretch of that factor), or (widget or
    layout, stretch factor)."""
    return _fill(QVBoxLayout(parent) if parent is not None else QVBoxLayout(), items, spacing, margins)


def readout(text: str = "", **options) -> QLabel:
    """A label for figures the user may copy: word-wrapped, its text selectable with the mouse
    (``options``: more of the QLabel's properties, such as ``toolTip``)."""
    return QLabel(text, wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse, **options)


class FlowRow(QFlowLayout):
    """``widgets`` (each a widget, or a text: a QLabel of it) left to right in one row where
    the width allows, else wrapped into as many rows as they need (superqt's flow layout).
    Each widget takes its size hint; the row's least width is the widest hint, its size hint
    all of them in one row, so a dock given its hint shows one row."""

    def __init__(self, *widgets: QWidget | str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setContentsMargins(0, 0, 0, 0)
        self.setHorizontalSpacing(6)  # the box layouts' spacing beside it
        for widget in widgets:
            self.addWidget(QLabel(widget) if isinstance(widget, str) else widget)

    def minimumSize(self) -> QSize:
        # the flow layout places each widget at its size hint: the widest hint, not the widest least size
        size = QSize()
        for k in range(self.count()):
            size = size.expandedTo(self.itemAt(k).sizeHint())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def sizeHint(self) -> QSize:
        hints = [self.itemAt(k).sizeHint() for k in range(self.count())]
        width = sum(h.width() for h in hints) + self.horizontalSpacing() * max(len(hints) - 1, 0)
        width += 1  # the flow layout keeps a row only where it ends left of the last pixel (QRect.right())
        margins = self.contentsMargins()
        height = max((h.height() for h in hints), default=0)
        return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom())


class VerticalScroll(QScrollArea):
    """``widget`` filling an area at least ``width`` pixels wide (its scroll bar included; None:
    the widget's least width and the scroll bar), scrolled up and down where the area is lower
    than the widget. Its size hint asks for the widget's whole height (QScrollArea caps its
    hint at 24 lines of text, which cuts a longer form short even where there is room)."""

    def __init__(self, widget, width: int | None = None, parent=None) -> None:
        super().__init__(parent, widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(widget)
        scrollbar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        self.setMinimumWidth(widget.minimumSizeHint().width() + scrollbar if width is None else width)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        margins = self.contentsMargins()
        hint.setHeight(self.widget().sizeHint().height() + margins.top() + margins.bottom())
        return hint

    def eventFilter(self, watched, event) -> bool:
        # the widget laid out anew (other texts, another language): the layout around the
        # area asks for its hint again, which its own layout does not pass on
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(watched, event)


class CurrentPage(QStackedWidget):
    """A stack of pages as small as the page shown needs (a plain stack needs its largest
    page's size whichever is shown)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.currentChanged.connect(lambda _: self.updateGeometry())

    def minimumSizeHint(self) -> QSize:
        page = self.currentWidget()
        return super().minimumSizeHint() if page is None else page.minimumSizeHint()


class WideEnoughForTexts(QObject):
    """Keeps ``widget`` at least as wide as the pyqtgraph ``views`` in it need for their texts:
    the least width of each view's scene (its titles, keys, axes and colour bars, as
    pyqtgraph lays them out side by side), plus ``extra`` pixels (the margins around the
    views), and never under ``least`` pixels; it sets the widget's minimum width. A dock
    beside a wider panel then takes its width from the other docks instead of cutting titles
    short. Follows the texts as they change (a key added, another language): each change of
    a scene's layout sets the width again.
    """

    def __init__(self, widget: QWidget, views: list[pg.GraphicsView], extra: int = 0, least: int = 0) -> None:
        super().__init__(widget)
        self.widget, self.views, self.extra, self.least = widget, list(views), extra, least
        for view in self.views:
            view.centralWidget.installEventFilter(self)
        self.fit()

    def needed(self) -> int:
        """Pixels: the widest of the views' least scene widths plus ``extra``, or ``least``."""
        widths = (view.centralWidget.effectiveSizeHint(Qt.SizeHint.MinimumSize).width() for view in self.views)
        return max(math.ceil(max(widths)) + self.extra, self.least)

    def fit(self) -> None:
        """Set the widget's minimum width to :meth:`needed` where it differs."""
        width = self.needed()
        if width != self.widget.minimumWidth():
            self.widget.setMinimumWidth(width)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.fit()
        return False


def chosen_digit(choice: QComboBox, default: int | None) -> int | None:
    """The digit capsule a :func:`digit_choice` names: its digit, or ``default`` for its first item."""
    data = choice.currentData()
    return default if data == -1 else int(data)


def digit_choice(tip: str, default: str | None = None) -> QComboBox:
    """A choice of digit capsule: ``default`` (item data -1; "predicted" unless given), then
    "digit 0" … "digit 9" (data 0..9)."""
    choice = QComboBox(toolTip=tip)
    choice.addItem(tr("predicted") if default is None else default, -1)
    for k in range(10):
        choice.addItem(tr("digit {k}", k=k), k)
    return choice


def name_answer(choice: QComboBox, name: str, digit: int | None) -> None:
    """Name the first item of a :func:`digit_choice` ``name`` (such as "predicted"), with the
    digit it stands for now in brackets ("predicted (7)"), or ``name`` alone without one."""
    choice.setItemText(0, name if digit is None else tr("{name} ({k})", name=name, k=digit))


def off_the_tab_chain(view: pg.GraphicsView) -> pg.GraphicsView:
    """``view``, taken off the Tab key's chain (pyqtgraph gives every view the keyboard focus,
    and capsviz's views take no keys): a click still gives it the focus. Returns ``view``."""
    view.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
    return view


def plot(
    title: str | None = None,
    *,
    size: str | None = None,
    bottom: str = "",
    left: str = "",
    tip: str = "",
    axis_width: int | None = None,
    sparse: bool = True,
    mouse: bool = False,
    y_range: tuple[float, float] | None = None,
) -> pg.PlotWidget:
    """A plot: ``title`` (of font ``size``), ``bottom`` and ``left`` axis labels, tooltip ``tip``;
    the mouse pans and zooms only with ``mouse``. ``axis_width`` fixes the left axis's width in
    pixels: tick labels of another width would lay the plot out again on every update (and
    plots stacked with the same width line up). ``sparse``: its labelled ticks kept apart
    (:func:`sparse_ticks`). ``y_range`` (low, high): a fixed y range, with a 2 % margin."""
    widget = off_the_tab_chain(pg.PlotWidget())
    if y_range is not None:
        widget.setYRange(*y_range, padding=0.02)
    if title is not None:
        widget.setTitle(title, **({} if size is None else {"size": size}))
    else:  # no title row above: room for half a tick label, so the top one is not cut in half
        axis = widget.getAxis("left")
        half = math.ceil(QFontMetricsF(axis.style["tickFont"] or axis.font()).height() / 2)
        left_m, _, right_m, bottom_m = widget.getPlotItem().layout.getContentsMargins()
        widget.getPlotItem().layout.setContentsMargins(left_m, half, right_m, bottom_m)
    for axis, text in (("bottom", bottom), ("left", left)):
        if text:
            widget.setLabel(axis, text)
    if tip:
        widget.setToolTip(tip)
    widget.setMouseEnabled(mouse, mouse)
    if axis_width is not None:
        widget.getAxis("left").setWidth(axis_width)
    if sparse:
        sparse_ticks(widget.getAxis("left"))
    return widget


def marker(angle: int = 90) -> pg.InfiniteLine:
    """A dotted grey line across a plot (vertical by default) that marks the value shown."""
    return pg.InfiniteLine(angle=angle, pen=pg.mkPen((200, 200, 200), style=Qt.PenStyle.DotLine))


LEVEL_LINE_Z = 20  # level lines and their names in front of bars and curves (z 0)


def level_line(y: float, text: str, colour, anchor: tuple[float, float] = (1, 1)) -> pg.InfiniteLine:
    """A dashed horizontal line at ``y`` in ``colour``, named ``text`` at its right end; the
    name's ``anchor`` (1, 1) puts it over the line, (1, 0) under it, never clipped by the
    plot's right edge. Line and name stand in front of the plot's other items, the name in a
    lighter shade on a dark ground of its own (legible over a bar that reaches the line)."""
    line = pg.InfiniteLine(
        pos=y,
        angle=0,
        label=text,
        pen=pg.mkPen(colour, style=Qt.PenStyle.DashLine),
        labelOpts={
            "position": 1.0,
            "color": pg.mkColor(colour).lighter(150),
            "anchors": [anchor, anchor],
            "fill": (0, 0, 0, 200),
        },
    )
    line.setZValue(LEVEL_LINE_Z)
    return line


def clear_data(*items) -> None:
    """Empty each of the plot data ``items`` (curves, scatters)."""
    for item in items:
        item.setData([], [])


def iteration_axis(plot: pg.PlotWidget, iterations: int) -> None:
    """Range ``plot``'s x axis over the routing iterations r = 1..``iterations``, a labelled
    tick at each; set again only when R changes (each new range lays the plot out again)."""
    if getattr(plot, "_capsviz_iterations", None) != iterations:
        plot._capsviz_iterations = iterations
        plot.setXRange(0.8, iterations + 0.2, padding=0)
        plot.getAxis("bottom").setTicks([[(k, str(k)) for k in range(1, iterations + 1)]])


class WrappedLabel(pg.LabelItem):
    """A title whose lines wrap, centred, to the width its layout gives it: its least width is
    ``least`` pixels (or its text's, if narrower), not its text's, so a narrow panel shows the
    title whole on more lines instead of cutting it (a line breaks between words, or between
    CJK characters). Its preferred width is its text's on the lines its ``<br>`` make."""

    def __init__(self, text: str = " ", least: int = 0, **opts) -> None:
        self.least = least
        self.natural = 0.0  # the text's width unwrapped
        super().__init__(text, **opts)
        option = self.item.document().defaultTextOption()
        option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.item.document().setDefaultTextOption(option)

    def setText(self, text, **args) -> None:
        self.item.setTextWidth(-1)  # unwrapped first, for its natural width; resizeEvent wraps it
        super().setText(text, **args)

    def resizeEvent(self, ev) -> None:
        width = self.size().width()
        self.item.setTextWidth(width if 0 < width < self.natural else -1)
        super().resizeEvent(ev)

    def updateMin(self) -> None:
        bounds = self.itemRect()
        if self.item.textWidth() < 0:
            self.natural = bounds.width()
        least = min(self.least, self.natural)
        self.setMinimumWidth(least)
        self.setMinimumHeight(bounds.height())
        self._sizeHint = {
            Qt.SizeHint.MinimumSize: (least, bounds.height()),
            Qt.SizeHint.PreferredSize: (self.natural, bounds.height()),
            Qt.SizeHint.MaximumSize: (-1, -1),
            Qt.SizeHint.MinimumDescent: (0, 0),
        }
        self.updateGeometry()


def graphics_panel(
    title: str = "", margins: tuple[int, int, int, int] | None = None, wrap: int | None = None, **label
) -> tuple[pg.GraphicsLayoutWidget, pg.LabelItem]:
    """A black graphics layout with contents ``margins`` (left, top, right, bottom; pyqtgraph's
    default unless given) and ``title`` in its first row (``label``: the options of
    ``addLabel``, such as ``size`` and ``colspan``): (layout, title). With ``wrap``, the
    title is a :class:`WrappedLabel` at least ``wrap`` pixels wide."""
    panel = off_the_tab_chain(pg.GraphicsLayoutWidget())
    panel.setBackground("k")
    if margins is not None:
        panel.ci.setContentsMargins(*margins)
    if wrap is None:
        return panel, panel.addLabel(title, row=0, col=0, **label)
    span = {key: label.pop(key) for key in ("rowspan", "colspan") if key in label}
    title_item = WrappedLabel(title, wrap, **label)
    panel.addItem(title_item, row=0, col=0, **span)
    return panel, title_item


class SliderKeys(QObject):
    """The keys of a slider for a superqt float slider, as an event filter on it: an arrow
    moves it by its single step (Right and Up add), Page Up and Page Down by its page step,
    Home and End to its ends. superqt's float slider leaves them to QSlider, whose integer
    value it does not read, so without this the keys move nothing."""

    def eventFilter(self, slider, event) -> bool:
        if event.type() != QEvent.Type.KeyPress:
            return False
        key, single, page = event.key(), slider.singleStep(), slider.pageStep()
        moves = {
            Qt.Key.Key_Right: single,
            Qt.Key.Key_Up: single,
            Qt.Key.Key_Left: -single,
            Qt.Key.Key_Down: -single,
            Qt.Key.Key_PageUp: page,
            Qt.Key.Key_PageDown: -page,
        }
        if key == Qt.Key.Key_Home:
            slider.setValue(slider.minimum())
        elif key == Qt.Key.Key_End:
            slider.setValue(slider.maximum())
        elif key in moves:
            slider.setValue(slider.value() + moves[key])  # the slider bounds it to its range
        else:
            return False
        return True


def offset_slider(
    low: float, high: float, value: float, decimals: int, step: float, tip: str = ""
) -> QLabeledDoubleSlider:
    """A horizontal slider over ``low``..``high`` at ``value``, its value shown beside it with
    ``decimals``, moved by ``step`` an arrow key and by ten steps a Page key (Home and End:
    its ends); one Tab stop, its slider (the value box takes a click); tooltip ``tip``."""
    slider = QLabeledDoubleSlider(Qt.Orientation.Horizontal)
    slider.setRange(low, high)
    slider.setDecimals(decimals)
    slider.setSingleStep(step)
    slider.setPageStep(10 * step)
    slider.setValue(value)
    inner = slider._slider
    inner.installEventFilter(keys := SliderKeys(slider))
    slider.keys = keys  # kept with the slider
    slider.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # focus goes to the slider inside
    slider.setFocusProxy(inner)
    if tip:
        slider.setToolTip(tip)
    return slider


@contextmanager
def laid_out_at(widget: QWidget, size: QSize):
    """``widget`` at ``size`` while the block runs, its children laid out at once, on screen or
    not (Qt holds a hidden widget's resize events until it shows, and a plot lays its scene
    out in its own); given its own size back after."""
    shown = widget.size()
    if size == shown:
        yield
        return
    _lay_out(widget, size)
    try:
        yield
    finally:
        _lay_out(widget, shown)


def _lay_out(widget: QWidget, size: QSize) -> None:
    widget.resize(size)
    if widget.isVisible():
        return  # the resize events came with it
    if widget.layout() is not None:
        widget.layout().activate()
    for child in (widget, *widget.findChildren(QWidget)):
        QApplication.sendEvent(child, QResizeEvent(child.size(), child.size()))


def image_view(
    layout: pg.GraphicsLayoutWidget, row: int, col: int, shape, colormap: pg.ColorMap | None = None
) -> tuple[pg.ViewBox, pg.ImageItem]:
    """A fixed-aspect view without mouse or menu at (``row``, ``col``) of ``layout``, row 0 at
    the top, showing an all-zero image of ``shape`` (H, W): (view, image)."""
    view = layout.addViewBox(row=row, col=col, lockAspect=True, enableMouse=False, invertY=True)
    view.setMenuEnabled(False)
    item = pg.ImageItem(np.zeros(shape, dtype=np.float32))
    if colormap is not None:
        item.setColorMap(colormap)
    view.addItem(item)
    fit_view(view, shape)
    return view, item


def fit_view(view: pg.ViewBox, shape, padding: float = 0.0) -> None:
    """Range ``view`` over an image of ``shape`` (H, W, ...), with a margin of ``padding`` (a share)."""
    view.setRange(xRange=(0, shape[1]), yRange=(0, shape[0]), padding=padding)


def colour_bar(layout: pg.GraphicsLayoutWidget, image: pg.ImageItem, row: int, col: int) -> pg.ColorBarItem:
    """The colour scale of ``image`` (VIRIDIS from 0 to 1 until set), at (``row``, ``col``) of ``layout``."""
    bar = pg.ColorBarItem(values=(0, 1), colorMap=VIRIDIS, interactive=False, width=10)
    bar.setImageItem(image)
    bar.axis.setWidth(None)  # as wide as its labels (pyqtgraph fixes 45 px): the map beside it gets the rest
    sparse_ticks(bar.axis)
    layout.addItem(bar, row=row, col=col)
    return bar


def mosaic_hit(view: pg.ViewBox, scene_pos, grid: int = 6, cell=mosaic_capsule) -> tuple[int, int, int] | None:
    """``cell(row, column, grid)`` of the image pixel under ``scene_pos`` in ``view`` (None off
    the view): by default (type, y, x) of the primary capsule there in a
    :func:`~capsviz.model.analysis.type_mosaic` of a ``grid`` x ``grid`` PrimaryCaps grid, or
    None on a gap line; with :func:`~capsviz.model.analysis.class_cell`, (j, y, x) in the class maps."""
    if not view.sceneBoundingRect().contains(scene_pos):
        return None
    p = view.mapSceneToView(scene_pos)
    return cell(int(np.floor(p.y())), int(np.floor(p.x())), grid)


def set_quietly(control, value) -> None:
    """``control.setValue(value)`` without its change signal (the caller updates the views)."""
    with QSignalBlocker(control):
        control.setValue(value)


def iteration_slider(tip: str) -> QSlider:
    """A horizontal slider over the routing iterations r = 1..3 (at the last), one step a key
    press, ticks below; :func:`fit_iterations` sets its range to an inference's R."""
    ticks = QSlider.TickPosition.TicksBelow
    return QSlider(
        Qt.Orientation.Horizontal, minimum=1, maximum=3, value=3, pageStep=1, tickPosition=ticks, toolTip=tip
    )


def fit_iterations(slider: QSlider, iterations: int) -> None:
    """Range ``slider`` over 1..``iterations`` without emitting: it keeps its iteration when R
    is the same as before, else moves to the last. The sliders it shares r with
    (:func:`share_iteration`) take that r too, as far as their range goes, also without
    emitting: a view behind a tab fits its own slider only when shown, and R may have changed
    and come back meanwhile."""
    keep = slider.value() if slider.maximum() == iterations else iterations
    with QSignalBlocker(slider):
        slider.setRange(1, iterations)
        slider.setValue(min(keep, iterations))
    for other in getattr(slider, "shares_r_with", ()):
        with QSignalBlocker(other):
            other.setValue(min(slider.value(), other.maximum()))


def _share(controls, changed: str, set_value: str) -> None:
    """Make ``controls`` one selection: each one's ``changed`` signal sets its value (by its
    method ``set_value``) in the others; setting the value a control has emits nothing, so
    the chain stops there."""
    for control in controls:
        others = [other for other in controls if other is not control]
        getattr(control, changed).connect(
            lambda value, others=others: [getattr(other, set_value)(value) for other in others]
        )


def share_iteration(*sliders: QSlider) -> None:
    """Make ``sliders`` one selection of the routing iteration r: moving one moves the others
    (each view keeps its own slider beside its plots; the window has one r, as napari's Dims
    give every layer one position)."""
    for slider in sliders:
        slider.shares_r_with = [other for other in sliders if other is not slider]
    _share(sliders, "valueChanged", "setValue")


def share_digit(*choices: QComboBox) -> None:
    """Make ``choices`` (each a :func:`digit_choice`) one selection of the digit capsule j:
    choosing one chooses it in the others, the default (the prediction, or a pair's longest
    capsule) too. Each view keeps its own choice beside its plots; the window has one j."""
    _share(choices, "currentIndexChanged", "setCurrentIndex")


SELECTED = (60, 220, 255)  # the selected primary capsule's rings in every view (the decisive ones': white, orange)


class CapsuleSelection(QObject):
    """The window's selected primary capsule (design §7: one selection per window), as
    napari's layer selection: ``index`` is None or i in 0..I-1. A view that shows primary
    capsules rings it and emits the capsule clicked on; :meth:`toggle` selects it, or clears
    the selection when it is selected already. ``changed(object)``: the new index or None."""

    changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.index: int | None = None

    def set(self, index: int | None) -> None:
        if index != self.index:
            self.index = index
            self.changed.emit(index)

    def toggle(self, index: int) -> None:
        self.set(None if index == self.index else index)


def selection_ring(view: pg.ViewBox | pg.PlotWidget, size: float, px: bool = False) -> pg.ScatterPlotItem:
    """A ring for the selected primary capsule in ``view``: a square ``size`` data units across
    (a mosaic cell, a receptive field), or with ``px`` a circle ``size`` pixels across (a
    vote); empty until given a position."""
    ring = pg.ScatterPlotItem(
        pxMode=px, size=size, symbol="o" if px else "s", pen=pg.mkPen(SELECTED, width=2), brush=None
    )
    ring.setZValue(10)  # over the decisive marks
    view.addItem(ring)
    return ring


def clicked_capsule(event, view: pg.ViewBox, grid: int) -> int | None:
    """The primary capsule i that a single left click ``event`` (a pyqtgraph scene click)
    lands on in ``view``, which shows a :func:`~capsviz.model.analysis.type_mosaic` of a
    ``grid`` x ``grid`` PrimaryCaps grid; None off its cells, for another button, or for the
    second click of a double-click (which would let go what the first selected)."""
    if event.button() != Qt.MouseButton.LeftButton or event.double():
        return None
    hit = mosaic_hit(view, event.scenePos(), grid)
    return None if hit is None else capsule_index(*hit, grid)


def ring_capsule(i: int | None, n_primary: int | None, cell: pg.ScatterPlotItem, field=None) -> bool:
    """Put ``cell`` (a :func:`selection_ring`) on primary capsule i's cell of a type mosaic of
    ``n_primary`` capsules, and ``field``, where given, on the input pixels it sees; take
    them off for i None or not one of the n_primary (None: no capsules shown). Returns
    whether they are on."""
    rings = [ring for ring in (cell, field) if ring is not None]
    if i is None or n_primary is None or i >= n_primary:
        clear_data(*rings)
        return False
    for ring, pos in zip((cell, field), marked_capsules(np.array([i]), n_primary)):
        if ring is not None:
            ring.setData(pos=pos)
    return True


def sparse_ticks(axis: pg.AxisItem, gap: float = 1.6) -> pg.AxisItem:
    """Keep the labelled ticks of a vertical ``axis`` at least ``gap`` label heights apart;
    returns ``axis``.

    pyqtgraph spaces the major ticks by the axis length alone (at least 2.25 intervals)
    and labels every one, so on an axis a few text lines tall the labels run into each
    other. Where its major spacing is closer than ``gap`` label heights, the axis uses the
    next 1-2-5 step that is not; only the major ticks are labelled. Works on any
    AxisItem, also the one inside a ColorBarItem.
    """
    default = axis.tickSpacing

    def spacing(minVal: float, maxVal: float, size: float):
        levels = default(minVal, maxVal, size)
        span = abs(maxVal - minVal)
        if not levels or size <= 0 or span == 0:
            return levels
        font = axis.style["tickFont"] or axis.font()
        least = gap * QFontMetricsF(font).height() * span / size  # data units between labels
        return levels if levels[0][0] >= least else [(step, 0) for step in tick_spacing(least)]

    axis.tickSpacing = spacing
    axis.setStyle(maxTextLevel=0)
    return axis


def capsule_bars(title: str, colour) -> tuple[pg.PlotWidget, pg.BarGraphItem]:
    """A fixed plot of the ten digit-capsule lengths, 0..1 (ticks 0-9, no mouse), and its
    bars, all ``colour`` until they are set: (plot, bars)."""
    widget = plot(title)
    widget.setYRange(0, 1, padding=0)
    widget.setXRange(-0.6, 9.6, padding=0)
    widget.getAxis("bottom").setTicks([[(k, str(k)) for k in range(10)]])
    bars = pg.BarGraphItem(x=np.arange(10), height=np.zeros(10), width=0.7, brushes=[colour] * 10)
    widget.addItem(bars)
    return widget, bars


class ImagePanel(pg.GraphicsLayoutWidget):
    """A titled, fixed-aspect view of one (H, W) float array (row-major, row 0 at the top),
    at least ``least`` (width, height) pixels, and never narrower than its title. Its size
    hint is its least size: panels side by side share the room by their stretch factors."""

    def __init__(
        self,
        title: str = "",
        shape: tuple[int, int] = (28, 28),
        levels=(0.0, 1.0),
        colormap: pg.ColorMap | None = None,
        least: tuple[int, int] = (0, 0),
        parent=None,
    ) -> None:
        super().__init__(parent)
        off_the_tab_chain(self)
        self.setBackground("k")
        self.ci.setContentsMargins(2, 2, 2, 2)
        self.title = self.addLabel(title, row=0, col=0, size="9pt")
        self.setMinimumHeight(least[1])
        self.width_for_title = WideEnoughForTexts(self, [self], least=least[0])
        self.view, self.item = image_view(self, 1, 0, shape, colormap)
        self.levels = levels
        self.item.setLevels(levels)
        self.image = np.zeros(shape, dtype=np.float32)

    def sizeHint(self) -> QSize:
        # QGraphicsView's hint is its scene's rectangle, which pyqtgraph keeps at the view's
        # present size: panels side by side would keep whatever widths they once had
        return self.minimumSize().expandedTo(self.minimumSizeHint())

    def figure_size(self) -> QSize:
        """The size an export draws the panel at: its width, and the height its title and its
        image (at the image's aspect) take, without the black bands a slot taller than that
        leaves on screen (a pair's panels, 107 x 211 px at the window's first size); never
        under the panel's least height, which Qt keeps."""
        view = self.view.geometry()
        if view.width() <= 0:
            return self.size()
        image = view.width() * self.image.shape[0] / self.image.shape[1]
        height = min(self.height(), math.ceil(self.height() - view.height() + image))
        return QSize(self.width(), max(height, self.minimumHeight()))

    def set_image(self, image: np.ndarray | None, levels=None) -> None:
        """Show ``image`` ((H, W) or (H, W, 3) RGB; an all-black field for None) with fixed
        ``levels`` (default: the panel's). An image of another size than the last re-ranges the view."""
        if image is None:
            image = np.zeros_like(self.image)
        image = np.asarray(image, dtype=np.float32)
        if image.shape[:2] != self.image.shape[:2]:
            fit_view(self.view, image.shape)
        self.image = image
        self.item.setImage(self.image, autoLevels=False, levels=levels or self.levels)

    def set_title(self, text: str) -> None:
        self.title.setText(text, size="9pt")


def set_label(label: pg.LabelItem | pg.TextItem, text: str, **opts) -> None:
    """``label.setText(text, **opts)`` unless the last call through here set the same: every
    setText lays out and repaints its graphics layout again, even for the same text.
    (Labels updated this way must not be set by other means.)"""
    shown = (text, opts)
    if getattr(label, "_capsviz_shown", None) != shown:
        label.setText(text, **opts)
        label._capsviz_shown = shown


def settle(view: pg.GraphicsView) -> None:
    """Apply ``view``'s pending auto-range and view-transform changes now, after its data
    changed, instead of at the start of its next paint (``GraphicsScene.prepareForPaint``
    does what a paint would do first). A change made during a paint asks for another
    paint, so a plot whose range follows its data is painted two to four times per
    update unless it is settled beforehand; settled, it is painted once. A hidden view is
    left to its next paint, as pyqtgraph would."""
    if view.isVisible():
        view.scene().prepareForPaint()


def set_y_extent(
    plot: pg.PlotWidget, low: float, high: float, step: float, limits: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float, float]:
    """Show ``plot``'s y axis from ``low`` to ``high`` (data units) rounded out to
    multiples of ``step`` and kept within ``limits`` (:func:`~capsviz.model.analysis.rounded_extent`);
    returns the range shown.

    Auto-ranging follows every update, and each new range lays the axis out and
    paints the plot again; a range that changes only when the data crosses a step
    is set again only then. Turns y auto-ranging off."""
    shown = rounded_extent(low, high, step, limits)
    if getattr(plot, "_capsviz_y_extent", None) != shown:
        plot.setYRange(*shown, padding=0.02)
        plot._capsviz_y_extent = shown
    return shown


# what a key draws before a series' name, in the series' colour
SAMPLES = {
    "bar": "■",
    "line": "━━",
    "dash": "╍╍",
    "dot": "●",
    "cross": "✚",
    "line+dot": "━●━",
}
KEY_SIZE = "8pt"


@dataclass(frozen=True)
class KeyEntry:
    """One series of a plot named in its :class:`SeriesKey`: ``name`` after a sample (a
    :data:`SAMPLES` kind, or "text" for the name alone in the colour) in each of ``colours``;
    ``items`` are the plot's data items the entry names. The name is shown in the app's
    language: made again from what it was made of (:func:`~capsviz.gui.i18n.origin`, read
    when the entry is made)."""

    name: str
    items: tuple
    colours: tuple
    sample: str = "line"
    made_of: tuple = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "made_of", i18n.origin(self.name))

    def html(self) -> str:
        def colour(c) -> str:
            return pg.mkColor(c).name()

        name = html.escape(i18n.composed(self.made_of))
        if self.sample == "text":
            return f"<span style='color: {colour(self.colours[0])};'>{name}</span>"
        marks = "".join(f"<span style='color: {colour(c)};'>{SAMPLES[self.sample]}</span>" for c in self.colours)
        return f"{marks}&nbsp;{name}"


class SeriesKey(pg.LabelItem):
    """A plot's title with a key under it: one line naming each series beside a sample in
    its colour (:class:`KeyEntry`). It takes the place of the plot's title label, so the
    plot's ``setTitle`` sets the first line; the title row takes the height of both lines.
    ``lead`` starts the key's line ("digit j:"); ``sep`` goes between the entries. The key is
    composed in the app's language each time the title is set, and a language switch
    (:func:`~capsviz.gui.i18n.retranslate`) sets the title again."""

    def __init__(
        self, plot: pg.PlotWidget | pg.PlotItem, entries=(), lead: str = "", sep: str = "&nbsp;&nbsp;&nbsp;"
    ) -> None:
        self.entries: list[KeyEntry] = list(entries)
        self.lead, self.sep = lead, sep
        words = lead.removesuffix("&nbsp;")  # the lead's words, a text tr() gave, and its space
        self.lead_words = (i18n.origin(words), lead[len(words) :])
        item = plot.getPlotItem() if isinstance(plot, pg.PlotWidget) else plot
        old = item.titleLabel
        super().__init__("", parent=item, **old.opts)
        self.item.document().setDocumentMargin(1)  # two lines in about the room of one title with margins
        item.layout.removeItem(old)
        old.setParentItem(None)
        if old.scene() is not None:
            old.scene().removeItem(old)
        item.layout.addItem(self, 0, 1)
        item.titleLabel = self
        self.plot_item = item
        self.setText(old.text)  # the plot's title so far

    def setText(self, text, **args) -> None:
        self.title = text
        entries = getattr(self, "entries", [])
        line = getattr(self, "sep", "").join(e.html() for e in entries)
        if line:
            words, space = self.lead_words
            lead = i18n.composed(words) + space  # in the app's language
            line = f"<span style='font-size: {KEY_SIZE};'>{lead}{line}</span>"
        full = "<br>".join(t for t in (text, line) if t)
        super().setText(full, **args)
        if line:
            i18n.made_from(full, text)
        plot = getattr(self, "plot_item", None)
        if plot is not None:  # the row holds both lines (PlotItem.setTitle fixes it at 30 px)
            height = math.ceil(self.itemRect().height()) if full else 0
            self.setVisible(bool(full))
            self.setMaximumHeight(height)
            plot.layout.setRowFixedHeight(0, height)

    def set_entries(self, entries) -> None:
        """Name these :class:`KeyEntry` series (none: the title alone)."""
        entries = list(entries)
        if entries != self.entries:
            self.entries = entries
            self.setText(self.title)

    def named(self) -> list:
        """The data items the key names."""
        return [item for entry in self.entries for item in entry.items]


def digit_key(series, colours) -> list[KeyEntry]:
    """Entries naming the series of each digit j = 0..9 by the digit itself, in its colour:
    ``series[j]``, a tuple of the items drawn for digit j."""
    return [KeyEntry(str(k), tuple(items), (colour,), "text") for k, (items, colour) in enumerate(zip(series, colours))]


def digit_lines(plot: pg.PlotWidget, title: str, size: str, *shared) -> tuple[SeriesKey, list[pg.PlotDataItem]]:
    """Ten lines on ``plot``, one per digit j in :data:`DIGIT_COLOURS`, and ``title`` (font
    ``size``) with a key naming each line by its digit ("digit j: 0 1 … 9"); the key also names
    the ``shared`` items, drawn in the digits' colours, with every digit: (key, lines). The
    lines have no symbols: ten scatter items cost more to update and paint than the rest of a view.
    Nor do they limit their values' range to what the view shows (pyqtgraph's
    ``dynamicRangeLimit``, for values far past it): they hold lengths and routed masses, and
    with the limit every line is worked out again at each change of the y range (1.9 of the
    routing view's 6.7 ms per new input, Zen 2)."""
    lines = [plot.plot(pen=pg.mkPen(colour, width=1.5), dynamicRangeLimit=None) for colour in DIGIT_COLOURS]
    key = SeriesKey(
        plot, digit_key([(line, *shared) for line in lines], DIGIT_COLOURS), tr("digit j:") + "&nbsp;", "&nbsp;"
    )
    key.setText(title, size=size)
    return key, lines


class InferenceView:
    """What the views that draw an :class:`~capsviz.model.inference.Inference` share (a
    mixin beside their Qt class): :meth:`show_inference` keeps it as :attr:`inference` and
    asks the view's ``redraws`` (a :class:`~capsviz.explorer.Redraws`) for every part."""

    inference = None  # what the view's parts draw, or None

    def show_inference(self, inference) -> None:
        """Show ``inference`` (None clears), through the view's ``redraws``."""
        self.inference = inference
        self.redraws.request()


class StatusBar(QStatusBar):
    """The window's status bar: a message shows its first line, cut with an ellipsis to the
    room the permanent labels leave it (Qt would clip it under them), fitted again when the
    bar is resized or first shown; the bar's tooltip and :meth:`currentMessage` give it whole."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._message = ""
        self._until: float | None = None  # time.monotonic() when a timed message goes
        self._permanent: list[QWidget] = []
        self.messageChanged.connect(self._changed)

    def addPermanentWidget(self, widget: QWidget, stretch: int = 0) -> None:
        self._permanent.append(widget)
        super().addPermanentWidget(widget, stretch)

    def showMessage(self, message: str, timeout: int = 0) -> None:
        self._message = message
        self._until = time.monotonic() + timeout / 1000 if timeout > 0 else None
        self._fit()
        self.setToolTip(message)

    def _fit(self) -> None:
        """Show :attr:`_message` cut to the room there is now, for the rest of its time."""
        line = self._message.strip().split("\n", 1)[0]
        if self.isVisible():
            room = self.width() - sum(w.width() + 8 for w in self._permanent if w.isVisible() and w.width() > 0)
            line = self.fontMetrics().elidedText(line, Qt.TextElideMode.ElideRight, max(room - 24, 40))
        left = 0 if self._until is None else max(1, round(1000 * (self._until - time.monotonic())))
        super().showMessage(line, left)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._message:
            self._fit()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._message:
            self._fit()

    def clearMessage(self) -> None:
        self._message = ""
        super().clearMessage()

    def currentMessage(self) -> str:
        return self._message

    def _changed(self, shown: str) -> None:
        if not shown:  # its time is up, or another part of Qt cleared it
            self._message = ""
            self.setToolTip("")
