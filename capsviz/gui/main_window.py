"""The capsviz window: one explorer for every kind of model, its views in docks, wired to the explorer core.

A window shows one kind of model at a time (:data:`KINDS`): single digits (MNIST, 28 x 28)
or pairs of overlapping digits (MultiMNIST, 36 x 36, paper Sec. 6). The kind supplies the
input source in the middle (the drawing canvas, or the pair composer), the docks shown,
the number of answers the views mark, and how pose edits are composed. View → Single
digits / Overlapping digits switches; the other kind's model, CNN, input and dock layout
are kept for the way back.
"""

from __future__ import annotations

import functools
import logging
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSettings, QSignalBlocker, QSize, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QDockWidget,
    QLabel,
    QMainWindow,
    QStackedWidget,
    QStyle,
    QWidget,
)

from capsviz import texts
from capsviz.data.download import missing_archives
from capsviz.data.mnist import load_test_or_sample
from capsviz.explorer import Redraws, gallery_examples
from capsviz.gui import dialogs, i18n
from capsviz.gui.core import BackgroundJob, ExplorerCore
from capsviz.gui.download import fetch_mnist, offer_mnist
from capsviz.gui.export import export_figures, export_figures_dialog, export_trace_dialog
from capsviz.gui.i18n import tr
from capsviz.gui.input_sources import InputSources
from capsviz.gui.jobs import BrowserEvaluator, RobustnessMeasurer, RoutingChecker
from capsviz.gui.menus import build_menus
from capsviz.gui.redraw import RedrawScheduler
from capsviz.gui.settings import STATE_VERSION, default_settings, read_settings, write_settings
from capsviz.gui.tour import Tour
from capsviz.gui.widgets.browser import MnistBrowser
from capsviz.gui.widgets.canvas import InputPanel
from capsviz.gui.widgets.common import (
    CapsuleSelection,
    CurrentPage,
    StatusBar,
    laid_out_at,
    share_digit,
    share_iteration,
)
from capsviz.gui.widgets.lengths import LengthsView
from capsviz.gui.widgets.pairs import PairPanel
from capsviz.gui.widgets.pose import PoseView
from capsviz.gui.widgets.robustness import RobustnessView
from capsviz.gui.widgets.routing import RoutingView
from capsviz.gui.widgets.training import TrainingPanel
from capsviz.gui.widgets.transforms import TransformView
from capsviz.gui.widgets.votes import VotesView
from capsviz.logs import about_report
from capsviz.model import CapsNet
from capsviz.model.inference import perturbation_grid, reconstruct
from capsviz.model.pairs import read_pair, scan_in_background
from capsviz.texts import QT_TR_NOOP
from capsviz.train.checkpoint import cnn_line, header_of


@dataclass(frozen=True)
class Kind:
    """A kind of model the window explores: its ``dataset``, the window ``title``, the
    ``docks`` it shows and how many ``answers`` (longest capsules) the model gives."""

    dataset: str
    title: str
    docks: tuple[str, ...]
    answers: int


ALL_DOCKS = ("lengths", "pose", "routing", "training", "votes", "transforms", "browser", "robustness")
KINDS = {
    "mnist": Kind("mnist", QT_TR_NOOP("Capsule Network explorer"), ALL_DOCKS, 1),
    "multimnist": Kind("multimnist", QT_TR_NOOP("overlapping digits (MultiMNIST)"), ALL_DOCKS[:5], 2),
}


WINDOW_SIZE = (1600, 1000)  # pixels: the window's size on a first start, where the screen has room
BOTTOM_DOCKS_HEIGHT = 492  # pixels: the least the bottom docks get on a first start there


def first_window_size(width: int, height: int) -> QSize:
    """The window's size on a first start (or on a screen of another size than the one its
    layout was saved on): ``WINDOW_SIZE``, within the screen's free ``width`` x ``height``
    pixels (a 1366 x 768 laptop's, where the window is also maximised, its title bar on the
    screen too); never under the window's least size, which Qt keeps."""
    return QSize(min(WINDOW_SIZE[0], width), min(WINDOW_SIZE[1], height))


EXPORT_DOCK_SIZE = QSize(660, 420)  # px: a closed dock's content for an export, where no dock of its tabs shows
FOCUS_CHAIN_LIMIT = 500  # widgets Tab passes over at most in search of one on screen


def on_screen(widget: QWidget) -> bool:
    """Whether some of ``widget`` can be seen (for a scroll area or a plot: of its viewport,
    which covers it); false for a widget in a dock behind another dock's tab."""
    shown = widget.viewport() if isinstance(widget, QAbstractScrollArea) else widget
    return widget.isVisible() and not shown.visibleRegion().isEmpty()


