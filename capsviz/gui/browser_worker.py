"""The MNIST browser's background worker: load the test split and classify all of it."""

from __future__ import annotations

from collections.abc import Callable

from capsviz.data.mnist import load_test_or_sample
from capsviz.explorer import browser_score, classify_in_chunks
from capsviz.gui.core import BackgroundJob, ExplorerCore
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.browser import MnistBrowser
from capsviz.runtime import lower_thread_priority
from capsviz.texts import QT_TR_NOOP


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
