"""The window's menus: File (input, checkpoints, export, quit), View (a toggle per dock,
the kind of model explored: single digits or overlapping digits, and the language) and Help
(Tour, About)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow

from capsviz.gui.i18n import LANGUAGES, language, tr

# the File menu, in order: action key, text, shortcut (None: none)
FILE_ACTIONS = (
    ("open_image", tr("Open &image…"), QKeySequence.StandardKey.Open),
    ("paste", tr("&Paste image"), QKeySequence.StandardKey.Paste),
    ("open", tr("Open &checkpoint…"), "Ctrl+Shift+O"),
    ("open_baseline", tr("Open comparison C&NN…"), None),
    ("save", tr("&Save checkpoint as…"), QKeySequence.StandardKey.SaveAs),
    ("export_figures", tr("Export &figures (PNG + SVG)…"), None),
    ("export_trace", tr("Export routing &trace (.npz)…"), None),
    ("download", tr("&Download MNIST…"), None),
    ("quit", tr("&Quit"), QKeySequence.StandardKey.Quit),
)


def build_menus(
    window: QMainWindow, slots: dict[str, Callable[[], object]], docks: Iterable[QDockWidget]
) -> dict[str, QAction]:
    """Add the File, View and Help menus to ``window``'s menu bar.

    Parameters
    ----------
    window : QMainWindow
        Owner of the menu bar and the actions.
    slots : dict
        What each action does, by key: the keys of ``FILE_ACTIONS``, ``"about"``, ``"tour"``,
        ``"digits"`` and ``"pairs"`` (View → Single digits, Overlapping digits: checkable, one
        of the two checked), and ``"language"``, called with a key of
        :data:`~capsviz.gui.i18n.LANGUAGES` (View → Language: one checked).
    docks : iterable of QDockWidget
        The docks the View menu shows and hides, in menu order.

    Returns
    -------
    dict
        The actions, by key (as ``slots``; a language's action under ``language:NAME``).

    Raises
    ------
    ValueError
        If ``slots`` lacks an action's key or has a key no action uses.
    """
    keys = {key for key, _, _ in FILE_ACTIONS} | {"about", "tour", "digits", "pairs", "language"}
    if set(slots) != keys:
        raise ValueError(f"slots needs exactly the keys {sorted(keys)}, got {sorted(slots)}")
    actions: dict[str, QAction] = {}
    file_menu = window.menuBar().addMenu(tr("&File"))
    for key, text, shortcut in FILE_ACTIONS:
        act = QAction(text, window, triggered=slots[key])
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        file_menu.addAction(act)
        actions[key] = act
    view_menu = window.menuBar().addMenu(tr("&View"))
    for dock in docks:
        view_menu.addAction(dock.toggleViewAction())
    view_menu.addSeparator()
    kinds = QActionGroup(window)
    for key, text in (("digits", tr("&Single digits (MNIST)")), ("pairs", tr("&Overlapping digits (MultiMNIST)"))):
        act = QAction(text, kinds, checkable=True, triggered=slots[key])
        view_menu.addAction(act)
        actions[key] = act
    language_menu = view_menu.addMenu(tr("&Language"))
    languages = QActionGroup(window)
    for name, text in LANGUAGES.items():  # each named in itself
        act = QAction(text, languages, checkable=True, checked=name == language())
        act.triggered.connect(lambda _=False, name=name: slots["language"](name))
        language_menu.addAction(act)
        actions[f"language:{name}"] = act
    help_menu = window.menuBar().addMenu(tr("&Help"))
    for key, text in (("tour", tr("&Tour")), ("about", tr("&About capsviz"))):
        actions[key] = QAction(text, window, triggered=slots[key])
        help_menu.addAction(actions[key])
    return actions
