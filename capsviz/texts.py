"""Texts shown to people, marked for translation without Qt (the core stays Qt-free).

- :func:`QT_TR_NOOP` marks an English source that the app translates where it shows it
  (``pyside6-lupdate`` extracts the marked literals; :func:`capsviz.gui.i18n.tr` translates).
- A function that composes a sentence from figures takes a ``tr(template, **fields)``
  argument: :func:`english` (the default) fills the English template in; the app passes its
  translating :func:`capsviz.gui.i18n.tr`. The templates are written as ``tr("…", …)`` calls,
  so lupdate extracts them too.
"""

from __future__ import annotations


def QT_TR_NOOP(text: str) -> str:  # noqa: N802 (the name Qt's lupdate looks for)
    """Mark ``text`` for translation without translating it here."""
    return text


def english(text: str, **fields) -> str:
    """``text`` with its ``{name}`` fields filled in (``str.format``), untranslated."""
    return text.format(**fields) if fields else text
