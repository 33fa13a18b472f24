"""Extract capsviz's texts and compile their translations: the app's with PySide6's own
Linguist tools, the command line's (and the Qt-free core's messages) with Babel into gettext.

    python tools/translations.py          lupdate: the app's texts -> capsviz/gui/translations/capsviz_zh_CN.ts
                                          (new texts come in unfinished, vanished ones go), then
                                          lrelease: the .ts -> capsviz_zh_CN.qm, which the app loads;
                                          Babel: the messages of the command line and the core, and
                                          argparse's own -> capsviz/locale/zh_CN/LC_MESSAGES/capsviz.po
                                          (likewise merged), compiled to the .mo beside it (which
                                          setup.py compiles when the package is built)
    python tools/translations.py --check  only say whether a catalogue lacks a text of the code or
                                          holds one it no longer has, a translation is missing or
                                          drops a {field}, or a compiled file is not its source
                                          compiled (exit 1 if so)

Translations are written into the .ts (Qt Linguist: ``pyside6-linguist FILE.ts``) and the .po
(any editor, or Qt Linguist, which opens .po files too), then this is run again to compile them.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import re
import shutil
import string
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUI = ROOT / "capsviz" / "gui"
FOLDER = GUI / "translations"
LANGUAGES = ("zh_CN",)
LOCALE = ROOT / "capsviz" / "locale"
# the marks gettext's catalogue is extracted by (capsviz.texts; argparse: _ and ngettext)
KEYWORDS = {"_": (1,), "N_": (1,), "QT_TR_NOOP": (1,), "ngettext": (1, 2)}
APP_ONLY = ("capsviz/gui/", "capsviz/lessons.py", "capsviz/explanations.py")  # texts the command line never shows


def tool(name: str) -> str:
    """The path of PySide6's ``pyside6-NAME`` beside this Python, or on PATH."""
    beside = Path(sys.executable).with_name(f"pyside6-{name}")
    found = str(beside) if beside.exists() else shutil.which(f"pyside6-{name}")
    if found is None:
        raise SystemExit(f"pyside6-{name} not found: install PySide6 (pip install PySide6-Essentials)")
    return found


def sources() -> list[str]:
    """The modules whose texts are translated: the GUI's, and those of the Qt-free core that mark
    texts (``QT_TR_NOOP("…")``) or compose them with a ``tr`` argument (``tr("…", …)``)."""
    marked = re.compile(r'\b(QT_TR_NOOP|tr)\(\s*"')
    found = set(GUI.rglob("*.py")) | {p for p in (ROOT / "capsviz").rglob("*.py") if marked.search(p.read_text())}
    return sorted(str(p) for p in found)


def lupdate(ts: Path) -> None:
    """Extract every marked text of :func:`sources` into ``ts`` (merged with its translations)."""
    subprocess.run(
        [tool("lupdate"), "-silent", "-no-obsolete", "-locations", "none", *sources(), "-ts", str(ts)], check=True
    )


def lrelease(ts: Path, qm: Path) -> None:
    subprocess.run([tool("lrelease"), "-silent", str(ts), "-qm", str(qm)], check=True)


def messages(ts: Path) -> dict[str, str]:
    """Source -> translation ("" while unfinished) of every message of ``ts``."""
    out = {}
    for message in ET.parse(ts).getroot().iter("message"):
        translation = message.find("translation")
        unfinished = translation is None or translation.get("type") == "unfinished"
        forms = [] if translation is None else [f.text or "" for f in translation.iter("numerusform")]
        text = "" if unfinished else (" | ".join(forms) if forms else translation.text or "")
        out[message.findtext("source")] = text
    return out


def check(language: str) -> list[str]:
    """What is out of date for ``language``: texts of the code the .ts lacks, texts the .ts has
    and the code no longer, unfinished translations, a .qm that is not the .ts compiled."""
    ts, qm = FOLDER / f"capsviz_{language}.ts", FOLDER / f"capsviz_{language}.qm"
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / ts.name
        shutil.copy(ts, fresh)
        lupdate(fresh)
        have, code = messages(ts), messages(fresh)
        problems += [f"{ts.name} lacks {s!r}" for s in code if s not in have]
        problems += [f"{ts.name} has {s!r}, which the code no longer has" for s in have if s not in code]
        problems += [f"{ts.name}: {s!r} is not translated" for s, t in have.items() if not t]
        compiled = Path(tmp) / qm.name
        lrelease(ts, compiled)
        if not qm.is_file() or qm.read_bytes() != compiled.read_bytes():
            problems.append(f"{qm.name} is not {ts.name} compiled (python tools/translations.py)")
    return problems


