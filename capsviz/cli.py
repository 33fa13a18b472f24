"""Command line: ``capsviz`` (the app), ``capsviz train``, ``eval``, ``trace``, ``classify``.

No Qt import at module level: the headless commands work without a display.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
from pathlib import Path

from capsviz.paths import shipped_checkpoint, user_checkpoint_dir

KINDS = ("rotation", "scale", "shear", "translation", "affine")  # capsviz.train.robustness.KINDS


class _VersionAction(argparse.Action):
    """``--version``: the full report (imports torch and Qt only when asked)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from capsviz.logs import version_report

        print(version_report())
        parser.exit()


class CliError(Exception):
    """A user-facing error: printed as ``error: ...`` with exit code 2."""


TRAIN_HELP = {
    "epochs": "total epochs to reach (a resumed run counts the epochs it already has)",
    "batch_size": "images per optimizer step",
    "lr": "Adam learning rate at step 0",
    "lr_decay": "learning-rate factor per --lr-decay-steps steps",
    "lr_decay_steps": "steps per --lr-decay factor (smooth decay)",
    "routing_iterations": "routing iterations during training",
    "reconstruction_weight": "weight of the per-image sum of squared pixel errors",
    "max_shift": "random shifts of up to this many pixels, zero padded",
    "seed": "seed of the initial weights, the batch order and the shifts",
    "device": "auto, cpu, cuda, cuda:N or mps",
    "train_subset": "train on the first N training images only (0: all 60,000)",
    "test_subset": "evaluate on the first N test images (MultiMNIST: test pairs) after each epoch (0: all 10,000)",
    "dataset": "mnist: single digits, 28x28; multimnist: pairs of overlapping digits, 36x36 (paper Sec. 6)",
    "pairs_per_epoch": "MultiMNIST pairs drawn afresh for each epoch",
    "model": "capsnet, or a baseline CNN: baseline (the paper's, 35.4 M parameters on MNIST) or "
    "baseline-small (64, 64, 32 channels: the CapsNet's size, as shipped)",
    "precision": "auto (bf16 where the CPU or GPU runs it fast, else fp32), fp32, bf16, or fp16 (GPUs without bf16)",
}


def _checked(name: str):
    """An argparse ``type`` that parses a number and checks it against ``TRAIN_LIMITS[name]``
    (or the limits of the other numeric flags), so that argparse refuses a bad value at parse
    time, naming the flag and its range."""
    from capsviz.train.config import TRAIN_LIMITS, Limit

    limit = {**TRAIN_LIMITS, "eval_batch_size": Limit(int, 1, 100_000), "test_pairs": Limit(int, 1, 1_000_000)}[name]

    def parse(text: str):
        try:
            value = limit.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {limit.describe()} (got {text!r})") from None
        problem = limit.problem(value)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value

    return parse


ROUTING_HELP = "routing iterations at inference, 1 to 100 (default: the number the model was trained with)"


def _add_common(p: argparse.ArgumentParser, checkpoint_help: str | None = None, data: bool = True) -> None:
    """Options accepted both before and after the subcommand (``capsviz --device cpu eval`` or
    ``capsviz eval --device cpu``); ``--data-root`` only where the command reads MNIST."""
    if data:
        p.add_argument(
            "--data-root",
            type=Path,
            default=None,
            dest="data_root_sub",
            metavar="DIR",
            help="folder holding MNIST/raw/ (default: $CAPSVIZ_DATA, then the user data folder)",
        )
    p.add_argument("--device", default=None, dest="device_sub", metavar="DEVICE", help=TRAIN_HELP["device"])
    if checkpoint_help:
        p.add_argument(
            "--checkpoint", type=Path, default=None, dest="checkpoint_sub", metavar="FILE", help=checkpoint_help
        )


def _add_batch_size(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--batch-size",
        type=_checked("eval_batch_size"),
        default=500,
        metavar="N",
        help="images per forward pass, 1 to 100,000 (default: 500)",
    )


