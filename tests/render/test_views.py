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


@pytest.mark.parametrize("language", ["en", "de"])
def test_every_performance_band_has_its_name_in_both_languages(language):
    from pbem.assistant.performance import BANDS, WORST_BAND

    lines = environment().get_template(f"{language}/lines.txt").make_module({"language": language})
    names = [str(lines.pr_band(key)) for key in [key for _, key in BANDS] + [WORST_BAND]]
    assert all(names) and len(set(names)) == len(names) == 7


def test_a_review_view_rates_each_player_and_marks_exactly_the_decisions_it_lists():
    from pbem.render.views import ReviewView

    def mistake(number: int) -> dict:
        return {"number": number, "kind": "cube", "loss": 100, "played": "take", "best": "drop"}

    stored = {"players": [{"decisions": 20, "error_rate": 9, "lost": 180, "luck": 300},
                          {"decisions": 0, "error_rate": 0, "lost": 0, "luck": -300}],
              "mistakes": [[mistake(7), mistake(2), mistake(12)], []],
              "chances": [[1, 500], [2, 620], [3, 700], [7, 250]]}
    view = ReviewView.of(stored)
    assert (view.players[0].rating, view.players[0].band) == (4.5, "expert")
    assert (view.players[1].rating, view.players[1].band) == (None, None), "nothing decided, no rating"
    mine = view.winning_chances(0)
    assert mine is not None and mine.points == ((1, 50.0), (2, 62.0), (3, 70.0), (7, 25.0))
    assert [(mark.seat, mark.rank, mark.number, mark.chance) for mark in mine.marks] == [
        (0, 1, 7, 25.0), (0, 2, 2, 62.0), (0, 3, 12, None)]
    theirs = view.winning_chances(1)
    assert theirs is not None and theirs.points[1] == (2, 38.0) and theirs.marks[0].chance == 75.0
    assert ReviewView.of({**stored, "chances": []}).winning_chances(0) is None, "a review stored before the chart"
    del stored["chances"]
    assert ReviewView.of(stored).winning_chances(1) is None
