"""The board picture: deterministic, small, and showing what the text board shows where it should."""

from __future__ import annotations

import dataclasses
import io
import random
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from PIL import Image, ImageDraw

from pbem.render import board_image as bi
from pbem.render.text_board import BoardView, LastMove, Score, Who
from pbem.rules import game as rules
from pbem.rules.moves import legal_plays
from pbem.rules.notation import Colour, Numbering
from pbem.rules.position import Position
from pbem.rules.scoring import Format, MatchRules
from pbem.rules.scoring import Score as MatchScore

from test_text_board import BEFORE_HIT, TALL, hit_view, side, start_view


def picture(view, language: str = "en") -> Image.Image:
    return Image.open(io.BytesIO(bi.render_board_png(view, language))).convert("RGB")


def pixels(png: bytes) -> tuple[bytes, list[int] | None]:
    """What a PNG shows: its palette indices and palette (ISA-L may deflate the same rows to
    other, equally valid bytes now and then, so pictures are compared by what they show)."""
    image = Image.open(io.BytesIO(png))
    return image.tobytes(), image.getpalette()


def near(colour: tuple[int, int, int], wanted: tuple[int, int, int], slack: int = 24) -> bool:
    return all(abs(a - b) <= slack for a, b in zip(colour, wanted))


def checker_centre(column: int, on_top: bool, place: int) -> tuple[int, int]:
    x, y = bi._point_place(column, on_top, place)
    return x + bi.CHECKER // 2 + 12, y + bi.CHECKER // 2  # between the rim and the inner ring


def test_same_view_same_bytes_small_and_phone_sized() -> None:
    view = hit_view(Numbering.OWN, Colour.WHITE)
    first, second = bi.render_board_png(view, "de"), bi.render_board_png(view, "de")
    assert first == second and first.startswith(b"\x89PNG")
    assert len(first) < 40_000
    assert Image.open(io.BytesIO(first)).size == (bi.WIDTH, bi.HEIGHT) == (640, bi.HEIGHT)
    assert bi.HEIGHT < 700
    assert bi.render_board_png(view, "en") != first, "the captions are in the reader's language"


def test_checkers_stand_on_the_points_of_the_viewers_numbering() -> None:
    # Own numbering, White: the viewer's 6 point is the bottom row's 7th column (12..1), 5 checkers;
    # the opponent's 5 checkers on the viewer's 12 point are bottom left.
    image = picture(start_view(Numbering.OWN, Colour.WHITE))
    white, black = bi._CHECKERS[Colour.WHITE][0], bi._CHECKERS[Colour.BLACK][0]
    assert near(image.getpixel(checker_centre(6, False, 4)), white)
    assert not near(image.getpixel(checker_centre(7, False, 0)), white)
    assert near(image.getpixel(checker_centre(0, False, 0)), black)
    # Fixed numbering, Black: the same viewer's checkers are black, on 19 (bottom row, 6th column).
    image = picture(start_view(Numbering.FIXED, Colour.BLACK))
    assert near(image.getpixel(checker_centre(5, False, 4)), black)
    assert near(image.getpixel(checker_centre(0, True, 0)), black), "Black's back checkers on 1"


def test_the_cube_moves_to_its_owner_and_the_dice_to_the_roller() -> None:
    view = hit_view(Numbering.OWN, Colour.WHITE)
    x = bi.SIDE_W // 2
    owned_by_opponent = picture(view)
    assert near(owned_by_opponent.getpixel((x, bi.TOP_EDGE + 8)), bi._PAPER, 8)
    centred = picture(dataclasses.replace(view, cube_owner=None))
    assert near(centred.getpixel((x, bi.MIDDLE - 12)), bi._PAPER, 8)
    assert near(centred.getpixel((x, bi.TOP_EDGE + 8)), bi._WOOD, 4)
    mine = picture(dataclasses.replace(view, cube_owner=Who.VIEWER))
    assert near(mine.getpixel((x, bi.BOTTOM_EDGE - 10)), bi._PAPER, 8)
    right_die = (bi._column_x(9) - 20, bi.MIDDLE - 10)
    left_die = (bi._column_x(3) - 20, bi.MIDDLE - 10)
    assert near(owned_by_opponent.getpixel(right_die), bi._CHECKERS[Colour.WHITE][0], 4)
    theirs = picture(dataclasses.replace(view, turn=Who.OPPONENT))
    assert near(theirs.getpixel(left_die), bi._CHECKERS[Colour.BLACK][0], 4)
    assert near(theirs.getpixel(right_die), bi._FELT, 4)
    assert near(picture(dataclasses.replace(view, dice=None)).getpixel(right_die), bi._FELT, 4)


