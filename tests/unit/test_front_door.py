"""What a new user meets first: runs that never overwrite each other, destinations and flags
checked before any work, run.py as a faithful launcher, and messages that say what happened."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from capsviz.cli import build_parser
from capsviz.data.mnist import load_mnist, load_sample
from capsviz.model.inference import recognised
from capsviz.model.losses import M_MINUS, M_PLUS, RECOGNITION_THRESHOLD
from capsviz.train.checkpoint import best_path, check_destination, fresh_path, load_checkpoint, read_info
from capsviz.train.config import TRAIN_LIMITS, TrainConfig

from ..conftest import ROOT, mnist_root
from .test_cli import capsviz

needs_mnist = pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
TINY = ["--epochs", "1", "--batch-size", "32", "--train-subset", "64", "--test-subset", "64"]


def _digit_png(path: Path, index: int = 0) -> Path:
    """MNIST sample digit ``index`` as dark ink on white, five times larger."""
    Image.fromarray(255 - load_sample().images[index]).resize((140, 140)).save(path)
    return path


# -- 1. a second run never replaces the first ------------------------------------------------------
def test_fresh_path_numbers_past_a_run_and_its_best_file(tmp_path):
    first = tmp_path / "capsnet.safetensors"
    assert fresh_path(first) == first
    first.write_bytes(b"x")
    assert fresh_path(first) == tmp_path / "capsnet-2.safetensors"
    best_path(tmp_path / "capsnet-2.safetensors").write_bytes(b"x")  # only the best file of run 2 is left
    assert fresh_path(first) == tmp_path / "capsnet-3.safetensors"


@needs_mnist
def test_a_second_default_train_writes_a_new_file_and_keeps_the_first(tmp_path):
    folder = Path(os.environ["XDG_DATA_HOME"]) / "capsviz" / "checkpoints"  # the isolated user data folder
    r1 = capsviz("train", *TINY, "--seed", "1")
    assert r1.returncode == 0, r1.stderr[-2000:]
    first = folder / "capsnet.safetensors"
    assert f"checkpoint: {first}" in r1.stdout
    saved = first.read_bytes(), best_path(first).read_bytes()
    r2 = capsviz("train", *TINY, "--seed", "2")
    assert r2.returncode == 0, r2.stderr[-2000:]
    second = folder / "capsnet-2.safetensors"
    assert f"checkpoint: {second}" in r2.stdout
    assert (first.read_bytes(), best_path(first).read_bytes()) == saved
    assert read_info(second).train_config["seed"] == 2 and best_path(second).is_file()


@pytest.mark.slow
def test_an_existing_out_is_refused_without_overwrite(tmp_path, shipped_checkpoint):
    out = tmp_path / "mine.safetensors"
    out.write_bytes(b"an earlier model")
    r = capsviz("train", *TINY, "--out", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (
        f"error: {out} exists (a model of an earlier run); pass --overwrite to replace it, or give another --out"
    )
    assert out.read_bytes() == b"an earlier model"
    best_only = tmp_path / "other.safetensors"
    best_path(best_only).write_bytes(b"best epoch")
    r = capsviz("train", *TINY, "--init", str(shipped_checkpoint), "--epochs", "15", "--out", str(best_only))
    assert r.returncode == 2 and str(best_path(best_only)) in r.stderr and "--overwrite" in r.stderr


def test_an_out_without_a_suffix_gets_safetensors(tmp_path):
    from capsviz.cli import build_parser
    from capsviz.commands.common import CliError
    from capsviz.commands.train import _destination

    parse = build_parser().parse_args
    assert _destination(parse(["train", "--out", str(tmp_path / "run")])) == tmp_path / "run.safetensors"
    assert _destination(parse(["train", "--out", str(tmp_path / "run.ckpt")])) == tmp_path / "run.ckpt"
    for nameless in ("", ".."):  # Path("") is ".": no file name either
        with pytest.raises(CliError, match="^--out needs a file name, such as run.safetensors$"):
            _destination(parse(["train", "--out", nameless]))


def test_the_line_a_stop_prints_continues_the_run_as_it_was_started():
    """``continue with:`` gives the data folder and device the run was given (pasted without
    them it would look for MNIST elsewhere), and under torchrun as many processes."""
    from types import SimpleNamespace

    from capsviz.cli import build_parser
    from capsviz.commands.train import _resume_command

    run = Path("/runs/run.safetensors")
    parse = build_parser().parse_args
    alone, ranked = SimpleNamespace(world=1), SimpleNamespace(world=2)
    assert _resume_command(alone, parse(["train"]), run) == "capsviz train --resume /runs/run.safetensors"
    args = parse(["--data-root", "/my data", "train", "--device", "cpu"])
    given = "capsviz train --resume /runs/run.safetensors --data-root '/my data' --device cpu"
    assert _resume_command(alone, args, run) == given
    assert _resume_command(ranked, args, run) == "torchrun --nproc-per-node 2 --no-python " + given


# -- 2. the destination is checked before any step ------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["folder", "device", "missing root", "file as folder"])
def test_a_bad_destination_is_refused_at_once_naming_the_users_path(tmp_path, kind):
    if kind == "folder":
        out, reason = tmp_path / "adir", "is a folder"
        out.mkdir()
    elif kind == "device":
        out, reason = Path("/dev/null"), "is not a regular file"
    elif kind == "file as folder":
        (tmp_path / "notes.txt").write_text("mine")
        out = tmp_path / "notes.txt" / "run" / "x.safetensors"
        reason = f"cannot write a checkpoint there ({tmp_path / 'notes.txt'} is a file, not a folder)"
    else:
        out, reason = Path("/proc/capsviz-test/x.safetensors"), "cannot write a checkpoint there"
    with pytest.raises(OSError) as err:
        check_destination(out)
    assert err.value.filename == str(out) and reason in err.value.strerror
    args = ["train", *TINY, "--out", str(out), "--data-root", str(tmp_path / "no-data")]
    if kind == "device":
        args.append("--overwrite")  # an existing path passes the overwrite check and is still refused
    r = capsviz(*args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: {out}: {reason}") and ".tmp" not in r.stderr, r.stderr
    # refused before MNIST is looked for: the data root does not exist, and MNIST's message did not come


def test_the_trainer_checks_its_checkpoint_path_before_training(tmp_path):
    from capsviz.train.loop import Trainer

    sample = load_sample()
    with pytest.raises(OSError, match="is a folder"):
        Trainer(TrainConfig(epochs=1, train_subset=32), sample, checkpoint_path=tmp_path)


def test_a_failed_save_names_the_checkpoint_not_the_temporary_file(tmp_path, monkeypatch):
    import capsviz.train.checkpoint as checkpoint
    from capsviz.model import CapsNet

    def full_disk(tensors, filename, metadata=None):
        raise OSError(28, "No space left on device", filename)

    monkeypatch.setattr(checkpoint, "save_file", full_disk)
    target = tmp_path / "run.safetensors"
    with pytest.raises(OSError) as err:
        checkpoint.save_checkpoint(target, CapsNet())
    assert err.value.filename == str(target) and err.value.strerror == "No space left on device"
    assert list(tmp_path.iterdir()) == []


# -- 4, 5. run.py ----------------------------------------------------------------------------------
def _run_py():
    spec = importlib.util.spec_from_file_location("capsviz_run_py", ROOT / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


uses_run_py_venv = pytest.mark.skipif(
    Path(sys.prefix).resolve() != (ROOT / ".venv").resolve(),
    reason="runs run.py, which needs the tests to run in its .venv",
)


def run_py_python() -> Path:
    return _run_py().PYTHON


@uses_run_py_venv
def test_run_py_works_from_the_folder_that_holds_a_checkout_named_capsviz(tmp_path):
    (tmp_path / "capsviz").symlink_to(ROOT, target_is_directory=True)  # as `git clone` names it
    r = subprocess.run(
        [sys.executable, "capsviz/run.py", "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0 and r.stdout.startswith("capsviz "), r.stderr[-2000:]


@uses_run_py_venv
def test_run_py_reads_paths_from_the_callers_folder(tmp_path):
    _digit_png(tmp_path / "digit.png")
    r = subprocess.run(
        [sys.executable, str(ROOT / "run.py"), "classify", "digit.png", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    line = json.loads(r.stdout.strip().splitlines()[-1])
    assert line["file"] == "digit.png" and line["prediction"] == 7


@uses_run_py_venv
@pytest.mark.skipif(os.name != "posix", reason="exec hands the process over on POSIX only")
def test_run_py_becomes_capsviz_so_a_signal_reaches_it(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    p = subprocess.Popen(
        [sys.executable, str(ROOT / "run.py")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        cmdline = b""
        deadline = time.monotonic() + 120
        while b"capsviz" not in cmdline.replace(b"run.py", b"") and time.monotonic() < deadline:
            time.sleep(0.2)
            cmdline = Path(f"/proc/{p.pid}/cmdline").read_bytes()
        assert b"-m\0capsviz" in cmdline and cmdline.startswith(str(run_py_python()).encode()), cmdline
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) != 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_run_py_installs_cpu_only_torch_when_asked(monkeypatch):
    run_py = _run_py()
    monkeypatch.setenv("CAPSVIZ_TORCH", "cpu")
    assert run_py.torch_variant(set()) == "cpu"
    steps = run_py.install_steps(Path("py"), (), "cpu")
    assert len(steps) == 2
    what, cmd = steps[0]
    assert "CPU-only" in what and cmd[-4:] == ["--index-url", run_py.CPU_INDEX, "torch", "torchvision"]
    assert run_py.CPU_INDEX == "https://download.pytorch.org/whl/cpu"
    assert steps[1][1][-2:] == ["-e", str(ROOT)]  # running needs no test extras
    assert run_py.install_steps(Path("py"), ("test",), "default")[0][1][-1] == f"{ROOT}[test]"
    monkeypatch.delenv("CAPSVIZ_TORCH")
    assert run_py.torch_variant({"abc", "cpu"}) == "cpu"  # an installed CPU build is kept
    assert run_py.torch_variant(set()) == "default"
    here = str(Path(__file__))
    assert run_py.command(["test", "-q", here])[3:] == ["-q", here]  # a named test file only
    assert run_py.command(["test", "-k", "cli"])[3:] == [str(ROOT / "tests"), "-k", "cli"]
    assert run_py.command(["test", "--fast", "-q"])[3:] == [str(ROOT / "tests"), "-m", "not slow", "-n", "auto", "-q"]
    assert run_py.command(["test", "--fast", here])[3:] == ["-m", "not slow", "-n", "auto", here]
    assert run_py.command(["eval", "--batch-size", "50"])[-5:] == ["-m", "capsviz", "eval", "--batch-size", "50"]
    monkeypatch.setenv("CAPSVIZ_TORCH", "rocm")
    with pytest.raises(SystemExit, match="CAPSVIZ_TORCH='rocm'"):
        run_py.torch_variant(set())


def test_run_py_says_which_install_step_failed_and_what_to_do(capsys):
    """A failing pip command ends run.py with one line naming the step, not a traceback;
    for PyTorch's CPU index, how to do without it."""
    run_py = _run_py()
    failing = [sys.executable, "-c", "raise SystemExit(3)"]
    ok = [sys.executable, "-c", "pass"]
    cpu_step = ("PyTorch, CPU-only build", [*failing, "--index-url", run_py.CPU_INDEX, "torch"])
    with pytest.raises(SystemExit) as exc:
        run_py.install([("nothing", ok), cpu_step, ("capsviz", ok)])
    message = str(exc.value.code)
    assert message.startswith("installing PyTorch, CPU-only build failed (pip exit code 3;")
    assert f"if {run_py.CPU_INDEX} is out of reach, leave CAPSVIZ_TORCH unset" in message
    out = capsys.readouterr().out
    assert "[1/3] installing nothing" in out and "[2/3]" in out and "[3/3]" not in out  # no step after the failure
    with pytest.raises(SystemExit) as exc:
        run_py.install([("capsviz and its dependencies", failing)])
    assert "installing capsviz and its dependencies failed" in str(exc.value.code)
    assert "CAPSVIZ_TORCH" not in str(exc.value.code)


