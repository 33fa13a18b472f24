"""Uncaught exceptions reach the app's report after the hook they replace."""

from __future__ import annotations

import sys

import pytest

from capsviz.logs import chain_excepthook, exception_report


@pytest.fixture
def restored_hook():
    previous = sys.excepthook
    yield
    sys.excepthook = previous


def test_an_uncaught_exception_is_reported_with_its_traceback_after_the_previous_hook(restored_hook):
    order = []
    sys.excepthook = lambda kind, value, tb: order.append(("previous", kind))
    chain_excepthook(lambda exc: order.append(("report", exception_report(exc))))
    try:
        raise RuntimeError("a slot failed")
    except RuntimeError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    assert order[0] == ("previous", RuntimeError) and order[1][0] == "report"
    message, details = order[1][1]
    assert message == "RuntimeError: a slot failed" and 'raise RuntimeError("a slot failed")' in details


def test_interrupts_are_not_reported_and_a_failing_report_is_dropped(restored_hook):
    seen = []
    sys.excepthook = lambda kind, value, tb: seen.append(kind)

    def report(exc):
        seen.append("report")
        raise RuntimeError("the window is gone")

    chain_excepthook(report)
    for kind in (KeyboardInterrupt, SystemExit, ValueError):
        sys.excepthook(kind, kind(), None)  # no exception escapes the hook
    assert seen == [KeyboardInterrupt, SystemExit, ValueError, "report"]
