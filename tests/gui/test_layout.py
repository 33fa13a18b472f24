"""What the window shows, measured on the real widgets: text inside its plots and docks,
tick labels apart, controls on screen at 1600 x 1000 (the default), 1366 x 768,
1366 x 700 (a 768-pixel screen less a title bar and a panel) and 1280 x 640 (a 1920 x 1080
screen at 150 % scale, 1280 x 720, less a title bar and a panel: the window's least size)."""

from __future__ import annotations

import itertools

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QImage, QPainter
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGraphicsTextItem,
    QLabel,
    QScrollArea,
    QWidget,
)

from capsviz.gui.widgets.canvas import CANVAS_LEAST, CANVAS_SIZE
from capsviz.gui.widgets.routing import PREDICTED, TITLE, TITLE_GAP
from capsviz.model.analysis import class_maps
from capsviz.model.losses import M_MINUS, M_PLUS
from tests.gui.events import settle

# the tightest screen runs in --fast
SIZES = [
    pytest.param((1600, 1000), marks=pytest.mark.slow),
    pytest.param((1366, 768), marks=pytest.mark.slow),
    pytest.param((1280, 640), marks=pytest.mark.slow),
    (1366, 700),
]


def resize(qtbot, window, size) -> None:
    window.resize(*size)
    for _ in range(5):
        QApplication.processEvents()
    settle(qtbot, window)
    for _ in range(3):
        QApplication.processEvents()


def raise_dock(window, name: str) -> None:
    window.docks[name].show()
    window.docks[name].raise_()
    for _ in range(5):
        QApplication.processEvents()


def small_browser_data(window, n: int = 40) -> None:
    """A few digits in the browser, so raising its dock classifies them quickly."""
    from capsviz.data.mnist import MnistSplit

    window.browser.set_data(MnistSplit(window.sources.sample.images[:n], window.sources.sample.labels[:n]), "sample")


def shown_views(window) -> list[pg.GraphicsView]:
    """The pyqtgraph views of the docks on screen (a dock behind another tab is not)."""
    return [
        view
        for name in window.docks
        if window.dock_shown(name)
        for view in window.docks[name].widget().findChildren(pg.GraphicsView)
        if view.isVisible()
    ]


def view_box_of(item) -> pg.ViewBox | None:
    while item is not None:
        if isinstance(item, pg.ViewBox):
            return item
        item = item.parentItem()
    return None


def text_box(item: QGraphicsTextItem) -> QRectF:
    """The scene rectangle of an item's text, without the margin its document adds around it."""
    m = item.document().documentMargin()
    return item.mapRectToScene(item.boundingRect().adjusted(m, m, -m, -m))


def clipped_texts(view: pg.GraphicsView) -> list[str]:
    """Texts of ``view`` (titles, labels, legends, axis names) not wholly inside the view,
    or inside the ViewBox that clips them."""
    frame = QRectF(view.mapToScene(view.viewport().rect()).boundingRect())
    bad = []
    for item in view.scene().items():
        if not (isinstance(item, QGraphicsTextItem) and item.isVisible() and item.toPlainText().strip()):
            continue
        rect = text_box(item)
        vb = view_box_of(item)
        box = frame if vb is None else frame.intersected(vb.sceneBoundingRect())
        if not box.adjusted(-0.5, -0.5, 0.5, 0.5).contains(rect):
            bad.append(f"{item.toPlainText()!r} at {rect.getRect()} outside {box.getRect()}")
    return bad


def tick_label_rects(axis: pg.AxisItem) -> list[tuple[QRectF, str]]:
    """The rectangles and strings of the tick labels ``axis`` draws (pyqtgraph's own layout)."""
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [] if specs is None else [(rect, text) for rect, _, text in specs[2]]


def overlapping_tick_labels(axis: pg.AxisItem) -> list[tuple[str, str]]:
    rects = tick_label_rects(axis)
    return [(a, b) for (ra, a), (rb, b) in itertools.combinations(rects, 2) if ra.intersects(rb)]


def clipped_tick_labels(view: pg.GraphicsView) -> list[str]:
    """Tick labels of the axes of ``view`` (colour scales' too) not wholly inside the view."""
    frame = QRectF(view.mapToScene(view.viewport().rect()).boundingRect()).adjusted(-0.5, -0.5, 0.5, 0.5)
    bad = []
    for item in view.scene().items():
        if isinstance(item, pg.AxisItem) and item.isVisible():
            for rect, text in tick_label_rects(item):
                if not frame.contains(item.mapRectToScene(rect)):
                    bad.append(f"{text!r} of the {item.orientation} axis")
    return bad


def rect_in(widget, ancestor) -> QRect:
    return QRect(widget.mapTo(ancestor, widget.rect().topLeft()), widget.size())


