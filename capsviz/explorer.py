"""The explorer's state and requests, without Qt: what the windows' core
(:class:`capsviz.gui.core.ExplorerCore`) holds and hands to its threads.

- :class:`ExplorerInput`: the input of the moment, an immutable value;
- :class:`InferenceRequest`, :class:`ReadingRequest`, :class:`BaselineRequest`,
  :class:`SweepRequest`, :class:`GalleryRequest`: the passes the inference thread runs
  (:data:`REQUESTS`, in the order it serves them), ordered by :class:`Serials`;
- :class:`RequestThread`: that thread, newest request of each kind first;
- :class:`RedrawQueue`, :class:`Redraws`: the views' parts to draw, and the order they are
  drawn in;
- :func:`initial_model`, :class:`TrainingRun`: what a training run starts from, the file it
  writes and the trainer it builds;
- :func:`training_events`: the training worker's generator, the run's events and
  :class:`WeightsSnapshot` copies of the weights for the views;
- :func:`gallery_examples`: the test examples the training panel's gallery reconstructs;
- :func:`read_model`, :func:`read_cnn`, :func:`read_models`: a checkpoint read for the models
  of one dataset; :func:`untrained_model`, what is shown when none reads;
- :func:`classify_in_chunks`, :func:`browsed`, :func:`step_through`: the MNIST browser's
  predictions, the test digits its filter keeps, and the next of them; :func:`confusion_cells`,
  its confusion matrix; :func:`browser_filter`, :func:`browser_digit` and :func:`browser_score`,
  its lines on them;
- :func:`prediction_line`: the input panel's line on the model's answer.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from capsviz.data.mnist import MnistSplit, load_mnist, load_test_or_sample
from capsviz.data.multimnist import fixed_test_pairs
from capsviz.data.transforms import InputTransform, apply_transform, apply_transforms
from capsviz.evaluate import evaluate_model
from capsviz.model import CapsNet
from capsviz.model.baseline import BaselineCNN, baseline_probabilities, preset
from capsviz.model.inference import Gallery, Inference, digit_capsules, infer, reconstruction_gallery
from capsviz.model.losses import RECOGNITION_THRESHOLD
from capsviz.paths import user_checkpoint_dir
from capsviz.runtime import worker_thread
from capsviz.texts import english
from capsviz.train.checkpoint import CheckpointInfo, check_dataset_of, fresh_path, load_baseline, load_checkpoint
from capsviz.train.config import TrainConfig
from capsviz.train.events import BatchEvent, EpochEvent, PausedEvent
from capsviz.train.loop import Trainer, default_model_config, fresh_model

# While training, the views show the model's weights as of at most this long ago: each
# snapshot swaps the model and redraws every view, so it is the GUI's largest recurring cost.
SNAPSHOT_INTERVAL_S = 1.0
# who refuses another dataset's model ("... the explorer takes MNIST models")
EXPLORERS = {"mnist": "the explorer", "multimnist": "the overlapping-digits explorer"}


def _frozen(image) -> np.ndarray:
    """A read-only float32 copy of ``image`` (kept as it is when it is one already)."""
    if isinstance(image, np.ndarray) and image.dtype == np.float32 and not image.flags.writeable and image.base is None:
        return image
    out = np.array(image, dtype=np.float32, copy=True)
    out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class ExplorerInput:
    """What the model is asked about: an immutable value, replaced (:meth:`replace`), never
    changed, so any thread may read the one it holds.

    image : (H, W) float32 in [0, 1], read-only, or None (no input); H x W is the model's input size
    transform : the :class:`~capsviz.data.transforms.InputTransform` applied before the model reads it
    iterations : routing iterations (>= 1)
    setup : what the input source says about the image beyond its pixels (the digits of a
        pair: :class:`capsviz.model.pairs.PairSetup`), handed to the core's ``read``; or None
    model_image : ``image`` under ``transform`` (read-only), what the model reads
    """

    image: np.ndarray | None = None
    transform: InputTransform = InputTransform()
    iterations: int = 3
    setup: object | None = None
    model_image: np.ndarray | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        image = None if self.image is None else _frozen(self.image)
        object.__setattr__(self, "image", image)
        shown = (
            image if image is None or self.transform.is_identity() else _frozen(apply_transform(image, self.transform))
        )
        object.__setattr__(self, "model_image", shown)

    def replace(self, **changes) -> ExplorerInput:
        """A new input with ``changes`` (``image``, ``transform``, ``iterations``, ``setup``)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, eq=False)
