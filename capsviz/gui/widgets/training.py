"""Training panel: settings, start/stop, progress, and live loss and accuracy curves."""

from __future__ import annotations

import functools

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

from capsviz import explanations
from capsviz.data.datasets import TITLES
from capsviz.explorer import Redraws
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import (
    VerticalScroll,
    column,
    fit_view,
    image_view,
    off_the_tab_chain,
    plot,
    row,
    set_label,
    settle,
)
from capsviz.model.inference import Gallery, tile_grid
from capsviz.model.pairs import red_green
from capsviz.runtime import available_devices
from capsviz.texts import QT_TR_NOOP
from capsviz.train.config import PRECISIONS, TRAIN_LIMITS, TrainConfig, fine_tune_lr
from capsviz.train.events import BatchEvent, EpochEvent, PausedEvent, StoppedEvent, TrainingCurves

NETWORKS = (
    ("CapsNet", "capsnet", QT_TR_NOOP("the capsule network of the paper")),
    (
        QT_TR_NOOP("CNN, CapsNet-sized"),
        "baseline-small",
        QT_TR_NOOP("baseline CNN of 64, 64, 32 channels (8.4 M parameters), as shipped"),
    ),
    (
        QT_TR_NOOP("CNN, the paper's"),
        "baseline",
        QT_TR_NOOP("the paper's baseline CNN: 256, 256, 128 channels (35.4 M parameters)"),
    ),
)
AXIS_WIDTH = 52  # pixels for the y axis of the loss and accuracy plots: tick labels and the axis name
MIN_PLOT_WIDTH = 200  # the y axis and the widest legend ("0.0005 × recon")
LEGEND_GROUND = (0, 0, 0, 200)  # the legends' ground: the plots' black, nearly opaque
# The GUI measures test accuracy on fewer images than `capsviz train` (which uses all 10,000):
# training and the live views wait while an epoch's test images are classified.
GUI_TEST_IMAGES = 2000


GALLERY_HEIGHTS = (64, 120)  # least and greatest height of the gallery under the curves, pixels
# the least height of the panel that shows the gallery: the two curves keep some 135 px each,
# room for their keys in either language (a 768-pixel-high screen gives the panel about 330)
GALLERY_LEAST_PANEL_HEIGHT = 340
GALLERY_GAP = 3  # pixels between the gallery's tiles; a wrong answer's tile is framed in its middle one
WRONG = np.array([1.0, 0.6, 0.1], np.float32)  # the frame of a reconstruction whose answer is wrong


def gallery_mosaic(gallery: Gallery, gap: int = GALLERY_GAP) -> np.ndarray:
    """The gallery as one RGB image, (2 (H + gap) + gap, K (H + gap) + gap, 3) float32 in [0, 1],
    example k's tiles at columns gap + k (H + gap) onwards: the K inputs in grey in the top row
    (from row gap), their reconstructions under them (from row H + 2 gap; a digit's in grey, a
    pair's two in red and green, :func:`~capsviz.model.pairs.red_green`), each reconstruction
    whose answer is wrong framed in orange in the middle of the gap around it."""
    recon = gallery.reconstructions
    shown = [red_green(r[0], r[1]) for r in recon] if gallery.pairs else np.repeat(recon[..., None], 3, axis=-1)
    inputs = np.repeat(gallery.images[..., None], 3, axis=-1)
    out = tile_grid(np.stack([inputs, np.asarray(shown, np.float32)]), gap, margin=gap)
    size = gallery.images.shape[-1]
    step, m = size + gap, (gap + 1) // 2  # m: from a tile's edge to the middle of the gap around it
    for i in np.flatnonzero(~gallery.right):
        x, y = gap + i * step, gap + step
        frame = out[y - m : y + size + m, x - m : x + size + m]
        frame[[0, -1], :] = WRONG
        frame[:, [0, -1]] = WRONG
    return out


def gallery_caption(gallery: Gallery | None, tr=tr) -> str:
    """The gallery's title: how many of its examples the model reads right."""
    if gallery is None:
        return tr("test examples")
    right, k = int(gallery.right.sum()), len(gallery.right)
    if gallery.pairs:
        return tr("test pairs: {right} of {k} right", right=right, k=k)
    return tr("test digits: {right} of {k} right", right=right, k=k)