def _add_routing(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--routing-iterations", type=_checked("routing_iterations"), default=None, metavar="N", help=ROUTING_HELP
    )


def _add_train_flags(p: argparse.ArgumentParser) -> None:
    from capsviz.data.datasets import DATASETS
    from capsviz.train.config import MODELS, PRECISIONS, TRAIN_LIMITS, TrainConfig

    defaults = TrainConfig()
    for f in dataclasses.fields(TrainConfig):
        if f.name == "device":
            continue  # in _add_common
        value = getattr(defaults, f.name)
        if f.name in ("precision", "dataset", "model"):
            choices = {"precision": PRECISIONS, "dataset": DATASETS, "model": MODELS}[f.name]
            p.add_argument(
                "--" + f.name, choices=choices, default=None, help=f"{TRAIN_HELP[f.name]} (default: {value})"
            )
            continue
        flag = "--" + f.name.replace("_", "-")
        p.add_argument(
            flag,
            type=_checked(f.name),
            default=None,
            metavar=type(value).__name__.upper(),
            help=f"{TRAIN_HELP[f.name]}; {TRAIN_LIMITS[f.name].describe()} (default: {value})",
        )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="capsviz", description="A visual explorer for Capsule Networks. Without a command, opens the app."
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        nargs=0,
        help="print the versions of capsviz, Python, torch and Qt, and the device, then exit",
    )
    parser.add_argument(
        "--checkpoint", type=Path, default=None, metavar="FILE", help="checkpoint to load (default: the shipped model)"
    )
    parser.add_argument("--data-root", type=Path, default=None, metavar="DIR", help="folder holding MNIST/raw/")
    parser.add_argument("--device", default=None, metavar="DEVICE", help=TRAIN_HELP["device"])
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", help="a headless command (without one, capsviz opens the app)"
    )

    t = sub.add_parser(
        "train",
        help="train headless with a progress bar",
        description="Train a CapsNet (or, with --model, the baseline CNN) on MNIST or MultiMNIST with the "
        "paper's recipe; autosaves after every epoch and on Ctrl+C.",
    )
    _add_train_flags(t)
    t.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help="checkpoint to write, autosaved every epoch and on stop (default: the file given to "
        "--resume, else a new file <user data folder>/checkpoints/capsnet[-N].safetensors, for a CNN "
        "baseline[-N].safetensors); an "
        "existing file is refused unless --overwrite is given",
    )
    t.add_argument(
        "--overwrite", action="store_true", help="allow --out to replace an existing checkpoint and its .best file"
    )
    t.add_argument(
        "--resume",
        type=Path,
        default=None,
        metavar="FILE",
        help="continue exactly from a training checkpoint (an autosave, with optimizer state), "
        "writing into FILE unless --out is given",
    )
    t.add_argument(
        "--init",
        type=Path,
        default=None,
        metavar="FILE",
        help="continue from a weights-only checkpoint (e.g. the shipped one). Taken over from it: "
        "the weights, the step (so the learning rate), the completed epochs and the recipe "
        "(every setting above but --device); flags given here replace the recipe's values; Adam "
        "starts with fresh moments. --epochs is the total, so it must exceed the completed epochs. "
        "An MNIST model given with --dataset multimnist starts a new MultiMNIST run from its weights "
        "(convolutions copied, W_ij and the decoder's output widened to the 36x36 field)",
    )
    _add_common(t)

    e = sub.add_parser(
        "eval",
        help="print the test accuracy of a checkpoint",
        description="Evaluate a checkpoint on all 10,000 MNIST test images, or a MultiMNIST model on the "
        "fixed MultiMNIST test pairs (only the test files t10k-* are needed).",
    )
    _add_common(e, checkpoint_help="checkpoint to evaluate (default: the shipped model)")
    _add_routing(e)
    e.add_argument(
        "--per-iteration",
        type=_checked("routing_iterations"),
        default=None,
        metavar="N",
        help="also print a table of the accuracy with 1, 2, ..., N routing iterations",
    )
    e.add_argument(
        "--test-pairs",
        type=_checked("test_pairs"),
        default=None,
        metavar="N",
        help="MultiMNIST models: evaluate on the first N of the fixed test pairs (default: 10,000; "
        "more are drawn in further blocks of 1,000)",
    )
    _add_batch_size(e)
    tr = sub.add_parser(
        "trace",
        help="export the routing trace of one image as .npz",
        description="Classify one image file (preprocessed like a drawing) and save its routing "
        "trace: u, u_lengths, u_hat (the votes), b, c, v, lengths, input, prediction.",
    )
    tr.add_argument("image", type=Path, help="image file (PNG, JPEG, ...)")
    tr.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE",
        help="the .npz file to write (.npz is added to a name without it)",
    )
    _add_routing(tr)
    _add_common(tr, checkpoint_help="checkpoint to use (default: the shipped model)", data=False)
    c = sub.add_parser(
        "classify",
        help="print the predicted digit and capsule lengths of image files",
        description="Classify image files, preprocessed exactly as the app does (crop to the ink, "
        "fit into 20x20, centre by mass; an image of the model's input size, 28x28 or 36x36 for a "
        "MultiMNIST model, is used as stored). A MultiMNIST model prints its two longest capsules. "
        "One line per file; a file that cannot be "
        "read gets an error line and the others go on; the exit code is 1 if any "
        "file failed.",
    )
    c.add_argument("images", type=Path, nargs="+", metavar="FILE", help="image files (PNG, JPEG, ...)")
    c.add_argument(
        "--json",
        action="store_true",
        help='one JSON object per line: {"file", "prediction", "recognised", "lengths"} (a MultiMNIST model: '
        '{"file", "predictions": [two digits, longest first], "lengths"}) or {"file", "error"}',
    )
    c.add_argument(
        "--ink",
        choices=("auto", "light", "dark"),
        default="auto",
        help="light: light ink on a dark background; dark: dark ink on a light background; auto: "
        "decide from the image: its border, or for a photo the strokes' own contrast (default)",
    )
    _add_routing(c)
    _add_common(c, checkpoint_help="checkpoint to use (default: the shipped model)", data=False)
    rb = sub.add_parser(
        "robustness",
        help="accuracy under rotation, scale, shear, translation and random affine warps",
        description="Evaluate MNIST models on the MNIST test digits under affine transforms of "
        "increasing strength (rotation 0-60 degrees, scale by up to 1.5x either way, shear 0-40 "
        "degrees, translation 0-6 px; each digit by +s or -s, seeded) and on an affine-transformed "
        "MNIST test set (every digit under its own random warp: rotation +-20 degrees, scale "
        "0.8-1.2, shear +-12 degrees, +-3 px each way; not affNIST). Prints the accuracy per "
        "strength per model (capsviz.train.robustness has the recipe).",
    )
    rb.add_argument(
        "--checkpoint",
        type=Path,
        action="append",
        default=None,
        dest="checkpoints",
        metavar="FILE",
        help="a model to evaluate; give it once per model (default: the shipped model)",
    )
    rb.add_argument(
        "--kinds",
        default=",".join(KINDS),
        metavar="LIST",
        help=f"comma-separated transforms to measure, of {', '.join(KINDS)} (default: all)",
    )
    rb.add_argument(
        "--test-subset",
        type=_checked("test_subset"),
        default=0,
        metavar="N",
        help="use the first N test digits (0: all 10,000; default: 0)",
    )
    rb.add_argument(
        "--seed", type=_checked("seed"), default=0, metavar="INT", help="seed of the transforms (default: 0)"
    )
    rb.add_argument("--plot", type=Path, default=None, metavar="FILE", help="also draw the curves into a PNG file")
    rb.add_argument("--json", action="store_true", help="print one JSON object with every figure instead of tables")
    _add_batch_size(rb)
    _add_routing(rb)
    _add_common(rb)
    return parser


