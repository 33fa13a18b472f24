"""One scheduler for every view's redraws.

A new input, a weight snapshot or a control change asks several views to redraw, and the
plots behind a view take from under a millisecond (a label) to tens of milliseconds (the
routing maps). Drawn in the event-loop turn that asked for them, a stream of inputs (a
stroke being drawn) would leave the GUI thread no turn to paint the canvas in. Views
therefore register *named parts* (a callable each, drawing what the view holds) with a
:class:`RedrawScheduler` and *request* them; the scheduler draws them over later turns.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QEventLoop, QObject, QTimer, Signal

from capsviz.explorer import RedrawQueue

# Least time between two turns while the machine is busy (training, or inference still to
# come): each part then redraws about 6 times a second during a stroke.
BUSY_INTERVAL_MS = 30
# How often an ordinary turn held back by ``hold()`` looks again, and how long it waits at
# most: under a stream of input faster than the passes, a newer pass is always under way.
HOLD_RETRY_MS = 4
HOLD_MAX_MS = 100


class RedrawScheduler(QObject, RedrawQueue):
    """Draws requested parts in turns: a :class:`~capsviz.explorer.RedrawQueue` (the parts,
    how requests merge, the urgent parts together, the ordinary ones round the list) on
    Qt's event loop.

    - :meth:`request` marks parts to draw. The urgent parts are drawn in the event-loop pass
      after they are requested, unless they were drawn less than ``interval()`` ms before:
      then once that time is up. The other parts are drawn one per turn; turns are at
      least ``interval()`` ms apart, and a turn due when the urgent parts are drawn comes
      in the event-loop pass after, so what they drew is painted first.
    - The policy: ``interval()`` is :data:`BUSY_INTERVAL_MS` while ``busy()``, else 0 (one
      part per event-loop pass).
    - While ``hold()`` is true (the pass of a newer input is under way), an ordinary turn
      waits, looking again every :data:`HOLD_RETRY_MS`, for at most :data:`HOLD_MAX_MS`:
      what it would draw is about to be replaced, and a part drawn meanwhile takes the core
      and the GIL that pass needs, so the length bars (urgent, never held) come later.
    - ``idle`` is emitted when no part is left to draw and ``waiting()`` is false (no
      result that will request parts is still to come). Tests wait on it with
      ``qtbot.waitSignal``; tools use :meth:`wait_idle`.

    Parameters
    ----------
    parent : QObject
    busy : callable, optional
        Returns True while the machine is busy (the interval is then :data:`BUSY_INTERVAL_MS`).
    waiting : callable, optional
        Returns True while a result that will request parts is still to come.
    hold : callable, optional
        Returns True while the ordinary parts are to wait (see above).
    """

    idle = Signal()

    def __init__(
        self,
        parent: QObject | None = None,
        busy: Callable[[], bool] = lambda: False,
        waiting: Callable[[], bool] = lambda: False,
        hold: Callable[[], bool] = lambda: False,
    ) -> None:
        QObject.__init__(self, parent)
        RedrawQueue.__init__(self)
        self._busy = busy
        self._waiting = waiting
        self._hold = hold
        self._since = QElapsedTimer()  # time since the last turn
        self._held = QElapsedTimer()  # since the turn now held back was first held (else invalid)
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(self._run_turn)
        self._urgent_since = QElapsedTimer()  # time since the urgent parts were drawn
        self._urgent_timer = QTimer(self, singleShot=True)
        self._urgent_timer.timeout.connect(self._run_urgent)
        self._stopped = False

    def interval(self) -> int:
        """The least time between turns now, in ms."""
        return BUSY_INTERVAL_MS if self._busy() else 0

    def request(self, *names: str) -> None:
        """Draw parts ``names`` in a coming turn. Raises ``KeyError`` for a name not registered."""
        kinds = self.mark(names, keep=not self._stopped)
        for urgent, timer, since in ((True, self._urgent_timer, self._urgent_since), (False, self._timer, self._since)):
            if urgent in kinds and not timer.isActive() and not self._stopped:
                elapsed = since.elapsed() if since.isValid() else 1 << 30
                timer.start(max(0, self.interval() - elapsed))

    def flush(self) -> None:
        """Draw every requested part now, in order (the caller needs the views up to date at once)."""
        self._timer.stop()
        self._urgent_timer.stop()
        while self._requested and not self._stopped:
            self.draw(next(name for name in self.parts if name in self._requested))
        self.check_idle()

    def check_idle(self) -> None:
        """Emit ``idle`` if nothing is left to draw and nothing is awaited (a caller whose
        awaited result did not come, e.g. it failed, calls this)."""
        if not self._stopped and self.is_idle:
            self.idle.emit()

    @property
    def is_idle(self) -> bool:
        """Nothing left to draw and nothing awaited."""
        return not self._requested and not self._waiting()

    def wait_idle(self, timeout_ms: int = 5000) -> bool:
        """Run the event loop until ``idle`` (for tools and benchmarks; returns False after
        ``timeout_ms``). Returns at once when already idle."""
        if self.is_idle:
            return True
        loop = QEventLoop()
        self.idle.connect(loop.quit)
        timer = QTimer(singleShot=True)
        timer.timeout.connect(loop.quit)
        timer.start(timeout_ms)
        loop.exec()
        self.idle.disconnect(loop.quit)
        return timer.isActive()

    def stop(self) -> None:
        """Draw nothing more (the window is closing)."""
        self._stopped = True
        self._requested.clear()
        self._timer.stop()
        self._urgent_timer.stop()

    def _run_urgent(self) -> None:
        self._urgent_since.start()
        self.draw_urgent()
        if self._timer.isActive():  # the ordinary turn due now waits for the next event-loop pass,
            # after the paint of what was just drawn (timers started by a timer's slot are not
            # run in the pass that runs it; posted events, the paints among them, go first)
            self._timer.start(max(0, self._timer.remainingTime()))
        self.check_idle()

    def _run_turn(self) -> None:
        if self._hold() and not (self._held.isValid() and self._held.elapsed() >= HOLD_MAX_MS):
            if not self._held.isValid():
                self._held.start()
            self._timer.start(HOLD_RETRY_MS)
            return
        self._held.invalidate()
        self._since.start()
        if self.draw_next():
            self._timer.start(self.interval())
        else:
            self.check_idle()
