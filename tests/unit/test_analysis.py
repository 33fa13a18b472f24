"""Summaries of the routing trace shown by the explorer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from capsviz.model.analysis import (
    class_maps,
    field_side,
    grid_side,
    mean_entropy,
    mosaic_capsule,
    mosaic_shape,
    receptive_overlay,
    routed_mass,
    segmentation,
    type_mosaic,
)


def test_class_maps_sum_over_types():
    rng = np.random.default_rng(0)
    u_len = rng.random(1152)
    c = rng.dirichlet(np.ones(10), size=1152)
    maps = class_maps(u_len, c)
    assert maps.shape == (10, 6, 6)
    expected = sum(u_len[t * 36 + 3 * 6 + 1] * c[t * 36 + 3 * 6 + 1, 4] for t in range(32))
    assert np.isclose(maps[4, 3, 1], expected)
    # every capsule's length is shared out completely: the maps sum to the total length
    assert np.isclose(maps.sum(), u_len.sum())


def test_mass_and_entropy():
    c = np.stack([np.full((1152, 10), 0.1), np.eye(10)[np.arange(1152) % 10]])
    u_len = np.ones(1152)
    assert np.allclose(routed_mass(u_len, c)[0], 115.2)
    ent = mean_entropy(c)
    assert np.isclose(ent[0], np.log(10)) and np.isclose(ent[1], 0.0, atol=1e-9)


def test_mosaic_layout_and_lookup():
    values = np.arange(1152, dtype=np.float32)
    m = type_mosaic(values)
    assert m.shape == (27, 55)
    for t, y, x in [(0, 0, 0), (9, 5, 2), (31, 5, 5)]:
        row, col = (t // 8) * 7 + y, (t % 8) * 7 + x
        assert m[row, col] == t * 36 + y * 6 + x
        assert mosaic_capsule(row, col) == (t, y, x)
    assert np.isnan(m[6, 0]) and mosaic_capsule(6, 0) is None


def test_receptive_overlay_covers_rows_2y_to_2y_plus_16():
    grid = np.zeros((6, 6))
    grid[2, 5] = 1.0
    out = receptive_overlay(grid)
    rows, cols = np.nonzero(out)
    assert rows.min() == 4 and rows.max() == 20 and cols.min() == 10 and cols.max() == 26


def test_the_summaries_follow_the_grid_of_the_multimnist_model():
    rng = np.random.default_rng(1)
    u_len = rng.random(3200)
    c = rng.dirichlet(np.ones(10), size=3200)
    assert grid_side(3200) == 10 and grid_side(1152) == 6 and field_side(10) == 36 and field_side(6) == 28
    maps = class_maps(u_len, c)
    assert maps.shape == (10, 10, 10) and np.isclose(maps.sum(), u_len.sum())
    i = 7 * 100 + 9 * 10 + 4  # type 7, y 9, x 4
    assert np.isclose(maps[2, 9, 4], sum(u_len[t * 100 + 94] * c[t * 100 + 94, 2] for t in range(32)))
    m = type_mosaic(np.arange(3200, dtype=np.float32))
    assert m.shape == mosaic_shape(10) == (43, 87)
    row, col = (7 // 8) * 11 + 9, (7 % 8) * 11 + 4
    assert m[row, col] == i and mosaic_capsule(row, col, grid=10) == (7, 9, 4)
    grid = np.zeros((10, 10))
    grid[9, 0] = 1.0
    rows, cols = np.nonzero(receptive_overlay(grid))
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (18, 34, 0, 16)
    with pytest.raises(ValueError, match="not 32 types on a square grid"):
        grid_side(1000)


def test_segmentation_divides_each_pixel_between_the_two_digits_by_the_couplings_that_reach_it():
    from capsviz.data.mnist import load_sample
    from capsviz.data.multimnist import draw_pairs
    from capsviz.model import CapsNet, CapsNetConfig
    from capsviz.model.inference import infer

    torch.manual_seed(0)
    model = CapsNet(CapsNetConfig(image_size=36))
    pair = draw_pairs(load_sample(), 1, np.random.default_rng(2))
    a, b = (int(d) for d in pair.labels[0])
    inference = infer(model, pair.images[0] / np.float32(255))
    for r in range(inference.iterations):
        c = inference.c[r]
        share, weight = segmentation(inference.u_lengths, c, (a, b))
        assert share.shape == weight.shape == (36, 36)
        for py, px in [(0, 0), (17, 20), (35, 35), (10, 3)]:
            seen = [
                t * 100 + y * 10 + x
                for t in range(32)
                for y in range(10)
                for x in range(10)
                if 2 * y <= py <= 2 * y + 16 and 2 * x <= px <= 2 * x + 16
            ]
            if not seen:  # row and column 35: no capsule's field reaches them
                assert weight[py, px] == 0 and share[py, px] == 0.5
                continue
            to_a = sum(inference.u_lengths[i] * c[i, a] for i in seen)
            to_b = sum(inference.u_lengths[i] * c[i, b] for i in seen)
            assert np.isclose(weight[py, px], to_a + to_b, rtol=1e-4)
            assert np.isclose(share[py, px], to_a / (to_a + to_b), rtol=1e-4)
    with pytest.raises(ValueError, match="two different digits"):
        segmentation(inference.u_lengths, inference.c[0], (3, 3))


def test_vote_projection_is_the_pca_of_the_votes_and_the_centres_point_along_v():
    from capsviz.model import CapsNet
    from capsviz.model.analysis import project, vote_centres, vote_projection

    torch.manual_seed(0)
    model = CapsNet().eval()
    with torch.no_grad():
        trace = model(torch.rand(1, 1, 28, 28), trace=True).trace.to_numpy(0)
    votes = trace["u_hat"][:, 4]  # (1152, 16)
    mean, axes = vote_projection(votes)
    np.testing.assert_allclose(axes @ axes.T, np.eye(2), atol=1e-10)
    np.testing.assert_allclose(mean, votes.astype(np.float64).mean(axis=0), rtol=1e-12)
    points = project(votes, mean, axes)
    # the first axis carries the largest spread a unit direction can: no random direction beats it
    rng = np.random.default_rng(1)
    others = rng.standard_normal((200, 16))
    others /= np.linalg.norm(others, axis=1, keepdims=True)
    assert points[:, 0].var() >= ((votes - mean) @ others.T).var(axis=0).max()
    assert points[:, 0].var() >= points[:, 1].var()
    centres = vote_centres(votes, trace["c"][:, :, 4])  # (R, 16)
    v = trace["v"][:, 4]  # v_j = squash(s_j) points where s_j / sum_i c_ij points (Eq. 1, 2)
    unit = centres / np.linalg.norm(centres, axis=1, keepdims=True)
    np.testing.assert_allclose(unit, v / np.linalg.norm(v, axis=1, keepdims=True), atol=1e-5)