def _resolve(args: argparse.Namespace, name: str):
    return getattr(args, name + "_sub", None) or getattr(args, name, None)


def _train_destination(args: argparse.Namespace) -> Path:
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
        out = args.out
        same_run = args.resume is not None and Path(args.resume).resolve() == Path(out).resolve()
        taken = [p for p in (Path(out), best_path(out)) if p.is_file()]
        if taken and not same_run and not args.overwrite:
            raise CliError(
                f"{taken[0]} exists (a model of an earlier run); pass --overwrite to replace it, or give another --out"
            )
    return check_destination(out)


def _nothing_to_train(trainer, source: Path) -> str | None:
    """The message when ``trainer`` already has ``--epochs`` completed epochs, else None."""
    if trainer.epoch < trainer.config.epochs:
        return None
    return (
        f"{source} has {trainer.epoch} completed epochs and --epochs is {trainer.config.epochs}: nothing to "
        f"train; --epochs is the total to reach, e.g. --epochs {trainer.epoch + 1} for one more epoch"
    )


def cmd_train(args: argparse.Namespace) -> int:
    from capsviz.data.mnist import load_mnist
    from capsviz.runtime import tune_process
    from capsviz.train import distributed
    from capsviz.train.checkpoint import load_model
    from capsviz.train.config import TrainConfig
    from capsviz.train.loop import Trainer

    tune_process("train")
    if args.resume and args.init:
        raise CliError("use either --resume (a training checkpoint) or --init (weights only), not both")
    data_root = _resolve(args, "data_root")
    for given in (args.resume, args.init):
        if given is not None:
            load_model(given)  # refuse a bad file before spending time on the data
    device = _resolve(args, "device")
    parallel = distributed.launched()
    if parallel:  # one of the processes of torchrun; only rank 0 writes and prints
        device = distributed.start(device)
    lead = distributed.rank() == 0
    out = _train_destination(args) if lead else None
    train_data = load_mnist(train=True, data_root=data_root)
    test_data = load_mnist(train=False, data_root=data_root)
    overrides = {
        f.name: getattr(args, f.name)
        for f in dataclasses.fields(TrainConfig)
        if f.name != "device" and getattr(args, f.name, None) is not None
    }
    if device is not None:
        overrides["device"] = device
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
        return _train_with_progress(trainer, args, overrides, lead)
    finally:
        distributed.finish()