GALLERY_TIP = QT_TR_NOOP(
    "A few test examples (top) and the model's reconstructions of them (bottom): a digit's from its "
    "longest capsule (Fig. 3 of the paper), a pair's from its two longest, in red and green (Fig. 5). "
    "An orange frame: the answer is wrong. They are made again whenever the model changes, so a "
    "training run shows them sharpen as it learns. Hover over a tile for its label and answer."
)


class ReconstructionGallery(pg.GraphicsLayoutWidget):
    """The model's reconstructions of a few test examples, as in the paper's Fig. 3 and 5:
    inputs on top, reconstructions under them (orange frame: the answer is wrong), redrawn
    at every change of model, so that a run shows them sharpen as it learns. Hovering a tile
    tells its label and answer."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        off_the_tab_chain(self)
        self.setBackground("k")
        self.ci.setContentsMargins(2, 2, 2, 2)
        self.title = self.addLabel(gallery_caption(None), row=0, col=0, size="8pt")
        step = 28 + GALLERY_GAP  # ten digits' tiles until the first gallery comes
        self.view, self.item = image_view(self, 1, 0, (2 * step + GALLERY_GAP, 10 * step + GALLERY_GAP))
        self.gallery: Gallery | None = None
        self.setToolTip(tr(GALLERY_TIP))
        self.scene().sigMouseMoved.connect(self._hover)

    def show_gallery(self, gallery: Gallery | None) -> None:
        """Show ``gallery`` (None: an empty field)."""
        self.gallery = gallery
        set_label(self.title, gallery_caption(gallery), size="8pt")
        if gallery is None:
            self.item.setImage(np.zeros_like(self.item.image), autoLevels=False, levels=(0, 1))
            return
        mosaic = gallery_mosaic(gallery)
        if mosaic.shape[:2] != self.item.image.shape[:2]:
            fit_view(self.view, mosaic.shape)
        self.item.setImage(mosaic, autoLevels=False, levels=(0, 1))

    def tile_at(self, scene_pos) -> int | None:
        """The example whose input or reconstruction is under ``scene_pos``, or None."""
        g = self.gallery
        if g is None or not self.view.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.view.mapSceneToView(scene_pos)
        step = g.images.shape[-1] + GALLERY_GAP
        x, y = p.x() - GALLERY_GAP, p.y() - GALLERY_GAP  # from the first tile's corner
        k = int(x // step) if x >= 0 else -1
        on_tile = x % step < step - GALLERY_GAP and y % step < step - GALLERY_GAP  # not in a gap
        inside = 0 <= k < len(g.images) and 0 <= y < 2 * step and on_tile
        return k if inside else None

    def describe(self, k: int) -> str:
        """What the tooltip says of example ``k``: its label and the model's answer."""
        g = self.gallery
        if g.pairs:
            label, answer = " + ".join(map(str, g.labels[k])), " + ".join(map(str, g.answers[k]))
        else:
            label, answer = str(g.labels[k]), str(g.answers[k])
        if g.right[k]:
            return tr("test example: {label}; read as {answer}", label=label, answer=answer)
        return tr("test example: {label}; read as {answer}, wrong", label=label, answer=answer)

    def _hover(self, scene_pos) -> None:
        k = self.tile_at(scene_pos)
        self.setToolTip(tr(GALLERY_TIP) if k is None else self.describe(k))


KEY_CORNERS = ((1, 1), (1, 0))  # the accuracy key's corners: bottom right unless data lie under it, else top right
KEY_OFFSET = 5, 2  # px from the plot's right edge and from its top or bottom edge


