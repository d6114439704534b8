"""Ladders: a standing of players that changes by challenges (``ladder``/``leiter``).

A line beginning with ``ladder`` that reads as none of them stays a note: ``Leiter`` is a German
word too, and so ``ladder NAME`` shows only a name of one word, as the answers write it."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from pbem.addresses import is_plain_address
from pbem.commands.base import MAX_MATCH_LENGTH, CommandError, whole_number
from pbem.commands.declaration import Declaration, HelpLine, Line, Row
from pbem.commands.options import TERM_WORDS

MAX_LADDER_NAME = 30
MAX_LADDER_REACH = 20
MAX_LADDER_DAYS = 30


@dataclass(frozen=True)
class LadderShow:
    """ladder NAME / leiter NAME: the ladder's standing; ``ladder`` alone: the list of ladders."""

    name: str | None = None


@dataclass(frozen=True)
class LadderNew:
    """ladder new NAME [match L] [reach K] [days D]: open a ladder with these terms, and join it."""

    name: str
    match_length: int = 5
    reach: int = 3
    answer_days: int = 7


@dataclass(frozen=True)
class LadderJoin:
    """ladder join NAME / leiter beitreten NAME: join at the bottom (a new name opens the ladder)."""

    name: str


@dataclass(frozen=True)
class LadderChallenge:
    """ladder challenge [NAME] WHOM / leiter fordern [NAME] WEN: WHOM a mail address or a place
    number; without NAME, the one ladder the challenger is on."""

    name: str | None
    opponent: str


@dataclass(frozen=True)
class LadderLeave:
    """ladder leave NAME / leiter verlassen NAME."""

    name: str


LadderCommand = LadderShow | LadderNew | LadderJoin | LadderChallenge | LadderLeave

_LADDER_NAME = re.compile(rf"[a-z0-9][a-z0-9-]{{0,{MAX_LADDER_NAME - 1}}}")
_LADDER_OPTIONS = {
    **dict.fromkeys(("match", "partie"), ("match_length", MAX_MATCH_LENGTH)),
    **dict.fromkeys(("reach", "reichweite"), ("reach", MAX_LADDER_REACH)),
    **dict.fromkeys(("days", "tage"), ("answer_days", MAX_LADDER_DAYS)),
}


def ladder_name(text: str) -> str | None:
    """``text`` as a ladder's name (lower case letters, digits, dashes; the words of a name of
    several words joined by dashes: ``Thursday Club`` is ``thursday-club``), or None when it is
    none; a sub-command word is never a name."""
    name = "-".join(text.lower().split())
    return name if _LADDER_NAME.fullmatch(name) and name not in _SUB_COMMANDS else None


def _show(line: Line) -> LadderShow | None:
    arguments = line.arguments
    if not arguments:
        return LadderShow()
    name = ladder_name(arguments[0])
    return LadderShow(name) if len(arguments) == 1 and name is not None else None


def _named(line: Line, words: list[str]) -> str | CommandError:
    name = ladder_name(" ".join(words))
    return CommandError(line.text, "ladder-name", " ".join(words)) if name is None else name


def _join(line: Line) -> LadderJoin | CommandError:
    name = _named(line, line.arguments)
    return name if isinstance(name, CommandError) else LadderJoin(name)


def _leave(line: Line) -> LadderLeave | CommandError:
    name = _named(line, line.arguments)
    return name if isinstance(name, CommandError) else LadderLeave(name)


def _new(line: Line) -> LadderNew | CommandError:
    """``ladder new NAME`` and its terms, each a word and a whole number."""
    rest = line.arguments
    words = list(itertools.takewhile(lambda word: word not in _LADDER_OPTIONS and word not in TERM_WORDS, rest))
    name = _named(line, words)
    if isinstance(name, CommandError):
        return name
    terms: dict[str, int] = {}
    given = rest[len(words):]
    for position in range(0, len(given), 2):
        option = _LADDER_OPTIONS.get(given[position])
        value = whole_number(given[position + 1], option[1]) if option and position + 1 < len(given) else None
        if option is None or value is None:
            return CommandError(line.text, "ladder-option", " ".join(given[position:position + 2]))
        terms[option[0]] = value
    return LadderNew(name, **terms)


