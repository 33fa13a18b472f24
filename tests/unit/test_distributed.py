"""Data-parallel training with torch.distributed: two gloo processes equal one process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from capsviz.model import CapsNetConfig
from capsviz.train.checkpoint import load_checkpoint, load_tensors
from capsviz.train.config import TrainConfig
from capsviz.train.loop import fresh_model

from ..conftest import mnist_root

# float32: where the CPU has bfloat16 units, `auto` trains in bfloat16, whose products and
# gradient sums round differently for a batch of 8 and two of 4 (far beyond the tolerance below)
RECIPE = [
    "--dataset",
    "multimnist",
    "--pairs-per-epoch",
    "16",
    "--test-subset",
    "20",
    "--lr",
    "1e-3",
    "--precision",
    "fp32",
]


def train(*args, processes: int = 1) -> subprocess.CompletedProcess:
    launcher = ["-m", "torch.distributed.run", "--nproc-per-node", str(processes), "--master-port", "29517"]
    command = [sys.executable, *(launcher if processes > 1 else []), "-m", "capsviz", "train", *RECIPE, *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_two_gloo_processes_train_as_one_process_with_their_joint_batch_and_resume_exactly(tmp_path):
    two, one = tmp_path / "two.safetensors", tmp_path / "one.safetensors"
    first = train("--batch-size", "4", "--epochs", "1", "--out", str(two), processes=2)
    assert first.stdout.count("training on cpu x 2 processes") == 1  # rank 0 alone prints
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two.best.safetensors", "two.safetensors"]
    assert load_checkpoint(two)[1].step == 2  # 16 pairs / (2 x 4) per step
    train("--resume", str(two), "--epochs", "2", processes=2)
    train("--batch-size", "8", "--epochs", "2", "--out", str(one))

    info_two, tensors_two = load_tensors(two)
    info_one, tensors_one = load_tensors(one)
    assert info_two.step == info_one.step == 4 and info_two.dataset == "multimnist"
    model = fresh_model(TrainConfig(seed=0), CapsNetConfig(image_size=36))
    initial = model.state_dict()
    # Adam steps each weight by lr m_hat / (sqrt(v_hat) + eps), m and v its running first and
    # second moments of the gradient. Where the gradient is a sum of terms that nearly cancel,
    # or is so small (1e-8) that eps weighs in, the rounding of one sum over 8 examples against
    # two sums over 4 decides it, and its steps with it: there the two runs' v differs (sqrt(v)
    # by over 1 %), or their last step's direction m_hat / (sqrt(v_hat) + eps) does (by over
    # 0.01; a few dozen of DigitCaps' 4.1 M weights in all). Those are held to 4 steps of about
    # lr apart each, the rest to 5e-5. A fault of the data-parallel run (a batch dropped,
    # gradients summed instead of averaged) changes v for nearly every weight.
    step, (beta1, beta2), eps = 4, (0.9, 0.999), 1e-8  # torch.optim.Adam's defaults, as capsviz trains

    def direction(m, v):
        return m / (1 - beta1**step) / ((v / (1 - beta2**step)).sqrt() + eps)

    for k, (name, _) in enumerate(model.named_parameters()):
        (m_one, v_one), (m_two, v_two) = (
            (t[f"optimizer.{k}.exp_avg"], t[f"optimizer.{k}.exp_avg_sq"]) for t in (tensors_one, tensors_two)
        )
        assert v_one.shape == initial[name].shape, name
        rounded = (v_one.sqrt() - v_two.sqrt()).abs() > 0.01 * torch.maximum(v_one, v_two).sqrt()
        rounded |= (direction(m_one, v_one) - direction(m_two, v_two)).abs() > 0.01
        assert int(rounded.sum()) <= max(2, 1e-4 * rounded.numel()), name
        two_, one_ = tensors_two[name], tensors_one[name]
        torch.testing.assert_close(two_[~rounded], one_[~rounded], rtol=0, atol=5e-5, msg=name)
        assert float((two_ - one_).abs().max()) <= 8.1e-3, name  # 4 steps of at most 1.007 lr each, both ways
    for name, w0 in initial.items():
        # four Adam steps at lr 1e-3 moved every layer far beyond that tolerance
        assert float((tensors_one[name] - w0).abs().max()) > 1e-3, name


def test_a_data_parallel_run_of_one_rank_trains_as_a_single_process(monkeypatch):
    """The torchrun path in this process: the environment read, a gloo group of one joined,
    the trainer wrapped in DistributedDataParallel, the same weights as without it."""
    import socket

    from capsviz.data.mnist import load_sample
    from capsviz.train import distributed
    from capsviz.train.loop import Trainer

    monkeypatch.setenv("WORLD_SIZE", "2")
    assert distributed.launched()
    monkeypatch.setenv("WORLD_SIZE", "many")
    assert not distributed.launched()
    with pytest.raises(ValueError, match="takes --device auto, cpu or cuda"):
        distributed.start("mps")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name, value in {"WORLD_SIZE": "1", "RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}.items():
        monkeypatch.setenv(name, value)
    assert not distributed.launched() and distributed.rank() == 0
    sample = load_sample()
    net = CapsNetConfig(conv1_channels=16, primary_types=4, decoder_hidden=(32, 64))
    config = TrainConfig(epochs=1, batch_size=8, train_subset=24, device="cpu", seed=2)
    plain = Trainer(config, sample, model_config=net)
    list(plain.run())
    assert distributed.start("cpu") == "cpu"
    try:
        ranked = Trainer(config, sample, model_config=net)
        distributed.attach(ranked)
        assert (ranked.rank, ranked.world) == (0, 1) and distributed.rank() == 0
        assert isinstance(ranked.network, torch.nn.parallel.DistributedDataParallel)
        list(ranked.run())
    finally:
        distributed.finish()
    assert distributed.rank() == 0 and ranked.step == plain.step == 3
    for (name, a), b in zip(plain.model.state_dict().items(), ranked.model.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6, msg=name)


def _rank_precision(rank: int, port: int, chosen, results) -> None:
    """One of two gloo ranks: a trainer whose own precision is ``chosen[rank]``, attached."""
    from capsviz.data.mnist import load_sample
    from capsviz.train import distributed
    from capsviz.train.loop import Trainer

    os.environ.update({"WORLD_SIZE": "2", "RANK": str(rank), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    torch.set_num_threads(1)
    distributed.start("cpu")
    try:
        net = CapsNetConfig(conv1_channels=8, primary_types=2, decoder_hidden=(16, 32))
        trainer = Trainer(
            TrainConfig(epochs=1, batch_size=4, train_subset=8, device="cpu"), load_sample(), model_config=net
        )
        trainer.precision = chosen[rank]  # as if "auto" had measured another rate on this rank
        distributed.attach(trainer)
        results.put((rank, trainer.precision, trainer.scaler.is_enabled()))
    finally:
        distributed.finish()


def test_every_rank_computes_in_rank_0s_precision():
    """``auto`` measures on each rank; attach gives every rank rank 0's choice."""
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.get_context("spawn").SimpleQueue()
    mp.spawn(_rank_precision, args=(port, ("fp32", "bf16"), results), nprocs=2)
    assert sorted(results.get() for _ in range(2)) == [(0, "fp32", False), (1, "fp32", False)]


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with MNIST")
def test_workers_stopped_with_ctrl_c_save_and_torchrun_ends_quietly(tmp_path):
    """SIGINT to the workers (README: how to stop a torchrun run quietly): each stops after
    its step, rank 0 saves, they exit 0, and torchrun ends with 0 and no traceback."""
    import re
    import signal
    import time

    out = tmp_path / "run.safetensors"
    launcher = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29518"]
    command = [*launcher, "-m", "capsviz", "train", *RECIPE, "--pairs-per-epoch", "100000", "--batch-size", "4"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "CAPSVIZ_PROGRESS_S": "0"}
    log = tmp_path / "log.txt"
    with open(log, "w") as sink:
        agent = subprocess.Popen([*command, "--out", str(out)], stdout=sink, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 300
        while not re.search(r"batch [1-9]\d*/\d+, ", log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.5)  # until a progress line shows a step taken
        workers = subprocess.run(["pgrep", "-P", str(agent.pid)], capture_output=True, text=True).stdout.split()
        assert len(workers) == 2
        for pid in workers:
            os.kill(int(pid), signal.SIGINT)
        code = agent.wait(timeout=120)
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert "stopped at step" in text and "Traceback" not in text
    assert f"continue with: torchrun --nproc-per-node 2 --no-python capsviz train --resume {out}\n" in text
    assert text.count("stopping after the current step and saving") == 1  # rank 0 alone says it
    assert load_checkpoint(out)[1].step >= 1
