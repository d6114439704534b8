"""The board as SVG for the web page: the mail's picture (:mod:`pbem.render.board_image`) drawn
with the same geometry, colours and captions, so that a player sees the same board in the mail
and on the page, with or without JavaScript.

The drawing marks what the page's script needs to move checkers by hand: every point and the
tray carry ``data-point`` (the viewer's own point number, 0 = off, 25 = bar), the checkers sit
in one group (``#checkers``) that the script may draw again from counts, and
:func:`board_layout` gives the script the places of the checkers, as drawn here.
"""

from __future__ import annotations

from html import escape
from typing import Any

from pbem.render import board_image as picture
from pbem.render.board_image import (BOARD_H, BOARD_TOP, BOTTOM_EDGE, CHECKER, HALF_H, HEIGHT, LABELS, LINE,
                                     MIDDLE, POINT, SIDE_W, TOP_EDGE, WIDTH)
from pbem.render.text_board import LAYOUTS, ROWS, BoardView, Who, move_marks, other_colour, shown_cube_value
from pbem.rules.moves import BAR_POINT, OFF
from pbem.rules.notation import Colour, own_point, point_label
from pbem.rules.position import BAR as BAR_INDEX

TRAY_SLAB = 12
"""Height of one borne-off checker in the tray."""


def _hex(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


PAPER, INK, WOOD, FELT, LABEL, MARK = (_hex(colour) for colour in (
    picture._PAPER, picture._INK, picture._WOOD, picture._FELT, picture._LABEL, picture._MARK))
POINT_SHADES = tuple(_hex(colour) for colour in picture._POINTS)
CHECKER_COLOURS = {colour: (_hex(fill), _hex(rim)) for colour, (fill, rim) in picture._CHECKERS.items()}
_PIPS = picture._PIPS
_DIE = picture._DIE


def board_layout(view: BoardView) -> dict[str, Any]:
    """Where checkers go, for the page's script: per side (``me``, ``them``) and the viewer's own
    point (1-24, 25 the bar), the top-left corners of its :data:`ROWS` places; the trays; the
    checkers' colours.  Points of the opponent's checkers are the viewer's numbers too."""
    home_on_top = _home_on_top(view)
    places: dict[str, dict[int, list[tuple[int, int]]]] = {"me": {}, "them": {}}
    for row, labels in enumerate((LAYOUTS[view.numbering].top, LAYOUTS[view.numbering].bottom)):
        for column, label in enumerate(labels):
            point = own_point(label, view.numbering, view.colour)
            stack = [picture._point_place(column, row == 0, place) for place in range(ROWS)]
            places["me"][point] = places["them"][point] = stack
    places["me"][BAR_POINT] = [picture._bar_place(home_on_top, place) for place in range(ROWS)]
    places["them"][BAR_POINT] = [picture._bar_place(not home_on_top, place) for place in range(ROWS)]
    colours = {"me": _checker_colours(view.colour), "them": _checker_colours(other_colour(view.colour))}
    return {
        "rows": ROWS, "checker": CHECKER, "places": places,
        "tray": {"me": {"top": home_on_top}, "them": {"top": not home_on_top},
                 "left": WIDTH - SIDE_W + 6, "right": WIDTH - 7, "top": TOP_EDGE, "bottom": BOTTOM_EDGE,
                 "slab": TRAY_SLAB},
        "colours": colours,
    }


def _checker_colours(colour: Colour) -> tuple[str, str, str]:
    """Fill, rim and the colour of a tall stack's count (as the picture writes it)."""
    fill, rim = CHECKER_COLOURS[colour]
    return fill, rim, rim if colour is Colour.WHITE else PAPER


def checker_counts(view: BoardView) -> dict[str, list[int]]:
    """Checkers per viewer's own point (index 0 = off, 25 = bar) for each side."""
    position = view.position
    mine = [position.mover_off, *position.mover[:24], position.mover[BAR_INDEX]]
    theirs = [position.opponent_off, *(position.opponent[24 - point] for point in range(1, 25)),
              position.opponent[BAR_INDEX]]
    return {"me": mine, "them": theirs}


def render_board_svg(view: BoardView, language: str) -> str:
    """The board as an SVG element (to be placed in an HTML page), with captions in ``language``."""
    layout = board_layout(view)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="board" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(picture.board_alt(view, language))}">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="{PAPER}"/>',
        f'<rect x="0" y="{BOARD_TOP}" width="{WIDTH}" height="{BOARD_H}" fill="{WOOD}"/>',
    ]
    for half in (0, 6):
        left = picture._column_x(half)
        parts.append(f'<rect x="{left}" y="{TOP_EDGE}" width="{6 * POINT}" height="{BOTTOM_EDGE - TOP_EDGE}" '
                     f'fill="{FELT}"/>')
    parts += _points(view)
    parts.append(f'<rect class="zone" data-point="{OFF}" x="{WIDTH - SIDE_W}" y="{TOP_EDGE}" width="{SIDE_W}" '
                 f'height="{BOTTOM_EDGE - TOP_EDGE}" fill="transparent"/>')
    parts.append('<g id="checkers">')
    parts += checker_elements(view, layout)
    parts.append("</g>")
    parts += _marks(view, layout)
    if view.dice and view.turn is not None:
        parts += _dice(view.dice, view.colour if view.turn is Who.VIEWER else other_colour(view.colour),
                       right=view.turn is Who.VIEWER)
    parts += _cube(view)
    parts += _captions(view, language)
    parts.append("</svg>")
    return "\n".join(parts)


