"""Inference for the window's current input, run off the GUI thread.

While the user draws, the input changes every few tens of milliseconds and each change
needs a forward pass with a routing trace (:func:`capsviz.model.inference.infer`, 5-50 ms
on a CPU shared with training); a transform sweep needs one pass per step of the sweep.
Run on the GUI thread, such passes and the repaints they cause land in the same
event-loop turn. Here they run on their own thread, newest input first, and the GUI
thread only draws the results.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from capsviz.explorer import REQUESTS
from capsviz.runtime import worker_thread


class InferenceThread(QObject):
    """Runs requests (:class:`~capsviz.explorer.InferenceRequest`,
    :class:`~capsviz.explorer.SweepRequest`) on a worker thread.

    :meth:`submit` never blocks. A request that has not started yet is replaced by a newer
    one of its kind, so under a stream of input the thread works back to back on the
    latest input while the GUI thread stays free to paint; a pending forward pass goes
    before a pending sweep. Each request that runs ends in ``finished(request, result)``,
    delivered on the receiver's (GUI) thread in the order the requests ran; ``result`` is
    what ``request.run()`` returned, or the exception it raised. The thread starts with
    the first request.

    The thread computes with one intra-op thread fewer than the default (at least one;
    where torch's thread pool is not per thread, with the default) and at a lower CPU
    priority than the GUI thread (:data:`capsviz.runtime.INFERENCE_NICENESS`): while the user draws it is
    busy most of the time, and with every core asked of each of its operations, or an
    equal share of the core it shares with the GUI thread, the GUI thread waited for a
    core to paint on.
    """

    finished = Signal(object, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cond = threading.Condition()
        self._next: dict[type, object] = {}  # kind -> the newest request not yet started
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._running = None  # the request being run, else None

    @property
    def busy(self) -> bool:
        """A request is queued or running (its result, if any, is then still to be delivered)."""
        with self._cond:
            return bool(self._next) or self._running is not None

    @property
    def running(self) -> bool:
        """The worker thread is alive (it starts with the first request and ends at :meth:`stop`)."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def submit(self, request) -> None:
        """Queue ``request`` in place of any of its kind not yet started (ignored after :meth:`stop`).

        Raises ``TypeError`` for a request of a kind not in ``REQUESTS``."""
        if type(request) not in REQUESTS:
            raise TypeError(f"not a request the inference thread runs: {type(request).__name__}")
        with self._cond:
            if self._stopped:
                return
            self._next[type(request)] = request
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="capsviz-inference", daemon=True)
                self._thread.start()
            self._cond.notify()

    def stop(self, timeout_s: float = 2.0) -> None:
        """Drop the queued requests and end the thread, waiting up to ``timeout_s`` for the
        pass that is running (its result is not emitted; results emitted before are still
        delivered, so a receiver that is going away must ignore them)."""
        with self._cond:
            self._stopped = True
            self._next.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def _run(self) -> None:
        try:
            self._serve()
        finally:  # whatever ended it, a later submit starts a new thread
            with self._cond:
                self._thread = None

    def _serve(self) -> None:
        with worker_thread("inference"):
            self._serve_requests()

    def _serve_requests(self) -> None:
        while True:
            with self._cond:
                while not self._next and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                request = self._next.pop(next(kind for kind in REQUESTS if kind in self._next))
                self._running = request
            try:
                result = request.run()
            except Exception as exc:  # delivered to the window, which shows it
                result = exc
            with self._cond:
                self._running = None
                if self._stopped:
                    return
                try:
                    self.finished.emit(request, result)
                except RuntimeError:  # the Qt object was deleted with its window
                    return
