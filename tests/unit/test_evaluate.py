"""Scoring: the top-2 rule on hand-made lengths, the one batched loop against per-image
calls, and the Score of single digits and of pairs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from capsviz.data.mnist import load_sample
from capsviz.evaluate import batched, model_lengths, pair_hits, score, top_two, two_digit_hits
from capsviz.model import CapsNet
from capsviz.model.baseline import BaselineCNN, BaselineConfig, baseline_probabilities
from capsviz.model.inference import capsule_lengths, digit_capsules, infer, two_longest
from capsviz.train.checkpoint import load_checkpoint

from ..conftest import SHIPPED

SAMPLE = load_sample()


@pytest.fixture(scope="module")
def capsnet() -> CapsNet:
    return load_checkpoint(SHIPPED)[0]  # the shipped model: real lengths, not those of random weights


@pytest.fixture(scope="module")
def cnn() -> BaselineCNN:
    torch.manual_seed(0)
    return BaselineCNN(BaselineConfig(channels=(8, 8, 4), hidden=(16, 16))).eval()


def test_the_top_two_rule_on_a_hand_made_case():
    lengths = np.zeros((4, 10), np.float32)
    lengths[0, [3, 7]] = 0.9, 0.8  # top 2: 3, 7
    lengths[1, [3, 5, 7]] = 0.9, 0.85, 0.8  # top 2: 3, 5
    lengths[2, [1, 2]] = 0.5, 0.5  # a tie: the lower class first, then the next
    lengths[3] = 0.2  # all tied: classes 0 and 1
    labels = np.array([[7, 3], [3, 7], [2, 1], [8, 9]])
    assert top_two(torch.from_numpy(lengths)).tolist() == [[3, 7], [3, 5], [1, 2], [0, 1]]
    hits = two_digit_hits(lengths, labels)
    assert isinstance(hits, np.ndarray) and hits.tolist() == [2, 1, 2, 0]
    assert two_digit_hits(torch.from_numpy(lengths), torch.from_numpy(labels)).tolist() == [2, 1, 2, 0]
    assert [two_longest(row) for row in lengths] == [[3, 7], [3, 5], [1, 2], [0, 1]]
    with pytest.raises(ValueError, match=r"labels \(N, 2\)"):
        two_digit_hits(lengths, labels[:, 0])


def test_the_batched_loop_gives_what_one_image_at_a_time_gives(capsnet, cnn):
    images = SAMPLE.images[:7]  # uint8: divided by 255 in the loop
    floats = images.astype(np.float32) / 255
    one_by_one = np.stack([infer(capsnet, x, 2).lengths[-1] for x in floats])
    calls = []
    lengths = model_lengths(capsnet, images, 2, batch_size=3, after_batch=calls.append)
    assert calls == [3, 3, 1] and lengths.shape == (7, 10) and lengths.dtype == np.float32
    np.testing.assert_allclose(lengths, one_by_one, atol=1e-5)
    assert one_by_one.max(axis=1).min() > 0.5  # real digits: long capsules
    poses = np.stack([infer(capsnet, x, 2).v[-1] for x in floats])
    np.testing.assert_allclose(digit_capsules(capsnet, floats, 2, batch_size=5), poses, atol=1e-5)
    np.testing.assert_allclose(
        capsule_lengths(capsnet, floats, 2, batch_size=4), np.linalg.norm(poses, axis=-1), atol=1e-5
    )
    probabilities = np.stack([baseline_probabilities(cnn, x) for x in floats])  # one (28, 28) image each
    np.testing.assert_allclose(model_lengths(cnn, images, batch_size=2), probabilities, atol=1e-6)
    np.testing.assert_allclose(baseline_probabilities(cnn, floats, batch_size=3), probabilities, atol=1e-6)
    assert model_lengths(capsnet, images[:0]).shape == (0, 10)


def test_the_batched_loop_copies_a_read_only_array_and_refuses_another_size(capsnet):
    frozen = SAMPLE.images[:2].astype(np.float32) / 255
    frozen.flags.writeable = False
    np.testing.assert_array_equal(batched(capsnet, frozen, lambda x: x.flatten(1)[:, :3], (3,)), frozen[:, 0, :3])
    with pytest.raises(ValueError, match="expected 28x28 images"):
        model_lengths(capsnet, np.zeros((2, 36, 36), np.float32))
    stops = []

    def stop():
        stops.append(1)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        model_lengths(capsnet, SAMPLE.images[:4], batch_size=2, before_batch=stop)
    assert stops == [1]


def test_a_score_counts_digits_and_pairs(capsnet):
    images, labels = SAMPLE.images[:20], SAMPLE.labels[:20]
    lengths = model_lengths(capsnet, images)
    digits = score(capsnet, images, labels, batch_size=8)
    right = int((lengths.argmax(1) == labels).sum())
    assert (digits.examples, digits.right, digits.at_least_one) == (20, right, None)
    assert digits.accuracy == right / 20
    assert digits.confusion.sum() == 20 and np.trace(digits.confusion) == right
    assert digits.confusion[labels[0], lengths[0].argmax()] >= 1
    pairs = np.stack([labels, (labels + 1) % 10], axis=1)
    hits = two_digit_hits(lengths, pairs)
    both = score(capsnet, images, pairs)
    assert (both.right, both.at_least_one, both.confusion) == (int((hits == 2).sum()), int((hits >= 1).sum()), None)
    np.testing.assert_array_equal(pair_hits(capsnet, images, pairs, batch_size=6), hits)
    with pytest.raises(ValueError, match=r"expected labels of shape \(20,\) or \(20, 2\)"):
        score(capsnet, images, labels[:5])
