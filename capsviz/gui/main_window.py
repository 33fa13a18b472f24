"""The capsviz main window: the views' layout in docks, and their wiring to the explorer core."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QWidget

from capsviz.gui import dialogs
from capsviz.gui.browser_worker import BrowserEvaluator
from capsviz.gui.core import ExplorerCore
from capsviz.gui.export import export_figures, export_figures_dialog, export_trace_dialog
from capsviz.gui.input_sources import InputSources
from capsviz.gui.menus import build_menus
from capsviz.gui.pair_window import header_of, open_pair_window
from capsviz.gui.redraw import RedrawScheduler
from capsviz.gui.robustness_worker import RobustnessMeasurer
from capsviz.gui.settings import STATE_VERSION, default_settings, read_settings, write_settings
from capsviz.gui.widgets.browser import MnistBrowser
from capsviz.gui.widgets.canvas import InputPanel
from capsviz.gui.widgets.lengths import LengthsView
from capsviz.gui.widgets.pose import PoseView
from capsviz.gui.widgets.robustness import RobustnessView
from capsviz.gui.widgets.routing import RoutingView
from capsviz.gui.widgets.training import TrainingPanel
from capsviz.gui.widgets.transforms import TransformView
from capsviz.gui.widgets.votes import VotesView
from capsviz.model import CapsNet
from capsviz.model.inference import perturbation_grid, reconstruct


class MainWindow(QMainWindow):
    """The explorer's window: the input panel in the middle, the other views in docks.

    The state and the work (model, input, inference, training) are in :attr:`core`, an
    :class:`~capsviz.gui.core.ExplorerCore`; the views follow its signals and draw through
    :attr:`scheduler`, a :class:`~capsviz.gui.redraw.RedrawScheduler`, whose ``idle`` says
    when every view shows the current input.
    """

    def __init__(
        self,
        checkpoint: Path | None = None,
        data_root: Path | None = None,
        device: str = "auto",
        settings: QSettings | None = None,
    ) -> None:
        super().__init__()
        self.setWindowTitle("capsviz — Capsule Network explorer")
        self.settings = settings if settings is not None else default_settings()
        self.restored = read_settings(self.settings)
        self.core = core = ExplorerCore(CapsNet(), device=device, data_root=data_root, parent=self)
        self.scheduler = RedrawScheduler(
            self, busy=lambda: core.is_training or core.inference_pending, waiting=lambda: core.pending
        )
        self.input_panel = InputPanel()
        self.lengths_view = LengthsView()
        self.routing_view = RoutingView()
        self.votes_view = VotesView()
        self.robustness_view = RobustnessView()
        self.pose_view = PoseView(
            decode=lambda pose, digit: reconstruct(core.model, pose, digit),
            grid=lambda pose, digit: perturbation_grid(core.model, pose, digit),
        )
        self.training_panel = TrainingPanel()
        self.browser = MnistBrowser()
        self.transform_view = TransformView()
        # the order of the scheduler's turns (prediction and bars, being urgent, go first in each)
        views = (self.input_panel, self.lengths_view, self.routing_view, self.votes_view, self.pose_view)
        for view in (*views, self.transform_view, self.training_panel, self.robustness_view):
            view.redraws.register(self.scheduler)
        self._build_docks()
        self.model_label = QLabel("")
        self.baseline_label = QLabel("")  # the CNN compared with the capsules, when there is one
        self.statusBar().addPermanentWidget(self.model_label)
        self.statusBar().addPermanentWidget(self.baseline_label)
        self.errors = dialogs.ErrorRelay(
            self, lambda: dialogs.about_text(core.device, self.model_label.text().removeprefix("model: "))
        )
        self.sources = InputSources(self, self.input_panel, self.errors.show_error)
        self.robustness = RobustnessMeasurer(
            core, self.robustness_view, lambda title, exc: self.errors.show_exception(title, exc)
        )
        self.browser_evaluator = BrowserEvaluator(
            core,
            self.browser,
            lambda: self.dock_shown("browser"),
            lambda title, exc: self.errors.show_exception(title, exc),
        )
        self.actions = build_menus(
            self,
            {
                "open_image": self.sources.open_image_dialog,
                "paste": self.sources.paste_image,
                "open": lambda: (path := dialogs.ask_checkpoint_to_open(self)) and self.open_checkpoint(path),
                "open_baseline": lambda: (path := dialogs.ask_checkpoint_to_open(self)) and self.open_baseline(path),
                "save": self._save_checkpoint,
                "export_figures": lambda: export_figures_dialog(self, self.figures()),
                "export_trace": lambda: export_trace_dialog(self, core.inference),
                "quit": self.close,
                "about": self.errors.show_about,
                "pairs": lambda: open_pair_window(self, None, data_root),
            },
            self.docks.values(),
        )
        self.pair_window = None  # the overlapping-digits window, once opened
        self.setAcceptDrops(True)
        self._connect()
        self._apply_view_settings(self.restored.views)
        if checkpoint is None and self.restored.checkpoint is not None:
            if not core.load_model(self.restored.checkpoint):
                core.load_model(None)
        else:
            self.open_checkpoint(checkpoint)
        core.load_baseline(None)  # the shipped CNN beside the capsules, where it is installed
        if self.restored.geometry is not None:
            self.restoreGeometry(self.restored.geometry)
        self.settings_notice = ""
        if self.restored.problems:
            self.settings_notice = "settings: " + "; ".join(self.restored.problems) + " — using the defaults for these"
            logging.getLogger("capsviz").warning(self.settings_notice)
            self.statusBar().showMessage(self.settings_notice, 15000)
        self.sources.show_sample(0)

    def _connect(self) -> None:
        core, panel = self.core, self.input_panel
        panel.inputChanged.connect(lambda image: self._input_changed(core.set_image, image))
        panel.sampleRequested.connect(self.sources.show_random_sample)
        panel.openRequested.connect(self.sources.open_image_dialog)
        panel.inkPolarityChanged.connect(self.sources.reload_image)
        self.browser.showRequested.connect(lambda index: self.sources.show_mnist(self.browser.data, index))
        self.transform_view.transformChanged.connect(lambda t: self._input_changed(core.set_transform, t))
        self.transform_view.sweepRequested.connect(self.update_sweep)
        self.routing_view.iterationsChanged.connect(lambda n: self._input_changed(core.set_iterations, n))
        self.training_panel.follow(core)
        core.inferenceReady.connect(self._show_inference)
        core.sweepReady.connect(self._show_sweep)
        core.baselineChanged.connect(self.update_sweep)  # the sweep shows the CNN's probabilities too
        core.error.connect(lambda title, message, details: self.errors.show_error(title, message, details or None))
        core.resultHandled.connect(self.scheduler.check_idle)
        core.modelChanged.connect(lambda: self.model_label.setText(f"model: {core.model_summary}"))
        core.baselineChanged.connect(self._show_baseline_summary)

    # -- layout -------------------------------------------------------------------
    def _build_docks(self) -> None:
        self.setCentralWidget(self.input_panel)
        self.resize(1600, 1000)
        self.docks: dict[str, QDockWidget] = {}
        self.setDockOptions(QMainWindow.DockOption.AllowTabbedDocks | QMainWindow.DockOption.AllowNestedDocks)
        right, bottom = Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea
        self._add_dock("lengths", "Capsule lengths", self.lengths_view, right)
        self._add_dock("pose", "Pose", self.pose_view, right)
        self._add_dock("routing", "Routing", self.routing_view, bottom)
        self._add_dock("training", "Training", self.training_panel, bottom)
        self.splitDockWidget(self.docks["lengths"], self.docks["pose"], Qt.Orientation.Horizontal)
        self.splitDockWidget(self.docks["routing"], self.docks["training"], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["routing"], self.docks["training"]], [950, 550], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["lengths"], self.docks["pose"]], [420, 600], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["routing"]], [480], Qt.Orientation.Vertical)
        # Docks shown as tabs join the layout once the window is on screen: tabified earlier,
        # Qt 6 leaves a second, stray tab bar drawn over the other docks.
        self._add_dock("votes", "Votes", self.votes_view, None)
        self._add_dock("transforms", "Transforms", self.transform_view, None)
        self._add_dock("browser", "MNIST browser", self.browser, None)
        self._add_dock("robustness", "Robustness", self.robustness_view, None)
        self._tabs_placed = False
        self.docks_ready = False  # True once the tabbed docks are placed, after the first show

    def _add_dock(self, name: str, title: str, widget: QWidget, area) -> None:
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
        tabs = (("transforms", "pose"), ("votes", "pose"), ("browser", "training"), ("robustness", "training"))
        for name, beside in tabs:
            self.addDockWidget(self.dockWidgetArea(self.docks[beside]), self.docks[name])
            self.tabifyDockWidget(self.docks[beside], self.docks[name])
            self.docks[name].show()
            self.docks[beside].raise_()
        if self.restored.state is not None and not self.restoreState(self.restored.state, STATE_VERSION):
            self.restored.problems.append("window/state")
        # connected only now: placing the tabs shows each dock for a moment
        self.docks["transforms"].visibilityChanged.connect(lambda visible: visible and self.update_sweep())
        self.docks["votes"].visibilityChanged.connect(lambda visible: visible and self.votes_view.refresh())
        self.docks["browser"].visibilityChanged.connect(lambda visible: visible and self.browser_evaluator.evaluate())
        # a saved layout may bring them to the front: check once the tabs have settled
        QTimer.singleShot(0, self, self._start_visible_docks)

    def _start_visible_docks(self) -> None:
        self.update_sweep()
        if self.dock_shown("browser"):
            self.browser_evaluator.evaluate()
        self.docks_ready = True

    def dock_shown(self, name: str) -> bool:
        """Whether dock ``name`` is on screen (a tabbed dock behind another tab is not)."""
        dock = self.docks[name]
        return dock.isVisible() and not dock.visibleRegion().isEmpty()

    def dragEnterEvent(self, event) -> None:
        self.sources.drag_enter(event)

    def dropEvent(self, event) -> None:
        self.sources.drop(event)

    def figures(self) -> dict[str, QWidget]:
        """Every plot of the window, by file name."""
        views = (self.input_panel, self.lengths_view, self.routing_view, self.votes_view, self.pose_view)
        views += (self.training_panel, self.robustness_view)
        return {name: widget for view in views for name, widget in view.figures().items()}

    def export_figures(self, folder: Path) -> list[Path]:
        """Write every plot as PNG and SVG into ``folder``; returns the files."""
        return export_figures(self.figures(), folder)

    # -- settings -----------------------------------------------------------------
    def _settings_views(self) -> dict:
        return {
            "input": self.input_panel,
            "routing": self.routing_view,
            "pose": self.pose_view,
            "transforms": self.transform_view,
        }

    def _apply_view_settings(self, values: dict) -> None:
        for prefix, view in self._settings_views().items():
            view.apply_settings({key.split("/", 1)[1]: v for key, v in values.items() if key.startswith(prefix + "/")})

    def save_settings(self) -> None:
        views = {f"{p}/{k}": v for p, view in self._settings_views().items() for k, v in view.settings().items()}
        write_settings(
            self.settings, self.saveGeometry(), self.saveState(STATE_VERSION), self.core.checkpoint_path, views
        )

    # -- wiring -------------------------------------------------------------------
    def _input_changed(self, change, value) -> None:
        """Apply ``change(value)`` to the core's input; the preview shows what the model reads."""
        self.statusBar().clearMessage()
        change(value)
        self.input_panel.preview.set_image(self.core.input.model_image)
        self.update_sweep()

    def _show_inference(self, inference) -> None:
        for view in (self.input_panel, self.lengths_view, self.pose_view, self.votes_view):
            view.show_inference(inference)
        self.routing_view.set_inference(inference)

    def _show_baseline_summary(self) -> None:
        info = self.core.baseline_info
        text = "" if self.core.baseline is None else "CNN: training here" if info is None else f"CNN: {info.path.name}"
        if info is not None and info.test_accuracy is not None:
            text += f" — {100 * info.test_accuracy:.2f} %"
        self.baseline_label.setText(text)

    def update_sweep(self) -> None:
        """Ask for the transforms view's sweep for the current input, while the view is on screen."""
        if self.core.input.image is None or self.dock_shown("transforms"):
            self.core.request_sweep(*self.transform_view.sweep_transforms())

    def _show_sweep(self, request, v, baseline) -> None:
        inf = self.core.inference
        prediction = inf.prediction if inf is not None and not self.core.inference_pending else None
        self.transform_view.show_sweep(request and request.name, request and request.values, v, prediction, baseline)

    def _save_checkpoint(self) -> None:
        path = dialogs.ask_checkpoint_to_save(self)
        if path is not None and self.core.save_model(path) is not None:
            self.statusBar().showMessage(f"saved {path}", 5000)

    # -- closing ------------------------------------------------------------------
    def open_checkpoint(self, path: Path | None) -> bool:
        """Load ``path`` (None: the shipped model) into the explorer, a baseline CNN as the
        network compared with the capsules, or a MultiMNIST model into the overlapping-digits
        window. Returns success (errors are shown)."""
        header = header_of(path) if path is not None else None
        if header is not None and header.kind == "baseline":
            return self.open_baseline(path, header.dataset)
        if header is not None and header.dataset == "multimnist":
            if self.core.info is None:
                self.core.load_model(None)  # the explorer shows the shipped MNIST model meanwhile
            return open_pair_window(self, Path(path), self.core.data_root) is not None
        return self.core.load_model(path)

    def open_baseline(self, path: Path, dataset: str | None = None) -> bool:
        """Compare the capsules with the CNN of ``path``: an MNIST CNN here, a MultiMNIST one
        in the overlapping-digits window (``dataset``: the file's, when its header was read
        already). Returns success (a CapsNet file is refused with a message)."""
        if dataset is None:
            header = header_of(path)
            dataset = header.dataset if header is not None else None
        if dataset == "multimnist":
            window = self.pair_window or open_pair_window(self, None, self.core.data_root)
            if window is None:
                return False
            window.show()
            return window.load_baseline(Path(path))
        return self.core.load_baseline(Path(path))

    def confirm_close(self) -> bool:
        """Whether to close while training runs (asks the user)."""
        return dialogs.confirm_stop_training(self)

    def closeEvent(self, event) -> None:
        pair_training = self.pair_window is not None and self.pair_window.core.is_training
        if (self.core.is_training or pair_training) and not self.confirm_close():
            event.ignore()
            return
        self.routing_view.play_button.setChecked(False)
        self.browser_evaluator.quit()  # stops between chunks of 250 digits
        self.robustness.quit()  # stops before its next batch
        self.scheduler.stop()
        self.core.close()  # waits for the background workers
        if self.pair_window is not None:
            self.pair_window.shutdown()
        try:
            self.save_settings()
        except Exception as exc:  # never block quitting over settings
            logging.getLogger("capsviz").warning("cannot save settings: %s", exc)
        event.accept()
