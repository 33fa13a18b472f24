"""Render the overlapping-digits window offscreen on a fixed MultiMNIST test pair:
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
from capsviz.gui.pair_window import PairWindow, load_pair_model, test_digits  # noqa: E402
from capsviz.gui.widgets.pairs import PairExplorer  # noqa: E402

model, path = load_pair_model()
digits, full = test_digits(args.data_root)
if not full:
    raise SystemExit("the fixed test pairs need the MNIST test files: give --data-root (see README: MNIST)")
window = PairWindow(PairExplorer(model, digits), path, device="cpu")
window.show()
window.explorer.select_test_pair(args.pair)
window.docks["routing"].raise_()
window.scheduler.wait_idle()
for _ in range(3):
    app.processEvents()
args.out.mkdir(parents=True, exist_ok=True)
window.grab().save(str(args.out / "overlapping.png"))
explorer = window.explorer
print(f"wrote {args.out / 'overlapping.png'}: test pair {args.pair}, {explorer.verdict.text()}")

routing = window.routing_view
routing.setParent(None)
routing.resize(820, 900)  # the dock stacks its maps, mosaic and curves
routing.show()
window.scheduler.wait_idle()
for _ in range(3):
    app.processEvents()
routing.grab().save(str(args.out / "overlapping_routing.png"))
print(f"wrote {args.out / 'overlapping_routing.png'}")
window.shutdown()
routing.close()
