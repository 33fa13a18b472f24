"""The view choices the app remembers between runs, without Qt: each key's type, default and
check (:data:`VIEW_KEYS`), and the check of a value read back from the settings file
(:func:`checked`), which :mod:`capsviz.gui.settings` applies to what it reads."""

from __future__ import annotations

# key -> (type, default, check)
VIEW_KEYS = {
    "input/brush": (int, 22, lambda v: 4 <= v <= 60),
    "input/ink": (int, 0, lambda v: 0 <= v <= 2),
    "routing/iterations": (int, 3, lambda v: 1 <= v <= 7),
    "routing/scale": (int, 2, lambda v: 0 <= v <= 2),  # an index of routing.SCALES; 2: departure from uniform
    "pose/range": (int, 0, lambda v: 0 <= v <= 2),
    "transforms/parameter": (int, 0, lambda v: 0 <= v <= 5),
    "app/language": (str, "", lambda v: v in ("", "en", "zh_CN")),  # "": the system locale's
    "app/tour_offered": (int, 0, lambda v: v in (0, 1)),  # the tour is offered on the first start only
}


def checked(key: str, value) -> object:
    """``value`` (as read from a settings file, often a str) as the type of view setting
    ``key``; ``ValueError`` when it is not one, or fails the key's check (``KeyError`` for
    another key)."""
    kind, _default, check = VIEW_KEYS[key]
    try:
        value = kind(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{key} cannot be {value!r}") from exc
    if not check(value):
        raise ValueError(f"{key} cannot be {value!r}")
    return value
