"""Inference for the window's current input, run off the GUI thread.

While the user draws, the input changes every few tens of milliseconds and each change
needs a forward pass with a routing trace (:func:`capsviz.model.inference.infer`, 5-50 ms
on a CPU shared with training). Run on the GUI thread, that pass and the repaints it
causes land in the same event-loop turn. Here it runs on its own thread, newest input
first, and the GUI thread only draws the results.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QObject, Signal

from capsviz.model import CapsNet
from capsviz.model.inference import infer


@dataclass(frozen=True, eq=False)
class InferenceRequest:
    """One input to classify with the routing trace.

    ``serial`` orders requests (larger is newer); ``image`` is (28, 28) float32 in
    [0, 1]; ``iterations`` is the number of routing iterations (>= 1).
    """

    serial: int
    model: CapsNet
    image: np.ndarray
    iterations: int


class InferenceThread(QObject):
    """Runs :func:`~capsviz.model.inference.infer` for the newest request on a worker thread.

    :meth:`submit` never blocks. A request that has not started yet is replaced by a newer
    one, so under a stream of input the thread works back to back on the latest input
    while the GUI thread stays free to paint. Each request that runs ends in
    ``finished(request, result)``, delivered on the receiver's (GUI) thread in the order
    the requests ran; ``result`` is an :class:`~capsviz.model.inference.Inference`, or the
    exception ``infer`` raised. The thread starts with the first request.
    """

    finished = Signal(object, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cond = threading.Condition()
        self._next: InferenceRequest | None = None
        self._stopped = False
        self._thread: threading.Thread | None = None

    def submit(self, request: InferenceRequest) -> None:
        """Queue ``request`` in place of any request not yet started (ignored after :meth:`stop`)."""
        with self._cond:
            if self._stopped:
                return
            self._next = request
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="capsviz-inference", daemon=True)
                self._thread.start()
            self._cond.notify()

    def stop(self, timeout_s: float = 2.0) -> None:
        """Drop the queued request and end the thread, waiting up to ``timeout_s`` for the
        pass that is running (its result is not delivered)."""
        with self._cond:
            self._stopped = True
            self._next = None
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._next is None and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                request, self._next = self._next, None
            try:
                result = infer(request.model, request.image, request.iterations)
            except Exception as exc:  # delivered to the window, which shows it
                result = exc
            with self._cond:
                if self._stopped:
                    return
                try:
                    self.finished.emit(request, result)
                except RuntimeError:  # the Qt object was deleted with its window
                    return