def text_rect_in(view: pg.GraphicsView, item: QGraphicsTextItem, ancestor) -> QRect:
    """The bounding rectangle of a scene text item in ``ancestor``'s coordinates."""
    rect = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
    return QRect(view.viewport().mapTo(ancestor, rect.topLeft()), rect.size())


# -- a. the lengths per iteration ---------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_length_per_iteration_tick_labels_stand_apart(qtbot, window, size):
    resize(qtbot, window, size)
    axis = window.lengths_view.iter_plot.getAxis("left")
    labels = tick_label_rects(axis)
    assert len(labels) >= 2, labels  # 0 and 1 at least
    assert overlapping_tick_labels(axis) == []
    # and so for every axis on screen: the small routing plots, the colour bars, the training plots
    for view in shown_views(window):
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem) and item.isVisible():
                assert overlapping_tick_labels(item) == [], (type(view.parentWidget()).__name__, item.orientation)


# -- b. the 'uniform' label of the entropy plot ---------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_uniform_label_is_off_the_entropy_curve_and_inside_the_plot(qtbot, window, size):
    resize(qtbot, window, size)
    view = window.routing_view
    vb = view.entropy_plot.getViewBox()
    lines = [item for item in view.entropy_plot.getPlotItem().items if isinstance(item, pg.InfiniteLine)]
    label = next(line.label for line in lines if line.label is not None and line.label.toPlainText() == "uniform")
    assert label.isVisible()
    rect = label.sceneBoundingRect()
    assert vb.sceneBoundingRect().contains(rect), (rect, vb.sceneBoundingRect())
    x, y = view.entropy_curve.getData()
    assert len(x) == 3 and y[0] == pytest.approx(np.log(10), abs=1e-6)  # r = 1 is uniform
    # the curve, its segments sampled finely and its symbols (5 px across), stays off the label
    symbol = 3.0
    keep_out = rect.adjusted(-symbol, -symbol, symbol, symbol)
    for i in range(len(x) - 1):
        (x0, y0), (x1, y1) = (x[i], y[i]), (x[i + 1], y[i + 1])
        for t in np.linspace(0, 1, 101):
            p = vb.mapViewToScene(QPointF(x0 + t * (x1 - x0), y0 + t * (y1 - y0)))
            assert not keep_out.contains(p), (t, p, rect)


# -- c. the overlay title ----------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_overlay_title_keeps_clear_of_the_docks_edge_and_its_neighbour(qtbot, window, size):
    resize(qtbot, window, size)
    view = window.routing_view
    dock = window.docks["routing"]
    panel = view.overlay_panel
    title = view.overlay_title.item
    assert title.toPlainText() == f"map of {window.core.inference.prediction} on the input"
    rect = text_rect_in(panel, title, dock)
    inner = dock.rect().adjusted(4, 4, -4, -4)
    assert inner.contains(rect), (rect, dock.rect())
    assert rect_in(panel, dock).adjusted(2, 0, -2, 0).contains(rect), (rect, rect_in(panel, dock))
    assert not rect.intersects(rect_in(view.detail, dock))


# -- every text of the plots on screen, and the window at 1366 x 768 -----------------------------------
@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("size", SIZES)
def test_no_plot_text_is_cut_off(window, qtbot, size, language):
    window.set_language(language)
    resize(qtbot, window, size)
    small_browser_data(window)
    for tabs in (("pose", "training"), ("votes", "robustness"), ("transforms", "browser")):
        for name in tabs:
            raise_dock(window, name)
        if "votes" in tabs:
            qtbot.waitUntil(lambda: window.votes_view.panels[0].j is not None, timeout=5000)
        if "browser" in tabs:
            qtbot.waitUntil(lambda: window.browser.predictions is not None, timeout=60000)
        settle(qtbot, window)
        views = shown_views(window)
        assert len(views) >= 8
        for view in views:
            assert clipped_texts(view) == [], type(view.parentWidget()).__name__
            assert clipped_tick_labels(view) == [], type(view.parentWidget()).__name__


@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("size", SIZES)
def test_no_plot_text_or_control_is_cut_off_with_overlapping_digits(window, qtbot, size, language):
    """The pair model's window: a wider central panel, so narrower docks beside it."""
    window.set_language(language)
    assert window.show_kind("multimnist")
    qtbot.waitUntil(lambda: (inf := window.core.inference) is not None and inf.reading is not None, timeout=60000)
    resize(qtbot, window, size)
    for name in ("votes", "pose"):
        raise_dock(window, name)
        settle(qtbot, window)
        assert (window.width(), window.height()) == size  # the window needs no more room
        views = shown_views(window)
        assert len(views) >= 8
        for view in views:
            assert clipped_texts(view) == [], type(view.parentWidget()).__name__
            assert clipped_tick_labels(view) == [], type(view.parentWidget()).__name__
            for item in view.scene().items():
                if isinstance(item, pg.AxisItem) and item.isVisible():
                    assert overlapping_tick_labels(item) == [], (type(view.parentWidget()).__name__, item.orientation)
        assert controls_cut_off(window) == []
    # the images side by side equally wide, but for one its title holds wider: the pair's
    # five, and the pose view's three
    pose = window.pose_view
    for row_of_images in (window.pair_panel.figures.values(), (pose.input_panel, pose.recon_panel, pose.diff_panel)):
        widths = [(panel.width(), panel.minimumWidth()) for panel in row_of_images]
        common = max((width for width, least in widths if width > least), default=0)
        assert all(width >= common - 2 for width, _ in widths), widths


