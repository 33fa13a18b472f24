"""``capsviz trace``: classify one image file and save its routing trace as ``.npz``
(:func:`capsviz.model.inference.save_trace`); for a baseline CNN, what a CNN has: its
input, class probabilities and answer."""

from __future__ import annotations

import argparse
from pathlib import Path

from capsviz.commands.classify import reading, refuse_routing_for_a_cnn, text
from capsviz.commands.common import add_common, add_routing, check_output, load_model
from capsviz.texts import _


def add_parser(sub) -> argparse.ArgumentParser:
    tr = sub.add_parser(
        "trace",
        help=_("export the routing trace of one image as .npz"),
        description=_(
            "Classify one image file (preprocessed like a drawing) and save its routing "
            "trace: u, u_lengths, u_hat (the votes), b, c, v, lengths, input, prediction. A baseline CNN has "
            "no capsules and no routing: its file holds input, probabilities and prediction (predictions: "
            "the two likeliest classes, for a MultiMNIST CNN). An image that cannot be read, or a trace that "
            "cannot be written, is said in one line with exit code 2."
        ),
    )
    tr.add_argument("image", type=Path, help=_("image file (PNG, JPEG, ...)"))
    tr.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE",
        help=_("the .npz file to write (.npz is added to a name without it)"),
    )
    tr.add_argument("--overwrite", action="store_true", help=_("allow --out to replace an existing file"))
    add_routing(tr)
    add_common(tr, checkpoint_help=_("checkpoint to use (default: the shipped model)"), data=False)
    tr.set_defaults(func=run)
    return tr


def run(args: argparse.Namespace) -> int:
    from capsviz.data.images import load_input
    from capsviz.model.inference import infer, save_trace
    from capsviz.paths import replacing

    out = args.out if args.out.suffix == ".npz" else args.out.with_name(args.out.name + ".npz")
    if args.out.is_dir():  # the folder named, not the file its name gives with .npz
        check_output(args.out, args.overwrite, "--out", "trace.npz")
    check_output(out, args.overwrite, "--out", "trace.npz")
    model, info = load_model(args, kind=None)
    refuse_routing_for_a_cnn(args, info)
    image, _source = load_input(args.image, size=model.cfg.image_size)
    two = info.dataset == "multimnist"
    if info.kind == "baseline":
        import numpy as np

        from capsviz.model.baseline import baseline_probabilities

        record = reading(args.image, baseline_probabilities(model, image), two, cnn=True)
        key = "predictions" if two else "prediction"
        answer = {key: np.int64(record[key])}
        with replacing(out) as tmp:
            np.savez(tmp, input=image.astype(np.float32), probabilities=record["probabilities"], **answer)
        print(
            _(
                "{reading}; a CNN has no capsules or routing: its input, probabilities and answer saved to {out}",
                reading=text(record),
                out=out,
            )
        )
        return 0
    inference = infer(model, image, args.routing_iterations)
    with replacing(out) as tmp:  # an existing trace is replaced whole or kept
        save_trace(inference, tmp, 2 if two else 1)
    print(_("{reading}; trace saved to {out}", reading=text(reading(args.image, inference.lengths[-1], two)), out=out))
    return 0
