"""Write notation_gnubg.txt: plays from seeded random games, as GNU Backgammon writes them.

Each line is ``POSITION_ID<TAB>STEPS<TAB>GNUBG``: the position seen from the mover, the steps
of one legal play as ``from:to`` pairs in the mover's numbering (25 = bar, 0 = off), and what
``gnubg.movetupletostring`` makes of them.  The plays come from our own move generator; the
spelling comes from gnubg, so the file pins our formatter to gnubg's.

Run from the repository root: ``python tests/data/make_notation_gnubg.py`` (needs
``/usr/games/gnubg``).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
from pathlib import Path

from pbem.rules.gnubg_ids import position_id
from pbem.rules.moves import Play, legal_plays
from pbem.rules.position import Position

GAMES = 12
SEED = 2
HERE = Path(__file__).parent

_FORMAT_IN_GNUBG = """
import json, os
with open(os.environ["NOTATION_IN"]) as cases, open(os.environ["NOTATION_OUT"], "w") as out:
    for line in cases:
        mover, opponent, pid, steps = json.loads(line)
        board = (tuple(opponent), tuple(mover))
        assert gnubg.positionid(board) == pid, pid
        move = tuple(point for step in steps for point in step)
        out.write(gnubg.movetupletostring(move, board) + "\\n")
"""


def sample_plays(rng: random.Random) -> list[tuple[Position, Play]]:
    """Two plays of every turn of ``GAMES`` random games: the one played and one other."""
    cases = []
    for _ in range(GAMES):
        position = Position.start()
        while position.mover_off < 15 and position.opponent_off < 15:
            plays = list(legal_plays(position, (rng.randint(1, 6), rng.randint(1, 6))).items())
            if plays:
                reached, play = rng.choice(plays)
                cases += [(position, play), (position, rng.choice(plays)[1])]
                position = reached
            position = position.swap()
    return list(dict.fromkeys(cases))


def main() -> None:
    cases = sample_plays(random.Random(SEED))
    with tempfile.TemporaryDirectory() as work:
        given, answers, script = (Path(work, name) for name in ("in", "out", "format.py"))
        given.write_text(
            "".join(
                json.dumps([position.mover, position.opponent, position_id(position), play]) + "\n"
                for position, play in cases
            )
        )
        script.write_text(_FORMAT_IN_GNUBG)
        environment = dict(os.environ, NOTATION_IN=str(given), NOTATION_OUT=str(answers))
        subprocess.run(
            ["/usr/games/gnubg", "-t", "-q", "-r", "-p", str(script)],
            env=environment, check=True, capture_output=True, timeout=600,
        )
        spelled = answers.read_text().splitlines()
    assert len(spelled) == len(cases)
    lines = [
        f"{position_id(position)}\t{' '.join(f'{a}:{b}' for a, b in play)}\t{gnubg}\n"
        for (position, play), gnubg in zip(cases, spelled)
    ]
    (HERE / "notation_gnubg.txt").write_text("".join(lines))


if __name__ == "__main__":
    main()
