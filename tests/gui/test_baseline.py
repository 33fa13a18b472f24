"""The CNN beside the capsules: its probabilities in the lengths view, along the transform
sweep, in the MNIST browser (with the disagreement filter), and trained in the app."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from capsviz.data.mnist import load_sample
from capsviz.data.transforms import apply_transforms
from capsviz.gui.core import ExplorerCore
from capsviz.gui.widgets.browser import MnistBrowser
from capsviz.model import CapsNet
from capsviz.model.baseline import BaselineCNN, BaselineConfig
from capsviz.train.checkpoint import save_checkpoint
from capsviz.train.config import TrainConfig
from tests.conftest import forward_scores, mnist_root
from tests.gui.events import settle

SAMPLE = load_sample()


def cnn_file(folder, dataset: str = "mnist"):
    torch.manual_seed(4)
    size, output = (28, "softmax") if dataset == "mnist" else (36, "sigmoid")
    cnn = BaselineCNN(BaselineConfig(image_size=size, channels=(8, 8, 4), hidden=(32, 16), output=output))
    return save_checkpoint(folder / f"cnn_{dataset}.safetensors", cnn, extra_metadata={"dataset": dataset})


def test_the_cnns_probabilities_stand_beside_the_capsule_lengths(window, qtbot, tmp_path):
    capsnet = window.core.model
    window.errors.show_error("Cannot load checkpoint", "x.safetensors: not a checkpoint")  # an earlier refusal
    window.errors.error_box.close()
    with qtbot.waitSignal(window.core.baselineChanged, timeout=5000):
        assert window.open_checkpoint(cnn_file(tmp_path))  # File → Open checkpoint takes a CNN as the comparison
    assert window.core.model is capsnet and isinstance(window.core.baseline, BaselineCNN)
    assert window.statusBar().currentMessage() == ""  # the refusal is stale once a file loads
    assert window.baseline_label.text() == "CNN: cnn_mnist.safetensors"  # the status bar names it
    window.sources.show_sample(3)
    qtbot.waitUntil(lambda: window.core.inference is not None and window.core.inference.baseline is not None)
    settle(qtbot, window)
    inf = window.core.inference
    expected = forward_scores(window.core.baseline, window.core.input.model_image[None])[0]
    np.testing.assert_allclose(inf.baseline, expected, atol=1e-6)
    assert inf.baseline.sum() == pytest.approx(1.0, abs=1e-5)
    view = window.lengths_view
    np.testing.assert_allclose(view.cnn_bars.opts["height"], expected, atol=1e-6)
    assert view.cnn_bars.isVisible() and "CNN" in view.bars_plot.plotItem.titleLabel.text
    np.testing.assert_allclose(view.bars.opts["x"], np.arange(10) - 0.2)  # the capsules' bars make room
    np.testing.assert_allclose(view.lengths, inf.lengths[-1], atol=1e-6)


def test_the_capsules_answer_comes_before_the_cnns_probabilities(qtbot, tmp_path, shipped_checkpoint):
    core = ExplorerCore(CapsNet(), device="cpu")
    try:
        assert core.load_model(shipped_checkpoint) and core.load_baseline(cnn_file(tmp_path))
        qtbot.waitUntil(lambda: not core.pending, timeout=5000)
        events = []
        core.inferenceReady.connect(lambda inf: events.append(("capsules", inf.baseline)))
        core.cnnReady.connect(lambda: events.append(("cnn", core.inference.baseline)))
        core.set_image(SAMPLE.images[5].astype(np.float32) / 255)
        qtbot.waitUntil(lambda: not core.pending, timeout=5000)
        # the capsules are shown without the CNN's probabilities, which follow for the same input
        assert [name for name, _ in events] == ["capsules", "cnn"] and events[0][1] is None
        expected = forward_scores(core.baseline, core.input.model_image[None])[0]
        np.testing.assert_allclose(events[1][1], expected, atol=1e-6)
        assert core.inference.prediction == SAMPLE.labels[5]
    finally:
        core.close()


def test_the_sweep_shows_the_cnns_probability_of_the_same_digit(window, qtbot, tmp_path):
    assert window.open_checkpoint(cnn_file(tmp_path))
    view = window.transform_view
    window.docks["transforms"].show()
    window.docks["transforms"].raise_()
    window.sources.show_sample(1)
    qtbot.waitUntil(lambda: view.sweep is not None and view.sweep["cnn"] is not None, timeout=10000)
    _, values, transforms = view.sweep_transforms()
    images = apply_transforms(window.core.input.image, transforms)
    expected = forward_scores(window.core.baseline, images)[:, view.sweep["digit"]]
    np.testing.assert_allclose(view.sweep["cnn"], expected, atol=1e-5)
    x, y = view.cnn_curve.getData()
    np.testing.assert_allclose(x, values)
    np.testing.assert_allclose(y, expected, atol=1e-5)
    assert "CNN p(" in view.summary.text()


def test_a_capsnet_given_as_the_cnn_is_refused_and_the_comparison_stays(qtbot, tmp_path, shipped_checkpoint):
    core = ExplorerCore(CapsNet(), device="cpu")
    try:
        assert core.load_baseline(cnn_file(tmp_path))
        cnn = core.baseline
        with qtbot.waitSignal(core.error, timeout=1000) as error:
            assert not core.load_baseline(shipped_checkpoint)
        title, message, _ = error.args
        assert title == "Cannot load the CNN" and "a CapsNet, not a baseline CNN" in message
        assert core.baseline is cnn
        with qtbot.waitSignal(core.error, timeout=1000) as error:
            assert not core.load_baseline(cnn_file(tmp_path, "multimnist"))  # a 36x36 CNN for the 28x28 explorer
        assert "a model for MultiMNIST" in error.args[1] and core.baseline is cnn
    finally:
        core.close()


def test_the_browser_filters_to_the_digits_the_two_networks_disagree_on(qtbot):
    browser = MnistBrowser()
    qtbot.addWidget(browser)
    browser.set_data(SAMPLE, "sample")
    labels = SAMPLE.labels.astype(np.int64)
    caps = labels.copy()
    caps[[5, 9]] = (labels[[5, 9]] + 1) % 10  # two capsule mistakes
    cnn = labels.copy()
    cnn[[9, 40, 41]] = (labels[[9, 40, 41]] + 2) % 10  # the CNN errs on 9 too, and on 40 and 41
    browser.set_predictions(caps)
    assert not browser.disagree_only.isEnabled()  # no CNN: nothing to disagree with
    browser.set_predictions(caps, cnn)
    assert browser.disagree_only.isEnabled()
    browser.disagree_only.setChecked(True)
    np.testing.assert_array_equal(browser.indices(), [5, 9, 40, 41])
    assert browser.index == 5 and "CNN disagrees" in browser.filter_label.text()
    browser.step(1)
    assert browser.index == 9 and f"predicted {caps[9]}" in browser.current_label.text()
    assert f"CNN {cnn[9]}  ✗" in browser.current_label.text()
    browser.errors_only.setChecked(True)  # both filters: capsule mistakes where the CNN says otherwise
    np.testing.assert_array_equal(browser.indices(), [5, 9])
    browser.set_predictions(None)
    assert not browser.disagree_only.isChecked() and browser.indices().size == len(SAMPLE)


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST for training")
def test_training_a_cnn_in_the_app_replaces_the_comparison_not_the_capsnet(qtbot, shipped_checkpoint):
    core = ExplorerCore(CapsNet(), device="cpu", data_root=mnist_root())
    try:
        assert core.load_model(shipped_checkpoint)
        capsnet = core.model
        core.set_image(SAMPLE.images[0].astype(np.float32) / 255)
        config = TrainConfig(
            epochs=1, batch_size=16, train_subset=64, test_subset=32, device="cpu", model="baseline-small"
        )
        with qtbot.waitSignal(core.trainingStarted) as started:
            checkpoint = core.start_training(config)
        assert started.args == [checkpoint] and checkpoint.name == "gui-baseline.safetensors"
        assert isinstance(core.baseline, BaselineCNN) and core.model is capsnet
        with qtbot.waitSignal(core.trainingFinished, timeout=120000):
            pass
        assert core.model is capsnet and core.baseline_info is not None and core.baseline_info.kind == "baseline"
        # the pass with the final weights (asked for by the run's last snapshot) is in
        qtbot.waitUntil(lambda: not core.pending and core.inference.baseline is not None, timeout=5000)
        expected = forward_scores(core.baseline, core.input.model_image[None])[0]
        np.testing.assert_allclose(core.inference.baseline, expected, atol=1e-5)
    finally:
        core.close()
