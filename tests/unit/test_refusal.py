"""Every loading path refuses bad checkpoints with one line, exit code 2, no traceback,
and never executes anything inside them."""

from __future__ import annotations

import io
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch
from PIL import Image
from safetensors.torch import load_file, save_file

from capsviz.cli import main
from capsviz.paths import shipped_checkpoint
from capsviz.train.checkpoint import read_info

from .test_cli import capsviz

MARKER = "capsviz-was-here"


class _CreatesAFile:
    """Unpickling this creates a file: proof that something was executed."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def bad_checkpoints(folder):
    """Ten kinds of bad checkpoint that capsviz refuses, as files in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    data = shipped_checkpoint().read_bytes()
    tensors, meta = load_file(str(shipped_checkpoint())), read_info(shipped_checkpoint()).metadata
    files = {}

    def raw(name, content):
        files[name] = folder / f"{name}.safetensors"
        files[name].write_bytes(content)

    def edited(name, change):
        t = dict(tensors)
        change(t)
        files[name] = folder / f"{name}.safetensors"
        save_file(t, str(files[name]), metadata=meta)

    raw("truncated", data[: len(data) // 3])
    raw("random", np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    raw("empty", b"")
    raw("absurd_header", struct.pack("<Q", 1 << 62) + b'{"a": 1}')
    edited("wrong_shape", lambda t: t.__setitem__("digit_caps.W", torch.zeros(1152, 10, 16, 4)))
    edited("missing_tensor", lambda t: t.pop("decoder.net.2.weight"))
    edited("unexpected_tensor", lambda t: t.__setitem__("extra.bias", torch.zeros(4)))

    def nan(t):
        t["conv1.weight"] = t["conv1.weight"].clone()
        t["conv1.weight"][0, 0, 0, 0] = float("inf")

    edited("nan_inf", nan)
    files["other_model"] = folder / "other_model.safetensors"
    save_file({"fc.weight": torch.zeros(10, 784), "fc.bias": torch.zeros(10)}, str(files["other_model"]))
    # a pickle that creates a file when loaded, raw and inside a torch.save-style zip
    files["pickle_pt"] = folder / "model.pt"
    files["pickle_pt"].write_bytes(pickle.dumps(_CreatesAFile(folder / MARKER), protocol=2))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(_CreatesAFile(folder / MARKER), protocol=2))
    files["pickle_zip"] = folder / "model_zip.pt"
    files["pickle_zip"].write_bytes(buf.getvalue())
    return files


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    return folder, bad_checkpoints(folder)


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    from capsviz.data.mnist import load_sample

    path = tmp_path_factory.mktemp("img") / "seven.png"
    Image.fromarray(load_sample().images[0]).save(path)
    return path


def commands(path, image, out):
    return {
        "eval": ["eval", "--checkpoint", str(path)],
        "classify": ["classify", str(image), "--checkpoint", str(path)],
        "trace": ["trace", str(image), "--out", str(out / "t.npz"), "--checkpoint", str(path)],
        "train --resume": ["train", "--resume", str(path), "--out", str(out / "o.safetensors")],
        "train --init": ["train", "--init", str(path), "--out", str(out / "o.safetensors")],
    }


@pytest.mark.parametrize(
    "kind",
    [
        "truncated",
        "random",
        "empty",
        "absurd_header",
        "wrong_shape",
        "missing_tensor",
        "unexpected_tensor",
        "nan_inf",
        "other_model",
        "pickle_pt",
        "pickle_zip",
    ],
)
def test_every_command_refuses_with_one_line(kind, bad, image, tmp_path, capsys):
    folder, files = bad
    for name, argv in commands(files[kind], image, tmp_path).items():
        rc = main(argv)
        err = capsys.readouterr().err
        assert rc == 2, (name, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {files[kind]}: "), (name, err)
        assert "Traceback" not in err
    assert not (folder / MARKER).exists()
    assert not (tmp_path / "o.safetensors").exists() and not (tmp_path / "t.npz").exists()


def test_the_messages_say_what_is_wrong(bad, image, tmp_path, capsys):
    expected = {
        "truncated": "truncated",
        "empty": "empty",
        "absurd_header": "header",
        "wrong_shape": "shape",
        "missing_tensor": "missing tensor",
        "unexpected_tensor": "unexpected tensor",
        "nan_inf": "inf",
        "other_model": "not a capsviz checkpoint",
        "pickle_pt": "pickle",
        "pickle_zip": "a zip archive (a pytorch .pt file holds a pickle",
    }
    _, files = bad
    for kind, words in expected.items():
        main(["eval", "--checkpoint", str(files[kind])])
        assert words in capsys.readouterr().err.lower(), kind


@pytest.mark.slow
def test_in_a_real_process_too(bad, image, tmp_path):
    folder, files = bad
    r = capsviz("classify", str(image), "--checkpoint", str(files["pickle_zip"]))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr
    assert r.stdout == "" and not (folder / MARKER).exists()
