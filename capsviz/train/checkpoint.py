"""safetensors checkpoints: weights plus JSON metadata, optional optimizer and RNG state.

Layout of one ``.safetensors`` file:

- model tensors under their ``state_dict`` names (``conv1.weight``, ``digit_caps.W``, ...);
- optional training state under the reserved prefixes ``optimizer.`` and ``rng.``; the
  optimizer state of a parameter has the shape of its model tensor (PrimaryCaps'
  kernels: (C_out, C_in, k, k), as ``primary_caps.conv.weight``);
- header metadata (strings): ``format`` = ``capsviz-checkpoint-1``, ``model`` (``capsnet``,
  or ``baseline`` for the CNN of :mod:`capsviz.model.baseline`; a file without it holds a
  CapsNet), ``dataset`` (``mnist`` or ``multimnist``), ``model_config`` and
  ``train_config`` (JSON), ``epoch``, ``step``, ``test_accuracy``, ``test_images``,
  ``capsviz_version``, ``created`` (ISO 8601, UTC), and for training state
  ``optimizer_param_groups`` (JSON).

Loading never unpickles. Writes are atomic: a temporary file in the same folder, then
``os.replace``.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import re
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from capsviz import __version__
from capsviz.data.datasets import IMAGE_SIZE, TITLES
from capsviz.model import CapsNet, CapsNetConfig
from capsviz.model.baseline import BaselineCNN, BaselineConfig
from capsviz.model.capsnet import file_orders
from capsviz.paths import check_room, replacing, temporary_pattern
from capsviz.texts import _, english

FORMAT = "capsviz-checkpoint-1"
RESERVED_PREFIXES = ("optimizer.", "rng.")
# optimizer settings that choose an implementation, kept from the optimizer on restore
IMPLEMENTATION_KEYS = ("fused", "foreach")
MAX_HEADER_BYTES = 100 * 1024 * 1024
# metadata ``model`` -> (network, its config)
KINDS = {"capsnet": (CapsNet, CapsNetConfig), "baseline": (BaselineCNN, BaselineConfig)}


class CheckpointError(ValueError):
    """A file that is not a usable capsviz checkpoint; the message says why in one line."""


@dataclass
class CheckpointInfo:
    """What a checkpoint's header says about it.

    ``metadata`` holds all header strings; the typed fields are parsed from it.
    """

    path: Path
    model_config: CapsNetConfig | BaselineConfig
    train_config: dict[str, Any] = field(default_factory=dict)
    epoch: float = 0.0
    step: int = 0
    test_accuracy: float | None = None
    test_images: int | None = None
    created: str = ""
    version: str = ""
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def dataset(self) -> str:
        """What the model is for: ``mnist`` or ``multimnist`` (metadata ``dataset``; a file
        without it is an MNIST model)."""
        return self.metadata.get("dataset", "mnist")

    @property
    def kind(self) -> str:
        """What network the file holds: ``capsnet`` or ``baseline`` (metadata ``model``)."""
        return self.metadata.get("model", "capsnet")

    def summary(self, tr=english) -> str:
        """One line for humans, e.g. ``99.21 % on 10,000 test images, 3 epochs, 2026-11-30``
        (a MultiMNIST model: ``84.16 % on 10,000 test pairs``, both digits right); ``tr``: see
        :mod:`capsviz.texts`."""
        parts = []
        accuracy = None if self.test_accuracy is None else 100 * self.test_accuracy
        if accuracy is not None and not self.test_images:
            parts.append(tr("{accuracy:.2f} %", accuracy=accuracy))
        elif accuracy is not None and self.dataset == "multimnist":
            parts.append(tr("{accuracy:.2f} % on {n:,} test pairs", accuracy=accuracy, n=self.test_images))
        elif accuracy is not None:
            parts.append(tr("{accuracy:.2f} % on {n:,} test images", accuracy=accuracy, n=self.test_images))
        epochs = round(self.epoch, 2)  # a run stopped in its first epoch: 0.05, not 0.0469083
        parts.append(tr("1 epoch") if epochs == 1 else tr("{n:g} epochs", n=epochs))
        if self.created:
            parts.append(self.created[:10])
        return tr(", ").join(parts)


def cnn_line(info: CheckpointInfo | None, tr=english) -> str:
    """One line on the CNN compared with the capsules: its file and test accuracy, e.g.
    ``CNN: baseline.safetensors — 99.10 %``, or, with no ``info``, that a run is training it
    here; ``tr``: see :mod:`capsviz.texts`."""
    if info is None:
        return tr("CNN: training here")
    if info.test_accuracy is None:
        return tr("CNN: {name}", name=info.path.name)
    return tr("CNN: {name} — {accuracy:.2f} %", name=info.path.name, accuracy=100 * info.test_accuracy)


STALE_TEMP_S = 600  # a temporary file this old beside a checkpoint is a killed writer's


def _atomic_save(tensors: dict[str, torch.Tensor], metadata: dict[str, str], path: Path) -> None:
    """Write through a temporary file in the same folder, fsync, then rename over ``path``
    (:func:`~capsviz.paths.replacing`): a writer that dies or fails half-way (killed, full
    disk) leaves ``path`` as it was. safetensors' own I/O errors come out as ``OSError``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for stale in path.parent.glob(temporary_pattern(path)):
        try:
            if now - stale.stat().st_mtime > STALE_TEMP_S:
                stale.unlink()
        except OSError:
            pass
    _refuse_non_file(path)  # creating the temporary file is the writability check
    with replacing(path) as tmp:
        try:
            save_file(tensors, tmp, metadata=metadata)
        except SafetensorError as exc:  # "... I/O error: No space left on device (os error 28)"
            code = re.search(r"os error (\d+)", str(exc))
            if code is None:
                raise OSError(errno.EIO, str(exc)) from None
            raise OSError(int(code[1]), os.strerror(int(code[1]))) from None


