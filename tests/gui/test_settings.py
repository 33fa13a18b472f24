"""Settings persist between runs; a corrupt or foreign settings file falls back to defaults."""

from __future__ import annotations

import shutil

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from tests.gui.events import settle

from .conftest import temp_settings


def new_window(qtbot, settings, **kw):
    from capsviz.gui.main_window import MainWindow

    w = MainWindow(device="cpu", settings=settings, **kw)
    w.confirm_close = lambda: True
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: w.docks_ready, timeout=5000)  # tabbed docks and saved layout come after show
    settle(qtbot, w)
    return w


def test_choices_layout_and_checkpoint_persist(qtbot, tmp_path, shipped_checkpoint):
    mine = tmp_path / "mine.safetensors"
    shutil.copy(shipped_checkpoint, mine)
    w = new_window(qtbot, temp_settings(tmp_path))
    assert w.core.load_model(mine)
    w.input_panel.brush.setFocus()
    for _ in range(5):
        qtbot.keyClick(w.input_panel.brush, Qt.Key.Key_Up)
    assert w.input_panel.brush.value() == 27
    w.routing_view.iterations.setValue(5)
    w.routing_view.scale.setCurrentIndex(1)
    w.pose_view.range.setCurrentIndex(2)
    w.input_panel.polarity.setCurrentIndex(2)
    w.transform_view.parameter.setCurrentIndex(4)
    w.docks["lengths"].hide()
    w.resize(1300, 900)
    geometry = w.saveGeometry()
    w.close()

    again = new_window(qtbot, temp_settings(tmp_path))
    assert again.input_panel.brush.value() == 27 and again.input_panel.canvas.brush_width == 27
    assert again.routing_view.iterations.value() == 5 and again.core.inference.iterations == 5
    assert again.routing_view.scale.currentIndex() == 1 and again.pose_view.range.currentIndex() == 2
    assert again.input_panel.polarity.currentIndex() == 2 and again.transform_view.parameter.currentIndex() == 4
    assert again.core.checkpoint_path == mine.resolve() and "mine.safetensors" in again.model_label.text()
    assert not again.docks["lengths"].isVisible() and again.docks["pose"].isVisible()
    # the geometry comes back as saved (the offscreen test screen, 800 x 800, then clamps it)
    assert again.restored.geometry == geometry
    assert again.settings_notice == ""


def test_corrupt_settings_fall_back_to_defaults_with_a_notice(qtbot, tmp_path):
    (tmp_path / "capsviz.ini").write_bytes(b"\x00\xff[[[\x89PNG garbage\n=\n" * 50)
    w = new_window(qtbot, temp_settings(tmp_path))
    assert w.input_panel.brush.value() == 22 and w.routing_view.iterations.value() == 3
    assert w.core.inference is not None and w.core.inference.iterations == 3
    assert "settings" in w.settings_notice and "default" in w.settings_notice
    assert w.statusBar().currentMessage() == w.settings_notice  # on screen, not cleared by the first input
    assert w.statusBar().toolTip() == w.settings_notice  # whole, where the bar's room cuts it
    w.statusBar().clearMessage()
    assert w.statusBar().toolTip() == ""


def test_foreign_values_are_replaced_one_by_one(qtbot, tmp_path):
    s = QSettings(str(tmp_path / "capsviz.ini"), QSettings.Format.IniFormat)
    s.setValue("format", 1)
    s.setValue("input/brush", "banana")
    s.setValue("routing/iterations", 99)
    s.setValue("pose/range", 1)
    s.setValue("window/state", "not a layout")
    s.setValue("model/checkpoint", str(tmp_path / "gone.safetensors"))
    s.sync()
    w = new_window(qtbot, temp_settings(tmp_path))
    assert w.input_panel.brush.value() == 22 and w.routing_view.iterations.value() == 3
    assert w.pose_view.range.currentIndex() == 1  # the valid one is kept
    for key in ("input/brush", "routing/iterations", "window/state", "gone.safetensors"):
        assert key in w.settings_notice
    assert "capsnet_mnist" in w.model_label.text()  # the shipped model instead of the missing one


def test_another_programs_settings_file_is_not_read(qtbot, tmp_path):
    s = QSettings(str(tmp_path / "capsviz.ini"), QSettings.Format.IniFormat)
    s.setValue("input/brush", 50)
    s.setValue("editor/theme", "dark")
    s.sync()
    w = new_window(qtbot, temp_settings(tmp_path))
    assert w.input_panel.brush.value() == 22 and "not a capsviz settings file" in w.settings_notice


def test_a_layout_saved_on_another_screen_size_gives_the_default_layout(qtbot, tmp_path):
    from PySide6.QtCore import QSize

    w = new_window(qtbot, temp_settings(tmp_path))
    w.docks["lengths"].hide()
    w.resize(1300, 900)
    w.close()
    saved = temp_settings(tmp_path)
    screen = QApplication.primaryScreen().availableGeometry().size()
    assert saved.value("window/screen") == screen  # the screen the layout was saved on
    saved.setValue("window/screen", QSize(screen.width() + 566, screen.height() + 100))  # a larger one
    saved.sync()
    again = new_window(qtbot, temp_settings(tmp_path))
    assert again.docks["lengths"].isVisible()  # the default layout, not the one saved
    assert (again.width(), again.height()) == (1600, 1000)  # nor the saved geometry
    assert again.settings_notice == ""


def test_a_first_start_fits_the_window_to_the_screens_free_room(qtbot, tmp_path, monkeypatch):
    from capsviz.gui import main_window
    from capsviz.gui.main_window import WINDOW_SIZE, first_window_size

    assert first_window_size(2560, 1400).toTuple() == WINDOW_SIZE  # room: the size the docks are laid out for
    assert first_window_size(1366, 738).toTuple() == (1366, 738)  # a laptop: its free room
    assert first_window_size(1920, 1040).toTuple() == (1600, 1000)
    # on a screen (the offscreen platform has none: tests and tools keep WINDOW_SIZE), the window fits it
    screen = QApplication.primaryScreen().availableGeometry().size()
    monkeypatch.setattr(main_window.QApplication, "platformName", staticmethod(lambda: "xcb"))
    w = new_window(qtbot, temp_settings(tmp_path))
    assert screen.width() < WINDOW_SIZE[0] and w.isMaximized()  # a small screen: all of it
    assert w.width() <= max(screen.width(), w.minimumSizeHint().width())