def amber(image: Image.Image, box: tuple[int, int, int, int]) -> int:
    return sum(near(image.getpixel((x, y)), bi._MARK, 40) for x in range(box[0], box[2]) for y in range(box[1], box[3]))


def test_the_opponents_last_move_is_marked_where_it_left_and_arrived() -> None:
    # Ben played 13/8 6/5*: from the viewer's 12 and 19, to the viewer's 17 and 20.
    view = hit_view(Numbering.OWN, Colour.WHITE)
    marked, plain = picture(view), picture(dataclasses.replace(view, last_move=None))

    def place_box(column: int, on_top: bool, place: int) -> tuple[int, int, int, int]:
        x, y = bi._point_place(column, on_top, place)
        return x, y, x + bi.CHECKER, y + bi.CHECKER

    for box in (place_box(0, False, 4), place_box(6, True, 4), place_box(4, True, 3), place_box(7, True, 0)):
        assert amber(marked, box) > 40 and amber(plain, box) == 0, box
    assert amber(marked, place_box(9, True, 0)) == 0


def test_tall_stacks_the_bar_and_the_tray() -> None:
    tall = dataclasses.replace(hit_view(Numbering.OWN, Colour.WHITE), position=TALL, last_move=None)
    image = picture(tall)
    bar_x = bi.SIDE_W + 6 * bi.POINT + bi.BAR_W // 2
    white, black = bi._CHECKERS[Colour.WHITE][0], bi._CHECKERS[Colour.BLACK][0]
    assert near(image.getpixel((bar_x + 12, bi.MIDDLE + bi.GAP // 2 + 20)), white), "the viewer's bar"
    assert near(image.getpixel((bar_x + 12, bi.MIDDLE - bi.GAP // 2 - 20)), black), "the opponent's bar"
    five_counted = picture(dataclasses.replace(tall, position=Position(mover=side(p6=5, bar=6), opponent=TALL.opponent)))
    assert five_counted != image, "9 on a point shows the count"
    bearing_off = Position(mover=side(p1=2), opponent=side(p23=1))
    image = picture(dataclasses.replace(tall, position=bearing_off))
    tray_x = bi.WIDTH - bi.SIDE_W // 2
    assert near(image.getpixel((tray_x, bi.BOTTOM_EDGE - 6)), white), "the viewer's borne-off checkers"
    assert near(image.getpixel((tray_x, bi.BOTTOM_EDGE - 12 * 12 - 6)), white)
    assert not near(image.getpixel((tray_x, bi.BOTTOM_EDGE - 12 * 13 - 6)), white), "13 off, no more"
    assert near(image.getpixel((tray_x, bi.TOP_EDGE + 12 * 13 + 6)), black), "14 of the opponent's off"
    assert not near(image.getpixel((tray_x, bi.TOP_EDGE + 12 * 14 + 6)), black)


def test_a_pass_is_captioned() -> None:
    view = dataclasses.replace(hit_view(Numbering.OWN, Colour.WHITE), last_move=LastMove(BEFORE_HIT, ()))
    assert bi.render_board_png(view, "en") != bi.render_board_png(
        dataclasses.replace(view, last_move=None), "en")


def test_a_picture_is_kept_per_view_and_language_and_the_store_is_bounded() -> None:
    view = hit_view(Numbering.FIXED, Colour.BLACK)
    bi._kept_png.cache_clear()
    first = bi.render_board_png(view, "en")
    assert bi.render_board_png(view, "en") is first, "drawn once, then kept"
    assert pixels(first) == pixels(bi.draw_board_png(view, "en")), "what is kept is what is drawn"
    assert bi.render_board_png(dataclasses.replace(view, dice=(6, 6)), "en") != first
    assert bi._kept_png.cache_info().maxsize == bi.PICTURES_KEPT


def _drawn_whole(view, language: str) -> bytes:
    """The picture drawn the plain way, as it was before tiles: every part on one RGB image in
    turn (points, bar, tray, dice, cube, captions), then the whole mapped to the palette."""
    image = bi._background(view.numbering).copy()
    draw = ImageDraw.Draw(image)
    layout = bi.LAYOUTS[view.numbering]
    home_on_top = bi.point_label(1, view.numbering, view.colour) in layout.top
    marks = bi.move_marks(view)
    colours = {Who.VIEWER: view.colour, Who.OPPONENT: bi.other_colour(view.colour)}
    for row, labels in enumerate((layout.top, layout.bottom)):
        for column, label in enumerate(labels):
            point = bi.own_point(label, view.numbering, view.colour)
            mine, theirs = view.position.mover[point - 1], view.position.opponent[24 - point]
            who, count = (Who.VIEWER, mine) if mine else (Who.OPPONENT, theirs)
            arrived = marks.arrived.get(point, 0) if who is Who.OPPONENT else 0
            places = [bi._point_place(column, row == 0, place) for place in range(bi.ROWS)]
            bi._stack(image, places, colours[who], count, arrived, marks.departed.get(point, 0))
    top, bottom = (Who.VIEWER, Who.OPPONENT) if home_on_top else (Who.OPPONENT, Who.VIEWER)
    for who, on_top in ((top, True), (bottom, False)):
        own = view.position.mover if who is Who.VIEWER else view.position.opponent
        departed = marks.departed.get(bi.BAR_POINT, 0) if who is Who.OPPONENT else 0
        bi._stack(image, [bi._bar_place(on_top, place) for place in range(bi.ROWS)], colours[who],
                  own[bi.BAR_INDEX], 0, departed)
        bi._tray(draw, colours[who], view.position.mover_off if who is Who.VIEWER else view.position.opponent_off,
                 on_top)
    if view.dice and view.turn is not None:
        bi._dice(image, view.dice, colours[view.turn], right=view.turn is Who.VIEWER)
    bi._cube(draw, bi.cube_corner(view, home_on_top), bi.shown_cube_value(view), view.cube_offered is not None)
    captions = bi._caption_texts(view, language)
    def write(at: tuple[int, int], text: object) -> None:
        draw.text(at, str(text), fill=bi._INK, font=bi._font(16), anchor="lm")

    write((8, bi.LINE // 2), captions["score"])
    for who, y in ((top, bi.LINE + bi.LINE // 2), (bottom, bi.HEIGHT - bi.LINE - bi.LINE // 2)):
        fill, rim = bi._CHECKERS[colours[who]]
        draw.ellipse((8, y - 9, 26, y + 9), fill=fill, outline=rim, width=2)
        write((34, y), captions[who])
    if captions["last"] is not None:
        write((34, bi.HEIGHT - bi.LINE // 2), captions["last"])
    return bi._png(bi._indexed(image))


def test_the_picture_from_kept_tiles_is_the_picture_drawn_whole() -> None:
    """Random games, every view after a play (hits, the bar beside its points' checkers, tall
    stacks, borne-off checkers, the marks of the last move), with random dice, cube, score, names."""
    rng, compared = random.Random(7), 0
    while compared < 160:
        game = rules.new_game(MatchScore(MatchRules()), (rng.randint(1, 6), rng.randint(1, 6)))
        while game is not None and game.phase is not rules.Phase.OVER and compared < 160:
            if game.phase is not rules.Phase.TO_MOVE:
                game = rules.roll(game, game.seat, (rng.randint(1, 6), rng.randint(1, 6)))
                continue
            assert game.dice is not None
            before, play = game.board, rng.choice(list(legal_plays(game.board, game.dice).values()) or [()])
            game = rules.play(game, game.seat, play)
            view = BoardView(
                position=game.board, numbering=rng.choice(list(Numbering)), colour=rng.choice(list(Colour)),
                viewer_name=rng.choice(["Anna", "Bärbel Müller-Lüdenscheidt"]), opponent_name=rng.choice(["Ben", "Zoë"]),
                turn=rng.choice([Who.VIEWER, Who.OPPONENT, None]),
                dice=rng.choice([None, (rng.randint(1, 6), rng.randint(1, 6))]), cube_value=rng.choice([1, 2, 64]),
                cube_owner=rng.choice([None, Who.VIEWER, Who.OPPONENT]),
                cube_offered=rng.choice([None, None, Who.VIEWER, Who.OPPONENT]),
                score=Score(rng.choice(list(Format)), 5, rng.randint(0, 4), rng.randint(0, 4), rng.random() < 0.2),
                last_move=rng.choice([None, LastMove(before=before, play=play)]), spectator=rng.random() < 0.1)
            language = rng.choice(["en", "de"])
            assert pixels(bi.draw_board_png(view, language)) == pixels(_drawn_whole(view, language)), view
            compared += 1
    for numbering in Numbering:  # every part drawn on the canvas was painted over again
        assert bi._canvas(numbering).tobytes() == bi._background(numbering).tobytes()


def test_a_part_that_cannot_be_drawn_leaves_the_canvas_as_the_empty_board() -> None:
    """A die of 0 raises half way through the dice (the first is drawn): later pictures must not
    be drawn on what it left."""
    view = dataclasses.replace(hit_view(Numbering.OWN, Colour.WHITE), dice=(6, 0))
    with pytest.raises(KeyError):
        bi.draw_board_png(view, "en")
    assert bi._canvas(Numbering.OWN).tobytes() == bi._background(Numbering.OWN).tobytes()


@pytest.mark.parametrize("size", [(bi.WIDTH, bi.HEIGHT), (1, 1), (3, bi._BAND), (5, 2 * bi._BAND + 1), (7, bi._BAND - 1)])
def test_the_png_holds_the_pictures_pixels_and_palette_and_nothing_else(size: tuple[int, int]) -> None:
    """Our PNG framing around ISA-L's deflate, read back by Pillow's own decoder and Python's
    zlib: the same pixels and palette as the PNG Pillow writes, and only the four chunks
    (no metadata), with the CRCs a reader checks. Sizes around the bands of rows copied at once."""
    rng = random.Random(size[0])
    image = Image.new("RGB", size)
    image.putdata([rng.choice([bi._PAPER, bi._INK, bi._FELT, bi._MARK, (123, 45, 67)]) for _ in range(size[0] * size[1])])
    indexed = bi._indexed(image)
    ours = bi._png(indexed)
    pillows = io.BytesIO()
    indexed.save(pillows, format="PNG")
    read, theirs = Image.open(io.BytesIO(ours)), Image.open(pillows)
    read.load()  # Pillow's decoder checks the CRCs of what it reads
    assert (read.mode, read.size, read.info) == ("P", size, {})
    assert read.tobytes() == theirs.tobytes() == indexed.tobytes()
    assert read.getpalette() == theirs.getpalette() == indexed.getpalette()
    chunks, at = [], len(b"\x89PNG\r\n\x1a\n")
    while at < len(ours):
        length = int.from_bytes(ours[at:at + 4], "big")
        kind, data = ours[at + 4:at + 8], ours[at + 8:at + 8 + length]
        assert int.from_bytes(ours[at + 8 + length:at + 12 + length], "big") == zlib.crc32(kind + data)
        chunks.append((kind, data))
        at += 12 + length
    assert [kind for kind, _ in chunks] == [b"IHDR", b"PLTE", b"IDAT", b"IEND"]
    rows = zlib.decompress(chunks[2][1])
    assert rows == b"".join(b"\0" + indexed.tobytes()[y * size[0]:(y + 1) * size[0]] for y in range(size[1]))


def test_a_picture_gives_the_same_png_again_and_in_threads_at_once() -> None:
    """Mails are answered in several threads, each deflating from a buffer of rows it keeps: the
    same picture shows the same again, in another order, and in four threads at once."""
    base = hit_view(Numbering.OWN, Colour.WHITE)
    pictures = []
    for dice in [(a, b) for a in range(1, 7) for b in range(1, 7)]:
        picture = Image.open(io.BytesIO(bi.draw_board_png(dataclasses.replace(base, dice=dice), "en")))
        picture.load()
        pictures.append(picture)
    first = [pixels(bi._png(picture)) for picture in pictures]
    assert first == [(picture.tobytes(), picture.getpalette()) for picture in pictures]
    assert [pixels(bi._png(picture)) for picture in reversed(pictures)] == first[::-1]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(5):
            assert [pixels(png) for png in pool.map(bi._png, pictures)] == first
