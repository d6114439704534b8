"""What a command declares (as Mailman 3's e-mail commands do): its words in English and German,
its grammar, its line in the help mail and its row in the docs' command tables.

The command's value is a frozen dataclass of its family module; its declaration stands beside it
there, and :mod:`pbem.commands.registry` collects the families' declarations in one registry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from pbem.commands.base import CommandError, first

C = TypeVar("C", covariant=True)
T = TypeVar("T")
V = TypeVar("V")


@dataclass(frozen=True)
class Line:
    """One line as a grammar reads it."""

    text: str
    """As written (NFC), for what an error repeats of it."""
    words: tuple[str, ...]
    """The line's words, lower case, a trailing ``.`` or ``!`` removed."""
    phrase: str
    """The declared words the line begins with (``ladder join``)."""

    @property
    def arguments(self) -> list[str]:
        """The words after :attr:`phrase`."""
        return list(self.words[len(self.phrase.split()):])


Grammar = Callable[[Line], "C | CommandError | None"]
"""A line beginning with one of the command's words → the command, an error in writing it, or
None when the line is not meant as this command (then another may read it, or it is a note)."""


@dataclass(frozen=True)
class HelpLine:
    """The command as the help mail writes it, in English and German: each is a line of the help
    mail, or a command set off in it by two spaces (``tests/test_command_registry.py`` checks
    both, and that each reads as the command)."""

    en: str
    de: str


@dataclass(frozen=True)
class Row:
    """A row of a command table in ``docs/players.md`` (Markdown cells); several commands may
    share one (``board``, ``games``, ``help``)."""

    en: str
    de: str
    meaning: str
    table: str = "commands"
    """The table: ``commands``, ``tournaments`` or ``ladders``."""


@dataclass(frozen=True)
class Declaration(Generic[C]):
    """One e-mail command: the one place that says how it is written and where it is explained."""

    command: type[C]
    en: tuple[str, ...]
    """English words (a phrase of one or more words the line begins with)."""
    de: tuple[str, ...]
    """German words."""
    grammar: Grammar[C]
    help: HelpLine | None
    """None: the help mail does not name it (the docs table explains it)."""
    docs: tuple[Row, ...]
    neutral: tuple[str, ...] = ()
    """Words of neither language (``pass``): they tell nothing about the language a mail is
    written in."""
    apart: bool = False
    """About no game being played (an invitation, a tournament, a ladder, watching): whatever
    thread it is written in, its answer is a letter apart."""

    @property
    def phrases(self) -> tuple[str, ...]:
        """Every phrase the command is written with: its words in either language, and a phrase
        of two words mixed from both (``play assistent``, ``turnier join``)."""
        declared = (*self.en, *self.de, *self.neutral)
        firsts = dict.fromkeys(phrase.split(" ", 1)[0] for phrase in declared if " " in phrase)
        rests = dict.fromkeys(phrase.split(" ", 1)[1] for phrase in declared if " " in phrase)
        mixed = (f"{start} {rest}" for start in firsts for rest in rests)
        return (*declared, *(phrase for phrase in mixed if phrase not in declared))


def alone(command: T) -> Grammar[T]:
    """The grammar of a command without arguments: it counts only alone on its line, so that
    "Take care!" stays a note."""
    return lambda line: command if not line.arguments else None


def one_of(words: Mapping[str, V], command: Callable[[V], T], code: str) -> Grammar[T]:
    """The grammar of a command with at most one argument, a word of ``words`` (``lang de``,
    ``copies on``): another word is a :class:`CommandError` of ``code``; two or more words make
    the line a note ("Copies on paper, please")."""
    def grammar(line: Line) -> T | CommandError | None:
        arguments = line.arguments
        if len(arguments) > 1:
            return None
        value = words.get(first(arguments))
        return CommandError(line.text, code, first(arguments)) if value is None else command(value)
    return grammar
