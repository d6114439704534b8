"""The ``.mat`` text of a match: the Jellyfish format that GNU Backgammon and eXtreme Gammon import.

Written as gnubg's own ``export match mat`` writes it, because gnubg's importer (``import.c``)
is the contract: a header `` 7 point match`` (`` 0 point match`` for money, single games and
series, which gnubg then reads as a money session), and per game::

     Game 2
     Alice : 2                      Assistant : 0
      1)                             31: 8/5 6/5
      2) 62: 24/18 13/11              Doubles => 2
      3)  Takes                      52: 13/8 13/11
      ...
          Wins 2 points and the match

Seat 0 is the left column, seat 1 the right one (the importer splits a line at the second
die pair, else at the first double space after column 15).  Plays are written die by die as
gnubg exports them (``25`` the bar, ``0`` off, ``*`` a hit).  A beaver is written as the
redouble it is, `` Doubles => 4``, followed by the doubler's `` Takes`` or `` Drops``: gnubg
reads that as a beaver, while its `` Beavers`` keyword leaves the importer stuck whenever no
roll follows the beaver (a drop, or a resignation after the take).A
resignation or timeout is the winner's ``Wins N points`` line alone: the importer reads a win
while the game is still running as a resignation worth that many points.  A drawn game has no
``Wins`` line (the format has no draws), and a roll not yet played is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from pbem.rules.dice import WrittenRoll
from pbem.rules.game import ActionKind, Game
from pbem.rules.moves import Play, apply_step
from pbem.rules.position import Position
from pbem.rules.scoring import Ending, Format

_LEFT_WIDTH = 28  # "%3d) %-27s " in gnubg: the right column starts at character 33
_RIGHT_COLUMN = 5 + _LEFT_WIDTH
_GAME_LINE = re.compile(r"^\s*Game\s+\d+\s*$")
_MOVE_LINE = re.compile(r"^\s*\d+\)")
_ROLL = re.compile(r"(?<!\S)([1-6])([1-6]):")
_WINS_INDENT = ("      ", " " * 34)


def match_text(games: Sequence[Game], names: tuple[str, str]) -> str:
    """The .mat file of the finished or running ``games`` of one match, session or series."""
    rules = games[0].rules if games else None
    length = rules.length if rules is not None and rules.format is Format.MATCH else 0
    blocks = [f" {length} point match\n"]
    blocks += [game_text(game, names, number) for number, game in enumerate(games, start=1)]
    return "\n".join(blocks)


def game_text(game: Game, names: tuple[str, str], number: int = 1) -> str:
    """The block of one game, numbered ``number``, with the score before it."""
    first, second = (_name(name) for name in names)
    lines = [f" Game {number}", f" {f'{first} : {game.score[0]}':<31}{second} : {game.score[1]}"]
    lines += _move_lines(game, _wins_text(game))
    return "\n".join(lines) + "\n"


def _name(name: str) -> str:
    """A player name the importer reads back unchanged: no blanks, no colons."""
    return re.sub(r"[\s:]+", "_", name.strip()) or "Player"


def _move_lines(game: Game, wins: str | None) -> list[str]:
    """Numbered lines with seat 0's entries on the left and seat 1's on the right, then the win.

    As in gnubg's export, seat 1's win goes into the right column of the last line when that
    is free (after seat 0 dropped or resigned); otherwise the win has a line of its own.
    """
    lines: list[str] = []
    cells: list[str | None] = [None, None]
    for seat, text in _entries(game):
        if cells[seat] is not None or (seat == 0 and cells[1] is not None):
            lines.append(_line(len(lines) + 1, cells))
            cells = [None, None]
        cells[seat] = text
    winner = game.result.winner if game.result is not None else None
    if wins is not None and winner == 1 and cells[0] is not None and cells[1] is None:
        cells[1], wins = f" {wins}", None  # the blank keeps it apart from a full left cell
    if cells != [None, None]:
        lines.append(_line(len(lines) + 1, cells))
    if wins is not None and winner is not None:
        lines.append(_WINS_INDENT[winner] + wins)
    return lines


def _line(number: int, cells: list[str | None]) -> str:
    """gnubg's ``%3d) %-27s `` and the right cell; the importer needs the left padding."""
    left, right = cells
    return f"{number:3d}) {left or '':<{_LEFT_WIDTH - 1}} {right or ''}"


def _entries(game: Game) -> Iterator[tuple[int, str]]:
    """(seat, text) for each written action, replaying the plays for the hit marks."""
    board = Position.start()
    pending_roll: str | None = None
    for action in game.record:
        if action.kind is ActionKind.ROLL:
            assert action.dice is not None
            high, low = sorted(action.dice, reverse=True)
            pending_roll = f"{high}{low}:"
        elif action.kind is ActionKind.MOVE:
            assert action.play is not None and pending_roll is not None
            text, board = _play_text(board, action.play)
            yield action.seat, f"{pending_roll} {text}".rstrip()
            board = board.swap()
            pending_roll = None
        elif action.kind is ActionKind.DOUBLE or action.kind is ActionKind.BEAVER:
            yield action.seat, f" Doubles => {action.cube}"
        elif action.kind is ActionKind.TAKE:
            yield action.seat, " Takes"
        elif action.kind is ActionKind.DROP:
            yield action.seat, " Drops"


def _play_text(board: Position, play: Play) -> tuple[str, Position]:
    """gnubg's plain export of a play (``13/7* 7/1``) and the board after it."""
    written = []
    for origin, target in play:
        hit = 1 <= target <= 24 and board.opponent[24 - target] == 1
        written.append(f"{origin}/{target}{'*' if hit else ''}")
        board = apply_step(board, (origin, target))
    return " ".join(written), board


def _wins_text(game: Game) -> str | None:
    """``Wins 2 points`` (``and the match`` when it decides a match); None without a winner."""
    result = game.result
    if result is None or result.winner is None:
        return None
    rules = game.rules
    wins_match = rules.format is Format.MATCH and (
        game.score[result.winner] + result.points >= rules.length
        or result.ending in (Ending.RESIGNED, Ending.TIMEOUT)
    )
    plural = "s" if result.points != 1 else ""
    suffix = " and the match" if wins_match else ""
    return f"Wins {result.points} point{plural}{suffix}"


def read_rolls(text: str) -> list[list[WrittenRoll]]:
    """The rolls of each game of a ``.mat`` text, in order: who rolled and the dice as written.

    A line's two rolls are seat 0's and seat 1's; a line with one roll has it in seat 0's column
    when it starts before the right column (character 33), as gnubg's export and
    :func:`match_text` write.  A roll before ``Game 1`` is an error (not a ``.mat`` file).
    """
    games: list[list[WrittenRoll]] = []
    for line in text.splitlines():
        if _GAME_LINE.match(line):
            games.append([])
            continue
        if not _MOVE_LINE.match(line):
            continue
        found = list(_ROLL.finditer(line))
        if found and not games:
            raise ValueError("a roll before the first 'Game' line: not a .mat file")
        for index, roll in enumerate(found):
            seat = index if len(found) == 2 else int(roll.start() >= _RIGHT_COLUMN)
            games[-1].append(WrittenRoll(seat, (int(roll.group(1)), int(roll.group(2)))))
    return games
