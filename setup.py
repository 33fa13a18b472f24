"""Build step of capsviz beyond pyproject.toml: the command line's message catalogues
(``capsviz/locale/<lang>/LC_MESSAGES/capsviz.po``) compiled to gettext's ``.mo`` with Babel,
beside their sources, before the package's files are collected (a wheel ships them as package
data; an editable install reads them where they are)."""

import io
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

LOCALE = Path(__file__).resolve().parent / "capsviz" / "locale"


def compiled(po: Path) -> bytes:
    """The gettext ``.mo`` of the catalogue ``po`` (untranslated and fuzzy messages left out)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as source:
        catalogue = read_po(source)
    out = io.BytesIO()
    write_mo(out, catalogue)
    return out.getvalue()


class BuildWithCatalogues(build_py):
    """``build_py`` that first writes each ``capsviz.po`` under :data:`LOCALE` as the ``capsviz.mo`` beside it."""

    def run(self) -> None:
        for po in sorted(LOCALE.glob("*/LC_MESSAGES/capsviz.po")):
            po.with_suffix(".mo").write_bytes(compiled(po))
        super().run()


if __name__ == "__main__":  # as setuptools runs it; tools/translations.py imports compiled()
    setup(cmdclass={"build_py": BuildWithCatalogues})
