"""Accuracy under affine transforms: the seeded transforms, the batched warp, strength 0
against plain evaluation, and the command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from capsviz import explanations
from capsviz.data.mnist import MnistSplit, load_sample
from capsviz.data.transforms import InputTransform, apply_each, apply_transform
from capsviz.evaluate import evaluate_model, model_lengths
from capsviz.texts import english
from capsviz.train.checkpoint import load_checkpoint
from capsviz.train.robustness import (
    AFFINE_RANGES,
    KINDS,
    SWEEPS,
    affine_transforms,
    measure,
    measure_first,
    networks_to_measure,
    robustness,
    sweep_transforms,
)
from capsviz.train.sweeps import AFFINE_FIELDS

from ..conftest import forward_scores, mnist_root
from .test_cli import capsviz


def test_the_sweeps_turn_each_digit_by_plus_or_minus_the_strength():
    rot = sweep_transforms("rotation", 30, 400, seed=5)
    assert {t.rotation for t in rot} == {-30.0, 30.0} and rot == sweep_transforms("rotation", 30, 400, seed=5)
    assert rot != sweep_transforms("rotation", 30, 400, seed=6)
    assert {round(t.scale, 6) for t in sweep_transforms("scale", 0.25, 200)} == {1.25, round(1 / 1.25, 6)}
    moves = sweep_transforms("translation", 3, 400)
    assert all(abs(t.tx) + abs(t.ty) == 3 and (t.tx == 0 or t.ty == 0) for t in moves)
    assert any(t.tx for t in moves) and any(t.ty for t in moves)
    assert sweep_transforms("shear", 0, 10) == [InputTransform()] * 10
    with pytest.raises(ValueError, match="unknown transform 'warp'"):
        sweep_transforms("warp", 1, 3)


def test_the_affine_test_set_stays_in_its_documented_ranges():
    warps = affine_transforms(2000, seed=1)
    for name, key in (("rotation", "rotation"), ("scale", "scale"), ("shear", "shear"), ("tx", "translation")):
        values = np.array([getattr(t, name) for t in warps])
        low, high = AFFINE_RANGES[key]
        assert low <= values.min() < low + 0.05 * (high - low) and high - 0.05 * (high - low) < values.max() <= high


def test_the_robustness_explanation_names_the_affine_ranges():
    assert AFFINE_FIELDS == {"rot": 20.0, "s0": 0.8, "s1": 1.2, "sh": 12.0, "move": 3.0}
    text = english(explanations.ROBUSTNESS, **AFFINE_FIELDS)
    assert "(rotation ±20°, scale 0.8–1.2, shear ±12°, ±3 px each way)" in text


def test_the_batched_warp_equals_the_explorers_one():
    digits = load_sample().images[:5]
    transforms = [InputTransform(rotation=20), InputTransform(), InputTransform(rotation=20)]
    transforms += [InputTransform(scale=0.8, thickness=1.5), InputTransform(shear=-12, tx=2.5, ty=-1)]
    out = apply_each(digits, transforms)
    for image, t, warped in zip(digits, transforms, out):
        np.testing.assert_array_equal(warped, apply_transform(image / np.float32(255), t))
    with pytest.raises(ValueError, match="5 images but 2 transforms"):
        apply_each(digits, transforms[:2])


def test_measure_first_reads_the_first_test_digits_and_stops_when_asked(tmp_path):
    import threading

    from capsviz.model import CapsNet, CapsNetConfig

    model = CapsNet(CapsNetConfig(conv1_channels=16, primary_types=4, decoder_hidden=(32, 64))).eval()
    steps = list(measure_first({"capsnet": model}, tmp_path, 12))  # no MNIST there: the shipped sample's first 12
    sample = load_sample()
    first = MnistSplit(sample.images[:12], sample.labels[:12])

    def predict(images):
        return model_lengths(model, images).argmax(axis=1)

    assert steps == [(kind, s, correct, 12, "capsnet") for kind, s, correct in measure(predict, first)]
    assert len(steps) == sum(len(SWEEPS.get(kind, (1,))) for kind in KINDS)
    stop = threading.Event()
    stop.set()
    assert list(measure_first({"capsnet": model, "cnn": model}, tmp_path, 12, stop)) == []  # stopped before the first


def test_the_networks_measured_are_cpu_copies_in_eval_mode():
    import torch

    from capsviz.model import CapsNet, CapsNetConfig
    from capsviz.model.baseline import BaselineCNN, preset

    capsnet = CapsNet(CapsNetConfig(conv1_channels=16, primary_types=4, decoder_hidden=(32, 64))).train()
    cnn = BaselineCNN(preset("baseline-small", 28))
    networks = networks_to_measure(capsnet, cnn)
    assert list(networks) == ["capsnet", "cnn"] and networks["capsnet"] is not capsnet and networks["cnn"] is not cnn
    assert not networks["capsnet"].training and capsnet.training  # the original is left as it was
    for name, original in (("capsnet", capsnet), ("cnn", cnn)):
        for a, b in zip(networks[name].state_dict().values(), original.state_dict().values()):
            assert torch.equal(a, b) and a.device.type == "cpu"
    assert list(networks_to_measure(capsnet)) == ["capsnet"]


@pytest.mark.slow
def test_strength_zero_is_plain_evaluation_and_rotation_costs_accuracy(shipped_checkpoint):
    model, _, _ = load_checkpoint(shipped_checkpoint)
    sample = load_sample()
    test = MnistSplit(sample.images[:200], sample.labels[:200])

    def predict(images):
        return model_lengths(model, images).argmax(axis=1)

    curves = robustness(predict, test, kinds=("rotation", "affine"))
    plain = int((evaluate_model(model, test) == test.labels).sum())
    assert plain == 200  # the shipped model reads all of the sample's first 200 digits
    rotation = curves["rotation"]
    assert rotation.strengths[0] == 0 and rotation.correct[0] == plain and rotation.n == 200
    assert rotation.correct[-1] < plain - 40  # 60 degrees: well outside what MNIST shows
    assert curves["affine"].strengths == (1.0,) and 0 < curves["affine"].correct[0] <= 200


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_the_robustness_command(shipped_checkpoint, tmp_path):
    from capsviz.data.mnist import load_mnist

    plot = tmp_path / "curves.png"
    r = capsviz(
        "robustness",
        "--test-subset",
        "60",
        "--kinds",
        "translation,affine",
        "--json",
        "--plot",
        str(plot),
        "--data-root",
        str(mnist_root()),
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    curves = out["curves"]["capsnet_mnist"]
    assert out["test_digits"] == 60 and set(curves) == {"translation", "affine"}
    test = load_mnist(train=False, data_root=mnist_root())
    model, _, _ = load_checkpoint(shipped_checkpoint)
    plain = int((forward_scores(model, test.images[:60]).argmax(1) == test.labels[:60]).sum())
    assert plain == 60  # the shipped model reads all of the first 60 test digits
    assert curves["translation"]["strengths"][0] == 0 and curves["translation"]["correct"][0] == plain
    from PIL import Image

    assert Image.open(plot).size[0] > 400
    text = capsviz("robustness", "--test-subset", "60", "--kinds", "scale,affine", "--data-root", str(mnist_root()))
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    affine = lines.index(next(line for line in lines if line.startswith("affine test set")))
    assert lines[affine + 1].split("|")[1].strip().endswith("%")  # its one row of figures
    scale = next(line for line in lines if line.startswith("scale"))
    assert "capsnet_mnist" in scale and lines[lines.index(scale) + 1].split("|")[0].strip() == "0"
    bad = capsviz("robustness", "--kinds", "rotation,twirl", "--data-root", str(mnist_root()))
    assert bad.returncode == 2 and "unknown transform twirl" in bad.stderr


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_a_checkpoint_before_the_command_is_measured_with_those_after_it(capsys):
    import json

    from capsviz.cli import main
    from capsviz.paths import shipped_baseline, shipped_checkpoint

    capsnet, cnn = shipped_checkpoint(), shipped_baseline("mnist")
    args = ["--checkpoint", str(capsnet), "robustness", "--checkpoint", str(cnn), "--kinds", "affine"]
    assert main([*args, "--test-subset", "5", "--json", "--data-root", str(mnist_root())]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["models"]) == [str(capsnet), str(cnn)]
    # the routing each model's passes ran, said with the figures; a transform named twice measured once
    assert out["routing_iterations"] == {"capsnet_mnist": 3, "baseline_mnist": None}
    args[-1] = "affine,affine"
    assert main([*args, "--routing-iterations", "1", "--test-subset", "5", "--data-root", str(mnist_root())]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"capsnet_mnist: {capsnet} (routing iterations: 1)" in lines
    assert f"baseline_mnist: {cnn} (a CNN, no routing)" in lines
    assert sum(line.startswith("affine test set") for line in lines) == 1


@pytest.mark.slow
def test_a_multimnist_model_is_refused_by_the_robustness_command():
    from capsviz.paths import shipped_multimnist_checkpoint

    r = capsviz("robustness", "--checkpoint", str(shipped_multimnist_checkpoint()), "--test-subset", "5")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "MultiMNIST" in r.stderr


def test_the_commands_list_of_transforms_is_the_modules():
    from capsviz.commands import robustness as command
    from capsviz.train.robustness import KINDS

    assert command.KINDS == KINDS  # both read capsviz.train.sweeps, which imports no torch


def test_the_plot_draws_the_first_model_solid_and_the_others_dashed(tmp_path):
    """`capsviz robustness --plot`: the CapsNet's line solid, the CNN's dashed, as in the app's tab."""
    from PIL import Image

    from capsviz.train.robustness import COLOURS, Curve, plot_curves
    from capsviz.train.sweeps import SWEEPS

    strengths = tuple(SWEEPS["rotation"])
    k = len(strengths)
    curves = {
        "capsnet": {"rotation": Curve("rotation", strengths, [75] * k, 100)},
        "cnn": {"rotation": Curve("rotation", strengths, [25] * k, 100)},
    }
    path = plot_curves(curves, tmp_path / "plot.png", size=(300, 230))
    image = np.asarray(Image.open(path).convert("RGB")).astype(int)
    top, bottom, left, right = 24, 230 - 34, 42, 300 - 12  # the first panel's plot area
    xs = np.arange(left + 6, right - 5)  # between the first and last points' symbols

    def drawn(acc: float, colour) -> np.ndarray:
        y = round(bottom - (bottom - top) * acc)
        return (np.abs(image[y, xs] - np.array(colour)).sum(axis=1) < 30).astype(float)

    assert drawn(0.75, COLOURS[0]).mean() > 0.97  # solid
    cnn = drawn(0.25, COLOURS[1])
    assert 0.45 < cnn.mean() < 0.8 and (np.diff(cnn) != 0).sum() >= 20  # dashes: on and off, many times
    # what was measured, written under the panels at the right
    noted = plot_curves(curves, tmp_path / "noted.png", size=(300, 230), note="60 test digits, seed 0")
    strip = np.asarray(Image.open(noted).convert("L")).astype(int)[230:, 150:]
    assert (strip < 128).sum() > 50 and (image[230:, 150:].min(axis=2) < 128).sum() == 0