class InferenceRequest:
    """A forward pass with the routing trace for one input.

    ``serial`` orders requests of a kind (larger is newer); ``image`` is (H, H) float32
    in [0, 1], H the model's input size; ``iterations`` is the number of routing iterations
    (>= 1); ``baseline`` a CNN compared with the capsules, or None; ``read`` (with the
    input's ``setup``) what the window's kind of input reads from the trace, or None.
    :meth:`run` returns an :class:`~capsviz.model.inference.Inference` (with the CNN's
    probabilities in ``baseline`` and ``read(model, inference, setup)`` in ``reading``).
    """

    serial: int
    model: CapsNet
    image: np.ndarray
    iterations: int
    baseline: BaselineCNN | None = None
    setup: object | None = None
    read: Callable | None = None

    def run(self):
        inference = infer(self.model, self.image, self.iterations)
        if self.baseline is not None:
            inference.baseline = baseline_probabilities(self.baseline, self.image)
        if self.read is not None and self.setup is not None:
            inference.reading = self.read(self.model, inference, self.setup)
        return inference


@dataclass(frozen=True, eq=False)
class ReadingRequest:
    """What the window's kind of input reads from an inference already shown (a pair's
    :class:`~capsviz.model.pairs.PairReading`: its decoded digits and segmentation), asked
    for after the :class:`InferenceRequest` of the same input (the same ``serial``), so the
    capsule lengths do not wait for it. :meth:`run` returns ``read(model, inference, setup)``."""

    serial: int
    model: CapsNet
    inference: Inference
    setup: object
    read: Callable

    def run(self):
        return self.read(self.model, self.inference, self.setup)


@dataclass(frozen=True, eq=False)
class BaselineRequest:
    """The compared CNN's class probabilities for one input, asked for after the
    :class:`InferenceRequest` of the same input (the same ``serial``), so the capsules'
    answer does not wait for the CNN. ``image`` is (H, H) float32 in [0, 1]; :meth:`run`
    returns (classes,) float32 probabilities in [0, 1]."""

    serial: int
    baseline: BaselineCNN
    image: np.ndarray

    def run(self) -> np.ndarray:
        return baseline_probabilities(self.baseline, self.image)


class Sweep(NamedTuple):
    """What a sweep computes: ``v`` (K, 10, 16) float32, the digit capsules at each step, and
    ``baseline`` (K, 10) float32, the compared CNN's probabilities there (None without one)."""

    v: np.ndarray
    baseline: np.ndarray | None


@dataclass(frozen=True, eq=False)
class SweepRequest:
    """The digit capsules of one input under each transform of a sweep.

    ``image`` is (H, H) float32 in [0, 1], ``transforms`` the K transforms, ``name``
    the swept parameter and ``values`` (K,) its value in each. :meth:`run` returns a
    :class:`Sweep`.
    """

    serial: int
    model: CapsNet
    image: np.ndarray
    iterations: int
    transforms: list[InputTransform]
    name: str
    values: np.ndarray
    baseline: BaselineCNN | None = None

    def run(self) -> Sweep:
        images = apply_transforms(self.image, self.transforms)
        v = digit_capsules(self.model, images, self.iterations)
        return Sweep(v, None if self.baseline is None else baseline_probabilities(self.baseline, images))


GALLERY_PAIRS = 6  # test pairs in the training panel's gallery (digits: one of each class)


