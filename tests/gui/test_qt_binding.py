"""Guards against a Qt binding that corrupts Python's reference counts.

PySide6 6.12.0 under Python 3.11 releases one reference to None on every call of a
slot connected to QTimer.timeout; after some thousands of timer ticks (playback,
throttling, training refreshes) the interpreter aborts with "deallocating None".
"""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QTimer


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the reference-count bug shows under Python 3.11 only")
def test_timer_slots_keep_reference_counts(qtbot):
    calls = []
    timer = QTimer(interval=0)
    timer.timeout.connect(lambda: calls.append(1))
    before = sys.getrefcount(None)
    timer.start()
    qtbot.waitUntil(lambda: len(calls) >= 500, timeout=5000)
    timer.stop()
    # allow for a few references held elsewhere meanwhile, but not one lost per call
    assert sys.getrefcount(None) - before > -50, (len(calls), sys.getrefcount(None) - before)
