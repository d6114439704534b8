"""How long one complete game mail takes to render: text, HTML and the board PNG, then MIME.

    python bench/render_bench.py [--mails 200] [--small]

Prints figures only.  The aim is under 20 ms per mail on one core.  The position is a
mid-game one with a hit, a tall stack, a last move to mark and an owned cube, from each side
in turn, so that the figure is a fair one for a real turn.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timezone

from pbem.mail.composing import InlineImage, Letter, compose, new_content_id
from pbem.render.board_image import board_alt, draw_board_png, render_board_png
from pbem.render.templating import render
from pbem.render.text_board import BoardView, LastMove, Score, Who, render_text_board
from pbem.rules.notation import Colour, Numbering
from pbem.rules.position import Position
from pbem.rules.scoring import Format


def _side(**points: int) -> tuple[int, ...]:
    counts = [0] * 25
    for name, count in points.items():
        counts[24 if name == "bar" else int(name[1:]) - 1] = count
    return tuple(counts)


BEFORE = Position(mover=_side(p6=5, p8=3, p13=5, p24=2), opponent=_side(p20=1, p2=3, p6=4, p13=7))
AFTER = Position(mover=_side(bar=1, p2=3, p6=4, p13=7), opponent=_side(p5=1, p6=4, p8=4, p13=4, p24=2))


def one_mail(view: BoardView, language: str) -> int:
    """Renders everything one mail shows and composes it; returns the message size."""
    board_text = render_text_board(view, language)
    png = render_board_png(view, language)
    image = InlineImage(new_content_id("board", "backgammon@example.org"), "board.png", png)
    context = {
        "me": view.viewer_name, "opponent": view.opponent_name, "names": [view.viewer_name, view.opponent_name],
        "events": ["Ben played 13/8 6/5*."], "texts": [], "notes": [], "board": board_text, "next": "move",
        "dice": view.dice, "example": "25/22 24/23", "offered": 4, "beaver_allowed": False,
        "ids": {"position": "4HPwATDgc/ABMA", "match": "cAkAAAAAAAAA"}, "reply_to": "backgammon@example.org",
        "service": type("Service", (), {"name": "Backgammon by Mail"}), "subject": "[Backgammon] Anna – Ben",
        "board_cid": image.content_id, "board_alt": board_alt(view, language),
        "numbering": view.numbering.value, "colour": view.colour.value, "clock": None, "games_link": None,
        "web_link": None, "prize": None, "at_stake": None,
    }
    text = render("game.txt", language, **context, rules=None, seat=0, status="running", score=[0, 0],
                  game_number=1, winner=None, crawford=False, cube=2)
    html = render("game.html", language, **context)
    letter = Letter("anna@example.org", "Anna", "[Backgammon] Anna – Ben: Your turn (3-1)", text, language,
                    token="a" * 26, stamp=(1, 7), html=html, images=(image,))
    message = compose(letter, "backgammon@example.org", "Backgammon by Mail", datetime.now(timezone.utc))
    return len(message.as_bytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mails", type=int, default=200)
    parser.add_argument("--small", action="store_true", help="a quick run that only shows the bench works (CI)")
    arguments = parser.parse_args()
    mails = 4 if arguments.small else arguments.mails
    views = [
        BoardView(position=AFTER, numbering=numbering, colour=colour, viewer_name="Anna", opponent_name="Ben",
                  turn=Who.VIEWER, dice=(3, 1), cube_value=2, cube_owner=Who.OPPONENT,
                  score=Score(Format.MATCH, length=7, viewer=2, opponent=3),
                  last_move=LastMove(before=BEFORE, play=((13, 8), (6, 5))))
        for numbering in Numbering for colour in Colour
    ]
    size = one_mail(views[0], "en")  # the first mail loads the fonts, sprites and templates
    png = render_board_png(views[0], "en")
    start = time.perf_counter()
    for index in range(mails):
        one_mail(views[index % len(views)], ("en", "de")[index % 2])
    per_mail = (time.perf_counter() - start) / mails * 1000
    start = time.perf_counter()
    for index in range(mails):
        draw_board_png(views[index % len(views)], "en")  # drawn each time: the kept ones cost nothing
    per_png = (time.perf_counter() - start) / mails * 1000
    print(f"one complete mail (text, HTML, PNG, MIME): {per_mail:.1f} ms  (aim: under 20 ms)")
    print(f"  the board PNG drawn anew (not kept):    {per_png:.1f} ms")
    print(f"  sizes: PNG {len(png) / 1000:.1f} kB, whole message {size / 1000:.1f} kB")


if __name__ == "__main__":
    main()
