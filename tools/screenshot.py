"""Render the main window offscreen to docs/screenshot.png, with a hand-drawn digit, and,
beside it, the capsule lengths with the shipped CNN's probabilities (docs/lengths_cnn.png),
the routing view on its own (docs/routing.png), the pose view's Fig. 4 grid
(docs/fig4_grid.png), the transforms view (docs/transforms.png) and the MNIST browser
on the assets sample, filtered to the digits the CapsNet and the CNN disagree on
(docs/browser.png), the votes view (docs/votes.png) and the robustness view of both
networks (docs/robustness.png).

Usage: QT_QPA_PLATFORM=offscreen python tools/screenshot.py [--out docs/screenshot.png]
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QMouseEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "screenshot.png")
parser.add_argument("--sample", type=int, default=None, help="show this MNIST test-sample index instead of drawing")
args = parser.parse_args()

app = QApplication([])
from capsviz.gui.app import configure_pyqtgraph  # noqa: E402

configure_pyqtgraph()
import tempfile  # noqa: E402

from PySide6.QtCore import QSettings  # noqa: E402

from capsviz.gui.main_window import MainWindow  # noqa: E402

# fresh settings, so the pictures show the defaults whatever this machine's user changed
w = MainWindow(device="cpu", settings=QSettings(tempfile.mkdtemp() + "/capsviz.ini", QSettings.Format.IniFormat))
w.show()
if args.sample is None:
    canvas = w.input_panel.canvas
    canvas.clear()
    # a hand-drawn 4: down-stroke, cross-bar, long vertical
    strokes = [
        [(95, 40), (85, 90), (75, 140), (70, 165)],
        [(70, 165), (130, 163), (200, 160)],
        [(170, 45), (168, 120), (166, 190), (165, 245)],
    ]
    for stroke in strokes:
        pts = []
        for (x0, y0), (x1, y1) in zip(stroke, stroke[1:]):
            pts += [(x0 + (x1 - x0) * t / 8, y0 + (y1 - y0) * t / 8) for t in range(9)]
        for kind, p, b, bs in (
            [(QEvent.Type.MouseButtonPress, pts[0], Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)]
            + [(QEvent.Type.MouseMove, p, Qt.MouseButton.NoButton, Qt.MouseButton.LeftButton) for p in pts[1:]]
            + [(QEvent.Type.MouseButtonRelease, pts[-1], Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton)]
        ):
            ev = QMouseEvent(
                kind,
                QPointF(*p),
                QPointF(canvas.mapToGlobal(QPoint(int(p[0]), int(p[1])))),
                b,
                bs,
                Qt.KeyboardModifier.NoModifier,
            )
            QApplication.sendEvent(canvas, ev)
else:
    w.sources.show_sample(args.sample)
w.scheduler.wait_idle()  # the forward pass runs on the inference thread, the views follow in turn
w.routing_view.iteration.setValue(3)
w.scheduler.wait_idle()
for _ in range(3):
    app.processEvents()
args.out.parent.mkdir(parents=True, exist_ok=True)
w.grab().save(str(args.out))
print(f"wrote {args.out}; prediction {w.core.inference.prediction if w.core.inference else None}")

# the lengths dock on its own, wider, for the drawn digit: capsule lengths and the CNN's probabilities
lengths = w.lengths_view
lengths_dock = lengths.parentWidget()
lengths.setParent(None)
lengths.resize(520, 560)
lengths.show()
for _ in range(20):
    app.processEvents()
out = args.out.with_name("lengths_cnn.png")
lengths.grab().save(str(out))
inf = w.core.inference
if inf is not None and inf.baseline is not None:
    print(f"wrote {out}; lengths {inf.lengths[-1].round(3)}, CNN {inf.baseline.round(3)}")

# the routing view alone, larger, showing iteration 1 (c still uniform) with a shared colour scale
routing = w.routing_view
dock = routing.parentWidget()
routing.setParent(None)
routing.resize(1300, 620)
routing.scale.setCurrentIndex(1)
routing.iteration.setValue(1)
routing.show()
for _ in range(20):
    app.processEvents()
out = args.out.with_name("routing.png")
routing.grab().save(str(out))
print(f"wrote {out}")

pose = w.pose_view
pose.grid_button.click()
for _ in range(10):
    app.processEvents()
out = args.out.with_name("fig4_grid.png")
pose.grid_dialog.save_png(out, scale=2)
print(f"wrote {out}")
pose.grid_dialog.close()


def settle(seconds: float) -> None:
    import time

    end = time.time() + seconds
    while time.time() < end:
        app.processEvents()
        time.sleep(0.01)


w.sources.show_sample(0)
w.docks["transforms"].show()
w.docks["transforms"].raise_()
w.transform_view.sliders["rotation"].setValue(25.0)
settle(1.0)
out = args.out.with_name("transforms.png")
w.docks["transforms"].grab().save(str(out))
print(f"wrote {out}")

from capsviz.data.mnist import load_sample  # noqa: E402

w.browser.set_data(load_sample(), "assets sample")
w.docks["browser"].show()
w.docks["browser"].raise_()
while w.browser.predictions is None:
    settle(0.2)
w.browser.disagree_only.setChecked(True)
settle(0.5)
out = args.out.with_name("browser.png")
w.docks["browser"].grab().save(str(out))
print(f"wrote {out}")

# the votes view on test-sample digit 7 (a 9), untransformed, at the last routing iteration
w.transform_view.reset()
w.sources.show_sample(7)
w.docks["votes"].show()
w.docks["votes"].raise_()
w.votes_view.refresh()
w.votes_view.iteration.setValue(w.votes_view.iteration.maximum())
settle(1.0)
out = args.out.with_name("votes.png")
w.docks["votes"].grab().save(str(out))
print(f"wrote {out}")

# the robustness view, measured on the first 1,000 test digits (the MNIST test split when
# CAPSVIZ_DATA or --data-root finds it, else the shipped sample)
w.docks["robustness"].show()
w.docks["robustness"].raise_()
w.robustness.start(1000)
while w.robustness.worker is not None:
    settle(0.2)
w.scheduler.wait_idle()
settle(0.5)
out = args.out.with_name("robustness.png")
w.docks["robustness"].grab().save(str(out))
print(f"wrote {out}")
for name, results in (("CapsNet", w.robustness_view.results), ("CNN", w.robustness_view.baseline_results)):
    for kind, points in results.items():
        print(f"  {name} {kind}: " + ", ".join(f"{s:g}: {100 * a:.1f} %" for s, a in sorted(points.items())))
