"""The review's chart of winning chances: what its marks say (pbem.render.review_chart)."""

from __future__ import annotations

import pytest

from pbem.render.review_chart import review_chart
from pbem.render.views import ReviewMark, WinningChances


@pytest.mark.parametrize(("opponent", "initial"), [
    ("Ben", "B"), ('"Ben" Example', "B"), ("(Ben)", "B"), ("  ben", "B"), ("«Jürgen»", "J"), ("ßen", "S"), ("---", "-"),
])
def test_the_opponents_marks_carry_the_first_letter_of_the_name_not_a_quote_or_bracket(opponent: str,
                                                                                        initial: str) -> None:
    """A display name may begin with a quote, a bracket or a space: the orange rings then read
    "B1", never '"1' (which looks like a stray mark, not a name)."""
    chances = WinningChances(0, ((1, 50.0), (2, 40.0)), (ReviewMark(1, 1, 2, 40.0), ReviewMark(0, 1, 1, 50.0)))
    for language in ("en", "de"):
        chart = review_chart(chances, 1, ("Anna", opponent), language)
        assert [marker.label for marker in chart.markers] == [f"{initial}1", "1"]