def gallery_examples(dataset: str, digits: MnistSplit) -> tuple[np.ndarray, np.ndarray]:
    """The test examples the training panel's gallery reconstructs, from the MNIST test
    ``digits``: for ``mnist`` the first digit of each class there, in class order, (K, 28, 28)
    float32 in [0, 1] with their (K,) labels; for ``multimnist`` the first
    ``GALLERY_PAIRS`` fixed test pairs, (K, 36, 36) with their (K, 2) labels.
    ``ValueError`` for another dataset."""
    if dataset == "mnist":
        first = [int(np.flatnonzero(digits.labels == k)[0]) for k in range(10) if (digits.labels == k).any()]
        return digits.images[first].astype(np.float32) / 255.0, digits.labels[first].astype(np.int64)
    if dataset == "multimnist":
        pairs = fixed_test_pairs(digits, GALLERY_PAIRS)
        return pairs.images.astype(np.float32) / 255.0, pairs.labels.astype(np.int64)
    raise ValueError(f"dataset must be mnist or multimnist, not {dataset!r}")


@dataclass(frozen=True, eq=False)
class GalleryRequest:
    """The :class:`~capsviz.model.inference.Gallery` of a model, asked for when the model
    changes (a checkpoint loaded, a training snapshot): ``examples(dataset)`` gives the
    test examples, ``(images, labels)`` as :func:`gallery_examples` (called on the inference
    thread: drawing the pairs takes some 70 ms), and ``model`` reconstructs them
    (:func:`~capsviz.model.inference.reconstruction_gallery`)."""

    model: CapsNet
    dataset: str
    examples: Callable[[str], tuple[np.ndarray, np.ndarray]]

    def run(self) -> Gallery:
        return reconstruction_gallery(self.model, *self.examples(self.dataset))


# the kinds of request, in the order the inference thread serves them
REQUESTS = (InferenceRequest, ReadingRequest, BaselineRequest, SweepRequest, GalleryRequest)


