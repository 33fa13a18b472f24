"""Summaries of a routing trace for the explorer (numpy, Qt-free).

Shapes: I primary capsules on a 32 x G x G grid (i = type*G*G + y*G + x; G = 6, I = 1152 for
MNIST; G = 10, I = 3200 for MultiMNIST), J = 10 digit capsules, R = routing iterations. The
grid side is read from I.
"""

from __future__ import annotations

import math

import numpy as np

from capsviz.model.inference import recognised
from capsviz.texts import QT_TR_NOOP, english

TYPES = 32
RF_SIZE, RF_STRIDE = 17, 2  # a primary capsule at (y, x) sees input rows 2y..2y+16, columns 2x..2x+16
MOSAIC_ROWS, MOSAIC_COLS = 4, 8  # the 32 types as 4 x 8 tiles
UNIFORM_ENTROPY = float(np.log(10))  # nats: the entropy of c_i when a capsule splits its vote evenly


def grid_side(n_primary: int) -> int:
    """G of I = 32 G^2 primary capsules (6 for 1152, 10 for 3200). Raises ``ValueError`` otherwise."""
    side = math.isqrt(n_primary // TYPES)
    if TYPES * side * side != n_primary:
        raise ValueError(f"{n_primary} primary capsules are not {TYPES} types on a square grid")
    return side


def field_side(grid: int) -> int:
    """Side of the input image of a G x G PrimaryCaps grid: 28 for G = 6, 36 for G = 10
    (two 9 x 9 convolutions, the second of stride 2)."""
    return RF_STRIDE * (grid - 1) + RF_SIZE + 1


def class_maps(u_lengths: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Length-weighted coupling per class on the primary grid.

    u_lengths : (I,), c : (I, J) for one iteration -> (J, G, G), float:
    map[j, y, x] = sum over the 32 types of ||u_i|| c_ij, i = type*G*G + y*G + x.
    """
    g = grid_side(len(u_lengths))
    w = (u_lengths[:, None] * c).reshape(-1, g, g, c.shape[1])  # (32, G, G, J)
    return w.sum(axis=0).transpose(2, 0, 1)


def routed_mass(u_lengths: np.ndarray, c: np.ndarray) -> np.ndarray:
    """sum_i ||u_i|| c_ij for every iteration: c (R, I, J) -> (R, J)."""
    return np.einsum("i,rij->rj", u_lengths, c)


def mean_entropy(c: np.ndarray) -> np.ndarray:
    """Mean over i of the entropy of c_i (nats): c (R, I, J) -> (R,); log(10) = 2.303 is uniform."""
    return -(c * np.log(np.clip(c, 1e-12, 1.0))).sum(axis=-1).mean(axis=-1)


def entropy_extent(entropy: np.ndarray, share: float) -> tuple[float, float]:
    """y range (low, high) of a plot of :func:`mean_entropy` ``entropy`` (R,) in nats: from
    5 % below the curve's span to ln 10, and above ln 10 the fraction ``share`` (< 1) of the
    height, kept free for a label. A flat curve (R = 1) spans 1e-3 below ln 10, so that the
    axis still gets labelled ticks."""
    low = min(float(np.min(entropy)), UNIFORM_ENTROPY)
    span = max(UNIFORM_ENTROPY - low, 1e-3)
    pad = 0.05 * span
    return UNIFORM_ENTROPY - span - pad, UNIFORM_ENTROPY + share * (span + pad) / (1 - share)


def mosaic_shape(grid: int) -> tuple[int, int]:
    """Shape of :func:`type_mosaic` for a G x G grid: (27, 55) for G = 6, (43, 87) for G = 10."""
    step = grid + 1
    return MOSAIC_ROWS * step - 1, MOSAIC_COLS * step - 1


def type_mosaic(values: np.ndarray, gap: float = np.nan) -> np.ndarray:
    """Arrange one value per primary capsule, (I,), as 4 x 8 tiles of G x G (one tile per type),
    separated by one-pixel ``gap`` lines: -> :func:`mosaic_shape` (27, 55) for MNIST."""
    g = grid_side(len(values))
    tiles = values.reshape(TYPES, g, g)
    step = g + 1
    out = np.full(mosaic_shape(g), gap, dtype=np.float32)
    for t in range(TYPES):
        r, c = divmod(t, MOSAIC_COLS)
        out[r * step : r * step + g, c * step : c * step + g] = tiles[t]
    return out


def mosaic_capsule(row: int, col: int, grid: int = 6) -> tuple[int, int, int] | None:
    """(type, y, x) of the capsule at mosaic pixel (row, col) of a G x G grid, or None on a gap line."""
    step = grid + 1
    rows, cols = mosaic_shape(grid)
    if not (0 <= row < rows and 0 <= col < cols):
        return None
    y, x = row % step, col % step
    if y == grid or x == grid:
        return None
    return (row // step) * MOSAIC_COLS + col // step, y, x


# the class maps' layout, in map cells: each G x G map under a title band, GAP cells apart
TITLE_ROWS, GAP = 2, 1


def title_rows(grid: int = 6) -> int:
    """Height of a class map's title band in map cells: a third of the map's (at least 2), so
    the title keeps its height beside the map on any grid (2 for G = 6, 4 for G = 10)."""
    return max(TITLE_ROWS, -(-grid // 3))


def class_grid_shape(grid: int = 6) -> tuple[int, int]:
    """Shape of the class-map image for a G x G PrimaryCaps grid: two rows of five G x G maps,
    each under a title band: (17, 34) for G = 6, (29, 54) for G = 10."""
    return 2 * (title_rows(grid) + grid) + GAP, 5 * grid + 4 * GAP


def class_tile_origin(j: int, grid: int = 6) -> tuple[int, int]:
    """(row, column) in the class-map image of the top-left cell of digit j's G x G map."""
    band = title_rows(grid)
    return (j // 5) * (band + grid + GAP) + band, (j % 5) * (grid + GAP)


def class_grid(maps: np.ndarray) -> np.ndarray:
    """(10, G, G) class maps -> one :func:`class_grid_shape` image, NaN (transparent) between them."""
    g = maps.shape[1]
    out = np.full(class_grid_shape(g), np.nan, dtype=np.float32)
    for j in range(10):
        y0, x0 = class_tile_origin(j, g)
        out[y0 : y0 + g, x0 : x0 + g] = maps[j]
    return out


def class_cell(row: int, col: int, grid: int = 6) -> tuple[int, int, int] | None:
    """Inverse of the layout: image cell (row, col) -> (digit j, y, x), or None off the maps."""
    if row < 0 or col < 0:
        return None
    band, y = divmod(row, title_rows(grid) + grid + GAP)
    tile, x = divmod(col, grid + GAP)
    y -= title_rows(grid)
    if band > 1 or tile > 4 or not (0 <= y < grid) or x >= grid:
        return None
    return band * 5 + tile, y, x


def receptive_overlay(grid_map: np.ndarray) -> np.ndarray:
    """Spread a (G, G) map over the input: each cell adds its value to the 17 x 17 input
    pixels its capsules see (rows 2y..2y+16, columns 2x..2x+16) -> (H, H), H = :func:`field_side`
    (28 for G = 6, 36 for G = 10)."""
    g = grid_map.shape[0]
    side = field_side(g)
    out = np.zeros((side, side), dtype=np.float64)
    for y in range(g):
        for x in range(g):
            out[RF_STRIDE * y : RF_STRIDE * y + RF_SIZE, RF_STRIDE * x : RF_STRIDE * x + RF_SIZE] += grid_map[y, x]
    return out.astype(np.float32)


def segmentation(u_lengths: np.ndarray, c: np.ndarray, digits: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Segmentation by routing (MultiMNIST, Sec. 6): how the primary capsules divide between two
    digit capsules, laid over the input through their receptive fields.

    u_lengths : (I,); c : (I, J) couplings of one iteration; digits : (a, b), two classes.
    Returns (share, weight), both (H, H) float32:

    - ``weight[p] = sum over the capsules i whose receptive field holds pixel p of
      ||u_i|| (c_ia + c_ib)``: how much of the two digits' input the pixel carries;
    - ``share[p] = sum_i ||u_i|| c_ia / weight[p]`` in [0, 1]: 1 where those capsules send to
      digit a only, 0 where to b only, 0.5 where weight is 0.

    Raises ``ValueError`` when the two digits are the same class.
    """
    a, b = (int(d) for d in digits)
    if a == b:
        raise ValueError(f"segmentation needs two different digits, got {a} twice")
    maps = class_maps(u_lengths, c[:, [a, b]])  # (2, G, G)
    to_a, to_b = receptive_overlay(maps[0]), receptive_overlay(maps[1])
    weight = to_a + to_b
    share = np.divide(to_a, weight, out=np.full_like(weight, 0.5), where=weight > 0)
    return share.astype(np.float32), weight.astype(np.float32)


def vote_projection(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A fixed 2-D view of the votes for one digit capsule: their mean and two principal axes.

    votes : (I, D) the predictions u_hat_{j|i} = W_ij u_i of every primary capsule i for one
    digit capsule j (D = 16). Returns (mean (D,), axes (2, D)), float64; the axes are
    orthonormal, the directions of largest spread of the votes (PCA), each signed so that
    its largest component is positive. The votes do not change over the routing iterations
    (only c and v do), so one projection per input and digit holds for every iteration.
    """
    votes = np.asarray(votes, dtype=np.float64)
    mean = votes.mean(axis=0)
    _, _, vt = np.linalg.svd(votes - mean, full_matrices=False)
    axes = vt[:2].copy()
    flip = np.sign(axes[np.arange(2), np.abs(axes).argmax(axis=1)])
    return mean, axes * flip[:, None]


def project(points: np.ndarray, mean: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Points (..., D) in the view of :func:`vote_projection`: (points - mean) @ axes.T -> (..., 2)."""
    return (np.asarray(points, dtype=np.float64) - mean) @ axes.T


def vote_centres(votes: np.ndarray, c: np.ndarray) -> np.ndarray:
    """v_j scaled to the votes: s_j / sum_i c_ij, the c-weighted mean of the votes, per iteration.

    votes : (I, D) u_hat_{j|i}; c : (R, I) couplings c_ij to that digit per iteration.
    Returns (R, D). s_j = sum_i c_ij u_hat_{j|i} (Eq. 2) and v_j = squash(s_j) (Eq. 1) point
    the same way, so each row is v_j's direction at the votes' scale.
    """
    c = np.asarray(c, dtype=np.float64)
    return (c @ np.asarray(votes, dtype=np.float64)) / c.sum(axis=1, keepdims=True)


def capsule_position(i: int, n_primary: int) -> tuple[int, int, int]:
    """(type, y, x) of primary capsule i on its grid (i = type*G*G + y*G + x)."""
    g = grid_side(n_primary)
    t, rest = divmod(int(i), g * g)
    return (t, *divmod(rest, g))


def capsule_index(t: int, y: int, x: int, grid: int) -> int:
    """Index i of the primary capsule of type t at (y, x) on a G x G grid (i = t*G*G + y*G + x)."""
    return (t * grid + y) * grid + x


def capsule_place(i: int, n_primary: int) -> dict[str, int]:
    """Primary capsule i of I by name, as a readout's fields: i, its type t and its place y, x."""
    t, y, x = capsule_position(i, n_primary)
    return {"i": int(i), "t": t, "y": y, "x": x}


def capsule_figures(inference, i: int, j: int, r: int) -> dict:
    """A readout's fields for primary capsule i and digit capsule j at routing iteration r
    (0-based) of ``inference`` (``u_lengths`` (I,), ``c`` and ``b`` (R, I, J)): those of
    :func:`capsule_place`, u = ‖u_i‖, j, r + 1 (iterations are counted from 1 on screen),
    c = c_ij and b = b_ij."""
    return {
        **capsule_place(i, len(inference.u_lengths)),
        "u": inference.u_lengths[i],
        "j": j,
        "r": r + 1,
        "c": inference.c[r, i, j],
        "b": inference.b[r, i, j],
    }


def projected_votes(votes: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The votes for one digit capsule in the plane of :func:`vote_projection`, and v_j's path.

    votes : (I, D) u_hat_{j|i}; c : (R, I) couplings c_ij to that digit per iteration.
    Returns (mean (D,), axes (2, D), points (I, 2), centres (R, 2)), float64: the projection,
    the votes in it and :func:`vote_centres` in it.
    """
    mean, axes = vote_projection(votes)
    centres = vote_centres(votes, c)
    return mean, axes, project(votes, mean, axes), project(centres, mean, axes)


def vote_extent(points: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low (2,), high (2,)): a view of the votes' plane that holds the bulk of the votes
    ``points`` (N, 2) (their 2nd to 98th percentile on each axis; a few far ones may lie
    outside) and the whole path ``centres`` (R, 2), with a tenth of its size around it."""
    low, high = np.percentile(points, [2, 98], axis=0)
    low, high = np.minimum(low, centres.min(axis=0)), np.maximum(high, centres.max(axis=0))
    pad = 0.1 * np.maximum(high - low, 1e-6)
    return low - pad, high + pad


def coupling_scale(c: np.ndarray) -> tuple[float, float]:
    """A colour scale for couplings ``c`` (any shape): from their 1st to their 99th percentile
    (a few capsules far above the rest would darken all the others), at least 1e-6 wide."""
    low, top = (float(q) for q in np.percentile(c, [1, 99]))
    return low, max(top, low + 1e-6)


def colour_steps(values: np.ndarray, low: float, top: float, steps: int) -> np.ndarray:
    """``values`` on the colour scale ``low`` .. ``top`` (top > low) in ``steps`` steps: int
    step indices in 0 .. steps - 1, of ``values``' shape (values off the scale: its ends)."""
    return np.clip(((np.asarray(values) - low) / (top - low) * (steps - 1)).round(), 0, steps - 1).astype(int)


def in_rectangle(points: np.ndarray, origin, size) -> np.ndarray:
    """(N,) bool: which of ``points`` (N, 2) lie in the rectangle from corner ``origin``
    (x0, y0) over ``size`` (width, height), its edges included."""
    (x0, y0), (w, h) = origin, size
    x, y = points[:, 0], points[:, 1]
    return (x >= x0) & (x <= x0 + w) & (y >= y0) & (y <= y0 + h)


def chosen_fields(u_lengths: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """||u_i|| of the ``chosen`` primary capsules ((I,) bool), summed over the types and spread
    over the input pixels each sees (:func:`receptive_overlay`): u_lengths (I,) -> (H, H) float32."""
    g = grid_side(len(u_lengths))
    return receptive_overlay(np.where(chosen, u_lengths, 0.0).reshape(-1, g, g).sum(axis=0))


def iteration_maps(u_lengths: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The class maps of every routing iteration, and how far each is from uniform routing.

    u_lengths : (I,); c : (R, I, J) couplings per iteration. Returns (maps, departures,
    uniform): maps (R, J, G, G), :func:`class_maps` of each iteration; departures (R, J, G, G),
    the same of c_ij - 1/J (sum over the types of ||u_i|| (c_ij - 1/J): what each position sends
    to digit j beyond an even split); uniform (R,) bool, whether every c_ij of the iteration
    is 1/J (to 1e-7: the first iteration's couplings are).
    """
    even = 1.0 / c.shape[-1]
    maps = np.stack([class_maps(u_lengths, ci) for ci in c])
    departures = np.stack([class_maps(u_lengths, ci - even) for ci in c])
    return maps, departures, np.array([np.allclose(ci, even, rtol=0, atol=1e-7) for ci in c])


def colour_levels(values: np.ndarray, symmetric: bool = False) -> tuple[float, float]:
    """(low, high) colour levels spanning ``values`` (any shape; NaN, the gaps of a mosaic,
    ignored); ``symmetric``: (-m, m) with m the largest |value|, so that 0 is the centre
    colour. Data flatter than 1e-6 gets a scale 1e-3 wider each way (symmetric: +-1e-3)."""
    if symmetric:
        top = float(np.nanmax(np.abs(values)))
        top = top if top > 1e-6 else 1e-3
        return -top, top
    low, top = float(np.nanmin(values)), float(np.nanmax(values))
    return (low, top) if top - low > 1e-6 else (low - 1e-3, top + 1e-3)


def moving_dimensions(poses: np.ndarray, n: int = 3) -> list[tuple[int, float]]:
    """The ``n`` pose dimensions that move most along a sweep: poses (K, D), one capsule's v_j
    at each of K steps -> [(d, range)], range = max - min of dimension d over the steps,
    largest first."""
    swing = poses.max(axis=0) - poses.min(axis=0)
    return [(int(d), float(swing[d])) for d in np.argsort(swing)[::-1][:n]]


def sweep_figures(poses: np.ndarray, cnn: np.ndarray | None = None) -> dict:
    """A sweep summary's fields, for ``poses`` (K, D) one capsule's v_j at each of K steps and
    ``cnn`` (K,) a CNN's probability of the same digit (or None): ``low`` and ``high``, the
    least and greatest ‖v_j‖; ``d0``, ``d1``, ``d2`` and ``range0``.. ``range2``, the three
    :func:`moving_dimensions`; with ``cnn``, ``cnn_low`` and ``cnn_high``."""
    lengths = np.linalg.norm(poses, axis=1)
    figures = {"low": lengths.min(), "high": lengths.max()}
    for i, (d, swing) in enumerate(moving_dimensions(poses, 3)):
        figures[f"d{i}"], figures[f"range{i}"] = d, swing
    if cnn is not None:
        figures.update(cnn_low=cnn.min(), cnn_high=cnn.max())
    return figures


def fields_image(image: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """The input ``image`` (H, H) in [0, 1], dimmed, with ``spread`` (H, H), what some capsules
    see (:func:`chosen_fields`), glowing orange over it (scaled to its maximum): (H, H, 3) RGB
    in [0, 1]."""
    glow = spread / spread.max() if spread.max() > 0 else spread
    return np.clip(np.stack([image * 0.55 + glow * 0.6, image * 0.55 + glow * 0.35, image * 0.55], -1), 0, 1)


# -- the views' readouts: their lines composed with ``tr(template, **fields)`` (the app's
# translation; English by default)
def cell_readout(maps: np.ndarray, departures: np.ndarray, j: int, y: int, x: int, r: int, tr=english) -> str:
    """Class map j at grid cell (y, x) at routing iteration r (0-based): Σ_type ‖u_i‖ c_ij and its
    departure from an even split, of ``maps`` and ``departures`` (R, J, G, G) (:func:`iteration_maps`)."""
    fields = {"j": j, "y": y, "x": x, "r": r + 1, "mass": maps[r, j, y, x], "departure": departures[r, j, y, x]}
    return tr(
        "digit {j}, grid y={y} x={x}, iteration {r}: Σ_type ‖u_i‖ c_ij = {mass:.4f}, "
        "Σ_type ‖u_i‖ (c_ij − 0.1) = {departure:+.4f}",
        **fields,
    )


def capsule_readout(inference, i: int, j: int, r: int, tr=english) -> str:
    """Primary capsule i's length and routing to digit j at iteration r (:func:`capsule_figures`)."""
    return tr(
        "capsule i={i} (type {t}, y={y}, x={x}): ‖u_i‖ = {u:.4f}, c_i{j} = {c:.4f}, b_i{j} = {b:.4f} at iteration {r}",
        **capsule_figures(inference, i, j, r),
    )


def coupling_path(inference, i: int, j: int, tr=english) -> str:
    """How primary capsule i's coupling to digit j moved over the routing iterations, and the
    digit it sends the most to at the last: ``inference.c`` (R, I, J)."""
    c = inference.c[:, i]  # (R, J)
    top = int(c[-1].argmax())
    return tr(
        "c_i{j} over the iterations: {path}; the most, {top:.3f}, to digit {k}",
        j=j,
        path=" → ".join(f"{value:.3f}" for value in c[:, j]),
        top=c[-1, top],
        k=top,
    )


VOTE_READOUT = QT_TR_NOOP(
    "capsule i={i} (type {t}, y={y}, x={x}), ‖u_i‖ = {u:.4f}; for digit {j} at iteration {r}: "
    "c_ij = {c:.4f}, b_ij = {b:.4f}, agreement û·v_j = {agreement:+.4f}"
)


def vote_readout(inference, i: int, j: int, r: int, tr=english) -> str:
    """Primary capsule i's vote for digit j at iteration r: :func:`capsule_figures` and the
    agreement û_j|i · v_j (``inference.u_hat`` (I, J, D), ``inference.v`` (R, J, D))."""
    agreement = float(inference.u_hat[i, j] @ inference.v[r, j])
    return tr(VOTE_READOUT, **capsule_figures(inference, i, j, r), agreement=agreement)


def widest_vote_readout(tr=english) -> str:
    """A :func:`vote_readout` with figures of the most digits they take (3,200 primary capsules,
    7 iterations, b_ij and the agreement negative, two digits before the point): what a readout
    needs room for."""
    figures = {"i": 3199, "t": 31, "y": 9, "x": 9, "u": 0.9999, "j": 9, "r": 7, "c": 0.9999}
    return tr(VOTE_READOUT, **figures, b=-88.8888, agreement=-88.8888)


def primary_readout(u_lengths: np.ndarray, i: int, tr=english) -> str:
    """Primary capsule i by its place and its length ‖u_i‖ (``u_lengths`` (I,)), on two lines."""
    place = capsule_place(i, len(u_lengths))
    return tr("capsule i={i} (type {t}, y={y}, x={x})<br>‖u_i‖ = {length:.4f}", **place, length=u_lengths[i])


def maps_caption(r: int | None, departure: bool, uniform: bool, shared: bool, tr=english) -> str:
    """The class maps' title, two lines: what they show (their ``departure`` from an even split,
    or Σ ‖u_i‖ c_ij) at iteration r (0-based; None: no input), and how to read their colours:
    all 0 or all alike where the iteration is ``uniform``, else scaled to this iteration or,
    ``shared``, to all."""
    quantity = "Σ_type ‖u_i‖ (c_ij − 0.1)" if departure else "Σ_type ‖u_i‖ c_ij"
    if r is None:
        return tr("class maps {quantity}", quantity=quantity) + "<br>"
    if uniform and departure:
        note = tr("every c_ij is 0.1 (uniform), so every map is 0")
    elif uniform:
        note = tr("every c_ij is 0.1 (uniform), so the ten maps are the same")
    elif departure:
        note = tr("red: more than an even split (0.1) sends, blue: less")
    elif shared:
        note = tr("colours from all iterations' values")
    else:
        note = tr("colours from this iteration's values")
    return tr("class maps {quantity}, iteration {r}", quantity=quantity, r=r + 1) + "<br>" + note


def sweep_summary(poses: np.ndarray, digit: int, cnn: np.ndarray | None = None, tr=english) -> str:
    """A sweep of capsule ``digit`` in a line (:func:`sweep_figures`): the span of its length,
    of the CNN's probability of the digit (with ``cnn``), and the dimensions that move most."""
    figures = sweep_figures(poses, cnn)
    if cnn is None:
        return tr(
            "length {low:.2f}–{high:.2f} over the sweep; the dimensions that move most: "
            "d{d0} (range {range0:.2f}), d{d1} (range {range1:.2f}), d{d2} (range {range2:.2f})",
            **figures,
        )
    return tr(
        "length {low:.2f}–{high:.2f} over the sweep; CNN p({k}) {cnn_low:.2f}–{cnn_high:.2f}; the "
        "dimensions that move most: d{d0} (range {range0:.2f}), d{d1} (range {range1:.2f}), "
        "d{d2} (range {range2:.2f})",
        k=digit,
        **figures,
    )


def recognised_span(values: np.ndarray, lengths: np.ndarray, digit: int, at: float) -> tuple[float, float] | None:
    """Where along a sweep the input reads as ``digit``: its capsule the longest and long
    enough to count as a digit (:func:`capsviz.model.inference.recognised`). ``values``
    (K,) the swept parameter, ascending; ``lengths`` (K, 10) the capsule lengths at each.
    Returns the first and last value of the unbroken run of such values around the one
    nearest ``at`` (the value set now), or None where that one does not read as ``digit``."""
    lengths = np.asarray(lengths)
    reads = (lengths.argmax(axis=1) == digit) & recognised(lengths)
    k = int(np.abs(np.asarray(values) - at).argmin())
    if not reads[k]:
        return None
    first, last = k, k
    while first > 0 and reads[first - 1]:
        first -= 1
    while last < len(reads) - 1 and reads[last + 1]:
        last += 1
    return float(values[first]), float(values[last])


def recognition_line(values: np.ndarray, lengths: np.ndarray, digit: int, at: float, unit: str = "", tr=english) -> str:
    """One line on :func:`recognised_span`: "read as 7 from -40 to 45°" (the whole sweep,
    or not at the value set now); ``unit`` follows the numbers."""
    span = recognised_span(values, lengths, digit, at)
    if span is None:
        return tr("not read as {k} at the value set", k=digit)
    if span == (float(values[0]), float(values[-1])):
        return tr("read as {k} over the whole sweep", k=digit)
    low, high = (f"{x:g}{unit}" for x in span)
    return tr("read as {k} from {low} to {high}", k=digit, low=low, high=high)


def rounded_extent(low: float, high: float, step: float, limits=(-math.inf, math.inf)) -> tuple[float, float]:
    """A plot's range for data from ``low`` to ``high``: rounded out to multiples of ``step``,
    kept within ``limits`` (low, high), at least one step high (flat data: the step around it)."""
    lo = max(limits[0], math.floor(low / step) * step)
    hi = min(limits[1], math.ceil(high / step) * step)
    if hi - lo < step:
        lo, hi = (lo, lo + step) if lo + step <= limits[1] else (hi - step, hi)
    return lo, hi


def tick_spacing(least: float) -> tuple[float, float]:
    """(major, minor) tick spacing of an axis whose labelled ticks are at least ``least`` apart
    (data units, > 0): the next 1-2-5 step from ``least`` up, and its halves (after a 2) or fifths."""
    power = 10.0 ** math.floor(math.log10(least))
    factor = next(f for f in (1, 2, 5, 10) if f * power >= least)
    return factor * power, factor * power / (2 if factor == 2 else 5)
