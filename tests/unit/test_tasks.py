"""The training tasks: their batches, their loss and accuracy against a hand computation,
and their evaluation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from capsviz.data.mnist import MnistSplit, load_sample
from capsviz.evaluate import score
from capsviz.model import CapsNet
from capsviz.model.capsnet import CapsNetOutput
from capsviz.train.config import TrainConfig
from capsviz.train.tasks import Batch, DigitTask, PairTask, task_for

SAMPLE = load_sample()


def config(**kw) -> TrainConfig:
    base = dict(train_subset=100, test_subset=12, seed=5, device="cpu")
    base.update(kw)
    return TrainConfig(**base)


def output(lengths, reconstruction) -> CapsNetOutput:
    lengths = torch.tensor(lengths, dtype=torch.float32)
    return CapsNetOutput(torch.zeros(len(lengths), 10, 16), lengths, reconstruction)


def test_the_config_picks_the_task():
    assert type(task_for(config(), SAMPLE)) is DigitTask
    assert type(task_for(config(dataset="multimnist"), SAMPLE)) is PairTask


def test_digit_batches_are_a_seeded_permutation_shifted_from_the_runs_generator():
    task = DigitTask(config(max_shift=0), SAMPLE)
    assert task.examples_per_epoch == 100
    epoch = task.epoch(1)
    expected = torch.randperm(100, generator=torch.Generator().manual_seed(5 * 100003 + 1))
    assert torch.equal(epoch.order, expected) and torch.equal(task.epoch(1).order, expected)
    batch = epoch.take(epoch.order[:4], torch.Generator())
    assert batch.parts is None
    np.testing.assert_array_equal(batch.images.numpy(), SAMPLE.images[expected[:4].numpy()])
    np.testing.assert_array_equal(batch.labels.numpy(), SAMPLE.labels[expected[:4].numpy()])

    shifted = DigitTask(config(max_shift=2), SAMPLE)
    rng = torch.Generator().manual_seed(9)
    first = shifted.epoch(0).take(torch.arange(6), rng).images
    again = shifted.epoch(0).take(torch.arange(6), torch.Generator().manual_seed(9)).images
    assert torch.equal(first, again) and not torch.equal(rng.get_state(), torch.Generator().manual_seed(9).get_state())
    assert not torch.equal(first, torch.from_numpy(SAMPLE.images[:6]))
    padded = np.pad(SAMPLE.images[:6], ((0, 0), (2, 2), (2, 2)))
    for k, image in enumerate(first.numpy()):  # each is its digit moved by at most 2 px, zero padded
        moves = [
            (dy, dx) for dy in range(5) for dx in range(5) if (padded[k, dy : dy + 28, dx : dx + 28] == image).all()
        ]
        assert moves, k


def test_the_digit_loss_and_accuracy_by_hand():
    task = DigitTask(config(reconstruction_weight=0.0005), SAMPLE)
    lengths = np.zeros((2, 10))
    lengths[0, :3] = 0.95, 0.3, 0.05
    lengths[1, :2] = 0.2, 0.7
    labels = torch.tensor([0, 1])
    x = torch.zeros(2, 1, 28, 28)
    out = output(lengths, torch.full((2, 1, 28, 28), 0.5))
    total, margin, recon = task.loss(out, x, labels, Batch(x[:, 0].byte(), labels))
    # image 0: class 1 absent at 0.3: 0.5 (0.3 - 0.1)^2 = 0.02; image 1: (0.9 - 0.7)^2 + 0.5 (0.2 - 0.1)^2 = 0.045
    assert margin.item() == pytest.approx((0.02 + 0.045) / 2)
    assert recon.item() == pytest.approx(784 * 0.25)  # per image: 784 pixels off by 0.5
    assert total.item() == pytest.approx(0.0325 + 0.0005 * 196)
    assert task.accuracy(out.lengths, labels) == 1.0
    assert task.accuracy(out.lengths, torch.tensor([0, 2])) == 0.5


def test_pair_batches_hold_both_digits_and_their_parts():
    task = PairTask(config(dataset="multimnist", pairs_per_epoch=30), SAMPLE)
    assert task.examples_per_epoch == 30
    epoch = task.epoch(0)
    assert torch.equal(epoch.order, torch.arange(30))
    batch = epoch.take(torch.tensor([2, 5, 7]), torch.Generator())
    assert batch.images.shape == (3, 36, 36) and batch.labels.shape == (3, 2) and batch.parts.shape == (3, 2, 36, 36)
    parts = batch.parts.int()
    assert torch.equal(batch.images.int(), (parts[:, 0] + parts[:, 1]).clamp(max=255))
    assert (batch.labels[:, 0] != batch.labels[:, 1]).all()


def test_the_pair_loss_and_accuracy_by_hand():
    task = PairTask(config(dataset="multimnist", reconstruction_weight=0.0005), SAMPLE)
    lengths = np.zeros((1, 10))
    lengths[0, :3] = 0.9, 0.8, 0.3
    labels = torch.tensor([[0, 1]])
    parts = torch.zeros(1, 2, 36, 36, dtype=torch.uint8)
    parts[:, 1] = 255  # digit 1 all ink, reconstructed exactly; digit 0 empty, reconstructed at 0.5
    reconstructions = torch.ones(1, 2, 1, 36, 36)
    reconstructions[:, 0] = 0.5
    out = output(lengths, reconstructions)
    x = torch.zeros(1, 1, 36, 36)
    total, margin, recon = task.loss(out, x, labels, Batch(parts[:, 1], labels, parts))
    # both classes present: (0.9 - 0.8)^2 = 0.01; class 2 absent at 0.3: 0.5 (0.3 - 0.1)^2 = 0.02
    assert margin.item() == pytest.approx(0.03)
    assert recon.item() == pytest.approx(1296 * 0.25)
    assert total.item() == pytest.approx(0.03 + 0.0005 * 324)
    assert task.accuracy(out.lengths, labels) == 1.0
    assert task.accuracy(out.lengths, torch.tensor([[1, 0]])) == 1.0  # either order
    assert task.accuracy(out.lengths, torch.tensor([[0, 2]])) == 0.0


def test_the_evaluation_is_the_score_of_the_test_set():
    torch.manual_seed(0)
    model = CapsNet().eval()
    task = DigitTask(config(), SAMPLE, SAMPLE)
    images, labels = task.test_set()
    np.testing.assert_array_equal(images, SAMPLE.images[:12])
    expected = score(model, SAMPLE.images[:12], SAMPLE.labels[:12], routing_iterations=2)
    assert task.evaluate(model, 2, torch.device("cpu")) == (expected.right / 12, 12)
    pairs = PairTask(config(dataset="multimnist", test_subset=7), SAMPLE, SAMPLE)
    images, labels = pairs.test_set()
    assert images.shape == (7, 36, 36) and labels.shape == (7, 2)
    empty = MnistSplit(SAMPLE.images[:0], SAMPLE.labels[:0])
    with pytest.raises(ValueError, match="the test set is empty"):
        DigitTask(config(), SAMPLE, empty).test_set()