def test_the_training_form_shows_whole_in_a_font_of_taller_lines(qtbot, shipped_checkpoint, tmp_path):
    """A Chinese desktop makes Noto Sans CJK the interface font, its lines taller than DejaVu
    Sans's (the digits' form 493 px against 436): with the app's font at 1.3 times its size,
    the form taller than the bottom docks' least, the first start gives the bottom docks the
    height it asks, both kinds' forms show whole and the canvas stays whole."""
    from PySide6.QtGui import QFont

    from capsviz.gui.main_window import MainWindow
    from tests.gui.conftest import temp_settings

    app = QApplication.instance()
    font = app.font()
    taller = QFont(font)
    taller.setPointSizeF(font.pointSizeF() * 1.3)
    app.setFont(taller)
    try:
        window = MainWindow(checkpoint=shipped_checkpoint, device="cpu", settings=temp_settings(tmp_path))
        window.confirm_close = lambda: True
        qtbot.addWidget(window)
        window.show()
        qtbot.waitExposed(window)
        settle(qtbot, window)
        panel = window.training_panel
        assert panel.form_height() > 492  # taller than the bottom docks' least on a first start
        assert panel.form_area.verticalScrollBar().maximum() == 0
        assert window.input_panel.canvas.width() == CANVAS_SIZE
        window.show_kind("multimnist")
        qtbot.waitUntil(lambda: not window.core.loading, timeout=60000)
        settle(qtbot, window)
        assert window.training_panel.form_area.verticalScrollBar().maximum() == 0
    finally:
        app.setFont(font)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("size", [(1366, 700), pytest.param((1280, 640), marks=pytest.mark.slow)])
def test_drawing_both_digits_of_a_pair_keeps_the_window_on_a_small_screen(window, qtbot, size, language):
    """Each digit's source set to "drawing" with the keyboard shows its canvas, the digit's
    box keeps its height (in the language shown), and the window stays ``size`` with every
    control on screen."""
    window.set_language(language)
    assert window.show_kind("multimnist")
    qtbot.waitUntil(lambda: (inf := window.core.inference) is not None and inf.reading is not None, timeout=60000)
    resize(qtbot, window, size)
    heights = [box.height() for box in window.pair_panel.controls]
    for control in window.pair_panel.controls:
        control.source.setFocus()
        qtbot.keyClick(control.source, Qt.Key.Key_Down)
        settle(qtbot, window)
        assert control.drawn and control.canvas.isVisible()
        assert control.canvas.visibleRegion().boundingRect() == control.canvas.rect()
        assert (window.width(), window.height()) == size
        assert [box.height() for box in window.pair_panel.controls] == heights
        hint = window.minimumSizeHint()
        assert hint.width() <= size[0] and hint.height() <= size[1], hint
        assert controls_cut_off(window) == []
        for box in window.pair_panel.controls:  # every part of each digit's box whole and apart
            parts = [w for w in box.findChildren(QWidget) if w.isVisible() and w.parentWidget() is box]
            assert len(parts) == (9 if box.drawn else 10)
            assert all(box.rect().contains(w.geometry()) for w in parts)
            assert [(a, b) for a, b in itertools.combinations(parts, 2) if a.geometry().intersects(b.geometry())] == []


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_a_test_digit_after_a_drawing_keeps_the_window_on_a_1366_screen(window, qtbot, language):
    """The input's source line takes the drawing hint's place: never both at once."""
    from tests.gui.events import drag

    window.set_language(language)
    resize(qtbot, window, (1366, 768))
    panel = window.input_panel
    for _ in range(2):
        drag(panel.canvas, [(140, 60), (140, 140), (140, 220)])
        settle(qtbot, window)
        assert panel.hint.isVisible() and not panel.source.isVisible()
        qtbot.mouseClick(panel.sample_button, Qt.MouseButton.LeftButton)
        settle(qtbot, window)
        assert panel.source.isVisible() and not panel.hint.isVisible()
        assert (window.width(), window.height()) == (1366, 768)


