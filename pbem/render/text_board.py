"""The board as plain text, for the text part of every game mail.

The grid is plain ASCII so that it survives every mail client: no box-drawing characters, no
trailing spaces (``format=flowed`` would join such lines), no line starting with ``>`` or
``From `` and at most 48 columns, so it stays intact when quoted with ``> `` a few times.
The facts around it (names, pips, dice, cube, score) are short sentences of their own, so that
they still read well where a proportional font spoils the grid.

The viewer's checkers are always ``X``, the opponent's ``O``.  In the own numbering the viewer
sits at the bottom with the home board on the right, as GNU Backgammon draws it; in the fixed
numbering the board is the Tele-Backgammon board, the same for both players: points 1-12 along
the top, 24-13 along the bottom (White's home top left, Black's bottom left).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from pbem.render.templating import format_dice, render
from pbem.rules.moves import BAR_POINT, OFF, Play
from pbem.rules.notation import Colour, Numbering, format_play, own_point, point_label
from pbem.rules.position import BAR as BAR_INDEX
from pbem.rules.position import Position
from pbem.rules.scoring import Format

ROWS = 5
"""Checkers drawn per point, in the text and the picture; a taller stack shows its count in the
last place."""
NAME_WIDTH = 16
"""Longer names are shortened so that the fact lines fit in 64 columns."""

_MARGIN = 5
_HALF = 6
_VIEWER, _OPPONENT = "X", "O"
_DEPARTED, _ARRIVED = ".", "o"


class Who(StrEnum):
    """One of the two players, from the viewer's side."""

    VIEWER = "viewer"
    OPPONENT = "opponent"


@dataclass(frozen=True)
class Score:
    """What the score line says: the format and both scores, the viewer's first."""

    kind: Format = Format.SINGLE
    length: int | None = None
    """N of ``match N`` and ``games N``."""
    viewer: int = 0
    opponent: int = 0
    crawford: bool = False


@dataclass(frozen=True)
class LastMove:
    """The opponent's last play, as recorded: from their side, in their own numbering."""

    before: Position
    """The board before the play, seen from the opponent (who was the mover)."""
    play: Play


@dataclass(frozen=True)
class BoardView:
    """Everything a mail shows about the board, seen by its recipient (the viewer)."""

    position: Position
    """From the viewer's side, whether or not they are on roll: ``mover`` is the viewer."""
    numbering: Numbering
    colour: Colour
    viewer_name: str
    opponent_name: str
    turn: Who | None
    """Who must act; ``None`` once the game is over."""
    dice: tuple[int, int] | None = None
    """The roll, shown in the roller's half (the viewer's on the right, as in the picture)."""
    cube_value: int = 1
    cube_owner: Who | None = None
    """``None`` while the cube is in the middle."""
    cube_offered: Who | None = None
    """Who offered the double waiting for an answer: the cube is shown at twice its value at the
    edge of the player who is to take it."""
    score: Score = Score()
    last_move: LastMove | None = None
    last_move_told: bool = False
    """The mail says the last move in its own words above the board: the board only explains
    its marks (the move told once)."""
    spectator: bool = False
    """Shown to a watcher, who plays neither side: the viewer's side is named, never "you"."""


@dataclass(frozen=True)
class _Layout:
    """Point labels left to right along the top and the bottom edge."""

    top: tuple[int, ...]
    bottom: tuple[int, ...]


LAYOUTS = {
    Numbering.OWN: _Layout(top=tuple(range(13, 25)), bottom=tuple(range(12, 0, -1))),
    Numbering.FIXED: _Layout(top=tuple(range(1, 13)), bottom=tuple(range(24, 12, -1))),
}


def render_text_board(view: BoardView, language: str) -> str:
    """The board with its fact lines, in ``language`` ("de" or "en"); no trailing newline."""
    layout = LAYOUTS[view.numbering]
    viewer_home_on_top = point_label(1, view.numbering, view.colour) in layout.top
    viewer = _player(view, Who.VIEWER)
    opponent = _player(view, Who.OPPONENT)
    top, bottom = (viewer, opponent) if viewer_home_on_top else (opponent, viewer)
    return render(
        "board.txt",
        language,
        grid="\n".join(_grid(view, layout, viewer_home_on_top)),
        top=top,
        bottom=bottom,
        view=view,
        viewer_name=shorten(view.viewer_name),
        opponent_name=shorten(view.opponent_name),
        last_move=format_last_move(view),
        move_told=view.last_move_told,
        show_colour=view.numbering is Numbering.FIXED,
    ).rstrip()


def _player(view: BoardView, who: Who) -> dict[str, object]:
    """The facts of one player's line under or above the grid."""
    position = view.position
    if who is Who.VIEWER:
        return dict(viewer=True, symbol=_VIEWER, name=shorten(view.viewer_name),
                    colour=view.colour.value, pips=position.mover_pips, off=position.mover_off)
    return dict(viewer=False, symbol=_OPPONENT, name=shorten(view.opponent_name),
                colour=other_colour(view.colour).value, pips=position.opponent_pips,
                off=position.opponent_off)


def other_colour(colour: Colour) -> Colour:
    """The opponent's colour."""
    return Colour.BLACK if colour is Colour.WHITE else Colour.WHITE


def shorten(name: str) -> str:
    """A name cut to :data:`NAME_WIDTH` characters, marked with ``...`` when cut."""
    name = " ".join(name.split())
    return name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 3] + "..."


def format_last_move(view: BoardView) -> str | None:
    """The opponent's last play in the viewer's numbering, as GNU Backgammon writes it.

    In the own numbering that is the opponent's own point numbers (24/18), as gnubg shows
    both players' moves; in the fixed numbering the numbers are the same for both players.
    """
    if view.last_move is None:
        return None
    return format_play(view.last_move.before, view.last_move.play, view.numbering,
                       other_colour(view.colour))