class MainWindow(QMainWindow):
    """The explorer's window: the input source in the middle, the views in docks.

    The state and the work (model, input, inference, training) are in :attr:`core`, an
    :class:`~capsviz.gui.core.ExplorerCore`; the views follow its signals and draw through
    :attr:`scheduler`, a :class:`~capsviz.gui.redraw.RedrawScheduler`, whose ``idle`` says
    when every view shows the current input. :attr:`kind` is the dataset of the models
    shown (a key of :data:`KINDS`); :meth:`show_kind` switches it.
    """

    def __init__(
        self,
        checkpoint: Path | None = None,
        data_root: Path | None = None,
        device: str = "auto",
        settings: QSettings | None = None,
    ) -> None:
        super().__init__()
        self.kind = "mnist"
        self.settings = settings if settings is not None else default_settings()
        self.restored = read_settings(self.settings)
        self.language = self.restored.views["app/language"]  # "": the system locale's
        # built in English, then given its language (the end of __init__): a language switch
        # makes each text again from the English source it was first made from
        self._install_language("en")
        # the core's messages (a start-up checkpoint's refusal) are made in the app's language
        # at once: a text composed from one cannot be made again in another
        texts.set_language(self.language or i18n.system_language())
        digits, _ = load_test_or_sample(data_root)  # the test pairs need all 10,000
        # the test examples whose reconstructions the training panel shows, made once per kind
        examples = functools.cache(functools.partial(gallery_examples, digits=digits))
        reads = {"multimnist": read_pair}
        self.core = core = ExplorerCore(
            CapsNet(), device=device, data_root=data_root, reads=reads, examples=examples, parent=self
        )
        busy = lambda: core.is_training or core.inference_pending  # noqa: E731
        self.scheduler = RedrawScheduler(
            self, busy=busy, waiting=lambda: core.pending, hold=lambda: core.inference_pending
        )
        self.input_panel = InputPanel()
        self.pair_panel = PairPanel(
            digits, len(digits) == 10_000, iteration=lambda: self.routing_view.iteration.value()
        )
        self.lengths_view = LengthsView()
        self.routing_view = RoutingView()
        self.votes_view = VotesView()
        self.robustness_view = RobustnessView()
        self.pose_view = PoseView(
            decode=lambda pose, digit: reconstruct(core.model, pose, digit),
            grid=lambda pose, digit: perturbation_grid(core.model, pose, digit),
        )
        self.training_panels = {dataset: TrainingPanel(dataset) for dataset in KINDS}
        self.browser = MnistBrowser()
        self.transform_view = TransformView()
        # one routing iteration r and one digit capsule j for every view of the window (the
        # votes' lower panel, a pair's second longest capsule, keeps its own)
        share_iteration(self.routing_view.iteration, self.votes_view.iteration)
        votes = self.votes_view.all_panels[0].digit
        share_digit(self.routing_view.digit, self.pose_view.digit, votes, self.transform_view.capsule)
        # one selected primary capsule i: clicked in the routing mosaic, the length maps or the
        # votes, ringed in all three and its receptive field on the input
        self.capsule_selection = CapsuleSelection(self)
        for view in (self.routing_view, self.lengths_view, self.votes_view):
            view.capsuleClicked.connect(self.capsule_selection.toggle)
            self.capsule_selection.changed.connect(view.set_selected_capsule)
        # a switch of kind lays the window out again over several turns, before the views draw
        self.redraws = Redraws(
            "kind", {"central": self._show_central, "training": self._show_training, "docks": self._show_kind_docks}
        )
        self.redraws.register(self.scheduler)
        # the order of the scheduler's turns (prediction and bars, being urgent, go first in each)
        views = (self.input_panel, self.pair_panel, self.lengths_view, self.routing_view, self.votes_view)
        views += (self.pose_view, self.transform_view, *self.training_panels.values(), self.robustness_view)
        for view in views:
            view.redraws.register(self.scheduler)
        self._build_docks()
        self.model_label = QLabel("")
        self.baseline_label = QLabel("")  # the CNN compared with the capsules, when there is one
        self.setStatusBar(StatusBar(self))  # a long message cut with an ellipsis, whole in its tooltip
        self.statusBar().addPermanentWidget(self.model_label)
        self.statusBar().addPermanentWidget(self.baseline_label)
        self.errors = dialogs.ErrorRelay(self, lambda: about_report(core.device, core.model_summary, tr))
        self.sources = InputSources(self, self.input_panel, self.errors.show_error)
        self.robustness = RobustnessMeasurer(core, self.robustness_view, self.errors.show_exception)
        self.routing_checker = RoutingChecker(core, self.routing_view, self.errors.show_exception)
        shown = lambda: self.dock_shown("browser")  # noqa: E731
        self.browser_evaluator = BrowserEvaluator(core, self.browser, shown, self.errors.show_exception)
        self.actions = build_menus(
            self,
            {
                "open_image": self.sources.open_image_dialog,
                "paste": self.sources.paste_image,
                "open": lambda: (path := dialogs.ask_checkpoint_to_open(self)) and self.open_checkpoint(path),
                "open_baseline": lambda: (path := dialogs.ask_checkpoint_to_open(self)) and self.open_baseline(path),
                "save": self._save_checkpoint,
                "export_figures": lambda: export_figures_dialog(self, self.export_figures, self.figures_left_out),
                "export_trace": lambda: export_trace_dialog(self, core.inference, KINDS[self.kind].answers),
                "download": self.download_mnist,
                "quit": self.close,
                "about": self.errors.show_about,
                "digits": lambda: self.show_kind("mnist"),
                "pairs": lambda: self.show_kind("multimnist"),
                "language": self.set_language,
                "tour": lambda: self.start_tour(),
            },
            self.docks.values(),
        )
        # the scan of the test pairs for a wrong one
        self.scans = BackgroundJob(self, self.errors.show_exception, QT_TR_NOOP("Cannot scan the test pairs"))
        self.setAcceptDrops(True)
        self._connect()
        self._apply_view_settings(self.restored.views)
        self._show_kind_widgets()
        # the file given, else the one open when the app was closed, else (also where that file
        # cannot be loaded) the shipped model
        wanted = checkpoint if checkpoint is not None else self.restored.checkpoint
        if getattr(header_of(wanted), "kind", None) == "baseline":  # a CNN: beside the shipped CapsNet
            core.load_model(None)
        self.open_checkpoint(wanted, or_shipped=True)
        if core.dataset == "mnist" and core.baseline is None:
            core.load_baseline(None)  # the shipped CNN beside the capsules, where it is installed
        self._restore_geometry()
        self.settings_notice = ""
        if self.restored.problems:
            problems = "; ".join(self.restored.problems)
            self.settings_notice = tr("settings: {problems}; the app uses its defaults there", problems=problems)
            logging.getLogger("capsviz").warning(self.settings_notice)
        self.sources.show_sample(0)  # a new input clears the status bar's message: the notice comes after it
        if self.settings_notice:
            self.statusBar().showMessage(self.settings_notice, 15000)
        self.tour = Tour(self)
        self.tour_offered = bool(self.restored.views["app/tour_offered"])
        if not self.tour_offered:  # the first start offers the tour, once
            self.tour_offered = True
            # a link, as high as the status bar's text: a button would make the bar taller
            self.tour_offer = QLabel(tr('<a href="tour">New to capsule networks? Take the tour</a>'))
            self.tour_offer.setToolTip(tr("A dozen steps on the live views (Help → Tour, any time; Esc leaves it)"))
            self.tour_offer.linkActivated.connect(lambda _: self.start_tour())
            self.statusBar().addWidget(self.tour_offer)
        if (language := self.language or i18n.system_language()) != "en":
            self._apply_language(language)

    def start_tour(self) -> None:
        """Help → Tour (or the first start's link, which it takes off the status bar)."""
        offer = getattr(self, "tour_offer", None)
        if offer is not None:
            offer.hide()
        self.tour.start()

    @property
    def scan(self):
        """The worker scanning the test pairs (:meth:`scan_wrong_pairs`), while it runs, else None."""
        return self.scans.worker

    @property
    def training_panel(self) -> TrainingPanel:
        """The training panel of the kind shown."""
        return self.training_panels[self.kind]

    def _connect(self) -> None:
        core, panel = self.core, self.input_panel
        panel.inputChanged.connect(lambda image: self._input_changed(core.set_image, image))
        panel.sampleRequested.connect(self.sources.show_random_sample)
        panel.openRequested.connect(self.sources.open_image_dialog)
        panel.inkPolarityChanged.connect(self.sources.reload_image)
        self.pair_panel.pairChanged.connect(self._pair_changed)
        self.pair_panel.scanRequested.connect(self.scan_wrong_pairs)
        self.routing_view.iteration.valueChanged.connect(
            lambda: self.kind == "multimnist" and self.pair_panel.show_iteration()
        )
        self.browser.showRequested.connect(lambda index: self.sources.show_mnist(self.browser.data, index))
        self.transform_view.transformChanged.connect(lambda t: self._input_changed(core.set_transform, t))
        self.transform_view.sweepRequested.connect(self.update_sweep)
        self.routing_view.iterationsChanged.connect(lambda n: self._input_changed(core.set_iterations, n))
        for training_panel in self.training_panels.values():
            training_panel.follow(core)
        core.data_ready = lambda: offer_mnist(
            self, core.data_root, tr("Training needs the 60,000 MNIST training digits.")
        )
        core.inferenceReady.connect(self._show_inference)
        core.sweepReady.connect(self._show_sweep)
        core.baselineChanged.connect(self.update_sweep)  # the sweep shows the CNN's probabilities too
        core.modelChanged.connect(self.update_sweep)
        core.weightsChanged.connect(self.update_sweep)  # a run's weights, a few times a second
        core.error.connect(lambda title, message, details: self.errors.show_error(title, message, details or None))
        core.resultHandled.connect(self.scheduler.check_idle)
        core.modelChanged.connect(self._show_model)
        core.modelChanged.connect(self.errors.clear_status)  # a model that loads: an earlier refusal is stale
        core.baselineChanged.connect(self._show_baseline_summary)
        core.cnnReady.connect(lambda: self.lengths_view.redraws.request("cnn"))
        core.readingReady.connect(self._show_reading)
        core.trainingStarted.connect(self._title)
        core.trainingFinished.connect(self._title)

    # -- layout -------------------------------------------------------------------
    def _build_docks(self) -> None:
        self.central = CurrentPage()
        self.central.addWidget(self.input_panel)
        self.central.addWidget(self.pair_panel)
        self.setCentralWidget(self.central)
        self.training_stack = QStackedWidget()
        for training_panel in self.training_panels.values():
            self.training_stack.addWidget(training_panel)
        self.training_stack.setToolTip(self.training_panels["mnist"].toolTip())
        self.resize(*WINDOW_SIZE)
        self.docks: dict[str, QDockWidget] = {}
        self.setDockOptions(QMainWindow.DockOption.AllowTabbedDocks | QMainWindow.DockOption.AllowNestedDocks)
        right, bottom = Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea
        self._add_dock("lengths", tr("Capsule lengths"), self.lengths_view, right)
        self._add_dock("pose", tr("Pose"), self.pose_view, right)
        # made here, placed as the pose view's tabs after the first show (below): Tab's round
        # follows the order docks are made in, so their controls come where the pose view's do
        self._add_dock("votes", tr("Votes"), self.votes_view, None)
        self._add_dock("transforms", tr("Transforms"), self.transform_view, None)
        self._add_dock("routing", tr("Routing"), self.routing_view, bottom)
        self._add_dock("training", tr("Training"), self.training_stack, bottom)
        self.splitDockWidget(self.docks["lengths"], self.docks["pose"], Qt.Orientation.Horizontal)
        self.splitDockWidget(self.docks["routing"], self.docks["training"], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["routing"], self.docks["training"]], [950, 550], Qt.Orientation.Horizontal)
        # the pose view as wide as its controls in one row, where the window has room for it, and
        # a few pixels to spare (resizeDocks leaves a dock a pixel short of the width it asks)
        pose = self.docks["pose"].sizeHint().width() + 8
        self.resizeDocks([self.docks["lengths"], self.docks["pose"]], [364, pose], Qt.Orientation.Horizontal)
        # the bottom docks high enough for the whole training form at the first start's size, in
        # either language and in a font of taller lines (Noto Sans CJK, a Chinese desktop's)
        title = self.docks["training"].sizeHint().height() - self.training_stack.sizeHint().height()
        form = max(panel.form_height() for panel in self.training_panels.values())
        bottom = max(BOTTOM_DOCKS_HEIGHT, title + form + 2)  # resizeDocks may leave a dock a pixel short
        self.resizeDocks([self.docks["routing"]], [bottom], Qt.Orientation.Vertical)
        # Docks shown as tabs join the layout once the window is on screen: tabified earlier,
        # Qt 6 leaves a second, stray tab bar drawn over the other docks.
        self._add_dock("browser", tr("MNIST browser"), self.browser, None)
        self._add_dock("robustness", tr("Robustness"), self.robustness_view, None)
        self._tabs_placed = False
        self.hidden_by_kind: set[str] = set()  # docks hidden because the kind shown has none such
        self.left_layouts: dict[str, tuple] = {}  # kind -> (its docks shown, the window's state) when left
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
        self._show_kind_docks(all_at_once=True)
        # connected only now: placing the tabs shows each dock for a moment
        self.docks["transforms"].visibilityChanged.connect(lambda visible: visible and self.update_sweep())
        self.docks["votes"].visibilityChanged.connect(lambda visible: visible and self.votes_view.refresh())
        self.docks["browser"].visibilityChanged.connect(lambda visible: visible and self.browser_evaluator.evaluate())
        # a saved layout may bring them to the front: check once the tabs have settled
        QTimer.singleShot(0, self, self._start_visible_docks)

    def download_mnist(self) -> None:
        """File → Download MNIST…: fetch what the data folder lacks; the browser then lists all
        10,000 test digits, and training and robustness read them."""
        if not missing_archives(self.core.data_root):
            self.statusBar().showMessage(tr("MNIST is in its folder already"), 5000)
        elif fetch_mnist(self, self.core.data_root) and self.browser_evaluator.worker is None:
            self.browser.data = None
            if self.dock_shown("browser"):
                self.browser_evaluator.evaluate()

    def _start_visible_docks(self) -> None:
        self.update_sweep()
        if self.dock_shown("browser"):
            self.browser_evaluator.evaluate()
        self.docks_ready = True

    def _restore_geometry(self) -> None:
        """The saved geometry and dock layout, where they were saved on a screen of the size
        this one has: a layout saved elsewhere may not fit, or squeezes the docks."""
        screen = QApplication.primaryScreen()
        size = screen.availableGeometry().size() if screen is not None else None
        same = size is not None and self.restored.screen == (size.width(), size.height())
        if self.restored.geometry is not None and same:
            self.restoreGeometry(self.restored.geometry)
            return
        if self.restored.geometry is not None:
            self.restored.state = None
        if size is not None and QApplication.platformName() != "offscreen":  # offscreen: no screen to fit
            fit = first_window_size(size.width(), size.height())
            self.resize(fit)  # the size it takes when no longer maximised
            if fit.toTuple() != WINDOW_SIZE:  # a small screen: the whole of it, the title bar on it too
                self.fit_bottom_docks()
                self.setWindowState(self.windowState() | Qt.WindowState.WindowMaximized)

    def fit_bottom_docks(self) -> None:
        """Give the bottom docks the height the central panel leaves at its size hint (its
        canvas whole), as far as they keep their least height. In a window shorter than the
        first start's, Qt takes the height from the central panel and the bottom docks alike,
        down to the panel's least height (a smaller canvas); this sets the split as a first
        start on a small screen wants it."""
        menus = self.menuBar().sizeHint().height() + self.statusBar().sizeHint().height()
        split = self.style().pixelMetric(QStyle.PixelMetric.PM_DockWidgetSeparatorExtent, None, self)
        bottom = self.height() - menus - split - self.central.sizeHint().height()
        self.resizeDocks([self.docks["routing"]], [bottom], Qt.Orientation.Vertical)

    def dock_shown(self, name: str) -> bool:
        """Whether dock ``name`` is on screen (a tabbed dock behind another tab is not)."""
        return on_screen(self.docks[name])

    def dragEnterEvent(self, event) -> None:
        if self.kind == "mnist":
            self.sources.drag_enter(event)

    def dropEvent(self, event) -> None:
        self.sources.drop(event)

    def figures(self) -> dict[str, QWidget]:
        """Every plot of the window that the kind shown has and that shows what is current, by
        file name: the votes are drawn now where their dock is behind a tab or closed (they
        wait to be seen otherwise); the transforms sweep is left out while it is of an earlier
        input (it is computed only while its dock is shown: :meth:`figures_left_out`)."""
        views = (self.input_panel, self.transform_view) if self.kind == "mnist" else (self.pair_panel,)
        views += (self.lengths_view, self.routing_view, self.votes_view, self.pose_view, self.training_panel)
        if self.kind == "mnist":
            views += (self.robustness_view,)
        self.scheduler.wait_idle(10000)  # the pass of the input of the moment, and its redraws
        self.votes_view.refresh()
        left_out = self._left_out()
        return {name: widget for view in views if view not in left_out for name, widget in view.figures.items()}

    def _left_out(self) -> dict[QWidget, str]:
        """The views of the kind shown whose plots an export leaves out, with why."""
        if self.kind != "mnist":
            return {}
        left_out = {}
        if self.transform_view.stale:
            left_out[self.transform_view] = tr(
                "the transforms sweep is of an earlier input: show the Transforms dock to bring it up to date"
            )
        if not (self.robustness_view.results or self.robustness_view.baseline_results):
            left_out[self.robustness_view] = tr("the robustness curves are not measured: Measure in their dock")
        return left_out

    def figures_left_out(self) -> list[str]:
        """Why a plot of the kind shown is not in :meth:`figures`, one text each."""
        return list(self._left_out().values())

    def export_figures(self, folder: Path) -> list[Path]:
        """Write every plot of :meth:`figures` as PNG and SVG into ``folder``; returns the files.
        A dock off screen is laid out for it at the size its tab group shows
        (:meth:`_docks_to_lay_out`), and given its own size back after."""
        figures = self.figures()
        with ExitStack() as docks:
            for content, size in self._docks_to_lay_out(figures.values()):
                docks.enter_context(laid_out_at(content, size))
            return export_figures(figures, folder)

    def _docks_to_lay_out(self, figures) -> list[tuple[QWidget, QSize]]:
        """For an export: each dock content that holds some of ``figures`` (widgets) and is off
        screen, with the size of the content of the dock shown in its place (the tab in front),
        or ``EXPORT_DOCK_SIZE`` where none is (a closed dock). Behind a tab, Qt leaves it at a
        strip of the window (a votes panel 389 x 117 px), which an export would draw squashed."""
        sizes = []
        for dock in self.docks.values():
            content = dock.widget()
            if on_screen(content) or not any(content.isAncestorOf(figure) for figure in figures):
                continue
            shown = [d.widget().size() for d in self.tabifiedDockWidgets(dock) if on_screen(d.widget())]
            sizes.append((content, shown[0] if shown else EXPORT_DOCK_SIZE))
        return sizes

    # -- kinds --------------------------------------------------------------------
    def show_kind(self, dataset: str, path: Path | None = None, baseline: Path | None = None) -> bool:
        """Explore the models of ``dataset`` (a key of :data:`KINDS`), ``path`` and ``baseline``
        as :meth:`ExplorerCore.switch_dataset` loads them; returns whether the switch was made
        (not while a run trains; the reason is shown)."""
        if dataset == self.kind and path is None and baseline is None:
            return True
        self.scans.quit()
        if not self.core.switch_dataset(dataset, path, baseline):
            self.actions["pairs" if self.kind == "multimnist" else "digits"].setChecked(True)
            return False
        if dataset != self.kind:
            self.routing_checker.quit()  # a count of the kind left: its figures would not be shown
            self.left_layouts[self.kind] = (self._docks_shown(), self.saveState(STATE_VERSION))
            self.kind = dataset
            self.capsule_selection.set(None)  # a capsule of the other kind's grid
            self.pose_view.clear_offsets()  # offsets of the other model's poses; its pass redraws
            with QSignalBlocker(self.routing_view.iterations):  # the R its input was left with
                self.routing_view.iterations.setValue(self.core.input.iterations)
            self._show_kind_widgets()
        if dataset == "multimnist":
            self._pair_changed()
        return True

    def _show_kind_widgets(self) -> None:
        """Set the views and the menus up for :attr:`kind`; the input source, the training
        panel and the docks follow in the scheduler's turns (each lays out part of the window)."""
        kind = KINDS[self.kind]
        pairs = kind.dataset == "multimnist"
        self.redraws.request()
        self.lengths_view.answers = self.routing_view.answers = kind.answers
        self.votes_view.set_answers(kind.answers)
        self.pose_view.compose = self._compose_pose if pairs else None
        for name in ("open_image", "paste"):
            self.actions[name].setEnabled(not pairs)
        self.actions["pairs" if pairs else "digits"].setChecked(True)
        for name, dock in self.docks.items():
            dock.toggleViewAction().setEnabled(name in kind.docks)
        self._title()

    def _show_central(self) -> None:
        """The kind's input panel (the pose view puts its buttons under its choices where the
        wider pair panel leaves it too little width for one row)."""
        self.central.setCurrentWidget(self.pair_panel if self.kind == "multimnist" else self.input_panel)

    def _show_training(self) -> None:
        """The kind's training panel, and its tooltip on the dock (which names the data set)."""
        self.training_stack.setCurrentWidget(self.training_panel)
        for widget in (self.training_stack, self.docks["training"]):
            widget.setToolTip(self.training_panel.toolTip())

    def _show_kind_docks(self, all_at_once: bool = False) -> None:
        """Hide the docks the kind shown has not (:attr:`hidden_by_kind`), and show again the
        ones it hid that it has; one dock a turn unless ``all_at_once`` (each relays its dock
        area out). A dock the user closed stays closed."""
        if not self._tabs_placed:
            return
        docks = KINDS[self.kind].docks
        wrong = [name for name, dock in self.docks.items() if name not in docks and not dock.isHidden()]
        wrong += [name for name in self.hidden_by_kind if name in docks]
        for name in wrong[: None if all_at_once else 1]:
            if name in docks:
                self.hidden_by_kind.discard(name)
                self.docks[name].show()
            else:
                self.hidden_by_kind.add(name)
                self.docks[name].hide()
        if len(wrong) > 1 and not all_at_once:
            self.redraws.request("docks")
        elif wrong and self.kind in self.left_layouts:
            # all in place: the splits between the docks as when the window left this kind (the
            # other kind's central panel moved them), where the same docks are shown
            shown, state = self.left_layouts.pop(self.kind)
            if shown == self._docks_shown():
                self.restoreState(state, STATE_VERSION)

    def _docks_shown(self) -> set[str]:
        return {name for name, dock in self.docks.items() if not dock.isHidden()}

    def _title(self, *_) -> None:
        """The window's title: the kind shown, the model's file, and the file a run trains into."""
        core, title = self.core, f"capsviz — {tr(KINDS[self.kind].title)} — "
        if core.from_no_file:  # a run from fresh weights: its model is in no file yet
            title += tr("training into {name}", name=core.training_into.name)
        else:
            title += core.model_file.name
            if core.training_into is not None:
                title += tr(", training into {name}", name=core.training_into.name)
        self.setWindowTitle(title)

    def _pair_changed(self) -> None:
        if self.kind == "multimnist":
            self.statusBar().clearMessage()
            # a blank digit leaves one: the longest capsule is the answer the views mark and compare
            answers = 1 if any(self.pair_panel.setup.blank) else KINDS[self.kind].answers
            self.lengths_view.answers = self.routing_view.answers = answers
            self.core.set_image(self.pair_panel.pair_image, self.pair_panel.setup)

    def _show_reading(self) -> None:
        """The pair's reading came after its capsules: the pair panel and the pose view's edit."""
        self.pair_panel.redraws.request()
        self.pose_view.redraws.request()

    def _compose_pose(self, digit: int, reconstruction):
        """The pose view's edit of a pair's capsule, over the other longest one as inferred."""
        inference = self.pose_view.inference
        if inference is None or inference.reading is None:
            return reconstruction, reconstruction
        return inference.reading.compose_pose(digit, reconstruction)

    def scan_wrong_pairs(self, start: int, find: str = "wrong") -> None:
        """Scan the fixed test pairs from ``start`` for the next the model gets wrong (``find``
        ``wrong``), or whose answer routing changes (``routing``: r = 1 against the current R),
        on a worker thread (progress under the pair; asked again while it runs, it cancels)."""
        if self.scan is not None:
            self.scans.quit()
            return
        model, panel = self.core.model, self.pair_panel

        def event(ev) -> None:
            if model is self.core.model and self.kind == "multimnist":
                panel.scan_event(ev)

        panel.scanning(True, find)
        self.scans.run(
            scan_in_background,
            model,
            panel.test_block,
            start,
            find,
            self.core.input.iterations,
            yielded=event,
            finished=lambda: panel.scanning(False, find),
        )

    # -- settings -----------------------------------------------------------------
    def _remembered(self) -> dict:
        """The controls whose choice the app remembers, by their key in view_settings.VIEW_KEYS:
        a spin box's value, a combo box's index (of routing.SCALES, pose.POSE_RANGES, PARAMETERS)."""
        inputs, routing = self.input_panel, self.routing_view
        controls = (inputs.brush, inputs.polarity, routing.iterations, routing.scale, self.pose_view.range)
        keys = ("input/brush", "input/ink", "routing/iterations", "routing/scale", "pose/range")
        return {**dict(zip(keys, controls)), "transforms/parameter": self.transform_view.parameter}

    def _apply_view_settings(self, values: dict) -> None:
        for key, control in self._remembered().items():
            (control.setCurrentIndex if isinstance(control, QComboBox) else control.setValue)(values[key])

    def save_settings(self) -> None:
        views = {k: c.currentIndex() if isinstance(c, QComboBox) else c.value() for k, c in self._remembered().items()}
        views.update({"app/language": self.language, "app/tour_offered": int(self.tour_offered)})
        for name in self.hidden_by_kind:  # the layout as the user left it, whatever kind is shown
            self.docks[name].show()
        screen = self.screen().availableGeometry().size()
        checkpoint = self.core.checkpoint_path if self.kind == "mnist" else self.core.kept_checkpoint("mnist")
        layout = (self.saveGeometry(), self.saveState(STATE_VERSION))
        write_settings(self.settings, *layout, checkpoint, views, screen=(screen.width(), screen.height()))

    # -- wiring -------------------------------------------------------------------
    def _input_changed(self, change, value) -> None:
        """Apply ``change(value)`` to the core's input; the preview shows what the model reads."""
        self.statusBar().clearMessage()
        change(value)
        self.browser.set_input_digit(self.sources.input_digit())
        if self.kind == "mnist":
            self.input_panel.preview.set_image(self.core.input.model_image)
            self.update_sweep()

    def _show_inference(self, inference) -> None:
        central = self.pair_panel if self.kind == "multimnist" else self.input_panel
        for view in (central, self.lengths_view, self.pose_view, self.votes_view, self.routing_view):
            view.show_inference(inference)

    # -- language -------------------------------------------------------------------
    def _install_language(self, name: str) -> None:
        try:
            i18n.install(name)
        except FileNotFoundError as exc:  # the app still works, in English
            logging.getLogger("capsviz").warning("%s", exc)
            i18n.install("en")

    def set_language(self, name: str) -> None:
        """View → Language: every text in language ``name`` (a key of
        :data:`~capsviz.gui.i18n.LANGUAGES`) at once; the input, the model and a training run
        stay as they are. Kept in the settings."""
        self.language = name
        self._apply_language(name)

    def _apply_language(self, name: str) -> None:
        self._install_language(name)
        bar = self.statusBar()
        if notice := i18n.missing_font(i18n.language()):
            logging.getLogger("capsviz").warning("%s", notice)
            bar.showMessage(notice, 30000)
        elif bar.currentMessage() and bar.currentMessage() == i18n.missing_font("zh_CN"):
            bar.clearMessage()  # a language the fonts draw: the notice no longer holds
        self.actions[f"language:{i18n.language()}"].setChecked(True)
        i18n.retranslate(self)  # its children too: the dialogs open beside it (About, Fig. 4) are the window's
        self._show_model()
        self._show_baseline_summary()
        self._title()
        self.scheduler.request(*self.scheduler.parts)  # the texts the views compose from figures
        self.tour.refresh()

    def _show_model(self) -> None:
        self.model_label.setText(tr("model: {summary}", summary=self.core.model_summary))
        self._title()

    def _show_baseline_summary(self) -> None:
        self.lengths_view.cnn = self.core.baseline is not None
        self.baseline_label.setText(cnn_line(self.core.baseline_info, tr) if self.lengths_view.cnn else "")

    def update_sweep(self) -> None:
        """Ask for the transforms view's sweep for the current input, while the view is on screen."""
        if self.kind != "mnist":
            return
        if self.core.input.image is None or self.dock_shown("transforms"):
            self.core.request_sweep(*self.transform_view.sweep_transforms())
        else:
            self.transform_view.stale = True  # its sweep is of an earlier input (or none yet)

    def _show_sweep(self, request, v, baseline) -> None:
        inf = self.core.inference
        prediction = inf.prediction if inf is not None and not self.core.inference_pending else None
        self.transform_view.show_sweep(request and request.name, request and request.values, v, prediction, baseline)

    def _save_checkpoint(self) -> None:
        path = dialogs.ask_checkpoint_to_save(
            self, "capsnet.safetensors" if self.kind == "mnist" else "capsnet_multimnist.safetensors"
        )
        if path is not None and self.core.save_model(path) is not None:
            self.statusBar().showMessage(tr("saved {path}", path=path), 5000)

    # -- files and closing ----------------------------------------------------------
    def open_checkpoint(self, path: Path | None, or_shipped: bool = False) -> bool:
        """Load ``path`` (None: the shipped model of the kind shown): a CapsNet of the kind
        shown here, a CapsNet for the other kind by switching to it, a baseline CNN as the
        network compared with the capsules. Returns success (errors are shown; ``or_shipped``:
        :meth:`ExplorerCore.load_model`'s)."""
        header = header_of(path)
        if header is not None and header.kind == "baseline":
            return self.open_baseline(path, header.dataset)
        if header is not None and header.dataset != self.kind:
            return self.show_kind(header.dataset, Path(path))
        return self.core.load_model(path, or_shipped)

    def open_baseline(self, path: Path, dataset: str | None = None) -> bool:
        """Compare the capsules with the CNN of ``path`` (``dataset``: the file's, when its
        header was read already); a CNN for the other kind switches to it. Returns success
        (a CapsNet file is refused with a message)."""
        dataset = dataset or getattr(header_of(path), "dataset", None)
        if dataset is not None and dataset != self.kind:
            return self.show_kind(dataset, baseline=Path(path))
        loaded = self.core.load_baseline(Path(path))
        if loaded:
            self.errors.clear_status()  # a file that loads: an earlier refusal is stale
        return loaded

    def confirm_close(self) -> bool:
        """Whether to close while training runs (asks the user)."""
        return dialogs.confirm_stop_training(self, self.core.is_paused, self.core.training_into)

    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: A002 (Qt's name)
        """Tab and Shift+Tab move to the next control on screen: Qt's focus chain also holds
        those of the docks behind another dock's tab, where the focus would be out of sight."""
        for _ in range(FOCUS_CHAIN_LIMIT):
            if not super().focusNextPrevChild(next):
                return False
            widget = QApplication.focusWidget()
            if widget is None or on_screen(widget):
                return True
        return True

    def closeEvent(self, event) -> None:
        if self.core.is_training and not self.confirm_close():
            event.ignore()
            return
        self.routing_view.play_button.setChecked(False)
        # the browser stops between chunks of 250 digits, the others before their next batch
        for job in (self.browser_evaluator, self.robustness, self.routing_checker, self.scans):
            job.close()
        self.scheduler.stop()
        self.core.close()  # waits for the background workers
        try:
            self.save_settings()
        except Exception as exc:  # never block quitting over settings
            logging.getLogger("capsviz").warning("cannot save settings: %s", exc)
        event.accept()
