"""Input sources: what puts an image on the input panel (MNIST digits, image files, drops
and the clipboard)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QBuffer, QIODevice, QMimeData, QObject, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QWidget

from capsviz.data.images import ImageReadError, load_input
from capsviz.data.mnist import MnistSplit, load_sample
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.canvas import InputPanel

PASTED = "pasted image"  # the name image data from a drop or the clipboard goes by


def _copied_path(text: str) -> str | None:
    """The file a text names, as a terminal or an address bar copies a path (one line,
    quoted or not, or a file URL), or None: not one line of a path's length, or no file."""
    text = text.strip().strip("'\"")
    if not text or "\n" in text or len(text) > 4096:
        return None
    url = QUrl(text)
    try:
        path = Path(url.toLocalFile() if url.isLocalFile() else text).expanduser()
        return str(path) if path.is_file() else None
    except (OSError, RuntimeError, ValueError):  # a name too long, ~user unknown, a NUL
        return None


class InputSources(QObject):
    """Puts images on ``panel``: digits of ``sample`` (the MNIST test sample) or another
    split, image files and encoded image bytes, preprocessed as the CLI does.

    Parameters
    ----------
    parent : QWidget
        Parent of the file dialog (and of this object).
    panel : InputPanel
        Where the images go; its ink-polarity choice applies to image files.
    show_error : callable
        ``show_error(title, message)`` tells the user why an image cannot be opened.
    """

    def __init__(self, parent: QWidget, panel: InputPanel, show_error: Callable[[str, str], None]) -> None:
        super().__init__(parent)
        self._parent = parent
        self.panel = panel
        self._show_error = show_error
        self.sample: MnistSplit = load_sample()
        self._rng = np.random.default_rng()
        self._image_source: tuple | None = None  # (path or bytes, name) of the image on the canvas
        self.mnist_shown: tuple[MnistSplit, int] | None = None  # (split, index) of the MNIST digit put on the canvas

    def show_sample(self, index: int) -> None:
        """Use MNIST test-sample image ``index`` as the input, exactly as stored."""
        self.show_mnist(self.sample, index)

    def show_random_sample(self) -> None:
        self.show_sample(int(self._rng.integers(len(self.sample))))

    def show_mnist(self, split: MnistSplit, index: int) -> None:
        """Use image ``index`` of ``split`` as the input, exactly as stored."""
        self._image_source = None
        self.mnist_shown = (split, index)
        source = tr("MNIST test image {index} (label {label})", index=index, label=split.labels[index])
        self.panel.set_input(split.image(index), source=source)

    def open_image(self, source, name: str | None = None) -> bool:
        """Classify an image file (path) or encoded image bytes, preprocessed as the CLI does.

        On failure the message is shown and the current input stays. Returns success.
        """
        name = name or str(source)
        try:
            image, ink = load_input(source, invert=self.panel.invert_choice(), name=name)
        except ImageReadError as exc:
            self._show_error(tr("Cannot open image"), str(exc))
            return False
        self._image_source = (source, name)
        self.mnist_shown = None
        shown = tr("pasted image") if name == PASTED else Path(name).name
        self.panel.set_input(image, ink=ink, source=tr("image: {name}", name=shown))
        return True

    def input_digit(self) -> tuple[MnistSplit, int] | None:
        """(split, index) of the MNIST digit that is the input now (a transform may be applied
        to it), or None: a drawing (drawn over it included), an image file or none."""
        return self.mnist_shown if self.panel.source.text() else None

    def reload_image(self) -> None:
        """Read the image on the canvas again (its ink polarity choice changed)."""
        if self._image_source is not None and self.panel.source.text():  # a drawing clears the source
            self.open_image(*self._image_source)

    def open_image_dialog(self) -> None:
        images = tr("Images (*.png *.jpg *.jpeg *.bmp *.gif *.tif *.tiff *.webp);;All files (*)")
        path, _ = QFileDialog.getOpenFileName(self._parent, tr("Open image"), "", images)
        if path:
            self.open_image(path)

    def open_mime(self, mime: QMimeData) -> bool:
        """Open what a drop or the clipboard holds: a local image file (a file URL, or a path
        copied as text, quoted or not), or image data."""
        files = [u.toLocalFile() for u in mime.urls() if u.isLocalFile()] if mime.hasUrls() else []
        if not files and mime.hasText():
            files = [path] if (path := _copied_path(mime.text())) else []
        if files:
            return self.open_image(files[0])
        if mime.hasImage():
            qimage = mime.imageData()
            buffer = QBuffer()
            buffer.open(QIODevice.OpenModeFlag.WriteOnly)
            if qimage is None or qimage.isNull() or not qimage.save(buffer, "PNG"):
                self._show_error(tr("Cannot open image"), tr("the pasted or dropped image data cannot be read"))
                return False
            return self.open_image(bytes(buffer.data()), name=PASTED)
        self._show_error(tr("Nothing to open"), tr("the clipboard or the drop holds no image and no image file"))
        return False

    def paste_image(self) -> bool:
        return self.open_mime(QApplication.clipboard().mimeData())

    def drag_enter(self, event: QDragEnterEvent) -> None:
        """Accept a drag that carries an image or a local file."""
        mime = event.mimeData()
        if mime.hasImage() or (mime.hasUrls() and any(u.isLocalFile() for u in mime.urls())):
            event.acceptProposedAction()

    def drop(self, event: QDropEvent) -> None:
        event.acceptProposedAction()
        self.open_mime(event.mimeData())