def _home_on_top(view: BoardView) -> bool:
    return point_label(1, view.numbering, view.colour) in LAYOUTS[view.numbering].top


def _points(view: BoardView) -> list[str]:
    """The 24 triangles with their labels, each with a drop zone over its half of the board."""
    parts = []
    layout = LAYOUTS[view.numbering]
    for row, labels in enumerate((layout.top, layout.bottom)):
        for column, label in enumerate(labels):
            point = own_point(label, view.numbering, view.colour)
            x = picture._column_x(column)
            base, tip = ((TOP_EDGE, TOP_EDGE + HALF_H - 6) if row == 0
                         else (BOTTOM_EDGE, BOTTOM_EDGE - HALF_H + 6))
            parts.append(f'<polygon class="point" data-point="{point}" data-label="{label}" points="{x + 2},{base} {x + POINT - 2},{base} '
                         f'{x + POINT / 2},{tip}" fill="{POINT_SHADES[column % 2]}"/>')
            zone_y = TOP_EDGE if row == 0 else MIDDLE
            parts.append(f'<rect class="zone" data-point="{point}" x="{x}" y="{zone_y}" width="{POINT}" '
                         f'height="{MIDDLE - TOP_EDGE}" fill="transparent"/>')
            y = BOARD_TOP - LABELS // 2 if row == 0 else BOARD_TOP + BOARD_H + LABELS // 2
            parts.append(f'<text x="{x + POINT / 2}" y="{y}" class="label" fill="{LABEL}" font-size="15" '
                         f'text-anchor="middle" dominant-baseline="central">{label}</text>')
    return parts


def checker_elements(view: BoardView, layout: dict[str, Any]) -> list[str]:
    """The checkers and the borne-off slabs, as the page's script draws them too (board.js)."""
    counts = checker_counts(view)
    parts = []
    for side in ("me", "them"):
        fill, rim, ink = layout["colours"][side]
        for point in range(1, 26):
            count = counts[side][point]
            places = layout["places"][side][point]
            for place in range(min(count, ROWS)):
                x, y = places[place]
                tall = count > ROWS and place == ROWS - 1
                parts.append(_checker(side, point, x, y, (fill, rim, ink), str(count) if tall else None))
        tray = layout["tray"]
        for index in range(counts[side][OFF]):
            y = tray["top"] + index * TRAY_SLAB if tray[side]["top"] else tray["bottom"] - (index + 1) * TRAY_SLAB
            parts.append(f'<rect class="off {side}" x="{tray["left"]}" y="{y + 1}" width="{tray["right"] - tray["left"]}" '
                         f'height="{TRAY_SLAB - 2}" fill="{fill}" stroke="{rim}"/>')
    return parts


def _checker(side: str, point: int, x: int, y: int, colours: tuple[str, str, str], count: str | None) -> str:
    fill, rim, ink = colours
    half = CHECKER / 2
    label = ""
    if count is not None:
        label = (f'<text x="{half}" y="{half + 1}" font-size="17" font-weight="bold" text-anchor="middle" '
                 f'dominant-baseline="central" fill="{ink}">'
                 f'{count}</text>')
    return (f'<g class="checker {side}" data-point="{point}" transform="translate({x},{y})">'
            f'<circle cx="{half}" cy="{half}" r="{half - 1}" fill="{rim}"/>'
            f'<circle cx="{half}" cy="{half}" r="{half - 3}" fill="{fill}"/>'
            f'<circle cx="{half}" cy="{half}" r="{half - 10}" fill="none" stroke="{rim}"/>{label}</g>')