class MoveMarks(NamedTuple):
    """How many checkers of the opponent's last play left / reached each viewer point."""

    departed: dict[int, int]
    arrived: dict[int, int]


def move_marks(view: BoardView) -> MoveMarks:
    """The marks of the opponent's last play, by the viewer's own point (25 = bar).

    A point a checker only passed through is not marked: it both left and reached it.
    """
    net: dict[int, int] = {}
    for start, end in view.last_move.play if view.last_move else ():
        net[start] = net.get(start, 0) + 1
        net[end] = net.get(end, 0) - 1
    departed = {_viewer_point(p): n for p, n in net.items() if n > 0 and p != OFF}
    arrived = {_viewer_point(p): -n for p, n in net.items() if n < 0 and p != OFF}
    return MoveMarks(departed, arrived)


def _viewer_point(opponent_point: int) -> int:
    """An opponent's own point as the viewer's own point; the bar stays the bar."""
    return opponent_point if opponent_point == BAR_POINT else 25 - opponent_point


def _stack(count: int, symbol: str, departed: int = 0, arrived: int = 0) -> list[str]:
    """The :data:`ROWS` places of one point from the edge inwards."""
    if count > ROWS:
        places = [symbol] * (ROWS - 1) + [str(count)]
        shown = ROWS - 1
    else:
        places = [symbol] * count
        shown = count
    for place in range(max(0, shown - arrived), shown):
        places[place] = _ARRIVED
    places += [_DEPARTED] * min(departed, ROWS - len(places))
    return places + [""] * (ROWS - len(places))


def _point_stack(view: BoardView, label: int, marks: MoveMarks) -> list[str]:
    """The places of the point labelled ``label``; only the opponent's arrivals are marked."""
    point = own_point(label, view.numbering, view.colour)
    mine, theirs = view.position.mover[point - 1], view.position.opponent[24 - point]
    departed = marks.departed.get(point, 0)
    if mine:
        return _stack(mine, _VIEWER, departed)
    return _stack(theirs, _OPPONENT, departed, marks.arrived.get(point, 0))


def _grid(view: BoardView, layout: _Layout, viewer_home_on_top: bool) -> list[str]:
    """The ASCII board: labels, borders, two halves of :data:`ROWS` rows and the bar row."""
    marks = move_marks(view)
    viewer_bar = _stack(view.position.mover[BAR_INDEX], _VIEWER)
    opponent_bar = _stack(
        view.position.opponent[BAR_INDEX], _OPPONENT, marks.departed.get(BAR_POINT, 0)
    )
    top_bar, bottom_bar = (
        (viewer_bar, opponent_bar) if viewer_home_on_top else (opponent_bar, viewer_bar)
    )
    top = [_point_stack(view, label, marks) for label in layout.top]
    bottom = [_point_stack(view, label, marks) for label in layout.bottom]
    cube_row = _cube_row(view, viewer_home_on_top)
    cube = f"[{shown_cube_value(view)}]"

    def margin(row: int) -> str:
        return f"{cube:>{_MARGIN - 1}} " if row == cube_row else " " * _MARGIN

    def row(index: int, stacks: list[list[str]], bar: list[str], place: int) -> str:
        cells = [_cell(stack[place]) for stack in stacks]
        return (margin(index) + "|" + "".join(cells[:_HALF]) + "|" + _cell(bar[place]) + "|"
                + "".join(cells[_HALF:]) + "|")

    dice = format_dice(view.dice) if view.dice else ""
    border = " " * _MARGIN + "+" + "-" * 3 * _HALF + "+---+" + "-" * 3 * _HALF + "+"
    lines = [_labels(layout.top), border]
    lines += [row(place, top, top_bar, place) for place in range(ROWS)]
    left, right = ("", dice) if view.turn is not Who.OPPONENT else (dice, "")
    lines.append(margin(ROWS) + "|" + f"{left:^{3 * _HALF}}" + "|BAR|" + f"{right:^{3 * _HALF}}" + "|")
    lines += [row(2 * ROWS - place, bottom, bottom_bar, place) for place in reversed(range(ROWS))]
    lines += [border, _labels(layout.bottom)]
    return [line.rstrip() for line in lines]


def _cube_row(view: BoardView, viewer_home_on_top: bool) -> int:
    """The grid row beside which the cube stands: the owner's edge (an offered cube: the edge of
    the player it is offered to), or the middle."""
    holder = cube_holder(view)
    if holder is None:
        return ROWS
    return 0 if viewer_home_on_top == (holder is Who.VIEWER) else 2 * ROWS


def cube_holder(view: BoardView) -> Who | None:
    """Whose edge the cube is drawn at: the owner's, or for an offered cube the player's who is
    to take it; None for the middle."""
    if view.cube_offered is not None:
        return Who.OPPONENT if view.cube_offered is Who.VIEWER else Who.VIEWER
    return view.cube_owner


def shown_cube_value(view: BoardView) -> int:
    """The value on the cube as drawn: an offered cube shows what it would be after the take."""
    return view.cube_value * 2 if view.cube_offered is not None else view.cube_value


def _cell(text: str) -> str:
    """One point's place: three columns with the checker (or count) in the middle one."""
    return f"{text:>2} "


def _labels(labels: tuple[int, ...]) -> str:
    """Point numbers, each above or below the middle of its point."""
    halves = ("".join(_cell(str(label)) for label in labels[:_HALF]),
              "".join(_cell(str(label)) for label in labels[_HALF:]))
    return (" " * (_MARGIN + 1) + halves[0] + "     " + halves[1]).rstrip()
