"""The Jinja2 environment: languages, escaping, strictness, filters and every error reason."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import ModuleType

import jinja2
import pytest

from pbem.render import templating
from pbem.render.templating import (
    LANGUAGES,
    environment,
    explain,
    format_duration,
    reason_name,
    reason_names,
)
from pbem.rules.moves import IllegalPlay, check_play
from pbem.rules.notation import Colour, Numbering, NotationError, parse_play
from pbem.rules.position import Position

ERROR_MODULES = ("pbem.rules.notation", "pbem.rules.moves", "pbem.rules.game", "pbem.commands")
"""Modules whose docstrings list the error codes players can be told about."""

SAMPLE_DETAILS: dict[str, dict[str, object] | str] = {
    # pbem.rules.notation
    "empty": {},
    "unreadable": {"text": "24x18"},
    "bad_point": {"point": "27"},
    "bad_repeat": {"text": "13/7(5)"},
    "misplaced_bar": {"text": "22/bar"},
    "misplaced_off": {"text": "off/6"},
    "unpaired": {"point": "24"},
    # pbem.rules.moves (wrong_direction and too_many_steps: both shapes, see below)
    "no_move_possible": {"dice": "6-6"},
    "no_such_point": {"from": 30, "to": 24},
    "bar_first": {"from": 13, "to": 8},
    "no_checker": {"from": 7, "to": 2, "point": 7},
    "blocked": {"from": 13, "to": 7, "point": 7},
    "bearing_off_not_allowed": {"from": 6, "to": 0},
    "wrong_die": {"from": 13, "to": 10, "dice": "6-5", "distance": 3},
    "dice_not_fully_used": {"used": 1, "possible": 2},
    "larger_die_required": {"die": 6, "smaller": 5},
    "beyond_dice": {"dice": "3-1"},
    # pbem.rules.game
    "game_over": {},
    "not_your_turn": {"to_act": 1},
    "already_rolled": {},
    "roll_first": {},
    "double_pending": {},
    "no_double_pending": {},
    "cube_not_yours": {},
    "crawford_game": {},
    "cube_at_cap": {"cap": 64},
    "dead_cube": {"cube": 2},
    "beaver_not_allowed": {},
    "invalid_dice": {"dice": (7, 1)},
    "draw_already_offered": {},
    "no_draw_offered": {},
    "no_resignation_offered": {},
    "nothing_to_answer": {},
    # pbem.commands: details are the argument as written
    "invite-address": "anna(at)example.org",
    "unknown-option": "blitz",
    "assistant-level": "hard",
    "format-conflict": "money",
    "match-length": "99",
    "games-count": "0",
    "clock": "3w",
    "stake": "-5",
    "money-only": "beaver",
    "settle-format": "settle",
    "prize": "money",
    "prize-amount": "stake 2.555",
    "prize-only": "rate",
    "prize-repeated": "stake",
    "language": "fr",
    "numbering": "odd",
    "switch": "maybe",
    "watch-code": "abc",
    "resign-kind": "double",
    "vacation-days": "forever",
    "unknown-command": "$undo",
    "tournament": "jion abc234",
    "tournament-name": "a@b",
    "tournament-size": "5",
    "tournament-match-length": "40",
    "tournament-option": "beaver",
    "tournament-terms": "knockout",
    "watchers-switch": "maybe",
    "tournament-invites": "10",
    "tournament-address": "anna",
    "ladder-name": "new",
    "ladder-option": "match 99",
    "ladder-opponent": "xyz",
}
SHARED_CODES = {
    "wrong_direction": (
        {"text": "8/13", "numbering": "own", "colour": "white", "toward": 1},
        {"from": 8, "to": 13},
    ),
    "too_many_steps": ({"count": 5}, {"steps": 3, "dice": "6-5"}),
}
SAMPLES = [(code, details) for code, details in SAMPLE_DETAILS.items()] + [
    (code, details) for code, shapes in SHARED_CODES.items() for details in shapes
]


def documented_codes(module: ModuleType) -> set[str]:
    """Codes a module's docstring lists: lines that start with a ````code```` entry."""
    return set(re.findall(r"^``([a-z][a-z_-]*)``", module.__doc__ or "", re.MULTILINE))


def raised_codes(module: ModuleType) -> set[str]:
    """Codes the module's source passes to its error classes as a literal."""
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    error = r"(?:IllegalPlay|RuleError|NotationError|CommandError)\((?:line, )?"
    return set(re.findall(error + r'"([a-z][a-z_-]*)"', source))


