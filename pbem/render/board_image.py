"""The board as a PNG picture for the HTML part of a game mail, drawn with Pillow.

It is drawn from the same :class:`~pbem.render.text_board.BoardView` as the text board, in the
same orientation, so that both always show the same facts: the 24 points labelled in the
viewer's numbering, the checkers (a tall stack shows its count), the bar, the borne-off
checkers in the tray, the dice just rolled, the cube with its value beside its owner, the pip
counts and the opponent's last move (dashed rings where checkers left, amber rings on the
checkers that arrived).  The captions come from ``templates/<language>/picture.txt``.

The same view always gives the same picture: the font is a fixed file (DejaVu Sans Bold, which
``.ci/run`` installs, else the font Pillow ships), nothing depends on the time, and the PNG is
written without metadata.  Its bytes may differ from one drawing to the next: ISA-L's deflate
now and then picks other, equally valid matches for the same rows (and picks its code by the
CPU).  The parts that never change (the board with its points and labels, anti-aliased checker
and dice sprites) are drawn once per process; a fixed palette keeps the file near 30 kB.  A
picture is the empty board in that palette with a kept tile pasted over each part that shows
something (see :func:`draw_board_png`): about 1.5 ms, a third of it the PNG.  A picture once
drawn is kept (a bounded LRU keyed on the whole view and the language: the position, the
marks of the last move, dice, cube, score and names), so a board shown again costs nothing.
"""

from __future__ import annotations

import struct
import threading
import zlib
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from isal import isal_zlib
from PIL import Image, ImageDraw, ImageFont

from pbem.render.templating import environment
from pbem.render.text_board import (
    LAYOUTS, ROWS, BoardView, Who, cube_holder, format_last_move, move_marks, other_colour, shorten,
    shown_cube_value,
)
from pbem.rules.moves import BAR_POINT
from pbem.rules.notation import Colour, Numbering, own_point, point_label
from pbem.rules.position import BAR as BAR_INDEX

FONT_PATH = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
"""Debian's fonts-dejavu-core; without it Pillow's own font is used (same size, other shapes)."""

WIDTH = 640
"""Wide enough for 43-pixel points, narrow enough to show whole on a phone."""
POINT = 43
CHECKER = 40
BAR_W = 36
SIDE_W = (WIDTH - 12 * POINT - BAR_W) // 2
"""The cube column on the left and the tray for borne-off checkers on the right."""
LINE = 30
"""One caption line: the score on top, then the top player; the bottom player, then the last move."""
LABELS = 24
FRAME = 8
GAP = 44
HALF_H = ROWS * CHECKER
BOARD_TOP = 2 * LINE + LABELS
BOARD_H = 2 * FRAME + 2 * HALF_H + GAP
HEIGHT = BOARD_TOP + BOARD_H + LABELS + 2 * LINE
TOP_EDGE = BOARD_TOP + FRAME
BOTTOM_EDGE = BOARD_TOP + FRAME + 2 * HALF_H + GAP
MIDDLE = (TOP_EDGE + BOTTOM_EDGE) // 2

_PAPER = (255, 255, 255)
_INK = (34, 34, 34)
_WOOD = (92, 58, 38)
_FELT = (46, 107, 79)
_POINTS = ((222, 196, 140), (150, 52, 44))
_LABEL = (90, 90, 90)
_MARK = (255, 196, 0)
_CHECKERS = {Colour.WHITE: ((245, 241, 230), (60, 60, 60)), Colour.BLACK: ((40, 40, 44), (0, 0, 0))}
"""Fill and rim of each colour's checkers; the viewer plays their own colour."""
_SCALE = 4
"""Sprites are drawn this much larger and scaled down, for smooth edges."""
PICTURES_KEPT = 256
"""How many pictures :func:`render_board_png` keeps (about 25 kB each)."""


