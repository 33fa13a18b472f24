"""The explorer's state and work, without widgets: the model, the current input, the
inference thread and the training session. Windows and tests drive it through its
methods and follow it through its signals.

Nothing here depends on the model's kind or input size: the model is any module that
:func:`capsviz.model.inference.infer` and the training loop accept, the input an image of
the size that model reads. What a kind of input adds to a trace (the reading of a pair of
overlapping digits) comes from the ``read`` function the core is given, run with the pass
on the inference thread.
"""

from __future__ import annotations

import copy
import gc
import threading
from pathlib import Path

import numpy as np
import torch
from PySide6.QtCore import QElapsedTimer, QObject, Qt, QThreadPool, QTimer, Signal

from capsviz.data.transforms import InputTransform
from capsviz.explorer import (
    BaselineRequest,
    ExplorerInput,
    GalleryRequest,
    ReadingRequest,
    Serials,
    SweepRequest,
    TrainingRun,
    WeightsSnapshot,
    initial_model,
    read_cnn,
    read_model,
    read_models,
    request_for,
    training_events,
    untrained_model,
)
from capsviz.gui.i18n import tr
from capsviz.gui.inference_thread import InferenceThread
from capsviz.logs import exception_report
from capsviz.model.baseline import BaselineCNN
from capsviz.model.inference import Gallery, Inference
from capsviz.paths import shipped_baseline, shipped_checkpoint, shipped_multimnist_checkpoint
from capsviz.runtime import (
    GUI_INTRA_OP_THREADS,
    collect_due,
    default_intra_op_threads,
    own_intra_op_threads,
    select_device,
)
from capsviz.texts import QT_TR_NOOP
from capsviz.train.checkpoint import (
    CheckpointError,
    CheckpointInfo,
    check_destination,
    header_of,
    save_checkpoint,
    training_record,
)
from capsviz.train.config import TrainConfig
from capsviz.train.events import BatchEvent, EpochEvent, StoppedEvent

# Least time between the starts of two transform sweeps (see ExplorerCore.request_sweep).
SWEEP_INTERVAL_MS = 120
# what the core keeps of a dataset while it shows another's
KEPT = ("model", "info", "checkpoint_path", "_summary", "baseline", "baseline_info", "input")
# what a training run of a CapsNet (False) or a CNN (True) replaces as it starts, put back
# when it fails before its first step (the other network may be opened meanwhile: it stays)
BEFORE_RUN = {False: ("model", "info", "checkpoint_path", "_summary"), True: ("baseline", "baseline_info")}
# the model each dataset's explorer starts with
SHIPPED = {"mnist": lambda: shipped_checkpoint(), "multimnist": lambda: shipped_multimnist_checkpoint()}
_collector: QTimer | None = None  # the timer of collect_garbage_on_gui_thread


def collect_garbage_on_gui_thread(interval_ms: int = 500) -> None:
    """Run Python's cyclic garbage collector on the GUI thread only: automatic collection
    is turned off for the process, and a timer of the calling (GUI) thread collects each
    generation whose count passed its threshold (what pyqtgraph's ``GarbageCollector``
    does; that class would bring pyqtgraph's widgets into the core).

    Left automatic, a collection runs in whichever thread allocates when a threshold is
    crossed: a worker thread collecting a cycle that holds Qt wrappers (a closed window's
    menus) deletes QObjects off their thread, and that can deadlock with the GUI thread
    deleting their children (seen as a model loader thread waiting for the GIL inside
    ``QObject::~QObject`` while the GUI thread waited for that object's lock)."""
    global _collector
    if _collector is not None:
        return
    thresholds = gc.get_threshold()
    gc.disable()
    _collector = QTimer()
    _collector.timeout.connect(lambda: collect_due(thresholds))
    _collector.start(interval_ms)


def start_worker(function, *args, start: bool = True, **slots):
    """A superqt worker running ``function(*args)`` (a plain or a generator function) on a
    thread of Qt's global pool, its signals connected to ``slots`` (``returned``, ``yielded``,
    ``errored``, ``finished``; an error given a slot is not raised again); started unless not
    ``start`` (then the caller starts it). Its ``quit()`` asks a generator to stop at its
    next ``yield``. superqt is imported on the first call: the core itself needs no widgets."""
    from superqt.utils import create_worker

    worker = create_worker(function, *args, _start_thread=False, _connect=slots)
    if start:
        worker.start()
    return worker


