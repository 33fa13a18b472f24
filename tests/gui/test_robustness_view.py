"""The robustness view measures the model in the background, point by point, with the same
figures as capsviz.train.robustness."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from capsviz.data.mnist import MnistSplit, load_test_or_sample
from capsviz.evaluate import model_lengths
from capsviz.train.robustness import SWEEPS, robustness


@pytest.mark.slow
def test_measuring_fills_the_curves_with_the_commands_figures(qtbot, window, tmp_path):
    from tests.gui.test_baseline import cnn_file

    assert window.open_checkpoint(cnn_file(tmp_path))  # a CNN to compare: measured beside the CapsNet
    window.docks["robustness"].raise_()
    view = window.robustness_view
    view.digits.setValue(40)
    qtbot.mouseClick(view.measure_button, Qt.MouseButton.LeftButton)
    assert not view.measure_button.isEnabled() and view.stop_button.isEnabled()
    qtbot.waitUntil(lambda: window.robustness.worker is None, timeout=120000)
    assert view.measure_button.isEnabled()
    test, _ = load_test_or_sample(window.core.data_root)
    test = MnistSplit(test.images[:40], test.labels[:40])
    for model, results, curves in (
        (window.core.model, view.results, view.curves),
        (window.core.baseline, view.baseline_results, view.cnn_curves),
    ):
        expected = robustness(lambda x, model=model: model_lengths(model, x).argmax(axis=1), test)
        for kind, curve in expected.items():
            got = results[kind]
            assert sorted(got) == list(curve.strengths)
            np.testing.assert_allclose([got[s] for s in curve.strengths], curve.accuracy)
        window.scheduler.wait_idle()
        x, y = curves["rotation"].getData()
        np.testing.assert_allclose(x, SWEEPS["rotation"])
        np.testing.assert_allclose(y, 100 * np.asarray(expected["rotation"].accuracy))  # in %
    assert view.status.text().startswith("52 of 52 test sets measured on 40 digits")


@pytest.mark.slow
def test_stop_ends_a_measurement_and_a_new_model_clears_it(qtbot, window):
    window.docks["robustness"].raise_()
    view = window.robustness_view
    view.digits.setValue(2000)
    qtbot.mouseClick(view.measure_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(view.results) > 0, timeout=60000)
    qtbot.mouseClick(view.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.robustness.worker is None, timeout=60000)
    assert view.status.text().endswith("(stopped)") and sum(map(len, view.results.values())) < 26
    window.core.load_model(None)
    assert view.results == {} and view.status.text() == "not measured for this model"


def test_measuring_ten_digits_fills_every_curve_from_their_plain_accuracy(qtbot, window):
    from tests.conftest import forward_scores

    window.docks["robustness"].raise_()
    view = window.robustness_view
    view.digits.setValue(10)  # the least the view takes
    qtbot.mouseClick(view.measure_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.robustness.worker is None, timeout=120000)
    per_network = 7 + 6 + 5 + 7 + 1  # rotation, scale, shear and translation strengths, and the affine set
    total = per_network * (2 if window.core.baseline is not None else 1)
    assert view.status.text().startswith(f"{total} of {total} test sets measured on 10 digits")
    assert {kind: sorted(got) for kind, got in view.results.items() if kind != "affine"} == {
        "rotation": [0, 10, 20, 30, 40, 50, 60],
        "scale": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5],
        "shear": [0, 10, 20, 30, 40],
        "translation": [0, 1, 2, 3, 4, 5, 6],
    }
    test, _ = load_test_or_sample(window.core.data_root)
    right = forward_scores(window.core.model, test.images[:10]).argmax(1) == test.labels[:10]
    for kind in ("rotation", "scale", "shear", "translation"):  # strength 0: the digits as they are
        assert view.results[kind][0] == pytest.approx(right.mean())
    window.scheduler.wait_idle()
    x, y = view.curves["rotation"].getData()
    np.testing.assert_allclose(x, [0, 10, 20, 30, 40, 50, 60])
    np.testing.assert_allclose(y, [100 * view.results["rotation"][s] for s in x])  # in %, as the status says
    affine = 100 * view.results["affine"][1.0]
    assert view.affine_bar.opts["height"][0] == pytest.approx(affine) and view.affine_label.textItem.toPlainText() == (
        f"{affine:.1f} %"
    )
    (low, high), _ = view.figures["robustness_rotation"].getViewBox().viewRange()
    assert low < 0 and high >= 60 + 0.1 * 60 - 1e-6  # room past 60 for its tick label


def test_a_model_loaded_while_measuring_stops_the_measurement_and_clears_its_figures(qtbot, window, tmp_path):
    from capsviz.train.checkpoint import load_checkpoint, save_checkpoint

    other = save_checkpoint(tmp_path / "other.safetensors", load_checkpoint(window.core.model_file)[0])
    window.docks["robustness"].raise_()
    view = window.robustness_view
    view.digits.setValue(2000)
    qtbot.mouseClick(view.measure_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(view.results) > 0, timeout=60000)
    assert window.robustness.worker is not None  # still measuring: 2,000 digits take a while
    assert window.open_checkpoint(other)
    assert view.results == {} and view.status.text() == "not measured for this model"
    qtbot.waitUntil(lambda: window.robustness.worker is None, timeout=60000)  # it stops
    for _ in range(20):  # and what it sent before stopping stays out of the new model's view
        qtbot.wait(10)
    assert view.results == {} and view.status.text() == "not measured for this model"
    assert view.measure_button.isEnabled() and not view.stop_button.isEnabled()
