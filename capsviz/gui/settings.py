"""What the app remembers between runs (QSettings, an INI file in the user config folder,
e.g. ``~/.config/capsviz/capsviz.ini`` on Linux): window geometry and the screen size it
was saved on, the dock layout, the last MNIST checkpoint, brush width and view choices, the
language chosen and whether the tour was offered.

Every value is checked when read (:func:`capsviz.view_settings.restore`). A file Qt cannot
parse, or values of the wrong type or range (a settings file of another program or
version), give the defaults for what is wrong and a notice; nothing in the file can break
the app.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QSize

from capsviz.view_settings import FORMAT, Restored, restore

STATE_VERSION = 1  # QMainWindow.saveState/restoreState version of the dock layout


def default_settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "capsviz", "capsviz")


def read_settings(settings: QSettings) -> Restored:
    if settings.status() != QSettings.Status.NoError:
        return Restored(problems=[f"{settings.fileName()} cannot be read ({settings.status().name})"])
    values = {key: settings.value(key) for key in settings.allKeys()}
    for key, value in values.items():  # Qt's types as the plain values restore() checks
        if isinstance(value, QByteArray):
            values[key] = value.data()
        elif isinstance(value, QSize):
            values[key] = (value.width(), value.height()) if value.isValid() else "invalid"
    return restore(values, settings.fileName())


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
