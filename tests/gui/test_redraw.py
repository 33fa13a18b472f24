"""The redraw scheduler: named parts, merged requests, turns, the interval policy and idle."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer

from capsviz.explorer import Redraws
from capsviz.gui.redraw import BUSY_INTERVAL_MS, RedrawScheduler


def scheduler_with(parts, urgent=(), record=None, **kw):
    """A scheduler with parts that note their name (in the list returned, or through ``record``)."""
    drawn = []
    record = record or drawn.append
    s = RedrawScheduler(**kw)
    for name in parts:
        s.register(name, lambda name=name: record(name), urgent=name in urgent)
    return s, drawn


def test_repeated_requests_merge_and_the_urgent_parts_go_first(qtbot):
    s, drawn = scheduler_with(["a", "b", "c", "bars"], urgent=("bars",))
    turns = []
    s.idle.connect(lambda: turns.append(list(drawn)))
    with qtbot.waitSignal(s.idle, timeout=2000):
        for _ in range(5):
            s.request("c", "a", "bars", "a")
    assert drawn == ["bars", "a", "c"]  # one of each, urgent first, the others in registration order
    assert turns == [["bars", "a", "c"]]  # one idle, at the end


def test_the_round_continues_after_the_last_part_drawn_so_none_starves(qtbot):
    drawn = []

    def record(name):
        drawn.append(name)
        if drawn == ["a"]:
            s.request("a")  # asked again as soon as it was drawn: "b" and "c" still go first

    s, _ = scheduler_with(["a", "b", "c"], record=record)
    with qtbot.waitSignal(s.idle, timeout=2000):
        s.request("a", "b", "c")
    assert drawn == ["a", "b", "c", "a"]


def test_ordinary_parts_wait_while_held_and_the_urgent_ones_do_not(qtbot):
    """While ``hold()`` is true (a newer input's pass under way) the bars (urgent) are drawn
    and the ordinary parts are not; once it is false they are, and idle follows. Held for
    good, a part is drawn after HOLD_MAX_MS all the same."""
    held, asked = [True], []

    def hold() -> bool:
        asked.append(held[0])
        return held[0]

    s, drawn = scheduler_with(["a", "b", "bars"], urgent=("bars",), hold=hold)
    s.request("a", "b", "bars")
    # the turn looked again, held (a look HOLD_RETRY_MS after the first: five looks could take
    # over HOLD_MAX_MS on a loaded machine, and then the parts are drawn all the same)
    qtbot.waitUntil(lambda: len(asked) >= 2, timeout=2000)
    assert drawn == ["bars"] and s.requested == {"a", "b"}
    held[0] = False
    with qtbot.waitSignal(s.idle, timeout=2000):
        pass
    assert drawn == ["bars", "a", "b"]
    held[0] = True
    asked.clear()
    with qtbot.waitSignal(s.idle, timeout=2000):
        s.request("a")
    assert drawn == ["bars", "a", "b", "a"] and len(asked) > 1  # held first, then drawn


def turns_of(qtbot, busy: bool) -> list[tuple[str, int, bool]]:
    """Parts a, b, c requested at once: for each turn, the part drawn, the interval the turn
    timer was last started with and whether it is running (a turn it brought: not)."""
    drawn, timers = [], []

    def record(name):
        (timer,) = timers
        drawn.append((name, timer.interval(), timer.isActive()))

    s, _ = scheduler_with(["a", "b", "c"], record=record, busy=lambda: busy)
    assert s.interval() == (BUSY_INTERVAL_MS if busy else 0)
    s.request("a", "b", "c")
    timers.extend(t for t in s.findChildren(QTimer) if t.isActive())  # no urgent part: the turn timer alone
    with qtbot.waitSignal(s.idle, timeout=3000):
        pass
    assert not timers[0].isActive()
    return drawn


def test_turns_are_the_policys_interval_apart_while_busy(qtbot):
    """Each turn after the first comes from the turn timer, started at the turn before with
    the policy's interval (QTimer keeps the time)."""
    assert turns_of(qtbot, busy=True) == [
        ("a", 0, False),
        ("b", BUSY_INTERVAL_MS, False),
        ("c", BUSY_INTERVAL_MS, False),
    ]
    assert turns_of(qtbot, busy=False) == [("a", 0, False), ("b", 0, False), ("c", 0, False)]  # one per pass


def test_idle_waits_for_an_awaited_result(qtbot):
    waiting = [True]
    s, drawn = scheduler_with(["a"], waiting=lambda: waiting[0])
    idles = []
    s.idle.connect(lambda: idles.append(1))
    s.request("a")
    qtbot.waitUntil(lambda: drawn == ["a"], timeout=2000)
    assert not idles and not s.is_idle  # drawn, but a result is still to come
    waiting[0] = False
    with qtbot.waitSignal(s.idle, timeout=1000):
        s.check_idle()
    assert s.is_idle and s.wait_idle(10)


def test_flush_draws_everything_now_and_stop_draws_nothing_more(qtbot):
    s, drawn = scheduler_with(["a", "b", "bars"], urgent=("bars",))
    s.request("b", "a", "bars")
    with qtbot.waitSignal(s.idle, timeout=1000):
        s.flush()
    assert drawn == ["bars", "a", "b"] and not s.requested
    s.request("a")
    s.stop()
    s.request("b")
    assert not s.requested and s.wait_idle(100)  # idle at once: nothing to draw
    assert drawn == ["bars", "a", "b"]


def test_unknown_and_duplicate_parts_are_refused(qtbot):
    s, _ = scheduler_with(["a"])
    with pytest.raises(KeyError, match="no redraw part 'x'"):
        s.request("a", "x")
    assert not s.requested  # nothing of a refused request is kept
    with pytest.raises(ValueError, match="registered already"):
        s.register("a", lambda: None)


def test_a_views_parts_draw_at_once_until_registered(qtbot):
    drawn = []
    redraws = Redraws("view", {"one": lambda: drawn.append("one"), "two": lambda: drawn.append("two")})
    redraws.request("two")
    assert drawn == ["two"]  # no scheduler: at once
    s = RedrawScheduler()
    redraws.register(s)
    assert s.parts == ["view/one", "view/two"]
    redraws.request()
    assert drawn == ["two"] and s.requested == {"view/one", "view/two"}
    with qtbot.waitSignal(s.idle, timeout=1000):
        pass
    assert drawn == ["two", "one", "two"]


def test_what_the_urgent_parts_drew_is_painted_before_an_ordinary_part_is_drawn(qtbot):
    """The bars (urgent) update a widget; its paint comes in the event-loop pass after, and
    an ordinary part requested with them waits for that pass: its drawing (a view's
    curves, milliseconds) does not delay the bars on screen."""
    from PySide6.QtWidgets import QWidget

    class Bars(QWidget):
        def __init__(self) -> None:
            super().__init__()
            self.painted = 0

        def paintEvent(self, event) -> None:
            self.painted += 1

    bars = Bars()
    bars.resize(60, 40)
    bars.show()
    qtbot.waitExposed(bars)
    qtbot.waitUntil(lambda: bars.painted > 0, timeout=2000)
    events = []

    def record(name) -> None:
        events.append((name, bars.painted))
        if name == "bars":
            bars.update()  # as a bar item's new heights do

    painted = bars.painted
    s, _ = scheduler_with(["curves", "bars"], urgent=("bars",), record=record)
    with qtbot.waitSignal(s.idle, timeout=2000):
        s.request("bars", "curves")
    assert events == [("bars", painted), ("curves", painted + 1)]  # drawn, painted, then the curves
