"""Summaries of the routing trace shown by the explorer."""

from __future__ import annotations

import numpy as np

from capsviz.model.analysis import (
    class_maps,
    mean_entropy,
    mosaic_capsule,
    receptive_overlay,
    routed_mass,
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
