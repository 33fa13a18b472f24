"""The overlapping-digits window: a MultiMNIST model in a :class:`~capsviz.gui.widgets.pairs.PairExplorer`.

Opened from View → Overlapping digits (the shipped MultiMNIST model), or by opening a
MultiMNIST checkpoint (File → Open checkpoint, or ``capsviz --checkpoint``). The digits
are the MNIST test split when its files are there, else the 2,000 shipped test digits.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from capsviz.data.mnist import MnistNotFoundError, load_mnist, load_sample
from capsviz.gui import dialogs
from capsviz.gui.core import ExplorerCore
from capsviz.gui.export import export_figures, export_figures_dialog, export_trace_dialog
from capsviz.gui.redraw import RedrawScheduler
from capsviz.gui.widgets.lengths import LengthsView
from capsviz.gui.widgets.pairs import GREEN, RED, PairExplorer, layered
from capsviz.gui.widgets.pose import PoseView
from capsviz.gui.widgets.routing import RoutingView
from capsviz.gui.widgets.training import TrainingPanel
from capsviz.gui.widgets.votes import VotesView
from capsviz.model.baseline import baseline_probabilities
from capsviz.model.inference import perturbation_grid, reconstruct
from capsviz.paths import shipped_multimnist_checkpoint
from capsviz.train.checkpoint import CheckpointError, CheckpointInfo, check_dataset_of, load_checkpoint, read_info
from capsviz.train.events import StoppedEvent

OTHER = np.array([0.85, 0.85, 0.85], np.float32)  # an edited capsule that is neither of the two longest


class PairWindow(QMainWindow):
    """A top-level window around one :class:`PairExplorer`, with the explorer's routing,
    votes, lengths and pose views on the pair, and a MultiMNIST training panel, in docks;
    :meth:`load` swaps its model.

    The pose view edits one digit capsule and keeps the other of the two longest as
    inferred: its reconstruction shows both over each other in the Fig. 5 colours. Training
    runs in the background (an :class:`~capsviz.gui.core.ExplorerCore` of its own, reading
    MNIST from ``data_root``, on ``device``); the pair follows the weights as they are learned.
    """

    def __init__(
        self,
        explorer: PairExplorer,
        path: Path,
        data_root: Path | None = None,
        device: str = "auto",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.explorer = explorer
        self.setCentralWidget(explorer)
        self.core = ExplorerCore(explorer.model, device=device, data_root=data_root, parent=self)
        self.training_panel = TrainingPanel("multimnist")
        self.training_panel.follow(self.core)
        self.routing_view = RoutingView(two_rows=True)  # a narrower dock beside the pair
        self.lengths_view = LengthsView(answers=2)  # the two longest capsules are the model's reading
        self.votes_view = VotesView(panels=2)  # the two longest capsules side by side
        self.pose_view = PoseView(
            decode=lambda pose, digit: reconstruct(self.explorer.model, pose, digit),
            grid=lambda pose, digit: perturbation_grid(self.explorer.model, pose, digit),
            compose=self.compose_pose,
            two_rows=True,
        )
        # the docks draw in the scheduler's turns after the pair's own panels, which the
        # explorer draws at once: a shift or a stroke shows its lengths first
        self.scheduler = RedrawScheduler(self, busy=lambda: self.core.is_training)
        for view in (self.lengths_view, self.routing_view, self.votes_view, self.pose_view, self.training_panel):
            view.redraws.register(self.scheduler)
        self.docks: dict[str, QDockWidget] = {}
        for name, title, view in (
            ("routing", "Routing", self.routing_view),
            ("votes", "Votes", self.votes_view),
            ("lengths", "Capsule lengths", self.lengths_view),
            ("pose", "Pose", self.pose_view),
            ("training", "Training (MultiMNIST)", self.training_panel),
        ):
            dock = QDockWidget(title, self)
            dock.setObjectName(f"pair_dock_{name}")
            dock.setWidget(view)
            dock.setToolTip(view.toolTip())
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
            self.docks[name] = dock
        self.tabifyDockWidget(self.docks["routing"], self.docks["votes"])
        self.tabifyDockWidget(self.docks["votes"], self.docks["lengths"])
        self.tabifyDockWidget(self.docks["lengths"], self.docks["pose"])
        self.tabifyDockWidget(self.docks["pose"], self.docks["training"])
        self.docks["routing"].raise_()
        self.docks["votes"].visibilityChanged.connect(lambda visible: visible and self.votes_view.refresh())
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(
            "Open comparison C&NN…", lambda: (path := dialogs.ask_checkpoint_to_open(self)) and self.load_baseline(path)
        )
        file_menu.addAction("Export &figures (PNG + SVG)…", lambda: export_figures_dialog(self, self.figures()))
        file_menu.addAction("Export routing &trace (.npz)…", lambda: export_trace_dialog(self, self.explorer.inference))
        file_menu.addAction("&Close", self.close)
        view_menu = self.menuBar().addMenu("&View")
        for dock in self.docks.values():
            view_menu.addAction(dock.toggleViewAction())
        self.resize(1750, 900)
        self.resizeDocks([self.docks["routing"]], [760], Qt.Orientation.Horizontal)
        self.path = path
        self._set_info()
        self._title()
        explorer.computed.connect(self.show_inference)
        # training swaps the core's model for each snapshot of the weights (and says so
        # through inferenceReady, the core having no input of its own); the pair follows
        self.core.inferenceReady.connect(self._follow_training)
        self.core.trainingStarted.connect(lambda checkpoint: self._title(training=Path(checkpoint)))
        self.core.trainingEvent.connect(self._on_training_event)
        self.core.modelChanged.connect(self._follow_training)
        self.routing_view.iterationsChanged.connect(explorer.set_iterations)
        self.core.baselineChanged.connect(self.show_inference)  # loaded, or a snapshot of a CNN in training
        self.core.load_baseline(None, "multimnist")  # the shipped MultiMNIST CNN, where it is installed
        self.show_inference()

    def _title(self, training: Path | None = None) -> None:
        what = self.path.name if training is None else f"{self.path.name}, training into {training.name}"
        self.setWindowTitle(f"capsviz — overlapping digits (MultiMNIST) — {what}")

    def _set_info(self) -> None:
        """The core's header of the model shown (the training panel starts a fine-tune at
        the learning rate its run ended with)."""
        self.core.info = header_of(self.path)
        self.core.model_summary = self.path.name if self.core.info is None else self.core.info.summary()
        self.core.modelChanged.emit()

    def _on_training_event(self, ev) -> None:
        if isinstance(ev, StoppedEvent) and ev.checkpoint is not None and ev.checkpoint.is_file():
            self.path = Path(ev.checkpoint)  # the weights shown are the file the run wrote
            self._title()

    def load(self, model, path: Path) -> None:
        self.core.model = model.to(self.core.device).eval()
        self.explorer.set_model(self.core.model)
        self.path = path
        self._set_info()
        self._title()

    def load_baseline(self, path: Path) -> bool:
        """Compare the capsules with the MultiMNIST CNN of ``path`` (a refused file is said
        in a message, and the current CNN stays). Returns success."""
        return self.core.load_baseline(Path(path), "multimnist")

    def _follow_training(self, *_) -> None:
        if self.core.model is not self.explorer.model:
            self.explorer.set_model(self.core.model)

    def closeEvent(self, event) -> None:
        """Closing hides the window (View → Overlapping digits shows it again); a training
        run, after the user agrees, stops and autosaves."""
        if self.core.is_training and not self.core.closing:
            if not self.confirm_close():
                event.ignore()
                return
            self.core.stop_training()
        self.routing_view.play_button.setChecked(False)
        event.accept()

    def confirm_close(self) -> bool:
        """Whether to stop the training run and close (asks the user)."""
        return dialogs.confirm_stop_training(self, "close the window")

    def shutdown(self) -> None:
        """End for good (the app quits): stop training (it autosaves), end the core's workers, close."""
        self.scheduler.stop()
        self.core.close()
        self.close()

    def show_inference(self) -> None:
        """Show the explorer's trace of the pair in the routing, lengths and pose views."""
        inference = self.explorer.inference
        cnn = self.core.baseline
        if inference is not None and cnn is not None:  # the CNN's probabilities for the same 36x36 input
            inference.baseline = baseline_probabilities(cnn, inference.input)
        self.routing_view.set_inference(inference)
        self.lengths_view.show_inference(inference)
        self.votes_view.show_inference(inference)
        self.pose_view.show_inference(inference)  # "predicted": the longest capsule

    def compose_pose(self, digit: int, reconstruction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pose view's edited ``reconstruction`` of capsule ``digit`` (H, W) with the other
        of the two longest capsules' reconstruction as inferred: (RGB (H, W, 3) in the Fig. 5
        colours, red for the first and green for the second capsule, light grey for a third
        digit; their clipped sum (H, W) to compare with the input)."""
        shown, kept = self.explorer.shown, self.explorer.reconstructions
        colours = (RED, GREEN)
        own = colours[shown.index(digit)] if digit in shown else OTHER
        images = [reconstruction] + [kept[k] for k, j in enumerate(shown) if j != digit]
        tints = [own] + [colours[k] for k, j in enumerate(shown) if j != digit]
        return layered(images, tints), np.clip(sum(images), 0.0, 1.0)

    def figures(self) -> dict[str, QWidget]:
        """The window's plots, by the file name an export gives them."""
        views = (self.explorer, self.lengths_view, self.routing_view, self.votes_view, self.pose_view)
        views += (self.training_panel,)
        return {name: widget for view in views for name, widget in view.figures().items()}

    def export_figures(self, folder: Path) -> list[Path]:
        """Write every plot as PNG and SVG into ``folder`` (see :func:`capsviz.gui.export.export_figures`)."""
        return export_figures(self.figures(), folder)


