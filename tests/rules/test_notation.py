"""Move notation: every spelling of SPEC §3 in both numberings, and gnubg's own formatting."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pbem.rules.gnubg_ids import position_from_id, position_id
from pbem.rules.moves import Play, check_play, legal_plays
from pbem.rules.notation import (
    Colour,
    NotationError,
    Numbering,
    format_play,
    looks_like_play,
    own_point,
    parse_play,
    point_label,
    point_name,
)
from pbem.rules.position import Position

OWN, FIXED = Numbering.OWN, Numbering.FIXED
WHITE, BLACK = Colour.WHITE, Colour.BLACK
ALL_READERS = [(OWN, WHITE), (OWN, BLACK), (FIXED, WHITE)]
"""Everyone who counts from their own side: the result is the same for all of them."""


def side(points: dict[int, int]) -> tuple[int, ...]:
    """A side's 25-tuple from {own point: checkers}, 25 for the bar."""
    return tuple(points.get(point, 0) for point in range(1, 26))


# --- reading -------------------------------------------------------------------------------

OWN_SPELLINGS = [
    ("24/18 13/9", ((24, 18), (13, 9))),
    ("bar/22", ((25, 22),)),
    ("6/off", ((6, 0),)),
    ("8/5*", ((8, 5),)),
    ("13/7(2)", ((13, 7), (13, 7))),
    ("24/18/13", ((24, 18), (18, 13))),
    ("24/18*/13", ((24, 18), (18, 13))),
    ("24/18/13(2)", ((24, 18), (18, 13), (24, 18), (18, 13))),
    ("24-18 13-9", ((24, 18), (13, 9))),
    ("-22", ((25, 22),)),
    ("6-", ((6, 0),)),
    ("-22 6-", ((25, 22), (6, 0))),
    ("bar-22", ((25, 22),)),
    ("6-off", ((6, 0),)),
    ("24 18", ((24, 18),)),
    ("24 18 13 9", ((24, 18), (13, 9))),
    ("bar 22 6 off", ((25, 22), (6, 0))),
    ("24-18-13", ((24, 18), (18, 13))),
    ("bar/20/16/12", ((25, 20), (20, 16), (16, 12))),
    ("4/off(2) 3/off(2)", ((4, 0), (4, 0), (3, 0), (3, 0))),
]

FIXED_BLACK_SPELLINGS = [
    ("1/7 12/16", ((24, 18), (13, 9))),
    ("bar/3", ((25, 22),)),
    ("19/off", ((6, 0),)),
    ("17/20*", ((8, 5),)),
    ("12/18(2)", ((13, 7), (13, 7))),
    ("1/7/12", ((24, 18), (18, 13))),
    ("1/7*/12", ((24, 18), (18, 13))),
    ("1-7 12-16", ((24, 18), (13, 9))),
    ("-3", ((25, 22),)),
    ("3-6", ((22, 19),)),
    ("22-", ((3, 0),)),
    ("bar-3", ((25, 22),)),
    ("19-off", ((6, 0),)),
    ("1 7", ((24, 18),)),
    ("1 7 12 16", ((24, 18), (13, 9))),
]


@pytest.mark.parametrize("numbering, colour", ALL_READERS)
@pytest.mark.parametrize("text, steps", OWN_SPELLINGS)
def test_own_side_spellings(text, steps, numbering, colour):
    assert parse_play(text, numbering, colour) == steps


@pytest.mark.parametrize("text, steps", FIXED_BLACK_SPELLINGS)
def test_fixed_numbering_for_black(text, steps):
    assert parse_play(text, FIXED, BLACK) == steps


def test_defaults_are_own_numbering():
    assert parse_play("bar/22 13/9") == ((25, 22), (13, 9))


@pytest.mark.parametrize(
    "text",
    [
        "  24 / 18 ,  13/9 ",
        "24/18;13/9",
        "24/18, 13/9,",
        "24/18\t13/9",
        "24/18* 13/9",
        "*24/18 13/9*",
        "24/*18 13/9",
        "24–18 13—9",  # mail programs turn "-" into dashes
        "24 - 18 13 - 9",
        "24/18 13/9.",
        "24/18 13/9!",
        "24\u00a018 13\u00a09",
        "Move: 24/18 13/9",
        "move 24/18 13/9",
        "M 24-18 13-9",
        "Zug: 24/18 13/9",
        "zug:24/18 13/9",
        "Ich ziehe 24/18 13/9",
        "ich spiele: 24/18 13/9",
        "24 18, 13 9",
        "24/18 13 9",
    ],
)
def test_forgiving_input(text):
    assert parse_play(text) == ((24, 18), (13, 9))


