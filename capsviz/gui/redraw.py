"""One scheduler for every view's redraws.

A new input, a weight snapshot or a control change asks several views to redraw, and the
plots behind a view take from under a millisecond (a label) to tens of milliseconds (the
routing maps). Drawn in the event-loop turn that asked for them, a stream of inputs (a
stroke being drawn) would leave the GUI thread no turn to paint the canvas in. Views
therefore register *named parts* (a callable each, drawing what the view holds) with a
:class:`RedrawScheduler` and *request* them; the scheduler draws them over later turns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QElapsedTimer, QEventLoop, QObject, QTimer, Signal

# Least time between two turns while the machine is busy (training, or inference still to
# come): each part then redraws about 6 times a second during a stroke.
BUSY_INTERVAL_MS = 30
# How often an ordinary turn held back by ``hold()`` looks again, and how long it waits at
# most: under a stream of input faster than the passes, a newer pass is always under way.
HOLD_RETRY_MS = 4
HOLD_MAX_MS = 100


class RedrawScheduler(QObject):
    """Draws requested parts in turns.

    - A part is a name and a callable without arguments; parts are taken in the order they
      were registered.
    - :meth:`request` marks parts to draw. A part requested again before it is drawn is
      drawn once (requests merge), with what its view holds then.
    - *Urgent* parts (the prediction, the length bars: what a user watches while drawing)
      are drawn together, in the event-loop pass after they are requested, unless they
      were drawn less than ``interval()`` ms before: then once that time is up.
    - The other parts are drawn one per turn, round the list from the part after the last
      one drawn, so under a stream of requests every view keeps its turn; turns are at
      least ``interval()`` ms apart.
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
        super().__init__(parent)
        self._busy = busy
        self._waiting = waiting
        self._hold = hold
        self._draw: dict[str, Callable[[], None]] = {}
        self._order: list[str] = []  # ordinary parts, in registration order
        self._urgent: list[str] = []
        self._requested: set[str] = set()
        self._turn = 0  # position in _order the next ordinary part is looked for from
        self._since = QElapsedTimer()  # time since the last turn
        self._held = QElapsedTimer()  # since the turn now held back was first held (else invalid)
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(self._run_turn)
        self._urgent_since = QElapsedTimer()  # time since the urgent parts were drawn
        self._urgent_timer = QTimer(self, singleShot=True)
        self._urgent_timer.timeout.connect(self._run_urgent)
        self._stopped = False

    def register(self, name: str, draw: Callable[[], None], urgent: bool = False) -> None:
        """Add part ``name``. Raises ``ValueError`` for a name already registered."""
        if name in self._draw:
            raise ValueError(f"redraw part {name!r} is registered already")
        self._draw[name] = draw
        (self._urgent if urgent else self._order).append(name)

    @property
    def parts(self) -> list[str]:
        """Every registered part: the urgent ones, then the ordinary ones, each in registration order."""
        return self._urgent + self._order

    @property
    def requested(self) -> set[str]:
        """The parts requested and not yet drawn."""
        return set(self._requested)

    def interval(self) -> int:
        """The least time between turns now, in ms."""
        return BUSY_INTERVAL_MS if self._busy() else 0

    def request(self, *names: str) -> None:
        """Draw parts ``names`` in a coming turn. Raises ``KeyError`` for a name not registered."""
        for name in names:
            if name not in self._draw:
                raise KeyError(f"no redraw part {name!r}")
        if self._stopped:
            return
        self._requested.update(names)
        for urgent, timer, since in ((True, self._urgent_timer, self._urgent_since), (False, self._timer, self._since)):
            if not timer.isActive() and any((name in self._urgent) == urgent for name in names):
                elapsed = since.elapsed() if since.isValid() else 1 << 30
                timer.start(max(0, self.interval() - elapsed))

    def flush(self) -> None:
        """Draw every requested part now, in order (the caller needs the views up to date at once)."""
        self._timer.stop()
        self._urgent_timer.stop()
        while self._requested and not self._stopped:
            self._draw_one(next(name for name in self.parts if name in self._requested))
        self.check_idle()

    def check_idle(self) -> None:
        """Emit ``idle`` if nothing is left to draw and nothing is awaited (a caller whose
        awaited result did not come, e.g. it failed, calls this)."""
        if not self._stopped and not self._requested and not self._waiting():
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

    def _draw_one(self, name: str) -> None:
        self._requested.discard(name)
        self._draw[name]()

    def _run_urgent(self) -> None:
        self._urgent_since.start()
        for name in self._urgent:
            if name in self._requested:
                self._draw_one(name)
        self.check_idle()

    def _run_turn(self) -> None:
        if self._hold() and not (self._held.isValid() and self._held.elapsed() >= HOLD_MAX_MS):
            if not self._held.isValid():
                self._held.start()
            self._timer.start(HOLD_RETRY_MS)
            return
        self._held.invalidate()
        self._since.start()
        ordinary = [i for i, name in enumerate(self._order) if name in self._requested]
        if ordinary:
            i = next((i for i in ordinary if i >= self._turn), ordinary[0])
            self._turn = i + 1
            self._draw_one(self._order[i])
        if any(name in self._requested for name in self._order):
            self._timer.start(self.interval())
        else:
            self._turn = 0
            self.check_idle()


class Redraws:
    """A view's named parts: drawn at once, or, once :meth:`register` gave them to a
    :class:`RedrawScheduler`, in its turns (as ``"prefix/name"``).

    Parameters
    ----------
    prefix : str
        The view's name, the first half of each part's scheduler name.
    parts : dict
        Part name -> callable drawing it, in drawing order.
    urgent : iterable of str
        The parts drawn in every turn they are requested in.
    """

    def __init__(self, prefix: str, parts: dict[str, Callable[[], None]], urgent: Iterable[str] = ()) -> None:
        self.prefix = prefix
        self.parts = dict(parts)
        self.urgent = set(urgent)
        self.scheduler: RedrawScheduler | None = None

    def register(self, scheduler: RedrawScheduler) -> None:
        for name, draw in self.parts.items():
            scheduler.register(f"{self.prefix}/{name}", draw, urgent=name in self.urgent)
        self.scheduler = scheduler

    def request(self, *names: str) -> None:
        """Draw ``names`` (default: every part): now, or in the scheduler's coming turns."""
        names = names or tuple(self.parts)
        if self.scheduler is None:
            for name in names:
                self.parts[name]()
        else:
            self.scheduler.request(*(f"{self.prefix}/{name}" for name in names))
