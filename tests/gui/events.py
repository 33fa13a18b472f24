"""Real mouse events for the GUI tests."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication


def drag(widget, points):
    """Press at the first point, move through the others with the button held, release."""

    def send(kind, p, button, buttons):
        pos = QPointF(*p)
        ev = QMouseEvent(
            kind, pos, QPointF(widget.mapToGlobal(QPoint(*p))), button, buttons, Qt.KeyboardModifier.NoModifier
        )
        QApplication.sendEvent(widget, ev)

    left = Qt.MouseButton.LeftButton
    send(QEvent.Type.MouseButtonPress, points[0], left, left)
    for p in points[1:]:
        send(QEvent.Type.MouseMove, p, Qt.MouseButton.NoButton, left)
    send(QEvent.Type.MouseButtonRelease, points[-1], left, Qt.MouseButton.NoButton)


def drag_slider(slider, dx):
    """Drag a slider's handle by ``dx`` pixels with the mouse."""
    from PySide6.QtWidgets import QStyle

    rect = slider.style().subControlRect(
        QStyle.ComplexControl.CC_Slider, slider._styleOption, QStyle.SubControl.SC_SliderHandle, slider
    )
    c = rect.center()
    drag(slider, [(c.x(), c.y()), (c.x() + dx // 2, c.y()), (c.x() + dx, c.y())])


def settle(qtbot, window, timeout: int = 5000) -> None:
    """Wait until every view of ``window`` shows the current input: the redraw scheduler's
    ``idle`` signal (at once when it is idle already), then one more event-loop turn for
    the last view to lay out what it was given."""
    if not window.scheduler.is_idle:
        with qtbot.waitSignal(window.scheduler.idle, timeout=timeout):
            pass
    QApplication.processEvents()
