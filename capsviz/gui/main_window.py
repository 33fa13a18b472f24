"""The capsviz main window: input, capsule lengths, routing, pose and training docks."""

from __future__ import annotations

import copy
import logging
import threading
import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import QApplication, QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox, QWidget
from superqt.utils import qthrottled

from capsviz.data.mnist import MnistSplit, load_mnist, load_test_or_sample
from capsviz.data.transforms import InputTransform, apply_transform
from capsviz.gui.browser_worker import BrowserEvaluator
from capsviz.gui.dialogs import ErrorRelay, about_text
from capsviz.gui.export import export_figures, export_figures_dialog, export_trace_dialog
from capsviz.gui.inference_thread import InferenceRequest, InferenceThread, Serials, SweepRequest
from capsviz.gui.input_sources import InputSources
from capsviz.gui.menus import build_menus
from capsviz.gui.settings import STATE_VERSION, default_settings, read_settings, write_settings
from capsviz.gui.widgets.browser import MnistBrowser
from capsviz.gui.widgets.canvas import InputPanel
from capsviz.gui.widgets.lengths import LengthsView
from capsviz.gui.widgets.pose import PoseView
from capsviz.gui.widgets.routing import RoutingView
from capsviz.gui.widgets.training import TrainingPanel
from capsviz.gui.widgets.transforms import TransformView
from capsviz.model import CapsNet
from capsviz.model.inference import Inference, infer, perturbation_grid, reconstruct
from capsviz.paths import shipped_checkpoint, user_checkpoint_dir
from capsviz.runtime import worker_thread
from capsviz.train.checkpoint import (
    CheckpointError,
    CheckpointInfo,
    fresh_path,
    load_checkpoint,
    read_info,
    save_checkpoint,
)
from capsviz.train.loop import (
    BatchEvent,
    EpochEvent,
    StoppedEvent,
    TrainConfig,
    Trainer,
    select_device,
)

# While training, the views show the model's weights as of at most this long ago: each
# snapshot swaps the model and redraws every view, so it is the GUI's largest recurring cost.
SNAPSHOT_INTERVAL_S = 1.0
# While training competes for the CPU, the views after the length bars update this far
# apart (so each of the five redraws about 6 times a second during a stroke).
STAGE_MS = 30
# Position of the routing view's first part in the list of staged views (refresh).
ROUTING_STAGE = 1


class WeightsSnapshot:
    """A copy of the model being trained and its inference for the current input, both
    made in the training thread so the GUI thread only swaps them in and redraws."""

    def __init__(self, model: CapsNet, inference: Inference | None) -> None:
        self.model = model
        self.inference = inference


def training_events(trainer_factory, stop_event: threading.Event, holder: dict, view_input):
    """Generator run by the worker thread: build the trainer, then relay its events and,
    at most every ``SNAPSHOT_INTERVAL_S``, a :class:`WeightsSnapshot`.

    ``view_input()`` returns the current (image (28, 28) or None, routing iterations).

    The thread runs as a background worker (:func:`capsviz.runtime.worker_thread`): a lower
    CPU priority and one intra-op thread fewer than the machine has, for this thread only.
    """
    with worker_thread("background"):
        trainer = trainer_factory()
        holder["trainer"] = trainer
        yield from _relay(trainer, holder, view_input)


def _relay(trainer, holder: dict, view_input):
    """The events of ``trainer.run()``, with a :class:`WeightsSnapshot` at most every
    ``SNAPSHOT_INTERVAL_S`` and one at the end (unless the window is closing)."""

    def snapshot() -> WeightsSnapshot:
        model = CapsNet(trainer.model.cfg)
        model.load_state_dict(trainer.snapshot_state_dict())
        model.to(trainer.device).eval()
        image, iterations = view_input()
        return WeightsSnapshot(model, None if image is None else infer(model, image, iterations))

    last = 0.0
    for ev in trainer.run():
        yield ev
        now = time.monotonic()
        if isinstance(ev, (BatchEvent, EpochEvent)) and now - last > SNAPSHOT_INTERVAL_S:
            last = now
            yield snapshot()
    if not holder.get("closing"):  # the window is going away: no views to update
        yield snapshot()


