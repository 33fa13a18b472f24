"""A language switch reaches the texts composed from other texts: a template's fields that are
texts themselves, a plot's key under its title, the MNIST browser's composed lines."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from capsviz.data.mnist import MnistSplit
from capsviz.gui import i18n
from capsviz.gui.i18n import tr
from capsviz.gui.widgets.browser import MnistBrowser
from capsviz.gui.widgets.common import KeyEntry, SeriesKey
from tests.gui.events import settle


@pytest.fixture
def switch(qtbot):
    """install(language), then let the widgets see the LanguageChange events."""

    def to(language: str) -> None:
        i18n.install(language)
        QApplication.processEvents()

    yield to
    i18n.install("en")


def test_a_field_that_is_a_text_follows_the_language(qtbot, switch):
    label = QLabel(tr("{label} ({unit})", label=tr("rotate"), unit="°"))
    qtbot.addWidget(label)
    assert label.text() == "rotate (°)"
    switch("zh_CN")
    i18n.retranslate(label)
    assert label.text() == "旋转（°）"
    switch("en")
    i18n.retranslate(label)
    assert label.text() == "rotate (°)"


def test_a_plot_key_is_composed_again_in_the_next_language(qtbot, switch):
    plot = pg.PlotWidget(title=tr("capsule lengths ‖v_j‖"))
    qtbot.addWidget(plot)
    key = SeriesKey(plot, lead=tr("digit j:") + "&nbsp;")
    key.set_entries([KeyEntry(tr("capsule ‖v_j‖"), (), ("w",), "bar"), KeyEntry("CNN p(j)", (), ("w",), "bar")])
    assert "capsule lengths" in key.text and "digit j:&nbsp;" in key.text and "capsule ‖v_j‖" in key.text
    switch("zh_CN")
    i18n.retranslate(plot)
    assert key.title == "胶囊长度 ‖v_j‖" and "数字 j：&nbsp;" in key.text and "胶囊 ‖v_j‖" in key.text
    assert "CNN p(j)" in key.text and "capsule" not in key.text
    switch("en")
    i18n.retranslate(plot)
    assert key.title == "capsule lengths ‖v_j‖" and "digit j:&nbsp;" in key.text and "胶囊" not in key.text


def test_the_browser_composes_its_lines_again_in_the_next_language(qtbot, switch):
    browser = MnistBrowser()
    qtbot.addWidget(browser)
    labels = np.array([3, 5, 3, 7])
    browser.set_data(MnistSplit(np.zeros((4, 28, 28), np.uint8), labels), "MNIST test set")
    browser.set_predictions(np.array([3, 3, 3, 7]))
    browser.errors_only.setChecked(True)
    browser.select(1)
    assert browser.source.text() == "MNIST test set: 4 digits"
    assert browser.filter_label.text() == "browsing 1 digits (mistakes only)"
    assert browser.current_label.text() == "test image 1: label 5, predicted 3  ✗ (not the input)"
    switch("zh_CN")
    assert browser.source.text() == "MNIST 测试集：4 个数字" and browser.goto.prefix() == "序号 "
    assert browser.filter_label.text() == "正在浏览 1 个数字（只看错误）"
    assert browser.current_label.text() == "测试图像 1：标签 5，预测 3  ✗（不是当前输入）"
    browser.set_input_digit((browser.data, 1))  # now the input
    assert browser.current_label.text() == "测试图像 1：标签 5，预测 3  ✗"
    switch("en")
    assert browser.source.text() == "MNIST test set: 4 digits" and browser.goto.prefix() == "index "
    assert browser.current_label.text() == "test image 1: label 5, predicted 3  ✗"


def shown_texts(window, but=None) -> dict:
    """Every text ``window`` shows (i18n.text_slots), by (object, what); none of widget ``but``
    (the MNIST browser, whose lines wait for the test set that loads in the background)."""
    return {
        (id(obj), what): text
        for obj, what, get, _ in i18n.text_slots(window)
        if (text := get()) and not (but is not None and isinstance(obj, QWidget) and but.isAncestorOf(obj))
    }


def test_every_text_comes_back_after_a_round_trip_through_chinese(window, qtbot):
    # sources that share a translation: "Votes" and "votes", "predicted" and "prediction",
    # "rotation" and "rotate", "a {k}" and a plain digit ("a 4" -> "4")
    before = shown_texts(window)
    window.set_language("zh_CN")
    settle(qtbot, window)
    assert window.docks["votes"].windowTitle() == "投票" and window.pose_view.digit.itemText(0) == "预测（7）"
    window.set_language("en")
    settle(qtbot, window)
    after = shown_texts(window)
    assert {key: (text, after.get(key)) for key, text in before.items() if after.get(key) != text} == {}
    assert window.docks["votes"].windowTitle() == "Votes" and window.pose_view.digit.itemText(0) == "predicted (7)"


def test_a_window_started_in_chinese_reads_in_english_as_one_started_in_english(
    window, qtbot, tmp_path, monkeypatch, shipped_checkpoint
):
    from capsviz.gui.main_window import MainWindow

    from .conftest import temp_settings

    english = sorted(shown_texts(window, but=window.browser).values())
    monkeypatch.setattr(i18n, "system_language", lambda: "zh_CN")  # a Chinese system, no language chosen yet
    (tmp_path / "zh").mkdir()
    chinese = MainWindow(checkpoint=shipped_checkpoint, device="cpu", settings=temp_settings(tmp_path / "zh"))
    chinese.confirm_close = lambda: True
    qtbot.addWidget(chinese)
    chinese.resize(window.size())
    chinese.show()
    qtbot.waitUntil(lambda: chinese.docks_ready, timeout=5000)
    settle(qtbot, chinese)
    assert chinese.docks["votes"].windowTitle() == "投票" and chinese.actions["language:zh_CN"].isChecked()
    chinese.set_language("en")
    settle(qtbot, chinese)
    assert sorted(shown_texts(chinese, but=chinese.browser).values()) == english
    scale = chinese.routing_view.scale  # sized for the English text it shows
    assert scale.width() >= scale.fontMetrics().horizontalAdvance(scale.currentText())