@pytest.mark.slow
def test_run_py_stamps_an_environment_only_when_torch_and_torchvision_work(tmp_path):
    run_py = _run_py()
    assert run_py.torch_problem(Path(sys.executable)) == ""  # the environment these tests run in
    mismatched = tmp_path / "python"  # as when pip pairs a CPU torch with a CUDA torchvision
    mismatched.write_text(
        "#!/bin/sh\necho 'Traceback ...' >&2\n"
        "echo 'RuntimeError: operator torchvision::nms does not exist' >&2\nexit 1\n"
    )
    mismatched.chmod(0o755)
    assert run_py.torch_problem(mismatched) == "RuntimeError: operator torchvision::nms does not exist"


# -- 6. numeric flags checked at parse time, one flag each -----------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["eval", "--batch-size", "-5"], "argument --batch-size: must be an integer in [1, 100,000] (got -5)"),
        (["eval", "--batch-size", "0"], "argument --batch-size: must be an integer in [1, 100,000] (got 0)"),
        (
            ["train", "--routing-iterations", "0"],
            "argument --routing-iterations: must be an integer in [1, 100] (got 0)",
        ),
        (["train", "--batch-size", "0"], "argument --batch-size: must be an integer >= 1 (got 0)"),
        (["train", "--epochs", "0"], "argument --epochs: must be an integer in [1, 10,000] (got 0)"),
        (["train", "--epochs", "100000"], "argument --epochs: must be an integer in [1, 10,000] (got 100000)"),
        (
            ["train", "--train-subset", "60001"],
            "argument --train-subset: must be an integer in [0, 60,000] (got 60001)",
        ),
        (
            ["robustness", "--test-subset", "10001"],
            "argument --test-subset: must be an integer in [0, 10,000] (got 10001)",
        ),
        (["train", "--lr", "nan"], "argument --lr: must be a number > 0 (got nan)"),
        (["train", "--lr-decay", "1.5"], "argument --lr-decay: must be a number in (0, 1] (got 1.5)"),
        (["train", "--max-shift", "-1"], "argument --max-shift: must be an integer in [0, 27] (got -1)"),
        (["train", "--epochs", "two"], "argument --epochs: must be an integer in [1, 10,000] (got 'two')"),
        (["train", "--seed", "-1"], "argument --seed: must be an integer in [0, 2,147,483,647] (got -1)"),
        (
            ["trace", "x.png", "--out", "t", "--routing-iterations", "101"],
            "argument --routing-iterations: must be an integer in [1, 100] (got 101)",
        ),
        (
            ["classify", "x.png", "--routing-iterations", "-1"],
            "argument --routing-iterations: must be an integer in [1, 100] (got -1)",
        ),
    ],
)
def test_numeric_flags_are_checked_at_parse_time_naming_the_flag(args, message, capsys):
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(args)
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith(message), err


