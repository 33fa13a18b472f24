"""The robustness view's background worker: the model (and the CNN compared with it) on
transformed MNIST test digits."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject

from capsviz.gui.core import ExplorerCore, start_worker
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.robustness import RobustnessView
from capsviz.train.robustness import measure_first, networks_to_measure


class RobustnessMeasurer(QObject):
    """Runs the measurement of ``view`` for ``core``'s model, and its comparison CNN when it
    has one, in a background thread; a new model or CNN clears the figures.
    ``show_exception(title, exc)`` reports a failure."""

    def __init__(self, core: ExplorerCore, view: RobustnessView, show_exception) -> None:
        super().__init__(core)
        self._core, self.view, self._show_exception = core, view, show_exception
        self.worker = None
        self._stop = threading.Event()
        view.measureRequested.connect(self.start)
        view.stopRequested.connect(self.stop)
        core.modelChanged.connect(lambda: self.worker is None and view.clear())
        core.baselineChanged.connect(lambda: self.worker is None and view.clear())

    def start(self, n: int) -> None:
        """Measure on the first ``n`` test digits (the MNIST test split, else the shipped sample)."""
        if self.worker is not None:
            return
        self.view.clear(tr("measuring on {n:,} digits…", n=n))
        self.view.set_running(True)
        self._stop = threading.Event()
        networks = networks_to_measure(self._core.model, self._core.baseline)  # copies: training may swap them
        self.view.networks = len(networks)
        self.worker = start_worker(
            measure_first,
            networks,
            self._core.data_root,
            n,
            self._stop,
            yielded=lambda step: self.view.add_point(*step),
            errored=lambda exc: self._show_exception(tr("Cannot measure robustness"), exc),
            finished=self._finished,
        )

    def stop(self) -> None:
        self._stop.set()

    def _finished(self) -> None:
        self.worker = None
        self.view.set_running(False)
        if self._stop.is_set():
            self.view.status.setText(tr("{status} (stopped)", status=self.view.status.text()))

    def quit(self) -> None:
        """Stop and forget the worker (the window is closing)."""
        self._stop.set()