class ClearKey:
    """Keeps ``widget``'s legend in one of ``corners`` of its view box ((1, 1) the bottom
    right, (1, 0) the top right) that its points leave free: the accuracy of a run's first
    test, low at the right edge of the steps, would sit under a key kept at the bottom. The
    key stays where it is while it covers none of them (no jumping with each batch), else
    goes to the first corner that covers none, else to the one that covers the fewest; it is
    placed again when the view is resized (a dock laid out anew, an export's size)."""

    def __init__(self, widget: pg.PlotWidget, corners=KEY_CORNERS) -> None:
        self.widget, self.corners = widget, corners
        self.corner: tuple[int, int] | None = None  # where the key is anchored now (None: as made)
        self.points = np.zeros((0, 2))
        widget.getViewBox().sigResized.connect(lambda *_: self.place())

    def place(self, points: np.ndarray | None = None) -> None:
        """Anchor the key clear of ``points`` ((N, 2) in data coordinates, NaNs ignored; None:
        the last ones given)."""
        if points is not None:
            self.points = points[np.isfinite(points).all(axis=1)]
        legend, box = self.widget.getPlotItem().legend, self.widget.getViewBox()
        (x0, x1), (y0, y1) = box.viewRange()
        width, height = box.width(), box.height()
        if legend is None or width <= 0 or height <= 0:
            return
        size = legend.boundingRect()
        dx, dy = KEY_OFFSET
        left = x1 - (size.width() + dx) / width * (x1 - x0)
        span = (size.height() + dy) / height * (y1 - y0)
        on_right = self.points[self.points[:, 0] >= left, 1]
        covered = {
            corner: np.count_nonzero(on_right <= y0 + span if corner[1] else on_right >= y1 - span)
            for corner in self.corners
        }
        if covered.get(self.corner, 1) == 0:
            return
        corner = next((c for c, n in covered.items() if n == 0), min(covered, key=covered.get))
        if corner != self.corner:
            self.corner = corner
            legend.anchor(itemPos=corner, parentPos=corner, offset=(-dx, -dy if corner[1] else dy))