@pytest.mark.parametrize(
    "text, steps",
    [
        ("BAR/22 6/OFF", ((25, 22), (6, 0))),
        ("Bar-22 6-Off", ((25, 22), (6, 0))),
        ("13/7 (2)", ((13, 7), (13, 7))),
        ("13/7*(2)", ((13, 7), (13, 7))),
        ("13/7(2)*", ((13, 7), (13, 7))),
        ("24 18(2)", ((24, 18), (24, 18))),
        ("08/05", ((8, 5),)),
    ],
)
def test_forgiving_marks(text, steps):
    assert parse_play(text) == steps


@pytest.mark.parametrize(
    "text, code, details",
    [
        ("", "empty", {}),
        ("move:", "empty", {}),
        (" , ; ", "empty", {}),
        ("24/18 hello", "unreadable", {"text": "hello"}),
        ("24/18 13/9x", "unreadable", {"text": "13/9x"}),
        ("24//18", "unreadable", {"text": "24//18"}),
        ("-", "unreadable", {"text": "-"}),
        ("6--22", "unreadable", {"text": "6--22"}),
        ("25/3 30/1", "bad_point", {"point": "25"}),
        ("24/18 13/0", "bad_point", {"point": "0"}),
        ("100/94", "bad_point", {"point": "100"}),
        ("13/7(5)", "bad_repeat", {"text": "13/7(5)"}),
        ("13/7(0)", "bad_repeat", {"text": "13/7(0)"}),
        ("13/7(x)", "bad_repeat", {"text": "13/7(x)"}),
        ("(2)", "bad_repeat", {"text": "(2)"}),
        ("24(2) 18", "bad_repeat", {"text": "24(2)"}),
        ("22/bar", "misplaced_bar", {"text": "22/bar"}),
        ("6/off/3", "misplaced_off", {"text": "6/off/3"}),
        ("off/3", "misplaced_off", {"text": "off/3"}),
        ("24 18 13", "unpaired", {"point": "13"}),
        ("24 13/9", "unpaired", {"point": "24"}),
        ("bar", "unpaired", {"point": "bar"}),
        ("24/18/12/6/1/off", "too_many_steps", {"count": 5}),
        ("13/7(3) 8/2(2)", "too_many_steps", {"count": 5}),
    ],
)
def test_nonsense_is_rejected(text, code, details):
    with pytest.raises(NotationError) as caught:
        parse_play(text)
    assert caught.value.code == code
    assert caught.value.details == details
    assert str(caught.value)


@pytest.mark.parametrize(
    "text, numbering, colour, toward",
    [
        ("13/18", OWN, WHITE, 1),
        ("9/9", OWN, BLACK, 1),
        ("1/24", OWN, WHITE, 1),
        ("1/7", FIXED, WHITE, 1),
        ("7/1", FIXED, BLACK, 24),
        ("6/3", FIXED, BLACK, 24),
    ],
)
def test_backwards_moves_name_the_direction(text, numbering, colour, toward):
    with pytest.raises(NotationError) as caught:
        parse_play(text, numbering, colour)
    assert caught.value.code == "wrong_direction"
    assert caught.value.details["toward"] == toward
    assert caught.value.details["numbering"] == numbering.value
    assert f"towards point {toward}" in str(caught.value)


def test_notation_error_is_a_value_error():
    with pytest.raises(ValueError, match="no point 30"):
        parse_play("30/24")


# --- which mail lines are moves --------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "24/18 13/9",
        "-22",
        "6-",
        "24 18",
        "13/7(2)",
        "25/3 30/1",
        "bar/22",
        "Bar/22 6/Off",
        "8/5*",
        "24-18 13-9",
        "6-off",
        "24/18/13",
        "Move: 24/18 13/9",
        "Zug: 8/5 6/5",
        "Ich ziehe 24/18 13/9",
        "mein Zug: -3 3-6",
        "13/18",
        "24/18 13/9.",
        "  24 / 18 , 13 / 9  ",
        "1 2",
    ],
)
def test_move_lines(line):
    assert looks_like_play(line)


@pytest.mark.parametrize(
    "line",
    [
        "Hi Ben, nice move!",
        "see you at 18:30",
        "Gut gespielt!",
        "Viele Grüße, Anna",
        "I'd have played 24/18 13/9 myself",
        "Ich würde 24/18 spielen.",
        "Bis morgen - ich bin ab 18 Uhr zu Hause",
        "Call me: 0171-5551234",
        "2024-12-24",
        "24.12.",
        "13",
        "bar",
        "off",
        "-",
        "",
        "Thanks :-)",
        "Das war knapp (2 Pips).",
        "move",
    ],
)
def test_note_lines(line):
    assert not looks_like_play(line)