def _train_with_progress(trainer, args: argparse.Namespace, overrides: dict, lead: bool) -> int:
    """Run ``trainer`` with a progress bar and the run's messages (printed by rank 0 only);
    the first Ctrl+C stops it cleanly with an autosave. Returns the exit code."""
    from tqdm import tqdm

    from capsviz.train.events import BatchEvent, EpochEvent, StoppedEvent

    def say(text: str) -> None:
        if lead:
            print(text, flush=True)

    if args.init and trainer.widened:
        size = trainer.model.cfg.image_size
        say(
            f"from {args.init}: its weights widened to {size}x{size} {trainer.config.dataset} "
            "(capsviz.model.transfer); a new run from step 0 with the recipe below"
        )
    elif args.init:
        given = sorted(k for k in overrides if k != "device")
        say(
            f"from {args.init}: its weights, step {trainer.step:,} (lr {trainer.config.lr_at(trainer.step):.2e}), "
            f"{trainer.epoch} completed epochs and its recipe"
            + (f", with {', '.join(given)} from the command line" if given else "")
            + "; fresh Adam moments"
        )
    cfg = trainer.config
    ranks = f" x {trainer.world} processes (torch.distributed)" if trainer.world > 1 else ""
    say(f"training on {trainer.device}{ranks} in {trainer.precision}: {dataclasses.asdict(cfg)}")
    say(f"checkpoint: {trainer.checkpoint_path}")
    # the steps already taken (at the batch size they were taken with) and those of the epochs to come
    total = trainer.step + (cfg.epochs - trainer.epoch) * trainer.batches_per_epoch - trainer.batch_in_epoch
    bar = tqdm(total=total, initial=trainer.step, unit="batch", dynamic_ncols=True, disable=not lead)

    def on_sigint(signum, frame):
        # First Ctrl+C: stop cleanly within a second and autosave; a second one aborts.
        bar.write("stopping after the current step and saving (Ctrl+C again to abort)")
        trainer.request_stop()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    previous = signal.signal(signal.SIGINT, on_sigint)
    stopped_early = False
    try:
        for ev in trainer.run():
            if isinstance(ev, BatchEvent):
                bar.update(1)
                bar.set_postfix(
                    epoch=ev.epoch + 1,
                    loss=f"{ev.loss:.4f}",
                    acc=f"{ev.train_accuracy:.3f}",
                    img_s=f"{ev.images_per_s:.0f}",
                    lr=f"{ev.lr:.2e}",
                )
            elif isinstance(ev, EpochEvent) and lead:
                measure = (
                    f"both digits right {100 * ev.test_accuracy:.2f} % ({ev.test_images:,} test pairs)"
                    if cfg.dataset == "multimnist"
                    else f"test accuracy {100 * ev.test_accuracy:.2f} % ({ev.test_images:,} images)"
                )
                bar.write(f"epoch {ev.epoch}: {measure}, step {ev.step}, saved {ev.checkpoint}")
            elif isinstance(ev, StoppedEvent):
                stopped_early = not ev.finished
                if lead:
                    bar.write(
                        f"{'finished' if ev.finished else 'stopped'} at step {ev.step}; checkpoint {ev.checkpoint}"
                    )
    finally:
        signal.signal(signal.SIGINT, previous)
        bar.close()
    return 130 if stopped_early else 0


