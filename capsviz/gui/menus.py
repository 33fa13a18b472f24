"""The window's menus: File (input, checkpoints, export, quit), View (a toggle per dock,
and the kind of model explored: single digits or overlapping digits) and Help (About)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow

# the File menu, in order: action key, text, shortcut (None: none)
FILE_ACTIONS = (
    ("open_image", "Open &image…", QKeySequence.StandardKey.Open),
    ("paste", "&Paste image", QKeySequence.StandardKey.Paste),
    ("open", "Open &checkpoint…", "Ctrl+Shift+O"),
    ("open_baseline", "Open comparison C&NN…", None),
    ("save", "&Save checkpoint as…", QKeySequence.StandardKey.SaveAs),
    ("export_figures", "Export &figures (PNG + SVG)…", None),
    ("export_trace", "Export routing &trace (.npz)…", None),
    ("download", "&Download MNIST…", None),
    ("quit", "&Quit", QKeySequence.StandardKey.Quit),
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
        What each action does, by key: the keys of ``FILE_ACTIONS``, ``"about"``, and
        ``"digits"`` and ``"pairs"`` (View → Single digits, Overlapping digits: checkable, one
        of the two checked).
    docks : iterable of QDockWidget
        The docks the View menu shows and hides, in menu order.

    Returns
    -------
    dict
        The actions, by key (as ``slots``).

    Raises
    ------
    ValueError
        If ``slots`` lacks an action's key or has a key no action uses.
    """
    keys = {key for key, _, _ in FILE_ACTIONS} | {"about", "digits", "pairs"}
    if set(slots) != keys:
        raise ValueError(f"slots needs exactly the keys {sorted(keys)}, got {sorted(slots)}")
    actions: dict[str, QAction] = {}
    file_menu = window.menuBar().addMenu("&File")
    for key, text, shortcut in FILE_ACTIONS:
        act = QAction(text, window, triggered=slots[key])
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        file_menu.addAction(act)
        actions[key] = act
    view_menu = window.menuBar().addMenu("&View")
    for dock in docks:
        view_menu.addAction(dock.toggleViewAction())
    view_menu.addSeparator()
    kinds = QActionGroup(window)
    for key, text in (("digits", "&Single digits (MNIST)"), ("pairs", "&Overlapping digits (MultiMNIST)")):
        act = QAction(text, kinds, checkable=True, triggered=slots[key])
        view_menu.addAction(act)
        actions[key] = act
    help_menu = window.menuBar().addMenu("&Help")
    about = QAction("&About capsviz", window, triggered=slots["about"])
    help_menu.addAction(about)
    actions["about"] = about
    return actions