ALL_CODES = set().union(*(
    documented_codes(module) | raised_codes(module)
    for module in map(importlib.import_module, ERROR_MODULES)
))


def test_the_error_modules_document_their_codes() -> None:
    for name in ERROR_MODULES:
        module = importlib.import_module(name)
        assert len(documented_codes(module)) >= 8, name
        assert raised_codes(module) <= documented_codes(module), name


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_code_has_a_reason_in_every_language(language: str) -> None:
    assert {reason_name(code) for code in ALL_CODES} == reason_names(language)
    assert ALL_CODES == set(SAMPLE_DETAILS) | set(SHARED_CODES)


@pytest.mark.parametrize("code, details", SAMPLES, ids=[code for code, _ in SAMPLES])
def test_every_reason_is_worded_in_both_languages(
    code: str, details: dict[str, object] | str
) -> None:
    english = explain(code, details, "en", Numbering.FIXED, Colour.BLACK)
    german = explain(code, details, "de", Numbering.FIXED, Colour.BLACK)
    generic = {explain("no such code", {}, language, Numbering.OWN, Colour.WHITE)
               for language in LANGUAGES}
    assert english and german and english != german
    assert not {english, german} & generic
    assert "\n" not in english + german
    assert english.endswith(".") and german.endswith(".")


def test_points_are_shown_in_the_players_numbering() -> None:
    details = {"from": 13, "to": 7, "point": 7}
    assert explain("blocked", details, "en", Numbering.OWN, Colour.BLACK).startswith(
        "13/7: point 7 is blocked"
    )
    assert explain("blocked", details, "en", Numbering.FIXED, Colour.BLACK).startswith(
        "12/18: point 18 is blocked"
    )
    assert "bar/3" in explain("misplaced_bar", {"text": "x"}, "en", Numbering.FIXED, Colour.BLACK)
    assert "auf der Bar" in explain("no_checker", {"from": 25, "to": 20, "point": 25}, "de",
                                    Numbering.OWN, Colour.WHITE)


def test_real_errors_are_explained() -> None:
    with pytest.raises(NotationError) as notation_error:
        parse_play("-3 6-3", Numbering.FIXED, Colour.BLACK)
    worded = explain(notation_error.value.code, notation_error.value.details, "de",
                     Numbering.FIXED, Colour.BLACK)
    assert worded == "„6-3“ geht in die falsche Richtung: Ihre Steine ziehen zum Punkt 24 hin."
    with pytest.raises(IllegalPlay) as illegal:
        check_play(Position.start(), (6, 5), ((24, 19), (13, 7)))
    assert illegal.value.code == "blocked"
    assert explain(illegal.value.code, illegal.value.details, "en", Numbering.FIXED,
                   Colour.BLACK).startswith("1/6: point 6 is blocked")


@pytest.mark.parametrize("language, sentence", [
    ("en", "Sorry, that could not be done (reason: made_up)."),
    ("de", "Das ging leider nicht (Grund: made_up)."),
])
def test_an_unknown_code_gets_a_generic_sentence_in_the_language(language: str,
                                                               sentence: str) -> None:
    assert explain("made_up", {}, language, Numbering.OWN, Colour.WHITE) == sentence
    assert "reason_made_up" not in reason_names(language)


def test_command_errors_show_the_argument_as_written() -> None:
    assert explain("language", "fr", "de", Numbering.OWN, Colour.WHITE).startswith(
        "„fr“ ist hier keine Sprache; schreiben Sie sprache de"
    )
    assert explain("match-length", "", "en", Numbering.OWN, Colour.WHITE) == (
        "A match needs a length from 1 to 25 points, like match 5."
    )
    assert "at least 1 hour and at most 30 days" in explain(
        "clock", "3w", "en", Numbering.OWN, Colour.WHITE
    )


def test_a_reason_missing_a_detail_is_an_error() -> None:
    with pytest.raises(jinja2.UndefinedError):
        explain("blocked", {"from": 13, "to": 7}, "en", Numbering.OWN, Colour.WHITE)


def test_unknown_languages_and_missing_templates_are_errors() -> None:
    with pytest.raises(ValueError):
        templating.render("reasons.txt", "fr")
    with pytest.raises(ValueError):
        explain("empty", {}, "fr", Numbering.OWN, Colour.WHITE)
    with pytest.raises(jinja2.TemplateNotFound):
        templating.render("no-such-template.txt", "de")


