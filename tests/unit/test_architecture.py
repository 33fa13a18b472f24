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


def test_the_gui_never_imports_the_cli():
    code = "import sys, capsviz.gui.app, capsviz.gui.main_window\nsys.exit(1 if 'capsviz.cli' in sys.modules else 0)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, "capsviz.gui imports capsviz.cli" + r.stderr


def test_the_shipped_files_are_package_data():
    from importlib import resources

    from capsviz.paths import mnist_sample, shipped_checkpoint

    folder = resources.files("capsviz.assets")
    assert shipped_checkpoint() == folder / "capsnet_mnist.safetensors" and shipped_checkpoint().is_file()
    assert mnist_sample() == folder / "mnist_test_sample.npz" and mnist_sample().is_file()