def test_digits(data_root: Path | None):
    """(digits, full): the MNIST test split and True, or the shipped 2,000-digit sample and False."""
    try:
        return load_mnist(train=False, data_root=data_root), True
    except MnistNotFoundError:
        return load_sample(), False


def header_of(path: Path) -> CheckpointInfo | None:
    """The header of the checkpoint at ``path`` (what network it holds, ``kind``, and what
    it is for, ``dataset``), or None when it cannot be read (loading it then says why)."""
    try:
        return read_info(path)
    except CheckpointError:
        return None


def load_pair_model(path: Path | None = None):
    """The MultiMNIST model of ``path`` (default: the shipped one) on the CPU and its file.

    Raises ``CheckpointError`` (one line) for a missing or bad file, or a model for MNIST."""
    path = Path(path) if path is not None else shipped_multimnist_checkpoint()
    model, info, _ = load_checkpoint(path)
    check_dataset_of(info, "multimnist", "the overlapping-digits view")
    return model, path


def open_pair_window(window, path: Path | None, data_root: Path | None) -> PairWindow | None:
    """Show ``window``'s overlapping-digits window with the model of ``path`` (None: the
    shipped MultiMNIST model), creating it on first use; on a bad file show the error and
    keep what was shown. Returns the window, or None."""
    try:
        model, path = load_pair_model(path)
    except CheckpointError as exc:
        window.errors.show_error(
            "Cannot open the MultiMNIST model",
            f"{exc}\n\nTrain one with: capsviz train --dataset multimnist",
        )
        return None
    pair_window = getattr(window, "pair_window", None)
    if pair_window is not None and pair_window.core.is_training:
        window.errors.show_error(
            "Training is running",
            "The overlapping-digits window is training its model: stop that run (its Training tab) "
            f"before opening {path.name} there.",
        )
        return None
    if pair_window is None:
        digits, full = test_digits(data_root)
        explorer = PairExplorer(model, digits, full_test_split=full)
        pair_window = PairWindow(explorer, path, data_root=data_root, device=window.core.device_name)
        # its training run's and CNN's errors, as the main window shows its own
        pair_window.core.error.connect(
            lambda title, message, details: window.errors.show_error(title, message, details or None)
        )
        window.pair_window = pair_window
    else:
        pair_window.load(model, path)
    pair_window.show()
    pair_window.raise_()
    return pair_window
