"""How long one complete game mail takes to render: text, HTML and the board PNG, then MIME;
and one review mail with each player's PR and the chart of the winning chances.

    python bench/render_bench.py [--mails 200] [--small]

Prints figures only.  The aim is under 20 ms per mail on one core.  The position is a
mid-game one with a hit, a tall stack, a last move to mark and an owned cube, from each side
in turn, so that the figure is a fair one for a real turn.  The review is of a 60-roll game
with three listed mistakes a side, rendered as ``pbem.service.jobs.review_job.review_letter`` does
it; its aim (issue 38): a review mail, chart and all, within a game mail's cost plus 3 ms.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timezone

import random
from typing import Any

from pbem.mail.composing import InlineImage, Letter, compose, new_content_id
from pbem.render.board_image import board_alt, draw_board_png, render_board_png
from pbem.render.charts import chart_png
from pbem.render.review_chart import HEIGHT as CHART_HEIGHT, WIDTH as CHART_WIDTH, chart_caption, review_chart
from pbem.render.templating import environment, render, wrap_prose
from pbem.render.views import ReviewView
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


def a_review(seed: int = 7, rolls: int = 60) -> dict[str, Any]:
    """A stored review as ``pbem.assistant.review`` leaves it: figures, three mistakes a side,
    seat 0's chance after every roll (a random walk that ends in a win)."""
    rng = random.Random(seed)
    chance, chances = 500, []
    for number in range(1, rolls + 1):
        chance = min(1000, max(0, chance + rng.randint(-90, 100))) if number < rolls else 1000
        chances.append([number, chance])
    plays = {"own": "13/8 6/5*", "fixed": "13/8 6/5*"}, {"own": "24/18 13/11", "fixed": "1/7 12/14"}
    mistakes = [[{"number": number, "dice": [5, 1], "kind": "play", "loss": loss, "played": plays[0],
                  "best": plays[1]} for number, loss in picks] for picks in (((12, 412), (31, 150), (7, 90)),
                                                                             ((18, 610), (44, 85), (3, 40)))]
    return {"players": [{"decisions": 27, "error_rate": 42, "lost": 1134, "luck": 460},
                        {"decisions": 25, "error_rate": 53, "lost": 1325, "luck": -460}],
            "mistakes": mistakes, "chances": chances}


def one_review_mail(review: dict[str, Any], seat: int, language: str, events: Any, chart: bool = True) -> int:
    """The review mail to ``seat`` as ``review_letter`` renders and composes it (the stored
    review made a view, its event worded, the chart drawn); returns the message size."""
    view = ReviewView.of(review)
    names = ("Anna", "Ben")
    text = str(events.game_review(None, {"number": 1, **view.event_data()})).strip()
    images: tuple[InlineImage, ...] = ()
    shown = None
    chances = view.winning_chances(seat)
    if chart and chances is not None:
        drawn = review_chart(chances, 1, names, language)
        image = InlineImage(new_content_id("chances", "backgammon@example.org"), "chances.png",
                            chart_png(drawn, CHART_WIDTH, CHART_HEIGHT))
        images = (image,)
        shown = {"cid": image.content_id, "alt": drawn.description, "caption": chart_caption(chances, names, language)}
    context = {"me": names[seat], "names": list(names), "number": 1, "reviews": [text], "running": False,
               "service": type("Service", (), {"name": "Backgammon by Mail"}), "web_link": None, "games_link": None,
               "chart": shown}
    module: Any = environment().get_template(f"{language}/review.txt").make_module({"language": language, **context})
    subject = str(module.subject()).strip()
    letter = Letter("anna@example.org", "Anna", subject, wrap_prose(str(module)), language, token="a" * 26,
                    html=render("review.html", language, subject=subject, **context), images=images)
    return len(compose(letter, "backgammon@example.org", "Backgammon by Mail", datetime.now(timezone.utc)).as_bytes())


def review_figures(mails: int) -> tuple[float, float, float, int]:
    """Per review mail: with the chart, without it, and the chart's PNG alone (ms); the size."""
    review = a_review()
    events = {language: environment().get_template(f"{language}/events.txt").make_module(
        {"language": language, "numbering": "own", "colour": "white", "me": seat, "names": ["Anna", "Ben"],
         "offer_stands": False}) for language in ("en", "de") for seat in (0,)}  # kept per seat, as the service does
    size = one_review_mail(review, 0, "en", events["en"])
    timed = []
    for chart in (True, False):
        start = time.perf_counter()
        for index in range(mails):
            one_review_mail(review, 0, ("en", "de")[index % 2], events[("en", "de")[index % 2]], chart)
        timed.append((time.perf_counter() - start) / mails * 1000)
    view = ReviewView.of(review)
    chances = view.winning_chances(0)
    assert chances is not None
    start = time.perf_counter()
    for _ in range(mails):
        chart_png(review_chart(chances, 1, ("Anna", "Ben"), "en"), CHART_WIDTH, CHART_HEIGHT)
    return timed[0], timed[1], (time.perf_counter() - start) / mails * 1000, size


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
    with_chart, without, chart_alone, review_size = review_figures(mails)
    print(f"one review mail with PR and chart:        {with_chart:.1f} ms  (aim: within a game mail's "
          f"{per_mail:.1f} ms + 3 ms: {'met' if with_chart <= per_mail + 3 else 'NOT met'})")
    print(f"  the same without the chart:             {without:.1f} ms; the picture's cost per mail "
          f"{with_chart - without:.1f} ms (the chart's PNG alone {chart_alone:.1f} ms)")
    print(f"  size: whole message {review_size / 1000:.1f} kB")


if __name__ == "__main__":
    main()
