"""The player's account: what the service shows them, their settings, and ``yes`` to a mail
that asks them to confirm."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from pbem.commands.base import LANGUAGES, MAX_VACATION_DAYS, SWITCHES, CommandError, first, whole_number
from pbem.commands.declaration import Declaration, Grammar, HelpLine, Line, Row, alone, one_of
from pbem.rules.notation import Numbering


@dataclass(frozen=True)
class Board:
    pass


@dataclass(frozen=True)
class Games:
    pass


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Ratings:
    pass


@dataclass(frozen=True)
class Credits:
    """credits/konto: the play-money balance and the last entries of the account."""


@dataclass(frozen=True)
class Language:
    code: str


@dataclass(frozen=True)
class SetNumbering:
    kind: Numbering


@dataclass(frozen=True)
class Vacation:
    days: int


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Autoroll:
    """``autoroll on``: the service rolls at once for this player, who then never doubles."""

    on: bool


@dataclass(frozen=True)
class Copies:
    """``copies on``: a mail after every move, one's own included, and after every roll of the
    opponent (default off: a mail only when the player must act, or something is for them)."""

    on: bool


@dataclass(frozen=True)
class Automove:
    """``automove off``: the service no longer plays a roll that has only one play for them
    (default on, as FIBS's automove)."""

    on: bool


@dataclass(frozen=True)
class Greedy:
    """``greedy on``: with all checkers home and no contact, the service bears off a checker with
    every die when the roll allows it (pbmserv's greedy; default off)."""

    on: bool


@dataclass(frozen=True)
class Confirm:
    """yes/ja: confirms what a confirmation mail asked about (elsewhere it is just a note)."""

    text: str


_NUMBERINGS = {
    **dict.fromkeys(("own", "eigene", "eigen"), Numbering.OWN),
    **dict.fromkeys(("fixed", "feste", "fest"), Numbering.FIXED),
}


S = TypeVar("S", Autoroll, Copies, Automove, Greedy)


def _switch(command: Callable[[bool], S]) -> Grammar[S]:
    """``WORD on``/``WORD off`` (``an``/``aus``)."""
    return one_of(SWITCHES, command, "switch")


_DAY_WORDS = ("day", "days", "tag", "tage")


def _vacation(line: Line) -> Vacation | CommandError | None:
    """``vacation 7`` (``vacation 7 days``; the yearly allowance is the service's to check)."""
    arguments = line.arguments
    if not (len(arguments) <= 1 or (len(arguments) == 2 and arguments[1] in _DAY_WORDS)):
        return None
    days = whole_number(first(arguments), MAX_VACATION_DAYS)
    return Vacation(days) if days else CommandError(line.text, "vacation-days", first(arguments))


def _confirm(line: Line) -> Confirm | None:
    return Confirm(line.text) if not line.arguments else None


_SHOWN = Row("`board`, `games`, `help`", "`brett`, `spiele`, `hilfe`", "the board again, your games, the help")

DECLARATIONS = (
    Declaration(Board, ("board",), ("brett",), alone(Board()), HelpLine("board", "brett"), (_SHOWN,)),
    Declaration(Games, ("games",), ("spiele",), alone(Games()), HelpLine("games", "spiele"), (_SHOWN,)),
    Declaration(Help, ("help",), ("hilfe",), alone(Help()), HelpLine("help", "hilfe"), (_SHOWN,)),
    Declaration(Language, ("lang",), ("sprache",), one_of(LANGUAGES, Language, "language"), HelpLine("lang de", "sprache de"),
                (Row("`lang de` / `lang en`", "`sprache`", "your language"),)),
    Declaration(SetNumbering, ("numbering",), ("zählung", "zaehlung"), one_of(_NUMBERINGS, SetNumbering, "numbering"),
                HelpLine("numbering own", "zählung eigene"),
                (Row("`numbering own` / `numbering fixed`", "`zählung eigene` / `zählung feste`",
                     "your point numbering"),)),
    Declaration(Autoroll, ("autoroll",), ("autowürfeln", "autowuerfeln"), _switch(Autoroll),
                HelpLine("autoroll on", "autowürfeln an"),
                (Row("`autoroll on` / `autoroll off`", "`autowürfeln an` / `aus`",
                     "roll at once on your turn instead of being asked \"roll or double\" (you then never double); "
                     "default off"),)),
    Declaration(Copies, ("copies",), ("kopien",), _switch(Copies), HelpLine("copies on", "kopien an"),
                (Row("`copies on` / `copies off`", "`kopien an` / `aus`",
                     "a mail after each of your own accepted moves and each roll of your opponent too; default off "
                     "(see [Which mails you get](#which-mails-you-get))"),)),
    Declaration(Automove, ("automove",), ("automatisch",), _switch(Automove), HelpLine("automove off", "automatisch aus"),
                (Row("`automove off` / `automove on`", "`automatisch aus` / `an`",
                     "a roll that has only one play is played for you, and your next mail says so; default on"),)),
    Declaration(Greedy, ("greedy",), ("gierig",), _switch(Greedy), HelpLine("greedy on", "gierig an"),
                (Row("`greedy on` / `greedy off`", "`gierig an` / `aus`",
                     "with all your checkers home and no contact left, a roll that bears off a checker with every "
                     "die is played so for you; default off"),)),
    Declaration(Vacation, ("vacation",), ("urlaub",), _vacation, HelpLine("vacation 7", "urlaub 7"),
                (Row("`vacation N`", "`urlaub N`", "pause your clocks in all your games for N days"),)),
    Declaration(Ratings, ("ratings",), ("rangliste",), alone(Ratings()), HelpLine("ratings", "rangliste"),
                (Row("`ratings`", "`rangliste`", "the rating lists and your place in them"),)),
    Declaration(Credits, ("credits",), ("konto",), alone(Credits()), HelpLine("credits", "konto"),
                (Row("`credits`", "`konto`", "your play-money account: the balance and the last 10 entries"),)),
    Declaration(Stop, ("stop",), ("stopp",), alone(Stop()), HelpLine("stop", "stopp"),
                (Row("`stop`", "`stopp`", "never receive invitations again"),)),
    Declaration(Confirm, ("yes", "confirm"), ("ja", "bestätigen", "bestaetigen"), _confirm, None,
                (Row("`yes` / `confirm`", "`ja` / `bestätigen`",
                     "in an answer to a mail that asks you to confirm what you wrote: carry it out (anywhere else "
                     "it is a note)"),)),
)
