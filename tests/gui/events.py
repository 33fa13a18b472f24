"""Real mouse events for the GUI tests."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication


def mouse_event(widget, kind, p, button, buttons) -> QMouseEvent:
    """A mouse event of ``kind`` at widget position ``p`` (x, y)."""
    pos = QPointF(*p)
    return QMouseEvent(
        kind, pos, QPointF(widget.mapToGlobal(QPoint(*p))), button, buttons, Qt.KeyboardModifier.NoModifier
    )


def drag(widget, points):
    """Press at the first point, move through the others with the button held, release."""

    def send(kind, p, button, buttons):
        QApplication.sendEvent(widget, mouse_event(widget, kind, p, button, buttons))

    left = Qt.MouseButton.LeftButton
    send(QEvent.Type.MouseButtonPress, points[0], left, left)
    for p in points[1:]:
        send(QEvent.Type.MouseMove, p, Qt.MouseButton.NoButton, left)
    send(QEvent.Type.MouseButtonRelease, points[-1], left, Qt.MouseButton.NoButton)


def press_move_release(widget, press, moves=(), release=None):
    """Post a press at ``press``, then moves with the left button held (or release at
    ``release``), and let the event loop deliver them, as it delivers a user's: an error
    in a handler reaches ``sys.excepthook`` (pytest-qt fails the test with it), where a
    ``sendEvent`` from Python lets PySide6 6.11.3 crash the process on it."""
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    if press is not None:
        QApplication.postEvent(widget, mouse_event(widget, QEvent.Type.MouseButtonPress, press, left, left))
    for p in moves:
        QApplication.postEvent(widget, mouse_event(widget, QEvent.Type.MouseMove, p, none, left))
    if release is not None:
        QApplication.postEvent(widget, mouse_event(widget, QEvent.Type.MouseButtonRelease, release, left, none))
    QApplication.processEvents()


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


def start_training(qtbot, window, train_subset: int, test_subset: int = 100) -> None:
    """Click the Training panel's Start for a run of batches of 16 on ``train_subset`` digits
    (tested on ``test_subset``), and wait until it has taken two steps."""
    panel = window.training_panel
    panel.batch_size.setValue(16)
    panel.train_subset.setValue(train_subset)
    panel.test_subset.setValue(test_subset)
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.history["step"]) >= 2, timeout=60000)


def pause_training(qtbot, window) -> None:
    """Click Pause and wait until the run says it has paused (its PausedEvent)."""
    paused = lambda ev: type(ev).__name__ == "PausedEvent"  # noqa: E731
    with qtbot.waitSignal(window.core.trainingEvent, check_params_cb=paused):
        qtbot.mouseClick(window.training_panel.pause_button, Qt.MouseButton.LeftButton)


def hover_vote(qtbot, panel, i):
    """Move the mouse onto vote ``i`` of ``panel`` (a VotePanel), from 3 px off it."""
    scene = panel.plot.getPlotItem().vb.mapViewToScene(QPointF(*panel.points[i]))
    pos = panel.plot.mapFromScene(scene)
    qtbot.mouseMove(panel.plot.viewport(), pos - type(pos)(3, 3))
    # pyqtgraph's scene drops a move that comes within 1/mouseRateLimit s of the last one
    # (QTest's delay argument only stamps the event, so wait for real)
    qtbot.wait(int(5 * 1000 / pg.getConfigOption("mouseRateLimit")))
    qtbot.mouseMove(panel.plot.viewport(), pos)