def test_the_docks_come_back_as_they_were_after_the_pair_mode(window, qtbot):
    """The pair panel is taller and wider than the single-digit input, and moves the splits
    between the docks; back on single digits they are where the user left them."""
    resize(qtbot, window, (1366, 768))
    window.docks["transforms"].show()  # a layout of the user's own: a dock shown, a split moved
    window.resizeDocks([window.docks["routing"]], [330], Qt.Orientation.Vertical)
    settle(qtbot, window)

    def layout():
        shown = [name for name in window.docks if window.dock_shown(name)]  # on screen, not behind a tab
        return {name: rect_in(window.docks[name], window) for name in shown}, rect_in(window.central, window)

    before = layout()
    for action, kind in (("pairs", "multimnist"), ("digits", "mnist")):
        window.actions[action].trigger()
        qtbot.waitUntil(lambda kind=kind: window.core.dataset == kind, timeout=60000)
        settle(qtbot, window, 30000)
        for _ in range(5):
            QApplication.processEvents()
    assert layout() == before


def one_row_width(pose) -> int:
    """The pose view's width with its choices and buttons in one row."""
    margins = pose.layout().contentsMargins()
    return pose.header.layout().sizeHint().width() + margins.left() + margins.right()


def test_switching_kinds_moves_the_pose_buttons_and_keeps_the_window_size(window, qtbot):
    """Beside the wider pair panel the pose buttons go under its choices: the view wraps them
    exactly where one row does not fit, so the window keeps 1366 x 700 in either mode."""
    resize(qtbot, window, (1366, 700))
    pose = window.pose_view
    assert pose.minimumSizeHint().width() < one_row_width(pose) - 150  # its least width: the buttons under
    for kind in ("multimnist", "mnist", "multimnist", "mnist"):
        assert window.show_kind(kind)
        shown = lambda kind=kind: window.core.dataset == kind and window.core.inference is not None  # noqa: E731
        qtbot.waitUntil(shown, timeout=60000)
        settle(qtbot, window, 30000)
        assert (window.width(), window.height()) == (1366, 700)
        two = pose.width() < one_row_width(pose)
        assert two or kind == "mnist"  # beside the pair panel one row cannot fit at 1366
        assert pose.two_rows is two
        under = rect_in(pose.reset_button, pose).top() > rect_in(pose.digit, pose).bottom()
        assert under is two
        assert pose.header.rect().contains(rect_in(pose.actions, pose.header))  # the buttons whole
        assert not rect_in(pose.actions, pose).intersects(rect_in(pose.input_panel, pose))


def test_the_default_window_shows_the_pose_controls_in_one_row(window, qtbot):
    """At the first start's 1600 x 1000 the pose dock is as wide as its controls in one row."""
    assert (window.width(), window.height()) == (1600, 1000)
    settle(qtbot, window)
    pose = window.pose_view
    assert not pose.two_rows
    assert rect_in(pose.reset_button, pose).top() < rect_in(pose.digit, pose).bottom()
    # narrowed, it puts the buttons under the choices, and back at its width in one row again
    window.resizeDocks([window.docks["pose"]], [pose.minimumSizeHint().width() + 20], Qt.Orientation.Horizontal)
    settle(qtbot, window)
    assert pose.two_rows and rect_in(pose.reset_button, pose).top() > rect_in(pose.digit, pose).bottom()
    assert controls_cut_off(window) == []
    window.resizeDocks([window.docks["pose"]], [one_row_width(pose) + 10], Qt.Orientation.Horizontal)
    settle(qtbot, window)
    assert not pose.two_rows


def controls_cut_off(window) -> list[str]:
    """Controls of the docks on screen not wholly visible, except those in a scroll area."""
    bad = []
    for name in window.docks:
        if not window.dock_shown(name):
            continue
        for w in (
            window.docks[name].widget().findChildren(QAbstractButton)
            + window.docks[name].widget().findChildren(QAbstractSpinBox)
            + window.docks[name].widget().findChildren(QComboBox)
            + window.docks[name].widget().findChildren(QAbstractSlider)
            + window.docks[name].widget().findChildren(QLabel)
        ):
            if not w.isVisible() or isinstance(w.parentWidget(), QAbstractSpinBox):
                continue
            parent = w.parentWidget()
            while parent is not None and not isinstance(parent, QScrollArea):
                parent = parent.parentWidget()
            if parent is not None:
                continue  # reachable by scrolling: see the training form test
            if w.visibleRegion().boundingRect() != w.rect():
                bad.append(f"{name}: {type(w).__name__} {getattr(w, 'text', lambda: '')()!r}")
    return bad


def test_the_window_fits_1366_by_768_with_every_control_on_screen(qtbot, window):
    resize(qtbot, window, (1366, 768))
    assert (window.width(), window.height()) == (1366, 768)
    assert window.minimumSizeHint().height() <= 768 and window.minimumSizeHint().width() <= 1366
    screen = window.rect()
    for name, dock in window.docks.items():
        if window.dock_shown(name):
            assert screen.contains(rect_in(dock, window)), name
    assert controls_cut_off(window) == []
    # the canvas keeps clear of the buttons under it (the central panel gets the height it needs)
    panel = window.input_panel
    assert rect_in(panel.canvas, panel).bottom() < rect_in(panel.clear_button, panel).top()
    small_browser_data(window)
    raise_dock(window, "transforms")
    raise_dock(window, "browser")
    assert controls_cut_off(window) == []


