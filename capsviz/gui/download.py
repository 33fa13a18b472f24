"""MNIST fetched in the app: a question, then a progress dialog with Cancel while
:func:`capsviz.data.download.download_mnist` runs in a background thread."""

from __future__ import annotations

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QMessageBox, QProgressDialog, QWidget

from capsviz.data.download import BackgroundDownload, DownloadCancelled, missing_archives
from capsviz.data.mnist import resolve_data_root, split_files
from capsviz.gui.i18n import tr


def offer_mnist(parent: QWidget, data_root, why: str) -> bool:
    """Whether MNIST is in ``data_root`` (``None``: the default place), downloading it when it
    is not and the user says yes. ``why``: a sentence saying what needs it."""
    missing = missing_archives(data_root)
    if not missing:
        return True
    folder = resolve_data_root(data_root) / "MNIST" / "raw"
    sizes = {name: size for name, (_, size) in split_files().items()}
    short = [name[:-3] for name in missing if (folder / name[:-3]).is_file()]  # extracted, but cut short
    absent = [name for name in missing if name[:-3] not in short]
    if short:
        cut = "; ".join(
            tr("{name} has {size:,} of its {full:,} bytes", name=n, size=(folder / n).stat().st_size, full=sizes[n])
            for n in short
        )
        title, text = (
            tr("MNIST is damaged"),
            tr("{why} MNIST in {folder} is incomplete: {cut}.", why=why, folder=folder, cut=cut),
        )
        if absent:
            text += " " + tr("Missing: {missing}.", missing=", ".join(absent))
    else:
        title = tr("MNIST is missing")
        text = tr(
            "{why} MNIST is not in {folder} (missing {missing}).", why=why, folder=folder, missing=", ".join(absent)
        )
    text += "\n\n" + tr("Download it from torchvision's mirrors (up to 11 MB)?")
    if QMessageBox.question(parent, title, text) != QMessageBox.StandardButton.Yes:
        return False
    return fetch_mnist(parent, data_root)


def fetch_mnist(parent: QWidget, data_root) -> bool:
    """Download the missing archives with a progress dialog (Cancel stops it and keeps
    nothing of the file under way); True when all are there. A failure is shown in a
    message box that says where to put the files by hand."""
    text, modal = tr("Downloading MNIST from torchvision's mirrors…"), Qt.WindowModality.WindowModal
    options = {"windowTitle": tr("Downloading MNIST"), "minimumDuration": 0, "autoClose": False, "autoReset": False}
    dialog = QProgressDialog(text, tr("Cancel"), 0, 0, parent, windowModality=modal, **options)
    download = BackgroundDownload(data_root)
    dialog.canceled.connect(download.cancel)
    loop, timer = QEventLoop(), QTimer(dialog, interval=100)

    def poll() -> None:
        if download.total:
            dialog.setRange(0, 1000)
            dialog.setValue(round(1000 * download.done / download.total))
            mb = {"done": download.done / 1e6, "total": download.total / 1e6}
            dialog.setLabelText(tr("Downloading {name}: {done:.2f} of {total:.2f} MB", name=download.name, **mb))
        if not download.running:
            loop.quit()

    timer.timeout.connect(poll)
    timer.start()
    dialog.show()
    loop.exec()
    timer.stop()
    dialog.close()
    dialog.deleteLater()
    error = download.error  # shown here, on the GUI thread
    if error is not None and not isinstance(error, DownloadCancelled):
        QMessageBox.warning(parent, tr("Cannot download MNIST"), str(error))
    return error is None and not missing_archives(data_root)
