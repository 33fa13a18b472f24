"""Everything outside capsviz.gui stays Qt-free, and the GUI never imports the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

QT = ("PySide6", "pyqtgraph", "superqt", "shiboken6")
APP_ENTRY = "capsviz.__main__"  # `python -m capsviz`: importing it runs the command line (and the app)

IMPORT_ALL = """
import importlib, json, sys
qt = set(sys.argv[1].split(","))
for name in sys.argv[2:]:
    importlib.import_module(name)
    bad = sorted({m.split(".")[0] for m in sys.modules} & qt)
    if bad:  # the first module whose import brought Qt in
        print(json.dumps({name: bad}))
        break
else:
    print("{}")
"""


def capsviz_root() -> Path:
    import capsviz

    return Path(capsviz.__file__).resolve().parent


def qt_free_modules() -> list[str]:
    """Every module of the capsviz package outside ``capsviz.gui``, found by walking its
    folders (a module or package added later is found too), less the app entry."""
    root = capsviz_root()
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(("capsviz", *parts)).removesuffix(".__init__")
        if parts[0] != "gui" and name != APP_ENTRY:
            names.append(name)
    return names


def test_everything_outside_the_gui_imports_no_qt():
    modules = qt_free_modules()
    # the walk reaches every layer, the packages' own modules and the top-level ones
    for name in (
        "capsviz",
        "capsviz.cli",
        "capsviz.paths",
        "capsviz.model.capsnet",
        "capsviz.data.photo",
        "capsviz.data.background",
        "capsviz.data.images",
        "capsviz.train.robustness",
        "capsviz.train.distributed",
    ):
        assert name in modules, name
    assert not [m for m in modules if m.startswith("capsviz.gui")] and APP_ENTRY not in modules
    root = capsviz_root()
    r = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, ",".join(QT), *modules],
        capture_output=True,
        text=True,
        cwd=root.parent,  # the very tree walked above
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root.parent), os.environ.get("PYTHONPATH", "")])},
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {}, f"imports Qt: {r.stdout}"


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_explorer_core_needs_no_widgets():
    code = (
        "import sys, capsviz.gui.core, capsviz.gui.redraw\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pyqtgraph', 'superqt') or m == 'PySide6.QtWidgets']\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def module_imports() -> dict[str, set[str]]:
    """capsviz module -> the capsviz modules it imports at module level (``TYPE_CHECKING``
    blocks and imports inside functions run later and make no import cycle)."""
    import ast
    from pathlib import Path

    import capsviz

    root = Path(capsviz.__file__).parent
    names = {
        ".".join(("capsviz", *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): p
        for p in root.rglob("*.py")
    }
    graph = {}
    for name, path in names.items():
        tree = ast.parse(path.read_text())
        found = set()
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else ():
                if isinstance(sub, ast.ImportFrom) and sub.module and sub.module.startswith("capsviz"):
                    found.add(sub.module)
                    found.update(f"{sub.module}.{a.name}" for a in sub.names)
                elif isinstance(sub, ast.Import):
                    found.update(a.name for a in sub.names if a.name.startswith("capsviz"))
        graph[name] = {m for m in found if m in names and m != name}
    return graph


def test_the_modules_import_each_other_without_a_cycle():
    graph = module_imports()
    assert "capsviz.gui.core" in graph["capsviz.gui.main_window"]  # the graph sees real imports
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*path, name, dep]))
            if dep not in state:
                visit(dep, [*path, name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