def test_every_training_field_comes_into_view_when_tabbed_to(window, qtbot):
    resize(qtbot, window, (1366, 768))
    panel = window.training_panel
    assert window.height() == 768
    area = panel.epochs.parentWidget()
    while area is not None and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    assert area is not None and area.verticalScrollBar().maximum() > 0  # at this height the form scrolls
    assert rect_in(panel.start_button, panel).bottom() <= panel.height()  # Start stays in view
    window.activateWindow()
    first = panel._inputs[0]  # the network to train
    first.setFocus()
    qtbot.waitUntil(lambda: first.hasFocus())
    seen = []
    for _ in range(40):
        focus = QApplication.focusWidget()
        field = next((w for w in panel._inputs if w is focus or w.isAncestorOf(focus)), None)
        if field is None:
            break
        if not seen or seen[-1] is not field:
            seen.append(field)
            assert field.visibleRegion().boundingRect() == field.rect(), type(field).__name__
        qtbot.keyClick(focus, Qt.Key.Key_Tab)
    assert seen == list(panel._inputs)


def test_the_training_form_shows_whole_at_the_default_size_in_either_language(window, qtbot):
    """At the first start's 1600 x 1000 the training form needs no scrolling, and a switch of
    language (taller glyphs) gives its area the height the form asks for then."""
    assert (window.width(), window.height()) == (1600, 1000)
    area = window.training_panel.form_area
    for language in ("zh_CN", "en"):
        window.set_language(language)
        settle(qtbot, window)
        for _ in range(3):
            QApplication.processEvents()
        assert area.verticalScrollBar().maximum() == 0, language
        assert area.viewport().height() >= area.widget().sizeHint().height(), language


@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("size", [(1366, 700), pytest.param((1280, 640), marks=pytest.mark.slow)])
def test_the_window_fits_small_screens_with_nothing_cut_and_the_mosaic_readable(qtbot, window, size, language):
    window.set_language(language)
    hint = window.minimumSizeHint()
    assert hint.width() <= size[0] and hint.height() <= size[1], hint
    resize(qtbot, window, size)
    assert (window.width(), window.height()) == size
    for name, dock in window.docks.items():
        if window.dock_shown(name):
            assert window.rect().contains(rect_in(dock, window)), name
    assert controls_cut_off(window) == []
    panel = window.input_panel
    assert rect_in(panel.canvas, panel).bottom() < rect_in(panel.clear_button, panel).top()
    # the routing mosaic: 3 pixels or more on screen for each capsule, so its 32 tiles can be read
    view = window.routing_view
    mosaic = view.mosaic
    rows, cols = mosaic.image.shape
    on_screen = view.detail.mapFromScene(mosaic.sceneBoundingRect()).boundingRect()
    assert on_screen.height() / rows >= 3 and on_screen.width() / cols >= 3, on_screen
    assert QRectF(view.detail.viewport().rect()).contains(QRectF(on_screen).adjusted(1, 1, -1, -1))
    small_browser_data(window)
    for tabs in (("votes", "robustness"), ("transforms", "browser")):
        for name in tabs:
            raise_dock(window, name)
        assert controls_cut_off(window) == []


@pytest.mark.parametrize("kind", ["mnist", pytest.param("multimnist", marks=pytest.mark.slow)])
def test_the_least_window_fits_a_1280_by_720_screen_in_either_language(window, qtbot, kind):
    """Below 640 pixels high (1280 x 720 less a title bar and a panel) in English and
    Chinese, with the votes shown (a pair's two panels, one over the other); the
    single-digit canvas is shown smaller there, and whole at the default size."""
    if kind != "mnist":
        assert window.show_kind(kind)
        qtbot.waitUntil(lambda: window.core.dataset == kind and window.core.inference is not None, timeout=60000)
    raise_dock(window, "votes")
    assert len(window.votes_view.panels) == (1 if kind == "mnist" else 2)
    raise_dock(window, "pose")
    canvas = window.input_panel.canvas
    for language in ("en", "zh_CN"):
        window.set_language(language)
        settle(qtbot, window)
        least = window.minimumSizeHint()
        assert least.width() <= 1280 and least.height() <= 640, (language, least)
        if kind == "mnist":
            assert canvas.side() == CANVAS_SIZE
            resize(qtbot, window, least.toTuple())
            assert CANVAS_LEAST <= canvas.side() < CANVAS_SIZE and canvas.width() == canvas.height()
            resize(qtbot, window, (1600, 1000))
            assert canvas.side() == CANVAS_SIZE


