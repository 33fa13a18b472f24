"""Training precision: float32, or mixed precision with bfloat16 or float16 matrix products.

Under ``bf16`` and ``fp16`` the network runs inside :func:`torch.autocast`: matrix
products and convolutions compute in the reduced type, while the numerically sensitive
parts stay float32 (squash and the capsule lengths, the softmax of routing, the losses:
:mod:`capsviz.model.routing` and :mod:`capsviz.model.losses` leave autocast for them).
On the CPU routing's products run in float32 too, on u_hat kept in float32: the
libraries' one-row reduced-type products run slower than float32's
(``_PredictRouteFunction`` in :mod:`capsviz.model.routing`); on a CPU with AMX they run
in bfloat16 on u_hat laid out for products of J rows
(:func:`capsviz.model.routing.routes_in_blocks`).
The weights and Adam's state stay float32. ``fp16`` adds a gradient scaler, since float16
gradients underflow; bfloat16 has float32's exponent range and needs none.

``auto`` picks bfloat16 where the hardware runs it fast (a CUDA GPU with bfloat16, a CPU
whose AMX or AVX-512 BF16 units multiply faster than float32, as measured by
:func:`capsviz.runtime.bf16_speedup`), float16 on a CUDA GPU without bfloat16, float32
elsewhere. On a CPU without bfloat16 units a bfloat16 product is converted in software
and runs slower than float32; on one whose units are slower than its float32 path (an
Intel Xeon with AVX-512 BF16 but no AMX: bfloat16 training at 0.78x float32's rate) it
would slow training down.
"""

from __future__ import annotations

import contextlib

import torch

from capsviz.runtime import CPU_BF16_FLAGS, bf16_is_faster, bf16_speedup, cpu_bf16_units  # noqa: F401 (CPU_BF16_FLAGS: part of this API)
from capsviz.texts import _
from capsviz.train.config import check_precision

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def resolve_precision(precision: str, device: torch.device) -> str:
    """The precision a run on ``device`` uses: ``precision`` itself, or for ``auto`` the
    fastest safe one (see the module docstring).

    Raises ``ValueError`` for a name not in :data:`capsviz.train.config.PRECISIONS`, for
    ``fp16`` off CUDA (float16 is for GPUs without bfloat16; on a CPU use ``bf16``), and for
    ``bf16`` on a CUDA GPU without bfloat16 (use ``fp16``).
    """
    check_precision(precision)
    cuda = device.type == "cuda"
    bf16_cuda = cuda and torch.cuda.is_bf16_supported()
    if precision == "auto":
        if cuda:
            return "bf16" if bf16_cuda else "fp16"
        return "bf16" if device.type == "cpu" and bf16_is_faster() else "fp32"
    if precision == "fp16" and not cuda:
        raise ValueError(_("fp16 needs a CUDA GPU (this run is on {device}); use bf16 or fp32", device=device))
    if precision == "bf16" and cuda and not bf16_cuda:
        raise ValueError(_("{gpu} has no bfloat16; use fp16 or fp32", gpu=torch.cuda.get_device_name(device)))
    if precision == "bf16" and device.type not in ("cpu", "cuda"):
        raise ValueError(_("bf16 runs on the CPU or CUDA, not on {device}; use fp32", device=device.type))
    return precision


def why_precision(precision: str, device: torch.device) -> str:
    """Why ``auto`` picks the precision it does on ``device`` (one phrase, for a run's first
    line); empty for a precision given by name."""
    if precision != "auto":
        return ""
    if device.type == "cuda":
        return _("auto: the GPU has bfloat16") if torch.cuda.is_bf16_supported() else _("auto: the GPU has no bfloat16")
    units = ", ".join(cpu_bf16_units())
    if device.type == "cpu" and units and bf16_is_faster():
        return _(
            "auto: this CPU's bfloat16 units ({units}) multiply {rate:.1f}x as fast as float32",
            units=units,
            rate=bf16_speedup(),
        )
    if device.type == "cpu" and units:
        return _(
            "auto: this CPU's bfloat16 units ({units}) multiply at {rate:.2f}x float32's rate, no faster",
            units=units,
            rate=bf16_speedup(),
        )
    if device.type == "cpu":
        return _("auto: this CPU has no bfloat16 units (AMX or AVX-512 BF16), where bfloat16 would be slower")
    return _("auto: bfloat16 is not used on {device}", device=device.type)


def autocast(precision: str, device: torch.device):
    """The context to run the network's forward pass in: ``torch.autocast`` for ``bf16`` and
    ``fp16`` (a resolved precision), nothing for ``fp32``."""
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=DTYPES[precision])


def grad_scaler(precision: str, device: torch.device) -> torch.amp.GradScaler:
    """A gradient scaler, enabled for ``fp16`` only (a disabled one passes steps through)."""
    return torch.amp.GradScaler(device.type, enabled=precision == "fp16")


def allow_tf32(device: torch.device) -> None:
    """On CUDA, let what stays float32 use TF32 tensor cores (matrix products and cuDNN
    convolutions with a 10-bit mantissa; process-wide). Does nothing elsewhere."""
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
