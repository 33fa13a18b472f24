"""safetensors checkpoints: round trip, atomic writes, refusal of files that do not fit."""

from __future__ import annotations

import dataclasses
import errno
import os
import pickle
import struct

import pytest
import torch
from safetensors.torch import save_file

from capsviz.model import CapsNet, CapsNetConfig
from capsviz.train.checkpoint import (
    CheckpointError,
    header_of,
    load_checkpoint,
    read_info,
    restore_optimizer,
    save_checkpoint,
    training_record,
)
from capsviz.train.loop import adam


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    torch.manual_seed(0)
    m = CapsNet()
    path = tmp_path_factory.mktemp("ck") / "m.safetensors"
    save_checkpoint(path, m, train_config={"lr": 0.001}, epoch=2, step=938, test_accuracy=0.9912, test_images=10000)
    return m, path


def test_roundtrip(saved):
    m, path = saved
    loaded, info, state = load_checkpoint(path)
    for (k, a), (_, b) in zip(m.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(a, b), k
    assert info.step == 938 and info.epoch == 2 and info.test_accuracy == pytest.approx(0.9912)
    assert info.train_config == {"lr": 0.001}
    assert "99.12 %" in info.summary() and "10,000" in info.summary()
    assert state == {}


def test_a_model_saved_again_keeps_its_training_record(saved, tmp_path):
    m, path = saved
    record = training_record(read_info(path))
    assert record == {
        "train_config": {"lr": 0.001},
        "epoch": 2.0,
        "step": 938,
        "test_accuracy": 0.9912,
        "test_images": 10000,
    }
    again = read_info(save_checkpoint(tmp_path / "again.safetensors", m, **record))
    assert (again.train_config, again.epoch, again.step, again.test_images) == ({"lr": 0.001}, 2.0, 938, 10000)
    assert again.test_accuracy == pytest.approx(0.9912)
    plain = read_info(save_checkpoint(tmp_path / "plain.safetensors", m, **training_record(None)))
    assert (plain.train_config, plain.epoch, plain.step) == ({}, 0, 0)
    assert plain.test_accuracy is None and plain.test_images is None


def test_header_of_is_none_for_no_file_or_one_that_does_not_read(saved, tmp_path):
    _, path = saved
    assert header_of(path).step == 938 and header_of(None) is None
    (tmp_path / "bad.safetensors").write_bytes(b"not a checkpoint")
    assert header_of(tmp_path / "bad.safetensors") is None and header_of(tmp_path / "missing.safetensors") is None


def test_no_temporary_files_left(saved):
    _, path = saved
    assert sorted(p.name for p in path.parent.iterdir()) == ["m.safetensors"]


def _copy_tensors(path):
    from safetensors.torch import load_file

    return load_file(str(path)), read_info(path).metadata


def test_wrong_shape_is_refused_naming_the_tensor(saved, tmp_path):
    tensors, meta = _copy_tensors(saved[1])
    tensors["digit_caps.W"] = torch.zeros(1152, 10, 16, 4)
    bad = tmp_path / "bad.safetensors"
    save_file(tensors, str(bad), metadata=meta)
    with pytest.raises(CheckpointError, match=r"digit_caps\.W.*\(1152, 10, 16, 4\)"):
        load_checkpoint(bad)


def test_missing_and_unexpected_tensors(saved, tmp_path):
    tensors, meta = _copy_tensors(saved[1])
    del tensors["decoder.net.0.weight"]
    bad = tmp_path / "missing.safetensors"
    save_file(tensors, str(bad), metadata=meta)
    with pytest.raises(CheckpointError, match=r"missing tensor 'decoder\.net\.0\.weight'"):
        load_checkpoint(bad)
    tensors, meta = _copy_tensors(saved[1])
    tensors["extra.weight"] = torch.zeros(3)
    bad = tmp_path / "extra.safetensors"
    save_file(tensors, str(bad), metadata=meta)
    with pytest.raises(CheckpointError, match="unexpected tensor 'extra.weight'"):
        load_checkpoint(bad)


def test_nan_values_refused(saved, tmp_path):
    tensors, meta = _copy_tensors(saved[1])
    tensors["conv1.bias"][3] = float("nan")
    bad = tmp_path / "nan.safetensors"
    save_file(tensors, str(bad), metadata=meta)
    with pytest.raises(CheckpointError, match="conv1.bias.*NaN"):
        load_checkpoint(bad)


def test_corrupt_files_refused(saved, tmp_path):
    data = saved[1].read_bytes()
    cases = {
        "truncated": data[: len(data) // 2],
        "empty": b"",
        "random": bytes(range(256)) * 40,
        "absurd": struct.pack("<Q", 1 << 60) + b"{}",
    }
    for name, content in cases.items():
        p = tmp_path / f"{name}.safetensors"
        p.write_bytes(content)
        with pytest.raises(CheckpointError) as err:
            load_checkpoint(p)
        assert str(p) in str(err.value) and "\n" not in str(err.value)
    header_cut = struct.pack("<Q", 16) + b'{"a": 1}' + b" " * 7  # a header of 16 bytes, 15 there
    p = tmp_path / "header_cut.safetensors"
    p.write_bytes(header_cut)
    with pytest.raises(CheckpointError, match="announce a header of 16 bytes; 15 bytes follow them"):
        load_checkpoint(p)


def test_foreign_safetensors_refused(tmp_path):
    p = tmp_path / "other.safetensors"
    save_file({"weight": torch.zeros(3)}, str(p))
    with pytest.raises(CheckpointError, match="not a capsviz checkpoint"):
        load_checkpoint(p)


def test_pickle_is_refused_and_never_executed(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    p = tmp_path / "evil.pt"
    p.write_bytes(pickle.dumps(Evil(), protocol=2))
    with pytest.raises(CheckpointError, match="pickle"):
        load_checkpoint(p)
    assert not marker.exists()


def test_other_config_is_loaded_with_its_shapes(tmp_path):
    cfg = CapsNetConfig(primary_types=4, decoder_hidden=(32, 64))
    m = CapsNet(cfg)
    p = tmp_path / "small.safetensors"
    save_checkpoint(p, m)
    loaded, info, _ = load_checkpoint(p)
    assert info.model_config == cfg and loaded.digit_caps.W.shape == (144, 10, 16, 8)


def test_failed_write_keeps_previous_file(saved, tmp_path, monkeypatch):
    import capsviz.train.checkpoint as ck

    p = tmp_path / "keep.safetensors"
    save_checkpoint(p, saved[0], step=1)
    before = p.read_bytes()

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ck, "save_file", fail)
    with pytest.raises(OSError):
        save_checkpoint(p, saved[0], step=2)
    assert p.read_bytes() == before
    assert [x.name for x in tmp_path.iterdir()] == ["keep.safetensors"]


def test_safetensors_own_full_disk_error_is_an_os_error_naming_the_checkpoint(saved, tmp_path, monkeypatch):
    """safetensors reports a full disk as its own SafetensorError: it comes out as the OSError
    it is (errno 28, the checkpoint's name), which the commands print in one line."""
    import errno

    from safetensors import SafetensorError

    import capsviz.train.checkpoint as ck

    p = tmp_path / "keep.safetensors"
    save_checkpoint(p, saved[0], step=1)
    before = p.read_bytes()

    def full(tensors, filename, metadata=None):
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(ck, "save_file", full)
    with pytest.raises(OSError) as err:
        save_checkpoint(p, saved[0], step=2)
    assert (err.value.errno, err.value.filename, err.value.strerror) == (
        errno.ENOSPC,
        str(p),
        "No space left on device",
    )
    assert p.read_bytes() == before and [x.name for x in tmp_path.iterdir()] == ["keep.safetensors"]


def test_replacing_writes_a_file_whole_or_keeps_the_old_one(tmp_path):
    from capsviz.paths import replacing

    out = tmp_path / "trace.npz"
    out.write_bytes(b"old")
    with replacing(out) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".npz" and tmp != out
        tmp.write_bytes(b"new")
    assert out.read_bytes() == b"new" and [x.name for x in tmp_path.iterdir()] == ["trace.npz"]
    with pytest.raises(OSError) as err, replacing(out) as tmp:
        tmp.write_bytes(b"half")
        raise OSError(28, "No space left on device", str(tmp))
    assert (err.value.errno, err.value.filename) == (28, str(out))  # the file asked for, not the temporary one
    assert out.read_bytes() == b"new" and [x.name for x in tmp_path.iterdir()] == ["trace.npz"]
    with replacing(tmp_path / "missing" / "deeper" / "t.npz") as tmp:  # missing folders are made
        tmp.write_bytes(b"t")
    assert (tmp_path / "missing" / "deeper" / "t.npz").read_bytes() == b"t"
    with pytest.raises(OSError) as err, replacing(out / "t.npz"):  # under a file
        pass
    assert (err.value.errno, err.value.filename) == (errno.ENOTDIR, str(out / "t.npz"))


def test_forged_metadata_is_refused_with_checkpoint_error(saved, tmp_path):
    tensors, meta = _copy_tensors(saved[1])
    for name, change in {
        "hidden": {"model_config": meta["model_config"].replace("[512, 1024]", "512")},
        "huge": {"model_config": meta["model_config"].replace('"conv1_channels": 256', '"conv1_channels": 1000000')},
        "train": {"train_config": "[1, 2]"},
        "json": {"model_config": "{not json"},
    }.items():
        bad = tmp_path / f"{name}.safetensors"
        save_file(tensors, str(bad), metadata={**meta, **change})
        with pytest.raises(CheckpointError):
            load_checkpoint(bad)


def test_folder_and_unreadable_paths(tmp_path):
    with pytest.raises(CheckpointError, match="folder"):
        load_checkpoint(tmp_path)
    with pytest.raises(CheckpointError, match="no such file"):
        load_checkpoint(tmp_path / "nope.safetensors")


def test_a_full_disk_half_way_keeps_the_previous_file(saved, tmp_path, monkeypatch):
    import errno

    import capsviz.train.checkpoint as ck

    p = tmp_path / "keep.safetensors"
    save_checkpoint(p, saved[0], step=1)
    before = p.read_bytes()
    real = ck.save_file

    def half_then_full(tensors, filename, metadata=None):
        real(tensors, filename, metadata=metadata)
        data = open(filename, "rb").read()
        open(filename, "wb").write(data[: len(data) // 2])  # half of it reached the disk
        raise OSError(errno.ENOSPC, "No space left on device", filename)

    monkeypatch.setattr(ck, "save_file", half_then_full)
    with pytest.raises(OSError) as err:
        save_checkpoint(p, saved[0], step=2)
    assert err.value.errno == errno.ENOSPC
    assert p.read_bytes() == before and read_info(p).step == 1
    assert [x.name for x in tmp_path.iterdir()] == ["keep.safetensors"]


WRITER = """
import os, sys
import capsviz.train.checkpoint as ck
from capsviz.model import CapsNet
from capsviz.train.checkpoint import save_checkpoint

path, stage = sys.argv[1], sys.argv[2]
real_save, real_replace = ck.save_file, os.replace


def wait_to_be_killed(what):
    print(what, flush=True)
    sys.stdin.readline()  # the test kills this process here
    sys.exit(3)


def half_written(tensors, filename, metadata=None):  # the temporary file is half on disk
    real_save(tensors, filename, metadata=metadata)
    data = open(filename, "rb").read()
    open(filename, "wb").write(data[: len(data) // 2])
    wait_to_be_killed("half written")


def before_rename(src, dst):  # the temporary file complete and synced, the rename still to come
    wait_to_be_killed("before the rename")


if stage == "half written":
    ck.save_file = half_written
elif stage == "before the rename":
    ck.os.replace = before_rename
m = CapsNet()
step = 100
while True:  # "saving": killed in whichever save is under way once the first is reported
    step += 1
    save_checkpoint(path, m, step=step)
    print("saved", step, flush=True)
"""


@pytest.mark.slow
def test_a_writer_killed_mid_write_leaves_a_loadable_checkpoint(saved, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    import capsviz.train.checkpoint as ck

    p = tmp_path / "live.safetensors"
    save_checkpoint(p, saved[0], step=1)
    for stage in ("half written", "before the rename", "saving"):
        before = read_info(p).step
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(p), stage], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        line = proc.stdout.readline().strip()  # blocks until the writer reaches the stage
        assert line == stage or (stage == "saving" and line == "saved 101"), line
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stdin.close()
        proc.stdout.close()
        _, info, _ = load_checkpoint(p)  # never half a file: the old one or a complete new one
        assert info.step == 1 or info.step > 100
        if stage != "saving":
            assert info.step == before  # killed before the rename: the previous file, untouched
        else:
            assert info.step >= 101  # the save it reported, or a later complete one
    # the killed writers' temporary files are cleared by the next save once they are stale
    temps = list(tmp_path.glob("live.safetensors.*.tmp.safetensors"))
    assert len(temps) >= 2  # the two writers killed before their rename left theirs
    for t in temps:
        os.utime(t, (time.time() - ck.STALE_TEMP_S - 1,) * 2)
    save_checkpoint(p, saved[0], step=7)
    assert read_info(p).step == 7 and not list(tmp_path.glob("*.tmp*"))


def test_weights_stored_as_float16_load_as_float32_and_keep_the_dataset(tmp_path):
    import json

    model = CapsNet(CapsNetConfig(image_size=36))
    path = save_checkpoint(
        tmp_path / "half.safetensors", model, extra_metadata={"dataset": "multimnist"}, weights_dtype=torch.float16
    )
    raw = path.read_bytes()
    header = json.loads(raw[8 : 8 + struct.unpack("<Q", raw[:8])[0]])
    assert {desc["dtype"] for name, desc in header.items() if name != "__metadata__"} == {"F16"}
    loaded, info, _ = load_checkpoint(path)
    assert info.dataset == "multimnist" and loaded.digit_caps.W.dtype == torch.float32
    torch.testing.assert_close(loaded.digit_caps.W, model.digit_caps.W.half().float())


SMALL = CapsNetConfig(conv1_channels=16, primary_types=4, decoder_hidden=(32, 64))
SMALL_36 = dataclasses.replace(SMALL, image_size=36)  # the same network at the MultiMNIST field


def _run_epochs(tmp_path, seeds, config=SMALL, **meta):
    """Checkpoints of one small network with different weights, as a run's epoch autosaves."""
    paths, models = [], []
    for epoch, seed in enumerate(seeds, start=1):
        torch.manual_seed(seed)
        m = CapsNet(config)
        models.append(m)
        paths.append(
            save_checkpoint(
                tmp_path / f"ep{epoch}.safetensors",
                m,
                epoch=epoch,
                step=100 * epoch,
                extra_metadata={"completed_epochs": str(epoch), **meta},
            )
        )
    return paths, models


def test_summary_of_a_multimnist_model_counts_test_pairs(tmp_path):
    model = CapsNet(SMALL_36)
    scored = save_checkpoint(
        tmp_path / "scored.safetensors",
        model,
        test_accuracy=0.8416,
        test_images=10_000,
        extra_metadata={"dataset": "multimnist"},
    )
    assert read_info(scored).summary().startswith("84.16 % on 10,000 test pairs")
    stopped = save_checkpoint(
        tmp_path / "stopped.safetensors", model, epoch=0.0469083, extra_metadata={"dataset": "multimnist"}
    )  # a run stopped in its first epoch
    assert read_info(stopped).summary().startswith("0.05 epochs")


def test_average_checkpoints_is_the_mean_of_each_tensor_and_keeps_the_last_position(tmp_path):
    from capsviz.train.checkpoint import average_checkpoints

    paths, models = _run_epochs(tmp_path, [1, 2, 3], SMALL_36, dataset="multimnist")
    averaged, info, infos = average_checkpoints(paths)
    assert info.step == 300 and [i.step for i in infos] == [100, 200, 300] and info.dataset == "multimnist"
    for name, value in averaged.state_dict().items():
        mean = sum(m.state_dict()[name] for m in models) / 3
        torch.testing.assert_close(value, mean, msg=name)
        assert not torch.equal(value, models[-1].state_dict()[name]), name
    single, _, _ = average_checkpoints(paths[:1])
    for name, value in single.state_dict().items():
        assert torch.equal(value, models[0].state_dict()[name]), name


def test_average_checkpoints_refuses_different_networks_naming_the_file(tmp_path):
    from capsviz.train.checkpoint import average_checkpoints

    paths, _ = _run_epochs(tmp_path, [1])
    other = save_checkpoint(tmp_path / "mm.safetensors", CapsNet(SMALL_36), extra_metadata={"dataset": "multimnist"})
    with pytest.raises(CheckpointError, match=r"mm\.safetensors: cannot average it .*dataset \(multimnist vs mnist\)"):
        average_checkpoints([paths[0], other])
    wider = save_checkpoint(tmp_path / "wide.safetensors", CapsNet(CapsNetConfig(conv1_channels=16, primary_types=8)))
    with pytest.raises(CheckpointError, match=r"wide\.safetensors: cannot average it .*configuration"):
        average_checkpoints([paths[0], wider])
    with pytest.raises(ValueError, match="at least one"):
        average_checkpoints([])


@pytest.mark.slow
def test_ship_tool_averages_epoch_autosaves_and_says_so_in_the_header(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    paths, models = _run_epochs(tmp_path, [4, 5], SMALL_36, dataset="multimnist")
    out = tmp_path / "shipped.safetensors"
    tool = Path(__file__).resolve().parents[2] / "tools" / "ship_checkpoint.py"
    done = subprocess.run(
        [sys.executable, str(tool), *map(str, paths), "--out", str(out), "--float16"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    loaded, info, state = load_checkpoint(out)
    assert info.metadata["averaged_epochs"] == "1, 2" and info.dataset == "multimnist" and state == {}
    mean = (models[0].digit_caps.W + models[1].digit_caps.W) / 2
    torch.testing.assert_close(loaded.digit_caps.W, mean.half().float())


def test_optimizer_state_of_a_per_tensor_adam_resumes_in_the_fused_one(tmp_path):
    """The moments and step counts carry over; how the update runs stays the resuming optimizer's."""
    torch.manual_seed(0)
    m = CapsNet()
    per_tensor = torch.optim.Adam(m.parameters(), lr=1e-3)
    x, y = torch.rand(4, 1, 28, 28), torch.randint(0, 10, (4,))
    for _ in range(2):
        per_tensor.zero_grad()
        m(x, target=y).lengths.sum().backward()
        per_tensor.step()
    path = tmp_path / "run.safetensors"
    save_checkpoint(path, m, optimizer=per_tensor, epoch=0, step=2)
    loaded, info, state = load_checkpoint(path)
    fused = adam(loaded.parameters(), lr=1e-3)
    assert fused.param_groups[0]["fused"] is True
    restore_optimizer(fused, info, state, loaded)
    assert fused.param_groups[0]["fused"] is True and fused.param_groups[0]["lr"] == 1e-3
    saved_state, restored = per_tensor.state_dict()["state"], fused.state_dict()["state"]
    assert restored.keys() == saved_state.keys()
    for idx, entry in saved_state.items():
        assert float(restored[idx]["step"]) == 2.0
        assert torch.equal(restored[idx]["exp_avg_sq"], entry["exp_avg_sq"])
    # one more step from the same point: the fused update agrees with the per-tensor one
    for opt, model in ((per_tensor, m), (fused, loaded)):
        opt.zero_grad()
        model(x, target=y).lengths.sum().backward()
        opt.step()
    for a, b in zip(m.parameters(), loaded.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


def test_primarycaps_kernels_train_as_a_contiguous_parameter_and_save_in_conv2d_layout(tmp_path):
    """PrimaryCaps' kernels are a contiguous (k, k, C_out, C_in) parameter (the layout the
    spectral path and the fused optimizer walk without copies); the state dict and the
    checkpoint's weights and optimizer state hold them as nn.Conv2d's (C_out, C_in, k, k),
    and a resumed optimizer gets its moments back in the parameter's layout."""
    torch.manual_seed(1)
    cfg = CapsNetConfig(conv1_channels=16, primary_types=4, decoder_hidden=(32, 64))
    m = CapsNet(cfg)
    param = m.primary_caps.conv.weight
    assert param.shape == (9, 9, 32, 16) and param.is_contiguous()
    assert m.state_dict()["primary_caps.conv.weight"].shape == (32, 16, 9, 9)
    opt = adam(m.parameters())
    x, y = torch.rand(2, 1, 28, 28), torch.tensor([3, 7])
    m(x, target=y).lengths.sum().backward()
    assert param.grad.is_contiguous()
    opt.step()
    path = tmp_path / "run.safetensors"
    save_checkpoint(path, m, optimizer=opt, epoch=0, step=1)
    loaded, info, state = load_checkpoint(path)
    index = [p is param for p in m.parameters()].index(True)
    saved = state[f"optimizer.{index}.exp_avg"]
    assert saved.shape == (32, 16, 9, 9)
    torch.testing.assert_close(saved, opt.state[param]["exp_avg"].permute(2, 3, 0, 1), rtol=0, atol=0)
    torch.testing.assert_close(loaded.primary_caps.conv.weight, param.detach(), rtol=0, atol=0)
    resumed = adam(loaded.parameters())
    restore_optimizer(resumed, info, state, loaded)
    moment = resumed.state[loaded.primary_caps.conv.weight]["exp_avg"]
    assert moment.shape == (9, 9, 32, 16) and moment.is_contiguous()
    torch.testing.assert_close(moment, opt.state[param]["exp_avg"], rtol=0, atol=0)
    # a state dict in nn.Conv2d's layout loads into the parameter's
    plain = CapsNet(cfg)
    plain.load_state_dict(m.state_dict())
    torch.testing.assert_close(plain.primary_caps.kernel, m.primary_caps.kernel, rtol=0, atol=0)


def test_the_output_check_removes_only_the_folders_it_made(tmp_path, monkeypatch):
    from capsviz.paths import check_room

    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep").mkdir()  # empty, and the user's
    check_room("new/../keep/t.npz")
    check_room("made/for/t.npz")
    assert (tmp_path / "keep").is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["keep"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, a folder no file can be made in")
def test_a_folder_that_takes_no_file_is_named_in_the_refusal():
    from capsviz.paths import check_room

    with pytest.raises(OSError) as err:
        check_room("/proc/capsviz-test.png")
    assert err.value.filename == "/proc/capsviz-test.png"
    assert err.value.strerror.startswith("no file can be written in /proc (")


def test_a_pair_model_saved_with_its_record_alone_reads_back_as_a_pair_model(tmp_path):
    from capsviz.paths import shipped_multimnist_checkpoint

    model, info, _ = load_checkpoint(shipped_multimnist_checkpoint())
    again = read_info(save_checkpoint(tmp_path / "pairs.safetensors", model, **training_record(info)))
    assert again.dataset == "multimnist" and again.model_config.image_size == 36 and again.step == info.step
