#!/usr/bin/env python3
"""Set up capsviz in a local virtual environment (once) and run it.

    python3 run.py            open the capsviz app with the shipped model
    python3 run.py test       run the test suite (extra arguments go to pytest)
    python3 run.py ARGS...    any capsviz command, e.g. `python3 run.py eval`

Needs only Python 3.10+. The environment lives in .venv/ and is reinstalled when
pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".capsviz-installed"


def ensure_env() -> None:
    if sys.version_info < (3, 10):
        sys.exit(f"capsviz needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.is_file() and STAMP.read_text().strip() == want and PYTHON.exists():
        return
    if not PYTHON.exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("installing capsviz and its dependencies into .venv (first run only; torch is large, "
          "this takes a few minutes)", flush=True)
    subprocess.check_call([str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check",
                           "--progress-bar", "on", "-e", f"{ROOT}[test]"])
    STAMP.write_text(want)


def main(argv: list[str]) -> int:
    ensure_env()
    if argv[:1] == ["test"]:
        cmd = [str(PYTHON), "-m", "pytest", str(ROOT / "tests"), *argv[1:]]
    else:
        cmd = [str(PYTHON), "-m", "capsviz", *argv]
    return subprocess.call(cmd, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