def render_board_png(view: BoardView, language: str) -> bytes:
    """The picture of ``view`` as PNG bytes, with captions in ``language`` (kept: the same
    view and language give the same bytes without drawing again)."""
    try:
        hash(view)
    except TypeError:  # a list where a tuple belongs: drawn, not kept
        return draw_board_png(view, language)
    return _kept_png(view, language)


@lru_cache(maxsize=PICTURES_KEPT)
def _kept_png(view: BoardView, language: str) -> bytes:
    return draw_board_png(view, language)


def draw_board_png(view: BoardView, language: str) -> bytes:
    """The picture of ``view`` as PNG bytes, drawn now (:func:`render_board_png` keeps them).

    It is the empty board, drawn and mapped to the palette once, with a tile pasted over each
    part that shows something: a point's checkers, the bar, the tray, the dice, the cube, a
    caption line.  Every part stays inside its own rectangle and the palette maps each pixel on
    its own, so the tiles give the very pixels of drawing the whole picture and mapping it at
    once (``tests/render/test_board_image.py`` compares them); a tile recurs from picture to
    picture (two checkers on a point, a player's line of captions) and is kept."""
    image = _indexed_background(view.numbering).copy()
    for at, part in _parts(view, language):
        image.paste(_tile(view.numbering, part) if part[0] != _CAPTION else _caption_tile(part), at)
    return _png(image)


Part = tuple[Any, ...]
"""What one tile shows: its kind first, then all it depends on (hashable: tiles are kept)."""
_STACK, _BAR, _TRAY, _DICE, _CUBE, _CAPTION = "stack", "bar", "tray", "dice", "cube", "caption"


def _parts(view: BoardView, language: str) -> list[tuple[tuple[int, int], Part]]:
    """The tiles of ``view`` and where each goes (its rectangle's top left corner)."""
    parts: list[tuple[tuple[int, int], Part]] = []
    layout = LAYOUTS[view.numbering]
    home_on_top = point_label(1, view.numbering, view.colour) in layout.top
    marks = move_marks(view)
    colours = {Who.VIEWER: view.colour, Who.OPPONENT: other_colour(view.colour)}
    beside_bar: dict[bool, list[tuple[int, Part]]] = {True: [], False: []}
    for row, labels in enumerate((layout.top, layout.bottom)):
        for column, label in enumerate(labels):
            point = own_point(label, view.numbering, view.colour)
            mine, theirs = view.position.mover[point - 1], view.position.opponent[24 - point]
            who, count = (Who.VIEWER, mine) if mine else (Who.OPPONENT, theirs)
            arrived = marks.arrived.get(point, 0) if who is Who.OPPONENT else 0
            departed = marks.departed.get(point, 0)
            if count or departed:
                # Points of one shade look alike: the tile is drawn on column 0 or 1 and kept for all.
                part = (_STACK, column % 2, row == 0, colours[who], count, arrived, departed)
                parts.append(((_column_x(column), _point_box(column % 2, row == 0)[1]), part))
                if column in (5, 6):
                    beside_bar[row == 0].append((column, part))
    top, bottom = (Who.VIEWER, Who.OPPONENT) if home_on_top else (Who.OPPONENT, Who.VIEWER)
    for who, on_top in ((top, True), (bottom, False)):
        side = view.position.mover if who is Who.VIEWER else view.position.opponent
        departed = marks.departed.get(BAR_POINT, 0) if who is Who.OPPONENT else 0
        if side[BAR_INDEX] or departed:
            # The points beside the bar are drawn under its checkers, where these overlap them.
            parts.append((_bar_box(on_top)[:2], (_BAR, on_top, colours[who], side[BAR_INDEX], departed,
                                                 tuple(beside_bar[on_top]))))
        off = view.position.mover_off if who is Who.VIEWER else view.position.opponent_off
        if off:
            parts.append((_tray_box(on_top)[:2], (_TRAY, on_top, colours[who], off)))
    if view.dice and view.turn is not None:
        right = view.turn is Who.VIEWER
        parts.append((_dice_box(right)[:2], (_DICE, tuple(view.dice), colours[view.turn], right)))
    corner = cube_corner(view, home_on_top)
    parts.append((corner, (_CUBE, corner, shown_cube_value(view), view.cube_offered is not None)))
    captions = _caption_texts(view, language)
    parts.append(((0, 0), (_CAPTION, 0, None, str(captions["score"]))))
    for who, line in ((top, 1), (bottom, 2)):
        parts.append(((0, _caption_y(line)), (_CAPTION, line, colours[who], str(captions[who]))))
    if captions["last"] is not None:
        parts.append(((0, _caption_y(3)), (_CAPTION, 3, None, str(captions["last"]))))
    return parts


