"""Watching: the players let friends watch a game, and a friend watches it by its watch code."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pbem.commands.base import SWITCHES, CommandError, first
from pbem.commands.declaration import Declaration, HelpLine, Line, Row, one_of


@dataclass(frozen=True)
class Watchers:
    """``watchers on``/``zuschauer an``: this player lets friends watch the game whose mail the
    line answers (watching is allowed while both players have it on; default off)."""

    on: bool


@dataclass(frozen=True)
class Watch:
    """``watch CODE``/``zuschauen CODE``: the sender watches the match with this watch code (a mail
    at the end of each game; ``watch CODE every move``/``zuschauen CODE bei jedem Zug``: after each
    move); ``watch CODE off``/``unwatch CODE``/``zuschauen CODE aus``: no longer."""

    code: str
    """Lower case, as stored."""
    on: bool = True
    every_move: bool = False
    """``watch CODE every move``: a mail after each move; else one when each game ends."""


WATCH_CODE_PATTERN = r"[a-z2-7]{10}"
"""A watch code: ten characters of lower-case base32 (50 random bits)."""
_WATCH_CODE = re.compile(WATCH_CODE_PATTERN)
_UNWATCH = "unwatch"
_EVERY_MOVE = frozenset((("every", "move"), ("each", "move"), ("bei", "jedem", "zug"), ("jeder", "zug"),
                         ("jeden", "zug")))
"""``watch CODE every move``/``zuschauen CODE bei jedem Zug``: a mail after each move, not one per game."""


def _meant(unwatch: bool, arguments: list[str]) -> bool:
    """Whether a line starting with ``watch``/``zuschauen``/``unwatch`` is meant as the command:
    alone, or with one word and at most ``off``/``aus`` or ``every move``/``bei jedem Zug`` after it
    (``unwatch``: one word), where that word is a watch code or at least looks like one (ten
    letters and digits); "watch this game!" stays a note."""
    if not arguments:
        return True
    limit = 1 if unwatch else 2
    after = tuple(arguments[1:])
    if not unwatch and after in _EVERY_MOVE:
        pass
    elif len(arguments) > limit or (len(arguments) == 2 and SWITCHES.get(arguments[1]) is not False):
        return False
    return len(arguments[0]) == 10 and arguments[0].isalnum()


def _watch(line: Line) -> Watch | CommandError | None:
    arguments, unwatch = line.arguments, line.phrase == _UNWATCH
    if not _meant(unwatch, arguments):
        return None
    code = first(arguments)
    if not _WATCH_CODE.fullmatch(code):
        return CommandError(line.text, "watch-code", code)
    every_move = tuple(arguments[1:]) in _EVERY_MOVE
    return Watch(code, on=not unwatch and (len(arguments) == 1 or every_move), every_move=every_move)


DECLARATIONS = (
    Declaration(Watchers, ("watchers",), ("zuschauer",), one_of(SWITCHES, Watchers, "watchers-switch"), HelpLine("watchers on", "zuschauer an"),
                (Row("`watchers on` / `watchers off`", "`zuschauer an` / `aus`",
                     "in a reply to a game's mail: let friends watch this game, or no longer; default off (see "
                     "[Watching a game](#watching-a-game))"),)),
    Declaration(Watch, ("watch", _UNWATCH), ("zuschauen",), _watch, HelpLine("watch CODE", "zuschauen CODE"),
                (Row("`watch CODE` / `unwatch CODE` (`watch CODE off`)", "`zuschauen CODE` / `zuschauen CODE aus`",
                     "in a new mail: watch the game with that watch code (a mail when each game ends), or stop"),
                 Row("`watch CODE every move`", "`zuschauen CODE bei jedem Zug`",
                     "watch it with a mail after each move")),
                apart=True),
)