def test_every_numeric_training_flag_has_a_limit_and_the_config_names_one_field():
    numeric = [name for name, value in TrainConfig().to_dict().items() if isinstance(value, (int, float))]
    assert sorted(numeric) == sorted(TRAIN_LIMITS)
    with pytest.raises(ValueError) as err:
        TrainConfig(epochs=0, batch_size=0, routing_iterations=0)
    assert str(err.value) == "epochs must be an integer in [1, 10,000] (got 0)"
    with pytest.raises(ValueError) as err:  # MNIST has 10,000 test digits; MultiMNIST draws its test pairs
        TrainConfig(test_subset=10_001)
    assert str(err.value) == "test_subset must be at most 10,000, the MNIST test images (got 10001)"
    assert TrainConfig(dataset="multimnist", test_subset=20_000).test_subset == 20_000
    # a recipe stored past the limits (a subset larger than its data set: all of it) still loads
    stored = TrainConfig.from_dict({"epochs": 20_000, "train_subset": 100_000, "test_subset": 20_000})
    assert (stored.epochs, stored.train_subset, stored.test_subset) == (10_000, 60_000, 10_000)


def test_a_test_subset_beyond_mnist_and_a_checkpoint_before_train_are_refused_before_the_data(
    tmp_path, shipped_checkpoint
):
    no_data = str(tmp_path / "no-data")
    r = capsviz("train", "--test-subset", "10001", "--data-root", no_data)
    assert r.returncode == 2
    assert r.stderr == "error: --test-subset must be at most 10,000, the MNIST test images (got 10001)\n"
    r = capsviz("train", "--resume", str(shipped_checkpoint), "--data-root", no_data)  # weights only
    assert r.returncode == 2 and r.stderr.startswith(f"error: {shipped_checkpoint}: holds no training state")
    r = capsviz("--checkpoint", "mine.safetensors", "train", "--data-root", no_data)
    assert r.returncode == 2 and r.stderr == (
        "error: --checkpoint before train names the model the app opens; to train on from mine.safetensors, give "
        "train --resume mine.safetensors (a training checkpoint) or --init mine.safetensors (weights only)\n"
    )


