#!/usr/bin/env python3
"""Set up capsviz in a local virtual environment (once) and run it.

    python3 run.py            open the capsviz app with the shipped model
    python3 run.py test       run the test suite (extra arguments go to pytest; test files or
                              folders named there are run instead of all of tests/)
    python3 run.py test --fast    the same without the tests marked slow (those that need the
                              full MNIST data set or take several seconds), one process per
                              core: about 2 minutes on two cores
    python3 run.py ARGS...    any capsviz command, e.g. `python3 run.py eval`

Needs only Python 3.10+. The environment lives in .venv/ beside this file and is
reinstalled when pyproject.toml changes; `run.py test` adds the test tools (pytest,
pytest-qt, pytest-xdist, hypothesis). Paths on the command line are read from the folder
you run it in, and run.py hands its process over to capsviz (exec), so Ctrl+C and signals
sent to it reach capsviz.

PyTorch: by default pip takes the build PyPI serves, which on Linux is the CUDA build
(about 4 GB of NVIDIA libraries; the whole .venv is about 6 GB). On a machine without
an NVIDIA GPU, set CAPSVIZ_TORCH=cpu before the first run to install PyTorch's
CPU-only wheels from its own index instead (.venv about 1.3 GB).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".capsviz-installed"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_VARIANTS = ("default", "cpu")


def torch_variant(installed_words: set[str]) -> str:
    """``CAPSVIZ_TORCH``: ``cpu`` for PyTorch's CPU-only wheels, ``default`` for PyPI's build;
    unset: the variant already installed, else ``default``."""
    value = os.environ.get("CAPSVIZ_TORCH", "").strip().lower()
    if not value:
        return next((v for v in TORCH_VARIANTS if v in installed_words), "default")
    if value not in TORCH_VARIANTS:
        sys.exit(f"CAPSVIZ_TORCH={value!r}: use 'cpu' (CPU-only PyTorch), 'default', or leave it unset")
    return value


def has_nvidia_gpu() -> bool:
    """Whether an NVIDIA driver is present (Linux: /proc/driver/nvidia; elsewhere nvidia-smi)."""
    return Path("/proc/driver/nvidia").is_dir() or shutil.which("nvidia-smi") is not None


def install_steps(python: Path, extras: tuple[str, ...], variant: str) -> list[tuple[str, list[str]]]:
    """The pip commands that install capsviz into the environment of ``python``, each with
    the line printed before it: for ``variant`` "cpu", first torch and torchvision from
    PyTorch's CPU-only index; then capsviz itself (editable) with ``extras``."""
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "on"]
    steps = []
    if variant == "cpu":
        steps.append(
            (
                "PyTorch, CPU-only build (about 200 MB to download)",
                [*pip, "--index-url", CPU_INDEX, "torch", "torchvision"],
            )
        )
    size = "" if variant == "cpu" else " (PyTorch with CUDA: about 2.6 GB to download, 6 GB on disk; minutes)"
    spec = f"{ROOT}[{','.join(extras)}]" if extras else str(ROOT)
    steps.append((f"capsviz and its dependencies: PyTorch, Qt, pyqtgraph{size}", [*pip, "-e", spec]))
    return steps


def install(steps: list[tuple[str, list[str]]]) -> None:
    """Run the pip commands of :func:`install_steps` in order; on the first that fails, exit
    with one line that names it and what to do (pip has printed why above it)."""
    for k, (what, cmd) in enumerate(steps, start=1):
        print(f"[{k}/{len(steps)}] installing {what} into {VENV}", flush=True)
        code = subprocess.call(cmd)
        if code != 0:
            hint = f"; if {CPU_INDEX} is out of reach, leave CAPSVIZ_TORCH unset to take PyPI's build"
            hint = hint if CPU_INDEX in cmd else ""
            sys.exit(
                f"installing {what} failed (pip exit code {code}; its messages above say why). Check the "
                f"network or the disk space, then run again (what pip installed stays){hint}."
            )


