"""The reading of a pair of overlapping digits (capsviz.model.pairs), on hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest

from capsviz.model.pairs import (
    PairReading,
    by_digit,
    no_pair_found,
    routing_comparison,
    segmentation_image,
    share_contrast,
    verdict,
)


def test_red_is_digit_as_capsule_and_green_digit_bs():
    left, right = np.zeros((36, 36)), np.zeros((36, 36))
    left[:, :18], right[:, 18:] = 1.0, 1.0
    parts = np.stack([left, right])  # digit A on the left, B on the right
    assert by_digit((4, 6), (5, 4), np.zeros((2, 36, 36)), parts) == (1, 0)  # B's class found: 4 goes green
    assert by_digit((5, 6), (5, 4), np.zeros((2, 36, 36)), parts) == (0, 1)  # A's class found: 5 stays red
    assert by_digit((6, 5), (5, None), np.zeros((2, 36, 36)), parts) == (1, 0)  # A a test digit, B drawn
    # neither class known (drawings) or found: each capsule to the digit its reconstruction covers
    assert by_digit((7, 1), (None, None), np.stack([right, left]), parts) == (1, 0)
    assert by_digit((7, 1), (2, 3), np.stack([left, right]), parts) == (0, 1)


@pytest.mark.parametrize(
    "top2, labels, text",
    [
        ((4, 1), (1, 4), "longest capsules: 4 and 1; the digits are 1 and 4 — both right"),
        ((4, 2), (1, 4), "longest capsules: 4 and 2; the digits are 1 and 4 — one right"),
        ((3, 2), (1, 4), "longest capsules: 3 and 2; the digits are 1 and 4 — both wrong"),
        ((3, 2), (None, 8), "longest capsules: 3 and 2; the test digit is an 8 — not found"),
        ((7, 2), (7, None), "longest capsules: 7 and 2; the test digit is a 7 — found"),
        ((7, 2), (None, None), "longest capsules: 7 and 2"),
        ((7, 2), (5, 5), "both digits are 5s: pick digits of two different classes"),
    ],
)
def test_the_verdict_counts_the_digits_among_the_two_longest(top2, labels, text):
    assert verdict(top2, labels) == text


ONE = "digit {} is blank, so the input is one digit; longest capsule: "


@pytest.mark.parametrize(
    "top2, labels, blank, text",
    [
        ((7, 2), (7, None), (False, True), ONE.format("B") + "7; the test digit is a 7 — found"),
        ((2, 7), (7, None), (False, True), ONE.format("B") + "2; the test digit is a 7 — not found"),
        ((3, 8), (None, 8), (True, False), ONE.format("A") + "3; the test digit is an 8 — not found"),
        ((3, 8), (None, None), (False, True), ONE.format("B") + "3"),
        ((3, 8), (None, None), (True, True), "both digits are blank: draw a digit or pick a test digit"),
    ],
)
def test_a_blank_digit_leaves_one_digit_whose_answer_is_the_longest_capsule(top2, labels, blank, text):
    assert verdict(top2, labels, blank=blank) == text


@pytest.mark.parametrize(
    "first, last, iterations, labels, text",
    [
        ([3, 5], [3, 8], 3, (8, 3), "r = 1: 3, 5 (one right) · r = 3: 3, 8 (both right) — routing changed the answer"),
        ([5, 3], [3, 5], 3, (1, 4), "r = 1: 5, 3 (none right) · r = 3: 3, 5 (none right) — routing kept the answer"),
        ([2, 7], [7, 1], 5, (None, 7), "r = 1: 2, 7 · r = 5: 7, 1 — routing changed the answer"),
        ([2, 7], [2, 7], 1, (2, 7), "r = 1: 2, 7 (one routing iteration: raise R to compare)"),
    ],
)
def test_one_routing_iteration_is_set_beside_the_last(first, last, iterations, labels, text):
    assert routing_comparison(first, last, iterations, labels) == text
    reading = PairReading(labels, last, last, np.zeros((10, 2, 2)), None, None, 0.0, first, iterations)
    assert reading.routing_changed == (set(first) != set(last)) and reading.routing() == text


def test_with_a_blank_digit_fig5_and_the_pose_edit_paint_the_longest_capsule_alone():
    from capsviz.model.pairs import GREEN, OTHER

    recon = np.random.default_rng(0).random((10, 4, 4)).astype(np.float32)
    # digit A blank, B a test 8: capsule 3, second longest, stands for no digit
    reading = PairReading((None, 8), [8, 3], [3, 8], recon, None, None, 0.0, [8, 3], 3, (True, False))
    assert [j for j, _ in reading.painted] == [8] and np.array_equal(reading.painted[0][1], GREEN)
    np.testing.assert_allclose(reading.fig5, np.clip(recon[8][..., None] * GREEN, 0, 1))
    edited = np.full((4, 4), 0.5, np.float32)
    image, combined = reading.compose_pose(8, edited)  # the 8 edited: nothing else drawn beside it
    np.testing.assert_allclose(image, np.clip(edited[..., None] * GREEN, 0, 1))
    np.testing.assert_allclose(combined, edited)
    image, combined = reading.compose_pose(3, edited)  # a capsule not painted: grey, over the 8 as inferred
    np.testing.assert_allclose(image, np.clip(edited[..., None] * OTHER + recon[8][..., None] * GREEN, 0, 1))
    np.testing.assert_allclose(combined, np.clip(edited + recon[8], 0, 1))
    both = PairReading((None, None), [8, 3], [8, 3], recon, None, None, 0.0, [8, 3], 3, (True, True))
    assert both.painted == [] and not both.fig5.any() and both.fig5.shape == (4, 4, 3)


@pytest.mark.parametrize(
    "first, last, iterations, labels, blank, text, changed",
    [
        ([3, 5], [3, 8], 3, (3, None), (False, True), "r = 1: 3 (right) · r = 3: 3 (right) — routing kept", False),
        ([5, 3], [3, 5], 3, (None, 3), (True, False), "r = 1: 5 (wrong) · r = 3: 3 (right) — routing changed", True),
        ([5, 3], [3, 5], 3, (None, None), (False, True), "r = 1: 5 · r = 3: 3 — routing changed", True),
        ([5, 3], [5, 3], 1, (None, None), (False, True), "r = 1: 5 (one routing iteration: raise R to compare)", False),
        ([5, 3], [3, 5], 3, (None, None), (True, True), "", False),
    ],
)
def test_with_a_blank_digit_routing_compares_the_longest_capsules(
    first, last, iterations, labels, blank, text, changed
):
    if "— routing" in text:
        text += " the answer"
    assert routing_comparison(first, last, iterations, labels, blank=blank) == text
    reading = PairReading(labels, last, last, np.zeros((10, 2, 2)), None, None, 0.0, first, iterations, blank)
    assert reading.routing_changed == changed and reading.routing() == text


def test_the_segmentation_colours_stretch_to_the_largest_departure():
    image = np.array([[1.0, 1.0, 0.5, 0.1]], np.float32)
    share = np.array([[0.52, 0.5, 0.48, 0.9]], np.float32)  # the last pixel is no ink (0.1 < 0.2)
    contrast = share_contrast(image, share)
    assert contrast == pytest.approx(0.02)
    rgb = segmentation_image(image, share, contrast)
    np.testing.assert_allclose(rgb[0, 0], [1.0, 0.25, 0.2], atol=1e-6)  # all the way to A: pure red
    np.testing.assert_allclose(rgb[0, 1], [0.6, 0.625, 0.25], atol=1e-6)  # even: halfway, yellowish
    np.testing.assert_allclose(rgb[0, 2], [0.1, 0.5, 0.15], atol=1e-6)  # to B: green at half the ink
    assert share_contrast(image, np.full_like(share, 0.5)) == 0.0  # iteration 1: uniform couplings
    reading = PairReading((4, 6), [4, 6], [4, 6], np.zeros((10, 1, 4)), (4, 6), share[None], contrast, [4, 6], 1)
    assert reading.colour_scale() == ("colours: full red at a share to 4 of 0.5200, full green at 0.4800 (0.5: even)")


def test_a_pose_edit_keeps_the_other_capsule_as_inferred():
    recon = np.zeros((10, 2, 2), np.float32)
    recon[4] = [[1.0, 0.0], [0.0, 0.0]]  # digit A's capsule (4) draws the top left
    recon[6] = [[0.0, 0.0], [0.0, 1.0]]  # digit B's capsule (6) the bottom right
    reading = PairReading((4, 6), [6, 4], [4, 6], recon, (4, 6), None, 0.0, [6, 4], 3)
    edited = np.array([[0.0, 0.5], [0.0, 0.0]], np.float32)  # capsule 6 moved up
    colours, combined = reading.compose_pose(6, edited)
    np.testing.assert_allclose(colours[0, 1], [0.1, 0.5, 0.15], atol=1e-6)  # the edit in green
    np.testing.assert_allclose(colours[0, 0], [1.0, 0.25, 0.2], atol=1e-6)  # digit A's, red, as inferred
    np.testing.assert_allclose(colours[1, 1], 0.0)  # B's inferred image is replaced by the edit
    np.testing.assert_allclose(combined, [[1.0, 0.5], [0.0, 0.0]])
    grey, _ = reading.compose_pose(2, edited)  # a third capsule: light grey over both
    np.testing.assert_allclose(grey[0, 1], [0.425, 0.425, 0.425], atol=1e-6)


def test_a_background_scan_lowers_its_threads_priority_and_yields_the_scans_events(monkeypatch):
    import os
    import sys
    import threading
    from types import SimpleNamespace

    from capsviz.data.multimnist import TEST_BLOCK, TEST_PAIRS
    from capsviz.model import pairs
    from capsviz.runtime import BACKGROUND_NICENESS

    images = np.zeros((TEST_BLOCK, 36, 36), np.float32)
    images[150, 0, 0] = 1.0  # test pair 150 is "wrong"
    block = SimpleNamespace(images=images, labels=np.zeros((TEST_BLOCK, 2), np.int64))
    monkeypatch.setattr(pairs, "pair_hits", lambda model, images, labels, **_: np.where(images[:, 0, 0] > 0, 1, 2))
    seen = {}

    def niceness() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) if sys.platform.startswith("linux") else 0

    def scan() -> None:
        before = niceness()
        seen["events"] = list(pairs.scan_in_background(None, lambda b: block, 0))
        seen["niceness"] = (before, niceness())

    thread = threading.Thread(target=scan)  # a thread of its own: the test's keeps its priority
    thread.start()
    thread.join(60)
    assert seen["events"] == [("progress", 100, TEST_PAIRS), ("found", 150)]
    before, after = seen["niceness"]
    if sys.platform.startswith("linux"):  # the scan's thread runs at the background workers' priority
        assert after == min(19, before + BACKGROUND_NICENESS)


def test_both_scans_route_with_the_iterations_asked_and_one_iteration_is_said_at_once(monkeypatch):
    from types import SimpleNamespace

    from capsviz.data.multimnist import TEST_BLOCK
    from capsviz.model import pairs

    images, labels = np.zeros((TEST_BLOCK, 36, 36), np.float32), np.zeros((TEST_BLOCK, 2), np.int64)
    block = SimpleNamespace(images=images, labels=labels)
    asked = []

    def hits(model, images, labels, routing_iterations=None, **_):
        asked.append(routing_iterations)
        return np.where(np.arange(len(images)) == 7, 1, 2)  # the 8th pair of a batch is wrong

    monkeypatch.setattr(pairs, "pair_hits", hits)
    assert list(pairs.scan_test_pairs(None, lambda b: block, 0, find="wrong", iterations=1)) == [("found", 7)]
    assert asked == [1]  # the R the window routes with, not the model's default
    events = list(pairs.scan_test_pairs(None, lambda b: block, 5, find="routing", iterations=1))
    assert events == [("one iteration", 5)]  # nothing to compare r = 1 with: no pass is run


def test_a_scan_that_finds_nothing_says_after_which_pair():
    assert no_pair_found("wrong", 120) == "no wrong pair after test pair 119"
    assert no_pair_found("routing", 1) == "no pair where routing changes the answer after test pair 0"