# -- 7. trace says what it wrote -------------------------------------------------------------------
@pytest.mark.slow
def test_trace_names_the_file_written_refuses_a_folder_and_rounds_the_lengths(tmp_path):
    image = _digit_png(tmp_path / "seven.png")
    r = capsviz("trace", str(image), "--out", str(tmp_path / "mytrace"))
    assert r.returncode == 0, r.stderr
    written = tmp_path / "mytrace.npz"
    assert r.stdout.strip().endswith(f"trace saved to {written}") and written.is_file()
    assert not (tmp_path / "mytrace").exists()
    lengths = r.stdout.split("lengths ")[1].split(";")[0].split()
    assert len(lengths) == 10 and all(len(x) == 5 and x.startswith("0.") for x in lengths), r.stdout
    with np.load(written) as t:
        np.testing.assert_allclose([float(x) for x in lengths], t["lengths"][-1], atol=5e-4)
    folder = tmp_path / "traces"
    folder.mkdir()
    r = capsviz("trace", str(image), "--out", str(folder))
    assert r.returncode == 2 and r.stderr.startswith(f"error: {folder}: is a folder")
    assert list(folder.iterdir()) == [] and not (tmp_path / "traces.npz").exists()
    r = capsviz("trace", str(image), "--out", str(tmp_path / "new" / "deeper" / "t.npz"))  # as train --out does
    assert r.returncode == 0, r.stderr
    assert [p.name for p in (tmp_path / "new" / "deeper").iterdir()] == ["t.npz"]
    r = capsviz("trace", str(image), "--out", str(image / "t.npz"))
    assert r.returncode == 2 and r.stderr == f"error: {image / 't.npz'}: {image} is a file, not a folder\n"
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a checkpoint")
    r = capsviz("trace", str(image), "--checkpoint", str(bad), "--out", str(tmp_path / "made" / "for" / "t.npz"))
    assert r.returncode == 2 and str(bad) in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "made").exists()  # the probe's folders are gone with the refused checkpoint