def stamp_for(extras: tuple[str, ...], variant: str) -> str:
    """What the stamp file holds once this set-up is installed: the hash of what the install
    builds from (pyproject.toml, setup.py and the message catalogues it compiles), the extras
    and the PyTorch variant."""
    sources = [ROOT / "pyproject.toml", ROOT / "setup.py", *sorted(ROOT.glob("capsviz/locale/*/LC_MESSAGES/*.po"))]
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in sources)).hexdigest()
    return " ".join([digest, variant, *sorted(extras)])


def installed() -> set[str]:
    """The words of the stamp file (empty when nothing is installed)."""
    if not (STAMP.is_file() and PYTHON.exists()):
        return set()
    return set(STAMP.read_text().split())


def ensure_env(extras: tuple[str, ...] = ()) -> None:
    """Create .venv and install capsviz (with ``extras``) unless that is already done."""
    if sys.version_info < (3, 10):  # noqa: UP036 (run.py runs under whatever python3 the user has)
        sys.exit(f"capsviz needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    have = installed()
    variant = torch_variant(have)
    want = stamp_for(extras, variant)
    if set(want.split()) <= have:
        return
    if not PYTHON.exists():
        print(f"creating a virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if variant == "default" and sys.platform.startswith("linux") and not has_nvidia_gpu():
        print(
            "no NVIDIA GPU found: pip takes PyTorch's CUDA build all the same; set CAPSVIZ_TORCH=cpu "
            "(and delete .venv) for the much smaller CPU-only build",
            flush=True,
        )
    install(install_steps(PYTHON, extras, variant))
    problem = torch_problem(PYTHON)
    if problem:  # no stamp: the next run installs again
        sys.exit(
            f"PyTorch and torchvision in {VENV} do not work together ({problem}). Delete {VENV} and run "
            "again; where CAPSVIZ_TORCH=cpu cannot reach PyTorch's CPU index, leave it unset for PyPI's build."
        )
    STAMP.write_text(want)


def torch_problem(python: Path) -> str:
    """The last line of the error that importing torch and torchvision's compiled operators
    raises in the environment of ``python`` (pip can pair builds of the two that do not
    match), or "" when they work."""
    check = "import torch, torchvision; torchvision.ops.nms(torch.zeros(1, 4), torch.zeros(1), 0.5)"
    result = subprocess.run([str(python), "-c", check], capture_output=True, text=True)
    lines = result.stderr.strip().splitlines()
    return "" if result.returncode == 0 else (lines[-1] if lines else f"exit code {result.returncode}")


def command(argv: list[str]) -> list[str]:
    """The command that runs ``argv``: pytest for ``test`` (on tests/, unless the arguments
    name test files or folders that exist; ``--fast`` becomes ``-m "not slow" -n auto``: the
    tests not marked slow, spread by pytest-xdist over one process per core), else capsviz."""
    if argv[:1] == ["test"]:
        args = [arg for arg in argv[1:] if arg != "--fast"]
        fast = ["-m", "not slow", "-n", "auto"] if len(args) < len(argv) - 1 else []
        named = any(not arg.startswith("-") and Path(arg).exists() for arg in args)
        return [str(PYTHON), "-m", "pytest", *([] if named else [str(ROOT / "tests")]), *fast, *args]
    # -P (Python 3.11+): the working folder stays off sys.path, so a folder named capsviz there
    # (the checkout, seen from the folder that holds it) cannot shadow the installed package
    return [str(PYTHON), *(["-P"] if sys.version_info >= (3, 11) else []), "-m", "capsviz", *argv]


def main(argv: list[str]) -> int:
    ensure_env(("test",) if argv[:1] == ["test"] else ())
    cmd = command(argv)
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(cmd[0], cmd)  # this process becomes capsviz: signals reach it, no orphan is left
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
