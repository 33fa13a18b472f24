"""Two MultiMNIST models (or one at two routing iterations) on the same fixed test pairs, paired.

Usage: python tools/compare_pair_models.py A.safetensors [B.safetensors] [--iterations-a N]
                                           [--iterations-b N] [--pairs 10000] [--data-root DIR]

For each side: both digits right out of the pairs and its 95 % Wilson interval. For the two
side by side on the same pairs: the pairs only A gets both right and only B does, and the
exact two-sided McNemar p-value of that split (a binomial test with p = 1/2 on the
discordant pairs): whether the difference is larger than chance on these pairs, which the
two intervals alone overstate (the pairs are shared, so the counts are correlated).
Without B, the second side is A itself at ``--iterations-b`` routing iterations. Either side
may be a baseline CNN (read by its two most probable classes, no routing).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from capsviz.data.mnist import load_mnist
from capsviz.data.multimnist import fixed_test_pairs
from capsviz.evaluate import pair_hits
from capsviz.model.baseline import BaselineCNN
from capsviz.train.checkpoint import load_model


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials (fractions in [0, 1])."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def mcnemar_p(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar p-value: P(a split at least as uneven | p = 1/2)."""
    n, low = only_a + only_b, min(only_a, only_b)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(low + 1)) / 2**n
    return min(1.0, 2 * tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path, nargs="?")
    parser.add_argument("--iterations-a", type=int, default=None, help="default: the model's own")
    parser.add_argument("--iterations-b", type=int, default=None, help="default: the model's own")
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--data-root", type=Path, default=None)
    args = parser.parse_args()
    pairs = fixed_test_pairs(load_mnist(train=False, data_root=args.data_root), args.pairs)
    sides = [(args.a, args.iterations_a), (args.b or args.a, args.iterations_b)]
    right = []
    for path, iterations in sides:
        model = load_model(path)[0]
        hits = pair_hits(model, pairs.images, pairs.labels, routing_iterations=iterations)
        right.append(hits == 2)
        k, n = int(right[-1].sum()), len(pairs.labels)
        low, high = wilson(k, n)
        reading = "a CNN" if isinstance(model, BaselineCNN) else f"r = {iterations or model.cfg.routing_iterations}"
        interval = f"95 % CI {100 * low:.2f}-{100 * high:.2f}"
        print(f"{path.name}, {reading}: both right {k:,} / {n:,} = {100 * k / n:.2f} % ({interval})")
    only_a, only_b = int((right[0] & ~right[1]).sum()), int((right[1] & ~right[0]).sum())
    print(f"only A both right: {only_a:,}; only B: {only_b:,}; McNemar exact p = {mcnemar_p(only_a, only_b):.3g}")


if __name__ == "__main__":
    main()