class RequestThread:
    """Runs requests (:data:`REQUESTS`) on a worker thread of its own, handing each result
    to ``deliver(request, result)`` there.

    While the user draws, the input changes every few tens of milliseconds and each change
    needs a forward pass with a routing trace (:func:`capsviz.model.inference.infer`, 5-50 ms
    on a CPU shared with training); a transform sweep needs one pass per step of the sweep.
    Run on the GUI thread, such passes and the repaints they cause land in the same
    event-loop turn; here they run on their own thread, newest input first, and the GUI
    thread only draws the results (:class:`capsviz.gui.inference_thread.InferenceThread`
    delivers them to it).

    :meth:`submit` never blocks. A request that has not started yet is replaced by a newer
    one of its kind, so under a stream of input the thread works back to back on the
    latest input; pending requests are served in the order of :data:`REQUESTS` (a forward
    pass before a sweep). Each request that runs ends in ``deliver(request, result)``, in
    the order the requests ran; ``result`` is what ``request.run()`` returned, or the
    exception it raised. ``deliver`` returning False ends the thread (its receiver is gone).
    The thread starts with the first request.

    The thread computes with one intra-op thread fewer than the default (at least one;
    where torch's thread pool is not per thread, with the default) and at a lower CPU
    priority than the GUI thread (:data:`capsviz.runtime.INFERENCE_NICENESS`): while the user draws it is
    busy most of the time, and with every core asked of each of its operations, or an
    equal share of the core it shares with the GUI thread, the GUI thread waited for a
    core to paint on.
    """

    def __init__(self, deliver: Callable[[object, object], bool]) -> None:
        self._deliver = deliver
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
        pass that is running (its result is not delivered; results delivered before may still
        be on their way to a receiver on another thread, which must ignore them if it is going away)."""
        with self._cond:
            self._stopped = True
            self._next.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def _run(self) -> None:
        try:
            with worker_thread("inference"):
                self._serve()
        finally:  # whatever ended it, a later submit starts a new thread
            with self._cond:
                self._thread = None

    def _serve(self) -> None:
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
                if self._stopped or not self._deliver(request, result):
                    return


class Serials:
    """Serial numbers of one kind of request, against what the views show.

    ``latest`` is the newest request's, ``shown`` that of the one the views show (or the
    newest change made at once, which voids results of older requests)."""

    def __init__(self) -> None:
        self.latest = self.shown = 0

    def next(self) -> int:
        """The serial of a new request."""
        self.latest += 1
        return self.latest

    def show_all(self) -> None:
        """The views show the newest state already: results of earlier requests no longer apply."""
        self.shown = self.latest

    def take(self, serial: int) -> bool:
        """Whether a result of request ``serial`` is newer than what is shown (then it is)."""
        if serial <= self.shown:
            return False
        self.shown = serial
        return True

    @property
    def pending(self) -> bool:
        """A result newer than what is shown is still to come."""
        return self.shown < self.latest


class RedrawQueue:
    """The views' parts to draw and the order they are drawn in, without Qt (when they are
    drawn is :class:`capsviz.gui.redraw.RedrawScheduler`'s to say).

    - A part is a name and a callable without arguments, *urgent* (the prediction, the
      length bars: what a user watches while drawing) or ordinary; :meth:`parts` lists them
      in the order they were registered, the urgent ones first.
    - :meth:`mark` requests parts. A part requested again before it is drawn is drawn once
      (requests merge), with what its view holds then.
    - :meth:`draw_urgent` draws the urgent parts requested, together; :meth:`draw_next` one
      ordinary part, round the list from the part after the last one drawn, so under a
      stream of requests every view keeps its turn.
    """

    def __init__(self) -> None:
        self._draw: dict[str, Callable[[], None]] = {}
        self._order: list[str] = []  # ordinary parts, in registration order
        self._urgent: list[str] = []
        self._requested: set[str] = set()
        self._turn = 0  # position in _order the next ordinary part is looked for from

    def register(self, name: str, draw: Callable[[], None], urgent: bool = False) -> None:
        """Add part ``name``. Raises ``ValueError`` for a name already registered."""
        if name in self._draw:
            raise ValueError(f"redraw part {name!r} is registered already")
        self._draw[name] = draw
        (self._urgent if urgent else self._order).append(name)

    @property
    def parts(self) -> list[str]:
        """Every registered part: the urgent ones, then the ordinary ones, each in registration order."""
        return self._urgent + self._order

    @property
    def requested(self) -> set[str]:
        """The parts requested and not yet drawn."""
        return set(self._requested)

    def mark(self, names, keep: bool = True) -> set[bool]:
        """Request parts ``names`` (unless not ``keep``); returns whether urgent (True) and
        ordinary (False) parts are among them. Raises ``KeyError`` for a name not registered."""
        for name in names:
            if name not in self._draw:
                raise KeyError(f"no redraw part {name!r}")
        if keep:
            self._requested.update(names)
        return {name in self._urgent for name in names}

    def draw(self, name: str) -> None:
        """Draw part ``name`` now (it is no longer requested)."""
        self._requested.discard(name)
        self._draw[name]()

    def draw_urgent(self) -> None:
        for name in self._urgent:
            if name in self._requested:
                self.draw(name)

    def draw_next(self) -> bool:
        """Draw the next ordinary part requested, if any; returns whether more are requested."""
        ordinary = [i for i, name in enumerate(self._order) if name in self._requested]
        if ordinary:
            i = next((i for i in ordinary if i >= self._turn), ordinary[0])
            self._turn = i + 1
            self.draw(self._order[i])
        if any(name in self._requested for name in self._order):
            return True
        self._turn = 0
        return False


class Redraws:
    """A view's named parts: drawn at once, or, once :meth:`register` gave them to the
    window's scheduler (a :class:`RedrawQueue` with a ``request`` method:
    :class:`capsviz.gui.redraw.RedrawScheduler`), in its turns (as ``"prefix/name"``).

    Parameters
    ----------
    prefix : str
        The view's name, the first half of each part's scheduler name.
    parts : dict
        Part name -> callable drawing it, in drawing order.
    urgent : iterable of str
        The parts drawn in every turn they are requested in.
    """

    def __init__(self, prefix: str, parts: dict[str, Callable[[], None]], urgent=()) -> None:
        self.prefix = prefix
        self.parts = dict(parts)
        self.urgent = set(urgent)
        self.scheduler: RedrawQueue | None = None

    def register(self, scheduler: RedrawQueue) -> None:
        for name, draw in self.parts.items():
            scheduler.register(f"{self.prefix}/{name}", draw, urgent=name in self.urgent)
        self.scheduler = scheduler

    def request(self, *names: str) -> None:
        """Draw ``names`` (default: every part): now, or in the scheduler's coming turns."""
        names = names or tuple(self.parts)
        if self.scheduler is None:
            for name in names:
                self.parts[name]()
        else:
            self.scheduler.request(*(f"{self.prefix}/{name}" for name in names))


