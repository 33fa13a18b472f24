"""Render the explorer's overlapping-digits mode offscreen on a fixed MultiMNIST test pair:
docs/overlapping.png (the window: the pair, Fig. 5, the segmentation, the lengths) and
docs/overlapping_routing.png (its routing dock on its own, larger, at the last iteration).

Usage: QT_QPA_PLATFORM=offscreen python tools/screenshot_pairs.py [--pair 2] [--data-root DIR]
(the fixed test pairs need the MNIST test files; see README: MNIST)
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs"
parser = argparse.ArgumentParser()
parser.add_argument("--pair", type=int, default=2, help="index of the fixed test pair to show")
parser.add_argument("--data-root", type=Path, default=None)
parser.add_argument("--out", type=Path, default=DOCS)
args = parser.parse_args()

app = QApplication([])
from capsviz.gui.app import configure_pyqtgraph  # noqa: E402

configure_pyqtgraph()
import tempfile  # noqa: E402

from PySide6.QtCore import QSettings  # noqa: E402

from capsviz.gui.main_window import MainWindow  # noqa: E402

settings = QSettings(tempfile.mkdtemp() + "/capsviz.ini", QSettings.Format.IniFormat)  # defaults, not the user's
window = MainWindow(device="cpu", data_root=args.data_root, settings=settings)
window.show()
panel = window.pair_panel
if not panel.full_test_split:
    raise SystemExit("the fixed test pairs need the MNIST test files: give --data-root (see README: MNIST)")


def settle() -> None:
    while window.core.pending or not window.scheduler.wait_idle():
        app.processEvents()
    for _ in range(3):
        app.processEvents()


window.actions["pairs"].trigger()  # View → Overlapping digits: the shipped MultiMNIST model
panel.select_test_pair(args.pair)
settle()
window.docks["routing"].raise_()
settle()
args.out.mkdir(parents=True, exist_ok=True)
window.grab().save(str(args.out / "overlapping.png"))
print(f"wrote {args.out / 'overlapping.png'}: test pair {args.pair}, {panel.verdict.text()}")

routing = window.routing_view
routing.setParent(None)
routing.resize(820, 900)
routing.show()
settle()
routing.grab().save(str(args.out / "overlapping_routing.png"))
print(f"wrote {args.out / 'overlapping_routing.png'}")
window.close()
routing.close()
