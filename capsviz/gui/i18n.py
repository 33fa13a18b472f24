"""The app's languages (English, Simplified Chinese) through Qt's translation system.

Every text the app puts on screen is written in English in the code, marked with
:func:`tr`, extracted by ``pyside6-lupdate`` into ``translations/capsviz_zh_CN.ts`` and
compiled by ``pyside6-lrelease`` into the ``.qm`` the app loads (``python tools/translations.py``
does both). :func:`install` switches the language of the running app: Qt's own texts (dialog
buttons) and ours, and the locale that numbers are written in. The widgets already on screen
follow through :func:`retranslate`, which gives every text a widget shows (labels, buttons,
tooltips, titles, menu entries, combo-box items, plot titles and axis labels) the current
language's translation of its English source; texts a view composes from figures are
composed again by the view (its redraws).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from capsviz import texts

TRANSLATIONS = Path(__file__).resolve().parent / "translations"
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}  # language -> its name, in itself
_sources: dict[str, tuple[str, dict]] = {}  # a text tr() gave -> (its English source, its fields)
KEPT = 20_000  # texts _sources keeps at most
_translators: list[QTranslator] = []  # those installed now
_language = "en"


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 (the name Qt's lupdate looks for)
    """Mark ``text`` for translation in ``context`` without translating it here."""
    return text


# pyqtgraph's own texts on the plots, by the context pyqtgraph translates them in
PYQTGRAPH = {QT_TRANSLATE_NOOP("GraphicsScene", "Export..."): "GraphicsScene"}
# Qt's own file dialog (where the desktop offers no native one): the labels Qt's Chinese
# catalogue (qtbase_zh_CN) lacks, translated in capsviz's, which Qt consults too
QT_FILE_DIALOG = (QT_TRANSLATE_NOOP("QFileDialog", "&Look in:"), QT_TRANSLATE_NOOP("QFileDialog", "Files of &type:"))


def tr(text: str, **fields) -> str:
    """``text`` (an English source) in the app's language, its ``{name}`` fields filled in from
    ``fields`` (``str.format``: ``tr("{n:,} of {total:,}", n=5, total=10)``). lupdate files these
    calls under the empty context; :func:`retranslate` can give a text made here the next
    language's translation later."""
    out = QCoreApplication.translate("", text)
    if fields:
        out = out.format(**fields)
    if out != text:
        _keep(out, text, fields)
    return out