class WeightsSnapshot:
    """A copy of the model being trained and its inference for the input of the moment,
    both made in the training thread so the GUI thread only swaps them in. ``baseline`` is
    the CNN whose probabilities ``inference.baseline`` holds (None: none were added)."""

    def __init__(
        self,
        model: torch.nn.Module,
        inference: Inference | None,
        source: ExplorerInput,
        baseline: BaselineCNN | None = None,
    ) -> None:
        self.model = model
        self.inference = inference
        self.source = source
        self.baseline = baseline

    def compare_with(self, baseline: BaselineCNN | None) -> None:
        """Make the inference's CNN probabilities those of ``baseline``, the CNN compared with
        the capsules now (None: none), when the snapshot was made with another one."""
        if self.inference is not None and baseline is not self.baseline:
            image = self.inference.input
            self.inference.baseline = None if baseline is None else baseline_probabilities(baseline, image)


def initial_model(config: TrainConfig, model: CapsNet, baseline: BaselineCNN | None, from_scratch: bool):
    """The network a run of ``config`` starts from, on the CPU.

    A CapsNet run (``config.model`` ``capsnet``) trains a CapsNet of ``model``'s config, any
    other run the baseline CNN preset ``config.model`` for ``config``'s image size. Fresh
    weights (:func:`~capsviz.train.loop.fresh_model`, drawn from ``config.seed``) when
    ``from_scratch`` or when ``baseline`` is not that preset; else a copy of ``model`` (a
    CNN run: of ``baseline``) to train further. ``model`` and ``baseline`` are left as they are.
    """
    if config.model == "capsnet":
        current, cfg = model, model.cfg
    else:
        cfg = preset(config.model, config.image_size)
        current = baseline if baseline is not None and baseline.cfg == cfg else None
    return fresh_model(config, cfg) if from_scratch or current is None else copy.deepcopy(current).cpu()


class TrainingRun:
    """One training run the explorer starts: ``config`` from ``init_model``, on MNIST in
    ``data_root`` (None: the default places).

    ``checkpoint`` is the file it writes, a new one in the user's checkpoint folder
    (``gui-training.safetensors``, a CNN run ``gui-baseline.safetensors``, numbered past an
    earlier run's files, which are never replaced); ``stop`` and ``pause`` are the
    ``threading.Event`` objects its trainer watches (see :class:`~capsviz.train.loop.Trainer`).
    ``origin``: the file of the weights a fine-tune starts from (None: fresh weights), which
    its checkpoints name (metadata ``initialised_from``).
    """

    def __init__(
        self, config: TrainConfig, init_model, data_root: Path | None = None, origin: Path | None = None
    ) -> None:
        self.config, self.init_model, self.data_root = config, init_model, data_root
        self.origin = origin  # the file of the weights a fine-tune starts from; its checkpoints name it
        name = "gui-training.safetensors" if config.model == "capsnet" else "gui-baseline.safetensors"
        self.checkpoint = fresh_path(user_checkpoint_dir() / name)
        self.stop, self.pause = threading.Event(), threading.Event()

    def trainer(self) -> Trainer:
        """The run's :class:`~capsviz.train.loop.Trainer`, reading the MNIST training digits
        and the test digits (the shipped sample where the test split is missing); what the
        training thread does first (:func:`training_events`). Raises ``MnistNotFoundError``
        or ``MnistDataError`` (:func:`~capsviz.data.mnist.load_mnist`) for missing or broken
        MNIST files, ``OSError`` when ``checkpoint`` cannot be written."""
        train = load_mnist(train=True, data_root=self.data_root)
        test, _ = load_test_or_sample(self.data_root)
        trainer = Trainer(
            self.config, train, test, self.init_model, self.checkpoint, stop_event=self.stop, pause_event=self.pause
        )
        trainer.initialised_from = self.origin
        return trainer


