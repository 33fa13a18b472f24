"""Command line: ``capsviz`` (the app), ``capsviz train``, ``eval``, ``trace``, ``classify``.

No Qt import at module level: the headless commands work without a display.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
from pathlib import Path


DEFAULT_CHECKPOINT = Path(__file__).resolve().parents[1] / "assets" / "capsnet_mnist.safetensors"


class _VersionAction(argparse.Action):
    """``--version``: the full report (imports torch and Qt only when asked)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from capsviz.logs import version_report

        print(version_report())
        parser.exit()


class CliError(Exception):
    """A user-facing error: printed as ``error: ...`` with exit code 2."""


def _default_out() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("capsviz", appauthor=False)) / "checkpoints" / "capsnet.safetensors"


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
    "test_subset": "evaluate on the first N test images after each epoch (0: all 10,000)",
}


def _add_common(p: argparse.ArgumentParser, checkpoint_help: str | None = None) -> None:
    """Options accepted both before and after the subcommand (``capsviz --device cpu eval`` or
    ``capsviz eval --device cpu``)."""
    p.add_argument("--data-root", type=Path, default=None, dest="data_root_sub", metavar="DIR",
                   help="folder holding MNIST/raw/ (default: $CAPSVIZ_DATA, then the user data folder)")
    p.add_argument("--device", default=None, dest="device_sub", metavar="DEVICE", help=TRAIN_HELP["device"])
    if checkpoint_help:
        p.add_argument("--checkpoint", type=Path, default=None, dest="checkpoint_sub", metavar="FILE",
                       help=checkpoint_help)


def _add_train_flags(p: argparse.ArgumentParser) -> None:
    from capsviz.train.loop import TrainConfig

    defaults = TrainConfig()
    for f in dataclasses.fields(TrainConfig):
        if f.name == "device":
            continue  # in _add_common
        value = getattr(defaults, f.name)
        flag = "--" + f.name.replace("_", "-")
        p.add_argument(flag, type=type(value), default=None, metavar=type(value).__name__.upper(),
                       help=f"{TRAIN_HELP[f.name]} (default: {value})")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="capsviz", description="A visual explorer for Capsule Networks. "
                                     "Without a command, opens the app.")
    parser.add_argument("--version", action=_VersionAction, nargs=0,
                        help="print the versions of capsviz, Python, torch and Qt, and the device, then exit")
    parser.add_argument("--checkpoint", type=Path, default=None, metavar="FILE",
                        help="checkpoint to load (default: the shipped model)")
    parser.add_argument("--data-root", type=Path, default=None, metavar="DIR", help="folder holding MNIST/raw/")
    parser.add_argument("--device", default=None, metavar="DEVICE", help=TRAIN_HELP["device"])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    t = sub.add_parser("train", help="train headless with a progress bar",
                       description="Train a CapsNet on MNIST with the paper's recipe; autosaves after every "
                                   "epoch and on Ctrl+C.")
    _add_train_flags(t)
    t.add_argument("--out", type=Path, default=None, metavar="FILE",
                   help="checkpoint to write, autosaved every epoch and on stop (default: the file given to "
                        "--resume, else <user data folder>/checkpoints/capsnet.safetensors)")
    t.add_argument("--resume", type=Path, default=None, metavar="FILE",
                   help="continue exactly from a training checkpoint (an autosave, with optimizer state)")
    t.add_argument("--init", type=Path, default=None, metavar="FILE",
                   help="continue from a weights-only checkpoint (e.g. the shipped one): same weights, step and "
                        "epochs, fresh optimizer moments")
    _add_common(t)

    e = sub.add_parser("eval", help="print the test accuracy of a checkpoint",
                       description="Evaluate a checkpoint on all 10,000 MNIST test images.")
    _add_common(e, checkpoint_help="checkpoint to evaluate (default: the shipped model)")
    e.add_argument("--routing-iterations", type=int, default=None, metavar="N",
                   help="routing iterations at inference (default: the number the model was trained with)")
    e.add_argument("--batch-size", type=int, default=500, metavar="N", help="images per forward pass")
    tr = sub.add_parser("trace", help="export the routing trace of one image as .npz",
                        description="Classify one image file (preprocessed like a drawing) and save its routing "
                                    "trace: u, u_lengths, b, c, v, lengths, input, prediction.")
    tr.add_argument("image", type=Path, help="image file (PNG, JPEG, ...)")
    tr.add_argument("--out", type=Path, required=True, metavar="FILE", help="the .npz file to write")
    tr.add_argument("--routing-iterations", type=int, default=None, metavar="N")
    _add_common(tr, checkpoint_help="checkpoint to use (default: the shipped model)")
    c = sub.add_parser("classify", help="print the predicted digit and capsule lengths of image files",
                       description="Classify image files, preprocessed exactly as the app does (crop to the ink, "
                                   "fit into 20x20, centre by mass). One line per file; a file that cannot be "
                                   "read gets an error line and the others go on; the exit code is 1 if any "
                                   "file failed.")
    c.add_argument("images", type=Path, nargs="+", metavar="FILE", help="image files (PNG, JPEG, ...)")
    c.add_argument("--json", action="store_true",
                   help='one JSON object per line: {"file", "prediction", "lengths"} or {"file", "error"}')
    c.add_argument("--ink", choices=("auto", "light", "dark"), default="auto",
                   help="light: light ink on a dark background; dark: dark ink on a light background; auto: "
                        "decide from the image's border (default)")
    c.add_argument("--routing-iterations", type=int, default=None, metavar="N")
    _add_common(c, checkpoint_help="checkpoint to use (default: the shipped model)")
    return parser