class MainWindow(QMainWindow):
    """Main window. Inference for the current input runs on an inference thread (newest
    input first) and the GUI thread draws its results; training runs in a worker thread
    and sends events and weight snapshots."""

    inferenceUpdated = Signal()
    trainingFinished = Signal()

    def __init__(
        self,
        checkpoint: Path | None = None,
        data_root: Path | None = None,
        device: str = "auto",
        settings: QSettings | None = None,
    ) -> None:
        super().__init__()
        self.setWindowTitle("capsviz — Capsule Network explorer")
        self.data_root = data_root
        self.device_name = device
        self.device = select_device(device)
        self.settings = settings if settings is not None else default_settings()
        self.restored = read_settings(self.settings)
        self.checkpoint_path: Path | None = None  # the file of the loaded model (None: the shipped one)
        self.model: CapsNet = CapsNet().eval()
        self.info: CheckpointInfo | None = None
        self.inference: Inference | None = None
        self.routing_iterations = 3
        self._worker = None
        self._stop_event: threading.Event | None = None
        self._train_holder: dict = {}
        self._train_config: TrainConfig | None = None
        # views still to update for the current inference: position in refresh's list -> redraw
        self._stages: dict = {}
        self._stage_turn = 0  # the position the round over the views continues from
        self._stage_timer = QTimer(self, singleShot=True)  # one chain of stages at most
        self._stage_timer.timeout.connect(self._run_stage)
        # a weight snapshot whose inference no longer fits the input redraws the views this
        # much later, unless new input (which uses the new weights) has redrawn them first
        self._snapshot_timer = QTimer(self, singleShot=True, interval=STAGE_MS)
        self._snapshot_timer.timeout.connect(lambda: self.refresh())
        self._closing = False  # set by closeEvent: late training events and timers draw nothing
        # inference for the current input runs on its own thread; serials order the refreshes
        self._inference_thread = InferenceThread(self)
        self._inference_thread.finished.connect(self._on_inferred, Qt.ConnectionType.QueuedConnection)
        self._serials = Serials()  # of the refreshes; shown: what the views show (or are staged to show)
        self._sweep_serials = Serials()  # the same for the transforms view's sweep
        self._present_throttled = qthrottled(self._present, timeout=STAGE_MS, parent=self)

        self.input_panel = InputPanel()
        self.lengths_view = LengthsView()
        self.routing_view = RoutingView()
        self.pose_view = PoseView(
            decode=lambda pose, digit: reconstruct(self.model, pose, digit),
            grid=lambda pose, digit: perturbation_grid(self.model, pose, digit),
        )
        self.training_panel = TrainingPanel()
        self.browser = MnistBrowser()
        self.transform_view = TransformView()
        self.transform = InputTransform()
        self.setCentralWidget(self.input_panel)
        self.resize(1600, 1000)
        self.docks: dict[str, QDockWidget] = {}
        self.setDockOptions(QMainWindow.DockOption.AllowTabbedDocks | QMainWindow.DockOption.AllowNestedDocks)
        self._add_dock("lengths", "Capsule lengths", self.lengths_view, Qt.DockWidgetArea.RightDockWidgetArea)
        self._add_dock("pose", "Pose", self.pose_view, Qt.DockWidgetArea.RightDockWidgetArea)
        self._add_dock("routing", "Routing", self.routing_view, Qt.DockWidgetArea.BottomDockWidgetArea)
        self._add_dock("training", "Training", self.training_panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.splitDockWidget(self.docks["lengths"], self.docks["pose"], Qt.Orientation.Horizontal)
        self.splitDockWidget(self.docks["routing"], self.docks["training"], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["routing"], self.docks["training"]], [950, 550], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["lengths"], self.docks["pose"]], [420, 600], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["routing"]], [480], Qt.Orientation.Vertical)
        # Docks shown as tabs join the layout once the window is on screen: tabified earlier,
        # Qt 6 leaves a second, stray tab bar drawn over the other docks.
        self._add_dock("transforms", "Transforms", self.transform_view, None)
        self._add_dock("browser", "MNIST browser", self.browser, None)
        self._tabs_placed = False
        self.docks_ready = False  # True once the tabbed docks are placed, after the first show
        self.model_label = QLabel("")
        self.statusBar().addPermanentWidget(self.model_label)
        self.errors = ErrorRelay(self, self.about_text)
        self.sources = InputSources(self, self.input_panel, self.errors.show_error)
        self.actions = build_menus(
            self,
            {
                "open_image": self.sources.open_image_dialog,
                "paste": self.sources.paste_image,
                "open": self._open_checkpoint_dialog,
                "save": self._save_checkpoint_dialog,
                "export_figures": self._export_figures_dialog,
                "export_trace": self._export_trace_dialog,
                "quit": self.close,
                "about": self.errors.show_about,
            },
            self.docks.values(),
        )

        self.input_panel.inputChanged.connect(self._on_input)
        self.input_panel.sampleRequested.connect(self.sources.show_random_sample)
        self.input_panel.openRequested.connect(self.sources.open_image_dialog)
        self.input_panel.inkPolarityChanged.connect(self.sources.reload_image)
        self.setAcceptDrops(True)
        self.browser.showRequested.connect(self._show_browser_digit)
        self.transform_view.transformChanged.connect(self._on_transform)
        self._sweep_throttled = qthrottled(self.update_sweep, timeout=120, parent=self)  # dies with the window
        self.transform_view.sweepRequested.connect(self._sweep_throttled)
        self.browser_evaluator = BrowserEvaluator(self, self.browser)
        self.routing_view.iterationsChanged.connect(self._on_iterations)
        self.routing_view.defer_redraws(self._stage_routing)
        self.training_panel.startRequested.connect(self.start_training)
        self.training_panel.stopRequested.connect(self.stop_training)

        self._apply_view_settings(self.restored.views)
        if checkpoint is None and self.restored.checkpoint is not None:
            if not self.load_model(self.restored.checkpoint):
                self.load_model(None)
        else:
            self.load_model(checkpoint)
        if self.restored.geometry is not None:
            self.restoreGeometry(self.restored.geometry)
        self.settings_notice = ""
        if self.restored.problems:
            self.settings_notice = "settings: " + "; ".join(self.restored.problems) + " — using the defaults for these"
            logging.getLogger("capsviz").warning(self.settings_notice)
            self.statusBar().showMessage(self.settings_notice, 15000)
        self.show_sample(0)

    # -- settings -----------------------------------------------------------------
    def _view_settings(self) -> dict:
        return {
            "input/brush": self.input_panel.brush.value(),
            "input/ink": self.input_panel.polarity.currentIndex(),
            "routing/iterations": self.routing_view.iterations.value(),
            "routing/scale": self.routing_view.scale.currentIndex(),
            "pose/range": self.pose_view.range.currentIndex(),
            "transforms/parameter": self.transform_view.parameter.currentIndex(),
        }

    def _apply_view_settings(self, views: dict) -> None:
        self.input_panel.brush.setValue(views["input/brush"])
        self.input_panel.polarity.setCurrentIndex(views["input/ink"])
        self.routing_view.iterations.setValue(views["routing/iterations"])
        self.routing_view.scale.setCurrentIndex(views["routing/scale"])
        self.pose_view.range.setCurrentIndex(views["pose/range"])
        self.transform_view.parameter.setCurrentIndex(views["transforms/parameter"])

    def save_settings(self) -> None:
        write_settings(
            self.settings,
            self.saveGeometry(),
            self.saveState(STATE_VERSION),
            self.checkpoint_path,
            self._view_settings(),
        )

    # -- layout -------------------------------------------------------------------
    def _add_dock(self, name: str, title: str, widget, area) -> None:
        """Make a dock; place it in ``area`` now, or (None) keep it hidden until showEvent tabs it."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(widget)
        dock.setToolTip(widget.toolTip())
        if area is None:
            dock.hide()
        else:
            self.addDockWidget(area, dock)
        self.docks[name] = dock

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._tabs_placed:
            self._tabs_placed = True
            QTimer.singleShot(0, self, self._place_tabbed_docks)

    def _place_tabbed_docks(self) -> None:
        for name, beside in (("transforms", "pose"), ("browser", "training")):
            self.addDockWidget(self.dockWidgetArea(self.docks[beside]), self.docks[name])
            self.tabifyDockWidget(self.docks[beside], self.docks[name])
            self.docks[name].show()
            self.docks[beside].raise_()
        if self.restored.state is not None and not self.restoreState(self.restored.state, STATE_VERSION):
            self.restored.problems.append("window/state")
        # connected only now: placing the tabs shows each dock for a moment
        self.docks["transforms"].visibilityChanged.connect(lambda visible: visible and self._sweep_throttled())
        self.docks["browser"].visibilityChanged.connect(lambda visible: visible and self.evaluate_test_set())
        # a saved layout may bring them to the front: check once the tabs have settled
        QTimer.singleShot(0, self, self._start_visible_docks)

    def dock_shown(self, name: str) -> bool:
        """Whether dock ``name`` is on screen (a tabbed dock behind another tab is not)."""
        dock = self.docks[name]
        return dock.isVisible() and not dock.visibleRegion().isEmpty()

    def _start_visible_docks(self) -> None:
        if self.dock_shown("transforms"):
            self._sweep_throttled()
        if self.dock_shown("browser"):
            self.evaluate_test_set()
        self.docks_ready = True

    # -- model ----------------------------------------------------------------------
    def load_model(self, path: Path | None) -> bool:
        """Load a checkpoint (None: the shipped model); on failure show the message and keep
        the current model (at start-up, an untrained CapsNet, which the message and the
        status bar then say)."""
        target = Path(path) if path else shipped_checkpoint()
        try:
            model, info, _ = load_checkpoint(target, device=self.device)
        except CheckpointError as exc:
            if self.info is None and self.checkpoint_path is None and path is None:
                self.model_label.setText("model: untrained (the shipped model is missing)")
                self.show_error(
                    "No model",
                    f"The shipped model cannot be loaded: {exc}\n\nThe views show an "
                    "untrained CapsNet. Open a checkpoint (File → Open checkpoint…) or train one "
                    "in the Training panel.",
                )
            else:
                self.show_error("Cannot load checkpoint", f"{exc}\n\nThe current model stays loaded.")
            return False
        self.model, self.info = model, info
        self.checkpoint_path = Path(path).resolve() if path else None
        self.model_label.setText(f"model: {target.name} — {info.summary()}")
        self.refresh()
        self._model_changed()
        return True

    def _open_checkpoint_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open checkpoint", "", "safetensors (*.safetensors);;All files (*)")
        if path:
            self.load_model(Path(path))

    def _save_checkpoint_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save checkpoint", "capsnet.safetensors", "safetensors (*.safetensors)"
        )
        if path:
            info = self.info
            save_checkpoint(
                path,
                self.model,
                train_config=info.train_config if info else {},
                epoch=info.epoch if info else 0,
                step=info.step if info else 0,
                test_accuracy=info.test_accuracy if info else None,
                test_images=info.test_images if info else None,
            )
            self.statusBar().showMessage(f"saved {path}", 5000)

    # -- export -------------------------------------------------------------------------------
    def figures(self) -> dict[str, QWidget]:
        """Every plot of the window, by file name."""
        views = (self.input_panel, self.lengths_view, self.routing_view, self.pose_view, self.training_panel)
        return {name: widget for view in views for name, widget in view.figures().items()}

    def export_figures(self, folder: Path) -> list[Path]:
        """Write every plot as PNG and SVG into ``folder``; returns the files."""
        return export_figures(self.figures(), folder)

    def _export_figures_dialog(self) -> None:
        export_figures_dialog(self, self.figures())

    def _export_trace_dialog(self) -> None:
        export_trace_dialog(self, self.inference)

    def about_text(self) -> str:
        """The About box's text for this window's device and model."""
        return about_text(self.device, self.model_label.text().removeprefix("model: "))

    # -- errors -------------------------------------------------------------------------------
    @property
    def error_box(self) -> QMessageBox | None:
        """The error message box on screen (None when there is none)."""
        return self.errors.error_box

    @property
    def about_box(self) -> QMessageBox | None:
        """The About box, once it was opened."""
        return self.errors.about_box

    def show_error(self, title: str, message: str, details: str | None = None) -> None:
        """Tell the user and keep a record (:meth:`ErrorRelay.show_error`)."""
        self.errors.show_error(title, message, details)

    def show_exception(self, title: str, exc: BaseException) -> None:
        """:meth:`show_error` for an exception, with its traceback as the details."""
        self.errors.show_exception(title, exc)

    # -- input ----------------------------------------------------------------------------------
    @property
    def sample(self) -> MnistSplit:
        """The MNIST test sample the input's sample digits come from."""
        return self.sources.sample

    def show_sample(self, index: int) -> None:
        """Use MNIST test-sample image ``index`` as the input, exactly as stored."""
        self.sources.show_sample(index)

    def show_random_sample(self) -> None:
        self.sources.show_random_sample()

    def open_image(self, source, name: str | None = None) -> bool:
        """Classify an image file (path) or encoded image bytes (:meth:`InputSources.open_image`)."""
        return self.sources.open_image(source, name)

    def open_mime(self, mime) -> bool:
        """Open what a drop or the clipboard holds: a local image file, or image data."""
        return self.sources.open_mime(mime)

    def paste_image(self) -> bool:
        return self.sources.paste_image()

    def dragEnterEvent(self, event) -> None:
        self.sources.drag_enter(event)

    def dropEvent(self, event) -> None:
        self.sources.drop(event)

    # -- MNIST browser -------------------------------------------------------------------------
    def evaluate_test_set(self) -> None:
        """Load the test split (full MNIST, else the assets sample) into the browser and
        classify all of it in a background thread, unless that is done or running."""
        self.browser_evaluator.evaluate()

    def _model_changed(self) -> None:
        """Predictions in the browser belong to the previous model: drop them, redo if shown."""
        self.browser_evaluator.model_changed()

    def _show_browser_digit(self, index: int) -> None:
        self.sources.show_mnist(self.browser.data, index)

    # -- transforms ----------------------------------------------------------------------------
    def model_input(self) -> np.ndarray | None:
        """What the model reads: the input panel's 28x28 image under the current transform."""
        base = self.input_panel.current
        if base is None or self.transform.is_identity():
            return base
        return apply_transform(base, self.transform)

    def _on_transform(self, transform: InputTransform) -> None:
        self.transform = transform
        self._on_input(self.input_panel.current)

    def update_sweep(self) -> None:
        """Recompute the transforms view's sweep for the current input (when the view is shown)."""
        view = self.transform_view
        base = self.input_panel.current
        if base is None or not self.dock_shown("transforms"):
            if base is None:
                self._sweep_serials.show_all()  # a sweep still running is for an older input
                view.set_sweep(None)
            return
        name, values, transforms = view.sweep_transforms()
        self._inference_thread.submit(
            SweepRequest(
                self._sweep_serials.next(), self.model, base, self.routing_iterations, transforms, name, values
            )
        )

    def _on_sweep(self, request: SweepRequest, v) -> None:
        """Show a sweep the inference thread computed: ``v`` (K, 10, 16) or the exception."""
        if not self._sweep_serials.take(request.serial):
            return
        if request.name != self.transform_view.parameter.currentData():
            return  # swept another parameter: the change asked for a new sweep
        if isinstance(v, BaseException):
            self.show_exception("Cannot compute the transform sweep", v)
            return
        view = self.transform_view
        digit = view.capsule.currentData()
        if digit == -1:
            digit = (
                self.inference.prediction
                if self.inference is not None and not self.inference_pending
                else int(np.linalg.norm(v[len(v) // 2], axis=-1).argmax())
            )
        view.set_sweep(request.values, v[:, digit], digit)

    def _on_input(self, image) -> None:
        self.statusBar().clearMessage()
        self.refresh()
        self._sweep_throttled()

    def _on_iterations(self, n: int) -> None:
        self.routing_iterations = n
        self.refresh()
        self._sweep_throttled()

    def refresh(self, inference: Inference | None = None, staged: bool = True) -> None:
        """Update every view for the current input: with ``inference`` (already computed for
        it), at once; otherwise after a forward pass with the routing trace.

        With ``staged`` (the default) that pass runs on the inference thread and the views
        update when it is done (:meth:`_on_inferred`); the prediction and the length bars
        first, the other views one per event-loop turn (``STAGE_MS`` apart while training
        competes for the CPU), so no single turn blocks the GUI long. ``inferenceUpdated``
        is emitted when no view is left to update (also after the routing view's own
        controls were redrawn as stages). Without ``staged`` the pass and every view run
        now, on the calling (GUI) thread.

        New input while views are still pending replaces what they will show but not
        the round: the next stage is the view after the last one updated, so under a
        stream of input (a stroke being drawn) every view keeps updating, in turn.
        """
        self._snapshot_timer.stop()  # this refresh uses the newest weights
        serial = self._serials.next()
        image = self.model_input()
        self.input_panel.preview.set_image(image)
        if image is not None and inference is None:
            if staged:
                self._inference_thread.submit(InferenceRequest(serial, self.model, image, self.routing_iterations))
                return
            inference = infer(self.model, image, self.routing_iterations)
        self._serials.show_all()  # results of older requests no longer apply
        self._show(image, inference, staged)

    def _on_inferred(self, request: InferenceRequest, result) -> None:
        """A request of the inference thread is done: show its result.

        A result is shown even when newer input is already waiting for its own pass: under
        a stream of input every result is one input old, and dropping those would leave
        the views unchanged until the stream stops."""
        if self._closing:
            return
        if isinstance(request, SweepRequest):
            self._on_sweep(request, result)
            return
        self._present_throttled(request, result)

    def _present(self, request: InferenceRequest, result) -> None:
        """Show a result of the inference thread (or its error), unless something newer is
        shown. Called through ``_present_throttled``: at most once per ``STAGE_MS``, with
        the newest result. Under a stream of input the thread delivers one every 10-15 ms,
        and each redraws the prediction and the length bars; more often than the staged
        views follow is more than the eye needs and left the GUI thread less to paint with."""
        if self._closing or request.model is not self.model:  # a model change was followed by a new request
            return
        if not self._serials.take(request.serial):
            return
        if isinstance(result, BaseException):
            box = self.error_box
            if box is None or not box.isVisible() or not box.text().endswith(str(result)):
                self.show_exception("Cannot classify the input", result)  # once, not once per input
            return
        self._show(request.image, result, staged=True)

    @property
    def inference_pending(self) -> bool:
        """True while the views wait for a pass of the inference thread (never after close)."""
        return self._serials.pending and not self._closing

    def _show(self, image: np.ndarray | None, inf: Inference | None, staged: bool) -> None:
        """Put ``inf`` (for ``image``; both None: no input) in the views."""
        if image is None or inf is None:
            self.inference = None
            primary = lambda: self.lengths_view.set_primary(None)  # noqa: E731
            routing = self.routing_view.update_parts(None)
            pose = lambda: self.pose_view.set_capsules(None, None, None)  # noqa: E731
            now = [lambda: self.input_panel.set_prediction(None), lambda: self.lengths_view.set_lengths(None)]
        else:
            self.inference = inf
            primary = lambda: self.lengths_view.set_primary(inf.u_lengths)  # noqa: E731
            routing = self.routing_view.update_parts(inf)
            pose = lambda: self.pose_view.set_capsules(image, inf.v[-1], inf.prediction)  # noqa: E731
            now = [
                lambda: self.input_panel.set_prediction(
                    inf.prediction, float(inf.lengths[-1, inf.prediction]), inf.recognised
                ),
                lambda: self.lengths_view.set_lengths(inf.lengths),
            ]
        for update in now:
            update()
        # positions: the length maps, the routing parts from ROUTING_STAGE (as _stage_routing), the pose view
        self._stages = {
            ROUTING_STAGE - 1: primary,
            **dict(enumerate(routing, start=ROUTING_STAGE)),
            ROUTING_STAGE + len(routing): pose,
        }
        if not staged:
            self._stage_timer.stop()
            for key in sorted(self._stages):
                self._stages[key]()
            self._stages = {}
            self.inferenceUpdated.emit()
        elif not self._stage_timer.isActive():
            self._stage_timer.start(self._stage_interval())

    def _stage_routing(self, parts: list) -> None:
        """Redraw the routing view's ``parts`` as stages (its controls changed, not the
        input); they take the routing positions of :meth:`refresh`'s stages, so they replace
        pending ones rather than being drawn twice."""
        if self._closing:
            return
        self._stages.update(enumerate(parts, start=ROUTING_STAGE))
        if not self._stage_timer.isActive():
            self._stage_timer.start(self._stage_interval())

    def _stage_interval(self) -> int:
        return STAGE_MS if self.is_training or self.inference_pending else 0

    def _run_stage(self) -> None:
        if not self._stages:
            return
        order = sorted(self._stages)
        key = next((k for k in order if k >= self._stage_turn), order[0])
        self._stages.pop(key)()
        self._stage_turn = key + 1
        if self._stages:
            self._stage_timer.start(self._stage_interval())
        else:
            self._stage_turn = 0
            self.inferenceUpdated.emit()

    def wait_for_views(self, timeout_s: float = 5.0) -> None:
        """Run the event loop until every view shows the inference for the current input
        and a transform sweep asked for has come (tools and tests). A sweep not yet asked
        for (it is throttled) is not waited for."""
        end = time.monotonic() + timeout_s
        while (
            self._stages or self.inference_pending or self._sweep_serials.pending and not self._closing
        ) and time.monotonic() < end:
            QApplication.processEvents()
            time.sleep(0.0005)  # a busy loop would hold the GIL the inference thread needs
        QApplication.processEvents()  # one more turn: the last view lays out what it was given

    # -- training -----------------------------------------------------------------------
    @property
    def is_training(self) -> bool:
        return self._worker is not None

    def start_training(self, config: TrainConfig, from_scratch: bool = True) -> None:
        from superqt.utils import create_worker

        if self.is_training:
            return
        if config.device == "auto":
            config.device = self.device_name
        self._train_config = config
        data_root = self.data_root
        init_model = None if from_scratch else copy.deepcopy(self.model).cpu()
        ckpt = fresh_path(user_checkpoint_dir() / "gui-training.safetensors")  # never an earlier run's file
        stop = threading.Event()

        def factory() -> Trainer:
            train = load_mnist(train=True, data_root=data_root)
            test, _ = load_test_or_sample(data_root)
            return Trainer(config, train, test, model=init_model, checkpoint_path=ckpt, stop_event=stop)

        if from_scratch:
            self.model = CapsNet().to(self.device).eval()
            self.info = None
            self.model_label.setText("model: training from scratch")
        self._stop_event = stop
        self._train_holder = {}
        self.training_panel.reset_curves()
        self.training_panel.set_running(True)
        self.training_panel.status.setText(f"loading MNIST…; the run will be saved to {ckpt}")
        worker = create_worker(
            training_events,
            factory,
            stop,
            self._train_holder,
            self._view_input,
            _start_thread=False,
            _connect={
                "yielded": self._on_training_event,
                "errored": self._on_training_error,
                "finished": self._on_training_finished,
            },
        )
        self._worker = worker
        worker.start()

    def _view_input(self) -> tuple[np.ndarray | None, int]:
        """For the training thread: the current input and routing iterations (read-only)."""
        return self.model_input(), self.routing_iterations

    def stop_training(self) -> None:
        if self._stop_event is not None:
            self._stop_event.set()
            self.training_panel.status.setText("stopping…")

    def _on_training_event(self, ev) -> None:
        if isinstance(ev, BatchEvent):
            self.training_panel.add_batch(ev, self._train_config.reconstruction_weight)
        elif isinstance(ev, EpochEvent):
            self.training_panel.add_epoch(ev)
        elif isinstance(ev, WeightsSnapshot):
            if self._closing:  # delivered after closeEvent: no views to update
                return
            self.model = ev.model
            current = self.model_input()
            fresh = (
                ev.inference is not None
                and current is not None
                and np.array_equal(ev.inference.input, current)
                and ev.inference.iterations == self.routing_iterations
            )
            if fresh:
                self.refresh(ev.inference)
            elif not self._snapshot_timer.isActive():
                # under a stream of input the next input event redraws with these weights;
                # an inference here as well would double the GUI thread's work in that turn
                self._snapshot_timer.start()
        elif isinstance(ev, StoppedEvent):
            word = "finished" if ev.finished else "stopped"
            self.training_panel.status.setText(f"{word} at step {ev.step}; saved {ev.checkpoint}")
            if ev.checkpoint is not None:
                try:
                    self.info = read_info(ev.checkpoint)  # the header only: no 100 MB read on the GUI thread
                    self.model_label.setText(f"model: trained here — {self.info.summary()}")
                except CheckpointError:
                    pass

    def _on_training_error(self, exc: Exception) -> None:
        self.show_exception("Training failed", exc)
        self.training_panel.status.setText(f"failed: {exc}")

    def _on_training_finished(self) -> None:
        self._worker = None
        self._model_changed()
        self._stop_event = None
        self.training_panel.set_running(False)
        self.trainingFinished.emit()

    def closeEvent(self, event) -> None:
        if self.is_training:
            answer = self._confirm_close()
            if not answer:
                event.ignore()
                return
            self._train_holder["closing"] = True
            self.stop_training()
        self._closing = True
        self.routing_view.play_button.setChecked(False)
        self.browser_evaluator.quit()  # stops between chunks of 250 digits
        QThreadPool.globalInstance().waitForDone(5000)
        self._stages = {}
        self._stage_timer.stop()
        self._snapshot_timer.stop()
        self._inference_thread.stop()
        try:
            self.save_settings()
        except Exception as exc:  # never block quitting over settings
            logging.getLogger("capsviz").warning("cannot save settings: %s", exc)
        event.accept()

    def _confirm_close(self) -> bool:
        answer = QMessageBox.question(
            self, "Training is running", "Stop training, save the autosave checkpoint and quit?"
        )
        return answer == QMessageBox.StandardButton.Yes
