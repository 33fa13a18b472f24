"""The tour without Qt: where its panel stands beside the view a step is about."""

from __future__ import annotations

from capsviz.lessons import panel_place


def test_the_tour_panel_stands_right_of_the_view_else_left_of_it_else_over_it_inside_the_window():
    window, panel = (1000, 700), (400, 300)
    assert panel_place((100, 50, 500), window, panel) == (508, 50)  # right of it, level with its top
    assert panel_place((500, 600, 900), window, panel) == (92, 400)  # left of it, its bottom at the window's
    assert panel_place((100, -20, 950), window, panel) == (108, 0)  # over it, not above the window
    assert panel_place((0, 0, 1000), window, panel, gap=0) == (0, 0)


def test_the_tour_panel_leaves_the_view_its_text_also_speaks_of_visible_where_there_is_room():
    window, panel = (1000, 700), (400, 150)
    target = (0, 0, 500, 300)  # left, top, right, bottom: a view at the top left
    lengths = (520, 0, 800, 200)  # a view right of it, which the text speaks of too
    assert panel_place(target, window, panel) == (508, 0)  # without keep: right of the target, over that view
    assert panel_place(target, window, panel, keep=lengths) == (8, 308)  # under the target instead
    assert panel_place(target[:3], window, panel, keep=lengths) == (508, 0)  # no bottom given: as before
    low = (0, 500, 500, 640)  # no room under it, nothing clear of keep: as without keep
    assert panel_place(low, window, panel, keep=(0, 0, 1000, 700)) == panel_place(low, window, panel)
    assert panel_place(target, window, panel, keep=(0, 600, 100, 700)) == (508, 0)  # right of it leaves keep clear