def _marks(view: BoardView, layout: dict[str, Any]) -> list[str]:
    """The opponent's last move: amber rings on the checkers that arrived, dashed ones where
    checkers left (as in the picture)."""
    marks = move_marks(view)
    counts = checker_counts(view)
    half = CHECKER / 2
    parts = []
    for point, arrived in marks.arrived.items():
        count = min(counts["them"][point], ROWS)
        for place in range(max(0, count - arrived), count):
            x, y = layout["places"]["them"][point][place]
            parts.append(f'<circle class="mark arrived" cx="{x + half}" cy="{y + half}" r="{half - 1}" fill="none" '
                         f'stroke="{MARK}" stroke-width="4"/>')
    for point, departed in marks.departed.items():
        count = min(counts["them"][point], ROWS)
        for place in range(count, min(ROWS, count + departed)):
            x, y = layout["places"]["them"][point][place]
            parts.append(f'<circle class="mark departed" cx="{x + half}" cy="{y + half}" r="{half - 3}" fill="none" '
                         f'stroke="{MARK}" stroke-width="3" stroke-dasharray="6 4"/>')
    return parts


def _dice(dice: tuple[int, int], colour: Colour, right: bool) -> list[str]:
    fill, rim = CHECKER_COLOURS[colour]
    pip = CHECKER_COLOURS[other_colour(colour)][0] if colour is Colour.BLACK else rim
    centre = picture._column_x(9 if right else 3)
    parts = []
    for index, value in enumerate(dice):
        x, y = centre - _DIE - 4 + index * (_DIE + 8), MIDDLE - _DIE // 2
        parts.append(f'<g class="die" transform="translate({x},{y})"><rect width="{_DIE}" height="{_DIE}" rx="7" '
                     f'fill="{fill}" stroke="{rim}" stroke-width="2"/>')
        step = _DIE / 4
        parts += [f'<circle cx="{column * step}" cy="{row * step}" r="3.4" fill="{pip}"/>'
                  for column, row in _PIPS[value]]
        parts.append("</g>")
    return parts


def _cube(view: BoardView) -> list[str]:
    size, value = picture.CUBE, shown_cube_value(view)
    x, y = picture.cube_corner(view, _home_on_top(view))
    offered = view.cube_offered is not None
    return [f'<g class="cube"><rect x="{x}" y="{y}" width="{size}" height="{size}" rx="5" fill="{PAPER}" '
            f'stroke="{MARK if offered else INK}" stroke-width="{4 if offered else 2}"/>'
            f'<text x="{x + size / 2}" y="{y + size / 2 + 1}" font-size="{18 if value < 10 else 15}" font-weight="bold" '
            f'text-anchor="middle" dominant-baseline="central" fill="{INK}">{value}</text></g>']


def _captions(view: BoardView, language: str) -> list[str]:
    captions = picture._caption_texts(view, language)
    home_on_top = _home_on_top(view)
    top, bottom = (Who.VIEWER, Who.OPPONENT) if home_on_top else (Who.OPPONENT, Who.VIEWER)
    colours = {Who.VIEWER: view.colour, Who.OPPONENT: other_colour(view.colour)}
    parts = [_text(8, LINE // 2, str(captions["score"]), "score")]
    for who, y in ((top, LINE + LINE // 2), (bottom, HEIGHT - LINE - LINE // 2)):
        fill, rim = CHECKER_COLOURS[colours[who]]
        parts.append(f'<circle cx="17" cy="{y}" r="9" fill="{fill}" stroke="{rim}" stroke-width="2"/>')
        parts.append(_text(34, y, str(captions[who]), "caption"))
    if captions["last"] is not None:
        parts.append(_text(34, HEIGHT - LINE // 2, str(captions["last"]), "last-move"))
    return parts


def _text(x: int, y: int, text: str, name: str) -> str:
    return (f'<text class="{name}" x="{x}" y="{y}" font-size="16" font-weight="bold" fill="{INK}" '
            f'dominant-baseline="central">{escape(text)}</text>')

