"""Inference for the window's current input, run off the GUI thread: the requests run on a
:class:`capsviz.explorer.RequestThread` (newest input first, one intra-op thread fewer, at
a lower priority; it says why), and their results reach the GUI thread as a Qt signal.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from capsviz.explorer import RequestThread


class InferenceThread(QObject):
    """Runs requests (:class:`~capsviz.explorer.InferenceRequest`,
    :class:`~capsviz.explorer.SweepRequest`, ...) on a :class:`~capsviz.explorer.RequestThread`
    (:meth:`submit` never blocks; a request not started yet is replaced by a newer one of its
    kind; a pending forward pass goes before a pending sweep).

    Each request that runs ends in ``finished(request, result)``, delivered on the receiver's
    (GUI) thread in the order the requests ran; ``result`` is what ``request.run()`` returned,
    or the exception it raised. After :meth:`stop`, results emitted before are still
    delivered, so a receiver that is going away must ignore them.
    """

    finished = Signal(object, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._requests = RequestThread(self._emit)
        self.submit = self._requests.submit
        self.stop = self._requests.stop

    @property
    def busy(self) -> bool:
        """A request is queued or running (its result, if any, is then still to be delivered)."""
        return self._requests.busy

    @property
    def running(self) -> bool:
        """The worker thread is alive (it starts with the first request and ends at :meth:`stop`)."""
        return self._requests.running

    def _emit(self, request, result) -> bool:
        try:
            self.finished.emit(request, result)
        except RuntimeError:  # the Qt object was deleted with its window
            return False
        return True
