"""MultiMNIST pairs: the paper's recipe, reproducible draws and a fixed test set."""

from __future__ import annotations

import numpy as np
import pytest

from capsviz.data.mnist import MnistSplit, load_sample
from capsviz.data.multimnist import (
    FIELD,
    MAX_SHIFT,
    PAD,
    TEST_BLOCK,
    FixedTestBlocks,
    compose,
    draw_pairs,
    fixed_test_block,
    fixed_test_pairs,
    place,
    random_partner,
    training_pairs,
)

SAMPLE = load_sample()


def test_each_pair_is_two_shifted_digits_of_different_classes_added_and_clipped():
    pairs = draw_pairs(SAMPLE, 400, np.random.default_rng(5))
    assert pairs.images.shape == (400, FIELD, FIELD) and pairs.parts.shape == (400, 2, FIELD, FIELD)
    assert pairs.images.dtype == np.uint8 and (pairs.labels[:, 0] != pairs.labels[:, 1]).all()
    np.testing.assert_array_equal(pairs.labels, SAMPLE.labels[pairs.sources])
    assert np.abs(pairs.shifts).max() == MAX_SHIFT  # the whole range is used ...
    assert pairs.shifts.min() == -MAX_SHIFT  # ... both ways
    for p in range(0, 400, 37):
        for d in range(2):
            dy, dx = pairs.shifts[p, d]
            expected = np.zeros((FIELD, FIELD), np.uint8)
            expected[PAD + dy : PAD + dy + 28, PAD + dx : PAD + dx + 28] = SAMPLE.images[pairs.sources[p, d]]
            np.testing.assert_array_equal(pairs.parts[p, d], expected)
            np.testing.assert_array_equal(place(SAMPLE.images[pairs.sources[p, d]], (dy, dx)), expected)
        total = pairs.parts[p, 0].astype(int) + pairs.parts[p, 1].astype(int)
        np.testing.assert_array_equal(pairs.images[p], np.minimum(total, 255))
    overlap = (pairs.parts[:, 0] > 0) & (pairs.parts[:, 1] > 0)
    assert overlap.any(axis=(1, 2)).mean() > 0.9  # the digits do overlap


def test_the_second_class_is_uniform_over_the_nine_others():
    pairs = draw_pairs(SAMPLE, 18_000, np.random.default_rng(0))
    offsets = (pairs.labels[:, 1] - pairs.labels[:, 0]) % 10
    counts = np.bincount(offsets, minlength=10)
    assert counts[0] == 0
    assert np.abs(counts[1:] / 2000 - 1).max() < 0.1  # 2,000 expected each; sd about 2.2 %


def test_training_pairs_are_fresh_each_epoch_and_reproducible():
    a = training_pairs(SAMPLE, epoch=0, seed=3, n=200)
    again = training_pairs(SAMPLE, epoch=0, seed=3, n=200)
    other = training_pairs(SAMPLE, epoch=1, seed=3, n=200)
    np.testing.assert_array_equal(a.images, again.images)
    np.testing.assert_array_equal(a.sources, again.sources)
    assert (a.sources != other.sources).any(axis=1).mean() > 0.9
    with pytest.raises(ValueError, match="epoch and seed must be >= 0"):
        training_pairs(SAMPLE, epoch=-1)


def test_the_test_set_is_fixed_and_more_pairs_extend_it():
    small = fixed_test_pairs(SAMPLE, 1500)
    larger = fixed_test_pairs(SAMPLE, 2500)
    assert len(small) == 1500 and len(larger) == 2500
    for field in ("images", "parts", "labels", "sources", "shifts"):
        np.testing.assert_array_equal(getattr(small, field), getattr(larger, field)[:1500])
    # the recipe in the docstring rebuilds it: block b from default_rng([TEST_SEED, b])
    from capsviz.data.multimnist import TEST_SEED

    block1 = draw_pairs(SAMPLE, 1000, np.random.default_rng([TEST_SEED, 1]))
    np.testing.assert_array_equal(larger.images[1000:2000], block1.images)
    with pytest.raises(ValueError, match=">= 1"):
        fixed_test_pairs(SAMPLE, 0)


def test_bad_digits_and_shifts_are_refused():
    with pytest.raises(ValueError, match="28x28"):
        place(np.zeros((20, 20), np.uint8), (0, 0))
    with pytest.raises(ValueError, match=r"within \[-4, 4\]"):
        place(np.zeros((28, 28), np.uint8), (5, 0))
    assert compose(np.full((2, 3, 3), 200, np.uint8)).max() == 255


def test_the_two_digit_loss_has_both_classes_present_and_one_reconstruction_per_digit():
    import torch

    from capsviz.model.losses import margin_loss, reconstruction_loss, two_digit_loss

    lengths = torch.tensor([[0.95, 0.2, 0.05, 0.7, 0.1, 0.0, 0.0, 0.0, 0.3, 0.0]])
    labels = torch.tensor([[0, 3]])
    # by hand: present 0 (0.95 >= 0.9: 0) and 3 ((0.9-0.7)^2 = 0.04); absent 1 and 8 over m- = 0.1
    expected = 0.04 + 0.5 * ((0.2 - 0.1) ** 2 + (0.3 - 0.1) ** 2)
    assert float(margin_loss(lengths, labels)) == pytest.approx(expected, rel=1e-6)
    # with the single label 0, digit 3 counts as absent: 0.5 ((0.2-0.1)^2 + (0.7-0.1)^2 + (0.3-0.1)^2)
    assert float(margin_loss(lengths, labels[:, 0])) == pytest.approx(0.5 * (0.01 + 0.36 + 0.04), rel=1e-6)
    torch.manual_seed(0)
    recon, parts = torch.rand(1, 2, 1, 36, 36), torch.rand(1, 2, 1, 36, 36)
    total, margin, sse = two_digit_loss(lengths, recon, parts, labels, weight=0.0005)
    one = reconstruction_loss(recon[:, 0], parts[:, 0])
    two = reconstruction_loss(recon[:, 1], parts[:, 1])
    assert float(sse) == pytest.approx(float(one + two), rel=1e-6)
    assert float(total) == pytest.approx(expected + 0.0005 * float(one + two), rel=1e-6)
    assert float(margin) == pytest.approx(expected, rel=1e-6)


def test_a_random_partner_is_of_another_class_and_as_a_seed_draws_it():
    labels = np.array([3, 3, 5, 7, 5, 3])
    picks = [random_partner(labels, 3, np.random.default_rng(seed)) for seed in range(40)]
    assert set(labels[picks]) == {5, 7} and set(picks) == {2, 3, 4}

    def draws(seed: int) -> list[int]:
        rng = np.random.default_rng(seed)
        return [random_partner(labels, None, rng) for _ in range(5)]

    assert draws(9) == draws(9)  # the seed's draws
    assert 3 in {int(labels[random_partner(labels, None, np.random.default_rng(s))]) for s in range(40)}
    with pytest.raises(ValueError, match="another class than 3"):
        random_partner(np.array([3, 3]), 3, np.random.default_rng(0))


def test_the_fixed_test_blocks_are_drawn_once_and_locate_a_pair():
    blocks = FixedTestBlocks(SAMPLE)
    first = blocks(1)
    assert blocks(1) is first  # kept
    np.testing.assert_array_equal(first.images, fixed_test_block(SAMPLE, 1).images)
    block, j = blocks.pair(TEST_BLOCK + 7)
    assert block is first and j == 7
    assert blocks.pair(3)[1] == 3 and isinstance(blocks.split, MnistSplit)