class BackgroundJob(QObject):
    """One worker at a time (:attr:`worker`, None when none runs) on Qt's global pool, for the
    views' background jobs; its failure is shown by ``show_exception(tr(failure), exc)``
    (``failure``: an English source) unless :attr:`stop` is set by then. :attr:`stop` is a new
    ``threading.Event`` each run, which :meth:`run` gives the job's function to check between
    its steps; :meth:`quit` sets it and asks a generator to stop at its next ``yield``.
    :meth:`close` (the window closes) also drops whatever the job still sends: its signals
    wait in the event queue and may come after the views they would update are deleted."""

    def __init__(self, parent: QObject, show_exception, failure: str) -> None:
        super().__init__(parent)
        self._show_exception, self._failure = show_exception, failure
        self.worker = None
        self.stop = threading.Event()
        self.closed = False

    def run(self, function, *args, stop: bool = False, finished=lambda: None, **slots) -> None:
        """Start ``function(*args)``, with the new :attr:`stop` as its last argument if ``stop``
        (:func:`start_worker`, whose ``slots`` these are); ``finished()`` once :attr:`worker` is None again."""
        self.stop = threading.Event()
        args = (*args, self.stop) if stop else args

        def while_open(slot):
            return lambda *values: None if self.closed else slot(*values)

        finished = while_open(finished)
        slots = {name: while_open(slot) for name, slot in slots.items()}

        def done() -> None:
            self.worker = None
            finished()

        self.worker = start_worker(function, *args, finished=done, errored=self._failed, **slots)

    def _failed(self, exc: BaseException) -> None:
        if not self.stop.is_set() and not self.closed:
            self._show_exception(tr(self._failure), exc)

    def quit(self) -> None:
        """Ask a running job to stop: at its next check of :attr:`stop`, or its next ``yield``."""
        self.stop.set()
        if self.worker is not None:
            self.worker.quit()

    def close(self) -> None:
        """Stop for good (the window closes): :meth:`quit`, and drop what the job still sends."""
        self.closed = True
        self.quit()


