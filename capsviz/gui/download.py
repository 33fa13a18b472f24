"""MNIST fetched in the app: a question, then a progress dialog with Cancel while
:func:`capsviz.data.download.download_mnist` runs in a background thread."""

from __future__ import annotations

import threading

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QMessageBox, QProgressDialog, QWidget

from capsviz.data.download import DownloadCancelled, download_mnist, missing_archives
from capsviz.data.mnist import resolve_data_root


def offer_mnist(parent: QWidget, data_root, why: str) -> bool:
    """Whether MNIST is in ``data_root`` (``None``: the default place), downloading it when it
    is not and the user says yes. ``why``: a sentence saying what needs it."""
    missing = missing_archives(data_root)
    if not missing:
        return True
    folder = resolve_data_root(data_root) / "MNIST" / "raw"
    text = f"{why} MNIST is not in {folder} (missing {', '.join(missing)}).\n\n"
    text += "Download it from torchvision's mirrors (up to 11 MB)?"
    if QMessageBox.question(parent, "MNIST is missing", text) != QMessageBox.StandardButton.Yes:
        return False
    return fetch_mnist(parent, data_root)


def fetch_mnist(parent: QWidget, data_root) -> bool:
    """Download the missing archives with a progress dialog (Cancel stops it and keeps
    nothing of the file under way); True when all are there. A failure is shown in a
    message box that says where to put the files by hand."""
    dialog = QProgressDialog("Downloading MNIST from torchvision's mirrors…", "Cancel", 0, 0, parent)
    dialog.setWindowTitle("Downloading MNIST")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    cancel, state = threading.Event(), {"name": "", "done": 0, "total": 0}
    dialog.canceled.connect(cancel.set)

    def work() -> None:
        try:
            download_mnist(
                data_root, progress=lambda n, d, t: state.update(name=n, done=d, total=t), cancelled=cancel.is_set
            )
        except Exception as exc:  # shown below, on the GUI thread
            state["error"] = exc

    thread = threading.Thread(target=work, name="capsviz-download", daemon=True)
    loop, timer = QEventLoop(), QTimer(dialog, interval=100)

    def poll() -> None:
        if state["total"]:
            dialog.setRange(0, 1000)
            dialog.setValue(round(1000 * state["done"] / state["total"]))
            dialog.setLabelText(
                f"Downloading {state['name']}: {state['done'] / 1e6:.2f} of {state['total'] / 1e6:.2f} MB"
            )
        if not thread.is_alive():
            loop.quit()

    timer.timeout.connect(poll)
    thread.start()
    timer.start()
    dialog.show()
    loop.exec()
    timer.stop()
    dialog.close()
    dialog.deleteLater()
    error = state.get("error")
    if error is not None and not isinstance(error, DownloadCancelled):
        QMessageBox.warning(parent, "Cannot download MNIST", str(error))
    return error is None and not missing_archives(data_root)