MOVE_PARTS = ["24", "18", "13", "9", "6", "1", "bar", "off", "Bar", "OFF", "/", "-", "\u2013", " "]
MOVE_PARTS += [",", ";", "*", "(2)", " (3)", ".", "!", "move: ", "Zug ", "x", "30"]


@given(st.lists(st.sampled_from(MOVE_PARTS), max_size=8).map("".join))
def test_every_readable_play_looks_like_one(text):
    """The mail reader must never pass a valid move on to the opponent as a note."""
    try:
        parse_play(text)
    except NotationError:
        return
    assert looks_like_play(text)

# --- numberings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "own, numbering, colour, label",
    [
        (1, OWN, WHITE, 1),
        (1, OWN, BLACK, 1),
        (24, FIXED, WHITE, 24),
        (24, FIXED, BLACK, 1),
        (22, FIXED, BLACK, 3),
        (3, FIXED, BLACK, 22),
        (13, FIXED, BLACK, 12),
    ],
)
def test_point_labels(own, numbering, colour, label):
    assert point_label(own, numbering, colour) == label
    assert own_point(label, numbering, colour) == own


@pytest.mark.parametrize("numbering", list(Numbering))
@pytest.mark.parametrize("colour", list(Colour))
def test_labels_are_a_bijection(numbering, colour):
    labels = [point_label(point, numbering, colour) for point in range(1, 25)]
    assert sorted(labels) == list(range(1, 25))
    assert [own_point(label, numbering, colour) for label in labels] == list(range(1, 25))


@pytest.mark.parametrize("point", [0, 25, -1])
def test_bar_and_off_have_no_number(point):
    with pytest.raises(ValueError):
        point_label(point, OWN, WHITE)
    with pytest.raises(ValueError):
        own_point(point, FIXED, BLACK)


def test_seats_and_colours():
    assert Colour.of_seat(0) is WHITE
    assert Colour.of_seat(1) is BLACK
    with pytest.raises(ValueError):
        Colour.of_seat(2)
    assert Numbering("fixed") is FIXED and Colour("black") is BLACK


@pytest.mark.parametrize(
    "point, numbering, colour, name",
    [
        (25, FIXED, BLACK, "bar"),
        (0, FIXED, BLACK, "off"),
        (22, FIXED, BLACK, "3"),
        (22, OWN, BLACK, "22"),
    ],
)
def test_point_names(point, numbering, colour, name):
    assert point_name(point, numbering, colour) == name


# --- writing -------------------------------------------------------------------------------

START = Position.start()
BLOT_ON_18 = Position(START.mover, side({7: 1, 6: 4, 8: 3, 13: 5, 24: 2}))
"""The opponent has split a checker to its 7 point, the mover's 18."""


@pytest.mark.parametrize(
    "position, play, own, fixed_black",
    [
        (START, ((24, 18), (13, 9)), "24/18 13/9", "1/7 12/16"),
        (START, ((13, 9), (24, 18)), "24/18 13/9", "1/7 12/16"),
        (START, ((24, 18), (18, 13)), "24/13", "1/12"),
        (BLOT_ON_18, ((24, 18), (18, 13)), "24/18*/13", "1/7*/12"),
        (BLOT_ON_18, ((24, 18), (13, 7)), "24/18* 13/7", "1/7* 12/18"),
        (START, ((13, 7), (13, 7), (8, 2), (8, 2)), "13/7(2) 8/2(2)", "12/18(2) 17/23(2)"),
        (START, ((24, 21), (24, 21), (21, 18), (21, 18)), "24/18(2)", "1/7(2)"),
        (START, ((24, 21), (24, 21), (21, 18), (13, 10)), "24/18 24/21 13/10", "1/7 1/4 12/15"),
        (START, ((8, 5), (6, 5)), "8/5 6/5", "17/20 19/20"),
        (START, ((8, 7), (7, 6), (6, 5), (5, 4)), "8/4", "17/21"),
        (START, (), "", ""),
    ],
)
def test_format_play(position, play, own, fixed_black):
    assert format_play(position, play) == own
    assert format_play(position, play, FIXED, WHITE) == own
    assert format_play(position, play, OWN, BLACK) == own
    assert format_play(position, play, FIXED, BLACK) == fixed_black