class ExplorerCore(QObject):
    """The explorer without its widgets.

    Parameters
    ----------
    model : torch.nn.Module
        The model to start with (the stand-in when no checkpoint loads), in eval mode.
    device : str
        ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``
        (:func:`capsviz.runtime.select_device`; ``ValueError`` for an unknown one).
    data_root : Path, optional
        The folder holding ``MNIST/raw/`` for training (None: the default locations).
    reads : dict, optional
        Dataset -> ``read(model, inference, setup)``, what that kind of input reads from a
        trace (:attr:`~capsviz.model.inference.Inference.reading`) given the input's
        ``setup``; run on the inference thread after each pass (``readingReady``).
    examples : callable, optional
        Dataset -> ``(images, labels)``, the test examples the model of that dataset
        reconstructs whenever it changes (:func:`capsviz.explorer.gallery_examples`;
        ``galleryReady``), called on the inference thread. None: no gallery.

    The core shows the models of one dataset at a time, :attr:`dataset`: ``mnist`` (single
    digits, first) or ``multimnist`` (pairs of overlapping digits). :meth:`load_model`
    refuses another dataset's model, naming it; :meth:`switch_dataset` changes the dataset,
    keeping the model, the CNN and the input of the one it leaves for a return.

    Signals
    -------
    modelChanged() : another model (a checkpoint loaded, training started from scratch or
        ended, another dataset); ``model``, ``info``, ``model_summary`` and ``dataset`` describe it.
    inferenceReady(object) : the :class:`~capsviz.model.inference.Inference` of the current
        input (or of one it replaced, under a stream of inputs), or None for no input.
    cnnReady() : the compared CNN's probabilities for the inference shown are in its
        ``baseline`` (they follow its capsules: the CNN runs after them).
    readingReady() : the input's reading for the inference shown is in its ``reading``
        (it follows the capsules, before the CNN).
    galleryReady(object) : the :class:`~capsviz.model.inference.Gallery` of the model shown
        (also in :attr:`gallery`), after each change of model, training snapshots included;
        None when it cannot be made (``error`` says why, once).
    sweepReady(object, object, object) : ``(request, v, p)``: a :class:`SweepRequest`, the
        digit capsules along it, (K, classes, pose dims) float32, and the compared CNN's
        class probabilities along it, (K, classes) float32 (None without a CNN).
    baselineChanged() : another CNN to compare with (or none); ``baseline``,
        ``baseline_info`` describe it.
    weightsChanged() : a training run's snapshot became the CapsNet shown (``modelChanged``
        comes for another model, and when the run ends).
    trainingStarted(object) : the checkpoint path the run saves to.
    trainingEvent(object) : a ``BatchEvent``, ``EpochEvent``, ``PausedEvent`` or ``StoppedEvent`` of the run.
    trainingFinished() : the run's thread ended (stopped, finished or failed).
    error(str, str, str) : ``(title, message, details)`` for the user (details may be "").
    resultHandled() : a result of the inference thread was used (after ``inferenceReady``,
        ``sweepReady`` or ``error``); a waiter for the views checks again.
    """

    modelChanged = Signal()
    inferenceReady = Signal(object)
    cnnReady = Signal()
    readingReady = Signal()
    galleryReady = Signal(object)
    sweepReady = Signal(object, object, object)
    baselineChanged = Signal()
    weightsChanged = Signal()
    trainingStarted = Signal(object)
    trainingEvent = Signal(object)
    trainingFinished = Signal()
    error = Signal(str, str, str)
    resultHandled = Signal()

    def __init__(
        self,
        model: torch.nn.Module,
        device: str = "auto",
        data_root: Path | None = None,
        reads: dict | None = None,
        examples=None,
        parent=None,
    ) -> None:
        super().__init__(parent)
        collect_garbage_on_gui_thread()  # the core's worker threads never collect Qt objects
        # the GUI thread computes on one intra-op thread while the core lives (GUI_INTRA_OP_THREADS)
        own_intra_op_threads(GUI_INTRA_OP_THREADS)
        self.dataset = "mnist"
        self.reads = dict(reads or {})
        self.examples = examples
        self.gallery: Gallery | None = None  # of the model shown, once computed
        self._gallery_model = None  # the model the last gallery was asked of
        self._gallery_answered = None  # the model whose gallery (or failure) came last
        self._kept: dict[str, tuple] = {}  # dataset -> its state, while another is shown
        self._loader = None  # the worker loading a model in the background, else None
        self.device_name = device
        self.device = select_device(device)
        self.data_root = data_root
        self.model = model.to(self.device).eval()
        self.info: CheckpointInfo | None = None
        self.checkpoint_path: Path | None = None  # the loaded file (None: the shipped model or none)
        self.training_into: Path | None = None  # the file the run under way saves to (None: no run)
        self._describe(QT_TR_NOOP("untrained"))
        self.input = ExplorerInput()
        self.inference: Inference | None = None  # the newest result shown
        self._serials = Serials()
        self._cnn_serial: int | None = None  # of the CNN's probabilities still to come, else None
        self._reading_serial: int | None = None  # of the reading asked for and still to come, else None
        self._sweep_serials = Serials()
        self._next_sweep: tuple | None = None  # (serial, name, values, transforms) of the sweep to start
        self._sweep_since = QElapsedTimer()  # since the last sweep started
        self._sweep_timer = QTimer(self, singleShot=True)
        self._sweep_timer.timeout.connect(self._start_sweep)
        self._last_errors: dict[str, str] = {}  # kind of pass -> its last failure's message, shown once
        self._thread = InferenceThread(self)
        self._thread.finished.connect(self._on_finished, Qt.ConnectionType.QueuedConnection)
        self._worker = None
        self._stop_event: threading.Event | None = None
        self._pause_event: threading.Event | None = None
        self.data_ready = lambda: True  # before a run: whether MNIST is there (the window offers a download)
        self._holder: dict = {}
        self.train_config: TrainConfig | None = None
        self._position: tuple[float, int] | None = None  # (epochs, step) the run has reached
        self._shown_position: tuple[float, int] | None = None  # those of the run's weights shown
        self._before_run: dict | None = None  # the network shown before the run, until its first step
        self._run_failed = False  # the run under way raised
        self.closing = False
        self.baseline = None  # the CNN compared with the capsules (capsviz.model.baseline), or None
        self.baseline_info: CheckpointInfo | None = None

    # -- model ------------------------------------------------------------------------
    def load_model(self, path: Path | None = None, or_shipped: bool = False) -> bool:
        """Load checkpoint ``path`` (None: the model shipped for :attr:`dataset`); the header
        says what network it holds and for which dataset, and a model for another dataset is
        refused. On failure emit ``error`` and keep the current model, or with ``or_shipped``
        (start-up: no model yet) load the shipped one instead. Refused (``error``, returns
        False) while a CapsNet trains: its snapshots replace the model shown."""
        if self._refused_while_training(cnn=False):
            return False
        target = Path(path) if path else SHIPPED[self.dataset]()
        try:
            model, info = read_model(target, self.dataset, self.device)
        except CheckpointError as exc:
            if or_shipped and path is not None and SHIPPED[self.dataset]().is_file():
                self._error(
                    tr("Cannot load checkpoint"), tr("{error}\n\nThe shipped model is shown instead.", error=exc)
                )
                self.load_model(None)
            elif self.info is None and self.checkpoint_path is None and path is None:
                self._describe(QT_TR_NOOP("untrained (the shipped model is missing)"))
                self.modelChanged.emit()
                self._error(
                    tr("No model"),
                    tr(
                        "The shipped model cannot be loaded: {error}\n\nThe views show an untrained model. "
                        "Open a checkpoint (File → Open checkpoint…) or train one in the Training panel.",
                        error=exc,
                    ),
                )
            else:
                self._error(tr("Cannot load checkpoint"), tr("{error}\n\nThe current model stays loaded.", error=exc))
            return False
        self._use_model(model, info, target, path is not None)
        self._changed(self.modelChanged)
        return True

    def _refused_while_training(self, cnn: bool) -> bool:
        """Whether a run trains the network the caller would replace (``cnn``: the comparison
        CNN, else the CapsNet), whose snapshots would replace it in turn; if so says so (``error``)."""
        if not self.is_training or (self.train_config.model != "capsnet") != cnn:
            return False
        self._error(
            tr("Training is running"),
            tr("Stop the training run (Training panel) before opening another model: the run's weights are shown."),
        )
        return True

    def _use_model(self, model, info: CheckpointInfo, target: Path, given: bool) -> None:
        """Show ``model`` of file ``target`` (``given``: a file the user chose, not the shipped one)."""
        self.model, self.info = model, info
        self.checkpoint_path = target.resolve() if given else None
        self._describe(QT_TR_NOOP("{name} — {summary}"), name=target.name, summary=info)

    def _describe(self, text: str, **fields) -> None:
        """Set :attr:`model_summary` to ``text`` (an English source) with ``fields``; a
        :class:`CheckpointInfo` field reads as its :meth:`~CheckpointInfo.summary`."""
        self._summary = (text, fields)

    @property
    def model_summary(self) -> str:
        """One line on the model shown, in the app's language: its file and training record, or what it is."""
        text, fields = self._summary
        return tr(text, **{k: v.summary(tr) if isinstance(v, CheckpointInfo) else v for k, v in fields.items()})

    @property
    def read(self):
        """What the input of :attr:`dataset` reads from a trace (see ``reads``), or None."""
        return self.reads.get(self.dataset)

    @property
    def loading(self) -> bool:
        """A model is being loaded in the background (:meth:`switch_dataset`)."""
        return self._loader is not None

    def kept_checkpoint(self, dataset: str) -> Path | None:
        """The file of the model kept for ``dataset`` while another is shown (None: the shipped one, or none kept)."""
        return self._kept.get(dataset, {}).get("checkpoint_path")

    def switch_dataset(self, dataset: str, path: Path | None = None, baseline: Path | None = None) -> bool:
        """Show the models of ``dataset`` (``mnist`` or ``multimnist``) and its input as it was
        left: the model of ``path`` (None: the one shown when it was left, else the shipped
        one) with the CNN of ``baseline`` (None: the one kept with that model when it stays, else
        the shipped one), a new file loaded on a worker thread; ``modelChanged`` and ``baselineChanged``
        follow, and ``error`` if a file is refused (a model file: the dataset is then shown
        untrained; a CNN file: the CNN kept stays). The model, CNN and input of the dataset
        left are kept for a return.
        Refused (``error``, returns False) while a run trains or a model loads; ``ValueError``
        for another dataset."""
        if dataset not in SHIPPED:
            raise ValueError(f"dataset must be one of {', '.join(SHIPPED)}, not {dataset!r}")
        if self.is_training or self.loading:
            self._error(
                tr("Training is running") if self.is_training else tr("A model is loading"),
                tr("Stop the training run (Training panel) before switching to other models.")
                if self.is_training
                else tr("Wait until the model being loaded is in."),
            )
            return False
        if dataset != self.dataset:
            self._kept[self.dataset] = {name: getattr(self, name) for name in KEPT}
            kept = self._kept.pop(dataset, None)
            self.dataset = dataset
            self.inference = None
            self.gallery = None  # the other dataset's; this one's comes with its model
            if kept is None:
                self.input = ExplorerInput(iterations=self.input.iterations)
            else:  # its model, CNN and input as they were left
                for name, value in kept.items():
                    setattr(self, name, value)
                if path is None:  # the model kept; a CNN given is read as File → Open comparison CNN reads it
                    if baseline is None or not self.load_baseline(baseline):
                        self._changed(self.modelChanged, self.baselineChanged)
                    else:
                        self.modelChanged.emit()
                    return True
        if path:
            self._describe(QT_TR_NOOP("loading {name}…"), name=Path(path).name)
        else:
            self._describe(QT_TR_NOOP("loading the shipped model…"))
        self.modelChanged.emit()
        self._load_in_background(path, baseline)
        return True

    def _load_in_background(self, path: Path | None, baseline: Path | None) -> None:
        dataset = self.dataset
        target = Path(path) if path else SHIPPED[dataset]()
        cnn_file = Path(baseline) if baseline else shipped_baseline(dataset)

        def loaded(result) -> None:
            (model, info), (cnn, cnn_info) = result
            if self.closing or dataset != self.dataset:
                return
            self._use_model(model, info, target, path is not None)
            self.baseline, self.baseline_info = cnn, cnn_info
            self._changed(self.modelChanged, self.baselineChanged)

        def failed(exc) -> None:
            if self.closing or dataset != self.dataset:
                return
            self.model = untrained_model(dataset).to(self.device).eval()
            self.info, self.checkpoint_path, self.baseline, self.baseline_info = None, None, None, None
            self._describe(QT_TR_NOOP("untrained (the model cannot be loaded)"))
            self._changed(self.modelChanged, self.baselineChanged)
            self._exception(tr("Cannot load checkpoint"), exc)

        def done() -> None:
            self._loader = None
            self.infer()

        files = (target, cnn_file, dataset, self.device, baseline is not None)
        self._loader = start_worker(read_models, *files, returned=loaded, errored=failed, finished=done)

    @property
    def model_file(self) -> Path:
        """The file of the model shown (the shipped one when no other was loaded)."""
        return self.checkpoint_path or (self.info.path if self.info is not None else SHIPPED[self.dataset]())

    @property
    def from_no_file(self) -> bool:
        """Whether the model shown is a run's from fresh weights, in no file yet (the run saves it
        to :attr:`training_into`)."""
        return self.training_into is not None and self.info is None and self.checkpoint_path is None

    def load_baseline(self, path: Path | None = None) -> bool:
        """Load the CNN shown beside the capsules from ``path`` (None: the CNN shipped for
        :attr:`dataset`; when that file is missing there is simply no CNN). A CNN for another
        dataset is refused. On failure with a file the user gave, emit ``error`` and keep the
        current CNN. Returns success. Refused (``error``, returns False) while a CNN trains."""
        if self._refused_while_training(cnn=True):
            return False
        target = Path(path) if path else shipped_baseline(self.dataset)
        if path is None and not target.is_file():
            return False
        try:
            cnn, info = read_cnn(target, self.dataset, self.device)
        except CheckpointError as exc:
            self._error(tr("Cannot load the CNN"), tr("{error}\n\nThe current comparison stays.", error=exc))
            return False
        self.baseline, self.baseline_info = cnn, info
        self._changed(self.baselineChanged)
        return True

    def save_model(self, path: Path) -> Path | None:
        """Save the model with its training record to ``path``: a loaded model's own, or while
        a CapsNet trains, the run's recipe with the epochs and step of the weights shown; on
        failure emit ``error``. Returns the file written, or None."""
        record = training_record(self.info)
        if self.is_training and self.train_config.model == "capsnet" and self._shown_position is not None:
            epochs, step = self._shown_position  # a snapshot came: the run's trainer is built
            record = {**self._holder["trainer"].recipe_record(), "epoch": epochs, "step": step}
        try:
            return save_checkpoint(path, self.model, **record)
        except OSError as exc:
            self._error(tr("Cannot save checkpoint"), tr("{path}: {reason}", path=path, reason=exc.strerror or exc))
            return None

    # -- input and inference ----------------------------------------------------------------
    def set_image(self, image: np.ndarray | None, setup: object | None = None) -> None:
        """Use ``image`` ((H, W) float32 in [0, 1], copied; None: no input) with the source's
        ``setup`` (see :class:`ExplorerInput`) and infer."""
        self._set_input(self.input.replace(image=image, setup=setup))

    def set_transform(self, transform: InputTransform) -> None:
        self._set_input(self.input.replace(transform=transform))

    def set_iterations(self, iterations: int) -> None:
        """Routing iterations at inference; ``ValueError`` unless >= 1."""
        if iterations < 1:
            raise ValueError(f"routing iterations must be at least 1, not {iterations}")
        self._set_input(self.input.replace(iterations=int(iterations)))

    def _set_input(self, value: ExplorerInput) -> None:
        self.input = value
        self.infer()

    def infer(self) -> None:
        """Ask for the inference of the current input with the current model (on the
        inference thread; ``inferenceReady`` brings it). No input: ``inferenceReady(None)`` now."""
        if self.closing or self.loading:  # the model of the dataset shown is still to come
            return
        serial = self._serials.next()
        if self.input.model_image is None:
            self._serials.show_all()  # results of older requests no longer apply
            self.inference = None
            self.inferenceReady.emit(None)
            self._ask_gallery()
            return
        self._thread.submit(request_for(serial, self.model, self.input))
        self._cnn_serial = None if self.baseline is None else serial
        if self.baseline is not None:  # after the capsules, so their answer does not wait for it
            self._thread.submit(BaselineRequest(serial, self.baseline, self.input.model_image))
        self._ask_gallery()  # after the input's pass, which an idle thread would otherwise start later

    def _ask_gallery(self) -> None:
        """Ask for the gallery of the model shown (see ``examples``) unless it was asked of it already."""
        if self.examples is None or self.model is self._gallery_model:
            return
        self._gallery_model = self.model
        self._thread.submit(GalleryRequest(self.model, self.dataset, self.examples))

    def request_sweep(self, name: str, values: np.ndarray, transforms: list[InputTransform]) -> None:
        """Ask for the digit capsules of the current image (before its own transform) under
        each of ``transforms`` (the sweep of parameter ``name`` over ``values``, (K,));
        ``sweepReady`` brings them. No input: ``sweepReady(None, None)`` now.

        A sweep is K forward passes: sweeps start at most every ``SWEEP_INTERVAL_MS``, each
        for the input and model of the moment it starts, so under a stream of inputs the
        inference thread leaves the cores to the GUI and to training between them."""
        if self.closing:
            return
        serial = self._sweep_serials.next()
        if self.input.image is None:
            self._sweep_serials.show_all()
            self._next_sweep = None
            self._sweep_timer.stop()
            self.sweepReady.emit(None, None, None)
            return
        self._next_sweep = (serial, name, values, transforms)
        if not self._sweep_timer.isActive():
            elapsed = self._sweep_since.elapsed() if self._sweep_since.isValid() else SWEEP_INTERVAL_MS
            self._sweep_timer.start(max(0, SWEEP_INTERVAL_MS - elapsed))

    def _start_sweep(self) -> None:
        if self._next_sweep is None or self.closing or self.input.image is None:
            return
        (serial, name, values, transforms), self._next_sweep = self._next_sweep, None
        self._sweep_since.start()
        image, iterations = self.input.image, self.input.iterations
        self._thread.submit(
            SweepRequest(serial, self.model, image, iterations, transforms, name, values, self.baseline)
        )

    @property
    def inference_pending(self) -> bool:
        """An inference newer than ``inference`` is still to come (never after :meth:`close`)."""
        return self._serials.pending and not self.closing

    @property
    def gallery_pending(self) -> bool:
        """The gallery of the model it was last asked of is still to come."""
        return self._gallery_answered is not self._gallery_model

    @property
    def computing(self) -> bool:
        """A pass or a sweep is queued or running on the inference thread."""
        return self._thread.busy

    @property
    def pending(self) -> bool:
        """A model, an inference (with its CNN probabilities), a sweep or the gallery is still to come."""
        coming = self._serials.pending or self._sweep_serials.pending
        coming = coming or self._cnn_serial is not None or self._reading_serial is not None
        coming = coming or self.gallery_pending
        return (self.loading or coming) and not self.closing

    def _on_finished(self, request, result) -> None:
        """A request of the inference thread is done. A result is used even when a newer
        input is already waiting for its pass: under a stream of inputs every result is one
        input old, and dropping those would leave the views unchanged until the stream stops."""
        if self.closing:
            return
        if isinstance(request, SweepRequest):
            if not self._sweep_serials.take(request.serial):
                return
            if isinstance(result, BaseException):
                self._exception(tr("Cannot compute the transform sweep"), result)
            else:
                self.sweepReady.emit(request, result.v, result.baseline)
            self.resultHandled.emit()
            return
        if isinstance(request, (BaselineRequest, ReadingRequest)):
            self._late_result(request, result)
            return
        if isinstance(request, GalleryRequest):
            # else another model's is on its way, or the window went on to another dataset
            if request.model is self._gallery_model:
                self._gallery_answered = request.model
                if request.dataset == self.dataset:
                    failed = self._failed("gallery", tr("Cannot reconstruct the test examples"), result)
                    self.gallery = None if failed else result
                    self.galleryReady.emit(self.gallery)
            self.resultHandled.emit()
            return
        if request.model is not self.model or not self._serials.take(request.serial):
            return  # another model came (its own request follows), or something newer is shown
        if self._failed("inference", tr("Cannot classify the input"), result):
            self.resultHandled.emit()
            return
        self.inference = result
        if self.read is not None and request.setup is not None:  # after the capsules: their lengths do not wait
            self._reading_serial = request.serial
            self._thread.submit(ReadingRequest(request.serial, request.model, result, request.setup, self.read))
        self.inferenceReady.emit(result)
        self.resultHandled.emit()

    def _late_result(self, request: BaselineRequest | ReadingRequest, result) -> None:
        """The CNN's probabilities or the input's reading, for the inference shown (``cnnReady``,
        ``readingReady``) unless another CNN or model came, or newer capsules are shown."""
        cnn = isinstance(request, BaselineRequest)
        if cnn and request.serial == self._cnn_serial:
            self._cnn_serial = None
        if not cnn and request.serial == self._reading_serial:
            self._reading_serial = None
        inference = self.inference
        same = request.baseline is self.baseline if cnn else request.inference is inference
        if same and request.serial == self._serials.shown and inference is not None:
            if isinstance(result, BaseException):
                self._exception(tr("Cannot run the CNN on the input") if cnn else tr("Cannot read the input"), result)
            elif cnn:
                inference.baseline = result
                self.cnnReady.emit()
            else:
                inference.reading = result
                self.readingReady.emit()
        self.resultHandled.emit()

    # -- training -----------------------------------------------------------------------------
    @property
    def is_training(self) -> bool:
        return self._worker is not None

    def start_training(self, config: TrainConfig, from_scratch: bool = True) -> Path | None:
        """Train in a background thread: a new model (``from_scratch``) or the current one
        further, on MNIST, saving to a new file in the user's checkpoint folder (returned;
        None when a run is going already, or when ``data_ready()`` says MNIST is not there).
        ``trainingEvent`` follows the run and weight snapshots replace ``model`` about every
        ``SNAPSHOT_INTERVAL_S``. A run of a baseline CNN (``config.model`` not ``capsnet``)
        trains the CNN compared with the capsules instead: its snapshots replace
        ``baseline``, and the CapsNet stays."""
        if self.is_training or self.closing or not self.data_ready():
            return None
        if config.device == "auto":
            config.device = self.device_name
        self.train_config = config
        cnn = config.model != "capsnet"
        init_model = initial_model(config, self.model, self.baseline, from_scratch)
        shown, info = (self.baseline, self.baseline_info) if cnn else (self.model, self.info)
        fine_tune = not from_scratch and info is not None and init_model.cfg == shown.cfg  # not fresh weights
        run = TrainingRun(config, init_model, self.data_root, origin=info.path if fine_tune else None)
        try:
            check_destination(run.checkpoint)  # before the views leave the model shown
        except OSError as exc:
            self._error(tr("Cannot train"), tr("{path}: {reason}", path=exc.filename, reason=exc.strerror or exc))
            return None
        self._position = self._shown_position = None
        self._before_run = {name: getattr(self, name) for name in BEFORE_RUN[cnn]}
        self._stop_event, self._pause_event = run.stop, run.pause
        self._holder = {}
        self._worker = start_worker(
            training_events,
            run.trainer,
            self._holder,
            lambda: self.input,
            lambda: self.baseline,
            self.read,
            start=False,  # after the views show the run's first weights, while is_training
            yielded=self._on_training_event,
            errored=self._on_training_error,
            finished=self._on_training_finished,
        )
        if cnn:
            self.baseline, self.baseline_info = copy.deepcopy(init_model).to(self.device).eval(), None
            self._changed(self.baselineChanged)
        elif from_scratch:
            self.model = copy.deepcopy(init_model).to(self.device).eval()
            self.info, self.checkpoint_path = None, None
            self._describe(QT_TR_NOOP("training from scratch"))
            self._changed(self.modelChanged)
        self.training_into = run.checkpoint
        self.trainingStarted.emit(run.checkpoint)
        self._worker.start()
        return run.checkpoint

    def stop_training(self) -> None:
        """Ask the run to stop (it autosaves and ends within about a second), paused or not."""
        if self._stop_event is not None:
            self._stop_event.set()

    @property
    def is_paused(self) -> bool:
        """Whether the run is asked to pause (it pauses after the step under way)."""
        return self._pause_event is not None and self._pause_event.is_set()

    def pause_training(self, paused: bool = True) -> None:
        """Pause the run after the step under way (``paused``), or let a paused run go on. A
        paused run keeps its optimizer state, learning-rate schedule and place in the epoch;
        it sends a ``PausedEvent`` and a snapshot of its weights, which the views then show."""
        if self._pause_event is not None:
            if paused:
                self._pause_event.set()
            else:
                self._pause_event.clear()

    def _on_training_event(self, ev) -> None:
        if self.closing:  # delivered after close: nothing to update
            return
        if isinstance(ev, WeightsSnapshot):
            if not isinstance(ev.model, BaselineCNN):
                self._shown_position = self._position
            self.apply_snapshot(ev)
            return
        if isinstance(ev, BatchEvent):
            self._position = (ev.epoch + ev.batch / ev.batches_per_epoch, ev.step)
            self._before_run = None  # the run has trained: its weights are the ones to keep
        elif isinstance(ev, EpochEvent):
            self._position = (float(ev.epoch), ev.step)
        if isinstance(ev, StoppedEvent) and ev.checkpoint is not None:
            info = header_of(ev.checkpoint)  # the header only: no 100 MB read on the GUI thread
            if info is not None and info.kind == "baseline":
                self.baseline_info = info
                self.baselineChanged.emit()
            elif info is not None:
                self.info = info
                # the file of the model shown: the next start opens it
                self.checkpoint_path = Path(ev.checkpoint).resolve()
                if origin := info.metadata.get("initialised_from"):
                    self._describe(QT_TR_NOOP("trained here from {origin} — {summary}"), origin=origin, summary=info)
                else:
                    self._describe(QT_TR_NOOP("trained here — {summary}"), summary=self.info)
        self.trainingEvent.emit(ev)

    def apply_snapshot(self, snapshot: WeightsSnapshot) -> None:
        """Use a snapshot's weights as the model (the training run sends them). Its inference
        is shown when it was made for the current input; otherwise the current input is
        inferred again with the new weights. A CNN's snapshot becomes ``baseline``."""
        if isinstance(snapshot.model, BaselineCNN):
            self.baseline = snapshot.model
            self._changed(self.baselineChanged)
            return
        self.model = snapshot.model
        snapshot.compare_with(self.baseline)  # the CNN may have changed since the snapshot was made
        if snapshot.source is self.input and snapshot.inference is not None:
            self._serials.next()
            self._serials.show_all()  # newer than any pass still running for the old weights
            self.inference = snapshot.inference
            self.inferenceReady.emit(snapshot.inference)
            self._ask_gallery()
        else:
            self.infer()  # and the gallery after the pass
        self.weightsChanged.emit()

    def _on_training_error(self, exc: Exception) -> None:
        if self._before_run is not None and not self.closing:  # failed before its first step
            for name, value in self._before_run.items():
                setattr(self, name, value)
            self._changed(self.modelChanged, self.baselineChanged)
        self._before_run = None
        self._run_failed = True
        self._exception(tr("Training failed"), exc)

    def _on_training_finished(self) -> None:
        self._before_run = None
        self._worker = None
        self.training_into = None
        self._stop_event = self._pause_event = None
        failed, self._run_failed = self._run_failed, False
        capsnet = self.train_config is None or self.train_config.model == "capsnet"
        if not self.closing and capsnet and not failed:  # a failure said so already, the model back
            self.modelChanged.emit()
        self.trainingFinished.emit()

    # -- end ----------------------------------------------------------------------------------
    def close(self, wait_ms: int = 5000) -> None:
        """Stop training (it autosaves) and the inference thread; emit nothing more. Waits
        up to ``wait_ms`` for the background workers to end; the GUI thread computes on as
        many intra-op threads as a new thread would again."""
        self._holder["closing"] = True
        self.stop_training()
        self.closing = True
        self._sweep_timer.stop()
        QThreadPool.globalInstance().waitForDone(wait_ms)
        self._thread.stop()
        own_intra_op_threads(default_intra_op_threads())

    def _changed(self, *signals) -> None:
        """Infer the input again with the networks of the moment, then emit ``signals`` (what changed)."""
        self.infer()
        for signal in signals:
            signal.emit()

    def _error(self, title: str, message: str, details: str = "") -> None:
        self.error.emit(title, message, details)

    def _exception(self, title: str, exc: BaseException) -> None:
        self._error(title, *exception_report(exc))

    def _failed(self, kind: str, title: str, result) -> bool:
        """Whether ``result`` of a ``kind`` of pass (``inference``, ``gallery``) is an exception;
        one is shown under ``title`` unless the last of that kind said the same (a stream of
        inputs, or of training snapshots, gives it once), and a success ends that run of them."""
        failed = isinstance(result, BaseException)
        message = str(result) if failed else ""
        if failed and message != self._last_errors.get(kind):
            self._exception(title, result)
        self._last_errors[kind] = message
        return failed