TILES_KEPT = 1024
"""How many tiles of the board are kept (a point's checkers: 8.6 kB at most)."""
CAPTIONS_KEPT = 256
"""How many caption lines are kept as tiles (19 kB each): the score line recurs all game long."""


@lru_cache(maxsize=TILES_KEPT)
def _tile(numbering: Numbering, part: Part) -> Image.Image:
    """One part of the board drawn over the empty board and mapped to the palette."""
    with _CANVAS_LOCK:
        image = _canvas(numbering)
        try:
            box, drawn = _draw_part(image, part)
            tile = image.crop(box)
            image.paste(_background(numbering).crop(drawn), drawn[:2])  # the canvas is the empty board again
        except BaseException:
            image.paste(_background(numbering))  # a part that could not be drawn may have drawn anything
            raise
    return _indexed(tile)


_CANVAS_LOCK = threading.Lock()
"""One part at a time is drawn on the canvas (mails are answered in several threads)."""


@cache
def _canvas(numbering: Numbering) -> Image.Image:
    """The empty board to draw a part on: a part's rectangle is copied out, then painted over
    with the empty board again (copying a whole picture for every part drawn costs more)."""
    return _background(numbering).copy()


def _draw_part(image: Image.Image, part: Part) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """Draw ``part`` where it goes; its rectangle, and the rectangle of all that was drawn."""
    draw = ImageDraw.Draw(image)
    kind, *facts = part
    if kind == _STACK:
        shade, on_top, colour, count, arrived, departed = facts
        box = _point_box(shade, on_top)
        _stack(image, [_point_place(shade, on_top, place) for place in range(ROWS)], colour, count, arrived, departed)
    elif kind == _BAR:
        on_top, colour, count, departed, beside = facts
        box = _bar_box(on_top)
        for column, (_, _, _, their_colour, their_count, arrived, their_departed) in beside:
            _stack(image, [_point_place(column, on_top, place) for place in range(ROWS)], their_colour, their_count,
                   arrived, their_departed)
        _stack(image, [_bar_place(on_top, place) for place in range(ROWS)], colour, count, 0, departed)
        return box, (_point_box(5, on_top)[0], box[1], _point_box(6, on_top)[2], box[3])
    elif kind == _TRAY:
        on_top, colour, off = facts
        box = _tray_box(on_top)
        _tray(draw, colour, off, on_top)
    elif kind == _DICE:
        dice, colour, right = facts
        box = _dice_box(right)
        _dice(image, dice, colour, right)
    else:
        corner, value, offered = facts
        box = (*corner, corner[0] + CUBE + 1, corner[1] + CUBE + 1)
        _cube(draw, corner, value, offered)
    return box, box


@lru_cache(maxsize=CAPTIONS_KEPT)
def _caption_tile(part: Part) -> Image.Image:
    """One line of captions (the score; a player's, with a checker of their colour; the last move)."""
    _, line, colour, text = part
    y = LINE // 2
    image = Image.new("RGB", (WIDTH, LINE), _PAPER)
    draw = ImageDraw.Draw(image)
    if colour is not None:
        fill, rim = _CHECKERS[colour]
        draw.ellipse((8, y - 9, 26, y + 9), fill=fill, outline=rim, width=2)
    draw.text((8 if line == 0 else 34, y), text, fill=_INK, font=_font(16), anchor="lm")
    return _indexed(image)