def cmd_eval(args: argparse.Namespace) -> int:
    import numpy as np
    from tqdm import tqdm

    from capsviz.data.mnist import load_mnist
    from capsviz.data.multimnist import TEST_PAIRS, fixed_test_pairs
    from capsviz.evaluate import confusion_matrix, evaluate_model
    from capsviz.runtime import tune_process

    tune_process("eval")
    path = _resolve(args, "checkpoint") or shipped_checkpoint()
    model, info = _load_model(args, kind=None)
    if args.test_pairs is not None and info.dataset != "multimnist":
        raise CliError(f"{path}: --test-pairs is for MultiMNIST models; this is an MNIST model")
    cnn = info.kind == "baseline"
    if cnn and (args.per_iteration or args.routing_iterations is not None):
        raise CliError(
            f"{path}: a baseline CNN has no routing; --per-iteration and --routing-iterations are for CapsNets"
        )
    test = load_mnist(train=False, data_root=_resolve(args, "data_root"))
    iterations = 0 if cnn else args.routing_iterations or info.model_config.routing_iterations
    if info.dataset == "multimnist":
        return _eval_pairs(args, model, info, path, fixed_test_pairs(test, args.test_pairs or TEST_PAIRS), iterations)

    def predictions(n_iterations: int) -> np.ndarray:
        with tqdm(total=len(test), unit="image", desc="evaluating", dynamic_ncols=True, leave=False) as bar:
            return evaluate_model(
                model, test, routing_iterations=n_iterations, batch_size=args.batch_size, after_batch=bar.update
            )

    preds = predictions(iterations)
    correct = int((preds == test.labels).sum())
    n = len(test)
    print(f"checkpoint: {path}")
    print(_model_line(info, iterations))
    print(f"test accuracy: {100 * correct / n:.2f} % ({correct:,} / {n:,}), error {100 * (n - correct) / n:.2f} %")
    if args.per_iteration:
        print("routing iterations | correct | test error")
        for r in range(1, args.per_iteration + 1):
            right = correct if r == iterations else int((predictions(r) == test.labels).sum())
            print(f"{r:>18} | {right:,} / {n:,} | {100 * (n - right) / n:.2f} %", flush=True)
    cm = confusion_matrix(test.labels, preds)
    print("per class: " + "  ".join(f"{k}: {100 * cm[k, k] / max(cm[k].sum(), 1):.2f}%" for k in range(10)))
    print("confusion matrix (rows: true, columns: predicted)")
    print("      " + "".join(f"{k:>6}" for k in range(10)))
    for k in range(10):
        print(f"{k:>6}" + "".join(f"{x:>6}" for x in cm[k]))
    return 0


