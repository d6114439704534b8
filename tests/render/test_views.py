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


def test_the_moves_so_far_are_two_turns_to_a_numbered_line_as_gnubg_lists_them():
    from pbem.render.views import MoveLine, move_rows

    record = (MoveLine(1, "roll", (4, 2)), MoveLine(1, "move", play="8/4 6/4"),  # Ben opened: left cell empty
              MoveLine(0, "roll", (6, 5)), MoveLine(0, "move", play="24/13"),
              MoveLine(1, "double", cube=2), MoveLine(0, "take"),
              MoveLine(1, "roll", (3, 3)), MoveLine(1, "move", play=""),
              MoveLine(0, "roll", (2, 1)), MoveLine(0, "move", play="13/11 6/5"), MoveLine(1, "resign"))
    rows = move_rows(record)
    assert [row.number for row in rows] == [1, 2, 3, 4]
    assert [[[line.kind for line in cell] for cell in row.cells] for row in rows] == [
        [[], ["roll", "move"]],
        [["roll", "move"], ["double"]],
        [["take"], ["roll", "move"]],
        [["roll", "move"], ["resign"]],
    ]