def _challenge(line: Line) -> LadderChallenge | CommandError:
    rest = line.arguments
    if len(rest) == 1:
        return _opponent(line, None, rest[0])
    if len(rest) >= 2 and (name := ladder_name(" ".join(rest[:-1]))) is not None:
        return _opponent(line, name, rest[-1])
    return CommandError(line.text, "ladder-name" if len(rest) >= 2 else "ladder-opponent", " ".join(rest))


def _opponent(line: Line, name: str | None, whom: str) -> LadderChallenge | CommandError:
    opponent = whom.removeprefix("mailto:").strip("<>,;").removeprefix("#")
    if opponent.isdigit() and opponent.isascii() and int(opponent) >= 1:
        return LadderChallenge(name, str(int(opponent)))
    if is_plain_address(opponent) and "." in opponent.rpartition("@")[2]:
        return LadderChallenge(name, opponent.lower())
    return CommandError(line.text, "ladder-opponent", whom)


_SEE_LADDERS = Row("`ladder join NAME`, `ladder challenge NAME PLACE`, `ladder NAME`, …",
                   "`leiter beitreten NAME`, `leiter fordern NAME PLATZ`, `leiter NAME`, …",
                   "ladders: see [Ladders](#ladders)")
"""The ladders' row in the table of all commands."""

DECLARATIONS = (
    Declaration(LadderJoin, ("ladder join",), ("leiter beitreten",), _join,
                HelpLine("ladder join club", "leiter beitreten club"),
                (_SEE_LADDERS, Row("`ladder join NAME`", "`leiter beitreten NAME`",
                                   "join at the bottom; the first to join a new name opens the ladder with the "
                                   "default terms: matches to 5 points, reach 3, 7 days to answer a challenge",
                                   "ladders"),), apart=True),
    Declaration(LadderNew, ("ladder new",), ("leiter neu",), _new, None,
                (Row("`ladder new NAME [match L] [reach K] [days D]`",
                     "`leiter neu NAME [partie L] [reichweite K] [tage D]`",
                     f"open a ladder with other terms (L up to {MAX_MATCH_LENGTH}, K up to {MAX_LADDER_REACH}, D up "
                     f"to {MAX_LADDER_DAYS}), and join it", "ladders"),), apart=True),
    Declaration(LadderChallenge, ("ladder challenge",), ("leiter fordern", "leiter herausfordern"), _challenge,
                HelpLine("ladder challenge club 3", "leiter fordern club 3"),
                (Row("`ladder challenge NAME PLACE`", "`leiter fordern NAME PLATZ`",
                     "challenge the player at that place (`2` or `#2`); instead of the place, their mail address "
                     "works too; without NAME, the one ladder you are on", "ladders"),), apart=True),
    Declaration(LadderShow, ("ladder",), ("leiter",), _show, HelpLine("ladder club", "leiter club"),
                (Row("`ladder NAME`", "`leiter NAME`", "the standing, the terms, and how many challenges are open",
                     "ladders"),
                 Row("`ladder`", "`leiter`", "every ladder, its size and your place", "ladders")), apart=True),
    Declaration(LadderLeave, ("ladder leave",), ("leiter verlassen",), _leave,
                HelpLine("ladder leave club", "leiter verlassen club"),
                (Row("`ladder leave NAME`", "`leiter verlassen NAME`", "leave; everyone below moves up one",
                     "ladders"),), apart=True),
)

_SUB_COMMANDS = frozenset(phrase.split()[1] for declaration in DECLARATIONS for phrase in declaration.phrases
                          if " " in phrase)
"""``new``, ``join``, ``beitreten``…: never a ladder's name."""
