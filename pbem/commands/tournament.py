"""Knockout tournaments (``tournament``/``turnier``): open one, join, leave, start, withdraw,
invite, and show its bracket; any other line beginning with the word is an error that shows the
forms."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from pbem.commands.base import CLOCK_WORDS, KNOCKOUT_WORDS, MAX_MATCH_LENGTH, CommandError, clocks, mail_address, \
    whole_number
from pbem.commands.declaration import Declaration, HelpLine, Line, Row

MAX_TOURNAMENT_INVITES = 10
"""Addresses one ``tournament invite`` line may name."""
MAX_TOURNAMENT_NAME = 30
"""Characters of a tournament's name, spaces between its words included."""
TOURNAMENT_CODE = re.compile(r"[a-z2-7]{6}")
"""A tournament's code: six letters and digits of base32 (``pbem.service.competitions.tournaments``)."""


@dataclass(frozen=True)
class TournamentNew:
    """``tournament new NAME knockout N match L [clock 3d/14d] [unrated]``."""

    name: str
    size: int
    length: int
    move_clock: timedelta | None = None
    time_bank: timedelta | None = None
    rated: bool = True


@dataclass(frozen=True)
class TournamentAction:
    """``tournament join|leave|start|withdraw CODE``: what changes a player's place in it."""

    action: str
    """``join``, ``leave``, ``start`` or ``withdraw``."""
    code: str


@dataclass(frozen=True)
class TournamentInvite:
    """``tournament invite CODE ADDRESS…``: the organiser invites people to join."""

    code: str
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class TournamentShow:
    """``tournament CODE``: the bracket (or the entries) as text."""

    code: str


_TOURNAMENT_SIZES = (4, 8, 16, 32, 64)
_TOURNAMENT_NAME_WORD = re.compile(r"[\w-]+")
"""A word of a tournament's name: letters, digits, ``-`` and ``_`` (no ``@``, no markup; the
name is shown to everyone in it)."""
_TOURNAMENT_TERMS = frozenset((*KNOCKOUT_WORDS, "match", "partie", *CLOCK_WORDS, "unrated", "ungewertet"))
"""The words that end a tournament's name: its terms begin there."""
_ACTIONS = {
    **dict.fromkeys(("join", "teilnehmen"), "join"), **dict.fromkeys(("leave", "verlassen"), "leave"),
    **dict.fromkeys(("start", "starten"), "start"),
    **dict.fromkeys(("withdraw", "zurückziehen", "zurueckziehen"), "withdraw"),
}


def _action(line: Line) -> TournamentAction | None:
    arguments = line.arguments
    if len(arguments) == 1 and TOURNAMENT_CODE.fullmatch(arguments[0]):
        return TournamentAction(_ACTIONS[line.phrase.split()[1]], arguments[0])
    return None


def _invite(line: Line) -> TournamentInvite | CommandError | None:
    arguments = line.arguments
    if len(arguments) < 2 or not TOURNAMENT_CODE.fullmatch(arguments[0]):
        return None
    addresses = tuple(dict.fromkeys(word.removeprefix("mailto:").strip("<>,;") for word in arguments[1:]))
    for address in addresses:
        if not mail_address(address):
            return CommandError(line.text, "tournament-address", address)
    if len(addresses) > MAX_TOURNAMENT_INVITES:
        return CommandError(line.text, "tournament-invites", str(MAX_TOURNAMENT_INVITES))
    return TournamentInvite(arguments[0], addresses)


def _show(line: Line) -> TournamentShow | CommandError | None:
    """``tournament CODE``; after the other forms, any other line with arguments is an error."""
    arguments = line.arguments
    if not arguments:
        return None
    if len(arguments) == 1 and TOURNAMENT_CODE.fullmatch(arguments[0]):
        return TournamentShow(arguments[0])
    return CommandError(line.text, "tournament", " ".join(line.text.split()[1:])[:40])


def _new(line: Line) -> TournamentNew | CommandError:
    """``NAME knockout N match L [clock 3d/14d] [unrated]``: the name is every word before the
    first term (``Autumn Cup``), the terms follow in any order.  A name may hold a term's word
    (``Cup of the Match Club``): the name then ends at the first term after which the terms read
    whole; when none does, the refusal is the one of the first term."""
    arguments = line.arguments
    original = line.text.rstrip(".!").split()[2:]
    starts = [position for position, word in enumerate(arguments) if word in _TOURNAMENT_TERMS] or [len(arguments)]
    tried = [_named(line.text, original[:position], arguments[position:]) for position in starts]
    return next((command for command in tried if isinstance(command, TournamentNew)), tried[0])