def _keep(shown: str, source: str, fields: dict) -> None:
    if any(shown == str(value) for value in fields.values()):
        return  # a translation that is one of its fields ("a {k}" -> "{k}"): "4" may be any 4
    if len(_sources) >= KEPT:  # the oldest go: views compose new texts as the input changes
        for old in list(_sources)[: KEPT // 2]:
            del _sources[old]
    _sources[shown] = (source, fields)


def made_from(text: str, part: str) -> None:
    """Note that ``text`` is a text composed around ``part`` (a text :func:`tr` gave, or an
    English source), as a plot's title with its key under it: :func:`retranslated` gives
    ``text`` the next language's ``part``, which the widget composes its text from again."""
    if text != part:
        _keep(text, *_sources.get(part, (part, {})))


def language() -> str:
    """The language installed: a key of :data:`LANGUAGES`."""
    return _language


def system_language() -> str:
    """The language the system locale asks for (``zh_CN`` for a Chinese one, else ``en``:
    :func:`capsviz.texts.language_of`, as the command line reads its locale)."""
    return texts.language_of(QLocale.system().name())


def install(name: str) -> None:
    """Make ``name`` (a key of :data:`LANGUAGES`) the app's language: our translations and Qt's
    own, and numbers in its locale. Needs a QCoreApplication; ``ValueError`` for another name,
    ``FileNotFoundError`` when the compiled translations are missing."""
    global _language
    if name not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {name!r}")
    app = QCoreApplication.instance()
    for translator in _translators:
        app.removeTranslator(translator)
    _translators.clear()
    if name != "en":
        ours = QTranslator(app)
        if not ours.load(str(TRANSLATIONS / f"capsviz_{name}.qm")):
            raise FileNotFoundError(
                f"{TRANSLATIONS / f'capsviz_{name}.qm'}: cannot load (python tools/translations.py)"
            )
        qt = QTranslator(app)
        if qt.load(f"qtbase_{name}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            _translators.append(qt)
        _translators.append(ours)
        for translator in _translators:
            app.installTranslator(translator)
    QLocale.setDefault(QLocale(name if name != "en" else "en_US"))
    texts.set_language(name)  # the core's messages (errors shown in dialogs) in the same language
    _language = name


def missing_font(name: str) -> str:
    """A line saying that no installed font has language ``name``'s characters (Qt would draw
    each as an empty box), with what to install; "" where one has, or for English. The line
    is English, which every font draws. Needs a QGuiApplication."""
    from PySide6.QtGui import QFontDatabase

    if name != "zh_CN" or QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese):
        return ""
    return (
        "No installed font has Chinese characters, so the Chinese texts show as empty boxes: "
        "install one (Debian, Ubuntu: sudo apt install fonts-noto-cjk) and start capsviz again."
    )


Origin = tuple  # (English source, {field: value, or the Origin of a field that is a text})


def origin(text: str, _depth: int = 0) -> Origin:
    """What ``text`` was made from: (its English source, its fields), a field that is a text
    :func:`tr` gave given as its own origin. A text :func:`tr` did not give (an English
    source, a number) is its own source. Right at once after the :func:`tr` call that gave
    ``text``; later, two sources with the same translation ("votes" and "Votes") give the
    same text, and the one made last is taken."""
    source, fields = _sources.get(text, (text, {}))
    if _depth < 4:
        fields = {k: origin(v, _depth + 1) if isinstance(v, str) and v != text else v for k, v in fields.items()}
    return source, fields


def composed(made_of: Origin) -> str:
    """The text of an :func:`origin` in the language installed now."""
    source, fields = made_of
    if source in PYQTGRAPH:
        out = QCoreApplication.translate(PYQTGRAPH[source], source)
        if out != source:
            _keep(out, source, {})
        return out
    return tr(source, **{k: composed(v) if isinstance(v, tuple) else v for k, v in fields.items()})


def retranslated(text: str) -> str:
    """``text`` as :func:`tr` would give it in the language installed now: a text :func:`tr`
    gave (in any language) made again from its source and fields (those that are texts
    retranslated too), an English source translated; any other text as it is."""
    return composed(origin(text))


def text_slots(root) -> Iterator[tuple[object, str, Callable[[], str], Callable[[str], None]]]:
    """Every text ``root`` (a QWidget) and its children show: (object, what, get, set) for labels, buttons,
    tooltips, window and dock titles, group boxes, spin boxes' prefixes, suffixes and special-value
    texts, combo-box items, tabs, menus and actions,
    and the titles, labels and axis labels of the pyqtgraph plots among them."""
    import pyqtgraph as pg
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import (
        QAbstractButton,
        QComboBox,
        QDockWidget,
        QDoubleSpinBox,
        QGroupBox,
        QLabel,
        QMenu,
        QSpinBox,
        QTabBar,
        QWidget,
    )

    for w in (root, *root.findChildren(QWidget)):
        yield w, "tooltip", w.toolTip, w.setToolTip
        if isinstance(w, (QLabel, QAbstractButton)):
            yield w, "text", w.text, w.setText
        if isinstance(w, QDockWidget) or w.isWindow():  # the root, and the dialogs among its children
            yield w, "title", w.windowTitle, w.setWindowTitle
        if isinstance(w, (QGroupBox, QMenu)):
            yield w, "title", w.title, w.setTitle
        if isinstance(w, (QSpinBox, QDoubleSpinBox)):
            yield w, "prefix", w.prefix, w.setPrefix
            yield w, "suffix", w.suffix, w.setSuffix
            yield w, "special value", w.specialValueText, w.setSpecialValueText
        if isinstance(w, QComboBox):
            for i in range(w.count()):
                yield w, f"item {i}", lambda w=w, i=i: w.itemText(i), lambda t, w=w, i=i: w.setItemText(i, t)
        if isinstance(w, QTabBar):
            for i in range(w.count()):
                yield w, f"tab {i}", lambda w=w, i=i: w.tabText(i), lambda t, w=w, i=i: w.setTabText(i, t)
        if isinstance(w, pg.GraphicsView):
            yield from _plot_slots(w)
    for action in root.findChildren(QAction):
        yield action, "text", action.text, action.setText


def _plot_slots(view) -> Iterator[tuple[object, str, Callable[[], str], Callable[[str], None]]]:
    import pyqtgraph as pg

    for item in view.scene().items():
        if isinstance(item, pg.LabelItem):
            yield item, "label", lambda item=item: item.text, item.setText
        elif isinstance(item, pg.AxisItem) and item.labelText:
            yield item, "axis", lambda item=item: item.labelText, lambda t, item=item: item.setLabel(t, item.labelUnits)
        elif isinstance(item, pg.InfLineLabel):  # its text is made from its format when shown or moved
            yield item, "text", lambda item=item: item.format, item.setFormat
        elif isinstance(item, pg.TextItem):
            yield item, "text", item.toPlainText, item.setText


# root -> {(id of an object, what): (the text retranslate gave it, its origin)}
_shown: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def retranslate(root) -> int:
    """Give every text of ``root`` (:func:`text_slots`) the language installed
    (:func:`retranslated`). Each text that is still the one this gave it last time is made
    again from the origin it had then, so texts whose sources share a translation each get
    their own back. Returns how many texts changed."""
    changed = 0
    before, after = _shown.get(root, {}), {}
    for obj, what, get, put in list(text_slots(root)):
        shown = get()
        if not shown:
            continue
        key = (id(obj), what)
        last = before.get(key)
        made_of = last[1] if last is not None and last[0] == shown else origin(shown)
        wanted = composed(made_of)
        if wanted != shown:
            put(wanted)
            changed += 1
        after[key] = (get(), made_of)
    _shown[root] = after
    return changed
