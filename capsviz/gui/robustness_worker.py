"""The robustness view's background worker: the model (and the CNN compared with it) on
transformed MNIST test digits."""

from __future__ import annotations

from capsviz.gui.core import BackgroundJob, ExplorerCore
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.robustness import RobustnessView
from capsviz.texts import QT_TR_NOOP
from capsviz.train.robustness import measure_first, networks_to_measure


class RobustnessMeasurer(BackgroundJob):
    """Runs the measurement of ``view`` for ``core``'s model, and its comparison CNN when it
    has one, in a background thread; a new model or CNN clears the figures.
    ``show_exception(title, exc)`` reports a failure."""

    def __init__(self, core: ExplorerCore, view: RobustnessView, show_exception) -> None:
        super().__init__(core, show_exception, QT_TR_NOOP("Cannot measure robustness"))
        self._core, self.view = core, view
        view.measureRequested.connect(self.start)
        view.stopRequested.connect(lambda: self.stop.set())
        for signal in (core.modelChanged, core.baselineChanged):
            signal.connect(lambda: self.worker is None and view.clear())

    def start(self, n: int) -> None:
        """Measure on the first ``n`` test digits (the MNIST test split, else the shipped sample)."""
        if self.worker is not None:
            return
        self.view.clear(tr("measuring on {n:,} digits…", n=n))
        self.view.set_running(True)
        networks = networks_to_measure(self._core.model, self._core.baseline)  # copies: training may swap them
        self.view.networks = len(networks)
        self.run(
            measure_first,
            networks,
            self._core.data_root,
            n,
            stop=True,
            yielded=lambda step: self.view.add_point(*step),
            finished=self._finished,
        )

    def _finished(self) -> None:
        self.view.set_running(False)
        if self.stop.is_set():
            self.view.status.setText(tr("{status} (stopped)", status=self.view.status.text()))