def _caption_y(line: int) -> int:
    """The top of caption line ``line``: the score and the top player above the board, the
    bottom player and the last move below it."""
    return (0, LINE, HEIGHT - 2 * LINE, HEIGHT - LINE)[line]


# -- geometry ------------------------------------------------------------------------------


def _column_x(column: int) -> int:
    """The left edge of the point in ``column`` (0-11, left to right)."""
    return SIDE_W + column * POINT + (BAR_W if column >= 6 else 0)


def _point_place(column: int, on_top: bool, place: int) -> tuple[int, int]:
    """The top-left corner of the checker ``place`` steps from the edge on a point."""
    x = _column_x(column) + (POINT - CHECKER) // 2
    return x, (TOP_EDGE + place * CHECKER if on_top else BOTTOM_EDGE - (place + 1) * CHECKER)


def _point_box(column: int, on_top: bool) -> tuple[int, int, int, int]:
    """The rectangle of a point's checkers (and its marks): the point's width, half the board's height."""
    y = TOP_EDGE if on_top else BOTTOM_EDGE - HALF_H
    return _column_x(column), y, _column_x(column) + POINT, y + HALF_H


def _bar_box(on_top: bool) -> tuple[int, int, int, int]:
    """A checker is wider than the bar: its rectangle overlaps the points beside it by two pixels,
    so the bar's tiles go on after theirs and show those points' checkers under its own."""
    x, y = _bar_place(on_top, ROWS - 1 if on_top else 0)
    return x, y, x + CHECKER, y + HALF_H


def _tray_box(on_top: bool) -> tuple[int, int, int, int]:
    y = TOP_EDGE if on_top else BOTTOM_EDGE - HALF_H
    return WIDTH - SIDE_W, y, WIDTH, y + HALF_H


def _dice_box(right: bool) -> tuple[int, int, int, int]:
    centre = _column_x(9 if right else 3)
    return centre - _DIE - 4, MIDDLE - _DIE // 2, centre + _DIE + 4, MIDDLE - _DIE // 2 + _DIE


def _bar_place(on_top: bool, place: int) -> tuple[int, int]:
    """Checkers on the bar stack from the middle outwards, in their owner's half."""
    x = SIDE_W + 6 * POINT + (BAR_W - CHECKER) // 2
    inner = TOP_EDGE + HALF_H if on_top else BOTTOM_EDGE - HALF_H
    return x, (inner - (place + 1) * CHECKER if on_top else inner + place * CHECKER)


# -- the parts that never change -------------------------------------------------------------


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    if FONT_PATH.is_file():
        return ImageFont.truetype(str(FONT_PATH), size)
    return ImageFont.load_default(size=size)


@cache
def _background(numbering: object) -> Image.Image:
    """Paper, frame, felt, the 24 points and their labels for one numbering."""
    image = Image.new("RGB", (WIDTH, HEIGHT), _PAPER)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, BOARD_TOP, WIDTH - 1, BOARD_TOP + BOARD_H - 1), fill=_WOOD)
    for half in (0, 6):
        left = _column_x(half)
        draw.rectangle((left, TOP_EDGE, left + 6 * POINT - 1, BOTTOM_EDGE - 1), fill=_FELT)
    layout = LAYOUTS[numbering]  # type: ignore[index]  # the lru_cache key is a Numbering
    font = _font(15)
    for row, labels in enumerate((layout.top, layout.bottom)):
        for column, label in enumerate(labels):
            x = _column_x(column)
            image.paste(_triangle(column % 2, row == 0), (x, TOP_EDGE if row == 0 else BOTTOM_EDGE - HALF_H),
                        _triangle(column % 2, row == 0))
            y = BOARD_TOP - LABELS // 2 if row == 0 else BOARD_TOP + BOARD_H + LABELS // 2
            draw.text((x + POINT / 2, y), str(label), fill=_LABEL, font=font, anchor="mm")
    return image


