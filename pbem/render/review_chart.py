"""The picture of a reviewed game: the reader's winning chance after every roll, with the worst
decisions the review lists marked, as :mod:`pbem.render.charts` draws it (a PNG for the review
mail, SVG for the game's page).  Its words come from ``templates/<language>/picture.txt``."""

from __future__ import annotations

from functools import cache
from typing import Any

from pbem.render.charts import Chart, Marker, Reference, Series
from pbem.render.templating import NO_BREAK, environment
from pbem.render.views import WinningChances

WIDTH, HEIGHT = 640, 280
"""The mail's picture: as wide as the board picture above it in a game mail."""


def review_chart(chances: WinningChances, number: int, names: tuple[str, str], language: str) -> Chart:
    """The chart of game ``number`` for the reader ``names[chances.seat]``: the reader's own marks
    numbered 1 to 3 in red, the opponent's in orange with their initial in front."""
    words = _words(language)
    opponent = names[1 - chances.seat]
    initial = _initial(opponent)
    markers = tuple(Marker(mark.number, str(words.chances_mark(mark.seat == chances.seat, initial, mark.rank)),
                           mark.chance, "bad" if mark.seat == chances.seat else "secondary")
                    for mark in chances.marks)
    points = tuple((float(move), chance) for move, chance in chances.points)
    first, last = (round(points[0][1]), round(points[-1][1])) if points else (50, 50)
    return Chart(
        title=str(words.chances_title(number)), x_label=str(words.chances_x()), y_label=str(words.chances_y()),
        y_range=(0, 100), series=(Series(points),), markers=markers, references=(Reference(50),),
        description=str(words.chances_desc(number, first, last, opponent)),
        y_suffix=NO_BREAK + "%" if language == "de" else "%")


def _initial(name: str) -> str:
    """The opponent's letter on their rings: the name's first letter or digit (a name may begin
    with a quote, a bracket or a space, which would read as a stray mark), one character even
    where its capital is two (ß)."""
    first = next((character for character in name if character.isalnum()), name[:1])
    return first.upper()[:1]


def chart_caption(chances: WinningChances, names: tuple[str, str], language: str) -> str:
    """The line under the picture that says what its rings are."""
    return str(_words(language).chances_caption(names[1 - chances.seat])).strip()


@cache
def _words(language: str) -> Any:
    """The macros of ``picture.txt``, made once per language."""
    return environment().get_template(f"{language}/picture.txt").make_module({"language": language})