def test_a_first_start_on_a_small_screen_keeps_the_canvas_whole(window, qtbot):
    """The first start's docks laid out for 1600 x 1000, then fitted to a 1366 x 738 screen:
    the bottom docks give up what the central panel needs at its size hint."""
    resize(qtbot, window, (1366, 738))
    assert window.input_panel.canvas.side() < CANVAS_SIZE  # Qt shrinks the central panel and the docks alike
    window.fit_bottom_docks()
    settle(qtbot, window)
    assert window.central.height() == window.central.sizeHint().height()
    assert window.input_panel.canvas.side() == CANVAS_SIZE
    assert window.docks["routing"].height() >= window.docks["routing"].minimumSizeHint().height()
    assert controls_cut_off(window) == []


def test_the_margin_levels_are_named_where_their_band_holds_both_names(window, qtbot):
    """m⁺ and m⁻ named inside the band between their lines, apart, at the default size; in
    the least window, where the band is lower than the two names, the dashed lines alone."""
    view = window.lengths_view
    box = view.bars_plot.getViewBox()
    labels = [line.label for line in view.margin_lines]

    def band() -> float:  # px between the lines
        return box.mapViewToDevice(QPointF(0, M_MINUS)).y() - box.mapViewToDevice(QPointF(0, M_PLUS)).y()

    resize(qtbot, window, (1600, 1000))
    assert [label.toPlainText() for label in labels] == ["m⁺", "m⁻"] and all(label.isVisible() for label in labels)
    plus, minus = (label.sceneBoundingRect() for label in labels)
    assert plus.bottom() <= minus.top()
    resize(qtbot, window, window.minimumSizeHint().toTuple())
    assert band() < sum(label.boundingRect().height() for label in labels)
    assert not any(label.isVisible() for label in labels) and all(line.isVisible() for line in view.margin_lines)
    resize(qtbot, window, (1600, 1000))
    assert all(label.isVisible() for label in labels)
    assert [label.toPlainText() for label in labels] == ["m⁺", "m⁻"]


@pytest.mark.parametrize("kind", ["mnist", pytest.param("multimnist", marks=pytest.mark.slow)])
def test_class_map_titles_stand_apart_and_give_the_mass_where_it_fits(qtbot, window, kind):
    """Each title reads "j: mass", Σ_i ‖u_i‖ c_ij at the iteration shown, with one decimal in
    the default window, rounded at 1366 x 700, where one decimal would run into the next
    title, and "j" alone at the window's least size, where the rounded mass would; never
    closer than 3 pixels to the next."""
    if kind != "mnist":
        assert window.show_kind(kind)
        qtbot.waitUntil(lambda: window.core.dataset == kind and window.core.inference is not None, timeout=60000)
    view = window.routing_view
    least = window.minimumSizeHint()
    for size, decimals in (((1600, 1000), 1), ((1366, 700), 0), ((least.width(), least.height()), None)):
        resize(qtbot, window, size)
        inf = window.core.inference
        for key, r in ((Qt.Key.Key_End, inf.iterations), (Qt.Key.Key_Home, 1)):
            view.iteration.setFocus()
            qtbot.keyClick(view.iteration, key)
            settle(qtbot, window)
            mass = (inf.u_lengths[:, None] * inf.c[r - 1]).sum(0)  # (10,): Σ_i ‖u_i‖ c_ij
            if r == 1:  # every c_ij is 0.1
                np.testing.assert_allclose(mass, 0.1 * inf.u_lengths.sum(), rtol=1e-5)
            texts = [title.toPlainText() for title in view.titles]
            if decimals is None:
                assert texts == [f"{j}" for j in range(10)], (size, r)
            else:
                assert texts == [f"{j}: {m:.{decimals}f}" for j, m in enumerate(mass)], (size, r)
            for j, title in enumerate(view.titles):
                colour = title.textItem.defaultTextColor().getRgb()[:3]
                assert colour == (PREDICTED if j == inf.prediction else TITLE)
            boxes = [text_box(title.textItem) for title in view.titles]
            for row in (boxes[:5], boxes[5:]):  # two rows of five maps
                for left, right in itertools.pairwise(row):
                    assert right.left() - left.right() >= 3, (size, r, texts)
        if decimals != 1:  # the next longer form would not fit between the titles' centres
            metrics = QFontMetricsF(view.titles[0].textItem.font())
            pitch = view.titles[1].scenePos().x() - view.titles[0].scenePos().x()
            longer = 0 if decimals is None else decimals + 1
            wider = [metrics.horizontalAdvance(f"{j}: {m:.{longer}f}") for j, m in enumerate(view.mass.max(0))]
            assert max(wider) > pitch - TITLE_GAP, (size, pitch, wider)


