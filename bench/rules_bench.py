"""Positions per second for full legal-play enumeration, pure Python, one core.

The corpus is fixed: random legal games from the standard start with a seeded generator, so
it holds opening, middle-game, bar and bear-off positions and about one double in six.

    python bench/rules_bench.py [--positions 2000] [--seed 2] [--repeat 3] [--small]
"""

from __future__ import annotations

import argparse
import random
import time

from pbem.rules.moves import legal_plays
from pbem.rules.position import Position

Roll = tuple[int, int]


def corpus(size: int, seed: int) -> list[tuple[Position, Roll]]:
    """``size`` (position, roll) pairs met while playing random legal games."""
    rng = random.Random(seed)
    pairs: list[tuple[Position, Roll]] = []
    position = Position.start()
    while len(pairs) < size:
        roll = (rng.randint(1, 6), rng.randint(1, 6))
        pairs.append((position, roll))
        plays = legal_plays(position, roll)
        if plays:
            position = rng.choice(sorted(plays, key=lambda reached: (reached.mover, reached.opponent)))
        if position.mover_off == 15:
            position = Position.start()
        else:
            position = position.swap()
    return pairs


def positions_per_second(pairs: list[tuple[Position, Roll]], repeat: int) -> float:
    """The best of ``repeat`` timed passes over the corpus."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for position, roll in pairs:
            legal_plays(position, roll)
        best = min(best, time.perf_counter() - started)
    return len(pairs) / best


def kind(position: Position, roll: Roll) -> str:
    if position.mover[24]:
        return "on the bar"
    if position.mover_can_bear_off():
        return "bearing off"
    return "doubles" if roll[0] == roll[1] else "other rolls"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", action="store_true", help="a quick run that only shows the bench works (CI)")
    arguments = parser.parse_args()
    if arguments.small:
        arguments.positions, arguments.repeat = 100, 1
    pairs = corpus(arguments.positions, arguments.seed)
    rate = positions_per_second(pairs, arguments.repeat)
    print(f"{len(pairs)} positions: {rate:,.0f} positions/s for legal_plays (one core, pure Python)")
    for name in ("other rolls", "doubles", "on the bar", "bearing off"):
        group = [pair for pair in pairs if kind(*pair) == name]
        if group:
            print(f"  {name:12} {len(group):5} positions: {positions_per_second(group, arguments.repeat):,.0f}/s")


if __name__ == "__main__":
    main()
