"""Texts shown to people, translated without Qt (the core and the command line stay Qt-free).

- :func:`_` gives an English source in the language of the messages, its ``{name}`` fields
  filled in: the command line's help, error lines and reports, and the errors of the core.
  The catalogue is Python's ``gettext`` domain ``capsviz``: ``capsviz/locale/<lang>/
  LC_MESSAGES/capsviz.po`` in the repository, compiled to ``.mo`` when the package is built
  (``setup.py``), and filled by ``python tools/translations.py``. The language follows the
  environment as gettext reads it (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``; any
  ``zh…`` reads as ``zh_CN``); the app sets its own with :func:`set_language`. A language
  without a catalogue, or a package built without one, reads in English.
- :func:`N_` marks a source kept in a constant; it is translated where it is shown.
- :func:`QT_TR_NOOP` marks an English source that the app translates where it shows it
  (``pyside6-lupdate`` extracts the marked literals; :func:`capsviz.gui.i18n.tr` translates).
- A function that composes the app's sentences from figures takes a ``tr(template, **fields)``
  argument: :func:`english` (the default) fills the English template in; the app passes its
  translating :func:`capsviz.gui.i18n.tr`. The templates are written as ``tr("…", …)`` calls,
  so lupdate extracts them.
"""

from __future__ import annotations

import gettext
import os
from functools import cache
from pathlib import Path

DOMAIN = "capsviz"
LOCALE_DIR = Path(__file__).with_name("locale")
LANGUAGES = ("en", "zh_CN")  # the languages with a catalogue ("en": the sources themselves)

_language: str | None = None  # set_language; None: the environment's


def QT_TR_NOOP(text: str) -> str:  # noqa: N802 (the name Qt's lupdate looks for)
    """Mark ``text`` for translation by the app without translating it here."""
    return text


def N_(text: str) -> str:  # noqa: N802 (the name gettext's extractors look for)
    """Mark ``text`` for the gettext catalogue without translating it here."""
    return text


def english(text: str, /, **fields) -> str:
    """``text`` with its ``{name}`` fields filled in (``str.format``), untranslated."""
    return text.format(**fields) if fields else text


def language_of(names: str | None) -> str:
    """The catalogue for a locale name or a ``LANGUAGE`` list (``zh_CN.UTF-8``, ``zh_TW``,
    ``de:zh``, ``C``, None): ``zh_CN`` for the first name that is Chinese, else ``en``."""
    for name in (names or "").split(":"):
        if name.lower().startswith("zh"):
            return "zh_CN"
        if name and name not in ("C", "POSIX") and not name.startswith(("C.", "POSIX.")):
            return "en"
    return "en"


def environment_language() -> str:
    """The language the environment asks for, read as gettext does: the first of
    ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES`` and ``LANG`` that is set (:func:`language_of`)."""
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        if os.environ.get(variable):
            return language_of(os.environ[variable])
    return "en"


def set_language(language: str | None) -> None:
    """Translate the messages into ``language`` (one of :data:`LANGUAGES`), or as the
    environment asks (None). ``ValueError`` for another name."""
    global _language
    if language is not None and language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {language!r}")
    _language = language


def language() -> str:
    """The language the messages are translated into (one of :data:`LANGUAGES`)."""
    return _language or environment_language()


@cache
def catalogue(language: str) -> gettext.NullTranslations:
    """The compiled catalogue of ``language``; the sources themselves for ``en`` or when the
    package was built without it."""
    if language == "en":
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[language], fallback=True)


def _(text: str, /, **fields) -> str:
    """``text`` in the language of the messages (:func:`language`), its ``{name}`` fields
    filled in (``str.format``); the English source where the catalogue lacks it."""
    translated = catalogue(language()).gettext(text)
    return translated.format(**fields) if fields else translated


def use_for_argparse() -> None:
    """Route argparse's own messages (``usage:``, ``options``, its errors) through this
    catalogue: argparse asks gettext's default domain, which becomes ``capsviz``, in the
    language of the messages."""
    path = LOCALE_DIR / language() / "LC_MESSAGES" / f"{DOMAIN}.mo"
    gettext.bindtextdomain(DOMAIN, str(LOCALE_DIR))
    gettext.textdomain(DOMAIN)
    if language() != "en" and path.is_file():
        os.environ["LANGUAGE"] = language()  # what gettext.gettext reads: the same language as _
