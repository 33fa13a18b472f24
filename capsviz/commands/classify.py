"""``capsviz classify``: the predicted digit and capsule lengths of image files (a baseline
CNN's checkpoint: its answer and class probabilities).

Each file gives one record (:func:`reading`), written as a line of text or of JSON
(:func:`write`); ``capsviz trace`` prints the same text for its image.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from capsviz.commands.common import CliError, add_common, add_routing, load_model
from capsviz.texts import _

INVERT = {"auto": None, "light": False, "dark": True}


def add_parser(sub) -> argparse.ArgumentParser:
    c = sub.add_parser(
        "classify",
        help=_("print the predicted digit and capsule lengths of image files"),
        description=_(
            "Classify image files, preprocessed exactly as the app does (crop to the ink, "
            "fit into 20x20, centre by mass; an image of the model's input size, 28x28 or 36x36 for a "
            "MultiMNIST model, is used as stored). A MultiMNIST model prints its two longest capsules; "
            "a baseline CNN's checkpoint prints the CNN's answer and class probabilities. "
            "One line per file; a file that cannot be read gets an error line and the others go on; "
            "the exit code is 1 if any file failed."
        ),
    )
    c.add_argument("images", type=Path, nargs="+", metavar="FILE", help=_("image files (PNG, JPEG, ...)"))
    c.add_argument(
        "--json",
        action="store_true",
        help=_(
            'one JSON object per line: {"file", "prediction", "recognised", "lengths"} (a MultiMNIST model: '
            '{"file", "predictions": [two digits, longest first], "lengths"}; a CNN: "probabilities" in place of '
            '"lengths" and no "recognised") or {"file", "error"}'
        ),
    )
    c.add_argument(
        "--ink",
        choices=("auto", "light", "dark"),
        default="auto",
        help=_(
            "light: light ink on a dark background; dark: dark ink on a light background; auto: "
            "decide from the image: its border, or for a photo the strokes' own contrast (default)"
        ),
    )
    add_routing(c)
    add_common(c, checkpoint_help=_("checkpoint to use (default: the shipped model)"), data=False)
    c.set_defaults(func=run)
    return c


def reading(path, lengths, two: bool, cnn: bool = False) -> dict:
    """The record of one classified image ``path``: ``{"file", "prediction", "recognised",
    "lengths"}`` (the longest capsule, and whether it is long enough:
    :func:`capsviz.model.inference.recognised`), or for a two-digit model (``two``)
    ``{"file", "predictions", "lengths"}`` (its two longest capsules, longest first).
    ``lengths``: the (10,) capsule lengths in [0, 1), kept as given. For a baseline CNN
    (``cnn``), ``lengths`` are its class probabilities in [0, 1] and the record holds them
    as ``probabilities``, with the likeliest class (or two) and no ``recognised``."""
    from capsviz.model.inference import recognised, two_longest

    if cnn:
        answer = {"predictions": two_longest(lengths)} if two else {"prediction": int(lengths.argmax())}
        return {"file": str(path), **answer, "probabilities": lengths}
    if two:
        return {"file": str(path), "predictions": two_longest(lengths), "lengths": lengths}
    top = int(lengths.argmax())
    return {"file": str(path), "prediction": top, "recognised": recognised(lengths), "lengths": lengths}


def scores_name(record: dict) -> str:
    """The key of a :func:`reading` record's ten scores: ``lengths``, or a CNN's ``probabilities``."""
    return "lengths" if "lengths" in record else "probabilities"


def text(record: dict) -> str:
    """A record of :func:`reading` as a line: ``FILE: 7 (0.940)  lengths ...``, ``FILE:
    nothing recognised (longest: 8, 0.310)  lengths ...`` or ``FILE: 7 (0.922) and 3 (0.871)
    lengths ...``, every length with three decimals."""
    name = scores_name(record)
    v = record[name]
    if "predictions" in record:
        a, b = record["predictions"]
        answer = _("{a} ({la:.3f}) and {b} ({lb:.3f})", a=a, la=v[a], b=b, lb=v[b])
    else:
        k = record["prediction"]
        seen = record.get("recognised", True)
        answer = f"{k} ({v[k]:.3f})" if seen else _("nothing recognised (longest: {k}, {l:.3f})", k=k, l=v[k])
    scores = _("lengths") if name == "lengths" else _("CNN probabilities")
    return f"{record['file']}: {answer}  {scores} {' '.join(f'{x:.3f}' for x in v)}"


def write(record: dict, as_json: bool) -> None:
    """Print ``record`` (of :func:`reading`, or ``{"file", "error"}``) as one line of JSON (the
    lengths rounded to 6 decimals) or of text (an error on stderr as ``error: ...``)."""
    if "error" in record:
        if as_json:
            print(json.dumps(record), flush=True)
        else:
            print(_("error: {message}", message=record["error"]), file=sys.stderr, flush=True)
    elif as_json:
        name = scores_name(record)
        print(json.dumps({**record, name: [round(float(x), 6) for x in record[name]]}))
    else:
        print(text(record))


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from capsviz.data.images import ImageReadError, load_input
    from capsviz.evaluate import model_lengths

    model, info = load_model(args, kind=None)
    size, two, cnn = model.cfg.image_size, info.dataset == "multimnist", info.kind == "baseline"
    refuse_routing_for_a_cnn(args, info)
    inputs, errors = {}, {}
    for k, path in enumerate(args.images):
        try:
            inputs[k], _source = load_input(path, invert=INVERT[args.ink], size=size)
        except ImageReadError as exc:
            errors[k] = str(exc)
    order = sorted(inputs)
    images = np.stack([inputs[k] for k in order]) if order else np.zeros((0, size, size), np.float32)
    lengths = model_lengths(model, images, args.routing_iterations)
    results = dict(zip(order, lengths))
    for k, path in enumerate(args.images):
        record = {"file": str(path), "error": errors[k]} if k in errors else reading(path, results[k], two, cnn)
        write(record, args.json)
    return 1 if errors else 0


def refuse_routing_for_a_cnn(args: argparse.Namespace, info) -> None:
    """``CliError`` for ``--routing-iterations`` given with a baseline CNN's checkpoint (a CNN does not route)."""
    if info.kind == "baseline" and args.routing_iterations is not None:
        raise CliError(
            _("{name} is a baseline CNN: it has no routing; leave out --routing-iterations", name=info.path.name)
        )