def test_format_bar_and_off():
    entering = Position(side({25: 1, 6: 14}), side({1: 1, 6: 5, 8: 3, 13: 5}))
    assert format_play(entering, ((25, 22), (6, 2))) == "bar/22 6/2"
    assert format_play(entering, ((25, 24), (24, 20))) == "bar/24*/20"
    assert format_play(entering, ((25, 24), (24, 20)), FIXED, BLACK) == "bar/1*/5"
    bearing_off = Position(side({6: 2, 5: 3}), side({1: 2, 6: 13}))
    assert format_play(bearing_off, ((6, 0), (5, 0))) == "6/off 5/off"
    assert format_play(bearing_off, ((6, 0), (6, 0), (5, 0), (5, 0))) == "6/off(2) 5/off(2)"
    assert format_play(bearing_off, ((6, 1), (1, 0))) == "6/off"
    assert format_play(bearing_off, ((6, 0), (5, 0)), FIXED, BLACK) == "19/off 20/off"


def test_hits_on_the_way_are_kept():
    blots = Position(side({10: 2, 6: 5, 25: 1}), side({16: 1, 17: 1, 18: 1, 6: 5}))
    assert format_play(blots, ((10, 9), (9, 8), (8, 7), (7, 6))) == "10/9*/8*/7*/6"
    assert format_play(blots, ((10, 9), (9, 8), (8, 7), (10, 9))) == "10/9*/8*/7* 10/9"


def test_a_hit_is_marked_once():
    blot_on_5 = Position(START.mover, side({20: 1, 6: 4, 8: 3, 13: 5, 24: 2}))
    assert format_play(blot_on_5, ((8, 5), (6, 5))) == "8/5* 6/5"
    assert format_play(blot_on_5, ((6, 5), (6, 5), (8, 5), (8, 5))) == "8/5*(2) 6/5(2)"


# --- against GNU Backgammon ----------------------------------------------------------------

GNUBG_CASES = Path(__file__).parent.parent / "data" / "notation_gnubg.txt"


def _gnubg_cases() -> list[tuple[str, Play, str]]:
    cases = []
    for line in GNUBG_CASES.read_text().splitlines():
        pid, steps, spelled = line.split("\t")
        play = tuple(tuple(map(int, step.split(":"))) for step in steps.split())
        cases.append((pid, play, spelled))
    return cases


def test_format_play_spells_as_gnubg():
    cases = _gnubg_cases()
    assert len(cases) > 1000
    mismatches = [
        (pid, play, spelled, format_play(position_from_id(pid), play))
        for pid, play, spelled in cases
        if format_play(position_from_id(pid), play) != spelled
    ]
    assert mismatches == []


def test_gnubg_sample_covers_every_feature():
    spelled = " ".join(case[2] for case in _gnubg_cases())
    for feature in ("bar/", "/off", "*/", "*(", ")", "(4)"):
        assert feature in spelled


# --- round trip through the move checker ---------------------------------------------------


@st.composite
def positions_and_plays(draw):
    """A position reached by random play from the start, a roll and one of its legal plays."""
    position = Position.start()
    for _ in range(draw(st.integers(0, 60))):
        dice = (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
        plays = legal_plays(position, dice)
        if plays:
            position = draw(st.sampled_from(sorted(plays, key=position_id)))
        if position.mover_off == 15:
            break
        position = position.swap()
    dice = (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    plays = legal_plays(position, dice)
    assume(plays)
    reached = draw(st.sampled_from(sorted(plays, key=position_id)))
    return position, dice, reached, plays[reached]


@settings(max_examples=150, deadline=None)
@given(positions_and_plays(), st.sampled_from(list(Numbering)), st.sampled_from(list(Colour)))
def test_formatted_plays_read_back_to_the_same_position(case, numbering, colour):
    position, dice, reached, play = case
    written = format_play(position, play, numbering, colour)
    assert looks_like_play(written)
    assert check_play(position, dice, parse_play(written, numbering, colour)) == reached



def test_the_example_play_bears_off_where_it_can_and_is_otherwise_the_middle_one():
    from pbem.rules.moves import legal_plays
    from pbem.rules.notation import example_play

    home = Position((2, 2, 2, 3, 3, 3) + (0,) * 19, (0,) * 10 + (5, 5, 5) + (0,) * 12)
    plays = legal_plays(home, (2, 1)).values()
    assert format_play(home, example_play(plays), Numbering.OWN, Colour.WHITE) == "2/off 1/off"
    opening = legal_plays(Position.start(), (3, 2)).values()
    ordered = sorted(opening)
    assert example_play(opening) == ordered[len(ordered) // 2]
    assert example_play(opening) not in (ordered[0], ordered[-1])
