"""Routing view: coupling coefficients c_ij of each routing iteration as 6x6 class maps."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QSpinBox, QVBoxLayout, QWidget

from capsviz.gui.widgets.common import VIRIDIS

INFO = (
    "Routing by agreement (Procedure 1). Each primary capsule i splits its output among "
    "the 10 digit capsules with coupling coefficients c_ij = softmax_j(b_ij), which sum to 1. "
    "Each map shows, for one digit j, Σ over the 32 capsule types of ‖u_i‖·c_ij at every "
    "position of the 6×6 grid: where the active primary capsules send their vote. Step the "
    "iteration to watch the couplings concentrate on the capsules that agree."
)


def class_maps(u_lengths: np.ndarray, c: np.ndarray, grid: int = 6) -> np.ndarray:
    """Length-weighted coupling per class on the primary grid.

    u_lengths : (1152,), c : (1152, 10) for one iteration -> (10, 6, 6):
    map[j, y, x] = Σ_type ‖u_i‖ c_ij with i = type*36 + y*6 + x.
    """
    w = (u_lengths[:, None] * c).reshape(-1, grid, grid, c.shape[1])  # (32, 6, 6, 10)
    return w.sum(axis=0).transpose(2, 0, 1)


class RoutingView(QWidget):
    """Iteration selector, inference iteration count, and ten 6×6 coupling maps.

    Signals
    -------
    iterationsChanged(int) : the number of routing iterations to run at inference (1..7).
    """

    iterationsChanged = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setToolTip(INFO)
        self.iteration = QSlider(Qt.Orientation.Horizontal)
        self.iteration.setRange(1, 3)
        self.iteration.setValue(3)
        self.iteration.setPageStep(1)
        self.iteration.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.iteration_label = QLabel("r = 3")
        self.iteration.setToolTip("Routing iteration r whose coupling coefficients are shown")
        self.iterations = QSpinBox()
        self.iterations.setRange(1, 7)
        self.iterations.setValue(3)
        self.iterations.setToolTip("Routing iterations run at inference (the model was trained with 3)")
        self.iterations.valueChanged.connect(self.iterationsChanged)
        self.summary = QLabel("")
        controls = QHBoxLayout()
        controls.addWidget(QLabel("showing iteration"))
        controls.addWidget(self.iteration, 1)
        controls.addWidget(self.iteration_label)
        controls.addSpacing(12)
        controls.addWidget(QLabel("routing iterations R"))
        controls.addWidget(self.iterations)
        controls.addSpacing(12)
        controls.addWidget(self.summary)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("k")
        self.maps: list[pg.ImageItem] = []
        self.titles: list[pg.LabelItem] = []
        for j in range(10):
            row, col = 2 * (j // 5), j % 5
            title = self.graphics.addLabel(f"{j}", row=row, col=col, size="9pt")
            vb = self.graphics.addViewBox(row=row + 1, col=col, lockAspect=True, enableMouse=False, invertY=True)
            vb.setMenuEnabled(False)
            item = pg.ImageItem(np.zeros((6, 6), dtype=np.float32))
            item.setColorMap(VIRIDIS)
            vb.addItem(item)
            vb.setRange(xRange=(0, 6), yRange=(0, 6), padding=0.0)
            self.maps.append(item)
            self.titles.append(title)
        self.colorbar = pg.ColorBarItem(values=(0, 1), colorMap=VIRIDIS, interactive=False, width=12)
        self.colorbar.setImageItem(self.maps)
        self.graphics.addItem(self.colorbar, row=0, col=5, rowspan=4)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(controls)
        layout.addWidget(self.graphics, 1)
        self._u_lengths: np.ndarray | None = None
        self._c: np.ndarray | None = None
        self.shown: np.ndarray | None = None  # (10, 6, 6) maps on screen
        self.iteration.valueChanged.connect(self._redraw)

    def set_trace(self, u_lengths: np.ndarray | None, c: np.ndarray | None, prediction: int | None = None) -> None:
        """``u_lengths`` (1152,), ``c`` (R, 1152, 10), or None to clear."""
        self._u_lengths, self._c, self._prediction = u_lengths, c, prediction
        if c is not None:
            r = c.shape[0]
            keep = min(self.iteration.value(), r) if self.iteration.maximum() == r else r
            self.iteration.blockSignals(True)
            self.iteration.setRange(1, r)
            self.iteration.setValue(keep)
            self.iteration.blockSignals(False)
        self._redraw()

    def _redraw(self) -> None:
        if self._c is None or self._u_lengths is None:
            self.shown = None
            for item, title, j in zip(self.maps, self.titles, range(10)):
                item.setImage(np.zeros((6, 6), dtype=np.float32), autoLevels=False, levels=(0, 1))
                title.setText(f"{j}", size="9pt")
            self.summary.setText("")
            return
        r = self.iteration.value() - 1
        self.iteration_label.setText(f"r = {r + 1} of {self._c.shape[0]}")
        maps = class_maps(self._u_lengths, self._c[r])
        self.shown = maps
        # One colour scale for the ten maps of this iteration, from their minimum to their
        # maximum: couplings often move only a little away from uniform, and a scale
        # starting at 0 would hide where they move.
        low, top = float(maps.min()), float(maps.max())
        if top - low < 1e-6:
            low, top = min(low, top - 1e-3), top + 1e-3
        for j, (item, title) in enumerate(zip(self.maps, self.titles)):
            item.setImage(maps[j], autoLevels=False, levels=(low, top))
            mark = " ◀" if j == self._prediction else ""
            title.setText(f"{j}: mass {maps[j].sum():.2f}{mark}", size="9pt")
        self.colorbar.setLevels((low, top))
        c = self._c[r]
        entropy = float(-(c * np.log(np.clip(c, 1e-12, 1))).sum(axis=1).mean())
        self.summary.setText(f"mean entropy of c_i: {entropy:.3f} nats (uniform: {np.log(10):.3f})")