def _model_line(info, iterations: int) -> str:
    """``routing iterations: 3`` for a CapsNet; for a CNN what it is and its size."""
    if info.kind != "baseline":
        return f"routing iterations: {iterations}"
    cfg = info.model_config
    scoring = "top-2 of 10 sigmoids" if cfg.output == "sigmoid" else "softmax"
    return f"model: baseline CNN, convolutions {'-'.join(map(str, cfg.channels))}, {scoring} (no routing)"


def _eval_pairs(args: argparse.Namespace, model, info, path: Path, pairs, iterations: int) -> int:
    """``capsviz eval`` of a MultiMNIST model on ``pairs``: both-right (the paper's measure),
    at-least-one-right, and the table per routing iteration when asked."""
    import numpy as np
    import torch
    from tqdm import tqdm

    from capsviz.evaluate import model_lengths, two_digit_hits

    n = len(pairs)

    def hits(n_iterations: int) -> np.ndarray:
        with tqdm(total=n, unit="pair", desc="evaluating", dynamic_ncols=True, leave=False) as bar:
            lengths = model_lengths(
                model, pairs.images, n_iterations, batch_size=args.batch_size, after_batch=bar.update
            )
        return two_digit_hits(torch.from_numpy(lengths), torch.from_numpy(pairs.labels)).numpy()

    found = hits(iterations)
    both, one = int((found == 2).sum()), int((found >= 1).sum())
    print(f"checkpoint: {path}")
    print(f"MultiMNIST test pairs: {n:,} (capsviz.data.multimnist.fixed_test_pairs)")
    print(_model_line(info, iterations))
    print(f"both digits right: {100 * both / n:.2f} % ({both:,} / {n:,}), error {100 * (n - both) / n:.2f} %")
    print(f"at least one digit right: {100 * one / n:.2f} % ({one:,} / {n:,})")
    if args.per_iteration:
        print("routing iterations | both right | error | at least one right")
        for r in range(1, args.per_iteration + 1):
            f = found if r == iterations else hits(r)
            b, o = int((f == 2).sum()), int((f >= 1).sum())
            print(f"{r:>18} | {b:,} / {n:,} | {100 * (n - b) / n:.2f} % | {100 * o / n:.2f} %", flush=True)
    return 0