# -- d. the progress bar ----------------------------------------------------------------------------------
def test_no_empty_progress_box_while_idle(window):
    panel = window.training_panel
    assert not panel.progress.isVisible()
    assert panel.status.isVisible() and panel.status.text() == "idle"
    # right under Start and Stop comes the status line
    gap = rect_in(panel.status, panel).top() - rect_in(panel.start_button, panel).bottom()
    assert 0 < gap < 12
    panel.set_running(True)
    assert panel.progress.isVisible()
    panel.set_running(False)
    assert not panel.progress.isVisible()


# -- e. test images: the GUI's default and why -----------------------------------------------------------
def test_test_images_field_says_why_it_is_not_all_10000(window):
    from capsviz.train.config import TrainConfig

    field = window.training_panel.test_subset
    assert TrainConfig().test_subset == 0  # the command line evaluates all 10,000
    assert field.value() == 2000 and field.text() == "2000 of 10,000"
    tip = field.toolTip()
    for words in ("2,000", "10,000", "capsviz train", "pause"):
        assert words in tip, words
    field.setValue(0)
    assert field.text() == "all 10,000"


# -- f. the browser's count, once --------------------------------------------------------------------------------
def test_browser_states_the_number_of_digits_once(qtbot):
    from capsviz.data.mnist import load_sample
    from capsviz.gui.widgets.browser import MnistBrowser

    browser = MnistBrowser()
    qtbot.addWidget(browser)
    browser.show()
    data = load_sample()
    browser.set_data(data, "assets sample")
    texts = [label.text() for label in browser.findChildren(QLabel)]
    assert sum(f"{len(data):,}" in t for t in texts) == 1, texts
    assert browser.source.text() == f"assets sample: {len(data):,} digits"
    predictions = data.labels.copy()
    predictions[[3, 5, 8]] = (predictions[[3, 5, 8]] + 1) % 10
    browser.set_predictions(predictions)
    qtbot.mouseClick(browser.errors_only, Qt.MouseButton.LeftButton)
    assert browser.errors_only.isChecked()
    assert browser.filter_label.text() == "browsing 3 digits (mistakes only)"


# -- g. pose headings -----------------------------------------------------------------------------------------------
def test_pose_columns_have_headings_over_their_numbers(window):
    pose = window.pose_view
    raise_dock(window, "pose")
    headings = sorted(
        (w for w in pose.findChildren(QLabel) if w.text() in ("inferred", "offset")),
        key=lambda w: (rect_in(w, pose).left(), w.text()),
    )
    assert [h.text() for h in headings] == ["inferred", "offset", "inferred", "offset"]
    for half, first in ((0, 0), (1, 8)):
        inferred, offset = headings[2 * half], headings[2 * half + 1]
        value = pose.inferred_labels[first]
        number = pose.sliders[first]._label  # the slider's offset read-out
        h, v, n = (rect_in(w, pose) for w in (inferred, value, number))
        o = rect_in(offset, pose)
        assert h.bottom() < v.top() and o.bottom() < n.top()  # above the first row
        assert h.left() == v.left()  # over the inferred values
        assert o.left() < n.right() and n.left() < o.right()  # over the offset numbers
        assert inferred.isVisible() and offset.isVisible()


# -- h. routing: departure from uniform ------------------------------------------------------------------------------
def cell_colours(view) -> np.ndarray:
    """The colours drawn at the centre of every cell of the ten class maps, (10, 6, 6, 3)."""
    image = view.graphics.viewport().grab().toImage()
    out = np.zeros((10, 6, 6, 3), dtype=int)
    for j, y, x in itertools.product(range(10), range(6), range(6)):
        p = view.graphics.mapFromScene(view.class_map_scene_pos(j, y, x))
        c = image.pixelColor(p)
        out[j, y, x] = (c.red(), c.green(), c.blue())
    return out


def test_class_maps_show_departure_from_uniform_by_default(window, qtbot):
    view = window.routing_view
    inf = window.core.inference
    assert view.scale.currentText() == "departure from uniform"
    assert window.restored.views["routing/scale"] == view.scale.currentIndex()  # the settings' default
    colours_of = view.colorbar.colorMap()
    for r in (3, 1):
        view.iteration.setFocus()
        qtbot.keyClick(view.iteration, Qt.Key.Key_End if r == 3 else Qt.Key.Key_Home)
        settle(qtbot, window)
        for _ in range(3):
            QApplication.processEvents()
        departure = class_maps(inf.u_lengths, inf.c[r - 1] - 0.1)  # (10, 6, 6)
        low, high = view.colorbar.levels()
        assert low == pytest.approx(-high) and high > 0  # centred on 0
        colours = cell_colours(view)
        expected = colours_of.map(np.clip((departure - low) / (high - low), 0, 1).ravel(), mode="byte")[:, :3]
        np.testing.assert_allclose(colours.reshape(-1, 3), expected, atol=8)
        caption = view.maps_title.text
        assert "Σ_type ‖u_i‖ (c_ij − 0.1)" in caption and f"iteration {r}" in caption
        if r == 1:
            np.testing.assert_array_equal(departure, 0)  # every c_ij is 0.1
            assert "every c_ij is 0.1" in caption and "every map is 0" in caption
            centre = colours_of.map(0.5, mode="byte")[:3]
            assert min(centre) > 180  # light grey: the maps stand out from the black background
            assert (np.abs(colours - centre) <= 8).all()
        else:
            # the maps differ from each other: the prediction's gains, the others' losses
            spread = np.abs(colours - colours.mean(axis=(1, 2), keepdims=True)).max()
            assert spread > 60
            assert np.abs(colours[inf.prediction].astype(float) - colours[(inf.prediction + 1) % 10]).max() > 60


