"""The commands as modules: help without torch, one record per classified file."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from capsviz.cli import COMMANDS, build_parser
from capsviz.commands.classify import reading, text, write

HELP = [[], *([name] for name in ("train", "eval", "trace", "classify", "robustness"))]


@pytest.mark.parametrize("command", HELP, ids=lambda c: " ".join(c) or "capsviz")
def test_help_imports_no_torch_torchvision_or_qt(command):
    code = (
        "import sys\nfrom capsviz.cli import main\n"
        f"try:\n    main({[*command, '--help']!r})\nexcept SystemExit as done:\n    assert done.code == 0\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torchvision', 'PySide6'))\n"
        "print(heavy, file=sys.stderr); sys.exit(1 if heavy else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "usage: capsviz" in r.stdout


def test_every_command_dispatches_to_its_module():
    parser = build_parser()
    for module in COMMANDS:
        name = module.__name__.rsplit(".", 1)[1]
        argv = {"trace": ["trace", "x.png", "--out", "t"], "classify": ["classify", "x.png"]}.get(name, [name])
        assert parser.parse_args(argv).func is module.run, name
    assert not hasattr(parser.parse_args([]), "func")  # no command: main opens the app


def test_one_record_per_file_as_text_or_json(capsys):
    lengths = np.array([0.02, 0.94, 0.1, 0.3, 0, 0, 0, 0.12345678, 0, 0], np.float32)
    one = reading("a.png", lengths, two=False)
    assert (one["prediction"], one["recognised"]) == (1, True)
    assert text(one) == "a.png: 1 (0.940)  lengths 0.020 0.940 0.100 0.300 0.000 0.000 0.000 0.123 0.000 0.000"
    faint = reading("b.png", lengths * 0.4, two=False)
    assert text(faint).startswith("b.png: nothing recognised (longest: 1, 0.376)  lengths 0.008 ")
    pair = reading("c.png", lengths, two=True)
    assert text(pair).startswith("c.png: 1 (0.940) and 3 (0.300)  lengths ")
    for record in (one, pair, {"file": "d.png", "error": "d.png: not an image file"}):
        write(record, as_json=True)
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert list(rows[0]) == ["file", "prediction", "recognised", "lengths"] and rows[0]["lengths"][7] == 0.123457
    assert list(rows[1]) == ["file", "predictions", "lengths"] and rows[1]["predictions"] == [1, 3]
    assert rows[2] == {"file": "d.png", "error": "d.png: not an image file"}
    write({"file": "d.png", "error": "d.png: not an image file"}, as_json=False)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "error: d.png: not an image file\n"