def _resolve(args: argparse.Namespace, name: str):
    return getattr(args, name + "_sub", None) or getattr(args, name, None)


def cmd_train(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from capsviz.data.mnist import load_mnist
    from capsviz.train.allocator import retain_freed_memory
    from capsviz.train.checkpoint import load_checkpoint
    from capsviz.train.loop import BatchEvent, EpochEvent, StoppedEvent, TrainConfig, Trainer

    retain_freed_memory()
    data_root = _resolve(args, "data_root")
    for given in (args.resume, args.init):
        if given is not None:
            load_checkpoint(given)  # refuse a bad file before spending time on the data
    train_data = load_mnist(train=True, data_root=data_root)
    test_data = load_mnist(train=False, data_root=data_root)
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)
                 if f.name != "device" and getattr(args, f.name, None) is not None}
    device = _resolve(args, "device")
    if device is not None:
        overrides["device"] = device
    if args.resume and args.init:
        raise CliError("use either --resume (a training checkpoint) or --init (weights only), not both")
    if args.resume:
        trainer = Trainer.resume(args.resume, train_data, test_data, overrides=overrides, checkpoint_path=args.out)
    elif args.init:
        trainer = Trainer.continue_from_weights(args.init, train_data, test_data, overrides=overrides,
                                                checkpoint_path=args.out or _default_out())
    else:
        trainer = Trainer(TrainConfig(**overrides), train_data, test_data, checkpoint_path=args.out or _default_out())
    cfg = trainer.config
    print(f"training on {trainer.device}: {dataclasses.asdict(cfg)}", flush=True)
    print(f"checkpoint: {trainer.checkpoint_path}", flush=True)
    total = cfg.epochs * trainer.batches_per_epoch
    bar = tqdm(total=total, initial=trainer.step, unit="batch", dynamic_ncols=True)

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
                bar.set_postfix(epoch=ev.epoch + 1, loss=f"{ev.loss:.4f}", acc=f"{ev.train_accuracy:.3f}",
                                img_s=f"{ev.images_per_s:.0f}", lr=f"{ev.lr:.2e}")
            elif isinstance(ev, EpochEvent):
                bar.write(f"epoch {ev.epoch}: test accuracy {100 * ev.test_accuracy:.2f} % "
                          f"({ev.test_images:,} images), step {ev.step}, saved {ev.checkpoint}")
            elif isinstance(ev, StoppedEvent):
                stopped_early = not ev.finished
                bar.write(f"{'finished' if ev.finished else 'stopped'} at step {ev.step}; checkpoint {ev.checkpoint}")
    finally:
        signal.signal(signal.SIGINT, previous)
        bar.close()
    return 130 if stopped_early else 0