def training_events(trainer_factory, holder: dict, current_input, current_baseline=lambda: None, read=None):
    """Generator run by the training worker: build the trainer, then relay its events and,
    at most every ``SNAPSHOT_INTERVAL_S`` and once at the end (unless ``holder["closing"]``),
    a :class:`WeightsSnapshot` (and at once when the run pauses: the views show the paused
    weights). ``current_input()`` returns the :class:`ExplorerInput` of the
    moment, ``current_baseline()`` the CNN compared with the capsules (or None): a CapsNet
    snapshot's inference is the :class:`InferenceRequest` of that input (with ``read``)
    run in this thread, and carries that CNN's probabilities for it.

    The thread runs as a background worker (:func:`capsviz.runtime.worker_thread`): a lower
    CPU priority and one intra-op thread fewer than the machine has, for this thread only.
    """
    with worker_thread("background"):
        trainer = trainer_factory()
        holder["trainer"] = trainer

        def snapshot() -> WeightsSnapshot:
            model = type(trainer.model)(trainer.model.cfg)
            model.load_state_dict(trainer.snapshot_state_dict())
            model.to(trainer.device).eval()
            source = current_input()
            if source.model_image is None or isinstance(model, BaselineCNN):  # a CNN's probabilities are the core's
                return WeightsSnapshot(model, None, source)
            cnn = current_baseline()
            return WeightsSnapshot(model, request_for(0, model, source, cnn, read).run(), source, cnn)

        last = 0.0
        for ev in trainer.run():
            yield ev
            now = time.monotonic()
            due = isinstance(ev, (BatchEvent, EpochEvent)) and now - last > SNAPSHOT_INTERVAL_S
            if due or isinstance(ev, PausedEvent):
                last = now
                yield snapshot()
        if not holder.get("closing"):  # the window is going away: no views to update
            yield snapshot()


def read_model(path: Path, dataset: str, device) -> tuple[torch.nn.Module, CheckpointInfo]:
    """The CapsNet of checkpoint ``path`` on ``device`` and its header; ``CheckpointError``
    (one line) for a bad file or a model for another dataset than ``dataset``."""
    model, info, _ = load_checkpoint(path, device=device)
    check_dataset_of(info, dataset, EXPLORERS[dataset])
    return model, info


def read_cnn(path: Path, dataset: str, device) -> tuple[BaselineCNN, CheckpointInfo]:
    """The baseline CNN of checkpoint ``path``, as :func:`read_model` for a CapsNet."""
    cnn, info, _ = load_baseline(path, device=device)
    check_dataset_of(info, dataset, "the comparison CNN here")
    return cnn, info


def read_models(path: Path, cnn_path: Path, dataset: str, device, cnn_required: bool = False) -> tuple[tuple, tuple]:
    """The CapsNet of ``path`` and the CNN of ``cnn_path`` for ``dataset``, read at a
    background worker's priority (:func:`capsviz.runtime.worker_thread`): ``((model, info),
    (cnn, cnn_info))``, as :func:`read_model` and :func:`read_cnn` give them. Without a file
    at ``cnn_path`` the CNN is ``(None, None)``, unless ``cnn_required`` (a file the user
    named): then, as for any file that does not read, ``CheckpointError``."""
    with worker_thread("background"):
        model = read_model(path, dataset, device)
        cnn = read_cnn(cnn_path, dataset, device) if cnn_required or cnn_path.is_file() else (None, None)
        return model, cnn


