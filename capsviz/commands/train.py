"""``capsviz train``: train headless with a progress bar; autosaves after every epoch and on
Ctrl+C. The flags are the fields of :class:`~capsviz.train.config.TrainConfig`."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import re
import shlex
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from capsviz.commands.common import DEVICE_HELP, CliError, add_common, checked, ensure_mnist, resolve
from capsviz.paths import user_checkpoint_dir
from capsviz.texts import N_, _

SIGPIPE = getattr(signal, "SIGPIPE", 13)  # a closed pipe's signal (POSIX); its number elsewhere
PROGRESS_LINE_S = 60.0  # seconds between progress lines when stderr is not a terminal (CAPSVIZ_PROGRESS_S)

TRAIN_HELP = {
    "epochs": N_("total epochs to reach (a resumed run counts the epochs it already has)"),
    "batch_size": N_("images per optimizer step"),
    "lr": N_("Adam learning rate at step 0"),
    "lr_decay": N_("learning-rate factor per --lr-decay-steps steps"),
    "lr_decay_steps": N_("steps per --lr-decay factor (smooth decay)"),
    "routing_iterations": N_("routing iterations during training"),
    "reconstruction_weight": N_("weight of the per-image sum of squared pixel errors"),
    "max_shift": N_("random shifts of up to this many pixels, zero padded"),
    "seed": N_("seed of the initial weights, the batch order and the shifts"),
    "device": DEVICE_HELP,
    "train_subset": N_("train on the first N training images only (0: all 60,000)"),
    "test_subset": N_("evaluate on the first N test images (MultiMNIST: test pairs) after each epoch (0: all 10,000)"),
    "dataset": N_("mnist: single digits, 28x28; multimnist: pairs of overlapping digits, 36x36 (paper Sec. 6)"),
    "pairs_per_epoch": N_("MultiMNIST pairs drawn afresh for each epoch"),
    "model": N_(
        "capsnet, or a baseline CNN: baseline (the paper's, 35.4 M parameters on MNIST) or "
        "baseline-small (64, 64, 32 channels: the CapsNet's size, as shipped)"
    ),
    "precision": N_(
        "auto (bf16 where the CPU or GPU runs it fast, else fp32), fp32, bf16, or fp16 (GPUs without bf16)"
    ),
}


def _add_train_flags(p: argparse.ArgumentParser) -> None:
    """One flag per field of TrainConfig but ``device`` (in :func:`add_common`), checked
    against its limit or its choices."""
    from capsviz.data.datasets import DATASETS
    from capsviz.train.config import MODELS, PRECISIONS, TRAIN_LIMITS, TrainConfig

    defaults = TrainConfig()
    choices = {"precision": PRECISIONS, "dataset": DATASETS, "model": MODELS}
    for f in dataclasses.fields(TrainConfig):
        if f.name == "device":
            continue
        value = getattr(defaults, f.name)
        if f.name in choices:
            p.add_argument(
                "--" + f.name,
                choices=choices[f.name],
                default=None,
                help=_("{help} (default: {value})", help=_(TRAIN_HELP[f.name]), value=value),
            )
            continue
        p.add_argument(
            "--" + f.name.replace("_", "-"),
            type=checked(f.name),
            default=None,
            metavar=type(value).__name__.upper(),
            help=_(
                "{help}; {range} (default: {value})",
                help=_(TRAIN_HELP[f.name]),
                range=TRAIN_LIMITS[f.name].describe(),
                value=value,
            ),
        )


def add_parser(sub) -> argparse.ArgumentParser:
    t = sub.add_parser(
        "train",
        help=_("train headless with a progress bar"),
        description=_(
            "Train a CapsNet (or, with --model, the baseline CNN) on MNIST or MultiMNIST with the "
            "paper's recipe; autosaves after every epoch and on Ctrl+C. With --resume or --init, an "
            "option not given takes the checkpoint's value, not the default shown. Progress: a bar on "
            "a terminal, else (a log file) a line every 60 s, or every CAPSVIZ_PROGRESS_S seconds."
        ),
    )
    _add_train_flags(t)
    t.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help=_(
            "checkpoint to write, autosaved every epoch and on stop (default: the file given to "
            "--resume, else a new file <user data folder>/checkpoints/capsnet[-N].safetensors, for a CNN "
            "baseline[-N].safetensors; .safetensors is added to a name without a suffix); an existing file is "
            "refused unless --overwrite is given"
        ),
    )
    t.add_argument(
        "--overwrite", action="store_true", help=_("allow --out to replace an existing checkpoint and its .best file")
    )
    t.add_argument(
        "--resume",
        type=Path,
        default=None,
        metavar="FILE",
        help=_(
            "continue exactly from a training checkpoint (an autosave, with optimizer state), "
            "writing into FILE unless --out is given"
        ),
    )
    t.add_argument(
        "--init",
        type=Path,
        default=None,
        metavar="FILE",
        help=_(
            "continue from a weights-only checkpoint (e.g. the shipped one). Taken over from it: "
            "the weights, the step (so the learning rate), the completed epochs and the recipe "
            "(every setting above but --device); flags given here replace the recipe's values; Adam "
            "starts with fresh moments. --epochs is the total, so it must exceed the completed epochs. "
            "An MNIST model given with --dataset multimnist starts a new MultiMNIST run from its weights "
            "(convolutions copied, W_ij and the decoder's output widened to the 36x36 field)"
        ),
    )
    add_common(t)
    t.set_defaults(func=run)
    return t


def _destination(args: argparse.Namespace) -> Path:
    """Where ``capsviz train`` writes: ``--out``, else the ``--resume`` file, else a new file
    in the user data folder. An existing ``--out`` (other than the run being resumed) is
    refused without ``--overwrite``; the destination is checked to be writable before MNIST is
    read."""
    from capsviz.train.checkpoint import best_path, check_destination, fresh_path

    if args.out is None:
        name = (
            "baseline.safetensors" if getattr(args, "model", None) not in (None, "capsnet") else "capsnet.safetensors"
        )
        out = args.resume if args.resume is not None else fresh_path(user_checkpoint_dir() / name)
    else:
        out = Path(args.out)
        if out.name in ("", ".."):  # '' (Path makes it '.') names no file
            raise CliError(_("--out needs a file name, such as run.safetensors"))
        if not out.suffix and not out.exists():
            out = out.with_name(out.name + ".safetensors")
        same_run = args.resume is not None and Path(args.resume).resolve() == Path(out).resolve()
        taken = [p for p in (Path(out), best_path(out)) if p.is_file()]
        if taken and not same_run and not args.overwrite:
            raise CliError(
                _(
                    "{path} exists (a model of an earlier run); pass --overwrite to replace it, or give another --out",
                    path=taken[0],
                )
            )
    return check_destination(out)


def _progress_interval() -> float:
    """Seconds between progress lines when stderr is not a terminal: ``CAPSVIZ_PROGRESS_S``
    (a number >= 0), else :data:`PROGRESS_LINE_S`. ``CliError`` for another value."""
    value = os.environ.get("CAPSVIZ_PROGRESS_S", "")
    if not value:
        return PROGRESS_LINE_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # NaN too
        raise CliError(_("CAPSVIZ_PROGRESS_S must be a number of seconds, 0 or more (got {value!r})", value=value))
    return seconds


def _as_flags(cfg) -> str:
    """The run's recipe as the flags that give it (``--epochs 10 --batch-size 128 …``), less the
    device (named before it) and the pairs per epoch of a run on single digits."""
    return " ".join(
        f"--{name.replace('_', '-')} {value}"
        for name, value in dataclasses.asdict(cfg).items()
        if name != "device" and (name != "pairs_per_epoch" or cfg.dataset == "multimnist")
    )


def _nothing_to_train(trainer, source: Path) -> str | None:
    """The message when ``trainer`` already has ``--epochs`` completed and evaluated epochs,
    else None (a run stopped while its last epoch was evaluated resumes to evaluate it)."""
    if trainer.epoch < trainer.config.epochs or not trainer.evaluated:
        return None
    return _(
        "{path} has {done} completed epochs and --epochs is {epochs}: nothing to train; --epochs is the total "
        "to reach, e.g. --epochs {more} for one more epoch",
        path=source,
        done=trainer.epoch,
        epochs=trainer.config.epochs,
        more=trainer.epoch + 1,
    )


@contextlib.contextmanager
def _settings_as_flags() -> Iterator[None]:
    """Within the block (the run being set up), a ``ValueError`` about recipe fields becomes a
    ``CliError`` naming the flags that give them: ``test_subset must be at most 10,000 …`` ->
    ``--test-subset must be …``, ``cannot change batch_size, seed when …`` -> ``cannot change
    --batch-size, --seed when …``."""
    from capsviz.train.config import TrainConfig

    try:
        yield
    except ValueError as exc:
        if type(exc) is not ValueError:  # MNIST's data errors and the like say their own
            raise
        names = "|".join(f.name for f in dataclasses.fields(TrainConfig))
        first = re.match(rf"({names}) ", str(exc))
        listed = re.match(rf"(.*?\bcannot change )((?:(?:{names})(?:, )?)+)( when .*)", str(exc), re.S)
        if first:
            raise CliError("--" + first.group(1).replace("_", "-") + str(exc)[first.end(1) :]) from None
        if listed:
            flags = ", ".join("--" + name.replace("_", "-") for name in listed.group(2).split(", "))
            raise CliError(listed.group(1) + flags + listed.group(3)) from None
        raise


def run(args: argparse.Namespace) -> int:
    from capsviz.data.mnist import load_mnist
    from capsviz.runtime import tune_process
    from capsviz.train import distributed
    from capsviz.train.checkpoint import load_model
    from capsviz.train.config import TrainConfig
    from capsviz.train.loop import Trainer, check_resumable

    tune_process("train")
    every_s = _progress_interval()  # a CAPSVIZ_PROGRESS_S that is no number is said before any work
    if args.resume and args.init:
        raise CliError(_("use either --resume (a training checkpoint) or --init (weights only), not both"))
    if getattr(args, "checkpoint", None) is not None:  # capsviz --checkpoint FILE train
        raise CliError(
            _(
                "--checkpoint before train names the model the app opens; to train on from {path}, give "
                "train --resume {path} (a training checkpoint) or --init {path} (weights only)",
                path=args.checkpoint,
            )
        )
    data_root = resolve(args, "data_root")
    overrides = {
        f.name: getattr(args, f.name)
        for f in dataclasses.fields(TrainConfig)
        if f.name != "device" and getattr(args, f.name, None) is not None
    }
    for given in (args.resume, args.init):
        if given is not None:
            _model, info, _state = load_model(given)  # refuse a bad file before spending time on the data
            if given is args.resume:
                check_resumable(info)
    if args.resume is None and args.init is None:
        with _settings_as_flags():  # a setting that does not fit its data set is said before the data is read
            TrainConfig(**overrides)
    device = resolve(args, "device")
    parallel = distributed.launched()
    if parallel:  # one of the processes of torchrun; only rank 0 writes and prints
        device = distributed.start(device)
    lead = distributed.rank() == 0
    out = _destination(args) if lead else None
    ensure_mnist(args, None, ask=not parallel)  # each process checks its own; only a lone one asks
    train_data = load_mnist(train=True, data_root=data_root)
    test_data = load_mnist(train=False, data_root=data_root)
    if device is not None:
        overrides["device"] = device
    with _settings_as_flags():
        if args.resume:
            trainer = Trainer.resume(args.resume, train_data, test_data, overrides=overrides, checkpoint_path=out)
        elif args.init:
            trainer = Trainer.continue_from_weights(
                args.init, train_data, test_data, overrides=overrides, checkpoint_path=out
            )
        else:
            trainer = Trainer(TrainConfig(**overrides), train_data, test_data, checkpoint_path=out)
    if not lead:
        trainer.checkpoint_path = None
    if parallel:
        distributed.attach(trainer)
    source = args.resume or args.init
    if source is not None:
        message = _nothing_to_train(trainer, source)
        if message:
            raise CliError(message)
    try:
        return _train_with_progress(trainer, args, overrides, lead, every_s)
    finally:
        distributed.finish()


def _resume_command(trainer, args: argparse.Namespace, path: Path) -> str:
    """The command that continues a stopped run exactly: ``--resume`` of its autosave with
    the data folder and device it was given, under torchrun with as many processes."""
    command = ["capsviz", "train", "--resume", str(path)]
    for option, name in (("--data-root", "data_root"), ("--device", "device")):
        if (value := resolve(args, name)) is not None:
            command += [option, str(value)]
    if trainer.world > 1:
        command = ["torchrun", "--nproc-per-node", str(trainer.world), "--no-python", *command]
    return shlex.join(command)


def _closed_pipe_probe():
    """Where stdout is a pipe (POSIX), a function that says, without writing, whether its
    reader has left (the pipe's write end reports POLLERR then); else None."""
    import select
    import stat

    try:
        fd = sys.stdout.fileno()
        if not hasattr(select, "poll") or not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
    except (AttributeError, OSError, ValueError):  # no stdout, or one without a descriptor
        return None
    poller = select.poll()
    poller.register(fd, 0)  # no events asked for: POLLERR and POLLHUP come all the same
    return lambda: bool(poller.poll(0))


def _train_with_progress(trainer, args: argparse.Namespace, overrides: dict, lead: bool, every_s: float) -> int:
    """Run ``trainer`` with a progress bar and the run's messages (printed by rank 0 only; a
    progress line every ``every_s`` seconds instead of the bar where stderr is no terminal);
    the first Ctrl+C stops it cleanly with an autosave. Returns the exit code: 0, or 130
    after a stop in a single process."""
    from tqdm import tqdm

    from capsviz.train.events import BatchEvent, EpochEvent, StoppedEvent
    from capsviz.train.precision import why_precision

    received: list[int] = []  # the stop signals, SIGPIPE for a reader that left

    def reader_left() -> None:
        """stdout's reader has left (``capsviz train … | head -1``): the run stops after the
        current step and saves, as on Ctrl+C, and its messages go to stderr from now on."""
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor a write at exit's flush fails
        received.append(SIGPIPE)
        trainer.request_stop()
        tqdm.write(_("standard output was closed: stopping after the current step and saving"), file=sys.stderr)

    def say(text: str) -> None:
        """Print one of the run's messages (rank 0 only) on stdout, above the progress bar
        (on stderr once stdout's reader has left)."""
        if not lead:
            return
        if SIGPIPE not in received:
            try:
                tqdm.write(text, file=sys.stdout)
                sys.stdout.flush()  # a pipe's reader that left is found now, not at exit
                return
            except BrokenPipeError:
                reader_left()
        tqdm.write(text, file=sys.stderr)

    reader_gone = _closed_pipe_probe() if lead else None  # found at every step, not only at a message

    if args.init and trainer.widened:
        size = trainer.model.cfg.image_size
        say(
            _(
                "from {path}: its weights widened to {size}x{size} {dataset} (capsviz.model.transfer); "
                "a new run from step 0 with the recipe below",
                path=args.init,
                size=size,
                dataset=trainer.config.dataset,
            )
        )
    elif args.init:
        given = sorted(k for k in overrides if k != "device")
        fields = {"path": args.init, "step": trainer.step, "lr": trainer.config.lr_at(trainer.step)}
        if given:
            text = _(
                "from {path}: its weights, step {step:,} (lr {lr:.2e}), {epochs} completed epochs and its recipe, "
                "with {flags} from the command line; fresh Adam moments",
                flags=", ".join(given),
                epochs=trainer.epoch,
                **fields,
            )
        else:
            text = _(
                "from {path}: its weights, step {step:,} (lr {lr:.2e}), {epochs} completed epochs and its recipe; "
                "fresh Adam moments",
                epochs=trainer.epoch,
                **fields,
            )
        say(text)
    cfg = trainer.config
    ranks = _(" x {n} processes (torch.distributed)", n=trainer.world) if trainer.world > 1 else ""
    why = why_precision(cfg.precision, trainer.device)
    precision = f"{trainer.precision} ({why})" if why else trainer.precision
    say(
        _(
            "training on {device}{ranks} in {precision}: {config}",
            device=trainer.device,
            ranks=ranks,
            precision=precision,
            config=_as_flags(cfg),
        )
    )
    say(_("checkpoint: {path}", path=trainer.checkpoint_path))
    # the steps already taken (at the batch size they were taken with) and those of the epochs to come
    total = trainer.step + (cfg.epochs - trainer.epoch) * trainer.batches_per_epoch - trainer.batch_in_epoch
    # on a terminal a progress bar; in a log file (nohup, a pipe) a line every PROGRESS_LINE_S
    # instead of the bar's carriage returns, which pile up into one line
    terminal = sys.stderr.isatty()
    bar = tqdm(total=total, initial=trainer.step, unit=_("batch"), dynamic_ncols=True, disable=not (lead and terminal))
    last_line = -float("inf")

    # The first Ctrl+C (or, alone, SIGTERM: `kill`, `timeout`, a service manager) stops cleanly
    # after the current step and autosaves; a second one aborts. Under torchrun SIGTERM stays
    # its agent's way to end the workers at once.
    stop_signals = [signal.SIGINT] + ([signal.SIGTERM] if trainer.world == 1 else [])

    def on_stop_signal(signum, frame):
        if signum == signal.SIGINT:  # under torchrun every rank gets it; rank 0 says so
            say(_("stopping after the current step and saving (Ctrl+C again to abort)"))
        else:
            name = signal.Signals(signum).name
            say(_("{signal}: stopping after the current step and saving ({signal} again to abort)", signal=name))
        received.append(signum)
        trainer.request_stop()
        signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)

    previous = {signum: signal.signal(signum, on_stop_signal) for signum in stop_signals}
    stopped_early = False
    task = trainer.task
    try:
        for ev in trainer.run():
            if isinstance(ev, BatchEvent):
                if reader_gone is not None and SIGPIPE not in received and reader_gone():
                    reader_left()
                if lead and not terminal and time.monotonic() - last_line >= every_s:
                    last_line = time.monotonic()
                    line = ev.progress(cfg.epochs, cfg.batch_size, _)
                    print(_("{progress}, loss {loss:.4f}", progress=line, loss=ev.loss), file=sys.stderr, flush=True)
                bar.update(1)
                bar.set_postfix(
                    epoch=ev.epoch + 1,
                    loss=f"{ev.loss:.4f}",
                    acc=f"{ev.train_accuracy:.3f}",
                    img_s=f"{ev.images_per_s:.0f}",
                    lr=f"{ev.lr:.2e}",
                )
            elif isinstance(ev, EpochEvent):
                say(
                    _(
                        "epoch {epoch}: {measure} {p:.2f} % ({n:,} {unit}), step {step}, saved {path}",
                        epoch=ev.epoch,
                        measure=_(task.measure),
                        p=100 * ev.test_accuracy,
                        n=ev.test_images,
                        unit=_(task.test_unit),
                        step=ev.step,
                        path=ev.checkpoint,
                    )
                )
            elif isinstance(ev, StoppedEvent):
                stopped_early = not ev.finished
                if lead:
                    end = (
                        _("finished at step {step}; checkpoint {path}")
                        if ev.finished
                        else _("stopped at step {step}; checkpoint {path}")
                    )
                    text = end.format(step=ev.step, path=ev.checkpoint)
                    if not ev.finished and ev.checkpoint is not None:
                        text += "\n" + _(
                            "continue with: {command}", command=_resume_command(trainer, args, ev.checkpoint)
                        )
                    say(text)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        bar.close()
    # a stop asked for and saved is a clean end: under torchrun an exit code of 0, so that its
    # agent reports no failed worker; alone, 128 + the signal's number like any interrupted
    # command (130 for Ctrl+C, 143 for SIGTERM, 141 for a closed pipe)
    if stopped_early and trainer.world == 1:
        return 128 + int(received[0] if received else signal.SIGINT)
    return 0
