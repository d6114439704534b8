"""``pbem rules legal``: the rules core's legal plays for Position IDs and rolls (SPEC §5)."""

from __future__ import annotations

from typing import TextIO

from pbem.cli.loading import EXIT_USAGE
from pbem.rules.gnubg_ids import legal_position_ids

RULES_LEGAL_HELP = """\
Read lines "POSITION_ID D1 D2" on standard input and write, for each, one line:
the GNU Backgammon Position IDs of all distinct positions the player on roll
can reach with that roll, sorted in byte order and separated by single spaces,
or an empty line when no move is possible.

Positions are encoded as gnubg.positionid() encodes them with the mover on
roll, before and after the move (the turn is not passed). Each answer is
flushed at once, so the command can run as a co-process. Blank input lines
are skipped.

A malformed line stops the command: the answers to the lines before it have
been written, a message naming the line number goes to standard error, and
the exit status is 2 (an empty answer would wrongly mean "no legal move")."""


def rules_legal(lines: TextIO, out: TextIO, err: TextIO) -> int:
    """Answer ``POSITION_ID D1 D2`` lines, one output line each; see :data:`RULES_LEGAL_HELP`."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            pid, dice = parse_legal_query(line)
            answer = " ".join(legal_position_ids(pid, dice))
        except ValueError as error:
            out.flush()
            print(f"pbem rules legal: line {number}: {error}", file=err)
            return EXIT_USAGE
        out.write(answer + "\n")
        out.flush()
    return 0


def parse_legal_query(line: str) -> tuple[str, tuple[int, int]]:
    """``"POSITION_ID D1 D2"`` as ``(pid, (d1, d2))``; ``ValueError`` saying what is wrong."""
    fields = line.split()
    if len(fields) != 3:
        raise ValueError(f"expected 'POSITION_ID D1 D2', got {line.strip()!r}")
    pid, *dice = fields
    if not all(die in "123456" and len(die) == 1 for die in dice):
        raise ValueError(f"dice must be two numbers from 1 to 6, got {' '.join(dice)!r}")
    return pid, (int(dice[0]), int(dice[1]))