def untrained_model(dataset: str) -> CapsNet:
    """The paper's CapsNet for ``dataset`` (``mnist`` or ``multimnist``), freshly initialised
    from the default seed: what the explorer shows when no model reads."""
    config = TrainConfig(dataset=dataset)
    return fresh_model(config, default_model_config(config))


def classify_in_chunks(model, cnn, data: MnistSplit, chunk: int = 250):
    """Generator: the answers of ``model`` and of the CNN compared with it (``cnn``, or None)
    for every digit of ``data`` (a non-empty split), ``chunk`` digits at a time, so that a
    consumer can report progress and stop between chunks. Yields ``("progress", done,
    total)`` after each chunk, then ``("done", predictions, cnn_predictions)``: (N,) int64
    each (:func:`~capsviz.evaluate.evaluate_model`), the CNN's None without one."""
    answers, cnn_answers = [], []
    for start in range(0, len(data), chunk):
        part = MnistSplit(data.images[start : start + chunk], data.labels[start : start + chunk])
        answers.append(evaluate_model(model, part, batch_size=chunk))
        if cnn is not None:
            cnn_answers.append(evaluate_model(cnn, part, batch_size=chunk))
        yield ("progress", start + len(part), len(data))
    yield ("done", np.concatenate(answers), np.concatenate(cnn_answers) if cnn_answers else None)


def browsed(
    labels: np.ndarray,
    predictions: np.ndarray | None = None,
    baseline: np.ndarray | None = None,
    mistakes: bool = False,
    disagreements: bool = False,
    cell: tuple[int, int] | None = None,
) -> np.ndarray:
    """Indices of the test digits the MNIST browser's filter keeps, ascending, (K,) int64.

    ``labels`` (N,) ints; ``predictions`` (N,) ints, the model's answers, or None (then every
    digit is kept); ``baseline`` (N,) ints, the compared CNN's answers, or None. With
    predictions: only the model's ``mistakes``; only the digits on which the two networks
    answer differently (``disagreements``, with a ``baseline``); only those of confusion
    matrix ``cell``, (true label, prediction).
    """
    keep = np.ones(len(labels), dtype=bool)
    if predictions is not None:
        if mistakes:
            keep &= predictions != labels
        if disagreements and baseline is not None:
            keep &= predictions != baseline
        if cell is not None:
            keep &= (labels == cell[0]) & (predictions == cell[1])
    return np.flatnonzero(keep)


def step_through(indices: np.ndarray, index: int, direction: int) -> int | None:
    """The first of ``indices`` (ascending ints) after ``index`` (``direction`` > 0), else the
    last before it, going round at the ends (``index`` need not be among them); None when
    ``indices`` is empty."""
    if len(indices) == 0:
        return None
    if direction > 0:
        later = indices[indices > index]
        return int(later[0] if later.size else indices[0])
    earlier = indices[indices < index]
    return int(earlier[-1] if earlier.size else indices[-1])


def confusion_cells(cm: np.ndarray | None, n: int = 10) -> dict[tuple[int, int], tuple[str, float]]:
    """The browser's confusion matrix ``cm`` ((n, n) counts, true class by row; None: not
    counted yet) as its cells: (row, column) -> (text, shade). Empty cells off the diagonal
    stay blank, so the mistakes stand out; the shade (0: none) grows with the log of the count,
    so that single mistakes show."""
    top = 1 if cm is None else max(1, int(cm.max()))
    cells = {}
    for r in range(n):
        for c in range(n):
            count = 0 if cm is None else int(cm[r, c])
            text = "" if cm is None or (count == 0 and r != c) else f"{count:,}"
            cells[r, c] = (text, 0.15 + 0.75 * float(np.log1p(count) / np.log1p(top)) if count else 0.0)
    return cells


