"""The names the service uses for notices and events are enums, tested here against the
templates of both languages: a missing text fails this test, never a player's mail."""

from __future__ import annotations

import pytest

from pbem.render.templating import environment
from pbem.render.views import EventKind, GameView, Notice


def _macros(language: str, template: str) -> set[str]:
    module = environment().get_template(f"{language}/{template}").make_module(
        {"language": language, "numbering": "own", "colour": "white", "service": None, "me": 0, "names": ["a", "b"]})
    return {name for name in dir(module) if not name.startswith("_")}


@pytest.mark.parametrize("language", ["en", "de"])
def test_every_notice_and_event_has_its_text_in_both_languages(language):
    assert {notice.value for notice in Notice} - _macros(language, "notices.txt") == set()
    assert {kind.value for kind in EventKind} - _macros(language, "events.txt") == set()


def test_the_game_view_gives_the_templates_every_field_by_name():
    fields = set(GameView.__dataclass_fields__)
    assert {"board", "board_view", "ids", "dice", "cube", "next", "clock", "score", "rules"} <= fields