# -- 8. --init with nothing left to train ----------------------------------------------------------
@needs_mnist
def test_init_with_no_epochs_left_says_so_and_writes_nothing(tmp_path, shipped_checkpoint):
    out = tmp_path / "more.safetensors"
    r = capsviz("train", "--init", str(shipped_checkpoint), "--epochs", "14", "--out", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr and "batch" not in r.stderr
    assert r.stderr.strip() == (
        f"error: {shipped_checkpoint} has 14 completed epochs and --epochs is 14: nothing "
        "to train; --epochs is the total to reach, e.g. --epochs 15 for one more epoch"
    )
    assert not out.exists() and not best_path(out).exists()


def test_an_unknown_argument_is_said_with_the_commands_usage(capsys):
    from capsviz.cli import main

    with pytest.raises(SystemExit) as done:
        main(["trace", "a.png", "b.png", "--out", "t.npz"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith("usage: capsviz trace ")
    assert err.strip().endswith("capsviz trace: error: unrecognized arguments: b.png")


def test_init_help_says_what_it_takes_over():
    train = build_parser()._subparsers._group_actions[0].choices["train"]
    text = " ".join(train.format_help().split())
    assert (
        "Taken over from it: the weights, the step (so the learning rate), the completed epochs and the recipe" in text
    )


# -- 9. eval needs only the test files; help lines -------------------------------------------------
@needs_mnist
def test_eval_reads_only_the_test_split_and_shows_progress(tmp_path, shipped_checkpoint):
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):  # the test split's archives only
        (raw / name).symlink_to(mnist_root() / "MNIST" / "raw" / name)
    test = load_mnist(train=False, data_root=tmp_path)
    assert len(test) == 10000
    r = capsviz("eval", "--checkpoint", str(shipped_checkpoint), "--data-root", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "test accuracy: 99.64 % (9,964 / 10,000)" in r.stdout
    assert "evaluating" in r.stderr and "10000/10000" in r.stderr  # tqdm's bar, on stderr
    with pytest.raises(FileNotFoundError, match="missing train-images-idx3-ubyte, train-labels-idx1-ubyte"):
        load_mnist(train=True, data_root=tmp_path)


def _subcommands():
    return build_parser()._subparsers._group_actions[0].choices


def test_every_option_has_help_and_only_used_options_are_offered():
    for name, sub in {"capsviz": build_parser(), **_subcommands()}.items():
        for action in sub._actions:
            assert action.help and action.help.strip(), f"{name}: {action.option_strings or action.dest} has no help"
    for name in ("trace", "classify"):
        options = {o for a in _subcommands()[name]._actions for o in a.option_strings}
        assert "--data-root" not in options, name
        assert {"--routing-iterations", "--checkpoint", "--device"} <= options
    assert "--data-root" in {o for a in _subcommands()["eval"]._actions for o in a.option_strings}


# -- 12. nothing recognised ------------------------------------------------------------------------
def test_the_recognition_rule_is_halfway_between_the_margins():
    assert RECOGNITION_THRESHOLD == pytest.approx((M_PLUS + M_MINUS) / 2) == pytest.approx(0.5)
    lengths = np.array([[0.1] * 9 + [0.49], [0.05] * 9 + [0.5], [0.9] + [0.0] * 9])
    assert recognised(lengths).tolist() == [False, True, True]
    assert recognised(lengths[0]) is False and recognised(lengths[2]) is True


@pytest.mark.slow
def test_classify_says_when_nothing_is_recognised(tmp_path):
    seven = _digit_png(tmp_path / "seven.png")
    blob = tmp_path / "blob.png"
    square = np.zeros((200, 200), np.uint8)
    square[50:150, 50:150] = 153  # a filled grey square: ink, but no digit
    Image.fromarray(square).save(blob)
    r = capsviz("classify", str(seven), str(blob), "--json")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.strip().splitlines()]
    assert [row["recognised"] for row in rows] == [True, False]
    assert rows[0]["prediction"] == 7 and max(rows[1]["lengths"]) < RECOGNITION_THRESHOLD
    r = capsviz("classify", str(seven), str(blob))
    first, second = r.stdout.strip().splitlines()
    assert first.startswith(f"{seven}: 7 (0.9") and "nothing recognised" not in first
    assert second.startswith(f"{blob}: nothing recognised (longest: ")


def test_the_shipped_model_recognises_nearly_every_mnist_digit(shipped_checkpoint):
    from capsviz.model.inference import capsule_lengths

    model, _, _ = load_checkpoint(shipped_checkpoint)
    sample = load_sample()
    flagged = ~recognised(capsule_lengths(model, sample.images[:1000].astype(np.float32) / 255))
    assert flagged.sum() <= 5, flagged.sum()


@needs_mnist
def test_a_run_logged_to_a_file_writes_progress_lines_not_a_bar(tmp_path):
    out = tmp_path / "run.safetensors"
    r = capsviz("train", *TINY, "--out", str(out))  # stderr is a pipe here, as under nohup
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr and "batch/s" not in r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith("epoch 1, batch 1/2, ") and "min to go, loss " in first, r.stderr


def test_a_progress_interval_that_is_no_number_is_refused(tmp_path):
    r = capsviz("train", *TINY, "--out", str(tmp_path / "x.safetensors"), env={"CAPSVIZ_PROGRESS_S": "soon"})
    assert r.returncode == 2 and "CAPSVIZ_PROGRESS_S must be a number of seconds, 0 or more (got 'soon')" in r.stderr


def test_train_names_the_flags_of_the_settings_a_message_is_about():
    from capsviz.commands.common import CliError
    from capsviz.commands.train import _settings_as_flags

    resume = "cannot change batch_size, seed when resuming in the middle of an epoch (stopped at batch 3)"
    with pytest.raises(CliError) as err, _settings_as_flags():
        raise ValueError(resume)
    assert str(err.value).startswith("cannot change --batch-size, --seed when resuming in the middle of an epoch")
    with pytest.raises(ValueError, match="^a message about no setting$"), _settings_as_flags():
        raise ValueError("a message about no setting")
