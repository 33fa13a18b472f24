"""Command line: ``capsviz`` (the app), ``capsviz train``, ``eval``, ``trace``, ``classify``
and ``robustness``; each command is a module of :mod:`capsviz.commands`.

No Qt import at module level: the headless commands work without a display. Building the
parser imports no torch either, so ``capsviz --help`` and ``capsviz COMMAND --help``
answer at once.
"""

from __future__ import annotations

import argparse
import gettext
import os
import re
import sys

from capsviz.commands import app, classify, robustness, trace, train
from capsviz.commands import eval as evaluate
from capsviz.commands.common import CliError
from capsviz.texts import _, use_for_argparse

COMMANDS = (train, evaluate, trace, classify, robustness)  # in the order --help lists them
# what torch's CPU and CUDA allocators say when a tensor does not fit
OUT_OF_MEMORY = re.compile(r"can't allocate memory|out of memory", re.IGNORECASE)


class _VersionAction(argparse.Action):
    """``--version``: the full report (imports torch and Qt only when asked)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from capsviz.logs import version_report

        print(version_report())
        parser.exit()


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help with its section headings ended as the language writes it ("options:",
    "选项："): argparse puts an ASCII colon after each heading."""

    def format_help(self) -> str:
        text = super().format_help()
        for heading in getattr(self, "_headings", ()):
            text = text.replace(f"\n{heading}:\n", "\n" + _("{heading}:", heading=heading) + "\n")
        return text

    def start_section(self, heading) -> None:
        self._headings = [*getattr(self, "_headings", ()), heading]
        super().start_section(heading)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose help is :class:`_HelpFormatter`'s; its subparsers are of this class too."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """``capsviz``'s parser: the app's options and one subparser per command of
    :data:`COMMANDS`, each with ``func``, its run function (none: the app)."""
    parser = _Parser(
        prog="capsviz", description=_("A visual explorer for Capsule Networks. Without a command, opens the app.")
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        nargs=0,
        help=_("print the versions of capsviz, Python, torch and Qt, and the device, then exit"),
    )
    app.add_options(parser)
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", help=_("a headless command (without one, capsviz opens the app)")
    )
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``capsviz`` with ``argv`` (default: the process's arguments); returns the exit
    code: 0, 1 (``classify``: a file failed), 2 (a user-facing error, printed as one
    ``error: ...`` line) or 130 (interrupted). The help, the errors and the reports are in the
    language of the environment (:mod:`capsviz.texts`)."""
    use_for_argparse()
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the command's own parser, with its usage (argparse's own says the app's)
        commands = parser._subparsers._group_actions[0].choices  # the subparsers, where argparse keeps them
        (commands.get(args.command) or parser).error(gettext.gettext("unrecognized arguments: %s") % " ".join(extra))
    try:  # the imports take a second or two (torch): a Ctrl+C meanwhile ends as one later does
        from capsviz.logs import setup_logging

        log = setup_logging()
        from capsviz.data.mnist import MnistNotFoundError
        from capsviz.train.checkpoint import CheckpointError
        from capsviz.train.events import TrainingDiverged
    except KeyboardInterrupt:
        print(_("interrupted"), file=sys.stderr)
        return 130

    run = getattr(args, "func", app.run)
    try:
        return run(args)
    except (CheckpointError, MnistNotFoundError, CliError, TrainingDiverged, ValueError) as exc:
        message = str(exc)
        if isinstance(exc, MnistNotFoundError) and hasattr(args, "download_sub"):  # a command that downloads
            message += " " + _("Or add --download to fetch them from torchvision's mirrors (up to 11 MB).")
        print(_("error: {message}", message=message), file=sys.stderr)
        log.error("capsviz %s: %s", args.command or "app", message)
        return 2
    except BrokenPipeError:  # the reader left (capsviz classify … | head -1): nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor at exit's flush
        return 1
    except OSError as exc:
        name = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        message = f"{name}{exc.strerror or exc}"
        print(_("error: {message}", message=message), file=sys.stderr)
        log.error("capsviz %s: %s%s", args.command or "app", name, exc.strerror or exc)
        return 2
    except KeyboardInterrupt:
        print(_("interrupted"), file=sys.stderr)
        return 130
    except (MemoryError, RuntimeError) as exc:  # torch's allocators raise RuntimeError
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not isinstance(exc, MemoryError) and not OUT_OF_MEMORY.search(detail):
            log.exception("capsviz %s: unexpected error", args.command or "app")
            raise
        message = _("out of memory ({detail}); a smaller --batch-size needs less", detail=detail)
        print(_("error: {message}", message=message), file=sys.stderr)
        log.error("capsviz %s: %s", args.command or "app", message)
        return 2
    except Exception:
        log.exception("capsviz %s: unexpected error", args.command or "app")
        raise


if __name__ == "__main__":
    sys.exit(main())
