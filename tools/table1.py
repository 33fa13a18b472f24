"""Write docs/table1.md: the paper's Table 1 (Sabour et al. 2017) measured here with `capsviz eval`.

Usage: python tools/table1.py RUNS.json [--out docs/table1.md] [--data-root DIR]

RUNS.json lists the checkpoints of each cell and what they cost to train:

    {"hardware": "2-core AMD EPYC (Zen 3), float32, no GPU",
     "cells": [{"row": "baseline", "dataset": "mnist", "checkpoint": "runs/cnn.safetensors",
                "hours": 0.3, "note": "..."}, ...],
     "empty": [{"row": "r1", "dataset": "multimnist", "why": "..."}]}

Rows: ``baseline`` (the CNN), ``r1`` / ``r1-recon`` / ``r3`` / ``r3-recon`` (CapsNet with 1 or 3
routing iterations, without or with the reconstruction loss), and ``shipped`` (the shipped
CapsNets, trained longer). Every figure is parsed from what `capsviz eval --checkpoint F`
prints (MNIST: the test error on the 10,000 test images; MultiMNIST: 100 - both digits
right on the 10,000 fixed test pairs); the budget (epochs, images or pairs seen) is read
from the checkpoint's header, the hours and hardware from RUNS.json.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from capsviz.train.checkpoint import read_info

ROWS = {  # row -> (label, the paper's MNIST error, the paper's MultiMNIST error), Table 1
    "baseline": ("Baseline CNN", "0.39", "8.1"),
    "r1": ("CapsNet, routing 1, no reconstruction", "0.34 ± 0.032", "—"),
    "r1-recon": ("CapsNet, routing 1, reconstruction", "0.29 ± 0.011", "7.5"),
    "r3": ("CapsNet, routing 3, no reconstruction", "0.35 ± 0.036", "—"),
    "r3-recon": ("CapsNet, routing 3, reconstruction", "0.25 ± 0.005", "5.2"),
    "shipped": ("CapsNet, routing 3, reconstruction: the shipped models", "0.25 ± 0.005", "5.2"),
}
DATASETS = ("mnist", "multimnist")
PATTERNS = {
    "mnist": re.compile(r"test accuracy: [\d.]+ % \(([\d,]+) / ([\d,]+)\), error ([\d.]+) %"),
    "multimnist": re.compile(r"both digits right: [\d.]+ % \(([\d,]+) / ([\d,]+)\), error ([\d.]+) %"),
}


def evaluate(checkpoint: Path, dataset: str, data_root: Path | None) -> tuple[str, int, int, str]:
    """Run `capsviz eval` on ``checkpoint``: (error in %, as printed; right; total; the model line)."""
    command = [sys.executable, "-m", "capsviz", "eval", "--checkpoint", str(checkpoint)]
    if data_root is not None:
        command += ["--data-root", str(data_root)]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"capsviz eval failed on {checkpoint}: {out.stderr.strip().splitlines()[-1]}")
    match = PATTERNS[dataset].search(out.stdout)
    if match is None:
        raise SystemExit(f"{checkpoint}: capsviz eval printed no {dataset} figure:\n{out.stdout}")
    model = next((line for line in out.stdout.splitlines() if line.startswith(("model:", "routing"))), "")
    right, total = (int(g.replace(",", "")) for g in match.groups()[:2])
    return match.group(3), right, total, model


def budget(checkpoint: Path, dataset: str, hours: float) -> str:
    """``2 epochs, 120,000 images, 0.3 h`` from the checkpoint's header (completed epochs x
    examples per epoch) and the given hours."""
    info = read_info(checkpoint)
    cfg = info.train_config
    per_epoch = cfg.get("pairs_per_epoch", 60_000) if dataset == "multimnist" else cfg.get("train_subset") or 60_000
    seen = round(info.epoch * per_epoch)  # the last batch of an epoch may be short
    noun = "pairs" if dataset == "multimnist" else "images"
    return f"{info.epoch:g} epoch{'' if info.epoch == 1 else 's'}, {seen:,} {noun}, {hours:g} h"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("--out", type=Path, default=Path("docs/table1.md"))
    parser.add_argument("--data-root", type=Path, default=None)
    args = parser.parse_args()
    spec = json.loads(args.runs.read_text())
    cells: dict[tuple[str, str], str] = {}
    details = []
    for cell in spec["cells"]:
        row, dataset, path = cell["row"], cell["dataset"], Path(cell["checkpoint"])
        if read_info(path).dataset != dataset:
            raise SystemExit(f"{path}: not a {dataset} model")
        error, right, total, model = evaluate(path, dataset, args.data_root)
        cells[row, dataset] = f"**{error}**"
        what = "both digits right" if dataset == "multimnist" else "right"
        details.append(
            f"- {ROWS[row][0]}, {dataset}: `{path.name}`, {right:,} / {total:,} {what}, "
            f"{model.removeprefix('model: ')}; {budget(path, dataset, cell['hours'])}"
            + (f". {cell['note']}" if cell.get("note") else "")
        )
        print(details[-1], flush=True)
    empty = {(e["row"], e["dataset"]): e["why"] for e in spec.get("empty", [])}
    lines = [
        "# Table 1 of the paper, measured here",
        "",
        "Test error in % (lower is better). Ours in bold, each from `capsviz eval --checkpoint F` on the",
        "10,000 MNIST test images or the 10,000 fixed MultiMNIST test pairs",
        "(`capsviz.data.multimnist.fixed_test_pairs`; error = 100 − both digits right); beside it the",
        "paper's figure (Sabour, Frosst & Hinton 2017, Table 1: MNIST mean ± std of 3 trials, MultiMNIST",
        f"one trial). Hardware: {spec['hardware']}.",
        "",
        "| Method | MNIST, ours | MNIST, paper | MultiMNIST, ours | MultiMNIST, paper |",
        "|---|---|---|---|---|",
    ]
    notes = []
    for row, (label, paper_mnist, paper_multi) in ROWS.items():
        shown = []
        for dataset in DATASETS:
            if (row, dataset) in cells:
                shown.append(cells[row, dataset])
            elif (row, dataset) in empty:
                notes.append(empty[row, dataset])
                shown.append(f"— (note {len(notes)})")
            else:
                shown.append("—")
        if all(s == "—" for s in shown):
            continue
        lines.append(f"| {label} | {shown[0]} | {paper_mnist} | {shown[1]} | {paper_multi} |")
    lines += ["", "## The checkpoints and their training budgets", "", *details]
    if notes:
        lines += ["", "## Empty cells", ""] + [f"{k}. {why}" for k, why in enumerate(notes, 1)]
    if spec.get("remarks"):
        lines += ["", "## Reading the table", "", *spec["remarks"]]
    command = f"python tools/table1.py {args.runs.name}"
    lines += ["", f"Made by `{command}` from these checkpoints; RUNS.json as given:", "", "```json"]
    lines += [json.dumps({k: v for k, v in spec.items() if k != "remarks"}, indent=1, ensure_ascii=False), "```", ""]
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
