"""The overlapping-digits window: a MultiMNIST model in a :class:`~capsviz.gui.widgets.pairs.PairExplorer`.

Opened from View → Overlapping digits (the shipped MultiMNIST model), or by opening a
MultiMNIST checkpoint (File → Open checkpoint, or ``capsviz --checkpoint``). The digits
are the MNIST test split when its files are there, else the 2,000 shipped test digits.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMainWindow, QWidget

from capsviz.data.mnist import MnistNotFoundError, load_mnist, load_sample
from capsviz.gui.widgets.pairs import PairExplorer
from capsviz.paths import shipped_multimnist_checkpoint
from capsviz.train.checkpoint import CheckpointError, check_dataset_of, load_checkpoint, read_info


class PairWindow(QMainWindow):
    """A top-level window around one :class:`PairExplorer`; :meth:`load` swaps its model."""

    def __init__(self, explorer: PairExplorer, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.explorer = explorer
        self.setCentralWidget(explorer)
        self.resize(1150, 780)
        self.path = path
        self._title()

    def _title(self) -> None:
        self.setWindowTitle(f"capsviz — overlapping digits (MultiMNIST) — {self.path.name}")

    def load(self, model, path: Path) -> None:
        self.explorer.set_model(model)
        self.path = path
        self._title()


def test_digits(data_root: Path | None):
    """(digits, full): the MNIST test split and True, or the shipped 2,000-digit sample and False."""
    try:
        return load_mnist(train=False, data_root=data_root), True
    except MnistNotFoundError:
        return load_sample(), False


def model_dataset(path: Path) -> str | None:
    """What the checkpoint at ``path`` is for (``mnist``, ``multimnist``), or None when its
    header cannot be read (loading it then says why)."""
    try:
        return read_info(path).dataset
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
    if pair_window is None:
        digits, full = test_digits(data_root)
        pair_window = PairWindow(PairExplorer(model, digits, full_test_split=full), path)
        window.pair_window = pair_window
    else:
        pair_window.load(model, path)
    pair_window.show()
    pair_window.raise_()
    return pair_window
