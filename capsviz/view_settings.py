"""What the app remembers between runs, checked without Qt: each view choice's type, default
and check (:data:`VIEW_KEYS`), the check of a value read back from the settings file
(:func:`checked`), and of the whole file (:func:`restore`), which :mod:`capsviz.gui.settings`
applies to what it reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

FORMAT = 1  # the settings file's format, written beside the values

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


@dataclass
class Restored:
    """Checked values from the settings file; ``problems`` lists what was replaced by defaults."""

    geometry: bytes | None = None
    state: bytes | None = None  # the dock layout
    screen: tuple[int, int] | None = None  # (width, height) of the screen's available area at saving
    checkpoint: Path | None = None
    views: dict = field(default_factory=lambda: {k: d for k, (_, d, _) in VIEW_KEYS.items()})
    problems: list[str] = field(default_factory=list)


def restore(values: dict, file: str) -> Restored:
    """The checked values of settings file ``file``, read as ``values`` (key -> value;
    ``window/geometry`` and ``window/state`` as bytes, ``window/screen`` as (width, height)):
    what fails its check keeps its default and is named in ``problems``; a file of another
    format gives the defaults."""
    out = Restored()
    if not values:
        return out
    if str(values.get("format")) != str(FORMAT):
        out.problems.append(f"{file} is not a capsviz settings file of this version")
        return out
    for key, name in (("window/geometry", "geometry"), ("window/state", "state")):
        value = values.get(key)
        if isinstance(value, bytes) and value:
            setattr(out, name, value)
        elif value is not None:
            out.problems.append(key)
    screen = values.get("window/screen")
    if isinstance(screen, tuple):
        out.screen = screen
    elif screen is not None:
        out.problems.append("window/screen")
    path = values.get("model/checkpoint")
    if path and isinstance(path, str) and Path(path).is_file():
        out.checkpoint = Path(path)
    elif path:
        out.problems.append(f"the last checkpoint {path} is gone" if isinstance(path, str) else "model/checkpoint")
    for key in VIEW_KEYS:
        if values.get(key) is not None:
            try:
                out.views[key] = checked(key, values[key])
            except ValueError:
                out.problems.append(key)
    return out