class TrainingPanel(QWidget):
    """Settings, Start/Pause/Stop, progress bar, and curves of loss and accuracy, for training on
    ``dataset`` (``mnist``, or ``multimnist``: fresh pairs every epoch, test accuracy = both
    digits right on the fixed test pairs).

    Signals
    -------
    startRequested(object, bool) : a TrainConfig, and whether to start from fresh weights.
    stopRequested()
    pauseRequested(bool) : pause the run (True) or let it go on (False).
    """

    startRequested = Signal(object, bool)
    stopRequested = Signal()
    pauseRequested = Signal(bool)

    def __init__(self, dataset: str = "mnist", parent=None) -> None:
        super().__init__(parent)
        d = TrainConfig(dataset=dataset)
        self.dataset = dataset
        self._stopped = True  # whether the last run ended with its StoppedEvent (it did not raise)
        multi = dataset == "multimnist"
        self.setToolTip(tr(explanations.TRAINING, title=TITLES[dataset]))
        self.fields: dict[str, QSpinBox | QDoubleSpinBox] = {}  # TrainConfig field -> its spin box
        self.epochs = self._field("epochs")
        self.batch_size = self._field("batch_size")
        # 7 decimals: a fine-tune continues where a long run ended (the shipped MultiMNIST
        # model: 1.5e-5)
        self.lr = self._field("lr", 7, singleStep=1e-4)
        self.lr_decay = self._field("lr_decay", 3, singleStep=0.01)
        self.lr_decay_steps = self._field("lr_decay_steps", singleStep=500)
        self.routing = self._field("routing_iterations")
        self.reconstruction_weight = self._field("reconstruction_weight", 5, singleStep=1e-4)
        self.max_shift = self._field("max_shift", suffix=" px")
        self.seed = self._field("seed")
        self.device = QComboBox()
        for name in available_devices():
            self.device.addItem(tr("auto") if name == "auto" else name, name)
        self.precision = QComboBox()
        for name in PRECISIONS:
            self.precision.addItem(tr("auto") if name == "auto" else name, name)
        self.precision.setCurrentIndex(self.precision.findData(d.precision))
        self.train_subset = self._field("train_subset", value=0, singleStep=1000)
        self.train_subset.setSpecialValueText(tr("all 60,000"))
        self.pairs_per_epoch = self._field("pairs_per_epoch", singleStep=10000)
        self.test_subset = self._field("test_subset", value=GUI_TEST_IMAGES, singleStep=500, suffix=tr(" of 10,000"))
        self.test_subset.setSpecialValueText(tr("all 10,000"))
        self.network = QComboBox()
        for label, name, tip in NETWORKS:
            self.network.addItem(tr(label), name)
            self.network.setItemData(self.network.count() - 1, tr(tip), Qt.ItemDataRole.ToolTipRole)
        tip = tr(explanations.FROM_SCRATCH)
        self.from_scratch = QCheckBox(tr("start from fresh weights"), checked=True, toolTip=tip)
        self._model_info = lambda: None  # the header of the model a fine-tune starts from (see follow)
        form_widget = QWidget()
        form = QFormLayout(form_widget)
        form.setVerticalSpacing(2)
        widgets = {"network": self.network, **self.fields, "device": self.device, "precision": self.precision}
        rows = {**explanations.TRAINING_FORM, **(explanations.TRAINING_FORM_PAIRS if multi else {})}
        rows = {name: texts for name, texts in rows.items() if texts is not None}  # None: the pairs' form only
        for name, (label, tip) in rows.items():
            widgets[name].setToolTip(tr(tip, n=GUI_TEST_IMAGES))
            form.addRow(tr(label), widgets[name])
        form.addRow(self.from_scratch)
        # The form scrolls when the dock is shorter than the form (a 768-pixel-high screen):
        # Start and Stop below it stay in view, and the dock needs no height that would
        # push the window past the screen.
        self.form_area = VerticalScroll(form_widget)
        # as tall as the whole form where there is room, no taller
        self.form_area.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        QApplication.instance().focusChanged.connect(self._show_focused_field)
        self._inputs = (*(widgets[name] for name in rows), self.from_scratch)  # the fields in the form, in order
        start = lambda: self.startRequested.emit(self.config(), self.from_scratch.isChecked())  # noqa: E731
        self.start_button = QPushButton(tr("Start"), clicked=start)
        tip = tr("Pause the run after this step; the views show its weights. Again: go on")
        self.pause_button = QPushButton(tr("Pause"), checkable=True, toolTip=tip)
        self.pause_button.toggled.connect(self.pauseRequested)  # a signal: not a constructor keyword
        self.stop_button = QPushButton(tr("Stop"))
        self.stop_button.clicked.connect(self.stopRequested)
        self.pause_button.toggled.connect(lambda on: self.pause_button.setText(tr("Resume") if on else tr("Pause")))
        self.progress = QProgressBar()
        self.status = QLabel(tr("idle"), wordWrap=True)
        buttons = row(self.start_button, self.pause_button, self.stop_button)
        left = column(self.form_area, buttons, self.progress, self.status, 1)
        self.form_column = left

        # The two plots are stacked, each as wide as the panel allows: curves over training
        # steps want width, and a narrow plot cuts its legend off. Their y-axis labels name them;
        # the lower one's x axis names the steps of both (in a low dock the upper one's curves
        # and key get the line instead).
        self.loss_plot = plot(left=tr("loss"), axis_width=AXIS_WIDTH, mouse=True)
        # the keys on a dark ground of their own: legible where a curve passes under them
        self.loss_plot.addLegend(offset=(-5, 2), labelTextSize="8pt", verSpacing=-7, brush=LEGEND_GROUND)
        self.loss_curve = self.loss_plot.plot(pen=pg.mkPen("w", width=1.5), name=tr("total"))
        self.margin_curve = self.loss_plot.plot(pen=pg.mkPen((90, 160, 250)), name=tr("margin"))
        self.recon_curve = self.loss_plot.plot(pen=pg.mkPen((250, 150, 60)), name=tr("0.0005 × recon"))
        self.acc_plot = plot(bottom=tr("step"), left=tr("accuracy"), axis_width=AXIS_WIDTH, mouse=True)
        self.acc_plot.addLegend(offset=(-5, -2), labelTextSize="8pt", verSpacing=-7, brush=LEGEND_GROUND)
        self.acc_plot.setXLink(self.loss_plot)
        self.loss_key, self.acc_key = ClearKey(self.loss_plot, KEY_CORNERS[::-1]), ClearKey(self.acc_plot)
        self.acc_plot.setYRange(0, 1, padding=0.02)
        self.train_acc_curve = self.acc_plot.plot(pen=pg.mkPen((120, 220, 120)), name=tr("train (batch)"))
        self.test_acc_curve = self.acc_plot.plot(
            pen=pg.mkPen((250, 80, 80), width=2), symbol="o", symbolSize=6, symbolBrush=(250, 80, 80), name=tr("test")
        )
        for widget in (self.loss_plot, self.acc_plot):  # of one axis width: the two x axes line up
            widget.setMinimumWidth(MIN_PLOT_WIDTH)
            widget.getAxis("bottom").enableAutoSIPrefix(False)  # steps are counts: no "(x0.001)" on an empty plot
        # the model's reconstructions of a few test examples, under the curves where the
        # panel is high enough for both curves' keys beside them (resizeEvent)
        self.gallery = ReconstructionGallery()
        self.gallery.setMinimumHeight(GALLERY_HEIGHTS[0])
        self.gallery.setMaximumHeight(GALLERY_HEIGHTS[1])
        plots = column((self.loss_plot, 3), (self.acc_plot, 3), (self.gallery, 2), spacing=2)
        row(left, (plots, 1), margins=(2, 2, 2, 2), parent=self)
        self.redraws = Redraws(f"training_{dataset}", {"curves": self._draw_curves, "gallery": self._draw_gallery})
        self._gallery: Gallery | None = None  # the newest, drawn at the next turn
        self.figures = {
            "training_loss": self.loss_plot,
            "training_accuracy": self.acc_plot,
            "training_reconstructions": self.gallery,
        }  # by file name
        self.reset_curves()
        self.set_running(False)

    def form_height(self) -> int:
        """The panel's height in pixels that shows its whole form, its buttons and its status."""
        margins = self.layout().contentsMargins()
        return self.form_column.sizeHint().height() + margins.top() + margins.bottom()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.gallery.setVisible(event.size().height() >= GALLERY_LEAST_PANEL_HEIGHT)

    def _field(self, name: str, decimals: int | None = None, **options) -> QSpinBox | QDoubleSpinBox:
        """The spin box of training setting ``name`` (a field of :class:`TrainConfig`, which
        :meth:`config` reads from it): its range from :data:`~capsviz.train.config.TRAIN_LIMITS`
        (the range the CLI checks its flags against), its value the recipe's default unless
        ``options`` give one; with ``decimals``, a QDoubleSpinBox."""
        low, high = TRAIN_LIMITS[name].control_range()
        value = options.pop("value", getattr(TrainConfig(), name))
        kind = QSpinBox if decimals is None else functools.partial(QDoubleSpinBox, decimals=decimals)
        self.fields[name] = box = kind(minimum=low, maximum=high, **options, value=value)  # decimals first
        return box

    def _show_focused_field(self, _old, new) -> None:
        """Scroll the form so that the whole field with the focus shows (QScrollArea alone,
        and its ensureWidgetVisible, stop once the text cursor of a spin box shows, which
        can leave the box cut off)."""
        form = self.form_area.widget()
        if new is None or not form.isAncestorOf(new):
            return
        field = new
        while field.parentWidget() is not form:
            field = field.parentWidget()
        centre = field.mapTo(form, field.rect().center())
        self.form_area.ensureVisible(centre.x(), centre.y(), field.width() // 2 + 2, field.height() // 2 + 2)

    def config(self) -> TrainConfig:
        """The form's settings (``ValueError`` for one outside its limits)."""
        values = {name: box.value() for name, box in self.fields.items()}
        device, precision = self.device.currentData(), self.precision.currentData()
        return TrainConfig(
            **values, device=device, precision=precision, dataset=self.dataset, model=self.network.currentData()
        )

    def reset_curves(self) -> None:
        self.curves = TrainingCurves()
        self.history, self.test_history = self.curves.batches, self.curves.tests  # per step, per test
        self.redraws.request()

    def set_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.pause_button.setEnabled(running)
        if not running:
            with QSignalBlocker(self.pause_button):  # the run is over: no "going on…" over its last status
                self.pause_button.setChecked(False)
            self.pause_button.setText(tr("Pause"))
        self.progress.setVisible(running)  # idle, it would be an empty box
        if running:
            self.progress.setRange(0, 0)  # busy until the first batch gives the number of steps
        for w in self._inputs:
            w.setEnabled(not running and not (w is self.max_shift and self.dataset == "multimnist"))

    def follow(self, core) -> None:
        """Drive ``core`` (an :class:`~capsviz.gui.core.ExplorerCore`) from Start, Pause and Stop,
        and show its run: curves, progress, status, and the gallery of its model of this dataset."""
        self.startRequested.connect(core.start_training)
        self._model_info = lambda: core.info if self.network.currentData() == "capsnet" else core.baseline_info
        for signal in (core.modelChanged, core.baselineChanged, self.from_scratch.toggled):
            signal.connect(self.suggest_lr)
        self.network.currentIndexChanged.connect(self.suggest_lr)

        def stop() -> None:
            core.stop_training()
            self.pause_button.setEnabled(False)
            self.status.setText(tr("stopping…"))

        def pause(paused: bool) -> None:
            core.pause_training(paused)
            self.status.setText(tr("pausing after this step…") if paused else tr("going on…"))

        def started(checkpoint) -> None:
            if core.train_config.dataset != self.dataset:  # a run of the window's other kind of model
                return
            self.reset_curves()
            self.set_running(True)
            self._stopped = False
            self.status.setText(tr("loading MNIST…; the run will be saved to {path}", path=checkpoint))

        def event(ev) -> None:
            if core.train_config.dataset != self.dataset:
                return
            if isinstance(ev, BatchEvent):
                self.add_batch(ev, core.train_config.reconstruction_weight)
            elif isinstance(ev, EpochEvent):
                self.add_epoch(ev)
            elif isinstance(ev, PausedEvent):
                self.status.setText(tr("paused at step {k}; the views show these weights until you resume", k=ev.step))
            elif isinstance(ev, StoppedEvent):
                self._stopped = True
                self.status.setText(ev.sentence(tr))

        def finished() -> None:
            if core.train_config.dataset == self.dataset and not self._stopped:  # it raised (the message says what)
                self.status.setText(tr("the run failed; see the message"))
            self.set_running(False)

        self.stopRequested.connect(stop)
        self.pauseRequested.connect(pause)
        core.trainingStarted.connect(started)
        core.trainingEvent.connect(event)
        core.trainingFinished.connect(finished)
        core.galleryReady.connect(lambda gallery: core.dataset == self.dataset and self.show_gallery(gallery))
        core.trainingFinished.connect(self.suggest_lr)  # from the file the run wrote

    def suggest_lr(self, *_) -> None:
        """Put the learning rate a run should start with in the form: the recipe's default
        (0.001) from fresh weights; for a fine-tune, the rate the loaded model's own training
        ended with (:func:`capsviz.train.config.fine_tune_lr`), so that the first steps do not undo what its
        schedule had settled. Not while a run is going (the form is then the run's)."""
        if not self.start_button.isEnabled():
            return
        lr = None if self.from_scratch.isChecked() else fine_tune_lr(self._model_info())
        self.lr.setValue(TrainConfig().lr if lr is None else lr)

    def add_batch(self, ev: BatchEvent, weight: float) -> None:
        self.curves.add_batch(ev, weight)
        total = ev.batches_per_epoch * self.epochs.value()
        self.progress.setRange(0, total)
        self.progress.setValue(min(ev.step, total))
        self.status.setText(ev.progress(self.epochs.value(), self.batch_size.value(), tr))
        if ev.batch == ev.batches_per_epoch:  # the epoch's test pass comes next, then its autosave
            self.status.setText(tr("epoch {epoch} trained; testing on the test set…", epoch=ev.epoch + 1))
        self.redraws.request()

    def add_epoch(self, ev: EpochEvent) -> None:
        self.curves.add_epoch(ev)
        self.redraws.request()

    def show_gallery(self, gallery: Gallery | None) -> None:
        """Draw ``gallery`` (the model's reconstructions of the test examples) at the next redraw."""
        self._gallery = gallery
        self.redraws.request("gallery")

    def _draw_gallery(self) -> None:
        self.gallery.show_gallery(self._gallery)

    def _draw_curves(self) -> None:
        h = {name: np.asarray(values, dtype=float) for name, values in self.history.items()}
        tests = {name: np.asarray(values, dtype=float) for name, values in self.test_history.items()}
        x = h["step"]
        for curve, name in ((self.loss_curve, "loss"), (self.margin_curve, "margin"), (self.recon_curve, "recon")):
            curve.setData(x, h[name])
        self.train_acc_curve.setData(x, h["train_acc"])
        self.test_acc_curve.setData(tests["step"], tests["acc"])
        settle(self.loss_plot)
        settle(self.acc_plot)
        steps, accuracies = np.concatenate([x, tests["step"]]), np.concatenate([h["train_acc"], tests["acc"]])
        self.acc_key.place(np.stack([steps, accuracies], axis=1))
        self.loss_key.place(np.concatenate([np.stack([x, h[name]], axis=1) for name in ("loss", "margin", "recon")]))
