"""Summaries of a routing trace for the explorer (numpy, Qt-free).

Shapes: I = 1152 primary capsules on a 32 x 6 x 6 grid (i = type*36 + y*6 + x),
J = 10 digit capsules, R = routing iterations.
"""

from __future__ import annotations

import numpy as np

TYPES, GRID, FIELD = 32, 6, 28
RF_SIZE, RF_STRIDE = 17, 2  # a primary capsule at (y, x) sees input rows 2y..2y+16, columns 2x..2x+16


def class_maps(u_lengths: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Length-weighted coupling per class on the primary grid.

    u_lengths : (I,), c : (I, J) for one iteration -> (J, 6, 6), float:
    map[j, y, x] = sum over the 32 types of ||u_i|| c_ij, i = type*36 + y*6 + x.
    """
    w = (u_lengths[:, None] * c).reshape(-1, GRID, GRID, c.shape[1])  # (32, 6, 6, J)
    return w.sum(axis=0).transpose(2, 0, 1)


def routed_mass(u_lengths: np.ndarray, c: np.ndarray) -> np.ndarray:
    """sum_i ||u_i|| c_ij for every iteration: c (R, I, J) -> (R, J)."""
    return np.einsum("i,rij->rj", u_lengths, c)


def mean_entropy(c: np.ndarray) -> np.ndarray:
    """Mean over i of the entropy of c_i (nats): c (R, I, J) -> (R,); log(10) = 2.303 is uniform."""
    return -(c * np.log(np.clip(c, 1e-12, 1.0))).sum(axis=-1).mean(axis=-1)


def type_mosaic(values: np.ndarray, gap: float = np.nan) -> np.ndarray:
    """Arrange one value per primary capsule, (I,), as 4 x 8 tiles of 6 x 6 (one tile per type),
    separated by one-pixel ``gap`` lines: -> (27, 55)."""
    tiles = values.reshape(TYPES, GRID, GRID)
    rows, cols, step = 4, 8, GRID + 1
    out = np.full((rows * step - 1, cols * step - 1), gap, dtype=np.float32)
    for t in range(TYPES):
        r, c = divmod(t, cols)
        out[r * step : r * step + GRID, c * step : c * step + GRID] = tiles[t]
    return out


def mosaic_capsule(row: int, col: int) -> tuple[int, int, int] | None:
    """(type, y, x) of the capsule at mosaic pixel (row, col), or None on a gap line."""
    step = GRID + 1
    if not (0 <= row < 4 * step - 1 and 0 <= col < 8 * step - 1):
        return None
    y, x = row % step, col % step
    if y == GRID or x == GRID:
        return None
    return (row // step) * 8 + col // step, y, x


def receptive_overlay(grid_map: np.ndarray) -> np.ndarray:
    """Spread a (6, 6) map over the input: each cell adds its value to the 17 x 17 input
    pixels its capsules see (rows 2y..2y+16, columns 2x..2x+16) -> (28, 28)."""
    out = np.zeros((FIELD, FIELD), dtype=np.float64)
    for y in range(GRID):
        for x in range(GRID):
            out[RF_STRIDE * y : RF_STRIDE * y + RF_SIZE, RF_STRIDE * x : RF_STRIDE * x + RF_SIZE] += grid_map[y, x]
    return out.astype(np.float32)
