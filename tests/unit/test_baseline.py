"""The baseline CNN: the paper's sizes, its losses and scores, its checkpoints (refused where
a CapsNet is needed, and the reverse), training and resuming, and evaluation."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from capsviz.data.mnist import MnistSplit, load_sample
from capsviz.evaluate import evaluate_model, model_lengths
from capsviz.model import CapsNet
from capsviz.model.baseline import BaselineCNN, BaselineConfig, baseline_probabilities, preset
from capsviz.train.checkpoint import (
    CheckpointError,
    load_baseline,
    load_checkpoint,
    load_model,
    read_info,
    save_checkpoint,
)
from capsviz.train.config import TrainConfig
from capsviz.train.events import BatchEvent
from capsviz.train.loop import Trainer
from capsviz.train.robustness import robustness
from tests.conftest import forward_scores, mnist_root
from tests.unit.test_cli import capsviz

TINY = BaselineConfig(channels=(8, 8, 4), hidden=(32, 16))


@pytest.fixture(scope="module")
def sample() -> MnistSplit:
    return load_sample()


def tiny(image_size: int = 28, seed: int = 0) -> BaselineCNN:
    torch.manual_seed(seed)
    output = "softmax" if image_size == 28 else "sigmoid"
    return BaselineCNN(BaselineConfig(image_size=image_size, channels=(8, 8, 4), hidden=(32, 16), output=output))


def test_the_presets_have_the_documented_parameter_counts():
    def count(name, size):
        with torch.device("meta"):
            return sum(p.numel() for p in BaselineCNN(preset(name, size)).parameters())

    assert count("baseline", 28) == 35_445_522  # the paper's MNIST baseline: 35.4 M
    assert count("baseline-small", 28) == 8_449_650  # about the CapsNet's 8.2 M
    assert count("baseline-small", 36) == 13_823_602
    assert preset("baseline", 36).output == "sigmoid" and preset("baseline", 28).output == "softmax"
    with pytest.raises(ValueError, match="unknown baseline"):
        preset("resnet")
    with pytest.raises(ValueError, match="kernel_size must be odd"):
        BaselineConfig(kernel_size=4)


def test_softmax_scores_sum_to_one_and_read_without_dropout():
    model = tiny()
    model.train()
    x = torch.rand(3, 1, 28, 28, generator=torch.Generator().manual_seed(1))
    p = model.scores(x)
    assert p.shape == (3, 10) and torch.allclose(p.sum(dim=1), torch.ones(3), atol=1e-6) and (p > 0).all()
    assert not model.training and torch.equal(p, model.scores(x))
    np.testing.assert_allclose(baseline_probabilities(model, x[:, 0].numpy()), p.numpy(), atol=1e-6)
    np.testing.assert_allclose(baseline_probabilities(model, x[0, 0].numpy()), p[0].numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="expected 28x28"):
        baseline_probabilities(model, np.zeros((36, 36), np.float32))


def test_the_two_digit_loss_uses_both_labels():
    model = tiny(36)
    logits = torch.zeros(2, 10, requires_grad=True)
    labels = torch.tensor([[3, 7], [0, 9]])
    loss = model.loss(logits, labels)
    assert loss.item() == pytest.approx(10 * np.log(2))  # 10 sigmoids at 0.5, summed, mean over the batch
    loss.backward()
    grad = logits.grad
    # pushed up at both digits present, down at the eight absent
    assert (grad[0, [3, 7]] < 0).all() and (grad[1, [0, 9]] < 0).all()
    assert (grad[0, [k for k in range(10) if k not in (3, 7)]] > 0).all()
    p = model.scores(torch.rand(4, 1, 36, 36))
    assert ((p > 0) & (p < 1)).all() and not torch.allclose(p.sum(dim=1), torch.ones(4))  # independent sigmoids


def test_a_cnn_checkpoint_round_trips_and_is_refused_where_a_capsnet_is_needed(tmp_path):
    model = tiny()
    path = save_checkpoint(tmp_path / "cnn.safetensors", model, extra_metadata={"dataset": "mnist"})
    info = read_info(path)
    assert info.kind == "baseline" and info.model_config == model.cfg
    loaded, _, _ = load_model(path)
    assert isinstance(loaded, BaselineCNN)
    for (k, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(a, b), k
    with pytest.raises(CheckpointError) as refused:
        load_checkpoint(path)
    message = str(refused.value)
    assert (
        "\n" not in message
        and message == f"{path}: a baseline CNN, not a CapsNet; capsule views, routing and traces need a CapsNet"
    )
    capsnet = save_checkpoint(tmp_path / "caps.safetensors", CapsNet())
    assert read_info(capsnet).kind == "capsnet"
    with pytest.raises(CheckpointError, match=r"caps.safetensors: a CapsNet, not a baseline CNN") as refused:
        load_baseline(capsnet)
    assert "\n" not in str(refused.value)
    assert isinstance(load_model(capsnet)[0], CapsNet)


def test_classify_and_trace_give_a_cnns_answer_and_probabilities(tmp_path, capsys, sample):
    """Given a baseline CNN, classify and trace answer with the CNN's class and probabilities
    (trace saves what a CNN has, and says so); asking it to route is refused in one line, by
    robustness too when the CNN is its only model."""
    from PIL import Image

    from capsviz.cli import main

    cnn = tiny()
    path = save_checkpoint(tmp_path / "cnn.safetensors", cnn, extra_metadata={"dataset": "mnist"})
    image = tmp_path / "seven.png"
    Image.fromarray(sample.images[0]).save(image)
    expected = forward_scores(cnn, sample.images[:1])[0]  # the file is an MNIST digit, read as stored
    assert main(["classify", str(image), "--checkpoint", str(path), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert list(record) == ["file", "prediction", "probabilities"] and record["prediction"] == int(expected.argmax())
    np.testing.assert_allclose(record["probabilities"], expected, atol=1e-5)
    assert main(["classify", str(image), "--checkpoint", str(path)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{image}: {int(expected.argmax())} ({expected.max():.3f})  CNN probabilities ")
    out = tmp_path / "t.npz"
    assert main(["trace", str(image), "--out", str(out), "--checkpoint", str(path)]) == 0
    assert "a CNN has no capsules or routing" in capsys.readouterr().out
    with np.load(out) as trace:
        assert sorted(trace) == ["input", "prediction", "probabilities"]
        assert int(trace["prediction"]) == expected.argmax() and trace["input"].shape == (28, 28)
        np.testing.assert_allclose(trace["probabilities"], expected, atol=1e-5)
    for args in (("trace", str(image), "--out", str(tmp_path / "r.npz")), ("classify", str(image)), ("robustness",)):
        assert main([*args, "--checkpoint", str(path), "--routing-iterations", "2"]) == 2
        err = capsys.readouterr().err.strip()
        assert err == "error: cnn.safetensors is a baseline CNN: it has no routing; leave out --routing-iterations"
    assert main(["eval", "--checkpoint", str(path), "--per-iteration", "3"]) == 2
    assert "a baseline CNN has no routing" in capsys.readouterr().err
    assert not (tmp_path / "r.npz").exists()


def test_a_cnn_trains_resumes_exactly_and_evaluates_like_a_capsnet(sample, tmp_path):
    cfg = dict(epochs=2, batch_size=16, train_subset=64, test_subset=64, device="cpu", seed=3, model="baseline-small")
    full = Trainer(TrainConfig(**cfg), sample, model=tiny(seed=5), checkpoint_path=tmp_path / "full.safetensors")
    losses = [e.loss for e in full.run() if isinstance(e, BatchEvent)]
    assert len(losses) == 8 and all(np.isfinite(losses))
    part = Trainer(TrainConfig(**cfg), sample, model=tiny(seed=5), checkpoint_path=tmp_path / "part.safetensors")
    for ev in part.run():
        if isinstance(ev, BatchEvent) and ev.step == 3:
            part.request_stop()
    resumed = Trainer.resume(tmp_path / "part.safetensors", sample)
    assert isinstance(resumed.model, BaselineCNN) and resumed.step == 3
    list(resumed.run())
    for (k, a), (_, b) in zip(full.model.state_dict().items(), resumed.model.state_dict().items()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6, msg=k)  # dropout included
    info = read_info(tmp_path / "full.safetensors")
    assert info.kind == "baseline" and info.train_config["model"] == "baseline-small"
    test = MnistSplit(sample.images[:100], sample.labels[:100])
    scores = model_lengths(full.model, test.images)
    np.testing.assert_allclose(scores, baseline_probabilities(full.model, test.images / 255.0), atol=1e-5)
    np.testing.assert_array_equal(evaluate_model(full.model, test), scores.argmax(1))
    with pytest.raises(ValueError, match="the model is a baseline CNN, the recipe says --model capsnet"):
        Trainer(TrainConfig(**{**cfg, "model": "capsnet"}), sample, model=tiny())


def test_robustness_at_strength_zero_is_plain_evaluation_for_a_cnn(sample):
    model = tiny(seed=2)
    test = MnistSplit(sample.images[:120], sample.labels[:120])
    curves = robustness(lambda images: model_lengths(model, images).argmax(1), test, kinds=("scale",))
    plain = int((evaluate_model(model, test) == test.labels).sum())
    assert curves["scale"].strengths[0] == 0 and curves["scale"].correct[0] == plain


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_capsviz_eval_and_robustness_take_a_cnn(tmp_path, shipped_checkpoint):
    from capsviz.data.mnist import load_mnist

    model = tiny(seed=6)
    path = save_checkpoint(tmp_path / "cnn.safetensors", model, extra_metadata={"dataset": "mnist"})
    r = capsviz("eval", "--checkpoint", str(path), "--data-root", str(mnist_root()))
    assert r.returncode == 0, r.stderr
    test = load_mnist(train=False, data_root=mnist_root())
    right = int((forward_scores(model, test.images).argmax(1) == test.labels).sum())
    assert "model: baseline CNN, convolutions 8-8-4, softmax (no routing)" in r.stdout
    assert f"({right:,} / 10,000)" in r.stdout
    r = capsviz(
        "robustness",
        "--checkpoint",
        str(shipped_checkpoint),
        "--checkpoint",
        str(path),
        "--kinds",
        "rotation",
        "--test-subset",
        "50",
        "--json",
        "--data-root",
        str(mnist_root()),
    )
    assert r.returncode == 0, r.stderr
    curves = json.loads(r.stdout)["curves"]
    assert set(curves) == {"capsnet_mnist", "cnn"}
    right_of_50 = int((forward_scores(model, test.images[:50]).argmax(1) == test.labels[:50]).sum())
    assert curves["cnn"]["rotation"]["correct"][0] == right_of_50


SHIPPED_SAMPLE_RIGHT = {"mnist": 1984}  # of the 2,000 digits of assets/mnist_test_sample.npz
SHIPPED_PAIRS_RIGHT = 223  # both-right pairs of the MultiMNIST CNN on 500 pairs of the sample (44.6 %)


@pytest.mark.slow
def test_the_shipped_mnist_cnn_is_small_and_scores_its_figure_on_the_sample(sample):
    from capsviz.paths import shipped_baseline

    path = shipped_baseline("mnist")
    assert path.stat().st_size <= 40 * 2**20  # the repository's limit for a shipped CNN
    cnn, info, state = load_baseline(path)
    assert info.dataset == "mnist" and info.test_accuracy == pytest.approx(0.9945) and state == {}
    assert cnn.cfg == preset("baseline-small", 28)
    # the closest call on the sample is 0.0127 between the two highest probabilities: no float flips
    assert int((evaluate_model(cnn, sample) == sample.labels).sum()) == SHIPPED_SAMPLE_RIGHT["mnist"]


def test_the_shipped_multimnist_cnn_finds_both_digits_with_top_2_of_its_sigmoids(sample):
    from capsviz.data.multimnist import draw_pairs
    from capsviz.evaluate import two_digit_hits
    from capsviz.paths import shipped_baseline

    path = shipped_baseline("multimnist")
    assert path.stat().st_size <= 40 * 2**20
    cnn, info, _ = load_baseline(path)
    assert info.dataset == "multimnist" and cnn.cfg == preset("baseline-small", 36) and cnn.cfg.output == "sigmoid"
    assert info.test_accuracy == pytest.approx(0.4549) and info.test_images == 10_000
    pairs = draw_pairs(sample, 500, np.random.default_rng(2017))  # as for the shipped MultiMNIST CapsNet
    hits = two_digit_hits(torch.from_numpy(model_lengths(cnn, pairs.images)), torch.from_numpy(pairs.labels))
    assert abs(int((hits == 2).sum()) - SHIPPED_PAIRS_RIGHT) <= 2  # float rounding may flip a near tie
    assert float((hits >= 1).float().mean()) > 0.9
