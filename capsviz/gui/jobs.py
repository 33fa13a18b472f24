"""The views' background jobs, each a :class:`~capsviz.gui.core.BackgroundJob`: the MNIST
browser's (load the test split and classify all of it), the robustness view's (the model and
the CNN compared with it on transformed MNIST test digits), and the Routing view's count over
the test set (how often one routing iteration answers other than R,
:func:`capsviz.model.routing_effect.routing_check`, kept per model file)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal

from capsviz.data.mnist import load_test_or_sample
from capsviz.evaluate import test_examples
from capsviz.explorer import browser_score, classify_in_chunks
from capsviz.gui.core import BackgroundJob, ExplorerCore
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.browser import MnistBrowser
from capsviz.gui.widgets.robustness import RobustnessView
from capsviz.gui.widgets.routing import RoutingView
from capsviz.model.routing_effect import cached_routing_check, routing_check
from capsviz.paths import user_cache_dir
from capsviz.runtime import lower_thread_priority, worker_thread
from capsviz.texts import QT_TR_NOOP
from capsviz.train.robustness import measure_first, networks_to_measure


class BrowserEvaluator(BackgroundJob):
    """Fills ``browser`` with the test split (full MNIST, else the assets sample) and the
    predictions of ``core``'s model (and of its comparison CNN, when it has one) for it, in a
    background thread.

    Parameters
    ----------
    core : ExplorerCore
        Gives the model, where MNIST is (``data_root``) and whether it is training; its
        ``modelChanged`` and ``baselineChanged`` drop the predictions (and redo them when the
        browser is shown).
    browser : MnistBrowser
        The view the test digits and predictions go to.
    shown : callable
        Returns whether the browser is on screen.
    show_exception : callable
        ``show_exception(title, exc)`` tells the user why the test split cannot be browsed.
    """

    def __init__(
        self,
        core: ExplorerCore,
        browser: MnistBrowser,
        shown: Callable[[], bool],
        show_exception: Callable[[str, BaseException], None],
    ) -> None:
        super().__init__(core, show_exception, QT_TR_NOOP("Cannot browse MNIST"))
        self._core = core
        self.browser = browser
        self._shown = shown
        core.modelChanged.connect(self.model_changed)
        core.baselineChanged.connect(self.model_changed)

    def evaluate(self) -> None:
        """Load the test split into the browser and classify all of it in a background
        thread, unless that is done or running."""
        core, browser = self._core, self.browser
        if self.worker is not None or (browser.data is not None and browser.predictions is not None):
            return
        if core.is_training and browser.data is not None:
            browser.status.setText(tr("the model is training: its mistakes are listed when training stops"))
            return
        model, cnn = core.model, core.baseline
        data_root = core.data_root

        def work():
            lower_thread_priority()  # all cores, at the background workers' priority
            data = browser.data
            if data is None:
                data, description = load_test_or_sample(data_root)
                yield ("data", data, description)
            for ev in classify_in_chunks(model, cnn, data):  # 250 digits a chunk: progress, and a stop between
                yield ev if ev[0] == "progress" else ("done", model, data, ev[1], cnn, ev[2])

        def on_event(ev) -> None:
            if ev[0] == "data":
                browser.set_data(ev[1], ev[2])
                browser.select(0)  # the input stays what the user gave until they pick a digit here
            elif ev[0] == "progress":
                browser.status.setText(tr("classifying the test digits: {done:,} / {total:,}", done=ev[1], total=ev[2]))
            elif ev[0] == "done" and ev[1] is core.model and ev[2] is browser.data and ev[4] is core.baseline:
                _, _, data, preds, _, cnn_preds = ev
                browser.set_predictions(preds, cnn_preds)
                # the number of digits is in the browser's source line already
                browser.status.setText(browser_score(data.labels, preds, cnn_preds, tr))

        def on_finished() -> None:
            if browser.predictions is None and self._shown():
                self.evaluate()  # the model changed meanwhile

        self.run(work, yielded=on_event, finished=on_finished)

    def model_changed(self) -> None:
        """Predictions in the browser belong to the previous model: drop them, redo if shown."""
        if self.browser.data is not None:
            self.browser.set_predictions(None)
            self.browser.status.setText("")
            if self.worker is not None:
                self.worker.quit()
            elif self._shown():
                self.evaluate()


class RobustnessMeasurer(BackgroundJob):
    """Runs the measurement of ``view`` for ``core``'s model, and its comparison CNN when it
    has one, in a background thread; a new model or CNN clears the figures, stopping a
    measurement under way (its figures are the networks' it started with).
    ``show_exception(title, exc)`` reports a failure."""

    def __init__(self, core: ExplorerCore, view: RobustnessView, show_exception) -> None:
        super().__init__(core, show_exception, QT_TR_NOOP("Cannot measure robustness"))
        self._core, self.view = core, view
        self._measuring = None  # a token of the measurement whose figures the view shows
        view.measureRequested.connect(self.start)
        view.stopRequested.connect(lambda: self.stop.set())
        for signal in (core.modelChanged, core.baselineChanged):
            signal.connect(self._networks_changed)

    def start(self, n: int) -> None:
        """Measure on the first ``n`` test digits (the MNIST test split, else the shipped sample)."""
        if self.worker is not None:
            return
        self.view.clear(tr("measuring on {n:,} digits…", n=n))
        self.view.set_running(True)
        networks = networks_to_measure(self._core.model, self._core.baseline)  # copies: training may swap them
        self.view.networks = len(networks)
        self._measuring = run = object()
        add = lambda step: run is self._measuring and self.view.add_point(*step)  # noqa: E731
        finished = lambda: self._finished(run)  # noqa: E731
        self.run(measure_first, networks, self._core.data_root, n, stop=True, yielded=add, finished=finished)

    def _networks_changed(self) -> None:
        if self.worker is not None:
            self._measuring = None  # what it still sends is the other networks'
            self.quit()
        self.view.clear()

    def _finished(self, run: object) -> None:
        self.view.set_running(False)
        if run is self._measuring and self.stop.is_set():
            self.view.status.setText(tr("{status} (stopped)", status=self.view.status.text()))


class RoutingChecker(BackgroundJob):
    """Counts for ``core``'s model file, on a worker thread, when ``view`` asks; a new model
    shows the count kept for its file, if there is one. ``show_exception(title, exc)`` reports
    a failure."""

    progressed = Signal(str)  # the count's progress, from the worker thread

    def __init__(self, core: ExplorerCore, view: RoutingView, show_exception) -> None:
        super().__init__(core, show_exception, QT_TR_NOOP("Cannot count on the test set"))
        self._core, self.view = core, view
        view.checkRequested.connect(self.start)
        self.progressed.connect(view.show_check)
        core.modelChanged.connect(self.show_kept)
        view.iterationsChanged.connect(self.show_kept)

    def _key(self):
        """(file, R, test set) the count is kept under, or None while training or loading."""
        core = self._core
        if core.is_training or core.loading or not core.model_file.is_file():
            return None
        return core.model_file, self.view.iterations.value()

    def kept(self):
        """The count kept for the model file and R shown (on the 10,000 test examples), or None."""
        key = self._key()
        return None if key is None else cached_routing_check(user_cache_dir(), *key, 10_000)

    def show_kept(self) -> None:
        kept = self.kept()
        self.view.show_check("" if kept is None else kept.sentence(tr))

    def start(self) -> None:
        """Count on the test set (the MNIST test split or its pairs; the shipped sample without MNIST)."""
        key = self._key()
        if key is None:
            self.view.show_check(tr("test set: counted for a model saved in a file, while no training runs"))
        if key is None or self.worker is not None:
            return
        core, (path, iterations) = self._core, key
        model, dataset, data_root = core.model, core.dataset, core.data_root

        def count(stop):
            def before_batch() -> None:
                if stop.is_set():
                    raise InterruptedError("the count was stopped")

            with worker_thread("background"):
                test, _ = load_test_or_sample(data_root)
                images, labels = test_examples(dataset, test)
                done = [0]

                def progress(n: int) -> None:
                    done[0] += n
                    self.progressed.emit(tr("test set: counting… {k:,} of {n:,}", k=done[0] // 2, n=len(images)))

                check = lambda: routing_check(model, images, labels, iterations, 500, progress, before_batch)  # noqa: E731
                return cached_routing_check(user_cache_dir(), path, iterations, len(images), check)

        def finished() -> None:
            if model is not core.model or iterations != self.view.iterations.value():
                self.show_kept()  # counted for a model or an R no longer shown
            self.view.check_button.setEnabled(True)

        self.view.check_button.setEnabled(False)
        self.view.show_check(tr("test set: counting…"))
        self.run(count, stop=True, returned=lambda check: self.view.show_check(check.sentence(tr)), finished=finished)