def _refuse_non_file(path: Path) -> None:
    """Raise ``OSError`` naming ``path`` when it is a folder or another non-regular file."""
    if path.is_dir():
        raise OSError(errno.EISDIR, _("is a folder; give a file name such as run.safetensors"), str(path))
    if path.exists() and not path.is_file():
        raise OSError(errno.EINVAL, _("is not a regular file (a device, pipe or socket)"), str(path))


def check_destination(path: str | os.PathLike) -> Path:
    """Check that a checkpoint can be written at ``path`` (before any training is spent on it).

    Writes and removes a small probe file beside ``path`` (:func:`~capsviz.paths.check_room`:
    missing folders are made for the probe and removed after it); an existing ``path`` is
    left untouched.

    Returns the path. Raises ``OSError`` naming ``path`` when it is a folder or another
    non-regular file (a device, a pipe), or when its folder cannot be created or written.
    """
    path = Path(path)
    _refuse_non_file(path)
    try:
        check_room(path)
    except OSError as exc:
        raise OSError(
            exc.errno, _("cannot write a checkpoint there ({value})", value=exc.strerror or exc), str(path)
        ) from None
    return path


def best_path(path: str | os.PathLike) -> Path:
    """Where a training run keeps its epoch with the best test accuracy:
    ``run.safetensors`` -> ``run.best.safetensors``."""
    path = Path(path)
    return path.with_name(path.stem + ".best" + path.suffix)


def fresh_path(path: str | os.PathLike) -> Path:
    """``path`` if neither it nor its best-epoch file exists, else the first free numbered
    name beside it: ``capsnet.safetensors`` -> ``capsnet-2.safetensors``, ``-3``, ...

    A new training run writes there, so an earlier run's files are never replaced.
    """
    path = Path(path)
    candidate, k = path, 1
    while candidate.exists() or best_path(candidate).exists():
        k += 1
        candidate = path.with_name(f"{path.stem}-{k}{path.suffix}")
    return candidate


