"""What the views draw, computed without Qt: the capsules a model names, the votes' plane and
its colour scale, the capsules in a rectangle and the input pixels they see, the class maps of
every routing iteration and their colour levels, a transform sweep's values and the pose
dimensions that move along it."""

from __future__ import annotations

import numpy as np
import pytest

from capsviz.data.transforms import PARAMETERS, sweep_values
from capsviz.model.analysis import (
    UNIFORM_ENTROPY,
    capsule_figures,
    capsule_index,
    capsule_place,
    capsule_readout,
    cell_readout,
    chosen_fields,
    class_maps,
    colour_levels,
    colour_steps,
    coupling_path,
    coupling_scale,
    entropy_extent,
    fields_image,
    in_rectangle,
    iteration_maps,
    maps_caption,
    moving_dimensions,
    primary_readout,
    project,
    projected_votes,
    receptive_overlay,
    recognised_span,
    recognition_line,
    rounded_extent,
    sweep_figures,
    sweep_summary,
    tick_spacing,
    vote_centres,
    vote_extent,
    vote_projection,
    vote_readout,
)
from capsviz.model.inference import longest, two_longest


def test_longest_ranks_the_capsules_the_lower_class_first_on_a_tie():
    lengths = np.array([0.1, 0.5, 0.5, 0.9, 0.2, 0.0, 0.0, 0.3, 0.0, 0.0], np.float32)
    assert longest(lengths) == [3] and longest(lengths, 2) == [3, 1] and longest(lengths, 4) == [3, 1, 2, 7]
    assert longest(lengths, 2) == two_longest(lengths) and all(isinstance(j, int) for j in longest(lengths, 3))
    assert longest(np.full(10, 0.2), 2) == [0, 1]


def test_projected_votes_are_the_votes_and_the_path_in_the_plane_of_the_votes():
    rng = np.random.default_rng(0)
    votes = rng.normal(size=(40, 16)) * np.linspace(3, 0.1, 16)
    c = rng.uniform(0.05, 0.2, size=(3, 40))
    mean, axes, points, centres = projected_votes(votes, c)
    np.testing.assert_allclose(mean, vote_projection(votes)[0])
    np.testing.assert_allclose(axes, vote_projection(votes)[1])
    np.testing.assert_allclose(points, project(votes, mean, axes))
    np.testing.assert_allclose(centres, project(vote_centres(votes, c), mean, axes))
    assert points.shape == (40, 2) and centres.shape == (3, 2)


def test_the_votes_extent_holds_their_bulk_and_the_whole_path():
    points = np.stack([np.arange(101.0), np.zeros(101)], axis=1)  # x 0..100, y 0
    centres = np.array([[10.0, -1.0], [20.0, 4.0]])
    low, high = vote_extent(points, centres)
    np.testing.assert_allclose(low, [2 - 9.6, -1 - 0.5])  # x: percentiles 2..98 (span 96), y: the path's -1..4
    np.testing.assert_allclose(high, [98 + 9.6, 4 + 0.5])
    low, high = vote_extent(np.zeros((5, 2)), np.zeros((2, 2)))  # one spot: a tiny view around it
    np.testing.assert_allclose(high - low, [2e-7, 2e-7])


def test_couplings_colour_from_their_1st_to_99th_percentile_in_steps():
    c = np.linspace(0.0, 1.0, 101)
    assert coupling_scale(c) == pytest.approx((0.01, 0.99))
    assert coupling_scale(np.full(7, 0.1)) == pytest.approx((0.1, 0.1 + 1e-6))
    steps = colour_steps(np.array([-1.0, 0.0, 0.5, 0.74, 1.0, 2.0]), 0.0, 1.0, 5)
    assert steps.tolist() == [0, 0, 2, 3, 4, 4] and steps.dtype.kind == "i"


def test_the_capsules_in_a_rectangle_and_the_pixels_they_see():
    points = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5], [0.5, 3.0]])
    assert in_rectangle(points, (0.0, 0.0), (1.0, 1.0)).tolist() == [True, True, False, False]  # edges count
    assert in_rectangle(points, (0.4, 0.4), (2.0, 3.0)).tolist() == [False, True, True, True]
    u_lengths = np.zeros(1152, np.float32)
    u_lengths[[0, 36, 7]] = 0.5, 0.25, 0.75  # types 0 and 1 at (0, 0); type 0 at (1, 1)
    chosen = np.zeros(1152, bool)
    chosen[[0, 36]] = True
    grid = np.zeros((6, 6), np.float32)
    grid[0, 0] = 0.75
    spread = chosen_fields(u_lengths, chosen)
    assert spread.shape == (28, 28) and spread.dtype == np.float32
    np.testing.assert_allclose(spread, receptive_overlay(grid))
    assert spread[16, 16] == pytest.approx(0.75) and spread[17, 17] == 0


