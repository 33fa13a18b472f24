"""Transforms view: rotate, scale, move, shear and re-stroke the input, and watch which
pose dimensions of a digit capsule follow a transform while its length stays."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QPushButton, QWidget
from superqt import QLabeledDoubleSlider

from capsviz import explanations
from capsviz.data.transforms import PARAMETERS, InputTransform, sweep_values
from capsviz.explorer import Redraws
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import (
    KeyEntry,
    SeriesKey,
    chosen_digit,
    clear_data,
    column,
    digit_choice,
    level_line,
    marker,
    name_answer,
    offset_slider,
    plot,
    row,
    set_quietly,
    set_y_extent,
    settle,
)
from capsviz.model.analysis import recognition_line, sweep_summary
from capsviz.model.losses import RECOGNITION_THRESHOLD

CNN_PEN = (190, 110, 210)
SWEEP_STEPS = 21
AXIS_WIDTH = 58  # pixels for the y axis label and tick labels ("-0.75")
IDENTITY = InputTransform()  # the sliders' values at start and after a reset
Y_STEP = 0.25  # the y range grows and shrinks in these steps, within [-1, 1] (|v_jd| <= ‖v_j‖ < 1)


def with_unit(label: str, unit: str) -> str:
    """A parameter's name with its unit in brackets (none for a unit that is blank)."""
    return tr("{label} ({unit})", label=label, unit=unit.strip()) if unit.strip() else label