def _named(line: str, name_words: list[str], words: list[str]) -> TournamentNew | CommandError:
    """The new tournament of this name and these terms, or what is wrong with them."""
    name = " ".join(name_words)
    if not name_words or not all(_TOURNAMENT_NAME_WORD.fullmatch(word) for word in name_words) \
            or len(name) > MAX_TOURNAMENT_NAME:
        return CommandError(line, "tournament-name", name)
    settings: dict[str, object] = {"name": name}
    position = 0
    while position < len(words):
        word, value = words[position], words[position + 1] if position + 1 < len(words) else ""
        position += 2
        if word in KNOCKOUT_WORDS:
            if not value.isdigit() or int(value) not in _TOURNAMENT_SIZES:
                return CommandError(line, "tournament-size", value)
            settings["size"] = int(value)
        elif word in ("match", "partie"):
            if not (length := whole_number(value, MAX_MATCH_LENGTH)):
                return CommandError(line, "tournament-match-length", value)
            settings["length"] = length
        elif word in CLOCK_WORDS:
            read = clocks(value)
            if read is None:
                return CommandError(line, "clock", value)
            settings["move_clock"], settings["time_bank"] = read
        elif word in ("unrated", "ungewertet"):
            settings["rated"] = False
            position -= 1
        else:
            return CommandError(line, "tournament-option", word)
    if "size" not in settings or "length" not in settings:
        return CommandError(line, "tournament-terms", "match" if "size" in settings else "knockout")
    return TournamentNew(**settings)  # type: ignore[arg-type]  # the keys are TournamentNew fields, set above


def _row(en: str, de: str, meaning: str) -> Row:
    return Row(en, de, meaning, "tournaments")


DECLARATIONS = (
    Declaration(
        TournamentNew, ("tournament new",), ("turnier neu",), _new,
        HelpLine("tournament new Autumn Cup ko 8 match 3", "turnier neu Herbst Pokal ko 8 partie 3"),
        (_row("`tournament new NAME knockout N match L [clock 3d/14d] [unrated]`",
              "`turnier neu NAME ko N partie L [uhr 3d/14d] [ungewertet]`",
              "opens a knockout for N players (4, 8, 16, 32 or 64), matches to L points; you are entered yourself. "
              "NAME is one or several words (`tournament new Autumn Cup knockout 8 match 3`) of letters, digits, "
              f"`-` and `_`, at most {MAX_TOURNAMENT_NAME} characters; it ends where the terms begin (a name may "
              "hold a term's word, as `Match Play Open`: it ends at the first term after which the terms read "
              "whole). The answer, titled with the tournament's code, gives the code (six letters and digits) and "
              "the line others write to join"),),
        apart=True),
    Declaration(
        TournamentAction, tuple(f"tournament {word}" for word, action in _ACTIONS.items() if word == action),
        tuple(f"turnier {word}" for word, action in _ACTIONS.items() if word != action), _action,
        HelpLine("tournament join CODE", "turnier teilnehmen CODE"),
        (_row("`tournament join CODE`", "`turnier teilnehmen CODE`", "join (while it takes entries)"),
         _row("`tournament leave CODE`", "`turnier verlassen CODE`",
              "leave before it starts (the organiser too, to organise only)"),
         _row("`tournament start CODE`", "`turnier starten CODE`",
              "the organiser starts it with the players entered (at least 4); byes fill the rest"),
         _row("`tournament withdraw CODE`", "`turnier zurückziehen CODE`",
              "give up: the match you are playing is lost, and each one still to come")),
        apart=True),
    Declaration(
        TournamentInvite, ("tournament invite",), ("turnier einladen",), _invite, None,
        (_row("`tournament invite CODE ADDRESS …`", "`turnier einladen CODE ADRESSE …`",
              f"the organiser invites people (at most {MAX_TOURNAMENT_INVITES} a line): each gets a mail; answering "
              "it with `yes` (or sending the mail its mailto link opens) joins. The rules of a game invitation hold "
              "(a person's address, never one that wrote `stop`, at most 3 invitations an address gets a day and "
              "10 a player sends, game and tournament invitations together; a tournament's own matches and "
              "players' joins are no invitations)"),),
        apart=True),
    Declaration(
        TournamentShow, ("tournament",), ("turnier",), _show, HelpLine("tournament CODE", "turnier CODE"),
        (_row("`tournament CODE`", "`turnier CODE`", "the bracket as text, or who has entered so far"),),
        apart=True),
)