def test_the_class_maps_of_every_iteration_and_their_departure_from_an_even_split():
    rng = np.random.default_rng(1)
    u_lengths = rng.uniform(0, 1, 1152).astype(np.float32)
    later = rng.dirichlet(np.ones(10), size=1152).astype(np.float32)
    c = np.stack([np.full((1152, 10), 0.1, np.float32), later])  # (R = 2, I, J): uniform, then routed
    maps, departures, uniform = iteration_maps(u_lengths, c)
    assert maps.shape == departures.shape == (2, 10, 6, 6) and uniform.tolist() == [True, False]
    np.testing.assert_allclose(maps[1], class_maps(u_lengths, later), rtol=1e-6)
    np.testing.assert_allclose(departures[1], class_maps(u_lengths, later - 0.1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(departures[0], 0, atol=1e-5)  # an even split departs from nothing
    np.testing.assert_allclose(departures.sum(axis=1), 0, atol=1e-3)  # c_i sums to 1: the departures to 0


def test_colour_levels_span_the_values_or_centre_on_zero():
    values = np.array([[0.2, np.nan], [-0.5, 0.4]])
    assert colour_levels(values) == (-0.5, 0.4)
    assert colour_levels(values, symmetric=True) == (-0.5, 0.5)
    assert colour_levels(np.full(4, 0.3)) == pytest.approx((0.299, 0.301))  # flat: 1e-3 each way
    assert colour_levels(np.zeros(4), symmetric=True) == (-1e-3, 1e-3)


def test_a_sweep_spans_its_parameters_range_and_names_the_dimensions_that_move():
    values = sweep_values("rotation", 21)
    assert values.dtype == np.float32 and (values[0], values[10], values[-1]) == (-90, 0, 90)
    assert [float(sweep_values(name, 3)[-1]) for name, *_ in PARAMETERS] == [high for *_, high, _ in PARAMETERS]
    with pytest.raises(KeyError, match="warp"):
        sweep_values("warp", 3)
    poses = np.zeros((5, 16), np.float32)
    poses[:, 3] = np.linspace(-0.2, 0.2, 5)  # range 0.4
    poses[:, 9] = [0.0, 0.1, 0.0, 0.1, 0.0]  # range 0.1
    poses[:, 12] = np.linspace(0.5, 0.0, 5)  # range 0.5
    assert [d for d, _ in moving_dimensions(poses)] == [12, 3, 9]
    assert [swing for _, swing in moving_dimensions(poses, 2)] == pytest.approx([0.5, 0.4])
    figures = sweep_figures(poses, np.linspace(0.9, 0.1, 5))
    assert (figures["d0"], figures["d1"], figures["d2"]) == (12, 3, 9)
    assert figures["range0"] == pytest.approx(0.5) and figures["high"] == pytest.approx(float(np.linalg.norm(poses[0])))
    assert (figures["cnn_low"], figures["cnn_high"]) == pytest.approx((0.1, 0.9)) and "cnn_low" not in sweep_figures(
        poses
    )


def test_a_readout_names_a_capsule_by_its_index_and_place_and_reads_its_routing():
    assert capsule_index(10, 1, 3, 6) == 10 * 36 + 1 * 6 + 3 and capsule_index(10, 8, 3, 10) == 1083
    assert capsule_place(1083, 3200) == {"i": 1083, "t": 10, "y": 8, "x": 3}

    class Trace:
        u_lengths = np.linspace(0, 1, 1152, dtype=np.float32)
        c = np.random.default_rng(0).random((3, 1152, 10), dtype=np.float32)
        b = np.random.default_rng(1).random((3, 1152, 10), dtype=np.float32)

    figures = capsule_figures(Trace, 400, 7, 1)
    place = {"i": 400, "t": 11, "y": 0, "x": 4}
    assert figures == {
        **place,
        "u": Trace.u_lengths[400],
        "j": 7,
        "r": 2,
        "c": Trace.c[1, 400, 7],
        "b": Trace.b[1, 400, 7],
    }


def test_the_entropy_plot_reaches_ln_10_and_keeps_a_share_of_its_height_above_it():
    low, high = entropy_extent(np.array([2.0, 1.0, 0.5]), 0.2)
    span = UNIFORM_ENTROPY - 0.5
    assert low == pytest.approx(UNIFORM_ENTROPY - 1.05 * span)
    assert (high - UNIFORM_ENTROPY) / (high - low) == pytest.approx(0.2)
    flat = entropy_extent(np.full(1, UNIFORM_ENTROPY), 0.0)  # R = 1: a span of 1e-3 under ln 10
    assert flat == pytest.approx((UNIFORM_ENTROPY - 1.05e-3, UNIFORM_ENTROPY))


def test_the_fields_glow_orange_over_the_dimmed_input():
    image = np.array([[0.0, 1.0], [0.5, 0.0]], np.float32)
    spread = np.array([[2.0, 0.0], [0.0, 1.0]], np.float32)
    rgb = fields_image(image, spread)
    assert rgb.shape == (2, 2, 3)
    np.testing.assert_allclose(rgb[0, 0], [0.6, 0.35, 0.0])  # full glow on black
    np.testing.assert_allclose(rgb[0, 1], [0.55, 0.55, 0.55])  # ink alone, dimmed
    np.testing.assert_allclose(rgb[1, 1], [0.3, 0.175, 0.0])  # half the largest glow
    np.testing.assert_allclose(fields_image(image, np.zeros((2, 2))), np.stack([image * 0.55] * 3, -1))


def test_the_readouts_say_a_cell_a_capsule_and_a_vote():
    maps, departures = np.zeros((2, 10, 6, 6)), np.zeros((2, 10, 6, 6))
    maps[1, 7, 2, 3], departures[1, 7, 2, 3] = 1.25, -0.5
    assert cell_readout(maps, departures, 7, 2, 3, 1) == (
        "digit 7, grid y=2 x=3, iteration 2: Σ_type ‖u_i‖ c_ij = 1.2500, Σ_type ‖u_i‖ (c_ij − 0.1) = -0.5000"
    )

    class Trace:  # primary capsule 40 (type 1, y 0, x 4 on a 6 x 6 grid), digit 2, iteration 1 of 1
        u_lengths = np.full(1152, 0.5, np.float32)
        c, b = np.full((1, 1152, 10), 0.25, np.float32), np.full((1, 1152, 10), 2.0, np.float32)
        u_hat, v = np.zeros((1152, 10, 16), np.float32), np.zeros((1, 10, 16), np.float32)

    Trace.u_hat[40, 2, :2], Trace.v[0, 2, :2] = (3.0, 1.0), (0.5, -1.0)  # û·v = 1.5 - 1
    place = "capsule i=40 (type 1, y=0, x=4)"
    assert capsule_readout(Trace, 40, 2, 0) == f"{place}: ‖u_i‖ = 0.5000, c_i2 = 0.2500, b_i2 = 2.0000 at iteration 1"
    assert vote_readout(Trace, 40, 2, 0) == (
        f"{place}, ‖u_i‖ = 0.5000; for digit 2 at iteration 1: c_ij = 0.2500, b_ij = 2.0000, agreement û·v_j = +0.5000"
    )
    assert primary_readout(Trace.u_lengths, 40) == f"{place}<br>‖u_i‖ = 0.5000"
    assert capsule_readout(Trace, 40, 2, 0, tr=lambda text, **f: "T:" + text.format(**f)).startswith("T:capsule")


def test_a_selected_capsules_coupling_path_reads_each_iteration_and_where_it_sends_most():
    class Trace:  # capsule 7 of 1152 over 3 iterations: to digit 4, even, then 0.3, then 0.6
        c = np.full((3, 1152, 10), 0.1, np.float32)

    Trace.c[1, 7] = 0.7 / 9
    Trace.c[1, 7, 4] = 0.3
    Trace.c[2, 7] = 0.4 / 9
    Trace.c[2, 7, 4] = 0.6
    np.testing.assert_allclose(Trace.c.sum(-1), 1.0, rtol=1e-6)  # couplings: a distribution over the digits
    assert coupling_path(Trace, 7, 4) == "c_i4 over the iterations: 0.100 → 0.300 → 0.600; the most, 0.600, to digit 4"
    assert coupling_path(Trace, 7, 0).startswith("c_i0 over the iterations: 0.100 → 0.078 → 0.044; the most, 0.600")


def test_the_class_maps_caption_says_what_they_show_and_how_to_read_the_colours():
    mass, departure = "Σ_type ‖u_i‖ c_ij", "Σ_type ‖u_i‖ (c_ij − 0.1)"
    assert maps_caption(None, False, False, False) == f"class maps {mass}<br>"
    assert maps_caption(0, True, True, False) == (
        f"class maps {departure}, iteration 1<br>every c_ij is 0.1 (uniform), so every map is 0"
    )
    assert maps_caption(0, False, True, True).endswith("every c_ij is 0.1 (uniform), so the ten maps are the same")
    assert maps_caption(2, True, False, True).endswith(
        "iteration 3<br>red: more than an even split (0.1) sends, blue: less"
    )
    assert maps_caption(2, False, False, True).endswith("colours from all iterations' values")
    assert (
        maps_caption(2, False, False, False)
        == f"class maps {mass}, iteration 3<br>colours from this iteration's values"
    )


def test_a_sweeps_summary_spans_the_length_the_cnn_and_the_dimensions_that_move():
    poses = np.zeros((3, 16), np.float32)
    poses[:, 0] = (0.3, 0.4, 0.5)  # length 0.3..0.5, range 0.2
    poses[:, 5] = (0.0, 0.1, 0.0)  # range 0.1
    poses[:, 9] = (0.0, 0.0, 0.05)  # range 0.05
    moving = "the dimensions that move most: d0 (range 0.20), d5 (range 0.10), d9 (range 0.05)"
    assert sweep_summary(poses, 4) == f"length 0.30–0.50 over the sweep; {moving}"
    summary = sweep_summary(poses, 4, np.array([0.9, 0.5, 0.25]))
    assert summary == f"length 0.30–0.50 over the sweep; CNN p(4) 0.25–0.90; {moving}"


def test_a_sweep_says_the_unbroken_run_around_the_value_set_where_the_input_reads_as_the_digit():
    values = np.array([-40.0, -20.0, 0.0, 20.0, 40.0, 60.0])
    lengths = np.full((6, 10), 0.05)
    lengths[:, 7] = (0.3, 0.6, 0.9, 0.8, 0.4, 0.7)  # under 0.5 at -40 and 40: two runs, 60 apart
    lengths[3, 1] = 0.85  # at 20 capsule 1 is longer: read as a 1 there
    assert recognised_span(values, lengths, 7, 0.0) == (-20.0, 0.0)
    assert recognised_span(values, lengths, 7, 55.0) == (60.0, 60.0)
    assert recognised_span(values, lengths, 7, 38.0) is None  # nearest 40, where 7 is short
    assert recognition_line(values, lengths, 7, 0.0, "°") == "read as 7 from -20° to 0°"
    assert recognition_line(values, lengths, 7, 40.0) == "not read as 7 at the value set"
    lengths[:, 7], lengths[3, 1] = 0.9, 0.05
    assert recognition_line(values, lengths, 7, 0.0) == "read as 7 over the whole sweep"
    lengths[2, 7] = 0.5  # exactly the threshold counts
    assert recognised_span(values, lengths, 7, 0.0) == (-40.0, 60.0)


def test_a_plot_range_rounds_out_to_its_step_within_its_limits():
    assert rounded_extent(-0.3, 0.6, 0.25) == (-0.5, 0.75)
    assert rounded_extent(-0.3, 1.6, 0.25, limits=(-1.0, 1.0)) == (-0.5, 1.0)
    assert rounded_extent(0.3, 0.3, 0.25) == (0.25, 0.5)  # flat: one step around it
    assert rounded_extent(1.0, 1.0, 0.25, limits=(-1.0, 1.0)) == (0.75, 1.0)  # at the limit: the step below


def test_labelled_ticks_take_the_next_1_2_5_step():
    assert tick_spacing(0.3) == pytest.approx((0.5, 0.1))
    assert tick_spacing(1.5) == pytest.approx((2.0, 1.0))  # after a 2: halves
    assert tick_spacing(7.0) == pytest.approx((10.0, 2.0))
    assert tick_spacing(1.0) == pytest.approx((1.0, 0.2))
