"""What the app remembers between runs (QSettings, an INI file in the user config folder,
e.g. ``~/.config/capsviz/capsviz.ini`` on Linux): window geometry and the screen size it
was saved on, the dock layout, the last MNIST checkpoint, brush width and view choices, the
language chosen and whether the tour was offered.

Every value is checked when read. A file Qt cannot parse, or values of the wrong type or
range (a settings file of another program or version), give the defaults for what is
wrong and a notice; nothing in the file can break the app.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QSize

from capsviz.view_settings import VIEW_KEYS, checked

FORMAT = 1
STATE_VERSION = 1  # QMainWindow.saveState/restoreState version of the dock layout


def default_settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "capsviz", "capsviz")


@dataclass
class Restored:
    """Checked values from the settings file; ``problems`` lists what was replaced by defaults."""

    geometry: QByteArray | None = None
    state: QByteArray | None = None  # the dock layout
    screen: tuple[int, int] | None = None  # (width, height) of the screen's available area at saving
    checkpoint: Path | None = None
    views: dict = field(default_factory=lambda: {k: d for k, (_, d, _) in VIEW_KEYS.items()})
    problems: list[str] = field(default_factory=list)


def read_settings(settings: QSettings) -> Restored:
    out = Restored()
    if settings.status() != QSettings.Status.NoError:
        out.problems.append(f"{settings.fileName()} cannot be read ({settings.status().name})")
        return out
    if not settings.allKeys():
        return out
    fmt = settings.value("format")
    if str(fmt) != str(FORMAT):
        out.problems.append(f"{settings.fileName()} is not a capsviz settings file of this version")
        return out
    for key, name in (("window/geometry", "geometry"), ("window/state", "state")):
        value = settings.value(key)
        if value is None:
            continue
        if isinstance(value, QByteArray) and not value.isEmpty():
            setattr(out, name, value)
        else:
            out.problems.append(key)
    screen = settings.value("window/screen")
    if isinstance(screen, QSize) and screen.isValid():
        out.screen = (screen.width(), screen.height())
    elif screen is not None:
        out.problems.append("window/screen")
    path = settings.value("model/checkpoint")
    if path:
        if isinstance(path, str) and Path(path).is_file():
            out.checkpoint = Path(path)
        elif isinstance(path, str):
            out.problems.append(f"the last checkpoint {path} is gone")
        else:
            out.problems.append("model/checkpoint")
    for key in VIEW_KEYS:
        value = settings.value(key)
        if value is None:
            continue
        try:
            out.views[key] = checked(key, value)
        except ValueError:
            out.problems.append(key)
    return out


def write_settings(
    settings: QSettings,
    geometry: QByteArray,
    state: QByteArray,
    checkpoint: Path | None,
    views: dict,
    screen: tuple[int, int] | None = None,
) -> None:
    """Replace the file's contents with these values (``screen`` None: left out)."""
    settings.clear()
    settings.setValue("format", FORMAT)
    settings.setValue("window/geometry", geometry)
    settings.setValue("window/state", state)
    if screen is not None:
        settings.setValue("window/screen", QSize(*screen))
    if checkpoint is not None:
        settings.setValue("model/checkpoint", str(checkpoint))
    for key, value in views.items():
        settings.setValue(key, value)
    settings.sync()
