"""The tour without Qt: where its panel stands beside the view a step is about."""

from __future__ import annotations

from capsviz.lessons import panel_place


def test_the_tour_panel_stands_right_of_the_view_else_left_of_it_else_over_it_inside_the_window():
    window, panel = (1000, 700), (400, 300)
    assert panel_place((100, 50, 500), window, panel) == (508, 50)  # right of it, level with its top
    assert panel_place((500, 600, 900), window, panel) == (92, 400)  # left of it, its bottom at the window's
    assert panel_place((100, -20, 950), window, panel) == (108, 0)  # over it, not above the window
    assert panel_place((0, 0, 1000), window, panel, gap=0) == (0, 0)
