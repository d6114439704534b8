"""Invitations: a game with another player or the Assistant, and the answer to one."""

from __future__ import annotations

from dataclasses import dataclass, field

from pbem.assistant.levels import level_of
from pbem.commands.base import CommandError, first, mail_address
from pbem.commands.declaration import Declaration, HelpLine, Line, Row, alone
from pbem.commands.options import GameOptions, game_options


@dataclass(frozen=True)
class Invite:
    address: str
    options: GameOptions = field(default_factory=GameOptions)


@dataclass(frozen=True)
class PlayAssistant:
    """``play assistant [LEVEL] [options]``."""

    options: GameOptions = field(default_factory=GameOptions)
    level: str | None = None
    """The level's key (``beginner`` … ``world_class``); None: the service chooses."""


@dataclass(frozen=True)
class Accept:
    """accept/annehmen: an invitation, or a pending double (the service decides by context)."""


@dataclass(frozen=True)
class Decline:
    """decline/ablehnen: an invitation, or drop a pending double (the service decides)."""


def _invite(line: Line) -> Invite | CommandError:
    arguments = line.arguments
    address = first(arguments).removeprefix("mailto:").strip("<>,;")
    if not mail_address(address):
        return CommandError(line.text, "invite-address", first(arguments))
    rest = arguments[1:]
    if rest and rest[0].strip("<>[]()").removeprefix("mailto:") == address:
        rest = rest[1:]  # Outlook's plain text repeats a linked address as <mailto:…>
    options = game_options(line.text, rest)
    return options if isinstance(options, CommandError) else Invite(address, options)


def _play_assistant(line: Line) -> PlayAssistant | CommandError:
    """``play assistant [LEVEL] [options]``, the level also after the options (``match 3 expert``,
    as players write it): a first word that is neither a level nor an option is taken for a
    level the Assistant does not have."""
    arguments = line.arguments
    named = next(((start, found) for start in range(len(arguments))
                  if (found := level_of(arguments[start:])) is not None), None)
    rest = arguments if named is None else arguments[:named[0]] + arguments[named[0] + named[1][1]:]
    options = game_options(line.text, rest)
    if isinstance(options, CommandError):
        if not named and options.code == "unknown-option" and options.details == arguments[0]:
            return CommandError(line.text, "assistant-level", arguments[0])
        return options
    return PlayAssistant(options, named[1][0] if named else None)


_ANSWER = Row("`accept` / `decline`", "`annehmen` / `ablehnen`",
              "answer an invitation (or, while a double is pending, take or drop it)")

DECLARATIONS = (
    Declaration(
        Invite, ("invite",), ("einladen",), _invite,
        HelpLine("invite anna@example.org", "einladen anna@example.org"),
        (Row("`invite ADDRESS [format] [options]`", "`einladen`",
             "formats `single`, `match N`, `money`, `games N`, and the prize formats for credits `prize games 3 "
             "stake S`, `prize match 5 stake S`, `prize single rate R limit L` (`preis spiele 3 einsatz S`, `preis "
             "partie 5 einsatz S`, `preis einzel satz R limit L`; see [Prize games and credits]"
             "(#prize-games-and-credits)); options `clock 3d/14d`, `beaver`, `jacoby`, `stake N`, `unrated`, "
             "`settle` (`abrechnen`; money and single games), `lang de`/`lang en`"),),
        apart=True),
    Declaration(
        PlayAssistant, ("play assistant",), ("gegen assistent",), _play_assistant,
        HelpLine("play assistant match 5", "gegen assistent match 5"),
        (Row("`play assistant [level] [format] [options]`", "`gegen assistent [stufe]`",
             "a game or match against the Assistant, starting at once (in a new mail: once you confirm), at a "
             "level from `beginner` to `world class` (see below)"),),
        apart=True),
    Declaration(Accept, ("accept",), ("annehmen",), alone(Accept()), HelpLine("accept", "annehmen"), (_ANSWER,)),
    Declaration(Decline, ("decline", "reject"), ("ablehnen",), alone(Decline()), HelpLine("decline", "ablehnen"),
                (_ANSWER,)),
)