def cmd_eval(args: argparse.Namespace) -> int:
    from capsviz.data.mnist import load_mnist
    from capsviz.train.allocator import retain_freed_memory
    from capsviz.train.loop import confusion_matrix, evaluate_model

    retain_freed_memory()
    path = _resolve(args, "checkpoint") or DEFAULT_CHECKPOINT
    model, info = _load_model(args)
    test = load_mnist(train=False, data_root=_resolve(args, "data_root"))
    iterations = args.routing_iterations if args.routing_iterations is not None else (
        info.model_config.routing_iterations)
    preds = evaluate_model(model, test, routing_iterations=iterations, batch_size=args.batch_size)
    correct = int((preds == test.labels).sum())
    n = len(test)
    print(f"checkpoint: {path}")
    print(f"routing iterations: {iterations}")
    print(f"test accuracy: {100 * correct / n:.2f} % ({correct:,} / {n:,}), error {100 * (n - correct) / n:.2f} %")
    cm = confusion_matrix(test.labels, preds)
    print("per class: " + "  ".join(f"{k}: {100 * cm[k, k] / max(cm[k].sum(), 1):.2f}%" for k in range(10)))
    print("confusion matrix (rows: true, columns: predicted)")
    print("      " + "".join(f"{k:>6}" for k in range(10)))
    for k in range(10):
        print(f"{k:>6}" + "".join(f"{x:>6}" for x in cm[k]))
    return 0


def _load_model(args: argparse.Namespace):
    """The checkpoint of ``--checkpoint`` (default: the shipped one) on ``--device``, after
    checking ``--routing-iterations``: (model, info)."""
    from capsviz.train.checkpoint import load_checkpoint
    from capsviz.train.loop import select_device

    if args.routing_iterations is not None and not 1 <= args.routing_iterations <= 100:
        raise CliError("--routing-iterations must be between 1 and 100")
    device = select_device(_resolve(args, "device"))
    model, info, _ = load_checkpoint(_resolve(args, "checkpoint") or DEFAULT_CHECKPOINT, device=device)
    return model, info


def cmd_trace(args: argparse.Namespace) -> int:
    import numpy as np

    from capsviz.data.images import load_input
    from capsviz.model.inference import infer, save_trace

    model, _ = _load_model(args)
    image, _ = load_input(args.image)
    inference = infer(model, image, args.routing_iterations)
    save_trace(inference, args.out)
    lengths = np.round(inference.lengths[-1], 3).tolist()
    print(f"{args.image}: prediction {inference.prediction}, lengths {lengths}; trace saved to {args.out}")
    return 0


INVERT = {"auto": None, "light": False, "dark": True}


def cmd_classify(args: argparse.Namespace) -> int:
    import json

    import numpy as np

    from capsviz.data.images import ImageReadError, load_input
    from capsviz.model.inference import capsule_lengths

    model, _ = _load_model(args)
    inputs, errors = {}, {}
    for k, path in enumerate(args.images):
        try:
            inputs[k], _ = load_input(path, invert=INVERT[args.ink])
        except ImageReadError as exc:
            errors[k] = str(exc)
    order = sorted(inputs)
    lengths = capsule_lengths(model, np.stack([inputs[k] for k in order]) if order else np.zeros((0, 28, 28)),
                              args.routing_iterations)
    results = dict(zip(order, lengths))
    for k, path in enumerate(args.images):
        if k in errors:
            if args.json:
                print(json.dumps({"file": str(path), "error": errors[k]}), flush=True)
            else:
                print(f"error: {errors[k]}", file=sys.stderr, flush=True)
            continue
        v = results[k]
        pred = int(v.argmax())
        if args.json:
            print(json.dumps({"file": str(path), "prediction": pred, "lengths": [round(float(x), 6) for x in v]}))
        else:
            print(f"{path}: {pred} ({v[pred]:.3f})  lengths " + " ".join(f"{x:.3f}" for x in v))
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from capsviz.logs import setup_logging

    log = setup_logging()
    from capsviz.data.mnist import MnistNotFoundError
    from capsviz.train.checkpoint import CheckpointError
    from capsviz.train.loop import TrainingDiverged

    try:
        if args.command == "train":
            return cmd_train(args)
        if args.command == "eval":
            return cmd_eval(args)
        if args.command == "trace":
            return cmd_trace(args)
        if args.command == "classify":
            return cmd_classify(args)
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