def browser_filter(n: int, cell: tuple[int, int] | None, mistakes: bool, disagreements: bool, tr=english) -> str:
    """The MNIST browser's line on its filter (``cell``, ``mistakes``, ``disagreements``: as
    :func:`browsed`), which keeps ``n`` digits; ``tr``: see :mod:`capsviz.texts`."""
    parts = []
    if cell is not None:
        parts.append(tr("true {true}, predicted {predicted}", true=cell[0], predicted=cell[1]))
    if mistakes:
        parts.append(tr("mistakes only"))
    if disagreements:
        parts.append(tr("CNN disagrees"))
    # the count of all digits is in the browser's source line: here only a filter's count
    if parts:
        return tr("browsing {n:,} digits ({filters})", n=n, filters=tr("; ").join(parts))
    return tr("browsing all digits")


def browser_digit(index: int, label: int, predicted: int | None = None, cnn: int | None = None, tr=english) -> str:
    """The MNIST browser's line on test digit ``index`` of class ``label``, with the model's
    answer ``predicted`` and the compared CNN's ``cnn`` where given (a wrong one marked ✗)."""
    if predicted is None:
        return tr("test image {index}: label {label}", index=index, label=label)
    fields = {"index": index, "label": label, "predicted": predicted, "wrong": "" if predicted == label else "  ✗"}
    if cnn is None:
        return tr("test image {index}: label {label}, predicted {predicted}{wrong}", **fields)
    fields.update(cnn=cnn, cnn_wrong="" if cnn == label else "  ✗")
    return tr("test image {index}: label {label}, predicted {predicted}{wrong}; CNN {cnn}{cnn_wrong}", **fields)


def browser_score(labels: np.ndarray, predictions: np.ndarray, cnn: np.ndarray | None = None, tr=english) -> str:
    """The MNIST browser's line on the model's mistakes on its test digits (``labels``,
    ``predictions``: (N,) ints) and, with ``cnn`` ((N,) ints), the compared CNN's."""

    def score(answers: np.ndarray) -> tuple[int, float]:
        errors = int((answers != labels).sum())
        return errors, 100 * (1 - errors / len(labels))

    errors, correct = score(predictions)
    if cnn is None:
        return tr("{errors:,} mistakes ({correct:.2f} % correct)", errors=errors, correct=correct)
    cnn_errors, cnn_correct = score(cnn)
    return tr(
        "{errors:,} mistakes ({correct:.2f} % correct); the CNN {cnn_errors:,} mistakes "
        "({cnn_correct:.2f} % correct); they disagree on {disagree:,}",
        errors=errors,
        correct=correct,
        cnn_errors=cnn_errors,
        cnn_correct=cnn_correct,
        disagree=int((predictions != cnn).sum()),
    )


def prediction_line(digit: int | None, length: float | None = None, recognised: bool = True, tr=english) -> str:
    """The predicted ``digit`` and its capsule's ``length``; when not ``recognised`` (no capsule
    reaches the threshold of :func:`capsviz.model.inference.recognised`), a line saying so over
    the longest capsule in smaller print (rich text); None: no digit."""
    if digit is None:
        return tr("no digit")
    if recognised:
        return f"{digit}   ({length:.2f})"
    return tr(
        "<span style='font-size: 13pt;'>nothing recognised</span><br>"
        "<span style='font-size: 10pt; font-weight: normal;'>longest: {digit} "
        "({length:.2f} &lt; {threshold:.1f})</span>",
        digit=digit,
        length=math.floor(length * 100) / 100,  # rounded down: 0.4987 is not "0.50 < 0.5"
        threshold=RECOGNITION_THRESHOLD,
    )


def request_for(serial: int, model, source: ExplorerInput, baseline=None, read=None) -> InferenceRequest:
    """The :class:`InferenceRequest` of ``source``'s model image (which must not be None)."""
    return InferenceRequest(serial, model, source.model_image, source.iterations, baseline, source.setup, read)
