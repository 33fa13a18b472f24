"""The drawing canvas (white ink on black, round caps) and the input panel around it."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QKeySequence, QPainter, QPen, QShortcut
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QSizePolicy, QSpinBox, QWidget
from superqt.utils import qthrottled

from capsviz import explanations
from capsviz.data.images import grey_levels
from capsviz.data.preprocess import preprocess_ink, preprocess_strokes
from capsviz.explorer import Redraws, prediction_line
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import ImagePanel, InferenceView, column, row

CANVAS_SIZE = 280
CANVAS_LEAST = 224  # px on screen the input panel's canvas keeps in a short window (8x the 28 x 28 input)
DEFAULT_BRUSH = 22
ROUND = (Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin)  # the brush's line and ends


class DrawingCanvas(QWidget):
    """A square ink canvas. ``ink()`` returns (H, W) float32 in [0, 1]; ``strokes()`` the
    pen paths when the drawing is made of strokes alone; ``model_input()`` the 28x28 input.

    The ink is held at ``size`` x ``size`` pixels whatever the canvas's size on screen: the
    canvas shows it ``size`` pixels wide where the layout has room, and as small as ``least``
    (default ``size``: a fixed size) where it has not, scaling the pen's positions to the
    ink's pixels. Its ink, strokes and brush width are in the ink's pixels.

    Signals
    -------
    inkChanged : emitted while a stroke is drawn (throttled) and when it ends.
    """

    inkChanged = Signal()

    def __init__(self, size: int = CANVAS_SIZE, least: int | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setFixedSize(size, size)
        if least is not None:  # its height the layout's to give, its width that height
            self.setMinimumHeight(least)
            self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setToolTip(tr("Draw a digit with the mouse or a pen. Ctrl+Z undo, Ctrl+Shift+Z redo, Del clear."))
        self._image = QImage(size, size, QImage.Format.Format_Grayscale8)
        self._image.fill(0)
        # each undo / redo entry: the image and its strokes (None once an image was set)
        self._undo: list[tuple[QImage, list | None]] = []
        self._redo: list[tuple[QImage, list | None]] = []
        self._strokes: list[list[tuple[float, float]]] | None = []
        self._last: QPointF | None = None
        self.brush_width = DEFAULT_BRUSH
        self._emit_throttled = qthrottled(self.inkChanged.emit, timeout=30, parent=self)  # dies with the canvas

    # -- content ----------------------------------------------------------------
    def ink(self) -> np.ndarray:
        """Ink intensity, (H, W) float32 in [0, 1]."""
        img = self._image
        ptr = img.constBits()
        arr = np.frombuffer(ptr, dtype=np.uint8).reshape(img.height(), img.bytesPerLine())[:, : img.width()]
        return arr.astype(np.float32) / 255.0

    def strokes(self) -> list[np.ndarray] | None:
        """The pen paths of the drawing: one (K, 2) float64 array of canvas positions (x, y)
        per stroke, in drawing order; None when the canvas holds an image put there by
        :meth:`set_ink` (its ink is then only an image)."""
        if self._strokes is None:
            return None
        return [np.array(stroke, dtype=np.float64) for stroke in self._strokes]

    def model_input(self) -> np.ndarray | None:
        """The (28, 28) float32 model input of what is on the canvas, or None when empty: a
        drawing of strokes drawn again at MNIST's stroke width, whatever the brush
        (:func:`~capsviz.data.preprocess.preprocess_strokes`), anything else preprocessed as
        an image (:func:`~capsviz.data.preprocess.preprocess_ink`)."""
        strokes = self.strokes()
        return preprocess_ink(self.ink()) if strokes is None else preprocess_strokes(strokes)

    def is_empty(self) -> bool:
        return not bool(self.ink().any())

    def set_ink(self, ink: np.ndarray, emit: bool = True) -> None:
        """Replace the drawing with ``ink`` ((h, w) in [0, 1]), scaled to fit the canvas and
        centred, keeping its aspect ratio; undoable. ``emit=False`` skips ``inkChanged``
        (when the caller sets the model input itself)."""
        self._push_undo()
        self._strokes = None
        self._last = None  # a stroke in progress ends here
        a = np.ascontiguousarray(grey_levels(ink))
        src = QImage(a.data, a.shape[1], a.shape[0], a.shape[1], QImage.Format.Format_Grayscale8).copy()
        self._image.fill(0)
        size = self._image.width()
        scale = size / max(a.shape)
        w, h = a.shape[1] * scale, a.shape[0] * scale
        p = QPainter(self._image)
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        p.drawImage(QRectF((size - w) / 2, (size - h) / 2, w, h), src)
        p.end()
        self.update()
        if emit:
            self.inkChanged.emit()

    def clear(self) -> None:
        if self.is_empty():
            return
        self._push_undo()
        self._image.fill(0)
        self._strokes = []
        self._last = None  # a stroke in progress ends here
        self.update()
        self.inkChanged.emit()

    def undo(self) -> None:
        self._step(self._undo, self._redo)

    def redo(self) -> None:
        self._step(self._redo, self._undo)

    def _step(self, back: list, forth: list) -> None:
        """Go to the last state of ``back``, keeping the present one on ``forth`` (undo, redo).
        A stroke in progress ends: the button's further moves draw nothing until it is
        pressed again."""
        if back:
            forth.append(self._state())
            self._image, self._strokes = back.pop()
            self._last = None
            self.update()
            self.inkChanged.emit()

    def _state(self) -> tuple[QImage, list | None]:
        strokes = None if self._strokes is None else [list(stroke) for stroke in self._strokes]
        return self._image.copy(), strokes

    def _push_undo(self) -> None:
        self._undo.append(self._state())
        del self._undo[:-50]
        self._redo.clear()

    def sizeHint(self) -> QSize:
        return QSize(self._image.width(), self._image.height())

    def side(self) -> int:
        """The pixels on screen of the square the ink is shown in (at the top left)."""
        return min(self.width(), self.height(), self._image.width())

    def resizeEvent(self, event) -> None:
        """Square on screen: as wide as the layout lets it be high."""
        super().resizeEvent(event)
        side = min(self.height(), self._image.width())
        if self.minimumHeight() != self.maximumHeight() and self.width() != side:
            self.setFixedWidth(side)

    def _ink_position(self, pos: QPointF) -> QPointF:
        """A position on screen as a position on the ink's pixels."""
        return pos * (self._image.width() / self.side())

    # -- painting -----------------------------------------------------------------
    def _draw_to(self, pos: QPointF) -> None:
        p = QPainter(self._image)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(QPen(QColor(255, 255, 255), self.brush_width, *ROUND))
        if self._last is None or self._last == pos:
            p.drawPoint(pos)
        else:
            p.drawLine(self._last, pos)
        p.end()
        if self._strokes is not None and self._last is None:
            self._strokes.append([(pos.x(), pos.y())])
        elif self._strokes is not None and self._last != pos:
            self._strokes[-1].append((pos.x(), pos.y()))
        self._last = pos
        self.update()

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._push_undo()
            self._last = None
            self._draw_to(self._ink_position(event.position()))
            self._emit_throttled()

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton and self._last is not None:
            self._draw_to(self._ink_position(event.position()))
            self._emit_throttled()

    def mouseReleaseEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._last is not None:
            self._draw_to(self._ink_position(event.position()))
            self._last = None
            self.inkChanged.emit()

    def paintEvent(self, event) -> None:
        side = self.side()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        p.drawImage(QRect(0, 0, side, side), self._image)
        p.setPen(QColor(70, 70, 70))
        p.drawRect(0, 0, side - 1, side - 1)
        p.end()