def save_checkpoint(
    path: str | os.PathLike,
    model: CapsNet | BaselineCNN,
    *,
    train_config: dict[str, Any] | None = None,
    epoch: float = 0,
    step: int = 0,
    test_accuracy: float | None = None,
    test_images: int | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    rng_state: torch.Tensor | None = None,
    extra_metadata: dict[str, str] | None = None,
    weights_dtype: torch.dtype = torch.float32,
) -> Path:
    """Write ``model`` (and optionally optimizer and RNG state) atomically to ``path``.

    ``weights_dtype``: float32, or float16 for a file half the size (a shipped model, when
    its evaluation counts are the same); loading always gives float32.

    Returns the path written. Raises ``OSError`` if the file cannot be written; the
    previous file at ``path`` is then left unchanged.
    """
    path = Path(path)
    tensors = {k: v.detach().to("cpu", weights_dtype).contiguous() for k, v in model.state_dict().items()}
    metadata = {
        "format": FORMAT,
        "model": "baseline" if isinstance(model, BaselineCNN) else "capsnet",
        "model_config": model.cfg.to_json(),
        "train_config": json.dumps(train_config or {}, sort_keys=True),
        "epoch": repr(float(epoch)),
        "step": str(int(step)),
        "capsviz_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    # the data set its input size is for (extra_metadata may say so too): without it a file
    # reads as an MNIST model, which a 36x36 model's config contradicts
    for name, size in IMAGE_SIZE.items():
        if size == model.cfg.image_size:
            metadata["dataset"] = name
    if test_accuracy is not None:
        metadata["test_accuracy"] = repr(float(test_accuracy))
    if test_images is not None:
        metadata["test_images"] = str(int(test_images))
    if optimizer is not None:
        sd = optimizer.state_dict()
        params = [p for group in optimizer.param_groups for p in group["params"]]
        orders = file_orders(model)
        for idx, state in sd["state"].items():
            order = orders.get(id(params[idx]))
            for key, value in state.items():
                t = value if torch.is_tensor(value) else torch.tensor(float(value))
                if order is not None and key != "step" and t.dim() == len(order):  # as its parameter's file tensor
                    t = t.permute(order)
                tensors[f"optimizer.{idx}.{key}"] = t.detach().to("cpu").contiguous()
        metadata["optimizer_param_groups"] = json.dumps(sd["param_groups"])
    if rng_state is not None:
        tensors["rng.torch"] = rng_state.detach().cpu().contiguous()
    metadata.update(extra_metadata or {})
    _atomic_save(tensors, metadata, path)
    return path


def _read_header(path: Path) -> dict[str, Any]:
    """Parse the safetensors header by hand, so any bad file gets a precise message."""
    try:
        return _parse_header(path)
    except OSError as exc:
        raise CheckpointError(_("{path}: cannot read: {value}", path=path, value=exc.strerror or exc)) from None


def _parse_header(path: Path) -> dict[str, Any]:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise CheckpointError(_("{path}: no such file", path=path)) from None
    if path.is_dir():
        raise CheckpointError(_("{path}: is a folder, not a checkpoint file", path=path))
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise CheckpointError(_("{path}: file is empty or too short to be a safetensors checkpoint", path=path))
        (n,) = struct.unpack("<Q", head)
        if n == 0 or n > MAX_HEADER_BYTES or 8 + n > size:
            if head[0] == 0x80 and 2 <= head[1] <= 5:
                raise CheckpointError(
                    _(
                        "{path}: looks like a pickle/PyTorch .pt file; capsviz only loads .safetensors "
                        "checkpoints and never unpickles",
                        path=path,
                    )
                )
            if head[:4] == b"PK\x03\x04":
                raise CheckpointError(
                    _(
                        "{path}: a zip archive (a PyTorch .pt file holds a pickle in one, NumPy's .npz arrays); "
                        "capsviz only loads .safetensors checkpoints and never unpickles",
                        path=path,
                    )
                )
            raise CheckpointError(
                _(
                    "{path}: not a safetensors file, or one cut short (its first 8 bytes announce a header "
                    "of {n:,} bytes; {left:,} bytes follow them)",
                    path=path,
                    n=n,
                    left=size - 8,
                )
            )
        raw = fh.read(n)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise CheckpointError(_("{path}: not a safetensors file (header is not JSON)", path=path)) from None
    if not isinstance(header, dict):
        raise CheckpointError(_("{path}: not a safetensors file (header is not a JSON object)", path=path))
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise CheckpointError(_("{path}: corrupt safetensors header (metadata is not a map of strings)", path=path))
    end = 0
    for name, desc in header.items():
        if name == "__metadata__":
            continue
        try:
            end = max(end, int(desc["data_offsets"][1]))
        except (TypeError, KeyError, IndexError, ValueError):
            raise CheckpointError(
                _("{path}: corrupt safetensors header entry for {name!r}", path=path, name=name)
            ) from None
    if 8 + n + end > size:
        raise CheckpointError(
            _("{path}: file is truncated ({size:,} bytes, header needs {end:,})", path=path, size=size, end=8 + n + end)
        )
    return header


def read_info(path: str | os.PathLike) -> CheckpointInfo:
    """Read and validate a checkpoint's header without loading tensors.

    Raises
    ------
    CheckpointError
        If the file is missing, not safetensors, truncated, or not a capsviz checkpoint.
    """
    path = Path(path)
    header = _read_header(path)
    meta = header.get("__metadata__") or {}
    if meta.get("format") != FORMAT:
        raise CheckpointError(
            _(
                "{path}: a safetensors file, but not a capsviz checkpoint (metadata 'format' is "
                "{format!r}, expected {FORMAT!r})",
                path=path,
                format=meta.get("format"),
                FORMAT=FORMAT,
            )
        )
    kind = meta.get("model", "capsnet")
    if kind not in KINDS:
        raise CheckpointError(
            _(
                "{path}: bad checkpoint metadata: model {kind!r} is not one of {KINDS}",
                path=path,
                kind=kind,
                KINDS=", ".join(KINDS),
            )
        )
    try:
        cfg = KINDS[kind][1].from_json(meta.get("model_config", ""))
        train_cfg = json.loads(meta.get("train_config") or "{}")
        if not isinstance(train_cfg, dict):
            raise ValueError(_("train_config is not a JSON object"))
        info = CheckpointInfo(
            path=path,
            model_config=cfg,
            train_config=train_cfg if isinstance(train_cfg, dict) else {},
            epoch=float(meta.get("epoch", 0)),
            step=int(meta.get("step", 0)),
            test_accuracy=float(meta["test_accuracy"]) if "test_accuracy" in meta else None,
            test_images=int(meta["test_images"]) if "test_images" in meta else None,
            created=meta.get("created", ""),
            version=meta.get("capsviz_version", ""),
            metadata=dict(meta),
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise CheckpointError(_("{path}: bad checkpoint metadata: {exc}", path=path, exc=exc)) from None
    size = IMAGE_SIZE.get(info.dataset)
    if size is None:
        raise CheckpointError(
            _(
                "{path}: bad checkpoint metadata: dataset {dataset!r} is not one of {IMAGE_SIZE}",
                path=path,
                dataset=info.dataset,
                IMAGE_SIZE=", ".join(IMAGE_SIZE),
            )
        )
    if size != cfg.image_size:
        raise CheckpointError(
            _(
                "{path}: bad checkpoint metadata: a {dataset} model must take {size}x{size} "
                "images, its config says {image_size}x{image_size}",
                path=path,
                dataset=info.dataset,
                size=size,
                image_size=cfg.image_size,
            )
        )
    return info


def header_of(path: str | os.PathLike | None) -> CheckpointInfo | None:
    """:func:`read_info` of ``path``, or None for no path or a file whose header does not read
    (loading that file says why)."""
    if path is None:
        return None
    try:
        return read_info(path)
    except CheckpointError:
        return None


def training_record(info: CheckpointInfo | None) -> dict[str, Any]:
    """The keyword arguments of :func:`save_checkpoint` that write ``info``'s training record
    again (``train_config``, ``epoch``, ``step``, ``test_accuracy``, ``test_images``), for a
    loaded model saved to another file; ``{}`` (the defaults: no record) for None."""
    if info is None:
        return {}
    return {
        "train_config": info.train_config,
        "epoch": info.epoch,
        "step": info.step,
        "test_accuracy": info.test_accuracy,
        "test_images": info.test_images,
    }


def check_dataset_of(info: CheckpointInfo, dataset: str, command: str) -> None:
    """Refuse, in one line, a model made for another dataset than ``dataset``.

    Raises ``CheckpointError``: e.g. ``run.safetensors: a model for MultiMNIST (36x36
    images); the explorer takes MNIST models``.
    """
    if info.dataset != dataset:
        size = info.model_config.image_size
        raise CheckpointError(
            _(
                "{path}: a model for {dataset} ({size}x{size} images); {command} takes {dataset2} models",
                path=info.path,
                dataset=TITLES[info.dataset],
                size=size,
                command=command,
                dataset2=TITLES[dataset],
            )
        )


def load_tensors(path: str | os.PathLike) -> tuple[CheckpointInfo, dict[str, torch.Tensor]]:
    """Validate and read all tensors of a checkpoint to CPU.

    Raises
    ------
    CheckpointError
        For any unreadable or foreign file (see :func:`read_info`).
    """
    info = read_info(path)
    try:
        tensors = load_file(str(path), device="cpu")
    except (SafetensorError, OSError, RuntimeError, ValueError) as exc:
        raise CheckpointError(
            _("{path}: cannot read tensors: {value}", path=path, value=str(exc).splitlines()[0])
        ) from None
    return info, tensors


def load_checkpoint(
    path: str | os.PathLike, device: str | torch.device = "cpu"
) -> tuple[CapsNet, CheckpointInfo, dict[str, torch.Tensor]]:
    """Build a :class:`CapsNet` from a checkpoint (:func:`load_model` for either network).

    Returns
    -------
    model : CapsNet on ``device``, in eval mode
    info : CheckpointInfo
    training_state : dict of the ``optimizer.*`` / ``rng.*`` tensors (may be empty)

    Raises
    ------
    CheckpointError
        If the file holds a baseline CNN, is not a capsviz checkpoint, or a tensor is
        missing, unexpected, of the wrong shape, or not finite; the message names the
        first such tensor.
    """
    return load_model(path, device, kind="capsnet")


def load_baseline(
    path: str | os.PathLike, device: str | torch.device = "cpu"
) -> tuple[BaselineCNN, CheckpointInfo, dict[str, torch.Tensor]]:
    """Build a :class:`~capsviz.model.baseline.BaselineCNN` from a checkpoint; as
    :func:`load_checkpoint`, refusing a CapsNet file in one line."""
    return load_model(path, device, kind="baseline")


def refuse_kind(info: CheckpointInfo, kind: str) -> None:
    """Raise ``CheckpointError`` in one line when ``info`` holds another network than
    ``kind`` (``capsnet`` or ``baseline``), e.g. ``run.safetensors: a baseline CNN, not a
    CapsNet; capsule views, routing and traces need a CapsNet``."""
    if info.kind == kind:
        return
    if kind == "capsnet":
        raise CheckpointError(
            _("{path}: a baseline CNN, not a CapsNet; capsule views, routing and traces need a CapsNet", path=info.path)
        )
    raise CheckpointError(
        _(
            "{path}: a CapsNet, not a baseline CNN; this needs a CNN (capsviz train --model baseline-small)",
            path=info.path,
        )
    )


def load_model(
    path: str | os.PathLike, device: str | torch.device = "cpu", kind: str | None = None
) -> tuple[CapsNet | BaselineCNN, CheckpointInfo, dict[str, torch.Tensor]]:
    """Build the network a checkpoint holds, a CapsNet or a baseline CNN (``kind`` None),
    or only ``kind`` (``capsnet`` / ``baseline``; the other is refused in one line).

    Returns (model on ``device`` in eval mode, info, training state); raises
    ``CheckpointError`` as :func:`load_checkpoint`.
    """
    info, tensors = load_tensors(path)
    if kind is not None:
        refuse_kind(info, kind)
    network = KINDS[info.kind][0]
    with torch.device("meta"):  # shapes only: nothing is allocated before the checks pass
        expected = network(info.model_config).state_dict()
    training_state = {k: v for k, v in tensors.items() if k.startswith(RESERVED_PREFIXES)}
    weights = {k: v for k, v in tensors.items() if not k.startswith(RESERVED_PREFIXES)}
    for name, ref in expected.items():
        if name not in weights:
            raise CheckpointError(
                _("{path}: missing tensor {name!r} (expected shape {ref})", path=path, name=name, ref=tuple(ref.shape))
            )
        got = weights[name]
        if tuple(got.shape) != tuple(ref.shape):
            raise CheckpointError(
                _(
                    "{path}: tensor {name!r} has shape {got}, the model expects {ref}",
                    path=path,
                    name=name,
                    got=tuple(got.shape),
                    ref=tuple(ref.shape),
                )
            )
        if not got.is_floating_point():
            raise CheckpointError(
                _(
                    "{path}: tensor {name!r} has dtype {dtype}, expected floating point",
                    path=path,
                    name=name,
                    dtype=got.dtype,
                )
            )
        if not torch.isfinite(got).all():
            raise CheckpointError(_("{path}: tensor {name!r} contains NaN or inf values", path=path, name=name))
    unexpected = sorted(set(weights) - set(expected))
    if unexpected:
        raise CheckpointError(
            _("{path}: unexpected tensor {unexpected!r} (not part of this model)", path=path, unexpected=unexpected[0])
        )
    model = network(info.model_config)
    model.load_state_dict({k: weights[k].to(torch.float32) for k in expected})
    model.to(device).eval()
    return model, info, training_state


def restore_optimizer(
    optimizer: torch.optim.Optimizer,
    info: CheckpointInfo,
    training_state: dict[str, torch.Tensor],
    model: torch.nn.Module,
) -> None:
    """Load the optimizer state saved by :func:`save_checkpoint` into ``optimizer``, which
    steps the parameters of ``model``.

    Raises
    ------
    CheckpointError
        If the checkpoint holds no optimizer state or it does not fit.
    """
    groups_json = info.metadata.get("optimizer_param_groups")
    if not groups_json:
        raise CheckpointError(_("{path}: holds no optimizer state, so training cannot resume from it", path=info.path))
    params = [p for group in optimizer.param_groups for p in group["params"]]
    orders = file_orders(model)
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in training_state.items():
        if not key.startswith("optimizer."):
            continue
        parts = key.split(".", 2)
        if len(parts) != 3 or not parts[1].isdigit() or int(parts[1]) >= len(params):
            raise CheckpointError(_("{path}: unexpected optimizer tensor {key!r}", path=info.path, key=key))
        idx, name = int(parts[1]), parts[2]
        order = orders.get(id(params[idx]))
        if order is not None and name != "step" and value.dim() == len(order):  # the file's layout to the parameter's
            value = value.permute([order.index(dim) for dim in range(len(order))]).contiguous()
        if name != "step" and tuple(value.shape) != tuple(params[idx].shape):
            raise CheckpointError(
                _(
                    "{path}: optimizer tensor {key!r} has shape {shape}, its parameter has {expected}",
                    path=info.path,
                    key=key,
                    shape=tuple(value.shape),
                    expected=tuple(params[idx].shape),
                )
            )
        if not torch.isfinite(value).all():
            raise CheckpointError(
                _("{path}: optimizer tensor {key!r} contains NaN or inf values", path=info.path, key=key)
            )
        state.setdefault(idx, {})[name] = value
    # how the update runs (one fused kernel, or per tensor) is this optimizer's, not the saved run's
    kernels = [{k: group[k] for k in IMPLEMENTATION_KEYS if k in group} for group in optimizer.param_groups]
    try:
        optimizer.load_state_dict({"state": state, "param_groups": json.loads(groups_json)})
    except (ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise CheckpointError(_("{path}: optimizer state does not fit: {exc}", path=info.path, exc=exc)) from None
    for group, own in zip(optimizer.param_groups, kernels):
        group.update(own)


def average_checkpoints(
    paths: Sequence[str | os.PathLike],
) -> tuple[CapsNet | BaselineCNN, CheckpointInfo, list[CheckpointInfo]]:
    """The mean of the weights of several checkpoints of one network, tensor by tensor
    (stochastic weight averaging: Izmailov et al. 2018, "Averaging Weights Leads to Wider
    Optima and Better Generalization"; ``torch.optim.swa_utils.AveragedModel`` computes it).
    Meant for the epoch-end autosaves of one run; the networks hold no batch-norm buffers,
    so the mean needs no further pass over the data.

    Returns (the averaged model, float32 on the CPU in eval mode; the info of the last
    path, whose recipe and position the average takes; the infos of all paths, in order).

    Raises
    ------
    ValueError
        If ``paths`` is empty.
    CheckpointError
        If a file is not a usable checkpoint (as :func:`load_model`), or the files hold
        different networks (kind, dataset or configuration), named in one line.
    """
    if not paths:
        raise ValueError(_("average_checkpoints needs at least one checkpoint"))
    first, info0, _state = load_model(paths[0])
    averaged = torch.optim.swa_utils.AveragedModel(first)
    averaged.update_parameters(first)
    infos = [info0]
    for path in paths[1:]:
        model, info, _state = load_model(path)
        for what, a, b in (
            ("network", info0.kind, info.kind),
            ("dataset", info0.dataset, info.dataset),
            ("configuration", info0.model_config, info.model_config),
        ):
            if a != b:
                raise CheckpointError(
                    _(
                        "{path}: cannot average it with {path2}: a different {what} ({b} vs {a})",
                        path=info.path,
                        path2=info0.path,
                        what=what,
                        b=b,
                        a=a,
                    )
                )
        averaged.update_parameters(model)
        infos.append(info)
    return averaged.module.eval(), infos[-1], infos
