"""Every notice and event the service names in its code has a macro in both languages, so that a
missing template fails here rather than in a player's mail (the names are read from the code)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pbem.render.templating import environment

SERVICE = Path(__file__).resolve().parents[2] / "pbem" / "service"


def _names(method: str, position: int) -> set[str]:
    """The string constants passed as argument ``position`` to ``<anything>.method(...)``."""
    found = set()
    for path in SERVICE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
                    and len(node.args) > position and isinstance(node.args[position], ast.Constant)
                    and isinstance(node.args[position].value, str)):
                found.add(node.args[position].value)
    return found


NOTICES = _names("say_template", 0) | _names("notice", 0)
EVENTS = _names("event", 1)


def _macros(language: str, template: str) -> set[str]:
    module = environment().get_template(f"{language}/{template}").make_module(
        {"language": language, "numbering": "own", "colour": "white", "service": None, "me": 0, "names": ["a", "b"]})
    return {name for name in dir(module) if not name.startswith("_")}


def test_the_code_names_notices_and_events_at_all():
    assert {"too_large", "confirm_account", "not_confirmed", "two_games_named"} <= NOTICES
    assert len(EVENTS) > 10


@pytest.mark.parametrize("language", ["en", "de"])
def test_every_notice_and_event_named_in_the_code_has_a_macro(language):
    assert NOTICES - _macros(language, "notices.txt") == set()
    assert EVENTS - _macros(language, "events.txt") == set()