def canvas_keys(canvas: DrawingCanvas, owner: QWidget, context=Qt.ShortcutContext.WindowShortcut) -> None:
    """The keys ``canvas``'s tooltip names, as shortcuts of ``owner`` in ``context``: undo
    (Ctrl+Z), redo (each of the platform's: Ctrl+Y and Ctrl+Shift+Z) and clear (Del)."""
    for keys, slot in (
        (QKeySequence.StandardKey.Undo, canvas.undo),
        (QKeySequence.StandardKey.Redo, canvas.redo),
        (QKeySequence.StandardKey.Delete, canvas.clear),
    ):
        for sequence in QKeySequence.keyBindings(keys):
            QShortcut(sequence, owner, activated=slot, context=context)


class InputPanel(QWidget, InferenceView):
    """Canvas, drawing tools, and the exact 28x28 tensor the model sees.

    Signals
    -------
    inputChanged(object) : the new (28, 28) float32 input, or None for an empty canvas.
    """

    inputChanged = Signal(object)
    sampleRequested = Signal()
    openRequested = Signal()
    inkPolarityChanged = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.canvas = DrawingCanvas(least=CANVAS_LEAST)
        self.preview = ImagePanel(tr("model input (28×28)"), least=(150, 170))
        self.preview.setMaximumSize(150, 170)
        tip = tr("The digit capsule with the longest vector; its length ‖v_j‖ in brackets")
        # wrapped: a long message wraps within the column, never widens the panel
        self.prediction = QLabel(tr("no digit"), objectName="predictionLabel", wordWrap=True, toolTip=tip)
        self.prediction.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.prediction.setStyleSheet("font-size: 20pt; font-weight: bold;")

        tip = tr(explanations.BRUSH)
        self.brush = QSpinBox(minimum=4, maximum=60, value=DEFAULT_BRUSH, suffix=" px", toolTip=tip)
        self.brush.valueChanged.connect(lambda w: setattr(self.canvas, "brush_width", w))
        self.clear_button = QPushButton(tr("Clear"), clicked=self.canvas.clear)
        self.undo_button = QPushButton(tr("Undo"), clicked=self.canvas.undo)
        self.redo_button = QPushButton(tr("Redo"), clicked=self.canvas.redo)
        tip = tr("Put a random digit of the MNIST test sample on the canvas")
        self.sample_button = QPushButton(tr("MNIST sample"), toolTip=tip)
        self.sample_button.clicked.connect(self.sampleRequested)  # a signal: not a constructor keyword
        tip = tr("Classify an image file (or drop one on the window, or paste with Ctrl+V)")
        self.open_button = QPushButton(tr("Open image…"), toolTip=tip)
        self.open_button.clicked.connect(self.openRequested)
        self.polarity = QComboBox(toolTip=tr(explanations.INK_POLARITY))
        for text, value in (
            (tr("ink: auto"), None),
            (tr("ink: light on dark"), False),
            (tr("ink: dark on light"), True),
        ):
            self.polarity.addItem(text, value)
        self.polarity.currentIndexChanged.connect(self.inkPolarityChanged)
        grey = "color: #505050;"
        self.source = QLabel("", styleSheet=grey)
        canvas_keys(self.canvas, self)

        tools = row(self.clear_button, self.undo_button, self.redo_button, tr("brush"), self.brush, 1)
        sources = row(self.sample_button, self.open_button, self.polarity, 1)
        title = QLabel(tr("prediction"))
        self._side = column(self.preview, title, self.prediction, 1)
        self._side.setAlignment(title, Qt.AlignmentFlag.AlignHCenter)
        self._top = row(self.canvas, self._side, 1)
        # one line under the buttons: where the input came from, or, for a drawing, what to do
        hint = tr("Draw a digit with the mouse: it is classified while you draw.")
        self.hint = QLabel(hint, styleSheet=grey, toolTip=self.canvas.toolTip())
        self.preview.setToolTip(tr(explanations.MODEL_INPUT))
        # close rows: the panel fits a 640-pixel-high window in either language
        parts = (self._top, tools, sources, row(self.source, self.hint, 1), 1)
        column(*parts, spacing=3, margins=(9, 2, 9, 2), parent=self)
        self._show_source("")
        self.current: np.ndarray | None = None
        self.canvas.inkChanged.connect(self._on_ink)
        self.redraws = Redraws("input", {"prediction": self._draw_prediction}, urgent=("prediction",))
        self.figures = {"model_input": self.preview}  # its plots, by the file name an export gives them

    def minimumSizeHint(self) -> QSize:
        """At least the height the panel needs at its narrowest. QMainWindow sizes its central
        widget by this hint alone, and the plain hint assumes the wrapped prediction text gets
        a wider line than the column beside the canvas gives it: squeezed to that, the canvas
        would cover the buttons under it."""
        hint = super().minimumSizeHint()
        label = self.prediction
        wrapped = label.heightForWidth(self._side.minimumSize().width()) - label.minimumSizeHint().height()
        top = max(self.canvas.minimumHeight(), self._side.minimumSize().height() + max(0, wrapped))
        return QSize(hint.width(), hint.height() - self._top.minimumSize().height() + top)

    def invert_choice(self) -> bool | None:
        """The polarity for image files: None (auto), False (light ink), True (dark ink: invert)."""
        return self.polarity.currentData()

    def set_input(self, image: np.ndarray, ink: np.ndarray | None = None, source: str = "") -> None:
        """Use ``image`` ((28, 28) float32 in [0, 1]) as the model input exactly, and show
        ``ink`` (default ``image``) on the canvas. Drawing on it afterwards goes back to
        preprocessing the canvas."""
        self.canvas.set_ink(image if ink is None else ink, emit=False)
        self.current = np.asarray(image, dtype=np.float32)
        self._show_source(source)
        self.preview.set_image(self.current)
        self.inputChanged.emit(self.current)

    def _show_source(self, source: str) -> None:
        """Say where the input came from; with no source (a drawing), the hint in its place."""
        self.source.setText(source)
        # the one going first: with both shown at once the panel would need both widths, and
        # a window at its screen's width would grow past it
        going, coming = (self.hint, self.source) if source else (self.source, self.hint)
        going.setVisible(False)
        coming.setVisible(True)

    def _on_ink(self) -> None:
        self._show_source("")
        self.current = self.canvas.model_input()
        self.preview.set_image(self.current)
        if self.current is None:
            self.prediction.setText(tr("no digit"))
        self.inputChanged.emit(self.current)

    def _draw_prediction(self) -> None:
        inf = self.inference
        answer = (None,) if inf is None else (inf.prediction, float(inf.lengths[-1, inf.prediction]), inf.recognised)
        self.set_prediction(*answer)

    def set_prediction(self, digit: int | None, length: float | None = None, recognised: bool = True) -> None:
        """Show the predicted ``digit`` and its capsule's ``length``, or that nothing is
        ``recognised`` (:func:`~capsviz.explorer.prediction_line`)."""
        text = prediction_line(digit, length, recognised, tr)
        if text != self.prediction.text():
            self.prediction.setText(text)
