"""``capsviz robustness``: accuracy of MNIST models under affine transforms of increasing
strength and on an affine-transformed test set (:mod:`capsviz.train.robustness`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from capsviz.commands.classify import refuse_routing_for_a_cnn
from capsviz.commands.common import (
    CliError,
    add_batch_size,
    add_common,
    add_routing,
    check_output,
    check_routing,
    checked,
    display_width,
    ensure_mnist,
    resolve,
    table_line,
)
from capsviz.paths import shipped_checkpoint
from capsviz.texts import _
from capsviz.train.sweeps import KINDS


def add_parser(sub) -> argparse.ArgumentParser:
    rb = sub.add_parser(
        "robustness",
        help=_("accuracy under rotation, scale, shear, translation and random affine warps"),
        description=_(
            "Evaluate MNIST models on the MNIST test digits under affine transforms of "
            "increasing strength (rotation 0-60 degrees, scale by up to 1.5x either way, shear 0-40 "
            "degrees, translation 0-6 px; each digit by +s or -s, seeded) and on an affine-transformed "
            "MNIST test set (every digit under its own random warp: rotation +-20 degrees, scale "
            "0.8-1.2, shear +-12 degrees, +-3 px each way; not affNIST). Prints the accuracy per "
            "strength per model (capsviz.train.robustness has the recipe)."
        ),
    )
    rb.add_argument(
        "--checkpoint",
        type=Path,
        action="append",
        default=None,
        dest="checkpoints",
        metavar="FILE",
        help=_("a model to evaluate; give it once per model (default: the shipped model)"),
    )
    rb.add_argument(
        "--kinds",
        default=",".join(KINDS),
        metavar="LIST",
        help=_("comma-separated transforms to measure, of {kinds} (default: all)", kinds=", ".join(KINDS)),
    )
    rb.add_argument(
        "--test-subset",
        type=checked("test_digits"),
        default=0,
        metavar="N",
        help=_("use the first N test digits (0: all 10,000; default: 0)"),
    )
    rb.add_argument(
        "--seed", type=checked("seed"), default=0, metavar="INT", help=_("seed of the transforms (default: 0)")
    )
    rb.add_argument("--plot", type=Path, default=None, metavar="FILE", help=_("also draw the curves into a PNG file"))
    rb.add_argument("--overwrite", action="store_true", help=_("allow --plot to replace an existing file"))
    rb.add_argument("--json", action="store_true", help=_("print one JSON object with every figure instead of tables"))
    add_batch_size(rb)
    add_routing(rb)
    add_common(rb)
    rb.set_defaults(func=run)
    return rb


def run(args: argparse.Namespace) -> int:
    import json

    import numpy as np
    from tqdm import tqdm

    from capsviz.data.mnist import MnistSplit, load_mnist
    from capsviz.evaluate import model_lengths
    from capsviz.paths import replacing
    from capsviz.runtime import select_device, tune_process
    from capsviz.train.checkpoint import check_dataset_of, load_model
    from capsviz.train.robustness import plot_curves, robustness
    from capsviz.train.sweeps import SWEEPS, sweep_title

    tune_process("eval")
    kinds = tuple(dict.fromkeys(k.strip() for k in args.kinds.split(",") if k.strip()))  # each once, in order
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise CliError(
            _(
                "--kinds: unknown transform {kind}; choose from {kinds}",
                kind=unknown[0] if unknown else _("(none)"),
                kinds=", ".join(KINDS),
            )
        )
    check_routing(args)
    if args.plot is not None:  # before the sweep: a file it cannot write is said at once
        if args.plot.suffix.lower() != ".png":
            raise CliError(_("--plot {path}: give a .png file", path=args.plot))
        check_output(args.plot, args.overwrite, "--plot", "robustness.png")
    first = getattr(args, "checkpoint", None)  # capsviz --checkpoint A robustness [--checkpoint B …]: A too
    paths = [*([first] if first is not None else []), *(args.checkpoints or [])] or [shipped_checkpoint()]
    device = select_device(resolve(args, "device"))
    models, infos = {}, []
    for path in paths:  # every file is checked before any is evaluated
        model, info, _state = load_model(path, device=device)  # a CapsNet or a baseline CNN
        check_dataset_of(info, "mnist", "capsviz robustness")
        name = Path(path).stem
        while name in models:
            name += "'"
        models[name] = model
        infos.append(info)
    if all(info.kind == "baseline" for info in infos):  # routing applies to the CapsNets among several models
        refuse_routing_for_a_cnn(args, infos[0])
    ensure_mnist(args, False)
    test = load_mnist(train=False, data_root=resolve(args, "data_root"))
    if args.test_subset:
        test = MnistSplit(test.images[: args.test_subset], test.labels[: args.test_subset])
    routing = {  # per model, the routing iterations its passes run (None: a CNN, no routing)
        name: None if info.kind == "baseline" else args.routing_iterations or model.cfg.routing_iterations
        for (name, model), info in zip(models.items(), infos)
    }
    steps = sum(len(SWEEPS.get(k, (1,))) for k in kinds) * len(models)
    results = {}
    with tqdm(total=steps, unit=_("set"), desc=_("transformed test sets"), dynamic_ncols=True, leave=False) as bar:
        for name, model in models.items():

            def predict(images: np.ndarray, model=model) -> np.ndarray:
                lengths = model_lengths(model, images, args.routing_iterations, args.batch_size)
                return lengths.argmax(axis=1)

            results[name] = robustness(predict, test, kinds, args.seed, progress=lambda *done: bar.update())
    if args.json:
        print(
            json.dumps(
                {
                    "test_digits": len(test),
                    "seed": args.seed,
                    "models": {str(p): name for p, name in zip(paths, models)},
                    "routing_iterations": routing,
                    "curves": {
                        name: {k: {"strengths": c.strengths, "correct": c.correct} for k, c in curves.items()}
                        for name, curves in results.items()
                    },
                }
            )
        )
    else:
        print(_("test digits: {n:,} (seed {seed})", n=len(test), seed=args.seed))
        for path, name in zip(paths, models):
            said = _("a CNN, no routing") if routing[name] is None else _("routing iterations: {r}", r=routing[name])
            print(f"{name}: {path} ({said})")
        for kind in kinds:
            label = sweep_title(kind, _)
            strengths = results[next(iter(models))][kind].strengths
            names = [label, *models]
            widths = [max(16, display_width(label)), *(max(10, display_width(n)) for n in models)]
            print()
            print(table_line(names, widths, left=1))
            for k, s in enumerate(strengths):
                cells = [f"{100 * results[n][kind].accuracy[k]:.2f} %" for n in models]
                print(table_line(["" if kind == "affine" else f"{s:g}", *cells], widths, left=1))
    if args.plot is not None:
        with replacing(args.plot) as tmp:  # an existing plot is replaced whole or kept
            # in English, as the panels' titles: the PNG's built-in font has no Chinese
            plot_curves(results, tmp, note=f"{len(test):,} test digits, seed {args.seed}")
        if not args.json:
            print("\n" + _("plot: {path}", path=args.plot))
    return 0
