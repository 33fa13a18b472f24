"""The transforms ``capsviz robustness`` measures, as data (:mod:`capsviz.train.robustness`
has the recipe): the strengths of each sweep, their units, the ranges of the affine test
set and the kinds of test set. Imports no torch (the CLI's help lists the kinds)."""

from __future__ import annotations

from capsviz.texts import QT_TR_NOOP, english

SWEEPS: dict[str, tuple[float, ...]] = {
    "rotation": (0, 10, 20, 30, 40, 50, 60),  # degrees
    "scale": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5),  # factor 1 + s or 1 / (1 + s)
    "shear": (0, 10, 20, 30, 40),  # degrees along x
    "translation": (0, 1, 2, 3, 4, 5, 6),  # pixels along x or y
}
UNITS = {"rotation": "°", "scale": "", "shear": "°", "translation": " px"}
# the sweeps' names as people read them (English sources, translated where shown)
KIND_NAMES = {
    "rotation": QT_TR_NOOP("rotation"),
    "scale": QT_TR_NOOP("scale"),
    "shear": QT_TR_NOOP("shear"),
    "translation": QT_TR_NOOP("translation"),
}
# the affine test set: rotation ±20°, scale 0.8..1.2, shear ±12° (about ±0.2 as a slope), ±3 px each way
AFFINE_RANGES = {"rotation": (-20.0, 20.0), "scale": (0.8, 1.2), "shear": (-12.0, 12.0), "translation": (-3.0, 3.0)}
# the same ranges as the fields of the texts that name them (explanations.ROBUSTNESS)
AFFINE_FIELDS = {
    "rot": AFFINE_RANGES["rotation"][1],
    "s0": AFFINE_RANGES["scale"][0],
    "s1": AFFINE_RANGES["scale"][1],
    "sh": AFFINE_RANGES["shear"][1],
    "move": AFFINE_RANGES["translation"][1],
}
KINDS = (*SWEEPS, "affine")  # the sweeps, then the affine test set

# the headings of a kind's table, panel or plot (sweep_title)
AFFINE_TITLE = QT_TR_NOOP("affine test set")
SCALE_TITLE = QT_TR_NOOP("scale s (factor 1 + s or 1 / (1 + s))")  # strength s: grown by 1 + s or shrunk by it
SCALE_TITLE_SHORT = QT_TR_NOOP("scale s")
WITH_UNIT = QT_TR_NOOP("{kind} ({unit})")


def sweep_title(kind: str, tr=english, short: bool = False) -> str:
    """What a table, a panel or a plot of ``kind`` (one of :data:`KINDS`) is headed with:
    "rotation (°)", "affine test set", "scale s (factor 1 + s or 1 / (1 + s))" (``short``:
    "scale s", for a small panel, whose tooltip says the rest); ``tr``: see :mod:`capsviz.texts`. Raises
    ``KeyError`` for another kind."""
    if kind == "affine":
        return tr(AFFINE_TITLE)
    if kind == "scale":
        return tr(SCALE_TITLE_SHORT if short else SCALE_TITLE)
    unit = UNITS[kind].strip()
    return tr(WITH_UNIT, kind=tr(KIND_NAMES[kind]), unit=unit) if unit else tr(KIND_NAMES[kind])