def cmd_robustness(args: argparse.Namespace) -> int:
    import json

    import numpy as np
    from tqdm import tqdm

    from capsviz.data.mnist import MnistSplit, load_mnist
    from capsviz.evaluate import model_lengths
    from capsviz.runtime import select_device, tune_process
    from capsviz.train.checkpoint import check_dataset_of, load_model
    from capsviz.train.robustness import SWEEPS, UNITS, plot_curves, robustness

    tune_process("eval")
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise CliError(
            f"--kinds: unknown transform {unknown[0] if unknown else '(none)'}; choose from {', '.join(KINDS)}"
        )
    if args.routing_iterations is not None and not 1 <= args.routing_iterations <= 100:
        raise CliError("--routing-iterations must be between 1 and 100")
    paths = args.checkpoints or [_resolve(args, "checkpoint") or shipped_checkpoint()]
    device = select_device(_resolve(args, "device"))
    models = {}
    for path in paths:  # every file is checked before any is evaluated
        model, info, _ = load_model(path, device=device)  # a CapsNet or a baseline CNN
        check_dataset_of(info, "mnist", "capsviz robustness")
        name = Path(path).stem
        while name in models:
            name += "'"
        models[name] = model
    test = load_mnist(train=False, data_root=_resolve(args, "data_root"))
    if args.test_subset:
        test = MnistSplit(test.images[: args.test_subset], test.labels[: args.test_subset])
    steps = sum(len(SWEEPS.get(k, (1,))) for k in kinds) * len(models)
    results = {}
    with tqdm(total=steps, unit="set", desc="transformed test sets", dynamic_ncols=True, leave=False) as bar:
        for name, model in models.items():

            def predict(images: np.ndarray, model=model) -> np.ndarray:
                lengths = model_lengths(model, images, args.routing_iterations, args.batch_size)
                return lengths.argmax(axis=1)

            results[name] = robustness(predict, test, kinds, args.seed, progress=lambda *_: bar.update())
    if args.json:
        print(
            json.dumps(
                {
                    "test_digits": len(test),
                    "seed": args.seed,
                    "models": {str(p): name for p, name in zip(paths, models)},
                    "curves": {
                        name: {k: {"strengths": c.strengths, "correct": c.correct} for k, c in curves.items()}
                        for name, curves in results.items()
                    },
                }
            )
        )
    else:
        print(f"test digits: {len(test):,} (seed {args.seed})")
        for path, name in zip(paths, models):
            print(f"{name}: {path}")
        width = max(12, *(len(n) for n in models))
        for kind in kinds:
            label = (
                "affine test set" if kind == "affine" else f"{kind}{UNITS[kind] and ' (' + UNITS[kind].strip() + ')'}"
            )
            print()
            print(f"{label:<16} | " + " | ".join(f"{n:>{width}}" for n in models))
            for k, s in enumerate(results[next(iter(models))][kind].strengths):
                cells = [f"{100 * results[n][kind].accuracy[k]:>{width - 2}.2f} %" for n in models]
                strength = "" if kind == "affine" else f"{s:g}"
                print(f"{strength:<16} | " + " | ".join(cells))
    if args.plot is not None:
        plot_curves(results, args.plot)
        if not args.json:
            print(f"\nplot: {args.plot}")
    return 0


def _load_model(args: argparse.Namespace, kind: str | None = "capsnet"):
    """The checkpoint of ``--checkpoint`` (default: the shipped one) on ``--device``, after
    checking ``--routing-iterations``: (model, info). ``kind`` None takes a CapsNet or a
    baseline CNN; ``capsnet`` refuses a CNN in one line."""
    from capsviz.runtime import select_device
    from capsviz.train.checkpoint import load_model

    if args.routing_iterations is not None and not 1 <= args.routing_iterations <= 100:
        raise CliError("--routing-iterations must be between 1 and 100")
    device = select_device(_resolve(args, "device"))
    model, info, _ = load_model(_resolve(args, "checkpoint") or shipped_checkpoint(), device=device, kind=kind)
    return model, info


def _lengths_text(lengths) -> str:
    """Capsule lengths as ``classify`` and ``trace`` print them: three decimals each."""
    return " ".join(f"{x:.3f}" for x in lengths)


def _prediction_text(lengths) -> str:
    """``7 (0.940)``, or ``nothing recognised (longest: 8, 0.310)`` below the threshold of
    :func:`capsviz.model.inference.recognised`."""
    from capsviz.model.inference import recognised

    pred = int(lengths.argmax())
    if recognised(lengths):
        return f"{pred} ({lengths[pred]:.3f})"
    return f"nothing recognised (longest: {pred}, {lengths[pred]:.3f})"


def _two_text(lengths) -> str:
    """A two-digit model's reading: ``7 (0.922) and 3 (0.871)``, its two longest capsules."""
    from capsviz.model.inference import two_longest

    top = two_longest(lengths)
    return f"{top[0]} ({lengths[top[0]]:.3f}) and {top[1]} ({lengths[top[1]]:.3f})"


