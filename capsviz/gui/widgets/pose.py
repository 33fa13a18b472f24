"""Pose view: 16 sliders offset the dimensions of one digit capsule; the decoder redraws."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QGridLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from superqt import QLabeledDoubleSlider

from capsviz import explanations
from capsviz.data.images import save_grey_png
from capsviz.explorer import Redraws
from capsviz.gui.dialogs import ask_file_to_save, write_or_warn
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import (
    FlowRow,
    ImagePanel,
    InferenceView,
    chosen_digit,
    column,
    digit_choice,
    name_answer,
    offset_slider,
    row,
    set_quietly,
)
from capsviz.model.inference import PERTURBATION_OFFSETS, tile_grid

POSE_RANGES = (0.25, 0.5, 1.0)
DIVERGING = pg.ColorMap(pos=[0.0, 0.5, 1.0], color=[(60, 120, 255), (0, 0, 0), (255, 90, 60)])


class PerturbationDialog(QDialog):
    """The 16 × 11 grid of paper Fig. 4 for one capsule, with PNG export."""

    def __init__(self, grid: np.ndarray, digit: int, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Pose perturbations of digit capsule {digit} (paper Fig. 4)", digit=digit))
        self.grid = grid
        self.image = tile_grid(grid)
        low, high = PERTURBATION_OFFSETS[0], PERTURBATION_OFFSETS[-1]
        title = tr("rows: dimensions 0–15; columns: offsets {low:+.2f} … {high:+.2f}", low=low, high=high)
        panel = ImagePanel(title, shape=self.image.shape, least=(420, 560))
        panel.set_image(self.image)
        save = QPushButton(tr("Save PNG…"), clicked=self._save_dialog)
        self.saved = QLabel("")  # the file written last
        layout = QVBoxLayout(self)
        layout.addWidget(panel, 1)
        layout.addLayout(row((self.saved, 1), save))

    def save_png(self, path: str | Path, scale: int = 3) -> Path:
        """Write the grid as an 8-bit grayscale PNG, each pixel ``scale`` × ``scale``."""
        save_grey_png(self.image, path, scale)
        return Path(path)

    def _save_dialog(self) -> None:
        title = tr("Save grid")
        path = ask_file_to_save(self, title, "pose_grid.png", "PNG (*.png)")
        if path is not None and write_or_warn(self, title, path, self.save_png):
            self.saved.setText(tr("saved {path}", path=path))


class PoseView(QWidget, InferenceView):
    """Digit selector, 16 offset sliders (±0.25, widenable), length scale, reset,
    input / reconstruction / difference, and the Fig. 4 grid.

    ``decode(pose (16,), digit) -> (H, W)`` and ``grid(pose (16,), digit) -> (16, 11, H, W)``
    are the model's decoder, set by the window (H = W = 28 for MNIST, 36 for MultiMNIST).
    ``compose(digit, reconstruction) -> (shown, combined)``, where given, puts the edited
    reconstruction together with others that stay as inferred (the overlapping-digits window
    keeps the other digit's): ``shown`` (H, W) or (H, W, 3) goes on the reconstruction panel,
    ``combined`` (H, W) is compared with the input; without it both are the reconstruction.
    """

    reconstructionChanged = Signal()

    def __init__(
        self,
        decode: Callable[[np.ndarray, int], np.ndarray] | None = None,
        grid: Callable[[np.ndarray, int], np.ndarray] | None = None,
        compose: Callable[[int, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
        parent=None,
    ) -> None:
        super().__init__(parent)
        self.setToolTip(tr(explanations.POSE))
        self.decode = decode
        self.grid = grid
        self.compose = compose
        self.digit = digit_choice(tr("Which digit capsule's pose to edit (default: the prediction)"))
        self.digit.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.range = QComboBox(toolTip=tr("Range of the offset sliders"))
        self.range.addItems([f"±{r:g}" for r in POSE_RANGES])
        self.range.currentIndexChanged.connect(self._set_range)
        tip = tr("Multiply the whole pose vector (its length) by this factor")
        self.scale = QDoubleSpinBox(decimals=2, minimum=0.0, maximum=3.0, singleStep=0.05, value=1.0, toolTip=tip)
        self.scale.valueChanged.connect(self._update_reconstruction)
        self.reset_button = QPushButton(tr("Reset"), toolTip=tr("Offsets back to 0 and length × 1"), clicked=self.reset)
        tip = tr("Reconstructions with each dimension moved from -0.25 to +0.25")
        self.grid_button = QPushButton(tr("Fig. 4 grid…"), toolTip=tip, clicked=self.show_grid)
        self.sliders: list[QLabeledDoubleSlider] = []
        self.inferred_labels: list[QLabel] = []
        self.headings: list[QLabel] = []  # over each half of the grid: "inferred", "offset"
        grid_layout = QGridLayout()
        grid_layout.setVerticalSpacing(1)
        inferred_tip = tr("the value of each dimension inferred for this input")
        offset_tip = tr("the offset the slider adds to the inferred value")
        for col in (0, 3):
            for dc, text, align, tip in (
                (1, tr("inferred"), Qt.AlignmentFlag.AlignLeft, inferred_tip),
                (2, tr("offset"), Qt.AlignmentFlag.AlignRight, offset_tip),
            ):
                heading = QLabel(text, styleSheet="color: #505050;", toolTip=tip)
                grid_layout.addWidget(heading, 0, col + dc, alignment=align)
                self.headings.append(heading)
        for k in range(16):
            tip = tr("offset added to dimension {k} of the capsule's 16-D pose", k=k)
            s = offset_slider(-POSE_RANGES[0], POSE_RANGES[0], 0.0, 3, 0.01, tip)
            s.setObjectName(f"pose_slider_{k}")
            s.valueChanged.connect(self._update_reconstruction)
            tip = tr("inferred value of dimension {k}", k=k)
            inferred = QLabel("", styleSheet="color: #707070;", minimumWidth=48, toolTip=tip)
            at, col = 1 + k % 8, 3 * (k // 8)  # row 0: the headings
            grid_layout.addWidget(QLabel(f"d{k}"), at, col)
            grid_layout.addWidget(inferred, at, col + 1)
            grid_layout.addWidget(s, at, col + 2)
            self.sliders.append(s)
            self.inferred_labels.append(inferred)
        least = (110, 88)
        self.input_panel = ImagePanel(tr("input"), least=least)
        self.recon_panel = ImagePanel(tr("reconstruction"), least=least)
        self.diff_panel = ImagePanel(tr("reconstruction − input"), levels=(-1.0, 1.0), colormap=DIVERGING, least=least)
        self.status = QLabel("")
        self.status.setMinimumWidth(self.status.fontMetrics().horizontalAdvance("‖v‖ = 0.000"))  # no jump when set
        # as wide as "predicted (k)" from the start: the controls' width, and the dock's, stay as they are
        name_answer(self.digit, tr("predicted"), 8)
        self.digit.setMinimumWidth(self.digit.sizeHint().width())
        name_answer(self.digit, tr("predicted"), None)
        # the choices, and after them the buttons and the length readout; under the choices
        # where the view is narrower than both (then its least width is its images' and
        # sliders', for a dock beside a wide central view or on a small screen)
        self.choices = QWidget()
        choices = (tr("capsule"), self.digit, tr("range"), self.range, tr("length ×"), self.scale)
        row(*choices, margins=(0, 0, 0, 0), parent=self.choices)
        self.actions = QWidget()
        row(self.reset_button, self.grid_button, self.status, margins=(0, 0, 0, 0), parent=self.actions)
        self.header = QWidget()
        FlowRow(self.choices, self.actions, parent=self.header)
        images = row(*((panel, 1) for panel in (self.input_panel, self.recon_panel, self.diff_panel)))
        column(self.header, (images, 1), grid_layout, spacing=3, margins=(2, 2, 2, 2), parent=self)
        self.v: np.ndarray | None = None  # (10, 16) final digit capsules
        self.prediction: int | None = None
        self.image: np.ndarray | None = None
        self.reconstruction: np.ndarray | None = None
        self.grid_dialog: PerturbationDialog | None = None
        self.redraws = Redraws("pose", {"capsules": self._draw_capsules})
        names = ("pose_input", "pose_reconstruction", "pose_difference")  # of its plots' files
        self.figures = dict(zip(names, (self.input_panel, self.recon_panel, self.diff_panel)))
        self.digit.currentIndexChanged.connect(self._update_reconstruction)

    @property
    def two_rows(self) -> bool:
        """Whether the buttons and the length readout are under the choices (the view is
        narrower than both side by side)."""
        return self.actions.y() > self.choices.y()

    def selected_digit(self) -> int | None:
        return chosen_digit(self.digit, self.prediction)

    def offsets(self) -> np.ndarray:
        return np.array([s.value() for s in self.sliders], dtype=np.float32)

    def pose(self) -> np.ndarray | None:
        """The decoder input: (the selected capsule's pose + the slider offsets) × length, (16,)."""
        digit = self.selected_digit()
        if self.v is None or digit is None:
            return None
        return (self.v[digit] + self.offsets()) * np.float32(self.scale.value())

    def _draw_capsules(self) -> None:
        inf = self.inference
        self.set_capsules(*((None, None, None) if inf is None else (inf.input, inf.v[-1], inf.prediction)))

    def set_capsules(self, image: np.ndarray | None, v: np.ndarray | None, prediction: int | None) -> None:
        """``v``: (10, 16) digit capsule outputs for ``image`` (H, W); None clears."""
        self.v, self.prediction, self.image = v, prediction, image
        self.input_panel.set_image(image)
        name_answer(self.digit, tr("predicted"), prediction)
        self.digit.setMinimumWidth(self.digit.sizeHint().width())  # a narrow dock cuts no item short
        self._update_reconstruction()

    def _set_range(self, index: int) -> None:
        r = POSE_RANGES[index]
        for s in self.sliders:
            s.setRange(-r, r)

    def reset(self) -> None:
        """Offsets to 0 and the length scale to 1, the reconstruction redrawn."""
        self.clear_offsets()
        self._update_reconstruction()

    def clear_offsets(self) -> None:
        """Offsets to 0 and the length scale to 1, for a caller whose next inference redraws."""
        for s in self.sliders:
            set_quietly(s, 0.0)
        set_quietly(self.scale, 1.0)

    def _update_reconstruction(self, *_) -> None:
        pose = self.pose()
        digit = self.selected_digit()
        for k, label in enumerate(self.inferred_labels):
            label.setText("" if self.v is None or digit is None else f"{self.v[digit, k]:+.3f}")
        if pose is None or self.decode is None:
            self.reconstruction = None
            self.recon_panel.set_image(None)
            self.recon_panel.set_title(tr("reconstruction"))  # of no capsule
            self.diff_panel.set_image(None)
            self.status.setText("")
        else:
            self.reconstruction = self.decode(pose, digit)
            made = self.reconstruction
            shown, combined = (made, made) if self.compose is None else self.compose(digit, made)
            self.recon_panel.set_image(shown)
            self.recon_panel.set_title(tr("reconstruction from capsule {k}", k=digit))
            self.diff_panel.set_image(combined - self.image)
            self.status.setText(f"‖v‖ = {np.linalg.norm(pose):.3f}")
        self.reconstructionChanged.emit()

    def show_grid(self) -> PerturbationDialog | None:
        """Open the Fig. 4 grid for the selected capsule (its pose with the current offsets)."""
        pose, digit = self.pose(), self.selected_digit()
        if pose is None or self.grid is None:
            return None
        self.grid_dialog = PerturbationDialog(self.grid(pose, digit), digit, self)
        self.grid_dialog.show()
        return self.grid_dialog