@cache
def _triangle(shade: int, pointing_down: bool) -> Image.Image:
    """One point, anti-aliased, as an RGBA sprite."""
    width, height = POINT * _SCALE, (HALF_H - 6) * _SCALE
    big = Image.new("RGBA", (width, HALF_H * _SCALE), (0, 0, 0, 0))
    inset = 2 * _SCALE
    base, tip = (0, height) if pointing_down else (HALF_H * _SCALE, HALF_H * _SCALE - height)
    ImageDraw.Draw(big).polygon(
        [(inset, base), (width - inset, base), (width // 2, tip)], fill=_POINTS[shade] + (255,)
    )
    return big.resize((POINT, HALF_H), Image.Resampling.LANCZOS)


@cache
def _checker(colour: Colour, marked: bool) -> Image.Image:
    """A checker sprite; a marked one (arrived with the last move) has an amber ring."""
    fill, rim = _CHECKERS[colour]
    size = CHECKER * _SCALE
    big = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    draw = ImageDraw.Draw(big)
    draw.ellipse((_SCALE, _SCALE, size - _SCALE, size - _SCALE), fill=rim + (255,))
    draw.ellipse((3 * _SCALE, 3 * _SCALE, size - 3 * _SCALE, size - 3 * _SCALE), fill=fill + (255,))
    inner = 10 * _SCALE
    draw.ellipse((inner, inner, size - inner, size - inner), outline=rim + (255,), width=_SCALE)
    if marked:
        draw.ellipse((0, 0, size - 1, size - 1), outline=_MARK + (255,), width=4 * _SCALE)
    return big.resize((CHECKER, CHECKER), Image.Resampling.LANCZOS)


@cache
def _ghost() -> Image.Image:
    """Where a checker of the opponent's last move started: a dashed amber ring."""
    size = CHECKER * _SCALE
    big = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    draw = ImageDraw.Draw(big)
    box = (3 * _SCALE, 3 * _SCALE, size - 3 * _SCALE, size - 3 * _SCALE)
    for start in range(0, 360, 30):
        draw.arc(box, start, start + 18, fill=_MARK + (255,), width=3 * _SCALE)
    return big.resize((CHECKER, CHECKER), Image.Resampling.LANCZOS)


_PIPS = {1: ((2, 2),), 2: ((1, 1), (3, 3)), 3: ((1, 1), (2, 2), (3, 3)), 4: ((1, 1), (1, 3), (3, 1), (3, 3)),
         5: ((1, 1), (1, 3), (2, 2), (3, 1), (3, 3)), 6: ((1, 1), (1, 2), (1, 3), (3, 1), (3, 2), (3, 3))}
_DIE = 34


@cache
def _die(colour: Colour, value: int) -> Image.Image:
    """A die in the roller's colour, pips in the other."""
    fill, rim = _CHECKERS[colour]
    pip = _CHECKERS[other_colour(colour)][0] if colour is Colour.BLACK else rim
    size = _DIE * _SCALE
    big = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    draw = ImageDraw.Draw(big)
    draw.rounded_rectangle((0, 0, size - 1, size - 1), radius=7 * _SCALE, fill=rim + (255,))
    draw.rounded_rectangle((2 * _SCALE, 2 * _SCALE, size - 2 * _SCALE, size - 2 * _SCALE), radius=6 * _SCALE,
                           fill=fill + (255,))
    step, radius = size / 4, 3.4 * _SCALE
    for column, row in _PIPS[value]:
        x, y = column * step, row * step
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=pip + (255,))
    return big.resize((_DIE, _DIE), Image.Resampling.LANCZOS)


# -- what changes -----------------------------------------------------------------------------


def _stack(image: Image.Image, places: list[tuple[int, int]], colour: Colour, count: int, arrived: int,
           departed: int) -> None:
    """Checkers from the edge inwards, the count on the last if taller; then the marks."""
    shown = min(count, ROWS)
    for place in range(shown):
        sprite = _checker(colour, marked=place >= shown - arrived)
        image.paste(sprite, places[place], sprite)
    if count > ROWS:
        x, y = places[ROWS - 1]
        fill, rim = _CHECKERS[colour]
        draw = ImageDraw.Draw(image)
        draw.ellipse((x + 8, y + 8, x + CHECKER - 9, y + CHECKER - 9), fill=fill)
        draw.text((x + CHECKER / 2, y + CHECKER / 2), str(count), font=_font(17),
                  fill=rim if colour is Colour.WHITE else _PAPER, anchor="mm")
    for place in range(shown, min(ROWS, shown + departed)):
        image.paste(_ghost(), places[place], _ghost())


def _tray(draw: ImageDraw.ImageDraw, colour: Colour, off: int, on_top: bool) -> None:
    """Borne-off checkers as slabs in the right-hand tray, from the owner's edge."""
    fill, rim = _CHECKERS[colour]
    left = WIDTH - SIDE_W + 6
    for index in range(off):
        y = TOP_EDGE + index * 12 if on_top else BOTTOM_EDGE - (index + 1) * 12
        draw.rectangle((left, y + 1, WIDTH - 7, y + 10), fill=fill, outline=rim)


def _dice(image: Image.Image, dice: tuple[int, int], colour: Colour, right: bool) -> None:
    """The roll in the middle of the roller's half: the right one for the viewer."""
    centre = _column_x(9 if right else 3)
    for index, value in enumerate(dice):
        x = centre - _DIE - 4 + index * (_DIE + 8)
        sprite = _die(colour, value)
        image.paste(sprite, (x, MIDDLE - _DIE // 2), sprite)


CUBE = 34
"""The cube's side."""


def cube_corner(view: BoardView, home_on_top: bool) -> tuple[int, int]:
    """The top left corner of the cube in the left column: at its owner's edge, in the middle
    while nobody owns it (the picture and the web page's SVG put it at the same place)."""
    holder = cube_holder(view)
    if holder is None:
        y = MIDDLE - CUBE // 2
    elif (holder is Who.VIEWER) == home_on_top:
        y = TOP_EDGE + 2
    else:
        y = BOTTOM_EDGE - CUBE - 2
    return (SIDE_W - CUBE) // 2, y


def _cube(draw: ImageDraw.ImageDraw, corner: tuple[int, int], value: int, offered: bool) -> None:
    """The cube at ``corner`` (:func:`cube_corner`); an offered cube at twice its value, ringed in
    amber, at the edge of the player to take it."""
    size = CUBE
    x, y = corner
    draw.rounded_rectangle((x, y, x + size, y + size), radius=5, fill=_PAPER, outline=_MARK if offered else _INK,
                           width=4 if offered else 2)
    draw.text((x + size / 2, y + size / 2 + 1), str(value), fill=_INK, font=_font(18 if value < 10 else 15),
              anchor="mm")


def board_alt(view: BoardView, language: str) -> str:
    """The picture's facts in one line, for the ``alt`` text of the HTML ``<img>``."""
    captions = _caption_texts(view, language)
    names = (shorten(view.viewer_name), shorten(view.opponent_name)) if view.spectator else None
    return str(_texts(language).alt(captions[Who.VIEWER], captions[Who.OPPONENT], view.dice, view.cube_value,
                                    view.cube_owner, captions["last"], view.cube_offered, names)).strip()


@cache
def _texts(language: str) -> Any:
    """The picture's wording (macros only, so one module per language serves every picture)."""
    return environment().get_template(f"{language}/picture.txt").make_module({"language": language})


def _caption_texts(view: BoardView, language: str) -> dict[object, str | None]:
    """The caption of each player, the score and the opponent's last move (None: none)."""
    module = _texts(language)
    position = view.position
    viewer, opponent = shorten(view.viewer_name), shorten(view.opponent_name)
    last = format_last_move(view)
    return {
        Who.VIEWER: str(module.player(viewer, not view.spectator, position.mover_pips, position.mover_off)).strip(),
        Who.OPPONENT: str(module.player(opponent, False, position.opponent_pips, position.opponent_off)).strip(),
        "score": str(module.score(view.score, viewer, opponent)).strip(),
        "last": None if last is None else str(module.last_move(opponent, last)).strip(),
    }


def _indexed(image: Image.Image) -> Image.Image:
    """``image`` in the fixed palette, each pixel mapped to its nearest colour on its own."""
    return image.quantize(palette=_palette(), dither=Image.Dither.NONE)


@cache
def _indexed_background(numbering: Numbering) -> Image.Image:
    return _indexed(_background(numbering))


def _png(indexed: Image.Image) -> bytes:
    """A palette PNG without metadata: small, and the same pixels for the same picture.

    Pillow writes the same pixels, but its zlib deflate made it most of a picture's cost (1.5
    ms here); with ISA-L's deflate (python-isal) the file takes 0.45 ms and is 4 % larger.
    PNG's own framing is four chunks: the header, the palette, the deflated rows, the end."""
    width, height = indexed.size
    palette = indexed.getpalette()
    assert palette is not None, "a picture mapped to the palette has one"
    return b"".join((
        _PNG_SIGNATURE,
        _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)),  # 8 bits, palette
        _png_chunk(b"PLTE", bytes(palette)),
        _png_chunk(b"IDAT", _deflated_rows(indexed)),
        _png_chunk(b"IEND", b""),
    ))


_BAND = 64
"""Rows copied at a time into the kept buffer of rows (see :func:`_deflated_rows`)."""
_ROWS = threading.local()
"""Each thread's buffer of a picture's rows, kept from picture to picture."""


def _deflated_rows(indexed: Image.Image) -> bytes:
    """The picture's rows as one zlib stream, each row after its filter byte (0: none; a
    palette picture is not filtered).

    A band of rows at a time is pasted one pixel right of a column of zeros and copied into
    a buffer the thread keeps; the buffer is deflated at once.  A new 400 kB buffer for every
    picture is mapped afresh by glibc (some 250 page faults, half a millisecond on this VM).
    ISA-L writes other, equally valid bytes for the same rows now and then: fed the bands one
    by one, in about one test process in ten; at once, in one stress run of some 280."""
    width, height = indexed.size
    size = (width + 1) * height
    rows: bytearray | None = getattr(_ROWS, "buffer", None)
    if rows is None or len(rows) < size:
        rows = _ROWS.buffer = bytearray(size)
    band = Image.new("P", (width + 1, _BAND), 0)
    for top in range(0, height, _BAND):
        bottom = min(top + _BAND, height)
        band.paste(indexed.crop((0, top, width, bottom)), (1, 0))
        rows[top * (width + 1):bottom * (width + 1)] = (
            band if bottom - top == _BAND else band.crop((0, 0, width + 1, bottom - top))).tobytes()
    return isal_zlib.compress(memoryview(rows)[:size], 1)


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: its length, kind, data and the CRC of kind and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def _blend(first: tuple[int, int, int], second: tuple[int, int, int], share: float) -> tuple[int, int, int]:
    red, green, blue = (round(a + (b - a) * share) for a, b in zip(first, second))
    return red, green, blue


@cache
def _palette() -> Image.Image:
    """Every colour drawn, and three blends of each pair for the anti-aliased edges.

    A fixed palette maps a picture in well under a millisecond, where finding one per picture
    takes five to twenty-five.
    """
    base = [_PAPER, _INK, _WOOD, _FELT, *_POINTS, _LABEL, _MARK,
            *(colour for pair in _CHECKERS.values() for colour in pair)]
    colours = list(dict.fromkeys(base))
    for index, first in enumerate(base):
        for second in base[index + 1:]:
            colours += [_blend(first, second, step / 4) for step in (1, 2, 3)]
    colours = list(dict.fromkeys(colours))[:256]
    palette = Image.new("P", (1, 1))
    palette.putpalette([channel for colour in colours for channel in colour])
    return palette
