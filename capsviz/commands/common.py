"""What the commands share: the user-facing error, numeric flags checked at parse time,
the options accepted before and after the subcommand, and loading the model to use.
Imports no torch at module level."""

from __future__ import annotations

import argparse
import sys
import unicodedata
from pathlib import Path

from capsviz.paths import shipped_checkpoint
from capsviz.texts import N_, _
from capsviz.train.config import TRAIN_LIMITS, Limit

DEVICE_HELP = N_("auto, cpu, cuda, cuda:N or mps")
ROUTING_HELP = N_("routing iterations at inference, 1 to 100 (default: the number the model was trained with)")
# the numeric flags that are not training settings
LIMITS = {
    **TRAIN_LIMITS,
    "eval_batch_size": Limit(int, 1, 100_000),
    "test_pairs": Limit(int, 1, 1_000_000),
    "test_images": Limit(int, 1, 10_000),
    "test_digits": Limit(int, 0, 10_000),
}


class CliError(Exception):
    """A user-facing error: printed as ``error: ...`` with exit code 2."""


def checked(name: str):
    """An argparse ``type`` that parses a number and checks it against ``LIMITS[name]`` (the
    training settings' :data:`~capsviz.train.config.TRAIN_LIMITS` and the other numeric
    flags), so that argparse refuses a bad value at parse time, naming the flag and its range."""
    limit = LIMITS[name]

    def parse(text: str):
        try:
            value = limit.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(limit.problem(text)) from None  # "must be … (got 'two')"
        problem = limit.problem(value)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value

    return parse


def add_common(p: argparse.ArgumentParser, checkpoint_help: str | None = None, data: bool = True) -> None:
    """Options accepted both before and after the subcommand (``capsviz --device cpu eval`` or
    ``capsviz eval --device cpu``); ``--data-root`` only where the command reads MNIST."""
    if data:
        p.add_argument(
            "--data-root",
            type=Path,
            default=None,
            dest="data_root_sub",
            metavar="DIR",
            help=_("folder holding MNIST/raw/ (default: $CAPSVIZ_DATA, then the user data folder)"),
        )
        p.add_argument(
            "--download",
            action="store_true",
            dest="download_sub",
            help=_(
                "download MNIST from torchvision's mirrors when the data folder lacks it (on a terminal, capsviz asks)"
            ),
        )
    p.add_argument("--device", default=None, dest="device_sub", metavar="DEVICE", help=_(DEVICE_HELP))
    if checkpoint_help:
        p.add_argument(
            "--checkpoint", type=Path, default=None, dest="checkpoint_sub", metavar="FILE", help=checkpoint_help
        )


def check_output(path: Path, overwrite: bool, flag: str, example: str) -> None:
    """Check a command's output file ``path`` before the command's work is spent: refuse a
    folder (``CliError``, suggesting the file name ``example`` in it) and an existing file
    without ``--overwrite`` (``CliError`` naming ``flag``); probe that a file can be written
    there, its missing folders included, and leave no folder behind
    (:func:`~capsviz.paths.check_room`, ``OSError`` naming ``path``)."""
    from capsviz.paths import check_room

    if path.is_dir():
        raise CliError(
            _("{path}: is a folder; give the file to write, e.g. {example}", path=path, example=path / example)
        )
    if path.exists() and not overwrite:
        raise CliError(_("{path} exists; pass --overwrite to replace it, or give another {flag}", path=path, flag=flag))
    check_room(path)


def add_batch_size(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--batch-size",
        type=checked("eval_batch_size"),
        default=500,
        metavar="N",
        help=_("images per forward pass, 1 to 100,000 (default: 500)"),
    )


def add_routing(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--routing-iterations", type=checked("routing_iterations"), default=None, metavar="N", help=_(ROUTING_HELP)
    )


def resolve(args: argparse.Namespace, name: str):
    """The value of option ``name`` given after the subcommand, else before it (else None)."""
    return getattr(args, name + "_sub", None) or getattr(args, name, None)


def check_routing(args: argparse.Namespace) -> None:
    """Refuse ``--routing-iterations`` outside 1..100 (``CliError``)."""
    if args.routing_iterations is not None and not 1 <= args.routing_iterations <= 100:
        raise CliError(_("--routing-iterations must be between 1 and 100"))


def load_model(args: argparse.Namespace, kind: str | None = "capsnet"):
    """The checkpoint of ``--checkpoint`` (default: the shipped one) on ``--device``, after
    checking ``--routing-iterations``: (model, info). ``kind`` None takes a CapsNet or a
    baseline CNN; ``capsnet`` refuses a CNN in one line."""
    from capsviz.runtime import select_device
    from capsviz.train.checkpoint import load_model as load

    check_routing(args)
    device = select_device(resolve(args, "device"))
    model, info, _state = load(resolve(args, "checkpoint") or shipped_checkpoint(), device=device, kind=kind)
    return model, info


def ensure_mnist(args: argparse.Namespace, train: bool | None, ask: bool = True) -> None:
    """Download the MNIST archives the data folder lacks (split ``train``: True, False or
    None for both) from torchvision's mirrors, with a progress bar on stderr: at once with
    ``--download``, after a yes on a terminal when ``ask``, else not (loading then says where
    to put which files). Raises :class:`~capsviz.data.download.MnistDownloadError` when
    every mirror fails."""
    from tqdm import tqdm

    from capsviz.data.download import download_mnist, missing_archives
    from capsviz.data.mnist import resolve_data_root

    root = resolve(args, "data_root")
    missing = missing_archives(root, train)
    if not missing:
        return
    if not resolve(args, "download"):
        if not (ask and sys.stdin.isatty() and sys.stderr.isatty()):
            return
        folder = resolve_data_root(root) / "MNIST" / "raw"
        print(_("MNIST is not in {folder}: missing {files}.", folder=folder, files=", ".join(missing)), file=sys.stderr)
        answer = input(_("Download it from torchvision's mirrors (up to 11 MB)? [y/N] ")).strip().lower()
        if answer not in ("y", "yes", _("y")):
            return
    with tqdm(total=None, unit="B", unit_scale=True, desc="MNIST", file=sys.stderr) as bar:

        def progress(name: str, done: int, total: int) -> None:
            if bar.desc != name:  # the next archive
                bar.reset(total=total or None)
                bar.set_description(name)
            bar.update(done - bar.n)

        download_mnist(root, train, progress)


def display_width(text: str) -> int:
    """The terminal columns ``text`` takes: two for a wide character (Chinese), one for others."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def table_line(cells, widths, left: int = 0) -> str:
    """``cells`` padded to ``widths`` (terminal columns, :func:`display_width`) and joined by
    " | ": the first ``left`` of them aligned left, the others right."""
    padded = []
    for k, (cell, width) in enumerate(zip(cells, widths, strict=True)):
        gap = " " * max(0, width - display_width(cell))
        padded.append(cell + gap if k < left else gap + cell)
    return " | ".join(padded)
