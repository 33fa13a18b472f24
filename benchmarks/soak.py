"""Soak test: the app offscreen for N minutes, training in the background while a driver
draws, drags pose sliders, changes routing iterations, moves transform sliders, browses
MNIST, opens images (good and bad) and now and then switches between the Pose and
Transforms tabs (the transform sweep runs while its tab is up), every few milliseconds.

Usage: QT_QPA_PLATFORM=offscreen python benchmarks/soak.py [--minutes 10] [--data-root DIR]

Prints progress each minute, then, as its last line, a JSON object with:

- ``minutes``: the soak's length;
- ``actions``: user actions the driver performed;
- ``exceptions``: Python exceptions that reached the event loop or a worker (target 0);
- ``rss_growth_mb``: resident memory at the end minus after minute 1 (target < 50), each
  the median of ten samples per second over 30 s (after minute 1, and the last 30 s):
  a training step's temporaries come and go by a few hundred MB within a second, so
  single readings measure the phase of the step rather than growth (in a 4-minute run
  the readings of a 30 s span spread over 465 MB, 1st to 99th percentile; from one
  sample per second the difference of two medians came out anywhere from -101 to +94
  MB depending only on which tenth of a second the samples fell on, 95 % bootstrap
  interval +-76 MB; from ten per second, +-17 MB);
  ``rss_mb_after_1`` and ``rss_mb_end`` give the two medians;
- ``max_stall_ms``: the longest gap between ticks of a 5 ms GUI timer, minus 5 ms,
  after the first minute (target <= 100); ``p99_stall_ms``: the 99th percentile;
  ``max_stall_at_s``: when the longest began (seconds from the start of the driver);
  ``stalls_over_100_ms``: how many gaps passed the target;
- ``training_steps``: optimizer steps the background training made; ``epochs_ended_s``:
  when it finished an epoch (a test pass and an autosave), to the second;
- ``slowest_action_ms``: the longest single driver action of each kind after minute 1
  (where a stall comes from, when one does).

Training needs MNIST (``--data-root`` or ``$CAPSVIZ_DATA``); without it the soak runs
without training and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402
from PySide6.QtCore import QEvent, QPoint, QPointF, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QMouseEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Driver:
    """Performs one user action per call, cycling through the kinds."""

    def __init__(self, window, images: list[Path]) -> None:
        self.w = window
        self.images = images
        self.rng = np.random.default_rng(0)
        self.k = 0
        self.stroke: list[tuple[float, float]] = []
        self.tab = "pose"  # the dock raised of the two that share a tab

    def mouse(self, kind, x, y, button, buttons):
        canvas = self.w.input_panel.canvas
        ev = QMouseEvent(
            kind,
            QPointF(x, y),
            QPointF(canvas.mapToGlobal(QPoint(int(x), int(y)))),
            button,
            buttons,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(canvas, ev)

    def act(self) -> str:
        self.k += 1
        r = self.rng
        w = self.w
        kind = ["draw"] * 6 + ["pose", "pose", "iterations", "transform", "image", "browse", "undo", "clear", "tab"]
        what = kind[self.k % len(kind)]
        left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
        if what == "draw":
            if not self.stroke:
                x, y = r.uniform(60, 220, 2)
                self.mouse(QEvent.Type.MouseButtonPress, x, y, left, left)
                self.stroke = [(x, y)]
            elif len(self.stroke) < 12:
                x, y = self.stroke[-1]
                x, y = float(np.clip(x + r.normal(0, 12), 5, 275)), float(np.clip(y + r.normal(0, 12), 5, 275))
                self.mouse(QEvent.Type.MouseMove, x, y, none, left)
                self.stroke.append((x, y))
            else:
                x, y = self.stroke[-1]
                self.mouse(QEvent.Type.MouseButtonRelease, x, y, left, none)
                self.stroke = []
        elif what == "pose":
            s = w.pose_view.sliders[int(r.integers(16))]
            s.setValue(float(r.uniform(s.minimum(), s.maximum())))
        elif what == "iterations":
            w.routing_view.iterations.setValue(int(r.integers(1, 8)))
            w.routing_view.iteration.setValue(int(r.integers(1, 8)))
        elif what == "transform":
            name = list(w.transform_view.sliders)[int(r.integers(6))]
            s = w.transform_view.sliders[name]
            s.setValue(
                float(r.uniform(s.minimum(), s.maximum())) if r.random() < 0.7 else (1.0 if name == "scale" else 0.0)
            )
        elif what == "image":
            w.sources.open_image(self.images[int(r.integers(len(self.images)))])
            if w.errors.error_box is not None:
                w.errors.error_box.close()
        elif what == "browse":
            w.sources.show_sample(int(r.integers(len(w.sources.sample))))
        elif what == "undo":
            w.input_panel.canvas.undo()
        elif what == "clear":
            w.input_panel.canvas.clear()
        elif what == "tab" and r.random() < 0.1:  # about every 2 s, as a user switches tabs
            self.tab = "transforms" if self.tab == "pose" else "pose"
            w.docks[self.tab].raise_()
        return what


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--interval-ms", type=int, default=8, help="time between driver actions")
    parser.add_argument("--data-root", default=None)
    parser.add_argument(
        "--rss-log", type=Path, default=None, help="also write the resident-size samples to this CSV file (seconds, MB)"
    )
    args = parser.parse_args()

    exceptions: list[str] = []
    previous_hook = sys.excepthook

    def hook(kind, value, tb):
        exceptions.append(f"{kind.__name__}: {value}")
        previous_hook(kind, value, tb)

    sys.excepthook = hook
    app = QApplication.instance() or QApplication([])
    from capsviz.gui.app import configure_pyqtgraph
    from capsviz.runtime import after_startup, tune_process

    tune_process("app")  # as run_app does
    configure_pyqtgraph()
    from capsviz.data.mnist import MnistNotFoundError, prepare_mnist
    from capsviz.gui.main_window import MainWindow

    folder = Path(tempfile.mkdtemp(prefix="capsviz-soak-"))
    window = MainWindow(
        device="cpu",
        data_root=args.data_root,
        settings=QSettings(str(folder / "capsviz.ini"), QSettings.Format.IniFormat),
    )
    window.confirm_close = lambda: True
    original_show_exception = window.errors.show_exception

    def count_exception(title, exc):
        exceptions.append(f"{title}: {type(exc).__name__}: {exc}")
        original_show_exception(title, exc)

    window.errors.show_exception = count_exception
    # the core's failures (inference, sweep, training) come with their traceback as details
    window.core.error.connect(lambda title, message, details: details and exceptions.append(f"{title}: {message}"))
    window.show()
    # images to open: good ones in several formats, a bad one (it must only give a message)
    sample = window.sources.sample
    images = []
    for k, fmt in enumerate(["png", "jpg", "bmp", "gif"]):
        path = folder / f"digit{k}.{fmt}"
        Image.fromarray(255 - np.asarray(Image.fromarray(sample.images[k]).resize((200, 200)))).save(path)
        images.append(path)
    (folder / "notes.png").write_text("not an image")
    images.append(folder / "notes.png")

    training = True
    try:
        prepare_mnist(args.data_root)
    except (MnistNotFoundError, OSError) as exc:
        training = False
        print(f"no training during the soak: {exc}")
    if training:
        panel = window.training_panel
        panel.batch_size.setValue(32)
        panel.test_subset.setValue(200)
        panel.train_subset.setValue(6400)
        panel.epochs.setValue(1000)
        window.core.start_training(panel.config(), from_scratch=True)

    after_startup()  # as run_app does after showing the window
    driver = Driver(window, images)
    ticks: list[float] = []
    tick_timer = QTimer(interval=5)
    tick_timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    tick_timer.start()
    actions = 0
    slowest: dict[str, float] = {}  # the longest call of each kind of action after minute 1
    start = time.perf_counter()
    end = start + 60 * args.minutes
    next_action = start
    rss_after_1 = None
    rss_samples: list[tuple[float, float]] = []  # (seconds since start, MB), ten per second
    minute = 0
    epochs_ended_s: list[float] = []  # when the background training finished an epoch (test + autosave)
    while time.perf_counter() < end:
        app.processEvents()
        now = time.perf_counter()
        if now >= next_action:
            what = "?"
            try:
                what = driver.act()
            except Exception as exc:  # an action that raises is an exception found by the soak
                exceptions.append(f"driver: {type(exc).__name__}: {exc}")
            took = (time.perf_counter() - now) * 1000
            if minute >= 1:
                slowest[what] = max(slowest.get(what, 0.0), took)
            actions += 1
            next_action = now + args.interval_ms / 1000
        if not rss_samples or now - start - rss_samples[-1][0] >= 0.1:
            rss_samples.append((now - start, rss_mb()))
            if len(window.training_panel.test_history["step"]) > len(epochs_ended_s):
                epochs_ended_s.append(round(now - start, 1))
        if now - start >= 60 * (minute + 1):
            minute += 1
            if minute == 1:
                rss_after_1 = rss_mb()
                ticks_after_1 = len(ticks)
            steps = len(window.training_panel.history["step"])
            print(
                f"minute {minute}: {actions:,} actions, rss {rss_mb():.0f} MB, {len(exceptions)} exceptions, "
                f"{steps} training steps",
                flush=True,
            )
        time.sleep(0.0005)
    tick_timer.stop()
    total_s = time.perf_counter() - start

    def median_rss(t_from: float, t_to: float) -> float:
        window_mb = [mb for t, mb in rss_samples if t_from <= t < t_to]
        return float(np.median(window_mb)) if window_mb else rss_mb()

    rss_end = median_rss(total_s - 30, total_s + 1)
    if rss_after_1 is not None:
        rss_after_1 = median_rss(60, 90)
    steps = len(window.training_panel.history["step"])
    first = ticks_after_1 if rss_after_1 is not None else 0
    gaps = np.diff(np.array(ticks[first:])) * 1000 if len(ticks) - first > 1 else np.array([0.0])
    t0 = time.perf_counter()
    window.close()
    while window.core.is_training and time.perf_counter() - t0 < 10:
        app.processEvents()
    for box in window.findChildren(QMessageBox):
        box.close()
    result = {
        "minutes": args.minutes,
        "actions": actions,
        "exceptions": len(exceptions),
        "rss_growth_mb": round(rss_end - (rss_after_1 if rss_after_1 is not None else rss_end), 1),
        "rss_mb_after_1": round(rss_after_1, 1) if rss_after_1 is not None else None,
        "rss_mb_end": round(rss_end, 1),
        "max_stall_ms": round(float(gaps.max()) - 5.0, 1),
        "max_stall_at_s": round(float(ticks[first + int(gaps.argmax())] - start), 1)
        if len(ticks) - first > 1
        else None,
        "p99_stall_ms": round(float(np.percentile(gaps, 99)) - 5.0, 1),
        "stalls_over_100_ms": int((gaps - 5.0 > 100).sum()),
        "training_steps": steps,
        "close_s": round(time.perf_counter() - t0, 2),
        "epochs_ended_s": epochs_ended_s,
        "slowest_action_ms": {k: round(v, 1) for k, v in sorted(slowest.items(), key=lambda kv: -kv[1])},
    }
    if args.rss_log is not None:
        args.rss_log.write_text("seconds,rss_mb\n" + "".join(f"{t:.2f},{mb:.1f}\n" for t, mb in rss_samples))
    for e in exceptions[:10]:
        print("exception:", e)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
