"""``capsviz trace``: classify one image file and save its routing trace as ``.npz``
(:func:`capsviz.model.inference.save_trace`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from capsviz.commands.classify import reading, text
from capsviz.commands.common import CliError, add_common, add_routing, load_model


def add_parser(sub) -> argparse.ArgumentParser:
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
    add_routing(tr)
    add_common(tr, checkpoint_help="checkpoint to use (default: the shipped model)", data=False)
    tr.set_defaults(func=run)
    return tr


def run(args: argparse.Namespace) -> int:
    from capsviz.data.images import load_input
    from capsviz.model.inference import infer, save_trace

    out = args.out if args.out.suffix == ".npz" else args.out.with_name(args.out.name + ".npz")
    for given in dict.fromkeys((args.out, out)):
        if given.is_dir():
            raise CliError(f"{given}: is a folder; give the .npz file to write, e.g. {given / 'trace.npz'}")
    model, info = load_model(args)
    image, _ = load_input(args.image, size=model.cfg.image_size)
    inference = infer(model, image, args.routing_iterations)
    save_trace(inference, out)
    print(f"{text(reading(args.image, inference.lengths[-1], info.dataset == 'multimnist'))}; trace saved to {out}")
    return 0
