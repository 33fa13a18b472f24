"""The 36x36 CapsNet of MultiMNIST: shapes, two reconstructions, top-2 scoring, training,
the dataset a checkpoint is for, and starting from an MNIST model."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from capsviz.data.mnist import load_mnist, load_sample
from capsviz.data.multimnist import draw_pairs, fixed_test_pairs
from capsviz.evaluate import model_lengths, two_digit_hits
from capsviz.model import CapsNet, CapsNetConfig
from capsviz.model.transfer import EMPTY_PIXEL_LOGIT, widen_state
from capsviz.train.checkpoint import CheckpointError, check_dataset_of, load_checkpoint, read_info, save_checkpoint
from capsviz.train.config import TrainConfig
from capsviz.train.loop import Trainer
from capsviz.train.tasks import Batch

from ..conftest import SHIPPED, forward_scores, mnist_root
from .test_cli import capsviz

SAMPLE = load_sample()
WIDE = CapsNetConfig(image_size=36)


def test_the_multimnist_capsnet_has_the_papers_size():
    model = CapsNet(WIDE)
    assert (WIDE.grid_size, WIDE.num_primary) == (10, 3200)
    assert sum(p.numel() for p in model.parameters()) == 11_361_808  # 11.36 M, as Sec. 6 states
    assert model.digit_caps.W.shape == (3200, 10, 16, 8)
    assert model.decoder.net[4].out_features == 1296


def test_a_target_per_digit_gives_one_reconstruction_per_digit():
    torch.manual_seed(0)
    model = CapsNet(WIDE).eval()
    x = torch.rand(3, 1, 36, 36)
    labels = torch.tensor([[1, 7], [0, 3], [9, 2]])
    with torch.no_grad():
        out = model(x, target=labels)
        assert out.reconstruction.shape == (3, 2, 1, 36, 36)
        for d in range(2):
            alone = model.decoder(out.v, labels[:, d])
            torch.testing.assert_close(out.reconstruction[:, d], alone)
    assert not torch.equal(out.reconstruction[:, 0], out.reconstruction[:, 1])


def test_a_pair_counts_as_right_only_when_both_digits_are_the_two_longest():
    lengths = torch.tensor(
        [
            [0.9, 0.8, 0.1, 0, 0, 0, 0, 0, 0, 0],  # top 2: 0, 1
            [0.9, 0.1, 0.8, 0, 0, 0, 0, 0, 0, 0],  # top 2: 0, 2
            [0.1, 0.2, 0.3, 0.9, 0.8, 0, 0, 0, 0, 0],  # top 2: 3, 4
        ]
    )
    labels = torch.tensor([[1, 0], [0, 1], [5, 6]])
    assert two_digit_hits(lengths, labels).tolist() == [2, 1, 0]


def test_widening_an_mnist_model_keeps_what_it_sees_of_a_centred_digit(shipped_checkpoint):
    mnist, info, _ = load_checkpoint(shipped_checkpoint)
    wide = CapsNet(dataclasses.replace(info.model_config, image_size=36)).eval()
    wide.load_state_dict(widen_state(mnist.state_dict(), info.model_config, wide.cfg))
    digit = torch.from_numpy(SAMPLE.images[:2]).float().div(255).unsqueeze(1)
    field = torch.nn.functional.pad(digit, (4, 4, 4, 4))  # the digit unshifted in the 36x36 field
    with torch.no_grad():
        u_small = mnist.primary_caps(torch.relu(mnist.conv1(digit))).reshape(2, 32, 6, 6, 8)
        u_wide = wide.primary_caps(torch.relu(wide.conv1(field))).reshape(2, 32, 10, 10, 8)
        torch.testing.assert_close(u_wide[:, :, 2:8, 2:8], u_small, atol=1e-5, rtol=1e-4)
        w_small = mnist.digit_caps.W.reshape(32, 6, 6, 10, 16, 8)
        w_wide = wide.digit_caps.W.reshape(32, 10, 10, 10, 16, 8)
        torch.testing.assert_close(w_wide[:, 2:8, 2:8], w_small)
        torch.testing.assert_close(w_wide[:, 0, 0], w_small[:, 0, 0])  # the corner takes the nearest
        v = torch.randn(2, 10, 16) * 0.2
        classes = torch.tensor([3, 8])
        small, big = mnist.decoder(v, classes)[:, 0], wide.decoder(v, classes)[:, 0]
        torch.testing.assert_close(big[:, 4:32, 4:32], small)
        border = torch.ones(36, 36, dtype=torch.bool)
        border[4:32, 4:32] = False
        torch.testing.assert_close(
            big[:, border], torch.full_like(big[:, border], torch.sigmoid(torch.tensor(EMPTY_PIXEL_LOGIT)).item())
        )
    with pytest.raises(ValueError, match="more than their input size"):
        widen_state(mnist.state_dict(), info.model_config, dataclasses.replace(wide.cfg, digit_dim=8))


def test_a_multimnist_run_trains_on_both_digits_and_records_its_dataset(tmp_path):
    config = TrainConfig(
        dataset="multimnist", epochs=1, batch_size=8, pairs_per_epoch=16, test_subset=0, device="cpu", lr=1e-3
    )
    trainer = Trainer(config, SAMPLE, None, checkpoint_path=tmp_path / "mm.safetensors")
    assert trainer.model.cfg.image_size == 36 and trainer.batches_per_epoch == 2
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    events = list(trainer.run())
    assert events[-1].finished and trainer.step == 2
    assert all(0 <= ev.train_accuracy <= 1 for ev in events[:2])
    changed = [k for k, v in trainer.model.state_dict().items() if not torch.equal(v, before[k])]
    assert "decoder.net.4.weight" in changed and "digit_caps.W" in changed
    info = read_info(tmp_path / "mm.safetensors")
    assert info.dataset == "multimnist" and info.train_config["dataset"] == "multimnist"
    check_dataset_of(info, "multimnist", "x")
    with pytest.raises(CheckpointError, match="a model for MultiMNIST .36x36 images.; capsviz eval takes MNIST models"):
        check_dataset_of(info, "mnist", "capsviz eval")
    with pytest.raises(ValueError, match="cannot train on mnist"):
        Trainer(TrainConfig(dataset="mnist", device="cpu"), SAMPLE, model=trainer.model)


def test_a_checkpoint_whose_dataset_does_not_match_its_input_size_is_refused(tmp_path):
    path = save_checkpoint(tmp_path / "odd.safetensors", CapsNet(), extra_metadata={"dataset": "multimnist"})
    with pytest.raises(CheckpointError, match="a multimnist model must take 36x36 images, its config says 28x28"):
        read_info(path)
    path = save_checkpoint(tmp_path / "odd2.safetensors", CapsNet(), extra_metadata={"dataset": "cifar"})
    with pytest.raises(CheckpointError, match="dataset 'cifar' is not one of mnist, multimnist"):
        read_info(path)


def test_the_two_digit_loss_sees_both_labels_and_both_targets(shipped_checkpoint):
    pairs = draw_pairs(SAMPLE, 8, np.random.default_rng(1))
    overrides = {"dataset": "multimnist", "device": "cpu", "pairs_per_epoch": 8}
    trainer = Trainer.continue_from_weights(shipped_checkpoint, SAMPLE, overrides=overrides)
    assert trainer.step == 0 and trainer.initialised_from == shipped_checkpoint
    images, labels, parts = (torch.from_numpy(a) for a in (pairs.images, pairs.labels, pairs.parts))
    state = {k: v.clone() for k, v in trainer.model.state_dict().items()}

    def loss_of(lab, prt):  # (total, margin, reconstruction SSE) of one step from the same weights
        trainer.model.load_state_dict(state)
        trainer.optimizer = torch.optim.Adam(trainer.model.parameters())
        return trainer._train_step(Batch(images, lab, prt))[:3]

    base = loss_of(labels, parts)
    assert loss_of(labels[:, [1, 0]], parts[:, [1, 0]]) == pytest.approx(base, rel=1e-5)  # digit order is free
    swapped = loss_of(labels[:, [1, 0]], parts)  # each reconstruction against the other digit
    assert swapped[1] == pytest.approx(base[1]) and swapped[2] > 1.2 * base[2]
    other = labels.clone()
    other[:, 1] = torch.where((labels[:, 0] + 5) % 10 != labels[:, 1], (labels[:, 0] + 5) % 10, (labels[:, 0] + 3) % 10)
    assert abs(loss_of(other, parts)[1] - base[1]) > 0.02  # the margin loss counts the second label


@pytest.fixture(scope="module")
def widened_checkpoint(tmp_path_factory) -> Path:
    """An MNIST model widened to MultiMNIST (no training): a MultiMNIST checkpoint for the commands."""
    path = tmp_path_factory.mktemp("mm") / "wide.safetensors"
    overrides = {"dataset": "multimnist", "device": "cpu"}
    Trainer.continue_from_weights(SHIPPED, SAMPLE, overrides=overrides, checkpoint_path=path).save()
    return path


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_eval_of_a_multimnist_model_scores_the_fixed_test_pairs(widened_checkpoint):
    r = capsviz("eval", "--checkpoint", str(widened_checkpoint), "--test-pairs", "60", "--per-iteration", "2")
    assert r.returncode == 0, r.stderr
    both = re.search(r"both digits right: ([\d.]+) % \((\d+) / 60\), error ([\d.]+) %", r.stdout)
    one = re.search(r"at least one digit right: ([\d.]+) % \((\d+) / 60\)", r.stdout)
    assert both and one, r.stdout
    model, _, _ = load_checkpoint(widened_checkpoint)
    pairs = fixed_test_pairs(load_mnist(train=False, data_root=mnist_root()), 60)
    top2 = np.argsort(-forward_scores(model, pairs.images), axis=1)[:, :2]  # the two longest capsules
    hits = np.array([len(set(t) & set(labels)) for t, labels in zip(top2.tolist(), pairs.labels.tolist())])
    assert int(both.group(2)) == int((hits == 2).sum()) and int(one.group(2)) == int((hits >= 1).sum())
    assert int(one.group(2)) > int(both.group(2))  # a model for single digits finds one of the two
    rows = re.findall(r"^\s+([12]) \|\s+(\d+) / 60 \|\s+([\d.]+) % \|\s+([\d.]+) % \|\s+(\d+)$", r.stdout, re.M)
    assert [row[0] for row in rows] == ["1", "2"]
    # the last column: the pairs whose two longest capsules after r iterations are not those after the model's R
    iterations = int(re.search(r"answers other than at r = (\d+)$", r.stdout, re.M).group(1))
    last = np.sort(np.argsort(-forward_scores(model, pairs.images, iterations), axis=1)[:, :2], axis=1)
    for r_, row in zip((1, 2), rows):
        top = np.sort(np.argsort(-forward_scores(model, pairs.images, r_), axis=1)[:, :2], axis=1)
        assert int(row[4]) == int((top != last).any(axis=1).sum())
    refused = capsviz("eval", "--test-pairs", "10")
    assert refused.returncode == 2 and "--test-pairs is for MultiMNIST models" in refused.stderr
    refused = capsviz("eval", "--checkpoint", str(widened_checkpoint), "--test-images", "10")
    assert refused.returncode == 2 and "--test-images is for MNIST models" in refused.stderr


@pytest.mark.slow
def test_classify_with_a_multimnist_model_names_two_digits_and_reads_a_36x36_image_as_stored(
    widened_checkpoint, tmp_path
):
    pairs = draw_pairs(SAMPLE, 2, np.random.default_rng(3))
    files = []
    for k in range(2):
        files.append(tmp_path / f"pair{k}.png")
        Image.fromarray(pairs.images[k]).save(files[-1])
    r = capsviz("classify", "--json", "--checkpoint", str(widened_checkpoint), *map(str, files))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    model, _, _ = load_checkpoint(widened_checkpoint)
    expected = forward_scores(model, pairs.images)  # the image as stored: no preprocessing
    for row, lengths in zip(rows, expected):
        assert row["predictions"] == [int(j) for j in np.argsort(-lengths)[:2]]
        np.testing.assert_allclose(row["lengths"], lengths, atol=2e-6)
    text = capsviz("classify", "--checkpoint", str(widened_checkpoint), str(files[0]))
    assert re.fullmatch(
        rf"{re.escape(str(files[0]))}: \d \(0\.\d{{3}}\) and \d \(0\.\d{{3}}\)  lengths( 0\.\d{{3}}){{10}}\n",
        text.stdout,
    )
    # trace reads the pair as classify does: its two longest capsules
    trace = capsviz("trace", "--checkpoint", str(widened_checkpoint), str(files[0]), "--out", str(tmp_path / "t.npz"))
    assert trace.returncode == 0, trace.stderr
    assert trace.stdout.startswith(text.stdout.rstrip("\n") + "; trace saved to")


@pytest.mark.slow
def test_a_multimnist_model_cannot_be_narrowed_to_mnist(widened_checkpoint):
    with pytest.raises(CheckpointError, match=r"a model for 36x36 images cannot train on mnist \(28x28\)"):
        Trainer.continue_from_weights(widened_checkpoint, SAMPLE, overrides={"dataset": "mnist", "device": "cpu"})
    r = capsviz("train", "--init", str(widened_checkpoint), "--dataset", "mnist", "--epochs", "1")
    assert r.returncode != 0 and "give --dataset multimnist" in r.stderr and "Traceback" not in r.stderr


def test_a_widened_run_continued_from_its_weights_keeps_its_origin(widened_checkpoint, tmp_path):
    assert read_info(widened_checkpoint).metadata["initialised_from"] == SHIPPED.name
    path = tmp_path / "more.safetensors"
    Trainer.continue_from_weights(widened_checkpoint, SAMPLE, overrides={"device": "cpu"}, checkpoint_path=path).save()
    assert read_info(path).metadata["initialised_from"] == SHIPPED.name


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_init_from_a_multimnist_model_continues_it_and_counts_the_steps_it_has(widened_checkpoint, tmp_path):
    first, second = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    tiny = ["--pairs-per-epoch", "8", "--test-subset", "4", "--device", "cpu"]
    r = capsviz(
        "train", "--init", str(widened_checkpoint), "--epochs", "1", "--batch-size", "4", *tiny, "--out", str(first)
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"from {widened_checkpoint}: its weights, step 0 " in r.stdout and "widened" not in r.stdout
    assert re.search(r"^epoch 1: both digits right [\d.]+ % \(4 test pairs\)", r.stdout, re.M), r.stdout
    assert read_info(first).step == 2
    # two steps of 4 taken, one epoch of a single step of 8 to come (a progress line a step)
    args = ["--init", str(first), "--epochs", "2", "--batch-size", "8", *tiny, "--out", str(second)]
    r = capsviz("train", *args, env={"CAPSVIZ_PROGRESS_S": "0"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"from {first}: its weights, step 2 " in r.stdout and "widened" not in r.stdout
    lines = [line for line in r.stderr.splitlines() if line.startswith("epoch ")]
    assert len(lines) == 1 and lines[0].startswith("epoch 2, batch 1/1, "), r.stderr[-2000:]
    assert read_info(second).step == 3 and read_info(second).metadata["initialised_from"] == SHIPPED.name


SHIPPED_PAIRS_RIGHT = 417  # both-right pairs of the shipped model on the 500 sample pairs below (83.4 %)


@pytest.mark.slow
def test_the_shipped_multimnist_model_finds_both_digits_of_most_pairs():
    from capsviz.paths import shipped_multimnist_checkpoint

    path = shipped_multimnist_checkpoint()
    model, info, _ = load_checkpoint(path)
    assert info.dataset == "multimnist" and model.cfg.image_size == 36 and info.test_images == 10_000
    assert info.metadata["initialised_from"] == "capsnet_mnist.safetensors"
    pairs = draw_pairs(SAMPLE, 500, np.random.default_rng(2017))  # pairs of the 2,000 shipped test digits
    hits = two_digit_hits(torch.from_numpy(model_lengths(model, pairs.images)), torch.from_numpy(pairs.labels))
    assert abs(int((hits == 2).sum()) - SHIPPED_PAIRS_RIGHT) <= 2  # float rounding may flip a near tie
    assert float((hits >= 1).float().mean()) > 0.98  # 99.6 %: at least one digit is almost always found


@pytest.mark.slow
def test_the_explorers_pass_reads_every_sample_pair_as_the_batch_evaluation(winograd_calls):
    """The few-image pass (batches of 8, PrimaryCaps through the Winograd path) gives the
    shipped MultiMNIST model's capsule lengths of the batch evaluation (the spectral path)
    to 2e-5, and the same two longest capsules, for 500 sample pairs."""
    from capsviz.paths import shipped_multimnist_checkpoint

    model = load_checkpoint(shipped_multimnist_checkpoint())[0]
    pairs = draw_pairs(SAMPLE, 500, np.random.default_rng(31))
    batch = model_lengths(model, pairs.images)
    images = torch.from_numpy(pairs.images.astype(np.float32) / 255)[:, None]
    with torch.no_grad():
        few = torch.cat([model(x, reconstruct=False).lengths for x in images.split(8)]).numpy()
    assert sum(winograd_calls) == 500  # every pair's PrimaryCaps through winograd_conv2d
    assert np.abs(few - batch).max() < 2e-5
    top_two = lambda lengths: np.sort(np.argsort(-lengths, 1, kind="stable")[:, :2], 1)  # noqa: E731
    assert np.array_equal(top_two(few), top_two(batch))


@pytest.mark.slow
def test_routing_changes_names_the_pairs_whose_two_longest_capsules_routing_changes():
    from capsviz.model.pairs import routing_changes
    from capsviz.paths import shipped_multimnist_checkpoint

    model = load_checkpoint(shipped_multimnist_checkpoint())[0]
    pairs = draw_pairs(SAMPLE, 200, np.random.default_rng(5))
    # from the network's own forward pass: the two longest capsules after 1 and after 3 iterations
    first, third = (np.sort(np.argsort(-forward_scores(model, pairs.images, r), 1)[:, :2], 1) for r in (1, 3))
    expected = (first != third).any(1)
    changed = routing_changes(model, pairs.images, 3)
    assert changed.dtype == bool and 0 < expected.sum() < 50  # routing changes a few answers, not most
    assert int((changed != expected).sum()) <= 1  # float rounding may flip a near tie
