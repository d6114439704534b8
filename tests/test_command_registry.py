"""The registry of e-mail commands (pbem/commands/): each command declared once, and the help
mail, the docs' command tables and the mail room's handlers kept in step with it."""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest

from pbem import commands
from pbem.commands import parsing, reference
from pbem.commands.declaration import Declaration, HelpLine, Row, alone
from pbem.commands.registry import REGISTRY, Registry
from pbem.render.templating import environment

DOCS = Path(__file__).resolve().parent.parent / "docs" / "players.md"


def help_text(language: str) -> str:
    """What the help mail and its short form say (outside a game, the player's own numbering)."""
    context = {"language": language, "numbering": "own", "colour": "white", "service": None, "games_link": None}
    module: typing.Any = environment().get_template(f"{language}/notices.txt").make_module(context)
    return f"{module.help(['white'])}\n{module.help_short(['white'])}"


def help_problems(registry: Registry, texts: dict[str, str]) -> list[str]:
    """Each declared help line must stand in the help mail as a command (a row, or set off by
    spaces), begin with the command's own words and read as the command."""
    problems = []
    for declaration in registry.declarations:
        if declaration.help is None:
            continue
        for language in ("en", "de"):
            example = getattr(declaration.help, language)
            name = f"{declaration.command.__name__} ({language}: {example!r})"
            if not re.search(rf"(?:^|(?<=[\s(])){re.escape(example)}(?=$|[\s.,;:)])", texts[language], re.M):
                problems.append(f"{name}: not in the help mail")
            own = getattr(declaration, language)
            if own and not example.lower().startswith(own):
                problems.append(f"{name}: not written with its words {own}")
            words = tuple(example.lower().split())
            if (own or not declaration.phrases) and example == example.lower():  # no placeholder like CODE
                read = registry.read(example, words) or registry.read_unworded(example, words)
                if type(read) is not declaration.command:
                    problems.append(f"{name}: does not read as the command")
    return problems


def docs_problems(registry: Registry) -> list[str]:
    """Each command has a row in a docs table, its columns written with its words."""
    problems = []
    for declaration in registry.declarations:
        name = declaration.command.__name__
        if not declaration.docs:
            problems.append(f"{name}: no row in the docs")
        for row in declaration.docs:
            if row.table not in reference.TABLES:
                problems.append(f"{name}: no table {row.table!r}")
            for language in ("en", "de"):
                own = getattr(declaration, language)
                if own and not any(f"`{phrase}" in getattr(row, language) for phrase in own):
                    problems.append(f"{name}: its {language} column does not name {own}")
    return problems


def test_every_command_with_a_help_line_is_in_the_help_mail_as_declared():
    assert help_problems(REGISTRY, {language: help_text(language) for language in ("en", "de")}) == []


def test_every_command_has_a_docs_row_written_with_its_words():
    assert docs_problems(REGISTRY) == []


def test_the_docs_tables_are_the_registrys():
    """``python -m pbem.commands.reference docs/players.md`` writes them; this fails while it has not."""
    text = DOCS.read_text(encoding="utf-8")
    assert reference.in_step(text) == text
    for table in reference.TABLES:
        assert text.count(f"<!-- command table: {table} ") == 1


def test_a_phrase_belongs_to_one_command():
    owners: dict[str, str] = {}
    for declaration in REGISTRY.declarations:
        for phrase in declaration.phrases:
            assert owners.setdefault(phrase, declaration.command.__name__) == declaration.command.__name__, phrase


def test_every_command_is_declared_once_and_handled_once():
    from pbem.service.mailroom.handlers import HANDLERS

    declared = [declaration.command for declaration in REGISTRY.declarations]
    assert len(declared) == len(set(declared))
    every = set(typing.get_args(commands.Command))
    assert set(declared) == every - {commands.Note, commands.CommandError}
    assert set(HANDLERS) == every


@dataclass(frozen=True)
class Knock:
    pass


KNOCK = Declaration(Knock, ("knock",), ("anklopfen",), alone(Knock()), HelpLine("knock", "anklopfen"),
                    (Row("`knock`", "`anklopfen`", "the service answers"),))


def test_a_declaration_is_all_the_registry_and_the_docs_need(monkeypatch):
    """A new command, declared: it is read in both languages, tells the mail's language, and
    has its docs row; the help check names it until the help mail writes it."""
    registry = Registry((*REGISTRY.declarations, KNOCK))
    monkeypatch.setattr(parsing, "REGISTRY", registry)
    assert parsing.parse_commands("Knock!\nanklopfen") == [Knock(), Knock()]
    assert parsing.parse_commands("knock me") == [commands.Note("knock me")]
    assert "| `knock` | `anklopfen` | the service answers |" in reference.markdown("commands", registry)
    text = DOCS.read_text(encoding="utf-8")
    assert "`anklopfen`" in reference.in_step(text, registry) and reference.in_step(text, registry) != text
    assert docs_problems(registry) == []
    texts = {language: help_text(language) for language in ("en", "de")}
    assert help_problems(registry, texts) == ["Knock (en: 'knock'): not in the help mail",
                                              "Knock (de: 'anklopfen'): not in the help mail"]
    texts = {"en": texts["en"] + "\n  knock   the service answers", "de": texts["de"] + "\n  anklopfen   Antwort"}
    assert help_problems(registry, texts) == []


@pytest.mark.parametrize("broken, problem", [
    (HelpLine("rap", "anklopfen"), "Knock (en: 'rap'): not written with its words ('knock',)"),
    (HelpLine("knock x", "anklopfen"), "Knock (en: 'knock x'): does not read as the command"),
])
def test_the_help_check_finds_a_command_worded_differently(broken, problem):
    declaration = Declaration(Knock, ("knock",), ("anklopfen",), alone(Knock()), broken, KNOCK.docs)
    texts = {"en": "  rap\n  knock x\n", "de": "  anklopfen\n"}
    assert problem in help_problems(Registry((*REGISTRY.declarations, declaration)), texts)
