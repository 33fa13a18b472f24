"""Data-parallel training on ``torch.distributed`` (DistributedDataParallel).

Launched by ``torchrun --nproc-per-node N -m capsviz train ...``, which sets ``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT`` for every process. The
backend is NCCL on CUDA (each process takes the GPU of its local rank) and gloo on the CPU.

- ``--batch-size`` is per process: one optimizer step sees ``WORLD_SIZE x batch-size``
  examples, batch k of an epoch being examples ``[k B W, (k + 1) B W)`` of its order (MNIST:
  the seeded permutation; MultiMNIST: the epoch's seeded pairs), rank r taking
  ``[k B W + r B, k B W + (r + 1) B)``. DDP averages the gradients, so a step equals one
  single-process step on the whole global batch.
- Rank 0 alone logs, evaluates and writes checkpoints; every rank reads the checkpoint given
  to ``--resume`` or ``--init`` (on several machines it must be at the same path on each).
- The ranks agree on stopping and on a diverged loss before every step, so a Ctrl+C or a
  NaN on one rank ends them all at the same step.
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist

from capsviz.texts import _
from capsviz.train.precision import grad_scaler


def launched() -> bool:
    """Whether this process is one of several started by ``torchrun`` (``WORLD_SIZE`` > 1)."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1")) > 1
    except ValueError:
        return False


def rank() -> int:
    """This process's rank: 0 outside a data-parallel run."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def start(device: str | None) -> str:
    """Join the process group of a ``torchrun`` launch; return the device this rank trains on.

    ``device``: ``auto``/None (CUDA when there is a GPU, else the CPU), ``cpu`` or ``cuda``; a
    CUDA rank takes ``cuda:LOCAL_RANK``.

    Raises
    ------
    ValueError
        If ``device`` names one GPU (``cuda:N``: the local rank picks it) or ``mps``, or
        there are fewer GPUs than local ranks.
    """
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if device in (None, "", "auto"):
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise ValueError(_("a data-parallel run takes --device auto, cpu or cuda (got {device!r})", device=device))
    if device == "cuda":
        if local >= torch.cuda.device_count():
            raise ValueError(
                _(
                    "local rank {local} has no GPU (this machine has {device_count})",
                    local=local,
                    device_count=torch.cuda.device_count(),
                )
            )
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
    dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    return device


def attach(trainer) -> None:
    """Make ``trainer`` (a :class:`~capsviz.train.loop.Trainer` on this rank's device) one rank
    of the run: its rank and world size, and its model wrapped in DistributedDataParallel
    (which copies rank 0's weights to every rank), and rank 0's precision: ``auto`` measures
    the bfloat16 rate on each rank (:func:`~capsviz.runtime.bf16_speedup`), and every rank
    must compute alike. Call it before ``trainer.run()``."""
    trainer.rank, trainer.world = dist.get_rank(), dist.get_world_size()
    chosen = [trainer.precision]
    dist.broadcast_object_list(chosen, src=0)
    if chosen[0] != trainer.precision:
        trainer.precision = chosen[0]
        trainer.scaler = grad_scaler(trainer.precision, trainer.device)
    ids = [trainer.device.index] if trainer.device.type == "cuda" else None
    trainer.ddp = torch.nn.parallel.DistributedDataParallel(trainer.model, device_ids=ids)


def finish() -> None:
    """Leave the process group (a no-op outside a data-parallel run)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
