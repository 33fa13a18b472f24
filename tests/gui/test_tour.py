"""Help → Tour on the live app, in both languages, and its offer on the first start."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect, QSettings, Qt

from capsviz import lessons
from capsviz.gui import i18n
from tests.gui.conftest import temp_settings
from tests.gui.events import settle


def _step(qtbot, window, index):
    window.tour.show_step(index)
    settle(qtbot, window, timeout=30000)
    qtbot.waitUntil(lambda: window.tour.body.text() != i18n.tr("…"), timeout=30000)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_tour_runs_end_to_end_setting_up_each_example(window, qtbot, language):
    window.set_language(language)
    window.resize(1366, 768)  # a small laptop's screen: no step widens the window past it
    settle(qtbot, window)
    tour = window.tour
    qtbot.mouseClick(window.menuBar(), Qt.MouseButton.LeftButton)  # the menus exist and answer
    digit = window.routing_view.digit
    digit.setCurrentIndex(digit.findData(3))  # another capsule chosen: the tour shows the answer's
    window.actions["tour"].trigger()
    assert tour.index == 0 and tour.isVisible() and tour.frame.isVisible()
    assert digit.currentIndex() == 0 and window.pose_view.selected_digit() == window.core.inference.prediction
    offer = getattr(window, "tour_offer", None)
    assert offer is None or not offer.isVisible()  # the first start's link goes: the tour is taken
    seen = []
    for index, step in enumerate(lessons.STEPS):
        if index:
            qtbot.mouseClick(tour.next_button, Qt.MouseButton.LeftButton)
        settle(qtbot, window, timeout=30000)
        qtbot.waitUntil(lambda: tour.body.text() != i18n.tr("…"), timeout=30000)
        assert tour.index == index
        seen.append(tour.heading.text())
        assert tour.heading.text() == i18n.tr(step.title)
        assert "{" not in tour.body.text()  # every field filled from the live app
        # the highlighted view is the step's, and the panel stands inside the window
        target = tour.target()
        assert tour.frame.geometry().size() == target.size()
        assert window.rect().contains(tour.geometry()), (step.key, tour.geometry())
        if step.keep:  # the dock its text speaks of stays in view beside the highlighted one
            kept = window.docks[step.keep]
            assert not tour.geometry().intersects(QRect(kept.mapTo(window, QPoint(0, 0)), kept.size())), step.key
        assert (window.width(), window.height()) == (1366, 768), step.key
        inf = window.core.inference
        if step.key == "capsule":
            first = window.tour._test.images[0].astype(np.float32) / 255.0
            assert np.array_equal(window.core.input.image, first) and inf.prediction == 7
            assert f"({inf.prediction}, " in tour.body.text() or f"（{inf.prediction}，" in tour.body.text()
        elif step.key == "routing_first":
            assert window.routing_view.iteration.value() == 1
        elif step.key == "routing_effect":
            view = window.routing_view
            assert view.iteration.value() == view.iteration.maximum() and view.mark_button.isChecked()
            assert f"{len(view.effect.decisive):,}" in tour.body.text()
            assert f"{view.effect.entropy[-1]:.4f}" in tour.body.text()
        elif step.key == "follow":  # the most decisive capsule selected, ringed, and its figures said
            i = int(window.routing_view.effect.decisive[0])
            assert window.capsule_selection.index == i and window.dock_shown("votes")
            panel = window.votes_view.panels[0]
            assert len(panel.selected_ring.getData()[0]) == 1
            (x0, x1), (y0, y1) = panel.plot.getViewBox().viewRange()  # its vote in view, however far
            x, y = panel.points[i]
            assert x0 <= x <= x1 and y0 <= y <= y1, (panel.points[i], x0, x1, y0, y1)
            favoured = int(inf.c[-1, i].argmax())
            assert f"{i:,}" in tour.body.text() and f"{inf.c[-1, i, favoured]:.3f}" in tour.body.text()
            assert f"{inf.u_lengths[i]:.4f}" in tour.body.text()  # as the readouts: 0.9980, not 1.00
            # the votes and the overlay of the answer, the decisive marks off: the one frame on the input
            assert panel.j == inf.prediction and not window.routing_view.mark_button.isChecked()
        elif step.key == "pose":
            assert window.pose_view.offsets()[4] == pytest.approx(0.2) and window.dock_shown("pose")
        elif step.key == "transforms":
            assert window.transform_view.parameter.currentData() == "rotation" and window.dock_shown("transforms")
        elif step.key == "votes":
            assert window.dock_shown("votes")
        elif step.key == "pairs":
            assert window.kind == "multimnist" and window.core.inference.input.shape == (36, 36)
    assert len(set(seen)) == len(lessons.STEPS)
    assert not tour.next_button.isEnabled()
    qtbot.mouseClick(tour.back_button, Qt.MouseButton.LeftButton)  # back to the CNN, on single digits
    settle(qtbot, window, timeout=30000)
    assert tour.index == len(lessons.STEPS) - 2 and window.kind == "mnist"
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert tour.index is None and not tour.isVisible() and not tour.frame.isVisible()


def test_the_first_start_offers_the_tour_once(qtbot, shipped_checkpoint, tmp_path):
    from capsviz.gui.main_window import MainWindow

    for start in range(2):
        w = MainWindow(checkpoint=shipped_checkpoint, device="cpu", settings=temp_settings(tmp_path))
        qtbot.addWidget(w)
        w.show()
        qtbot.waitExposed(w)
        offered = hasattr(w, "tour_offer") and w.tour_offer.isVisible()
        assert offered == (start == 0)
        if start == 0:
            w.tour_offer.linkActivated.emit("tour")
            assert w.tour.index == 0 and not w.tour_offer.isVisible()
        w.close()
    assert QSettings(str(tmp_path / "capsviz.ini"), QSettings.Format.IniFormat).value("app/tour_offered") in (1, "1")


def test_the_language_switches_at_once_and_is_kept(window, qtbot, tmp_path):
    window.sources.show_sample(3)
    settle(qtbot, window)
    image = window.core.input.image.copy()
    model = window.core.model
    window.actions["language:zh_CN"].trigger()
    assert i18n.language() == "zh_CN" and window.actions["language:zh_CN"].isChecked()
    assert window.docks["routing"].windowTitle() == i18n.tr("Routing") != "Routing"
    assert window.menuBar().actions()[0].text() == i18n.tr("&File") != "&File"
    assert window.routing_view.mark_button.text() != "mark decisive"
    settle(qtbot, window)
    assert np.array_equal(window.core.input.image, image) and window.core.model is model  # nothing lost
    window.actions["language:en"].trigger()
    assert (
        window.docks["routing"].windowTitle() == "Routing" and window.routing_view.mark_button.text() == "mark decisive"
    )
    window.set_language("zh_CN")
    window.save_settings()
    assert window.settings.value("app/language") == "zh_CN"
