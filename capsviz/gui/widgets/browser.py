"""MNIST browser: step through the test set, filter to the model's mistakes, and a
confusion matrix whose cells browse their examples."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from capsviz import explanations
from capsviz.data.mnist import MnistSplit
from capsviz.evaluate import confusion_matrix
from capsviz.explorer import browsed, browser_digit, browser_filter, confusion_cells, step_through
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import column, row, set_quietly


class MnistBrowser(QWidget):
    """Navigation over a test split, an error filter, and a clickable confusion matrix.

    Signals
    -------
    showRequested(int) : show test image ``index`` (of ``data``) as the input.
    """

    showRequested = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setToolTip(tr(explanations.BROWSER))
        self.data: MnistSplit | None = None
        self.predictions: np.ndarray | None = None
        self.baseline_predictions: np.ndarray | None = None  # the compared CNN's, (N,) int64, or None
        self.cell: tuple[int, int] | None = None  # (true, predicted) filter from the matrix
        self.index = 0
        self.input_digit: tuple[MnistSplit, int] | None = None  # the MNIST digit that is the input, if any
        self._rng = np.random.default_rng()

        self.description = ""  # what the test digits are (an English source), once loaded
        self.source = QLabel(tr("no test data loaded"))
        self.prev_button = QPushButton(tr("◀ Previous"), clicked=lambda: self.step(-1))
        self.next_button = QPushButton(tr("Next ▶"), clicked=lambda: self.step(1))
        self.random_button = QPushButton(tr("Random"), clicked=self.random)
        tip = tr("Go to a test image by its index")
        self.goto = QSpinBox(prefix=tr("index "), keyboardTracking=False, valueChanged=self.show_index, toolTip=tip)
        self.errors_only = QCheckBox(tr("only mistakes"), enabled=False, toggled=lambda _: self._filter_changed())
        tip = tr("Keep the digits on which the CapsNet and the compared CNN give different answers")
        self.disagree_only = QCheckBox(tr("only where the CNN disagrees"), enabled=False, toolTip=tip)
        self.disagree_only.toggled.connect(lambda _: self._filter_changed())
        self.filter_label = QLabel("")
        self.show_all = QPushButton(tr("Show all"), visible=False, clicked=self.clear_cell)
        self.status = QLabel("", wordWrap=True)
        self.current_label = QLabel("")  # bold while the digit it names is the input

        tip = tr("Rows: true digit; columns: predicted digit. Click a cell to browse its digits.")
        self.matrix = QTableWidget(10, 10, toolTip=tip, cellClicked=self.select_cell)
        self.matrix.setHorizontalHeaderLabels([str(k) for k in range(10)])
        self.matrix.setVerticalHeaderLabels([str(k) for k in range(10)])
        self.matrix.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.matrix.setTabKeyNavigation(False)  # Tab leaves the matrix for the next control; the arrows move in it
        self.matrix.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        for header in (self.matrix.horizontalHeader(), self.matrix.verticalHeader()):
            header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)

        nav = row(self.prev_button, self.next_button, self.random_button, self.goto, self.errors_only, 1)
        filt = row(self.disagree_only, self.filter_label, self.show_all, 1)
        matrix = (tr("confusion matrix (rows: true digit, columns: prediction)"), (self.matrix, 1))
        parts = (self.source, nav, self.current_label, filt, *matrix, self.status)
        column(*parts, spacing=3, margins=(4,) * 4, parent=self)  # close rows: a low bottom dock holds it

    def changeEvent(self, event) -> None:
        """In another language, the texts composed from the browser's state composed again."""
        if event.type() == QEvent.Type.LanguageChange:
            self.goto.setPrefix(tr("index "))
            self._show_source()
            self._update_filter_label()
            self._describe()
        super().changeEvent(event)

    # -- data -----------------------------------------------------------------------------
    def set_data(self, data: MnistSplit, description: str) -> None:
        """Browse ``data``; ``description`` (an English source) says what it is."""
        self.data = data
        self.description = description
        self.predictions = self.baseline_predictions = None
        self.cell = None
        self._show_source()
        self.goto.setRange(0, len(data) - 1)
        for box in (self.errors_only, self.disagree_only):
            box.setChecked(False)
            box.setEnabled(False)
        self._fill_matrix(None)
        self._update_filter_label()

    def set_predictions(self, predictions: np.ndarray | None, baseline: np.ndarray | None = None) -> None:
        """The model's predicted class for every image of ``data`` ((N,) int), or None (stale);
        ``baseline`` the compared CNN's ((N,) int), or None without one."""
        self.predictions = None if predictions is None else np.asarray(predictions, dtype=np.int64)
        self.baseline_predictions = (
            None if baseline is None or self.predictions is None else np.asarray(baseline, dtype=np.int64)
        )
        self.errors_only.setEnabled(self.predictions is not None)
        self.disagree_only.setEnabled(self.baseline_predictions is not None)
        if self.baseline_predictions is None:
            self.disagree_only.setChecked(False)
        if self.predictions is None:
            self.cell = None
            self.errors_only.setChecked(False)
        self._fill_matrix(self.confusion())
        self._update_filter_label()
        self._describe()

    def confusion(self) -> np.ndarray | None:
        if self.predictions is None:
            return None
        return confusion_matrix(self.data.labels, self.predictions)

    def indices(self) -> np.ndarray:
        """Indices of the test images the current filter keeps, ascending."""
        if self.data is None:
            return np.zeros(0, dtype=np.int64)
        filters = (self.errors_only.isChecked(), self.disagree_only.isChecked(), self.cell)
        return browsed(self.data.labels, self.predictions, self.baseline_predictions, *filters)

    # -- navigation ---------------------------------------------------------------------------
    def select(self, index: int) -> None:
        """Make test image ``index`` the browser's current one, without showing it as the input."""
        if self.data is None:
            return
        self.index = int(np.clip(index, 0, len(self.data) - 1))
        set_quietly(self.goto, self.index)
        self._describe()

    def show_index(self, index: int) -> None:
        """Select test image ``index`` and ask for it to be shown (the user's choice)."""
        if self.data is None:
            return
        self.select(index)
        self.showRequested.emit(self.index)

    def step(self, direction: int) -> None:
        """Show the next digit the filter keeps (``direction`` > 0), else the one before."""
        index = step_through(self.indices(), self.index, direction)
        if index is not None:
            self.show_index(index)

    def random(self) -> None:
        idx = self.indices()
        if idx.size:
            self.show_index(int(self._rng.choice(idx)))

    def select_cell(self, row: int, col: int) -> None:
        """Browse the digits with true label ``row`` predicted as ``col``."""
        if self.predictions is None:
            return
        self.cell = (row, col)
        self._filter_changed()

    def clear_cell(self) -> None:
        self.cell = None
        self.matrix.clearSelection()
        self._filter_changed()

    def _filter_changed(self) -> None:
        self._update_filter_label()
        idx = self.indices()
        if idx.size and self.index not in idx:
            self.show_index(int(idx[0]))

    # -- display ---------------------------------------------------------------------------------
    def _show_source(self) -> None:
        if self.data is not None:
            self.source.setText(tr("{description}: {n:,} digits", description=tr(self.description), n=len(self.data)))

    def _update_filter_label(self) -> None:
        filters = (self.cell, self.errors_only.isChecked(), self.disagree_only.isChecked())
        self.filter_label.setText(browser_filter(len(self.indices()), *filters, tr))
        self.show_all.setVisible(self.cell is not None)

    def set_input_digit(self, digit: tuple[MnistSplit, int] | None) -> None:
        """The input is MNIST digit ``digit`` (split, index), or None (a drawing, an image
        file): the line on the browser's digit is bold only while that digit is the input."""
        self.input_digit = digit
        self._describe()

    @property
    def is_input(self) -> bool:
        """Whether the browser's current digit is the input."""
        return self.input_digit is not None and self.input_digit[0] is self.data and self.input_digit[1] == self.index

    def _describe(self) -> None:
        if self.data is not None:
            answers = (self.predictions, self.baseline_predictions)
            answers = [None if a is None else int(a[self.index]) for a in answers]
            line = browser_digit(self.index, int(self.data.labels[self.index]), *answers, tr)
            font = self.current_label.font()
            font.setBold(self.is_input)
            self.current_label.setFont(font)
            self.current_label.setText(line if self.is_input else tr("{line} (not the input)", line=line))

    def _fill_matrix(self, cm: np.ndarray | None) -> None:
        for (r, c), (text, shade) in confusion_cells(cm).items():
            item = QTableWidgetItem(text)
            item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            if shade:  # the diagonal in blue, errors in red
                colour = QColor(70, 110, 200) if r == c else QColor(220, 70, 60)
                colour.setAlphaF(shade)
                item.setBackground(QBrush(colour))
            self.matrix.setItem(r, c, item)
