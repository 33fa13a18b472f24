"""The core stays Qt-free, and the headless CLI works without a display."""

from __future__ import annotations

import subprocess
import sys


def test_core_imports_no_qt():
    code = (
        "import sys, capsviz.model, capsviz.data.mnist, capsviz.data.preprocess, capsviz.train.loop, "
        "capsviz.train.checkpoint, capsviz.model.inference, capsviz.cli, capsviz.evaluate, capsviz.runtime, "
        "capsviz.train.config, capsviz.train.events, capsviz.train.tasks\n"
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