@pytest.fixture
def scratch_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private template folder for the environment, cleared from the cache before and after."""
    for language in LANGUAGES:
        (tmp_path / language).mkdir()
    monkeypatch.setattr(templating, "TEMPLATE_DIR", tmp_path)
    environment.cache_clear()
    yield tmp_path
    environment.cache_clear()


def test_html_is_escaped_and_text_is_not(scratch_templates: Path) -> None:
    for name in ("note.html", "note.txt"):
        (scratch_templates / "en" / name).write_text("<p>{{ note }}</p>", encoding="utf-8")
    note = '<a href="x">hi</a> & Co'
    assert templating.render("note.html", "en", note=note) == (
        "<p>&lt;a href=&#34;x&#34;&gt;hi&lt;/a&gt; &amp; Co</p>"
    )
    assert templating.render("note.txt", "en", note=note) == f"<p>{note}</p>"


def test_a_missing_variable_is_an_error(scratch_templates: Path) -> None:
    (scratch_templates / "de" / "hello.txt").write_text("Hallo {{ name }}!", encoding="utf-8")
    with pytest.raises(jinja2.UndefinedError):
        templating.render("hello.txt", "de")
    assert templating.render("hello.txt", "de", name="Anna") == "Hallo Anna!"


def test_filters_use_the_language_of_the_template(scratch_templates: Path) -> None:
    text = "{{ left|duration }}, {{ dice|dice }}, {{ 20|point }}"
    for language in LANGUAGES:
        (scratch_templates / language / "f.txt").write_text(text, encoding="utf-8")
    context = dict(left=timedelta(days=2, hours=3, minutes=9), dice=(5, 2),
                   numbering="fixed", colour="black")
    assert templating.render("f.txt", "en", **context) == "2 days 3 hours, 5-2, 5"
    assert templating.render("f.txt", "de", **context) == "2 Tage 3 Stunden, 5-2, 5"


@pytest.mark.parametrize("duration, english, german", [
    (timedelta(days=1), "1 day", "1 Tag"),
    (timedelta(days=1, minutes=5), "1 day", "1 Tag"),
    (timedelta(hours=5, minutes=1), "5 hours 1 minute", "5 Stunden 1 Minute"),
    (timedelta(days=14), "14 days", "14 Tage"),
    (timedelta(seconds=59), "less than a minute", "weniger als eine Minute"),
    (timedelta(seconds=-5), "less than a minute", "weniger als eine Minute"),
])
def test_durations_are_worded(duration: timedelta, english: str, german: str) -> None:
    assert format_duration(duration, "en") == english
    assert format_duration(duration, "de") == german


def test_the_template_folder_is_the_top_level_templates() -> None:
    assert templating.TEMPLATE_DIR == Path(__file__).resolve().parents[2] / "templates"
    assert all((templating.TEMPLATE_DIR / language / "reasons.txt").is_file()
               for language in LANGUAGES)


def test_ratings_are_written_with_the_decimal_comma_in_german() -> None:
    template = "{{ 1517.28|rating }}"
    assert environment().from_string(template).render(language="de") == "1517,3"
    assert environment().from_string(template).render(language="en") == "1517.3"


def test_a_command_set_off_in_prose_is_never_broken_across_lines() -> None:
    """A copy of the line that holds ``zuschauen CODE`` must be that command (the review of issue
    33 met ``zuschauen⏎quywlnlidb`` in a German watcher's mail)."""
    from pbem.render.templating import wrap_prose

    for filler in range(0, 40):
        line = ("Sie schauen " + "x" * filler + " zu (für nur eine Mail je Spiel schreiben Sie  zuschauen quywlnlidb)"
                " und so weiter, bis die Zeile lang genug ist.")
        wrapped = wrap_prose(line)
        assert "zuschauen quywlnlidb" in wrapped, wrapped
        assert wrapped.replace("\n", " ").split() == line.split()
    line = "To stop watching, write  unwatch quywlnlidb  (Anna – Ben) or  unwatch abcdefghij  (Carl – Dora), or do nothing at all."
    for filler in range(0, 30):
        wrapped = wrap_prose("y" * filler + " " + line)
        assert "unwatch quywlnlidb" in wrapped and "unwatch abcdefghij" in wrapped, wrapped
