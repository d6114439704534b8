"""Are the service's dice uniform?  A chi-square test over 10^6 rolls, and the cost of a roll.

    python bench/dice_bench.py [--rolls 1000000] [--per-game 100] [--small]

The rolls are made as the service makes them: fresh 32-byte seeds from ``secrets``
(``pbem.service.table.dice.new_seed``), ``--per-game`` rolls from each (``pbem.rules.dice.roll``).
Printed: the chi-square of the 36 ordered outcomes (35 degrees of freedom), of the 6 faces of
all dice (5), and of the first die against the second (independence, 25), each with its
p-value.  The p-value comes from the closed form of the chi-square survival function (for odd
degrees of freedom: erfc plus a finite sum), checked first against textbook critical values
and, when SciPy is installed, against ``scipy.stats.chi2.sf``.  Fair dice give p-values spread
evenly over (0, 1); a p-value below 0.001 would be a reason to look closer.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbem.rules.dice import roll  # noqa: E402
from pbem.service.table.dice import new_seed  # noqa: E402

TEXTBOOK = [(5, 11.0705, 0.05), (5, 20.515, 0.001), (25, 37.652, 0.05), (35, 49.802, 0.05), (35, 66.619, 0.001)]
"""(degrees of freedom, critical value, probability of exceeding it) from printed chi-square tables."""


def chi_square_sf(x: float, df: int) -> float:
    """P(X > x) for X chi-square with ``df`` degrees of freedom, in closed form.

    Even df = 2m:  e^(-x/2) · Σ_{i<m} (x/2)^i / i!
    Odd df = 2m+1: erfc(√(x/2)) + √(2x/π) · e^(-x/2) · Σ_{i<m} x^i / (1·3·…·(2i+1))
    """
    if x <= 0:
        return 1.0
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, df // 2):
            term *= (x / 2) / i
            total += term
        return math.exp(-x / 2) * total
    term, total = 1.0, 1.0 if df > 1 else 0.0
    for i in range(1, (df - 1) // 2):
        term *= x / (2 * i + 1)
        total += term
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2) * total


def chi_square(observed: Counter[object], cells: list[object], expected: float) -> float:
    return sum((observed[cell] - expected) ** 2 / expected for cell in cells)


def check_the_formula() -> str:
    for df, value, probability in TEXTBOOK:
        assert abs(chi_square_sf(value, df) - probability) < 2e-4 * max(1.0, probability * 100), (df, value)
    try:
        from scipy.stats import chi2  # type: ignore[import-untyped]
    except ImportError:
        return "textbook tables (SciPy not installed)"
    for df in (5, 25, 35):
        for x in (1.0, 10.0, 30.0, 60.0, 100.0):
            assert math.isclose(chi_square_sf(x, df), float(chi2.sf(x, df)), rel_tol=1e-9, abs_tol=1e-15), (df, x)
    return "textbook tables and scipy.stats.chi2.sf"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rolls", type=int, default=1_000_000)
    parser.add_argument("--per-game", type=int, default=100)
    parser.add_argument("--small", action="store_true", help="a quick run that only shows the bench works (CI)")
    args = parser.parse_args()
    if args.small:
        args.rolls = 20_000
    print(f"p-values checked against {check_the_formula()}")

    started = time.perf_counter()
    rolls: list[tuple[int, int]] = []
    while len(rolls) < args.rolls:
        seed = new_seed()
        rolls += [roll(seed, k) for k in range(min(args.per_game, args.rolls - len(rolls)))]
    elapsed = time.perf_counter() - started
    print(f"{len(rolls):,} rolls from {math.ceil(len(rolls) / args.per_game):,} seeds in {elapsed:.1f} s "
          f"({elapsed / len(rolls) * 1e6:.2f} µs a roll)")

    pairs = [(a, b) for a in range(1, 7) for b in range(1, 7)]
    faces = list(range(1, 7))
    outcomes = Counter(rolls)
    dice = Counter(die for pair in rolls for die in pair)
    first, second = Counter(a for a, _ in rolls), Counter(b for _, b in rolls)
    n = len(rolls)
    tests = [
        ("36 ordered outcomes", chi_square(outcomes, pairs, n / 36), 35),  # type: ignore[arg-type]
        ("6 faces of all dice", chi_square(dice, faces, 2 * n / 6), 5),  # type: ignore[arg-type]
        ("first die vs second", sum((outcomes[(a, b)] - first[a] * second[b] / n) ** 2 / (first[a] * second[b] / n)
                                    for a, b in pairs), 25),
    ]
    for name, value, df in tests:
        print(f"{name:<22} chi-square {value:8.2f}  df {df:2d}  p = {chi_square_sf(value, df):.4f}")
    print(f"faces: {', '.join(f'{face}: {dice[face] / (2 * n):.5f}' for face in faces)} (1/6 = {1 / 6:.5f})")


if __name__ == "__main__":
    main()
