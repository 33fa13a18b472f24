"""The Routing view's count over the test set: how often one routing iteration answers other
than R (:func:`capsviz.model.routing_effect.routing_check`), kept per model file."""

from __future__ import annotations

from PySide6.QtCore import Signal

from capsviz.data.mnist import load_test_or_sample
from capsviz.evaluate import test_examples
from capsviz.gui.core import BackgroundJob, ExplorerCore
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.routing import RoutingView
from capsviz.model.routing_effect import cached_routing_check, routing_check
from capsviz.paths import user_cache_dir
from capsviz.runtime import worker_thread
from capsviz.texts import QT_TR_NOOP


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

                return cached_routing_check(
                    user_cache_dir(),
                    path,
                    iterations,
                    len(images),
                    lambda: routing_check(model, images, labels, iterations, 500, progress, before_batch),
                )

        def finished() -> None:
            if model is not core.model or iterations != self.view.iterations.value():
                self.show_kept()  # counted for a model or an R no longer shown
            self.view.check_button.setEnabled(True)

        self.view.check_button.setEnabled(False)
        self.view.show_check(tr("test set: counting…"))
        self.run(count, stop=True, returned=lambda check: self.view.show_check(check.sentence(tr)), finished=finished)