def shown(path: Path) -> str:
    """``path`` relative to the repository where it is inside it."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def po_path(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / "capsviz.po"


def gettext_sources() -> list[Path]:
    """The modules whose messages go into gettext's catalogue: capsviz's but the app's own
    (:data:`APP_ONLY`), and argparse (its ``usage:``, ``options``, its errors)."""
    import argparse as stdlib_argparse

    ours = [
        p for p in sorted((ROOT / "capsviz").rglob("*.py")) if not p.relative_to(ROOT).as_posix().startswith(APP_ONLY)
    ]
    return [*ours, Path(stdlib_argparse.__file__)]


def extracted():
    """A Babel catalogue of every message of :func:`gettext_sources`, untranslated."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_python

    template = Catalog(project="capsviz")
    for path in gettext_sources():
        with path.open("rb") as source:
            for _line, function, message, _comments in extract_python(source, KEYWORDS, [], {}):
                # the first string of the call (its other literals are fields' values), ngettext's two
                strings = message if isinstance(message, tuple) else (message,)
                if strings[0]:
                    template.add(tuple(strings[:2]) if function == "ngettext" else strings[0])
    return template


def read_po(path: Path, language: str):
    from babel.messages.pofile import read_po as read

    if not path.is_file():
        from babel.messages.catalog import Catalog

        return Catalog(locale=language, project="capsviz")
    with path.open("rb") as source:
        return read(source, locale=language)


def po_bytes(catalogue) -> bytes:
    from babel.messages.pofile import write_po

    out = io.BytesIO()
    write_po(out, catalogue, omit_header=False, ignore_obsolete=True, no_location=True, width=120, sort_output=True)
    return out.getvalue()


def fields(text: str) -> set[str]:
    """The ``{name}`` fields of a ``str.format`` template (argparse's %-style texts have none)."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError:
        return set()


def po_messages(catalogue) -> dict:
    """msgid -> translation ("" while missing or fuzzy) of every message of ``catalogue``."""
    out = {}
    for m in catalogue:
        if not m.id:
            continue
        strings = m.string if isinstance(m.string, (tuple, list)) else (m.string,)
        out[m.id] = "" if m.fuzzy or not all(strings) else strings
    return out


def compile_mo(language: str) -> bytes:
    """The .mo of ``language``'s .po, as setup.py compiles it."""
    spec = importlib.util.spec_from_file_location("capsviz_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    return setup.compiled(po_path(language))


def update_po(language: str) -> Path:
    """Merge the extracted messages into ``language``'s .po (new ones untranslated, vanished ones
    dropped) and write the .mo beside it. The .po keeps its creation date, so a run that changes
    no message leaves it as it was (``run.py`` reinstalls when it changes)."""
    path = po_path(language)
    catalogue = read_po(path, language)
    created = catalogue.creation_date
    catalogue.update(extracted(), no_fuzzy_matching=True)
    if path.is_file():
        catalogue.creation_date = created
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_bytes() != po_bytes(catalogue):
        path.write_bytes(po_bytes(catalogue))
    path.with_suffix(".mo").write_bytes(compile_mo(language))
    return path


def check_po(language: str) -> list[str]:
    """What is out of date in ``language``'s gettext catalogue (as :func:`check` for the .ts)."""
    path = po_path(language)
    if not path.is_file():
        return [f"{shown(path)} is missing (python tools/translations.py)"]
    have = po_messages(read_po(path, language))
    code = {m.id for m in extracted() if m.id}
    name = shown(path)
    problems = [f"{name} lacks {s!r}" for s in code if s not in have]
    problems += [f"{name} has {s!r}, which the code no longer has" for s in have if s not in code]
    for source, translation in have.items():
        if not translation:
            problems.append(f"{name}: {source!r} is not translated")
            continue
        sources = source if isinstance(source, tuple) else (source,)
        if any(fields(t) != fields(sources[0]) for t in translation):
            problems.append(f"{name}: the translation of {source!r} has other {{fields}} than its source")
    mo = path.with_suffix(".mo")
    if mo.is_file() and mo.read_bytes() != compile_mo(language):
        problems.append(f"{mo.name} is not {path.name} compiled (python tools/translations.py)")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check that the .ts and .qm are up to date")
    args = parser.parse_args()
    FOLDER.mkdir(exist_ok=True)
    if args.check:
        problems = [p for language in LANGUAGES for p in (*check(language), *check_po(language))]
        print("\n".join(problems) or "translations up to date")
        return 1 if problems else 0
    for language in LANGUAGES:
        ts = FOLDER / f"capsviz_{language}.ts"
        lupdate(ts)
        lrelease(ts, ts.with_suffix(".qm"))
        unfinished = [s for s, t in messages(ts).items() if not t]
        print(f"{ts.relative_to(ROOT)}: {len(messages(ts))} texts, {len(unfinished)} not translated")
        po = update_po(language)
        missing = [s for s, t in po_messages(read_po(po, language)).items() if not t]
        print(f"{po.relative_to(ROOT)}: {len(po_messages(read_po(po, language)))} texts, {len(missing)} not translated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
