"""Extract the app's texts and compile its translations with PySide6's own Linguist tools.

    python tools/translations.py          lupdate: the app's texts -> capsviz/gui/translations/capsviz_zh_CN.ts
                                          (new texts come in unfinished, vanished ones go), then
                                          lrelease: the .ts -> capsviz_zh_CN.qm, which the app loads
    python tools/translations.py --check  only say whether the .ts lacks a text of the code, or
                                          the .qm is not the .ts compiled (exit 1 if so)

Translations are written into the .ts (Qt Linguist: ``pyside6-linguist FILE.ts``, or any
editor), then this is run again to compile them.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUI = ROOT / "capsviz" / "gui"
FOLDER = GUI / "translations"
LANGUAGES = ("zh_CN",)


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check that the .ts and .qm are up to date")
    args = parser.parse_args()
    FOLDER.mkdir(exist_ok=True)
    if args.check:
        problems = [p for language in LANGUAGES for p in check(language)]
        print("\n".join(problems) or "translations up to date")
        return 1 if problems else 0
    for language in LANGUAGES:
        ts = FOLDER / f"capsviz_{language}.ts"
        lupdate(ts)
        lrelease(ts, ts.with_suffix(".qm"))
        unfinished = [s for s, t in messages(ts).items() if not t]
        print(f"{ts.relative_to(ROOT)}: {len(messages(ts))} texts, {len(unfinished)} not translated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
