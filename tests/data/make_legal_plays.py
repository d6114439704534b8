"""Write legal_plays.txt: GNU Backgammon's legal resulting positions for seeded random positions.

Usage (needs the gnubg program; takes one to two minutes)::

    python tests/data/make_legal_plays.py [COUNT] > tests/data/legal_plays.txt

Positions come from seeded random games played inside gnubg with gnubg's own legal plays (see
``random_queries`` in tests/gnubg_oracle.py), so the file owes nothing to pbem's move generator.
Each data line is ``POSITION_ID D1 D2 -> IDS``: IDS is what ``pbem rules legal`` must print for
``POSITION_ID D1 D2`` (sorted, space-separated, nothing when no move is possible).
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gnubg_oracle import random_corpus

SEED = 20240611
DEFAULT_COUNT = 2500


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_COUNT
    corpus = random_corpus(SEED, count)
    print(f"# GNU Backgammon legal plays; made by tests/data/make_legal_plays.py, seed {SEED}.")
    print("# POSITION_ID D1 D2 -> sorted Position IDs of every distinct position after the roll.")
    print("# " + _summary(corpus))
    for pid, die1, die2, answer in corpus:
        print(" ".join([pid, str(die1), str(die2), "->", *answer]))


def _summary(corpus: list[tuple[str, int, int, list[str]]]) -> str:
    """Counts of the hard cases, so that a reader sees what the file covers."""
    counts = {
        "bar": 0,
        "bar>=2": 0,
        "bear-off": 0,
        "bear-off with contact": 0,
        "hit while bearing off": 0,
        "doubles": 0,
        "no move": 0,
    }
    for pid, die1, die2, answer in corpus:
        opponent, mover = _sides(pid)
        counts["bar"] += mover[24] > 0
        counts["bar>=2"] += mover[24] >= 2
        counts["bear-off"] += not any(mover[6:])
        counts["bear-off with contact"] += not any(mover[6:]) and any(opponent[18:])
        counts["hit while bearing off"] += not any(mover[6:]) and any(
            _sides(result)[0][24] > opponent[24] for result in answer
        )
        counts["doubles"] += die1 == die2
        counts["no move"] += not answer
    return f"{len(corpus)} positions: " + ", ".join(f"{name} {n}" for name, n in counts.items())


def _sides(pid: str) -> tuple[list[int], list[int]]:
    """(not on roll, on roll) from a Position ID, decoded here so the file owes nothing to pbem."""
    bits = int.from_bytes(base64.b64decode(pid + "=="), "little")
    slots, run = [], 0
    while len(slots) < 50:
        if bits & 1:
            run += 1
        else:
            slots.append(run)
            run = 0
        bits >>= 1
    return slots[:25], slots[25:]


if __name__ == "__main__":
    main()
