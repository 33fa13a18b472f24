"""Pose view: 16 sliders offset the dimensions of one digit capsule; the decoder redraws."""

from __future__ import annotations

from typing import Callable

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget
from superqt import QLabeledDoubleSlider

from capsviz.gui.widgets.common import ImagePanel

POSE_RANGE = 0.25
INFO = (
    "The 16 numbers of a digit capsule's output vector v_j are its pose: they describe how the "
    "digit is drawn (stroke width, slant, scale, local parts). The decoder reconstructs the "
    "digit from this vector alone. Drag a slider to add an offset to one dimension and watch "
    "what that dimension encodes (compare Fig. 4 of the paper)."
)


class PoseView(QWidget):
    """Digit selector, 16 offset sliders (±0.25), reset, input and reconstruction.

    ``decode(pose (16,), digit) -> (28, 28)`` is the model's decoder, set by the window.
    """

    reconstructionChanged = Signal()

    def __init__(self, decode: Callable[[np.ndarray, int], np.ndarray] | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setToolTip(INFO)
        self.decode = decode
        self.digit = QComboBox()
        self.digit.addItem("predicted", -1)
        for k in range(10):
            self.digit.addItem(f"digit {k}", k)
        self.digit.setToolTip("Which digit capsule's pose to edit (default: the prediction)")
        self.reset_button = QPushButton("Reset")
        self.reset_button.clicked.connect(self.reset)
        self.sliders: list[QLabeledDoubleSlider] = []
        grid = QGridLayout()
        grid.setVerticalSpacing(1)
        for k in range(16):
            s = QLabeledDoubleSlider(Qt.Orientation.Horizontal)
            s.setRange(-POSE_RANGE, POSE_RANGE)
            s.setSingleStep(0.01)
            s.setDecimals(3)
            s.setValue(0.0)
            s.setObjectName(f"pose_slider_{k}")
            s.setToolTip(f"offset added to dimension {k} of the capsule's 16-D pose")
            s.valueChanged.connect(self._update_reconstruction)
            grid.addWidget(QLabel(f"d{k}"), k % 8, 2 * (k // 8))
            grid.addWidget(s, k % 8, 2 * (k // 8) + 1)
            self.sliders.append(s)
        self.input_panel = ImagePanel("input")
        self.recon_panel = ImagePanel("reconstruction")
        for p in (self.input_panel, self.recon_panel):
            p.setMinimumSize(130, 150)
        self.status = QLabel("")
        top = QHBoxLayout()
        top.addWidget(QLabel("capsule"))
        top.addWidget(self.digit)
        top.addWidget(self.reset_button)
        top.addWidget(self.status, 1)
        images = QHBoxLayout()
        images.addWidget(self.input_panel)
        images.addWidget(self.recon_panel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addLayout(images, 1)
        layout.addLayout(grid)
        self.v: np.ndarray | None = None  # (10, 16) final digit capsules
        self.prediction: int | None = None
        self.reconstruction: np.ndarray | None = None
        self.digit.currentIndexChanged.connect(self._update_reconstruction)

    def selected_digit(self) -> int | None:
        d = self.digit.currentData()
        return self.prediction if d == -1 else int(d)

    def offsets(self) -> np.ndarray:
        return np.array([s.value() for s in self.sliders], dtype=np.float32)

    def pose(self) -> np.ndarray | None:
        """The decoder input: the selected capsule's pose plus the slider offsets, (16,)."""
        digit = self.selected_digit()
        if self.v is None or digit is None:
            return None
        return self.v[digit] + self.offsets()

    def set_capsules(self, image: np.ndarray | None, v: np.ndarray | None, prediction: int | None) -> None:
        """``v``: (10, 16) digit capsule outputs for ``image`` (28, 28); None clears."""
        self.v, self.prediction = v, prediction
        self.input_panel.set_image(image)
        label = "predicted" if prediction is None else f"predicted ({prediction})"
        self.digit.setItemText(0, label)
        self._update_reconstruction()

    def reset(self) -> None:
        for s in self.sliders:
            s.blockSignals(True)
            s.setValue(0.0)
            s.blockSignals(False)
        self._update_reconstruction()

    def _update_reconstruction(self, *_) -> None:
        pose = self.pose()
        if pose is None or self.decode is None:
            self.reconstruction = None
            self.recon_panel.set_image(None)
            self.status.setText("")
        else:
            digit = self.selected_digit()
            self.reconstruction = self.decode(pose, digit)
            self.recon_panel.set_image(self.reconstruction)
            self.recon_panel.set_title(f"reconstruction from capsule {digit}")
            self.status.setText(f"‖v‖ = {np.linalg.norm(pose):.3f}")
        self.reconstructionChanged.emit()
