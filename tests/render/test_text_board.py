"""The plain-text board: snapshots, GNU Backgammon's orientation, mail-safety and width."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
import subprocess
from pathlib import Path

import pytest

from pbem.render.text_board import BoardView, LastMove, Score, Who, render_text_board
from pbem.rules.scoring import Format
from pbem.rules.gnubg_ids import position_id
from pbem.rules.notation import Colour, Numbering
from pbem.rules.position import Position

SNAPSHOTS = Path(__file__).parent / "snapshots"
LANGUAGES = ("en", "de")


def side(**points: int) -> tuple[int, ...]:
    """A side from keywords ``p6=5`` (point 6) and ``bar=2``."""
    counts = [0] * 25
    for name, count in points.items():
        counts[24 if name == "bar" else int(name[1:]) - 1] = count
    return tuple(counts)


# The opponent (Ben) played 13/8 6/5*, hitting the viewer's blot; the viewer bears off soon.
BEFORE_HIT = Position(
    mover=side(p6=5, p8=3, p13=5, p24=2), opponent=side(p20=1, p2=3, p1=0, p6=4, p13=7)
)
AFTER_HIT = Position(
    mover=side(bar=1, p2=3, p6=4, p13=7), opponent=side(p5=1, p6=4, p8=4, p13=4, p24=2)
)
TALL = Position(mover=side(p6=9, bar=6), opponent=side(bar=3, p11=12))


def start_view(numbering: Numbering, colour: Colour) -> BoardView:
    return BoardView(
        position=Position.start(), numbering=numbering, colour=colour,
        viewer_name="Anna", opponent_name="Ben", turn=Who.VIEWER, dice=(5, 2),
        score=Score(Format.MATCH, length=5, viewer=2, opponent=4, crawford=True),
    )


def hit_view(numbering: Numbering, colour: Colour) -> BoardView:
    return BoardView(
        position=AFTER_HIT, numbering=numbering, colour=colour,
        viewer_name="Annaliese Mustermann-Schulze", opponent_name="Ben", turn=Who.VIEWER,
        dice=(3, 1), cube_value=2, cube_owner=Who.OPPONENT,
        score=Score(Format.MONEY, viewer=3, opponent=1),
        last_move=LastMove(before=BEFORE_HIT, play=((13, 8), (6, 5))),
    )


CASES = {
    f"start-{numbering}-{colour}-{language}": (start_view(numbering, colour), language)
    for numbering in Numbering for colour in Colour for language in LANGUAGES
} | {
    f"hit-{numbering}-{colour}-{language}": (hit_view(numbering, colour), language)
    for numbering, colour in ((Numbering.OWN, Colour.WHITE), (Numbering.FIXED, Colour.BLACK))
    for language in LANGUAGES
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_board_matches_snapshot(name: str) -> None:
    view, language = CASES[name]
    expected = (SNAPSHOTS / f"{name}.txt").read_text(encoding="utf-8")
    assert render_text_board(view, language) + "\n" == expected


def test_own_numbering_does_not_depend_on_colour() -> None:
    for language in LANGUAGES:
        white = render_text_board(hit_view(Numbering.OWN, Colour.WHITE), language)
        black = render_text_board(hit_view(Numbering.OWN, Colour.BLACK), language)
        assert white == black


def test_fixed_numbering_puts_white_home_top_left_for_both_players() -> None:
    """Both players see the same Tele-Backgammon board, only X and O trade places."""
    white = render_text_board(start_view(Numbering.FIXED, Colour.WHITE), "en").splitlines()
    black = render_text_board(start_view(Numbering.FIXED, Colour.BLACK), "en").splitlines()
    swap = str.maketrans("XO", "OX")
    grid = slice(2, 17)
    assert [line.translate(swap) for line in white[grid]] == black[grid]
    assert white[2].split() == [str(n) for n in range(1, 13)]
    assert "| O              X |" in white[4]  # Black's 24 on point 1, White's 6 point


def gnubg_executable() -> str:
    """The gnubg program; these tests fail, never skip, when it is missing."""
    found = shutil.which("gnubg") or shutil.which("/usr/games/gnubg")
    assert found, "GNU Backgammon is not installed (apt-get install gnubg)"
    return found


def gnubg_rows(position: Position) -> list[str]:
    """The checker rows of ``show board`` for ``position`` (the mover is X, at the bottom)."""
    script = f"new game\nset board {position_id(position)}\nshow board\n"
    out = subprocess.run(
        [gnubg_executable(), "-t", "-q", "-r"], input=script, capture_output=True, text=True,
        timeout=60, check=True,
    ).stdout
    board = out[out.rindex("Position ID: " + position_id(position)):]
    return [line[line.index("|"):line.rindex("|") + 1] for line in board.splitlines()
            if re.match(r"^ ?\w?\|", line)]


@pytest.mark.gnubg
@pytest.mark.parametrize("position", [Position.start(), AFTER_HIT, AFTER_HIT.swap()],
                         ids=["start", "hit", "hit-swapped"])
def test_own_numbering_is_drawn_as_gnubg_draws_it(position: Position) -> None:
    view = BoardView(position=position, numbering=Numbering.OWN, colour=Colour.WHITE,
                     viewer_name="A", opponent_name="B", turn=Who.VIEWER)
    ours = [line[line.index("|"):line.rindex("|") + 1]
            for line in render_text_board(view, "en").splitlines() if "|" in line]
    assert len(ours) == 11
    assert [line.replace("BAR", "   ") for line in ours] == [
        line.replace("BAR", "   ") for line in gnubg_rows(position)
    ]


def test_tall_stacks_show_their_count() -> None:
    view = BoardView(position=TALL, numbering=Numbering.OWN, colour=Colour.WHITE,
                     viewer_name="A", opponent_name="B", turn=Who.OPPONENT)
    lines = render_text_board(view, "en").splitlines()
    grid = [line for line in lines if "|" in line]
    assert grid[2].startswith("     |    O             | O |")  # O's 14 point and bar
    assert grid[4].startswith("     |   12             |   |")
    assert grid[6].endswith("| 6 | 9                |")  # X's bar and 6 point
    assert grid[10].endswith("| X | X                |")


def quoted(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines())


@pytest.mark.parametrize("name", sorted(CASES))
def test_board_is_mail_safe(name: str) -> None:
    """No trailing spaces (format=flowed), nothing a client reads as quote, sig or mbox line."""
    view, language = CASES[name]
    text = render_text_board(view, language)
    for line in text.splitlines():
        assert line == line.rstrip()
        assert not line.startswith((">", "From ", "-- "))
        assert len(line) <= 62, line
    assert "\t" not in text
    grid = [line for line in text.splitlines() if line.lstrip().startswith(("|", "+", "["))]
    assert all(line.isascii() for line in grid)
    assert quoted(text).replace("> ", "").replace(">\n", "\n") == text
    assert max(len(line) for line in quoted(quoted(text)).splitlines()) <= 66


def test_same_input_gives_same_output() -> None:
    first = render_text_board(hit_view(Numbering.FIXED, Colour.BLACK), "de")
    again = render_text_board(hit_view(Numbering.FIXED, Colour.BLACK), "de")
    assert first == again


def test_facts_are_worded_in_the_language() -> None:
    english = render_text_board(hit_view(Numbering.OWN, Colour.WHITE), "en")
    german = render_text_board(hit_view(Numbering.OWN, Colour.WHITE), "de")
    assert "Cube: 2, owned by Ben" in english
    assert "Doppler: 2, bei Ben" in german
    assert "Ben played 13/8 6/5*" in english
    assert "Ben zog 13/8 6/5*" in german


def test_last_move_is_written_in_the_viewers_numbering() -> None:
    """In the fixed numbering Ben (White) moved 13/8 6/5*: the same numbers for the viewer."""
    text = render_text_board(hit_view(Numbering.FIXED, Colour.BLACK), "en")
    assert "Ben played 13/8 6/5* (. from, o to)" in text


def test_an_opponent_without_a_move_is_mentioned() -> None:
    view = BoardView(position=AFTER_HIT, numbering=Numbering.OWN, colour=Colour.WHITE,
                     viewer_name="A", opponent_name="Ben", turn=Who.VIEWER,
                     last_move=LastMove(before=AFTER_HIT.swap(), play=()))
    assert "Ben could not move." in render_text_board(view, "en")
    assert "Ben konnte nicht ziehen." in render_text_board(view, "de")


@pytest.mark.parametrize(("language", "one", "many"), [("en", "1 pip,", "2 pips,"), ("de", "1 Auge,", "2 Augen,")])
def test_one_pip_is_singular(language: str, one: str, many: str) -> None:
    view = BoardView(position=Position(mover=side(p1=1), opponent=side(p2=1)), numbering=Numbering.OWN,
                     colour=Colour.WHITE, viewer_name="A", opponent_name="B", turn=Who.VIEWER, dice=(1, 1))
    text = render_text_board(view, language)
    assert one in text and many in text


def test_the_opponents_dice_stand_in_their_half_as_in_the_picture() -> None:
    view = BoardView(position=Position.start(), numbering=Numbering.OWN, colour=Colour.WHITE,
                     viewer_name="A", opponent_name="B", turn=Who.OPPONENT, dice=(6, 4))
    bar_row = next(line for line in render_text_board(view, "en").splitlines() if "|BAR|" in line)
    left, right = bar_row.split("|BAR|")
    assert "6-4" in left and "6-4" not in right


@pytest.mark.parametrize(("language", "one", "two"), [
    ("en", ("Match to 1 point:", "Series of 1 game:"), ("Match to 2 points:", "Series of 2 games:")),
    ("de", ("Match auf 1 Punkt:", "Serie über 1 Spiel:"), ("Match auf 2 Punkte:", "Serie über 2 Spiele:")),
])
def test_lengths_of_one_are_singular(language: str, one: tuple[str, str], two: tuple[str, str]) -> None:
    for length, texts in ((1, one), (2, two)):
        for kind, text in zip((Format.MATCH, Format.GAMES), texts):
            view = BoardView(position=Position.start(), numbering=Numbering.OWN, colour=Colour.WHITE,
                             viewer_name="A", opponent_name="B", turn=Who.VIEWER,
                             score=Score(kind, length=length, viewer=0, opponent=0))
            assert text in render_text_board(view, language)


@pytest.mark.parametrize("language, line", [
    ("en", "Match to 1 point, won by Ben: Anna 0, Ben 3\n"),
    ("de", "Match auf 1 Punkt, gewonnen von Ben: Anna 0, Ben 3\n"),
])
def test_a_finished_match_names_its_winner_and_no_crawford_game(language: str, line: str) -> None:
    """Issue 33: "Match to 1 point: Anna 0, Ben 3" read as a broken score; a match over says who won it."""
    view = BoardView(position=Position.start(), numbering=Numbering.OWN, colour=Colour.WHITE, viewer_name="Anna",
                     opponent_name="Ben", turn=None, score=Score(Format.MATCH, length=1, viewer=0, opponent=3))
    board = render_text_board(view, language)
    assert line in board and "Crawford" not in board
    running = render_text_board(start_view(Numbering.OWN, Colour.WHITE), language)
    assert ("won by" not in running and "gewonnen von" not in running) and "Crawford" in running


@pytest.mark.parametrize("language, told, legend", [
    ("en", "Ben played 13/8 6/5*", "(. from, o to: Ben's last move)"),
    ("de", "Ben zog 13/8 6/5*", "(. von, o nach: der letzte Zug von Ben)"),
])
def test_a_move_the_mail_tells_is_not_told_again_under_the_board(language: str, told: str, legend: str) -> None:
    view = hit_view(Numbering.OWN, Colour.WHITE)
    assert told in render_text_board(view, language)
    once = render_text_board(replace(view, last_move_told=True), language)
    assert told not in once and legend in once
    grid = lambda board: [line for line in board.splitlines() if line.strip().startswith("|")]  # noqa: E731
    assert grid(once) == grid(render_text_board(view, language)), "the marks stay on the board"
