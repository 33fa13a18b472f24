"""The app in Simplified Chinese: the translations are complete and up to date."""

from __future__ import annotations

import re
import sys

import pytest

from capsviz import lessons
from capsviz.gui import i18n
from tests.conftest import ROOT
from tests.gui.events import settle

sys.path.insert(0, str(ROOT / "tools"))
import translations  # noqa: E402  (tools/translations.py)

# words that stay as they are in Chinese: names, units, file kinds, keys, functions
KEPT = {
    "capsviz", "mnist", "multimnist", "cnn", "pytorch", "qt", "capsnet", "png", "svg", "npz", "safetensors",
    "px", "nats", "ms", "mb", "gb", "kb", "cpu", "gpu", "cuda", "mps", "fp32", "bf16", "fp16", "esc", "ctrl",
    "shift", "del", "softmax", "ln", "max", "min", "exp", "log", "adam", "pca", "svd", "relu", "rgb", "json",
    "english",  # the language menu names each language in itself
    "python", "torch", "torchvision", "pyside6", "sabour", "frosst", "hinton", "arxiv",  # the About box's names
    "bfloat16", "float16", "float32", "float64",  # number formats
}  # fmt: skip
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")


def english_words(text: str) -> list[str]:
    """The English words of ``text``: runs of two or more letters that are not a name, a unit,
    a symbol (``c_ij``, ``u_i``, ``b``, ``r``), a word with a digit (``d12``, ``cu130``), a file
    name, a path, a command or a markup tag."""
    text = re.sub(r"<[^>]+>", " ", text)  # rich text tags
    text = re.sub(r"`[^`]*`|--[\w-]+", " ", text)  # commands and their options
    text = re.sub(r"\S*/\S*", " ", text)  # paths
    text = text.replace("Dynamic Routing Between Capsules", " ")  # the paper's title
    text = re.sub(r"&\w+;", " ", text).replace("&", "")  # entities, then menu mnemonics (C&NN)
    text = re.sub(r"\S+\.(safetensors|npz|png|svg|ini|log|qm|ts|py)\b", " ", text)  # file names
    text = re.sub(r"\b\w*_\w*\b", " ", text)  # symbols with an index: c_ij, u_i, v_j
    return [w for w in WORD.findall(text) if w.lower() not in KEPT and not re.search(r"\d", w)]


def english_texts(root) -> list[str]:
    """Every text of ``root`` (i18n.text_slots) that holds an English word, as 'what: text';
    not the notice that no font has Chinese characters, which is English on purpose."""
    found = []
    for obj, what, get, _ in i18n.text_slots(root):
        text = get()
        if text and english_words(text) and text != i18n.missing_font("zh_CN"):
            found.append(f"{type(obj).__name__} {obj.objectName() or ''} {what}: {text[:90]!r}")
    return found


@pytest.fixture
def chinese(window):
    window.set_language("zh_CN")
    yield window
    window.set_language("en")


def _walk(qtbot, window) -> list[str]:
    """The English texts of every dock of ``window`` (each tab brought to the front in turn)."""
    found = []
    for dock in window.docks.values():
        if dock.toggleViewAction().isEnabled():
            dock.show()
            dock.raise_()
    settle(qtbot, window, timeout=30000)
    found += english_texts(window)
    return found


def test_the_translations_are_those_of_the_code_and_compiled():
    assert translations.check("zh_CN") == []


def test_no_english_is_left_in_chinese(chinese, qtbot):
    window = chinese
    found = _walk(qtbot, window)
    window.tour.start()
    for index in range(len(lessons.STEPS)):
        window.tour.show_step(index)
        settle(qtbot, window, timeout=30000)
        found += [f"tour step {index}: {t}" for t in english_texts(window.tour)]
    window.tour.close_tour()
    window.errors.show_about()
    found += english_texts(window.errors.about_box)
    window.errors.about_box.close()
    window.show_kind("multimnist")
    qtbot.waitUntil(lambda: not window.core.loading, timeout=60000)
    found += _walk(qtbot, window)
    assert sorted(set(found)) == []


def test_qts_own_file_dialog_speaks_chinese_too(chinese, qtbot):
    """Where the desktop offers no native file dialog, Qt's own is shown: its labels come from
    Qt's catalogue, and the two it lacks from capsviz's."""
    from PySide6.QtWidgets import QFileDialog, QLabel

    dialog = QFileDialog(chinese, "", "", "PNG (*.png)")
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
    qtbot.addWidget(dialog)
    labels = [label.text() for label in dialog.findChildren(QLabel) if label.text()]
    assert labels == ["查找范围(&L)：", "文件名称(&N)：", "文件类型(&T)："]


def test_the_cores_errors_follow_the_language_of_the_app(chinese, qtbot, tmp_path):
    """A checkpoint the core refuses is refused in the app's language: the dialog's title from
    the app's catalogue, the reason from the core's (gettext, capsviz.texts)."""
    empty = tmp_path / "empty.safetensors"
    empty.write_bytes(b"")
    model = chinese.core.model
    assert not chinese.core.load_model(empty)
    box = chinese.errors.error_box
    assert box.isVisible() and box.text().splitlines()[0] == f"{empty}：文件为空或太短，不可能是 safetensors 检查点"
    assert chinese.core.model is model
    box.close()
    chinese.set_language("en")
    assert not chinese.core.load_model(empty)
    assert chinese.errors.error_box.text().splitlines()[0] == (
        f"{empty}: file is empty or too short to be a safetensors checkpoint"
    )
    chinese.errors.error_box.close()


def test_chinese_without_a_chinese_font_says_in_english_what_to_install(window, monkeypatch):
    """Where no installed font has Chinese characters (Qt would draw every text as boxes),
    switching to Chinese says so in English, with the package to install; with one, nothing."""
    from PySide6.QtGui import QFontDatabase

    bar = window.statusBar()
    for fonts, expected in (([], True), (["Noto Sans CJK SC"], False)):
        monkeypatch.setattr(QFontDatabase, "families", staticmethod(lambda *_, fonts=fonts: fonts))
        bar.clearMessage()
        window.set_language("zh_CN")
        try:
            shown = bar.currentMessage()
            if expected:
                assert shown.startswith("No installed font has Chinese characters") and "fonts-noto-cjk" in shown
            else:
                assert shown == ""
        finally:
            window.set_language("en")
        assert bar.currentMessage() == ""  # back in English, the notice is gone
