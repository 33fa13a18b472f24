"""Export: the window's plots as PNG and SVG files, and the routing trace as ``.npz``."""

from __future__ import annotations

import errno
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMessageBox, QWidget

from capsviz.gui.dialogs import ask_file_to_save, write_or_warn
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.common import ImagePanel, laid_out_at
from capsviz.model.inference import Inference, save_trace

EXPORT_MIN_WIDTH = 640  # px: a PNG narrower on screen is rendered this wide, its texts scaled with it


@contextmanager
def _drawn_for_export(widget: pg.GraphicsView):
    """The items of ``widget``'s scene in pyqtgraph's export mode while the block runs: a
    scatter draws each dot as a vector path, not as a fragment of its cached pixmap (which an
    SVG would hold as one embedded image per dot: 10 MB for a digit's 1,152 votes)."""
    items = [item for item in widget.scene().items() if hasattr(item, "setExportMode")]
    for item in items:
        item.setExportMode(True, {"antialias": True})
    try:
        yield
    finally:
        for item in items:
            item.setExportMode(False)


def _write_figure(widget: QWidget, png: Path, svg: Path) -> None:
    """Write ``widget`` (a ``pg.PlotWidget`` or ``pg.GraphicsLayoutWidget``) at its size as
    ``png`` (at least ``EXPORT_MIN_WIDTH`` px wide) and as ``svg``."""
    import pyqtgraph.exporters as exporters
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    item = widget.plotItem if isinstance(widget, pg.PlotWidget) else widget.ci
    exporter = exporters.ImageExporter(item)
    if exporter.parameters()["width"] < EXPORT_MIN_WIDTH:  # a panel small on screen
        exporter.parameters()["width"] = EXPORT_MIN_WIDTH  # the height follows, the aspect kept
    exporter.export(str(png))
    # pyqtgraph 0.14's SVGExporter cannot parse the paths newer Qt versions write
    # (pyqtgraph issue #3485), so SVG comes from Qt's own generator.
    generator = QSvgGenerator()
    generator.setFileName(str(svg))
    generator.setSize(widget.size())
    generator.setViewBox(widget.rect())
    generator.setTitle(f"capsviz: {png.stem}")
    painter = QPainter(generator)
    with _drawn_for_export(widget):
        widget.render(painter)
    painter.end()


def export_figures(figures: dict[str, QWidget], folder: Path) -> list[Path]:
    """Write each of ``figures`` (file name -> a ``pg.PlotWidget`` or
    ``pg.GraphicsLayoutWidget``) as PNG (pyqtgraph exporters, at least
    ``EXPORT_MIN_WIDTH`` px wide) and SVG into ``folder``;
    returns the files. Raises ``OSError`` (naming the folder or the file) when the folder
    cannot be made or written into, or a file did not come out (Qt's writers only warn)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".capsviz-"):
            pass
    except OSError as exc:
        raise OSError(exc.errno, tr("cannot write files there"), str(folder)) from exc
    written = []
    for name, widget in figures.items():
        png, svg = folder / f"{name}.png", folder / f"{name}.svg"
        # an image panel at its figure size (title and image, no bands), the others as shown
        with laid_out_at(widget, widget.figure_size() if isinstance(widget, ImagePanel) else widget.size()):
            _write_figure(widget, png, svg)
        for path in (png, svg):
            if not path.is_file() or path.stat().st_size == 0:
                raise OSError(errno.EIO, tr("the file was not written"), str(path))
        written += [png, svg]
    return written


def export_figures_dialog(
    window: QMainWindow, write: Callable[[Path], list[Path]], left_out: Callable[[], list[str]] = list
) -> None:
    """Ask for a folder and ``write(folder)`` the figures into it once it is chosen (a wait
    cursor while it writes, so they are the views of that moment); the status bar says how
    many files, and names the plots ``left_out()`` gives (texts: why each was not
    exported). An unwritable folder gets a message box."""
    folder = QFileDialog.getExistingDirectory(window, tr("Export figures into folder"))
    if not folder:
        return
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        files = write(Path(folder))
    except OSError as exc:
        QApplication.restoreOverrideCursor()
        QMessageBox.warning(window, tr("Export figures"), tr("Could not write the figures: {error}", error=exc))
        return
    QApplication.restoreOverrideCursor()
    said = tr("wrote {n} files to {folder}", n=len(files), folder=folder)
    window.statusBar().showMessage(" · ".join([said, *left_out()]), 10000)


def export_trace_dialog(window: QMainWindow, inference: Inference | None, answers: int = 1) -> None:
    """Ask for a file and save ``inference``'s routing trace there (none: say so); ``answers``:
    the model kind's (2 for pairs: the two longest capsules are saved as well)."""
    if inference is None:
        QMessageBox.information(window, tr("Nothing to export"), tr("Draw a digit first."))
        return
    title = tr("Export routing trace")
    path = ask_file_to_save(window, title, "trace.npz", tr("NumPy archive (*.npz)"))
    if path is not None and write_or_warn(window, title, path, lambda path: save_trace(inference, path, answers)):
        window.statusBar().showMessage(tr("saved {path}", path=path), 5000)