def test_stored_scale_indices_stay_valid(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from capsviz.gui.widgets.routing import RoutingView
    from capsviz.view_settings import VIEW_KEYS

    view = RoutingView()
    qtbot.addWidget(view)
    SCALES = [view.scale.itemText(i) for i in range(view.scale.count())]

    _, default, check = VIEW_KEYS["routing/scale"]
    assert [i for i in range(-1, len(SCALES) + 1) if check(i)] == list(range(len(SCALES)))
    assert SCALES[default] == "departure from uniform"
    s = QSettings(str(tmp_path / "capsviz.ini"), QSettings.Format.IniFormat)
    s.setValue("format", 1)
    s.setValue("routing/scale", 1)  # a scale stored by an earlier run keeps its meaning
    s.sync()
    from capsviz.gui.settings import read_settings

    assert (
        read_settings(QSettings(str(tmp_path / "capsviz.ini"), QSettings.Format.IniFormat)).views["routing/scale"] == 1
    )
    assert SCALES[1] == "scale shared by all iterations"


# -- the votes panel's title -------------------------------------------------------------------------
def drag_in_scene(qtbot, view: pg.GraphicsView, start: QPointF, end: QPointF) -> None:
    """Drag with the left button from ``start`` to ``end`` (viewport pixels), the moves spaced
    by pyqtgraph's mouse rate limit (its scene drops a move that comes sooner)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMouseEvent

    gap = int(2 * 1000 / pg.getConfigOption("mouseRateLimit")) + 1
    target = view.viewport()
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton

    def send(kind, p, button, buttons):
        event = QMouseEvent(kind, p, target.mapToGlobal(p), button, buttons, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(target, event)

    send(QEvent.Type.MouseButtonPress, start, left, left)
    for t in (0.25, 0.6, 1.0):
        qtbot.wait(gap)
        send(QEvent.Type.MouseMove, start + (end - start) * t, none, left)
    send(QEvent.Type.MouseButtonRelease, end, left, none)


@pytest.mark.parametrize("size", [(1600, 1000), (1366, 700)])
def test_votes_panel_title_is_shown_whole_after_a_rectangle_selection(qtbot, window, size):
    resize(qtbot, window, size)
    raise_dock(window, "votes")
    view = window.votes_view
    qtbot.waitUntil(lambda: view.panels[0].j is not None, timeout=5000)
    settle(qtbot, window)
    panel = view.panels[0]
    plot = panel.plot
    vb = plot.getPlotItem().getViewBox()
    before = panel.box.pos()
    x0, y0 = before
    w, h = panel.box.size()
    inside = plot.mapFromScene(vb.mapViewToScene(QPointF(x0 + 0.3 * w, y0 + 0.3 * h)))
    drag_in_scene(qtbot, plot, QPointF(inside), QPointF(inside) + QPointF(-40, 25))
    qtbot.waitUntil(lambda: panel.box.pos() != before, timeout=3000)
    QApplication.processEvents()
    chosen = int(view.selected(panel).sum())
    title = panel.fields.title.item
    assert 0 < chosen < len(panel.points)
    assert " ".join(title.toPlainText().split()) == f"{chosen} votes in the rectangle"
    # every line of it inside the panel, none cut at its edges
    shown = QRectF(panel.fields.viewport().rect())
    box = QRectF(panel.fields.mapFromScene(text_box(title)).boundingRect())
    assert box.width() > 0 and shown.contains(box), (box, shown)


def test_the_status_says_the_test_pass_comes_after_an_epochs_last_batch(window):
    from capsviz.train.events import BatchEvent

    panel = window.training_panel
    fields = dict(step=0, loss=0.5, margin_loss=0.4, reconstruction_loss=100.0, train_accuracy=0.5, lr=1e-3)
    panel.add_batch(BatchEvent(epoch=0, batch=5, batches_per_epoch=6, images_per_s=300.0, **fields), 0.0005)
    assert panel.status.text().startswith("epoch 1, batch 5/6")
    panel.add_batch(BatchEvent(epoch=0, batch=6, batches_per_epoch=6, images_per_s=300.0, **fields), 0.0005)
    assert panel.status.text() == "epoch 1 trained; testing on the test set…"
