"""Help → Tour: the steps of :data:`capsviz.lessons.STEPS`, each beside the view it is about
with that view highlighted, each setting up its own example on the live app."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QWidget

from capsviz import lessons
from capsviz.data.mnist import load_test_or_sample
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import column, row

WIDTH = 400  # pixels: the step's panel
POSE_DIMENSION, POSE_OFFSET = 4, 0.2  # the pose step moves this slider this far


class Tour(QFrame):
    """The tour over ``window`` (a :class:`~capsviz.gui.main_window.MainWindow`): a panel with
    the step's title and text, Back / Next and Close (Esc), and a frame around the view the
    step is about. :attr:`index` is the step shown (None: the tour is closed)."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window_ = window
        self.index: int | None = None
        self._test = None  # the test digits the first step loads from
        self._followed: int | None = None  # the capsule the follow step selected (None: still to be), its text's
        self.setObjectName("tour")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#tour { background: #fdf6e3; border: 2px solid #f0a020; border-radius: 6px; }")
        self.setFixedWidth(WIDTH)
        self.heading = QLabel("", wordWrap=True, styleSheet="font-weight: bold; font-size: 13pt; color: #202020;")
        self.body = QLabel("", wordWrap=True, styleSheet="color: #202020;")
        self.counter = QLabel("", styleSheet="color: #606060;")
        self.back_button = QPushButton(tr("Back"), clicked=lambda: self.show_step(self.index - 1))
        self.next_button = QPushButton(tr("Next"), clicked=lambda: self.show_step(self.index + 1))
        self.close_button = QPushButton(tr("Close"), clicked=self.close_tour, toolTip=tr("Leave the tour (Esc)"))
        buttons = row((self.counter, 1), self.back_button, self.next_button, self.close_button)
        column(self.heading, self.body, buttons, parent=self)
        self.frame = QFrame(window)  # around the view the step is about
        self.frame.setStyleSheet("border: 3px solid #f0a020; background: transparent;")
        self.frame.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), window, self.close_tour)
        self.escape.setEnabled(False)
        self.hide()
        self.frame.hide()
        window.installEventFilter(self)
        window.scheduler.idle.connect(self.refresh)

    @property
    def step(self) -> lessons.Step | None:
        return None if self.index is None else lessons.STEPS[self.index]

    def start(self) -> None:
        """Open the tour at its first step."""
        self.show_step(0)

    def show_step(self, index: int) -> None:
        """Show step ``index`` (0-based): set up its example, highlight its view, say its text."""
        index = max(0, min(index, len(lessons.STEPS) - 1))
        self.index = index
        step = lessons.STEPS[index]
        getattr(self, f"_set_up_{step.key}", self._set_up_digit)()
        self.counter.setText(tr("{k} of {n}", k=index + 1, n=len(lessons.STEPS)))
        self.back_button.setEnabled(index > 0)
        self.next_button.setEnabled(index < len(lessons.STEPS) - 1)
        self.escape.setEnabled(True)
        self.refresh()
        self.show()
        self.frame.show()
        self.place()

    def close_tour(self) -> None:
        """Leave the tour; the app stays as the last step left it."""
        self.index = None
        self.escape.setEnabled(False)
        self.hide()
        self.frame.hide()

    def target(self) -> QWidget:
        """The widget the step is about: its dock, or the window's input source."""
        w = self.window_
        return w.central if self.step.view == "input" else w.docks[self.step.view]

    def place(self) -> None:
        """The frame around the target; the panel beside it (right, else left, else over it), or
        under it where that leaves the dock the step also speaks of (``keep``) visible."""
        if self.index is None:
            return
        w, target = self.window_, self.target()
        rect = QRect(target.mapTo(w, QPoint(0, 0)), target.size())
        self.frame.setGeometry(rect)
        height = self.layout().totalHeightForWidth(WIDTH)  # the wrapped text's height at the panel's width
        self.resize(WIDTH, height)
        edges = (rect.left(), rect.top(), rect.right(), rect.bottom())
        kept = w.docks.get(self.step.keep) if self.step.keep else None
        keep = None
        if kept is not None and kept.isVisible():
            area = QRect(kept.mapTo(w, QPoint(0, 0)), kept.size())
            keep = (area.left(), area.top(), area.right(), area.bottom())
        self.move(*lessons.panel_place(edges, (w.width(), w.height()), (WIDTH, height), keep=keep))
        self.frame.raise_()
        self.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window_ and event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest):
            self.place()
        return False

    # -- the texts ----------------------------------------------------------------------
    def fields(self) -> dict[str, str]:
        """The figures the steps' texts hold, from the model and the input on screen."""
        w = self.window_
        effect, inf = w.routing_view.effect, w.core.inference
        if effect is None or inf is None:
            return {}
        check = w.routing_checker.kept()
        fields = lessons.figures(effect, check, inf.lengths[-1], inf.prediction)
        i = self._followed
        if i is not None and i < len(inf.u_lengths):
            fields.update(lessons.follow_figures(inf.u_lengths, inf.c, i))
        for name, source in lessons.routing_sentences(effect, check).items():
            fields[name] = tr(source, **fields)
        return fields

    def refresh(self) -> None:
        """Say the step shown: its title and text, with the figures of the moment, in the app's language."""
        if self.index is None:
            return
        step = self.step
        if step.key == "follow" and self._followed is None:  # its input was still being inferred
            self._select_decisive()
        fields = self.fields()
        self.heading.setText(tr(step.title))
        try:
            self.body.setText(tr(step.text, **fields))
        except KeyError:  # the figures are still to come (the step's example is being inferred)
            self.body.setText(tr("…"))
        self.place()

    # -- each step's example -----------------------------------------------------------
    def _set_up_digit(self) -> None:
        """Single digits, the first test digit (a 7) as the input, the step's dock in front."""
        w = self.window_
        if not w.show_kind("mnist"):  # refused while a model loads or a run trains (the reason is shown)
            return
        if self._test is None:
            self._test = load_test_or_sample(w.core.data_root)[0]
        first = self._test.image(0)
        if w.core.input.image is None or not np.array_equal(w.core.input.image, first):
            w.sources.show_mnist(self._test, 0)
        w.routing_view.digit.setCurrentIndex(0)  # every view on the answer's capsule, as the texts say
        w.docks[self.step.view].show()
        w.docks[self.step.view].raise_()

    def _set_up_routing_first(self) -> None:
        self._set_up_digit()
        self.window_.routing_view.iteration.setValue(1)

    def _set_up_routing_last(self) -> None:
        self._set_up_digit()
        view = self.window_.routing_view
        view.iteration.setValue(view.iteration.maximum())

    def _set_up_routing_effect(self) -> None:
        self._set_up_routing_last()
        self.window_.routing_view.mark_button.setChecked(True)

    def _set_up_follow(self) -> None:
        self._set_up_routing_last()
        self.window_.routing_view.mark_button.setChecked(False)  # the one capsule's frame alone on the input
        self._followed = None
        self._select_decisive()

    def _select_decisive(self) -> None:
        """Select the most decisive primary capsule of the input shown
        (:func:`~capsviz.lessons.most_decisive`), once that input's routing is in."""
        w = self.window_
        inf = w.core.inference
        if inf is None or w.routing_view.inference is not inf or w.core.inference_pending:
            return
        self._followed = lessons.most_decisive(inf.c)
        w.capsule_selection.set(self._followed)

    def _set_up_pose(self) -> None:
        self._set_up_digit()
        view = self.window_.pose_view
        view.reset()
        view.sliders[POSE_DIMENSION].setValue(POSE_OFFSET)

    def _set_up_transforms(self) -> None:
        self._set_up_digit()
        view = self.window_.transform_view
        view.parameter.setCurrentIndex(view.parameter.findData("rotation"))
        self.window_.update_sweep()

    def _set_up_pairs(self) -> None:
        self.window_.show_kind("multimnist")
