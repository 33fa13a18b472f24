"""The core stays Qt-free, and the headless CLI works without a display."""

from __future__ import annotations

import subprocess
import sys


def test_core_imports_no_qt():
    code = (
        "import sys, capsviz.model, capsviz.data.mnist, capsviz.data.preprocess, capsviz.train.loop, "
        "capsviz.train.checkpoint, capsviz.model.inference, capsviz.cli\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt', 'shiboken6')]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
