"""The votes view: the trace's predictions u_hat_{j|i} projected, coloured by c_ij per
iteration, with v_j's path; hover and the rectangle read the trace."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QApplication

from capsviz.model.analysis import receptive_overlay

from .events import hover_vote, settle


def show_votes(qtbot, window):
    window.docks["votes"].raise_()
    qtbot.waitUntil(lambda: window.votes_view.isVisible(), timeout=3000)
    settle(qtbot, window)
    return window.votes_view


def test_the_dots_are_the_traces_votes_projected(qtbot, window):
    view = show_votes(qtbot, window)
    inf = window.core.inference
    panel = view.panels[0]
    j = inf.prediction
    assert panel.j == j and inf.u_hat.shape == (1152, 10, 16)
    # the trace's votes are W_ij u_i of the model's own weights
    w = window.core.model.digit_caps.W.detach().numpy()  # (I, J, 16, 8)
    np.testing.assert_allclose(inf.u_hat[:, j], np.einsum("idk,ik->id", w[:, j], inf.u), atol=1e-5)
    # the two principal axes of the votes (eigenvectors of their covariance), each signed so
    # that its largest component is positive, as the view's projection is documented
    votes = inf.u_hat[:, j].astype(np.float64)
    mean = votes.mean(axis=0)
    _, vectors = np.linalg.eigh(np.cov(votes - mean, rowvar=False))
    axes = vectors[:, ::-1][:, :2].T  # largest variance first
    axes *= np.sign(axes[np.arange(2), np.abs(axes).argmax(axis=1)])[:, None]
    x, y = panel.scatter.getData()
    np.testing.assert_allclose(np.stack([x, y], 1), (votes - mean) @ axes.T, rtol=1e-5, atol=1e-6)
    # v_j's path: the c-weighted mean of the votes at each iteration, s_j / sum_i c_ij
    c = inf.c[:, :, j].astype(np.float64)  # (R, I)
    centres = (c[:, :, None] * votes[None]).sum(axis=1) / c.sum(axis=1)[:, None]
    px, py = panel.path.getData()
    np.testing.assert_allclose(np.stack([px, py], 1), (centres - mean) @ axes.T, rtol=1e-5, atol=1e-6)


def test_stepping_the_iteration_recolours_by_c_and_moves_the_marker(qtbot, window):
    view = show_votes(qtbot, window)
    inf = window.core.inference
    panel = view.panels[0]
    view.iteration.setValue(1)
    first = [b.color().name() for b in panel.scatter.data["brush"]]
    assert len(set(first)) == 1  # iteration 1: every c_ij is 0.1
    view.iteration.setValue(inf.iterations)
    from capsviz.gui.widgets.common import VIRIDIS
    from capsviz.gui.widgets.votes import LEVELS

    last = [b.color().name() for b in panel.scatter.data["brush"]]
    c_all = inf.c[:, :, panel.j]
    low, top = np.percentile(c_all, [1, 99])  # the scale of every iteration of this input
    level = np.clip(np.round((c_all[-1] - low) / (top - low) * (LEVELS - 1)), 0, LEVELS - 1)
    expected = [VIRIDIS.map(k / (LEVELS - 1), mode="qcolor").name() for k in level.astype(int)]
    assert last == expected
    assert last[int(c_all[-1].argmax())] == VIRIDIS.map(1.0, mode="qcolor").name()  # the most coupled: brightest
    (mx,), (my,) = panel.current.getData()
    np.testing.assert_allclose((mx, my), panel.centres[-1], rtol=1e-6)


def test_hovering_a_vote_reads_c_b_and_the_agreement(qtbot, window):
    view = show_votes(qtbot, window)
    inf = window.core.inference
    panel = view.panels[0]
    r = view.iteration.value() - 1
    (x0, x1), (y0, y1) = panel.plot.getPlotItem().vb.viewRange()
    shown = (
        (panel.points[:, 0] > x0) & (panel.points[:, 0] < x1) & (panel.points[:, 1] > y0) & (panel.points[:, 1] < y1)
    )
    i = int(np.argmax(np.where(shown, inf.c[r, :, panel.j], -1)))  # the most coupled capsule in view
    plot_before = panel.plot.geometry()
    hover_vote(qtbot, panel, i)
    qtbot.waitUntil(lambda: "capsule i=" in view.readout.text(), timeout=3000)
    QApplication.processEvents()  # the layout's turn after the longer text
    assert panel.plot.geometry() == plot_before  # the readout had room: the dots stay under the mouse
    text = view.readout.text()
    k = int(text.split("capsule i=")[1].split(" ")[0])  # the dot under the mouse (maybe a neighbour)
    j = panel.j
    assert f"c_ij = {inf.c[r, k, j]:.4f}" in text and f"b_ij = {inf.b[r, k, j]:.4f}" in text
    assert f"agreement û·v_j = {float(inf.u_hat[k, j] @ inf.v[r, j]):+.4f}" in text
    assert np.linalg.norm(panel.points[k] - panel.points[i]) < 0.05 * np.ptp(panel.points[:, 0])
    panel.digit.setCurrentIndex(panel.digit.findData((j + 1) % 10))  # another capsule: that reading is gone
    settle(qtbot, window)
    assert panel.j == (j + 1) % 10
    assert view.readout.text() == "hover over a vote to read it, click it to select its capsule"


def test_the_rectangle_shows_the_receptive_fields_of_its_votes(qtbot, window):
    view = show_votes(qtbot, window)
    inf = window.core.inference
    panel = view.panels[0]
    low = panel.points.min(axis=0)
    panel.box.setPos(low - 1.0)
    panel.box.setSize(np.median(panel.points, axis=0) - low + 1.0)  # the lower-left part
    inside = view.selected(panel)
    assert 0 < inside.sum() < len(inside) and (panel.selected == inside).all()
    expected = receptive_overlay(np.where(inside, inf.u_lengths, 0).reshape(32, 6, 6).sum(axis=0))
    np.testing.assert_allclose(view.fields_map(panel), expected, rtol=1e-6)
    assert panel.fields.title.text.startswith(f"{int(inside.sum())} votes")


def test_the_iteration_steps_after_the_pair_mode_while_the_votes_are_behind_a_tab(qtbot, window):
    from PySide6.QtCore import Qt

    from .test_pairs import wait_for_pairs

    show_votes(qtbot, window)
    window.actions["pairs"].trigger()
    wait_for_pairs(qtbot, window)
    settle(qtbot, window)
    assert len(window.votes_view.panels[0].points) == 3200  # the pair's votes drawn
    window.docks["pose"].raise_()  # the votes behind the Pose tab
    settle(qtbot, window)
    window.actions["digits"].trigger()
    qtbot.waitUntil(lambda: window.core.dataset == "mnist" and window.core.inference is not None, timeout=10000)
    settle(qtbot, window)
    routing = window.routing_view
    qtbot.mouseClick(routing.prev_button, Qt.MouseButton.LeftButton)  # r = 2 on the shared slider
    settle(qtbot, window)
    assert window.errors.error_box is None and window.votes_view.iteration.value() == 2
    view = show_votes(qtbot, window)  # the digit's votes at the r chosen meanwhile
    panel = view.panels[0]
    assert len(panel.points) == 1152 and panel.drawn is window.core.inference
    assert view.iteration_label.text() == "r = 2 of 3"


def test_the_votes_take_the_routing_views_r_after_r_changed_behind_a_tab(qtbot, window):
    from PySide6.QtCore import Qt

    routing = window.routing_view
    window.docks["pose"].raise_()  # the votes behind the Pose tab
    settle(qtbot, window)
    qtbot.mouseClick(routing.prev_button, Qt.MouseButton.LeftButton)  # r = 2 of 3, shared
    settle(qtbot, window)
    for iterations in (4, 3):  # R = 4 moves the routing view to r = 4, R = 3 to r = 3
        routing.iterations.setValue(iterations)
        qtbot.waitUntil(lambda r=iterations: window.core.inference.iterations == r, timeout=5000)
        settle(qtbot, window)
    assert routing.iteration.value() == 3
    view = show_votes(qtbot, window)
    assert view.iteration.value() == 3 and view.iteration_label.text() == "r = 3 of 3"
