"""Digit-capsule lengths: bars with the margin-loss thresholds, and their course over iterations."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from capsviz.model.losses import M_MINUS, M_PLUS

BAR = (90, 140, 200)
PREDICTED = (250, 180, 40)
INFO = (
    "Length ‖v_j‖ of each digit capsule after the last routing iteration: the network's "
    "estimate that digit j is present. Training pushes the true class above m⁺ = 0.9 and "
    "all others below m⁻ = 0.1 (margin loss, Eq. 4). The lower plot shows how each length "
    "changes from one routing iteration to the next."
)


class LengthsView(QWidget):
    """Bar chart of ‖v_j‖ (10 classes) plus lengths per routing iteration."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setToolTip(INFO)
        self.bars_plot = pg.PlotWidget(title="capsule lengths ‖v_j‖")
        self.bars_plot.setYRange(0, 1, padding=0)
        self.bars_plot.setXRange(-0.6, 9.6, padding=0)
        self.bars_plot.setMouseEnabled(False, False)
        self.bars_plot.getAxis("bottom").setTicks([[(k, str(k)) for k in range(10)]])
        self.bars = pg.BarGraphItem(x=np.arange(10), height=np.zeros(10), width=0.7, brushes=[BAR] * 10)
        self.bars_plot.addItem(self.bars)
        for y, name in ((M_PLUS, "m⁺"), (M_MINUS, "m⁻")):
            line = pg.InfiniteLine(pos=y, angle=0, pen=pg.mkPen((200, 80, 80), style=pg.QtCore.Qt.PenStyle.DashLine),
                                   label=name, labelOpts={"position": 0.97, "color": (200, 80, 80)})
            self.bars_plot.addItem(line)
        self.iter_plot = pg.PlotWidget(title="length per routing iteration")
        self.iter_plot.setYRange(0, 1, padding=0.02)
        self.iter_plot.setMouseEnabled(False, False)
        self.iter_plot.setLabel("bottom", "iteration r")
        self.iter_curves = [
            self.iter_plot.plot(pen=pg.mkPen(pg.intColor(k, 10), width=1.5), symbol="o", symbolSize=4,
                                symbolBrush=pg.intColor(k, 10), name=str(k))
            for k in range(10)
        ]
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.bars_plot, 3)
        layout.addWidget(self.iter_plot, 2)
        self.lengths = np.zeros(10, dtype=np.float32)

    def set_lengths(self, lengths: np.ndarray | None) -> None:
        """``lengths``: (R, 10) lengths per iteration, or None to clear."""
        if lengths is None:
            self.lengths = np.zeros(10, dtype=np.float32)
            self.bars.setOpts(height=self.lengths, brushes=[BAR] * 10)
            for c in self.iter_curves:
                c.setData([], [])
            return
        final = lengths[-1]
        self.lengths = final.copy()
        pred = int(final.argmax())
        self.bars.setOpts(height=final, brushes=[PREDICTED if k == pred else BAR for k in range(10)])
        r = np.arange(1, lengths.shape[0] + 1)
        for k, curve in enumerate(self.iter_curves):
            curve.setData(r, lengths[:, k])
        self.iter_plot.setXRange(0.8, lengths.shape[0] + 0.2, padding=0)
        self.iter_plot.getAxis("bottom").setTicks([[(int(k), str(int(k))) for k in r]])
