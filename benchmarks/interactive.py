"""Interactive speed of the explorer, measured in the real widgets (offscreen).

Usage: QT_QPA_PLATFORM=offscreen python benchmarks/interactive.py [--repeats 30] [--train-seconds 20]

The process runs with the app's malloc settings (``capsviz.runtime.tune_process("app")``).
Prints, and as its last line a JSON object with:

- ``infer_trace_ms_b1``: median forward pass with routing trace for one image (CPU), back to
  back, and ``infer_trace_ms_b1_paced`` the same with 40 ms between passes, as while drawing;
- ``pose_frame_ms``: median time from a pose slider value change to the reconstruction
  image being repainted in the window;
- ``draw_to_prediction_ms``: median time from a stroke (mouse move) event on the canvas
  until the capsule-length bars are painted with its result (the first paint of their
  viewport after the redraw scheduler drew them), the events 40 ms apart with the event
  loop running between them, as in the app; and where that time goes (medians):
  ``draw_to_pass_ms`` until the forward pass starts on the inference thread,
  ``draw_pass_ms`` the pass, ``draw_pass_to_paint_ms`` from its end until the bars are painted;
- ``votes_iteration_ms``: median time from a new routing iteration on the votes view's
  slider to its repainted scatter (recoloured dots, moved v_j marker), and
  ``votes_projection_ms``: median time to project a new input's votes for a digit
  (PCA of the votes and v_j's path);
- ``gui_max_stall_ms_training``: the longest gap between ticks of a 5 ms GUI timer,
  minus 5 ms, while training runs in the background (needs MNIST; see --data-root), and
  ``draw_to_prediction_ms_training``: ``draw_to_prediction_ms`` measured after that, the
  run still training;
- in the window's overlapping-digits mode, with the shipped MultiMNIST model:
  ``mm_open_max_gap_ms``, the longest gap of a 10 ms GUI timer (minus 10 ms) from View →
  Overlapping digits until every view shows the pair; ``mm_infer_trace_ms_b1``, the forward
  pass for one 36x36 pair; ``mm_shift_to_prediction_ms``, from a shift slider's key press to
  the repainted length bars (composition, then on the inference thread the traced pass, the
  ten reconstructions and the segmentation of every iteration); ``mm_draw_to_prediction_ms``,
  the same from a stroke (mouse move) on digit B's drawing canvas; and
  ``mm_next_wrong_max_gap_ms``, the longest gap from *Next wrong pair* (from test pair 0)
  until the wrong pair found is shown (needs the MNIST test files).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import QEvent, QEventLoop, QObject, QPoint, QPointF, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QMouseEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def mouse(widget, kind, x, y, buttons):
    button = Qt.MouseButton.LeftButton if kind != QEvent.Type.MouseMove else Qt.MouseButton.NoButton
    ev = QMouseEvent(
        kind,
        QPointF(x, y),
        QPointF(widget.mapToGlobal(QPoint(int(x), int(y)))),
        button,
        buttons,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(widget, ev)


def paint(view) -> None:
    """Paint ``view`` now. A pyqtgraph view draws in its viewport: ``repaint()`` of the view
    itself paints only its frame."""
    (view.viewport() if hasattr(view, "viewport") else view).repaint()


def settle(app, done, seconds: float) -> bool:
    """Run the event loop until ``done()`` is true (True) or ``seconds`` have passed (False)."""
    deadline = time.perf_counter() + seconds
    while not done():
        if time.perf_counter() > deadline:
            return False
        app.processEvents()
        time.sleep(0.005)
    return True


# Between two stroke events: slower than the canvas's 30 ms throttle, like a steady hand
STROKE_GAP_S = 0.04


def between_strokes() -> None:
    """Run the event loop for ``STROKE_GAP_S``, as the app's runs between a hand's stroke
    events: the last result's other redraws, and their paints, take their turns there
    (with the loop asleep instead, they would all wait for the next stroke and run beside
    its pass, holding the GIL that pass needs between its operations)."""
    loop = QEventLoop()
    QTimer.singleShot(round(1000 * STROKE_GAP_S), loop.quit)
    loop.exec()


def pass_ms(model, image, repeats: int, gap_s: float = 0.0) -> float:
    """Median ms of ``repeats`` traced passes of ``image`` through ``model`` on the calling
    thread, ``gap_s`` seconds of sleep before each (after 3 unmeasured)."""
    from capsviz.model.inference import infer

    times = []
    for k in range(repeats + 3):
        time.sleep(gap_s)
        t0 = time.perf_counter()
        infer(model, image)
        if k >= 3:
            times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times)


class BarsOnScreen(QObject):
    """When a result's length bars reach the screen: the time the redraw scheduler draws the
    part ``lengths/bars`` (the bars' new heights), and the first paint of the bars' viewport
    after it (the pixels; Qt paints the region that changed, in the event-loop pass it chooses).

    It also times the capsules' forward pass on the inference thread (``capsviz.explorer``'s
    ``infer``), so each :meth:`wait` leaves in :attr:`parts` where its time went: until the
    pass starts, the pass, and from its end until the bars are painted (ms)."""

    def __init__(self, window) -> None:
        super().__init__()
        self.window = window
        self.drawn_at = 0.0  # perf_counter() of the last drawing of the bars
        self.painted_at = 0.0  # of the last paint of their viewport
        self.pass_span = (0.0, 0.0)  # perf_counter() at the start and end of the last pass
        self.parts: list[tuple[float, float, float]] = []
        import capsviz.explorer as explorer

        infer = explorer.infer

        def timed_infer(*args, **kwargs):
            start = time.perf_counter()
            try:
                return infer(*args, **kwargs)
            finally:
                self.pass_span = (start, time.perf_counter())

        explorer.infer = timed_infer  # what an InferenceRequest runs, on the inference thread
        draw = window.scheduler.draw

        def timed_draw(name: str) -> None:
            draw(name)
            if name == "lengths/bars":
                self.drawn_at = time.perf_counter()

        window.scheduler.draw = timed_draw  # the scheduler's turns call it
        window.lengths_view.bars_plot.viewport().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.painted_at = time.perf_counter()
        return False

    def wait(self, app, act, timeout_s: float = 2.0) -> float:
        """ms from ``act()`` until a new result is in and its length bars are painted."""
        core = self.window.core
        before = core.inference
        t0 = time.perf_counter()
        act()
        while not (core.inference is not before and self.painted_at > self.drawn_at > t0):
            if time.perf_counter() - t0 > timeout_s:
                raise SystemExit(f"no result's length bars were painted within {timeout_s:.0f} s")
            # wait as the app's event loop does: a busy loop here would hold the GIL the
            # inference thread needs between operations (the pass would take twice as long)
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        start, end = self.pass_span
        self.parts.append((1000 * (start - t0), 1000 * (end - start), 1000 * (self.painted_at - end)))
        return 1000 * (self.painted_at - t0)

    def reset(self) -> None:
        """Forget the :attr:`parts` of the waits so far."""
        self.parts = []

    def split(self) -> dict:
        """Medians of :attr:`parts`: ``to_pass_ms``, ``pass_ms``, ``pass_to_paint_ms``."""
        names = ("to_pass_ms", "pass_ms", "pass_to_paint_ms")
        return {name: round(statistics.median(column), 2) for name, column in zip(names, zip(*self.parts))}


class GapMeter:
    """The longest gap between ticks of a 10 ms GUI timer while it runs, minus the 10 ms:
    how long the event loop was kept from input and painting."""

    def __init__(self) -> None:
        self.ticks: list[float] = []
        self.timer = QTimer(interval=10)
        self.timer.timeout.connect(lambda: self.ticks.append(time.perf_counter()))

    def __enter__(self):
        self.ticks = [time.perf_counter()]
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.timer.stop()
        self.ticks.append(time.perf_counter())

    @property
    def max_gap_ms(self) -> float:
        return float(np.diff(self.ticks).max() * 1000 - 10.0)


def strokes_to_bars(app, window, bars, repeats: int) -> tuple[float, dict]:
    """Draw one stroke of ``repeats`` mouse moves on the input canvas, 40 ms apart with the
    event loop running between them; the median time from a move until the length bars are
    painted with its result (ms), and where that time goes (``bars.split()``)."""
    canvas = window.input_panel.canvas
    canvas.clear()
    app.processEvents()
    mouse(canvas, QEvent.Type.MouseButtonPress, 140, 40, Qt.MouseButton.LeftButton)
    wake = QTimer(interval=5)  # the waits below end on events; this one comes every 5 ms
    wake.start()
    bars.reset()
    times = []
    for k in range(repeats):
        between_strokes()
        x, y = 140 + 3 * (k % 7), 45 + 6 * k
        times.append(
            bars.wait(app, lambda x=x, y=y: mouse(canvas, QEvent.Type.MouseMove, x, y, Qt.MouseButton.LeftButton))
        )
    mouse(canvas, QEvent.Type.MouseButtonRelease, 140, 45 + 6 * repeats, Qt.MouseButton.NoButton)
    wake.stop()
    return statistics.median(times), bars.split()


def multimnist_figures(app, args, window, bars: BarsOnScreen) -> dict:
    """The pair-mode figures of ``window`` (empty without the shipped MultiMNIST model):
    ``mm_open_max_gap_ms``, ``mm_infer_trace_ms_b1``, ``mm_shift_to_prediction_ms``,
    ``mm_draw_to_prediction_ms`` and ``mm_next_wrong_max_gap_ms`` (with the MNIST test split)."""
    from PySide6.QtTest import QTest

    from capsviz.paths import shipped_multimnist_checkpoint
    from capsviz.runtime import default_intra_op_threads, intra_op_threads

    if not shipped_multimnist_checkpoint().is_file():
        print(f"skipping the MultiMNIST figures: no model at {shipped_multimnist_checkpoint()}")
        return {}
    core, panel = window.core, window.pair_panel

    def shown() -> bool:  # the pair's reading is in and every view has drawn it
        inf = core.inference
        return inf is not None and inf.reading is not None and not core.pending and not window.scheduler.requested

    with GapMeter() as opening:
        window.actions["pairs"].trigger()  # View → Overlapping digits
        if not settle(app, shown, 60):
            raise SystemExit("the overlapping-digits mode did not show its pair within 60 s")
    print(
        "MultiMNIST: opening the mode until every view shows the pair: "
        f"longest event-loop gap {opening.max_gap_ms:.0f} ms"
    )
    with intra_op_threads(default_intra_op_threads()):  # the machine's count, as for a digit's pass
        infer_ms = pass_ms(core.model, panel.pair_image, args.repeats)
    print(f"MultiMNIST infer with trace, batch 1: median {infer_ms:.2f} ms")

    wake = QTimer(interval=5)  # the waits end on events; this one comes every 5 ms
    wake.start()
    slider = panel.controls[1].dx
    slider.setFocus()
    times = []
    for k in range(args.repeats):
        key = Qt.Key.Key_Right if (k // 4) % 2 == 0 else Qt.Key.Key_Left  # sweep -4..4 and back
        times.append(bars.wait(app, lambda key=key: QTest.keyClick(slider, key)))
        settle(app, shown, 5)
    shift_ms = statistics.median(times)
    print(f"MultiMNIST shift key to repainted length bars: median {shift_ms:.2f} ms")
    control = panel.controls[1]
    control.source.setCurrentIndex(1)  # digit B from its drawing canvas
    settle(app, shown, 5)
    canvas = control.canvas
    mouse(canvas, QEvent.Type.MouseButtonPress, 84, 20, Qt.MouseButton.LeftButton)
    times = []
    for k in range(args.repeats):
        between_strokes()
        move = lambda k=k: mouse(canvas, QEvent.Type.MouseMove, 84 + 2 * (k % 5), 22 + 4 * k, Qt.MouseButton.LeftButton)  # noqa: E731
        times.append(bars.wait(app, move))
    mouse(canvas, QEvent.Type.MouseButtonRelease, 84, 22 + 4 * args.repeats, Qt.MouseButton.NoButton)
    wake.stop()
    draw_ms = statistics.median(times)
    print(f"MultiMNIST stroke event on a digit's canvas to repainted length bars: median {draw_ms:.2f} ms")
    figures = {
        "mm_open_max_gap_ms": round(opening.max_gap_ms, 1),
        "mm_infer_trace_ms_b1": round(infer_ms, 2),
        "mm_shift_to_prediction_ms": round(shift_ms, 2),
        "mm_draw_to_prediction_ms": round(draw_ms, 2),
    }
    control.source.setCurrentIndex(0)
    if panel.full_test_split:
        panel.select_test_pair(0)
        settle(app, shown, 10)
        with GapMeter() as scanning:
            panel.next_wrong.click()
            settle(app, lambda: window.scan is None and shown(), 120)
        print(
            f"MultiMNIST Next wrong pair (found test pair {panel.test_pair.value()}): "
            f"longest event-loop gap {scanning.max_gap_ms:.0f} ms"
        )
        figures["mm_next_wrong_max_gap_ms"] = round(scanning.max_gap_ms, 1)
    else:
        print("skipping the Next wrong pair measurement: it needs the MNIST test files (--data-root)")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--train-seconds", type=float, default=20.0)
    parser.add_argument("--data-root", default=None)
    args = parser.parse_args()
    from capsviz.runtime import tune_process

    tune_process("app")  # the app's malloc settings, as run_app sets them
    app = QApplication.instance() or QApplication([])
    from capsviz.gui.app import configure_pyqtgraph

    configure_pyqtgraph()
    import tempfile

    from PySide6.QtCore import QSettings

    from capsviz.gui.main_window import MainWindow
    from capsviz.runtime import intra_op_threads, machine_line, machine_summary

    machine = machine_summary()
    print(machine_line(machine))
    threads = torch.get_num_threads()  # the pass is timed on these (the app's GUI thread computes on one)
    settings = QSettings(tempfile.mkdtemp() + "/capsviz.ini", QSettings.Format.IniFormat)  # defaults, not the user's
    window = MainWindow(device="cpu", data_root=args.data_root, settings=settings)
    window.show()
    if not settle(app, lambda: window.core.inference is not None, 60):  # classified in the inference thread
        raise SystemExit("the app did not classify its first input within 60 s")
    # and done with what the start leaves to the inference thread (the training panel's gallery)
    settle(app, lambda: not window.core.pending, 30)

    # 1. forward pass with trace, batch 1
    image = window.core.inference.input

    with intra_op_threads(threads):
        infer_ms = pass_ms(window.core.model, image, args.repeats)
        print(f"infer with trace, batch 1: median {infer_ms:.2f} ms")
        # the same pass at a stroke's pace, 40 ms apart (the canvas's 30 ms throttle and a steady
        # hand): between passes the caches cool and the thread pool sleeps, as while drawing
        paced_ms = pass_ms(window.core.model, image, args.repeats, STROKE_GAP_S)
    print(f"infer with trace, batch 1, 40 ms apart: median {paced_ms:.2f} ms")

    # 2. pose slider -> repainted reconstruction
    pose = window.pose_view
    slider = pose.sliders[3]
    times = []
    for k in range(args.repeats):
        value = 0.2 * ((-1) ** k) * (k % 5 + 1) / 5
        t0 = time.perf_counter()
        slider.setValue(value)
        paint(pose.recon_panel)
        times.append(1000 * (time.perf_counter() - t0))
    pose.reset()
    pose_ms = statistics.median(times)
    print(f"pose slider to repainted reconstruction: median {pose_ms:.2f} ms")

    # 3. the votes view: a new iteration, and the projection of a new input
    window.docks["votes"].raise_()
    window.scheduler.wait_idle()
    app.processEvents()
    votes = window.votes_view
    panel = votes.panels[0]
    times = []
    for k in range(args.repeats):
        t0 = time.perf_counter()
        votes.iteration.setValue(1 + k % 3)
        paint(panel.plot)
        times.append(1000 * (time.perf_counter() - t0))
    votes_iteration_ms = statistics.median(times)
    print(f"votes view, new iteration to repainted scatter: median {votes_iteration_ms:.2f} ms")
    times = []
    for k in range(args.repeats):
        votes._projected = {}  # as for a new input
        t0 = time.perf_counter()
        votes.projection(k % 10)
        times.append(1000 * (time.perf_counter() - t0))
    votes_projection_ms = statistics.median(times)
    print(f"votes view, projection of a new input's votes: median {votes_projection_ms:.2f} ms")
    window.docks["pose"].raise_()  # the default layout again: the votes tab behind Pose

    # 4. stroke event -> updated length bars
    bars = BarsOnScreen(window)
    draw_ms, draw_split = strokes_to_bars(app, window, bars, args.repeats)
    print(
        f"stroke event to painted length bars: median {draw_ms:.2f} ms (until the pass starts "
        f"{draw_split['to_pass_ms']:.2f}, the pass {draw_split['pass_ms']:.2f}, "
        f"from its end until the bars are painted {draw_split['pass_to_paint_ms']:.2f})"
    )

    # 5. GUI event-loop stalls while training in the background
    stall_ms = draw_training_ms = None
    try:
        from capsviz.data.mnist import prepare_mnist

        prepare_mnist(args.data_root)
        panel = window.training_panel
        panel.batch_size.setValue(128)
        panel.test_subset.setValue(500)
        ticks: list[float] = []
        timer = QTimer(interval=5)
        timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
        window.core.start_training(panel.config(), from_scratch=True)
        t_end = time.perf_counter() + 5.0  # let the worker load MNIST first
        while time.perf_counter() < t_end:
            app.processEvents()
        timer.start()
        t_end = time.perf_counter() + args.train_seconds
        while time.perf_counter() < t_end:
            app.processEvents()
            time.sleep(0.001)
        timer.stop()
        steps = len(panel.history["step"])
        # drawing while the run trains: its snapshots' passes and redraws come among the strokes
        draw_training_ms, _ = strokes_to_bars(app, window, bars, args.repeats)
        print(f"stroke event to painted length bars while training: median {draw_training_ms:.2f} ms")
        window.core.stop_training()
        while window.core.is_training:
            app.processEvents()
        gaps = np.diff(ticks) * 1000
        stall_ms = float(gaps.max() - 5.0)
        print(
            f"training for {args.train_seconds:.0f} s ({steps} steps): {len(ticks)} ticks, "
            f"longest gap {gaps.max():.1f} ms, median {np.median(gaps):.1f} ms"
        )
    except FileNotFoundError as exc:
        print(f"skipping the training measurement: {exc}")
    # the main window settles (the last weights' pass and its redraws) before the 36x36 pass is timed
    settle(app, lambda: not (window.core.pending or window.scheduler.requested), 30)
    mm = multimnist_figures(app, args, window, bars)
    window.close()
    print(
        json.dumps(
            {
                **mm,
                "infer_trace_ms_b1": round(infer_ms, 2),
                "infer_trace_ms_b1_paced": round(paced_ms, 2),
                "pose_frame_ms": round(pose_ms, 2),
                "draw_to_prediction_ms": round(draw_ms, 2),
                **{f"draw_{name}": value for name, value in draw_split.items()},
                "votes_iteration_ms": round(votes_iteration_ms, 2),
                "votes_projection_ms": round(votes_projection_ms, 2),
                "gui_max_stall_ms_training": None if stall_ms is None else round(stall_ms, 1),
                "draw_to_prediction_ms_training": None if draw_training_ms is None else round(draw_training_ms, 2),
                "device": "cpu",
                "threads": threads,
                **machine,
            }
        )
    )


if __name__ == "__main__":
    main()
