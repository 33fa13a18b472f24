"""The background jobs of the views (the browser's classification, the robustness
measurement, the routing count, the scan of the test pairs): one worker at a time, its
failure shown to the user, and a way to ask it to stop."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject

from capsviz.gui.core import start_worker
from capsviz.gui.i18n import tr


class BackgroundJob(QObject):
    """Runs one worker at a time (:attr:`worker`, None when none runs) on Qt's global pool.

    Parameters
    ----------
    parent : QObject
    show_exception : callable
        ``show_exception(title, exc)`` tells the user why the job failed.
    failure : str
        The title of that message (an English source, translated when shown).

    :attr:`stop` is a ``threading.Event`` that a job's function can check between its steps
    (a new one for each run): :meth:`stop_soon` sets it, :meth:`quit` sets it and asks a
    generator to stop at its next ``yield``. A failure once it is set is not shown.
    """

    def __init__(self, parent: QObject, show_exception: Callable[[str, BaseException], None], failure: str) -> None:
        super().__init__(parent)
        self._show_exception = show_exception
        self._failure = failure
        self.worker = None
        self.stop = threading.Event()

    def run(self, function, *args, stop: bool = False, finished: Callable[[], None] = lambda: None, **slots) -> None:
        """Start ``function(*args)``, with a new :attr:`stop` as its last argument if ``stop``
        (see :func:`~capsviz.gui.core.start_worker`, whose ``slots`` these are); ``finished()``
        once :attr:`worker` is None again."""
        self.stop = threading.Event()
        if stop:
            args = (*args, self.stop)

        def done() -> None:
            self.worker = None
            finished()

        self.worker = start_worker(function, *args, finished=done, errored=self._failed, **slots)

    def _failed(self, exc: BaseException) -> None:
        if not self.stop.is_set():
            self._show_exception(tr(self._failure), exc)

    def stop_soon(self) -> None:
        """Ask the job to stop at its function's next check of :attr:`stop`."""
        self.stop.set()

    def quit(self) -> None:
        """Ask a running job to stop: at its next check of :attr:`stop`, or its next ``yield``."""
        self.stop.set()
        if self.worker is not None:
            self.worker.quit()
