"""The one registry of e-mail commands: every family's declarations, in the order the docs'
tables list them, found by the words a line begins with.

A family is a module of :mod:`pbem.commands` with a ``DECLARATIONS`` tuple; a command is one
:class:`~pbem.commands.declaration.Declaration` in it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pbem.commands import account, game, invitation, ladder, tournament, watching
from pbem.commands.account import (Autoroll, Automove, Board, Confirm, Copies, Credits, Games, Greedy, Help, Language,
                                   Ratings, SetNumbering, Stop, Vacation)
from pbem.commands.base import CommandError, Note
from pbem.commands.declaration import Declaration, Line
from pbem.commands.game import Beaver, Double, Drop, Move, OfferResignation, Rematch, Remis, Resign, Roll, Take
from pbem.commands.invitation import Accept, Decline, Invite, PlayAssistant
from pbem.commands.ladder import LadderCommand
from pbem.commands.tournament import TournamentAction, TournamentInvite, TournamentNew, TournamentShow
from pbem.commands.watching import Watch, Watchers

Command = (
    Invite | PlayAssistant | Accept | Decline | Move | Roll | Double | Take | Drop | Beaver
    | Resign | OfferResignation | Remis | Rematch | Board | Games | Ratings | Language | SetNumbering | Vacation
    | Stop | Autoroll | Copies | Automove | Greedy | Help | Confirm | Credits | Note | CommandError
    | TournamentNew | TournamentAction | TournamentInvite | TournamentShow
    | LadderCommand
    | Watchers | Watch
)
"""Everything a line of a mail can be: a declared command, a note or an error."""

FAMILIES = (invitation, game, account, ladder, watching, tournament)


class Registry:
    """Declarations by the first word of their phrases; a line's candidates are tried longest
    phrase first, then in the order declared, and the first grammar that takes the line wins."""

    def __init__(self, declarations: Iterable[Declaration[Any]]) -> None:
        self.declarations = tuple(declarations)
        self._by_word: dict[str, list[tuple[tuple[str, ...], Declaration[Any]]]] = {}
        for declaration in self.declarations:
            for phrase in dict.fromkeys(declaration.phrases):
                words = tuple(phrase.split())
                self._by_word.setdefault(words[0], []).append((words, declaration))
        for candidates in self._by_word.values():
            candidates.sort(key=lambda candidate: -len(candidate[0]))
        self._unworded = [declaration for declaration in self.declarations if not declaration.phrases]

    def read(self, text: str, words: tuple[str, ...]) -> Command | None:
        """The command or error of a line that begins with a declared phrase, or None."""
        for phrase, declaration in self._by_word.get(words[0], ()):
            if words[:len(phrase)] == phrase:
                command: Command | None = declaration.grammar(Line(text, words, " ".join(phrase)))
                if command is not None:
                    return command
        return None

    def read_unworded(self, text: str, words: tuple[str, ...]) -> Command | None:
        """The command of a line that no word declares (a move), or None."""
        for declaration in self._unworded:
            command: Command | None = declaration.grammar(Line(text, words, ""))
            if command is not None:
                return command
        return None

    def begins(self, words: list[str], which: Callable[[Declaration[Any]], bool]) -> bool:
        """Whether ``words`` begin with a phrase of a declaration ``which`` selects."""
        return any(tuple(words[:len(phrase)]) == phrase
                   for phrase, declaration in self._by_word.get(words[0] if words else "", ()) if which(declaration))

    def first_words(self, language: str) -> frozenset[str]:
        """The first words of the phrases in ``en`` or ``de``."""
        return frozenset(phrase.split()[0] for declaration in self.declarations
                         for phrase in (declaration.en if language == "en" else declaration.de))


REGISTRY = Registry(declaration for family in FAMILIES for declaration in family.DECLARATIONS)
