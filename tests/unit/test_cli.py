"""Headless commands: eval on the shipped model, clear errors for bad input."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from capsviz.data.mnist import load_sample
from capsviz.evaluate import evaluate_model
from capsviz.train.checkpoint import load_checkpoint

from ..conftest import mnist_root


def capsviz(*args, env=None):
    import os

    e = {**os.environ, "LANGUAGE": "en"}  # the English messages whatever the machine's locale
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "capsviz", *args], capture_output=True, text=True, env=e)


@pytest.mark.slow
def test_version():
    import torch

    r = capsviz("--version")
    assert r.returncode == 0 and r.stdout.startswith("capsviz ")
    assert f"torch {torch.__version__}" in r.stdout and "Qt 6." in r.stdout and "device cpu" in r.stdout
    import torchvision

    assert f", torchvision {torchvision.__version__.split('+')[0]}" in r.stdout  # the package's version


@pytest.mark.slow
def test_shipped_checkpoint_on_the_assets_sample(shipped_checkpoint):
    model, info, _ = load_checkpoint(shipped_checkpoint)
    sample = load_sample()
    acc = float((evaluate_model(model, sample) == sample.labels).mean())
    # at least 99.5 % on the sample; its 2,000 test digits are harder than the rest (99.64 % overall,
    # 99.50 % here: 10 mistakes, none of the sample's predictions within 0.01 of a tie)
    assert acc >= 0.995, acc
    assert info.test_images == 10000 and info.test_accuracy >= 0.996
    assert info.metadata["completed_epochs"] == "14" and info.train_config["lr_decay"] == 0.85


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_eval_prints_full_test_accuracy(shipped_checkpoint):
    r = capsviz("eval", "--checkpoint", str(shipped_checkpoint))
    assert r.returncode == 0, r.stderr
    m = re.search(r"test accuracy: ([\d.]+) % \(([\d,]+) / 10,000\)", r.stdout)
    assert m, r.stdout
    assert float(m.group(1)) >= 99.6 and int(m.group(2).replace(",", "")) >= 9960  # the shipped model's target
    assert "confusion matrix" in r.stdout


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_eval_of_the_first_test_images_counts_them(shipped_checkpoint):
    from capsviz.data.mnist import MnistSplit, load_mnist

    r = capsviz("eval", "--checkpoint", str(shipped_checkpoint), "--test-images", "400", "--per-iteration", "1")
    assert r.returncode == 0, r.stderr
    assert "MNIST test images: the first 400 of 10,000" in r.stdout
    m = re.search(r"test accuracy: ([\d.]+) % \((\d+) / 400\)", r.stdout)
    assert m, r.stdout
    model, _, _ = load_checkpoint(shipped_checkpoint)
    test = load_mnist(train=False, data_root=mnist_root())
    first = MnistSplit(test.images[:400], test.labels[:400])
    assert int(m.group(2)) == int((evaluate_model(model, first) == first.labels).sum())
    confusion = [list(map(int, line.split()[1:])) for line in r.stdout.splitlines()[-10:]]
    assert sum(map(sum, confusion)) == 400
    assert re.search(r"^\s+1 \|\s+[\d,]+ / 400 \|", r.stdout, re.M)  # the per-iteration table on the same 400
    five = capsviz("eval", "--checkpoint", str(shipped_checkpoint), "--test-images", "5")  # labels 7, 2, 1, 0, 4
    assert five.returncode == 0 and "(5 / 5)" in five.stdout, five.stderr
    assert "3: –  4: 100.00%" in five.stdout and "9: –" in five.stdout  # no accuracy for a class not among them
    for bad in ("0", "10001", "many"):
        refused = capsviz("eval", "--test-images", bad)
        assert refused.returncode == 2 and "--test-images: must be an integer in [1, 10,000]" in refused.stderr


@pytest.mark.slow
def test_eval_without_data_says_where_to_put_it(tmp_path, shipped_checkpoint):
    r = capsviz("eval", "--checkpoint", str(shipped_checkpoint), "--data-root", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.startswith("error: MNIST not found in " + str(tmp_path / "MNIST" / "raw"))
    assert r.stderr.rstrip().endswith("Or add --download to fetch them from torchvision's mirrors (up to 11 MB).")
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_eval_refuses_a_corrupt_checkpoint(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(np.random.default_rng(0).bytes(5000))
    r = capsviz("eval", "--checkpoint", str(bad))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr
    assert str(bad) in r.stderr


def start_training_run(out: Path) -> tuple[subprocess.Popen, list[str]]:
    """A `capsviz train` process of 40 steps writing ``out``, once its progress lines show
    step 3 (its stderr read so far, a character a list entry, comes with it)."""
    import os
    import threading

    args = [
        sys.executable,
        "-m",
        "capsviz",
        "train",
        "--epochs",
        "1",
        "--batch-size",
        "32",
        "--train-subset",
        "1280",
        "--test-subset",
        "100",
        "--out",
        str(out),
    ]
    env = {**os.environ, "CAPSVIZ_PROGRESS_S": "0"}  # a progress line for every step on stderr, a pipe here
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    err: list[str] = []
    third_step = threading.Event()

    def read_stderr() -> None:
        for char in iter(lambda: p.stderr.read(1), ""):
            err.append(char)
            if "".join(err[-11:]) == "batch 3/40,":
                third_step.set()
        third_step.set()  # the process ended: no step will come

    threading.Thread(target=read_stderr, daemon=True).start()
    assert third_step.wait(600), "".join(err)[-2000:]  # step 3 is taken (the timeout bounds a hang)
    return p, err


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_train_ctrl_c_stops_cleanly_and_resume_finishes(tmp_path):
    import signal

    out = tmp_path / "run.safetensors"
    p, err = start_training_run(out)
    p.send_signal(signal.SIGINT)  # one Ctrl+C
    stdout = p.stdout.read()
    p.wait(timeout=30)
    assert p.returncode == 130, "".join(err)[-2000:]
    assert "stopped at step" in stdout and "Traceback" not in "".join(err)
    from capsviz.runtime import cpu_bf16_units

    units = ", ".join(cpu_bf16_units())  # the first line says what auto picked, and why
    faster = f"in bf16 (auto: this CPU's bfloat16 units ({units}) multiply "  # the rate is measured by the run
    slower = f"in fp32 (auto: this CPU's bfloat16 units ({units}) multiply at "
    expected = (faster, slower) if units else ("in fp32 (auto: this CPU has no",)
    assert stdout.startswith(tuple(f"training on cpu {e}" for e in expected)), stdout[:300]
    from capsviz.cli import build_parser

    first = stdout.splitlines()[0]  # then the recipe, as the flags that give it
    recipe = build_parser().parse_args(["train", *first[first.index(": --epochs ") + 2 :].split()])
    assert (recipe.batch_size, recipe.train_subset, recipe.test_subset, recipe.dataset) == (32, 1280, 100, "mnist")
    assert "--pairs-per-epoch" not in first and "--device" not in first  # not a pair run; the device is named
    assert f"\ncontinue with: capsviz train --resume {out}\n" in stdout  # how to go on, ready to paste
    step = load_checkpoint(out)[1].step
    assert 3 <= step < 40
    r = subprocess.run([sys.executable, "-m", "capsviz", "train", "--resume", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "finished at step 40" in r.stdout
    assert load_checkpoint(out)[1].step == 40


@pytest.mark.skipif(
    mnist_root() is None or sys.platform == "win32", reason="needs CAPSVIZ_DATA with MNIST; POSIX signals"
)
def test_train_sigterm_saves_the_run_like_ctrl_c(tmp_path):
    """`kill`, `timeout` or a service manager stop a run with SIGTERM: it stops after its
    step, saves, says how to go on and exits with 143 (128 + 15), losing no step."""
    import signal

    out = tmp_path / "run.safetensors"
    p, err = start_training_run(out)
    p.send_signal(signal.SIGTERM)
    stdout = p.stdout.read()
    p.wait(timeout=30)
    assert p.returncode == 143, "".join(err)[-2000:]
    assert "SIGTERM: stopping after the current step and saving (SIGTERM again to abort)" in stdout
    assert "stopped at step" in stdout and "Traceback" not in "".join(err)
    assert f"\ncontinue with: capsviz train --resume {out}\n" in stdout
    assert 3 <= load_checkpoint(out)[1].step < 40


@pytest.mark.skipif(
    mnist_root() is None or sys.platform == "win32", reason="needs CAPSVIZ_DATA with MNIST; POSIX pipes"
)
def test_train_whose_reader_leaves_stops_and_saves(tmp_path):
    """`capsviz train … | head -1`: once stdout's reader has left, the run stops after its
    step (not at its next message, an epoch later) and saves, as on Ctrl+C, says so and how
    to go on on stderr, and exits with 141 (128 + SIGPIPE)."""
    import os

    out = tmp_path / "run.safetensors"
    args = ["train", "--epochs", "2", "--batch-size", "32", "--train-subset", "320", "--test-subset", "100"]
    p = subprocess.Popen(
        [sys.executable, "-m", "capsviz", *args, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LANGUAGE": "en"},
    )
    first = p.stdout.readline()  # as `| head -1` reads, then leaves
    p.stdout.close()
    stderr = p.stderr.read()
    assert p.wait(timeout=300) == 141, stderr[-2000:]
    assert first.startswith("training on cpu in ")
    assert "standard output was closed: stopping after the current step and saving" in stderr
    assert f"\ncontinue with: capsviz train --resume {out}\n" in stderr and "Traceback" not in stderr
    step = load_checkpoint(out)[1].step
    assert step <= 1  # at the message after the first line, or after the first step
    assert re.search(rf"stopped at step {step}; checkpoint {re.escape(str(out))}\n", stderr)


@pytest.mark.slow
def test_trace_export(tmp_path, shipped_checkpoint):
    from PIL import Image

    sample = load_sample()
    img = tmp_path / "seven.png"
    Image.fromarray(255 - sample.images[0]).resize((140, 140)).save(img)  # dark ink on white, 5x larger
    out = tmp_path / "trace.npz"
    r = capsviz("trace", str(img), "--out", str(out), "--routing-iterations", "4")
    assert r.returncode == 0, r.stderr
    with np.load(out) as t:
        assert t["u"].shape == (1152, 8) and t["u_lengths"].shape == (1152,)
        assert t["b"].shape == (4, 1152, 10) and t["c"].shape == (4, 1152, 10)
        assert t["v"].shape == (4, 10, 16) and t["lengths"].shape == (4, 10) and t["input"].shape == (28, 28)
        np.testing.assert_allclose(t["c"].sum(-1), 1.0, atol=1e-5)
        assert int(t["prediction"]) == 7 and t["prediction"].shape == ()
        np.testing.assert_allclose(t["lengths"], np.linalg.norm(t["v"], axis=-1), atol=1e-4)
    saved = out.read_bytes()
    r = capsviz("trace", str(img), "--out", str(out))  # an existing file stays unless --overwrite
    assert r.returncode == 2 and r.stderr.strip() == (
        f"error: {out} exists; pass --overwrite to replace it, or give another --out"
    )
    assert out.read_bytes() == saved
    r = capsviz("trace", str(img), "--out", str(out), "--overwrite")
    assert r.returncode == 0, r.stderr
    with np.load(out) as t:
        assert t["c"].shape == (3, 1152, 10)  # the model's 3 iterations now
    bad = tmp_path / "notes.png"
    bad.write_text("not an image")
    r = capsviz("trace", str(bad), "--out", str(tmp_path / "other.npz"))
    assert r.returncode == 2 and r.stderr.startswith(f"error: {bad}: not an image file")


def test_a_full_disk_keeps_the_trace_and_plot_there_and_says_so_in_a_line(tmp_path, monkeypatch, capsys):
    """trace --overwrite on a full disk: the old trace stays whole, one line names it; a plot
    that is not a PNG, under a file, a folder, or an existing file without --overwrite, is
    refused before any sweep."""
    from PIL import Image

    from capsviz.cli import main

    img = tmp_path / "seven.png"
    Image.fromarray(load_sample().images[0]).save(img)
    out = tmp_path / "trace.npz"
    out.write_bytes(b"an earlier trace")
    real = np.savez

    def full(file, *args, **kwds):
        real(file, *args, **kwds)
        Path(file).write_bytes(Path(file).read_bytes()[:100])  # part of it reached the disk
        raise OSError(28, "No space left on device", str(file))

    monkeypatch.setattr(np, "savez", full)
    assert main(["trace", str(img), "--out", str(out), "--overwrite"]) == 2
    assert capsys.readouterr().err == f"error: {out}: No space left on device\n"
    assert out.read_bytes() == b"an earlier trace" and sorted(x.name for x in tmp_path.iterdir()) == [
        "seven.png",
        "trace.npz",
    ]
    (tmp_path / "earlier.png").write_bytes(b"an earlier plot")
    folder_plot = tmp_path / "a.png" / "robustness.png"
    for plot, line in (
        (tmp_path / "curves.txt", f"error: --plot {tmp_path / 'curves.txt'}: give a .png file"),
        (img / "c.png", f"error: {img / 'c.png'}: {img} is a file, not a folder"),
        (
            tmp_path / "earlier.png",
            f"error: {tmp_path / 'earlier.png'} exists; pass --overwrite to replace it, or give another --plot",
        ),
        (tmp_path / "a.png", f"error: {tmp_path / 'a.png'}: is a folder; give the file to write, e.g. {folder_plot}"),
    ):
        if plot.name == "a.png":
            plot.mkdir()
        assert main(["robustness", "--plot", str(plot), "--test-subset", "10"]) == 2
        assert capsys.readouterr().err == line + "\n"
    assert (tmp_path / "earlier.png").read_bytes() == b"an earlier plot"


def test_ctrl_c_while_the_libraries_load_ends_in_a_line(monkeypatch, capsys):
    import capsviz.logs
    from capsviz.cli import main

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(capsviz.logs, "setup_logging", interrupted)
    assert main(["eval"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_running_out_of_memory_is_said_in_a_line_and_other_errors_still_show_their_trace(monkeypatch, capsys):
    """torch's CPU allocator raises RuntimeError when a batch does not fit (seen with
    eval --batch-size 100000 under a 12 GB limit): one line with what to change."""
    from capsviz.cli import main
    from capsviz.commands import eval as evaluate

    def no_room(args):
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:121] data. DefaultCPUAllocator: can't allocate memory: "
            "you tried to allocate 5539840000 bytes. Error code 12 (Cannot allocate memory)"
        )

    monkeypatch.setattr(evaluate, "run", no_room)
    assert main(["eval", "--batch-size", "100000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: out of memory ([enforce fail at alloc_cpu.cpp:121] data. DefaultCPUAllocator")
    assert err.endswith("; a smaller --batch-size needs less\n") and err.count("\n") == 1

    def a_bug(args):
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    monkeypatch.setattr(evaluate, "run", a_bug)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        main(["eval"])


@pytest.mark.slow
def test_a_reader_that_leaves_early_ends_classify_quietly(tmp_path):
    import os

    from PIL import Image

    digits = load_sample().images[:400]
    files = []
    for k, image in enumerate(digits):
        files.append(tmp_path / f"{k:03d}.png")
        Image.fromarray(image).save(files[-1])
    env = {**os.environ, "LANGUAGE": "en"}
    p = subprocess.Popen(
        [sys.executable, "-m", "capsviz", "classify", "--json", *map(str, files)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    first = p.stdout.readline()  # as `| head -1` reads, then leaves
    p.stdout.close()
    stderr = p.stderr.read().decode()
    assert p.wait(timeout=120) == 1
    assert b'"prediction": 7' in first and stderr == ""  # no "error: Broken pipe", no traceback
