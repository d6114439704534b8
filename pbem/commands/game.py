"""Playing a game: a move, the dice and the cube, resigning, a draw, a rematch."""

from __future__ import annotations

from dataclasses import dataclass

from pbem.commands.base import CommandError, first
from pbem.commands.declaration import Declaration, HelpLine, Line, Row, alone
from pbem.rules.notation import looks_like_play


@dataclass(frozen=True)
class Move:
    text: str
    """As written: the service reads it in the player's numbering."""


@dataclass(frozen=True)
class Roll:
    pass


@dataclass(frozen=True)
class Double:
    pass


@dataclass(frozen=True)
class Take:
    pass


@dataclass(frozen=True)
class Drop:
    pass


@dataclass(frozen=True)
class Beaver:
    pass


@dataclass(frozen=True)
class Resign:
    pass


@dataclass(frozen=True)
class OfferResignation:
    """``resign gammon``: offer to resign with that result (1 single, 2 gammon, 3 backgammon)."""

    kind: int


@dataclass(frozen=True)
class Remis:
    pass


@dataclass(frozen=True)
class Rematch:
    pass


def _move(line: Line) -> Move | None:
    """A line :func:`pbem.rules.notation.looks_like_play` takes for a play, passed on as written:
    only the service knows the player's numbering and dice."""
    return Move(line.text) if looks_like_play(line.text) else None


_RESIGN_KINDS = {**dict.fromkeys(("single", "normal", "einfach"), 1), "gammon": 2, "backgammon": 3}


def _offer_resignation(line: Line) -> OfferResignation | CommandError | None:
    arguments = line.arguments
    if len(arguments) > 1:
        return None
    kind = _RESIGN_KINDS.get(first(arguments))
    return OfferResignation(kind) if kind else CommandError(line.text, "resign-kind", first(arguments))


_CUBE_CHOICE = Row("`roll` / `double`", "`würfeln` / `doppeln`", "choose before the roll when you may double")
_CUBE_ANSWER = Row("`take` / `drop` (`pass`) / `beaver`", "`annehmen` / `ablehnen` / `biber`", "answer a double")
_QUIT = Row("`$quit` / `$remis`", "`$aufgeben` / `$remis`",
            "resign (the most the board still allows), or offer a draw: when the opponent answers `$remis` too, the "
            "game ends without points; in a match the game is then played again from the start, in a series or "
            "money session the next game starts")

DECLARATIONS = (
    Declaration(Move, (), (), _move, None, (Row(
        "a move: `24/18 13/9`, `bar/22`, `6/off`, `8/5*`, `13/7(2)`, `24-18`, `-22`, `6-`", "",
        "play the dice rolled for you"),)),
    Declaration(Roll, ("roll",), ("würfeln", "wuerfeln"), alone(Roll()), HelpLine("roll", "würfeln"), (_CUBE_CHOICE,)),
    Declaration(Double, ("double",), ("doppeln",), alone(Double()), HelpLine("double", "doppeln"), (_CUBE_CHOICE,)),
    Declaration(Take, ("take",), (), alone(Take()), HelpLine("take", "annehmen"), (_CUBE_ANSWER,)),
    Declaration(Drop, ("drop",), (), alone(Drop()), HelpLine("drop", "ablehnen"), (_CUBE_ANSWER,), neutral=("pass",)),
    Declaration(Beaver, ("beaver",), ("biber",), alone(Beaver()), HelpLine("beaver", "biber"), (_CUBE_ANSWER,)),
    Declaration(Resign, ("$quit",), ("$aufgeben",), alone(Resign()), HelpLine("$quit", "$aufgeben"), (_QUIT,)),
    Declaration(Remis, ("$remis",), ("$remis",), alone(Remis()), HelpLine("$remis", "$remis"), (_QUIT,)),
    Declaration(
        OfferResignation, ("resign",), ("aufgeben",), _offer_resignation,
        HelpLine("resign single", "aufgeben einfach"),
        (Row("`resign single` / `gammon` / `backgammon`", "`aufgeben einfach` / `gammon` / `backgammon`",
             "offer to resign that result, as on FIBS; the opponent answers `accept` or `reject` (`annehmen` / "
             "`ablehnen`), and any move withdraws the offer; meanwhile the offerer's mails and page say they wait "
             "for that answer (not \"your turn\"); the Assistant accepts when the offer gives it at least what "
             "bgsage expects from playing on"),)),
    Declaration(Rematch, ("rematch",), ("revanche",), alone(Rematch()), HelpLine("rematch", "revanche"),
                (Row("`rematch`", "`revanche`", "the same again after the end"),)),
)
