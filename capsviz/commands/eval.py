"""``capsviz eval``: the test accuracy of a checkpoint, one report for every kind of model.

An MNIST model (CapsNet or CNN) is scored on the 10,000 MNIST test digits (or the first N,
``--test-images``), a MultiMNIST model on the fixed MultiMNIST test pairs (both digits
right, Sec. 6), by
:func:`capsviz.evaluate.score`; the report's wording per data set is in :data:`REPORTS`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from capsviz.commands.common import (
    CliError,
    add_batch_size,
    add_common,
    add_routing,
    checked,
    display_width,
    ensure_mnist,
    load_model,
    resolve,
    table_line,
)
from capsviz.paths import shipped_checkpoint
from capsviz.texts import N_, _


@dataclass(frozen=True)
class Report:
    """How ``capsviz eval`` words the score of one data set's test set.

    unit : what the progress bar counts; header : a line about the test set ({n}: its size),
    or None; measure : the name of the paper's measure; columns : the header of the table
    per routing iteration (routing iterations, right, error, the at-least-one column where
    the score has one, then how many answers differ from those at the model's R).
    """

    unit: str
    header: str | None
    measure: str
    columns: str


REPORTS = {
    "mnist": Report(
        N_("image"),
        None,
        N_("test accuracy"),
        N_("routing iterations | correct | test error | answers other than at r = {R}"),
    ),
    "multimnist": Report(
        N_("pair"),
        N_("MultiMNIST test pairs: {n:,} (capsviz.data.multimnist.fixed_test_pairs)"),
        N_("both digits right"),
        N_("routing iterations | both right | error | at least one right | answers other than at r = {R}"),
    ),
}


def add_parser(sub) -> argparse.ArgumentParser:
    e = sub.add_parser(
        "eval",
        help=_("print the test accuracy of a checkpoint"),
        description=_(
            "Evaluate a checkpoint on all 10,000 MNIST test images, or a MultiMNIST model on the "
            "fixed MultiMNIST test pairs (only the test files t10k-* are needed)."
        ),
    )
    add_common(e, checkpoint_help=_("checkpoint to evaluate (default: the shipped model)"))
    add_routing(e)
    e.add_argument(
        "--per-iteration",
        type=checked("routing_iterations"),
        default=None,
        metavar="N",
        help=_(
            "also print a table of the accuracy with 1, 2, ..., N routing iterations and how many answers each "
            "changes against the evaluation's own (--routing-iterations, default the model's number; the count "
            "for 1 is kept per model file for the app's Routing view)"
        ),
    )
    e.add_argument(
        "--test-images",
        type=checked("test_images"),
        default=None,
        metavar="N",
        help=_("MNIST models: evaluate on the first N of the 10,000 test images (default: all)"),
    )
    e.add_argument(
        "--test-pairs",
        type=checked("test_pairs"),
        default=None,
        metavar="N",
        help=_(
            "MultiMNIST models: evaluate on the first N of the fixed test pairs (default: 10,000; "
            "more are drawn in further blocks of 1,000)"
        ),
    )
    add_batch_size(e)
    e.set_defaults(func=run)
    return e


def model_line(info, iterations: int) -> str:
    """``routing iterations: 3`` for a CapsNet; for a CNN what it is and its size."""
    if info.kind != "baseline":
        return _("routing iterations: {r}", r=iterations)
    cfg = info.model_config
    scoring = _("top-2 of 10 sigmoids") if cfg.output == "sigmoid" else "softmax"
    channels = "-".join(map(str, cfg.channels))
    return _("model: baseline CNN, convolutions {channels}, {scoring} (no routing)", channels=channels, scoring=scoring)


def _percent(k: int, n: int) -> str:
    return f"{100 * k / n:.2f}"


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from capsviz.data.mnist import load_mnist
    from capsviz.evaluate import answers_differ, score, test_examples
    from capsviz.model.routing_effect import RoutingCheck, keep_routing_check
    from capsviz.paths import user_cache_dir
    from capsviz.runtime import tune_process

    tune_process("eval")
    path = resolve(args, "checkpoint") or shipped_checkpoint()
    model, info = load_model(args, kind=None)
    if args.test_pairs is not None and info.dataset != "multimnist":
        raise CliError(_("{path}: --test-pairs is for MultiMNIST models; this is an MNIST model", path=path))
    if args.test_images is not None and info.dataset != "mnist":
        raise CliError(_("{path}: --test-images is for MNIST models; this is a MultiMNIST model", path=path))
    if info.kind == "baseline" and (args.per_iteration or args.routing_iterations is not None):
        raise CliError(
            _(
                "{path}: a baseline CNN has no routing; --per-iteration and --routing-iterations are for CapsNets",
                path=path,
            )
        )
    ensure_mnist(args, False)
    test = load_mnist(train=False, data_root=resolve(args, "data_root"))
    iterations = 0 if info.kind == "baseline" else args.routing_iterations or info.model_config.routing_iterations
    report = REPORTS[info.dataset]
    images, labels = test_examples(info.dataset, test, args.test_pairs)
    if args.test_images is not None:
        images, labels = images[: args.test_images], labels[: args.test_images]
    n = len(images)

    def scored(n_iterations: int):
        with tqdm(total=n, unit=_(report.unit), desc=_("evaluating"), dynamic_ncols=True, leave=False) as bar:
            return score(model, images, labels, n_iterations, args.batch_size, after_batch=bar.update)

    first = scored(iterations)
    print(_("checkpoint: {path}", path=path))
    if report.header:
        print(_(report.header, n=n))
    if n < len(test.images) and info.dataset == "mnist":
        print(_("MNIST test images: the first {n:,} of {total:,}", n=n, total=len(test.images)))
    print(model_line(info, iterations))
    right = first.right
    error = _percent(n - right, n)
    print(
        _(
            "{measure}: {p} % ({k:,} / {n:,}), error {e} %",
            measure=_(report.measure),
            p=_percent(right, n),
            k=right,
            n=n,
            e=error,
        )
    )
    if first.at_least_one is not None:
        k = first.at_least_one
        print(_("at least one digit right: {p} % ({k:,} / {n:,})", p=_percent(k, n), k=k, n=n))
    if args.per_iteration:
        names = _(report.columns, R=iterations).split(" | ")
        # each column as wide as its name or its widest cell, known before the rows come
        widest = [str(args.per_iteration), f"{n:,} / {n:,}", "100.00 %"]
        widest += ["100.00 %"] * (first.at_least_one is not None) + [f"{n:,}"]
        widths = [max(display_width(a), display_width(b)) for a, b in zip(names, widest, strict=True)]
        print(table_line(names, widths))
        for r in range(1, args.per_iteration + 1):
            s = first if r == iterations else scored(r)
            cells = [str(r), f"{s.right:,} / {n:,}", f"{_percent(n - s.right, n)} %"]
            if s.at_least_one is not None:
                cells.append(f"{_percent(s.at_least_one, n)} %")
            differ = int(answers_differ(s.answers, first.answers).sum())
            print(table_line([*cells, f"{differ:,}"], widths), flush=True)
            if r == 1:
                keep_routing_check(user_cache_dir(), path, RoutingCheck(n, iterations, differ, s.right, right))
    if first.confusion is not None:
        cm = first.confusion
        # a class none of the images shows (a few first test images) has no accuracy: "–"
        per_class = (f"{100 * cm[k, k] / cm[k].sum():.2f}%" if cm[k].sum() else "–" for k in range(len(cm)))
        print(_("per class: ") + "  ".join(f"{k}: {a}" for k, a in enumerate(per_class)))
        print(_("confusion matrix (rows: true, columns: predicted)"))
        print("      " + "".join(f"{k:>6}" for k in range(len(cm))))
        for k in range(len(cm)):
            print(f"{k:>6}" + "".join(f"{x:>6}" for x in cm[k]))
    return 0
