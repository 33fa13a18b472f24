"""Every plot of the main window with more than one series names them: a pyqtgraph legend
with an entry for each, or the key under its title (:class:`~capsviz.gui.widgets.common.SeriesKey`),
on screen, outside the data area, with every name shown whole."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QApplication

from capsviz.gui.widgets.common import SeriesKey
from tests.gui.events import settle
from tests.gui.test_layout import raise_dock, resize

DATA_ITEMS = (pg.PlotDataItem, pg.BarGraphItem, pg.ScatterPlotItem)


def has_data(item) -> bool:
    if isinstance(item, pg.PlotDataItem):
        x, _ = item.getData()
        return x is not None and len(x) > 0
    if isinstance(item, pg.ScatterPlotItem):
        return len(item.data) > 0
    height = item.opts.get("height")
    return height is not None and len(height) > 0


def series(plot: pg.PlotItem) -> list:
    """The data items drawn in ``plot``: visible, with data (a line's own curve and symbols are one)."""
    return [item for item in plot.items if isinstance(item, DATA_ITEMS) and item.isVisible() and has_data(item)]


def legends_of(plot: pg.PlotItem) -> list[pg.LegendItem]:
    return [
        item
        for item in plot.scene().items()
        if isinstance(item, pg.LegendItem) and item.isVisible() and plot.isAncestorOf(item)
    ]


def frame_of(view: pg.GraphicsView) -> QRectF:
    return QRectF(view.mapToScene(view.viewport().rect()).boundingRect())


def plots_on_screen(window) -> list[tuple[str, pg.GraphicsView, pg.PlotItem]]:
    out = []
    for name, dock in window.docks.items():
        if not window.dock_shown(name):
            continue
        for view in dock.widget().findChildren(pg.GraphicsView):
            if view.isVisible():
                out += [(name, view, item) for item in view.scene().items() if isinstance(item, pg.PlotItem)]
    return out


def unnamed_series(name: str, view: pg.GraphicsView, plot: pg.PlotItem) -> list[str]:
    """What is wrong with how ``plot`` names its series (empty: nothing)."""
    shown = series(plot)
    if len(shown) < 2:
        return []
    where = f"{name}: {type(view).__name__} {plot.titleLabel.text[:40]!r}"
    frame, data_area = frame_of(view), plot.getViewBox().sceneBoundingRect()
    for legend in legends_of(plot):
        if len(legend.items) >= len(shown) and frame.contains(legend.sceneBoundingRect()):
            return []
    key = plot.titleLabel
    if not isinstance(key, SeriesKey):
        return [f"{where}: {len(shown)} series, no legend with as many entries and no key"]
    problems = []
    named = key.named()
    missing = [type(item).__name__ for item in shown if not any(item is n for n in named)]
    if missing:
        problems.append(f"{where}: the key does not name {missing}")
    text = key.item.toPlainText()
    problems += [f"{where}: {e.name!r} not in the key's text {text!r}" for e in key.entries if e.name not in text]
    if len({e.name for e in key.entries}) < 2:
        problems.append(f"{where}: the key names fewer than two series")
    m = key.item.document().documentMargin()
    box = key.item.mapRectToScene(key.item.boundingRect().adjusted(m, m, -m, -m))
    if not (key.isVisible() and frame.adjusted(-0.5, -0.5, 0.5, 0.5).contains(box)):
        problems.append(f"{where}: the key is not wholly on screen ({box.getRect()} in {frame.getRect()})")
    if box.intersects(data_area.adjusted(1, 1, -1, -1)):
        problems.append(f"{where}: the key covers the data ({box.getRect()} over {data_area.getRect()})")
    return problems


def measure_robustness(qtbot, window) -> None:
    """Measure the robustness view's curves on 10 test digits, the CNN's beside the CapsNet's."""
    raise_dock(window, "robustness")
    view = window.robustness_view
    view.digits.setValue(10)
    qtbot.mouseClick(view.measure_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.robustness.worker is None, timeout=120000)
    window.scheduler.wait_idle()
    QApplication.processEvents()
    assert view.baseline_results and view.results  # both networks measured


@pytest.mark.parametrize("size", [(1600, 1000), (1366, 700)])
def test_every_plot_with_two_or_more_series_names_them(qtbot, window, size):
    resize(qtbot, window, size)
    assert window.core.baseline is not None  # the CNN of the assets, shown beside the capsules
    measure_robustness(qtbot, window)
    checked: dict[str, int] = {}
    problems = []
    for tabs in (("pose", "robustness"), ("votes", "training"), ("transforms", "browser")):
        for name in tabs:
            raise_dock(window, name)
        if "votes" in tabs:
            qtbot.waitUntil(lambda: window.votes_view.panels[0].j is not None, timeout=5000)
        if "transforms" in tabs:
            qtbot.waitUntil(lambda: window.transform_view.sweep is not None, timeout=30000)
            qtbot.waitUntil(lambda: window.transform_view.sweep["cnn"] is not None, timeout=30000)
        settle(qtbot, window)
        for _ in range(3):
            QApplication.processEvents()
        for name, view, plot in plots_on_screen(window):
            n = len(series(plot))
            if n >= 2:
                checked[name] = checked.get(name, 0) + 1
            problems += unnamed_series(name, view, plot)
    assert problems == []
    # the plots with several series (counted once for each group of tabs they were seen with):
    # the bars and the lengths per iteration, the routed mass, the four robustness curves and
    # the affine bars, the votes, the sweep (the training plots have none before a run)
    assert checked == {"lengths": 2 * 3, "routing": 3, "robustness": 5, "votes": 1, "transforms": 1}
    assert window.lengths_view.cnn_bars.isVisible()
