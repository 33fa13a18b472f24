"""The training panel's curves: the accuracy key stays clear of the points it names."""

from __future__ import annotations

from PySide6.QtCore import QPointF

from capsviz.gui.widgets.training import TrainingPanel
from capsviz.train.events import BatchEvent, EpochEvent


def run_curves(panel: TrainingPanel, accuracies: list[float], steps_per_epoch: int = 50, first: int = 0) -> None:
    """Batches whose training accuracy climbs to each epoch's test accuracy ``accuracies``,
    from epoch ``first`` on (at 0.1 before the first epoch, else at the last test's)."""
    step = int(panel.history["step"][-1]) if first else 0
    last = panel.test_history["acc"][-1] if first else 0.1
    for epoch, acc in enumerate(accuracies, start=first):
        for batch in range(1, steps_per_epoch + 1):
            step += 1
            train = last + (acc - last) * batch / steps_per_epoch
            ev = BatchEvent(epoch, step, batch, steps_per_epoch, 0.5, 0.4, 0.1, train, 1e-3, 100.0)
            panel.add_batch(ev, 0.0005)
        panel.add_epoch(EpochEvent(epoch, step, acc, 1000, None))
        last = acc


def covered(panel: TrainingPanel) -> list[tuple[float, float]]:
    """The test points (step, accuracy) under the accuracy plot's key."""
    legend = panel.acc_plot.getPlotItem().legend
    box = panel.acc_plot.getViewBox()
    rect = legend.sceneBoundingRect()
    x, y = panel.test_acc_curve.getData()
    return [(a, b) for a, b in zip(x, y) if rect.contains(box.mapViewToScene(QPointF(a, b)))]


def test_the_accuracy_key_moves_off_a_low_test_point_at_the_right_edge(qtbot):
    panel = TrainingPanel()
    qtbot.addWidget(panel)
    panel.resize(700, 560)
    panel.show()
    qtbot.waitExposed(panel)
    legend = panel.acc_plot.getPlotItem().legend
    bottom = legend.sceneBoundingRect()
    run_curves(panel, [0.12])  # one epoch of a run that has barely started: its test point low, at the right
    qtbot.waitUntil(lambda: len(panel.test_history["acc"]) == 1 and legend.sceneBoundingRect() != bottom, timeout=3000)
    qtbot.wait(50)
    assert covered(panel) == [] and legend.sceneBoundingRect().top() < bottom.top()  # at the top now
    top = legend.sceneBoundingRect()
    # a longer epoch whose points on the right (0.4 to 0.6) leave the bottom free too: the key stays put
    run_curves(panel, [0.6], steps_per_epoch=200, first=1)
    qtbot.waitUntil(lambda: len(panel.test_history["acc"]) == 2, timeout=3000)
    qtbot.wait(50)
    assert legend.sceneBoundingRect() == top and covered(panel) == []
    panel.reset_curves()
    run_curves(panel, [0.9, 0.97, 0.99])  # a run that learned: its late points at the top, the key back down
    qtbot.waitUntil(lambda: len(panel.test_history["acc"]) == 3, timeout=3000)
    qtbot.waitUntil(lambda: legend.sceneBoundingRect() == bottom, timeout=3000)
    assert covered(panel) == []