def cmd_trace(args: argparse.Namespace) -> int:
    from capsviz.data.images import load_input
    from capsviz.model.inference import infer, save_trace

    out = args.out if args.out.suffix == ".npz" else args.out.with_name(args.out.name + ".npz")
    for given in dict.fromkeys((args.out, out)):
        if given.is_dir():
            raise CliError(f"{given}: is a folder; give the .npz file to write, e.g. {given / 'trace.npz'}")
    model, info = _load_model(args)
    image, _ = load_input(args.image, size=model.cfg.image_size)
    inference = infer(model, image, args.routing_iterations)
    save_trace(inference, out)
    lengths = inference.lengths[-1]
    reading = _two_text(lengths) if info.dataset == "multimnist" else _prediction_text(lengths)
    print(f"{args.image}: {reading}  lengths {_lengths_text(lengths)}; trace saved to {out}")
    return 0


INVERT = {"auto": None, "light": False, "dark": True}


def cmd_classify(args: argparse.Namespace) -> int:
    import json

    import numpy as np

    from capsviz.data.images import ImageReadError, load_input
    from capsviz.model.inference import capsule_lengths, recognised, two_longest

    model, info = _load_model(args)
    size, two = model.cfg.image_size, info.dataset == "multimnist"
    inputs, errors = {}, {}
    for k, path in enumerate(args.images):
        try:
            inputs[k], _ = load_input(path, invert=INVERT[args.ink], size=size)
        except ImageReadError as exc:
            errors[k] = str(exc)
    order = sorted(inputs)
    lengths = capsule_lengths(
        model, np.stack([inputs[k] for k in order]) if order else np.zeros((0, size, size)), args.routing_iterations
    )
    results = dict(zip(order, lengths))
    for k, path in enumerate(args.images):
        if k in errors:
            if args.json:
                print(json.dumps({"file": str(path), "error": errors[k]}), flush=True)
            else:
                print(f"error: {errors[k]}", file=sys.stderr, flush=True)
            continue
        v = results[k]
        if two:
            top = two_longest(v)
            if args.json:
                print(json.dumps({"file": str(path), "predictions": top, "lengths": [round(float(x), 6) for x in v]}))
            else:
                print(f"{path}: {_two_text(v)}  lengths {_lengths_text(v)}")
            continue
        if args.json:
            print(
                json.dumps(
                    {
                        "file": str(path),
                        "prediction": int(v.argmax()),
                        "recognised": recognised(v),
                        "lengths": [round(float(x), 6) for x in v],
                    }
                )
            )
        else:
            print(f"{path}: {_prediction_text(v)}  lengths {_lengths_text(v)}")
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from capsviz.logs import setup_logging

    log = setup_logging()
    from capsviz.data.mnist import MnistNotFoundError
    from capsviz.train.checkpoint import CheckpointError
    from capsviz.train.events import TrainingDiverged

    try:
        if args.command == "train":
            return cmd_train(args)
        if args.command == "eval":
            return cmd_eval(args)
        if args.command == "trace":
            return cmd_trace(args)
        if args.command == "classify":
            return cmd_classify(args)
        if args.command == "robustness":
            return cmd_robustness(args)
        from capsviz.gui.app import run_app

        return run_app(checkpoint=args.checkpoint, data_root=args.data_root, device=args.device or "auto")
    except (CheckpointError, MnistNotFoundError, CliError, TrainingDiverged, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        log.error("capsviz %s: %s", args.command or "app", exc)
        return 2
    except OSError as exc:
        name = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"error: {name}{exc.strerror or exc}", file=sys.stderr)
        log.error("capsviz %s: %s%s", args.command or "app", name, exc.strerror or exc)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception:
        log.exception("capsviz %s: unexpected error", args.command or "app")
        raise


if __name__ == "__main__":
    sys.exit(main())
