"""Robustness view: the model's accuracy on the MNIST test digits under affine transforms
of increasing strength, measured in the background (:mod:`capsviz.train.robustness`)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QSpinBox, QWidget

from capsviz import explanations
from capsviz.explorer import Redraws
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import KeyEntry, SeriesKey, column, plot, row
from capsviz.train.sweeps import AFFINE_FIELDS, KINDS, SWEEPS, sweep_title

LINE = (90, 160, 250)
CNN_LINE = (190, 110, 210)
NETWORKS = ("capsnet", "cnn")


class RobustnessView(QWidget):
    """N (test digits), Measure / Stop, progress, one plot per sweep and the affine test set.

    Signals
    -------
    measureRequested(int) : measure on the first N test digits.
    stopRequested()
    """

    measureRequested = Signal(int)
    stopRequested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setToolTip(tr(explanations.ROBUSTNESS, **AFFINE_FIELDS))
        tip = tr("Measure on the first N MNIST test digits (10,000: the whole test set)")
        self.digits = QSpinBox(minimum=10, maximum=10000, value=1000, singleStep=500, toolTip=tip)
        self.measure_button = QPushButton(tr("Measure"))
        self.measure_button.clicked.connect(lambda: self.measureRequested.emit(self.digits.value()))
        self.stop_button = QPushButton(tr("Stop"), enabled=False)
        self.stop_button.clicked.connect(self.stopRequested)
        self.status = QLabel(tr("not measured for this model"), wordWrap=True)
        top = row(tr("test digits"), self.digits, self.measure_button, self.stop_button, (self.status, 1))
        self.figures: dict[str, pg.PlotWidget] = {}  # its plots, by the file name an export gives them
        self.curves: dict[str, pg.PlotDataItem] = {}  # the CapsNet's, by kind
        self.cnn_curves: dict[str, pg.PlotDataItem] = {}
        grid = QGridLayout()
        for k, kind in enumerate(KINDS):
            # accuracy in %, as the status and the CLI give it
            chart = plot(sweep_title(kind, tr, short=True), size="9pt", y_range=(0, 100))
            if kind == "scale":  # what s is, where the panel's title has no room for it
                chart.setToolTip(sweep_title(kind, tr))
            chart.setMinimumSize(120, 80)  # two rows fit the bottom dock of a 768-pixel-high window
            if kind == "affine":
                chart.setXRange(-1, 1, padding=0)
                chart.getAxis("bottom").setTicks([[(-0.45, "CapsNet"), (0.45, "CNN")]])
                self.affine_bar = pg.BarGraphItem(x=[-0.45], height=[0], width=0.8, brush=LINE)
                self.cnn_affine_bar = pg.BarGraphItem(x=[0.45], height=[0], width=0.8, brush=CNN_LINE)
                # the figures sit inside their bars (a label over a bar near 1 would leave the plot)
                self.affine_label = pg.TextItem("", color=(15, 15, 15), anchor=(0.5, 0.5))
                self.cnn_affine_label = pg.TextItem("", color=(15, 15, 15), anchor=(0.5, 0.5))
                for item in (self.affine_bar, self.cnn_affine_bar, self.affine_label, self.cnn_affine_label):
                    chart.addItem(item)
                series, samples = (self.affine_bar, self.cnn_affine_bar), ("bar", "bar")
            else:
                strengths = SWEEPS[kind]
                # room past the last strength for half its label, which pyqtgraph leaves out otherwise
                span = strengths[-1] - strengths[0]
                chart.setXRange(strengths[0] - 0.05 * span, strengths[-1] + 0.1 * span, padding=0)
                chart.getAxis("bottom").setTicks([[(s, f"{s:g}") for s in strengths]])
                self.curves[kind] = chart.plot(pen=pg.mkPen(LINE, width=2), symbol="o", symbolSize=6, symbolBrush=LINE)
                dashed = pg.mkPen(CNN_LINE, width=2, style=pg.QtCore.Qt.PenStyle.DashLine)
                self.cnn_curves[kind] = chart.plot(pen=dashed, symbol="s", symbolSize=5, symbolBrush=CNN_LINE)
                series, samples = (self.curves[kind], self.cnn_curves[kind]), ("line", "dash")
            # under each title: which line (bar) is the CapsNet's, which the CNN's
            names = zip(("CapsNet", "CNN"), series, (LINE, CNN_LINE), samples)
            entries = [KeyEntry(name, (item,), (colour,), sample) for name, item, colour, sample in names]
            SeriesKey(chart, entries, sep="&nbsp;&nbsp;")
            self.figures[f"robustness_{kind}"] = chart
            grid.addWidget(chart, k // 3, k % 3)
        column(top, (grid, 1), margins=(2, 2, 2, 2), parent=self)
        self.results: dict[str, dict[float, float]] = {}  # the CapsNet's: kind -> {strength: accuracy}
        self.baseline_results: dict[str, dict[float, float]] = {}  # the compared CNN's, the same way
        self.networks = 1  # how many networks the measurement covers (2 with a CNN)
        self.redraws = Redraws("robustness", {"curves": self._draw})

    def clear(self, status: str | None = None) -> None:
        """Forget the figures (another model came); ``status`` (default: not measured) goes on the status line."""
        self.results, self.baseline_results = {}, {}
        self.status.setText(tr("not measured for this model") if status is None else status)
        self.redraws.request()

    def set_running(self, running: bool) -> None:
        self.measure_button.setEnabled(not running)
        self.digits.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def add_point(self, kind: str, strength: float, correct: int, n: int, network: str = "capsnet") -> None:
        """One measured figure: ``correct`` of ``n`` digits at ``strength`` of ``kind``, for
        the CapsNet (``network`` ``capsnet``) or the compared CNN (``cnn``)."""
        results = self.baseline_results if network == "cnn" else self.results
        results.setdefault(kind, {})[float(strength)] = correct / n
        done = sum(len(v) for r in (self.results, self.baseline_results) for v in r.values())
        total = sum(len(SWEEPS.get(k, (1,))) for k in KINDS) * self.networks
        self.status.setText(tr("{done} of {total} test sets measured on {n:,} digits", done=done, total=total, n=n))
        self.redraws.request()

    def _draw(self) -> None:
        for results, curves in ((self.results, self.curves), (self.baseline_results, self.cnn_curves)):
            for kind, curve in curves.items():
                points = sorted(results.get(kind, {}).items())
                curve.setData([s for s, _ in points], [100 * a for _, a in points])
        for results, bar, label, x in (
            (self.results, self.affine_bar, self.affine_label, -0.45),
            (self.baseline_results, self.cnn_affine_bar, self.cnn_affine_label, 0.45),
        ):
            accuracy = results.get("affine", {}).get(1.0)
            percent = 0.0 if accuracy is None else 100 * accuracy
            bar.setOpts(height=[percent])
            label.setText("" if accuracy is None else f"{percent:.1f} %")
            label.setColor((15, 15, 15) if percent >= 20 else (230, 230, 230))
            label.setPos(x, percent / 2 if percent >= 20 else percent + 6)  # inside a bar that has room
