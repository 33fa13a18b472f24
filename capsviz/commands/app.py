"""``capsviz`` without a command: the Qt app, with the options given before any command."""

from __future__ import annotations

import argparse
from pathlib import Path

from capsviz.commands.common import DEVICE_HELP
from capsviz.texts import _


def add_options(parser: argparse.ArgumentParser) -> None:
    """The app's options, given before a command (the commands read them too)."""
    parser.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        metavar="FILE",
        help=_("checkpoint to load (default: the shipped model)"),
    )
    parser.add_argument("--data-root", type=Path, default=None, metavar="DIR", help=_("folder holding MNIST/raw/"))
    parser.add_argument("--device", default=None, metavar="DEVICE", help=_(DEVICE_HELP))


def run(args: argparse.Namespace) -> int:
    """Open the explorer's window; the exit code of its event loop. A device that is not one,
    or not here, is refused before Qt starts (in the command line's language, and where no
    display could be opened)."""
    from capsviz.commands.common import CliError
    from capsviz.runtime import select_device

    try:
        select_device(args.device or "auto")
    except ValueError as exc:
        raise CliError(str(exc)) from None
    from capsviz.gui.app import run_app

    return run_app(checkpoint=args.checkpoint, data_root=args.data_root, device=args.device or "auto")
