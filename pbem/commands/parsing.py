"""A mail's new text → its commands, moves, notes and errors, in order (the rules: the package
docstring); and what a single line is."""

from __future__ import annotations

import unicodedata

from pbem.commands.base import MAX_COMMAND_CHARS, CommandError, Note
from pbem.commands.options import OPTION_KEYWORDS
from pbem.commands.registry import REGISTRY, Command
from pbem.commands.invitation import Invite, PlayAssistant

_GERMAN_WORDS = frozenset((
    "und", "ich", "nicht", "der", "die", "das", "ist", "bitte", "danke", "hallo", "mit", "für",
    "fuer", "ein", "eine", "du", "sie", "wir", "mein", "dein", "gut", "spiel", "zug", "gruß",
    "grüße", "viele", "liebe", "lieber", "schöne", "auch", "noch", "heute", "morgen", "aber",
))
_ENGLISH_WORDS = frozenset((
    "and", "i", "not", "the", "is", "please", "thanks", "thank", "hello", "hi", "with", "for", "a",
    "an", "you", "we", "my", "your", "good", "game", "move", "regards", "best", "dear", "nice",
    "also", "still", "today", "tomorrow", "but",
))


def _keywords(language: str) -> frozenset[str]:
    return REGISTRY.first_words(language) | frozenset(OPTION_KEYWORDS[language])


_GERMAN_KEYWORDS = _keywords("de")
_ENGLISH_KEYWORDS = _keywords("en")


def written_in(new_text: str, subject: str = "") -> str | None:
    """The language a mail is written in, ``de`` or ``en``, as far as its words tell; None when
    they do not.  The command keywords decide (``hilfe`` is German, ``help`` English); failing
    those, the common words of the text (a note, a greeting) do."""
    lines = [line.strip().lower().rstrip(".!") for line in (new_text or subject).splitlines()]
    keywords = [line.split()[0] for line in lines if line.split()]
    german = sum(word in _GERMAN_KEYWORDS for word in keywords)
    english = sum(word in _ENGLISH_KEYWORDS for word in keywords)
    if german == english:
        words = [word.strip(".,;:!?()\"'") for line in lines for word in line.split()]
        german = sum(word in _GERMAN_WORDS for word in words)
        english = sum(word in _ENGLISH_WORDS for word in words)
    if german == english:
        return None
    return "de" if german > english else "en"


def parse_commands(new_text: str, subject: str = "") -> list[Command]:
    """The commands, moves, notes and errors of a mail, in the order written.

    ``subject`` (already without ``Re:``-style prefixes) is read only when ``new_text`` is empty.
    """
    if not new_text.strip():
        from_subject = _read_line(subject.strip()) if subject.strip() else None
        return [from_subject] if from_subject and not isinstance(from_subject, Note) else []
    commands: list[Command] = []
    blank_before = False
    for raw_line in new_text.splitlines():
        line = raw_line.strip()
        if not line:
            blank_before = True
            continue
        command = _read_line(line)
        if isinstance(command, Note) and commands and isinstance(previous := commands[-1], Note):
            separator = "\n\n" if blank_before else "\n"
            commands.pop()
            command = Note(previous.text + separator + command.text)
        commands.append(command)
        blank_before = False
    return commands


def is_command_line(line: str) -> bool:
    """True when ``line`` alone is a command, a move or an error: anything but a note."""
    return not isinstance(_read_line(line), Note)


def is_invitation(line: str) -> bool:
    """True when ``line`` invites somebody (a player or the Assistant): what it says, right or
    wrong, concerns a new game, not the one whose thread it may be written in."""
    words = unicodedata.normalize("NFC", line).lower().split()
    return REGISTRY.begins(words, lambda declaration: declaration.command in (Invite, PlayAssistant))


def about_no_game(line: str) -> bool:
    """True when ``line`` is a command about no game being played: an invitation, a tournament,
    a ladder or watching (its refusal needs no guide to writing moves)."""
    words = unicodedata.normalize("NFC", line).lower().split()
    return REGISTRY.begins(words, lambda declaration: declaration.apart)


def _read_line(line: str) -> Command:
    """One non-blank line: a command, an error, a move or a note."""
    line = unicodedata.normalize("NFC", line)
    if len(line) > MAX_COMMAND_CHARS:
        return Note(line)
    words = tuple(line.lower().rstrip(".!").split())
    if not words:
        return Note(line)
    command = REGISTRY.read(line, words)
    if command is not None:
        return command
    if len(words) == 1 and words[0].startswith("$"):
        return CommandError(line, "unknown-command", words[0])
    return REGISTRY.read_unworded(line, words) or Note(line)