class TransformView(QWidget):
    """Six transform sliders, reset, and the pose-versus-parameter sweep plot.

    Signals
    -------
    transformChanged(object) : the new :class:`InputTransform`.
    sweepRequested() : the sweep settings changed (the parameter; the capsule, where no sweep of
        this input is on screen to draw it from).
    """

    transformChanged = Signal(object)
    sweepRequested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setToolTip(tr(explanations.TRANSFORMS))
        self.sliders: dict[str, QLabeledDoubleSlider] = {}
        grid = QGridLayout()  # two sliders a row (rotate and scale, move x and y, shear and stroke)
        grid.setHorizontalSpacing(10)
        for k, (name, label, low, high, unit) in enumerate(PARAMETERS):
            fine = name in ("scale", "thickness")
            slider = offset_slider(low, high, getattr(IDENTITY, name), 2 if fine else 1, 0.01 if fine else 0.5)
            slider.valueChanged.connect(self._emit)
            grid.addWidget(QLabel(with_unit(tr(label), unit)), k // 2, 2 * (k % 2))
            grid.addWidget(slider, k // 2, 2 * (k % 2) + 1)
            self.sliders[name] = slider
        self.reset_button = QPushButton(tr("Reset"), clicked=self.reset)

        self.parameter = QComboBox(toolTip=tr("The transform swept along the plot's x axis"))
        for name, label, *_ in PARAMETERS:
            self.parameter.addItem(tr(label), name)
        self.capsule = digit_choice(tr("The digit capsule whose pose is plotted"))
        self.parameter.currentIndexChanged.connect(self.sweepRequested)
        self.capsule.currentIndexChanged.connect(self._show_capsule)
        self._computed: tuple | None = None  # show_sweep's arguments of the sweep on screen: it holds every capsule

        # the key under the title names the lines; a fixed axis width: tick labels of another
        # width would lay the plot out and paint it again on each sweep
        title = tr("pose of the capsule along the sweep")
        self.plot = plot(title, left=tr("pose, length"), axis_width=AXIS_WIDTH, sparse=False)
        self.pose_curves = [self.plot.plot(pen=pg.mkPen(pg.intColor(d, 16, alpha=200), width=1)) for d in range(16)]
        self.length_curve = self.plot.plot(pen=pg.mkPen("w", width=3))
        self.cnn_curve = self.plot.plot(pen=pg.mkPen(CNN_PEN, width=3, style=Qt.PenStyle.DashLine))
        self.key = SeriesKey(self.plot)  # under the title: the pose dimensions, the length, the CNN
        self.marker = marker()
        self.plot.addItem(self.marker)
        # where the input stops being read as the digit: the capsule's length under 0.5
        self.threshold = level_line(RECOGNITION_THRESHOLD, f"{RECOGNITION_THRESHOLD:g}", (150, 150, 150), (1, 0))
        self.threshold.setToolTip(tr(
            "a digit counts as recognised where its capsule is the longest and at least this long"
        ))  # fmt: skip
        self.plot.addItem(self.threshold)
        self.summary = QLabel("", wordWrap=True)
        top = row(tr("sweep"), self.parameter, tr("capsule"), self.capsule, 1, self.reset_button)
        column(grid, top, (self.plot, 1), self.summary, margins=(4, 4, 4, 4), parent=self)
        self.sweep: dict | None = None
        self._titles: tuple[str, str] | None = None
        self._pending: tuple | None = None  # the arguments of set_sweep the part draws
        self.stale = True  # whether the sweep shown is of an earlier input or model, or none was computed
        self.redraws = Redraws("transforms", {"sweep": self._draw_sweep})
        self.figures = {"transform_sweep": self.plot}  # its plots, by the file name an export gives them

    # -- transform -------------------------------------------------------------------------
    def transform(self) -> InputTransform:
        return InputTransform(**{name: float(s.value()) for name, s in self.sliders.items()})

    def reset(self) -> None:
        for name, s in self.sliders.items():
            set_quietly(s, getattr(IDENTITY, name))
        self._emit()

    def _emit(self, *_) -> None:
        self.transformChanged.emit(self.transform())

    # -- sweep -----------------------------------------------------------------------------------
    def sweep_transforms(self) -> tuple[str, np.ndarray, list[InputTransform]]:
        """(name, values, transforms): the swept parameter, SWEEP_STEPS values over its range,
        and the transform on the sliders with the parameter at each value."""
        name = self.parameter.currentData()
        values = sweep_values(name, SWEEP_STEPS)
        base = self.transform()
        return name, values, [base.with_value(name, v) for v in values]

    def show_sweep(
        self,
        name: str | None,
        values: np.ndarray | None,
        v: np.ndarray | None,
        prediction: int | None,
        baseline: np.ndarray | None = None,
    ) -> None:
        """Show a computed sweep of parameter ``name`` over ``values`` (K,), ``v`` (K, classes,
        pose dims) the digit capsules at each, ``baseline`` (K, classes) a CNN's probabilities
        at each (or None), through :attr:`redraws`; None clears. The plotted
        capsule is the chosen one, else ``prediction``, else the longest at the middle of the
        sweep. A sweep of a parameter no longer chosen is ignored (the change asked for another)."""
        if name is None or values is None or v is None:
            self._pending, self._computed = (None,), None
            name_answer(self.capsule, tr("predicted"), None)
        elif name != self.parameter.currentData():
            return
        else:
            self._computed = (name, values, v, prediction, baseline)
            name_answer(self.capsule, tr("predicted"), prediction)
            lengths = np.linalg.norm(v, axis=-1)  # (K, classes)
            middle = int(lengths[len(v) // 2].argmax())  # the longest there
            digit = chosen_digit(self.capsule, middle if prediction is None else prediction)
            self._pending = (values, v[:, digit], digit, None if baseline is None else baseline[:, digit], lengths)
        self.stale = False
        self.redraws.request()

    def _show_capsule(self) -> None:
        """Another capsule chosen: the sweep on screen holds it, so it is drawn from there; a
        sweep of an earlier input (:attr:`stale`), or none yet, is asked for."""
        if self._computed is not None and not self.stale:
            self.show_sweep(*self._computed)
        else:
            self.sweepRequested.emit()

    def _draw_sweep(self) -> None:
        if self._pending is not None:
            self.set_sweep(*self._pending)

    def key_entries(self, digit: int, cnn: bool) -> list[KeyEntry]:
        """What the plot's key names for capsule ``digit``: its 16 pose dimensions, its length,
        and with ``cnn`` the CNN's probability of the digit."""
        colours = tuple(pg.intColor(d, 16) for d in (0, 5, 10))  # a few of the 16 lines' colours
        dims = KeyEntry(tr("the 16 dimensions of v_{k}", k=digit), tuple(self.pose_curves), colours, "line")
        entries = [dims, KeyEntry(tr("length ‖v_{k}‖", k=digit), (self.length_curve,), ("w",), "line")]
        if cnn:
            entries.append(KeyEntry(f"CNN p({digit})", (self.cnn_curve,), (CNN_PEN,), "dash"))
        return entries

    def set_sweep(
        self,
        values: np.ndarray | None,
        poses: np.ndarray | None = None,
        digit: int | None = None,
        cnn: np.ndarray | None = None,
        every_length: np.ndarray | None = None,
    ) -> None:
        """Show a sweep: ``values`` (K,) of the swept parameter, ``poses`` (K, 16) the
        capsule's v_j at each, ``cnn`` (K,) a CNN's probability of the same digit (or None),
        ``every_length`` (K, classes) every capsule's length at each (None: the summary does not say
        where the input reads as the digit); None clears."""
        if values is None or poses is None:
            self.sweep = None
            clear_data(*self.pose_curves, self.length_curve, self.cnn_curve)
            self.summary.setText("")
            return
        name = self.parameter.currentData()
        lengths = np.linalg.norm(poses, axis=1)
        self.sweep = {"name": name, "values": values, "poses": poses, "lengths": lengths, "digit": digit, "cnn": cnn}
        for d, curve in enumerate(self.pose_curves):
            curve.setData(values, poses[:, d])
        self.length_curve.setData(values, lengths)
        self.cnn_curve.setData([] if cnn is None else values, [] if cnn is None else cnn)
        at = float(getattr(self.transform(), name))  # the value the sliders set
        self.marker.setValue(at)
        label, unit = next((tr(lbl), unit) for n, lbl, _low, _high, unit in PARAMETERS if n == name)
        top = max(float(poses.max()), float(lengths.max()), 0.0 if cnn is None else float(cnn.max()))
        set_y_extent(self.plot, min(float(poses.min()), 0.0), top, Y_STEP, limits=(-1.0, 1.0))
        self.key.set_entries(self.key_entries(digit, cnn is not None))
        titles = (label, tr("capsule {k} along '{label}'", k=digit, label=label))
        if titles != self._titles:  # a title set again lays the plot out again, even when unchanged
            self._titles = titles
            self.plot.setLabel("bottom", with_unit(label, unit))
            self.plot.setTitle(titles[1], size="9pt")
            self.plot.setXRange(float(values[0]), float(values[-1]), padding=0.02)  # the parameter's range
        settle(self.plot)
        summary = sweep_summary(poses, digit, cnn, tr)
        if every_length is not None:
            summary = f"{recognition_line(values, every_length, digit, at, unit, tr)}; {summary}"
        self.summary.setText(summary)
