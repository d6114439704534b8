"""The charts of a player's own page, as SVG: each list's rating over time, the PR of each
reviewed match with its moving average, and the wins and losses by format.

Drawn by :mod:`pbem.render.charts` from the page's own view (:class:`PlayerPageView`), the same
figures its tables give in text, in the page's language (``templates/<language>/web.txt``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pbem.assistant.performance import BANDS, WORST_BAND
from pbem.render.charts import Bar, Chart, Reference, Series, Tick, chart_svg
from pbem.render.templating import environment
from pbem.render.views import PR_AVERAGE_OVER, FormatRecord, PlayerPageView, PRPoint, RatingHistory
from pbem.rules.rating import START_RATING

PR_FLOOR = 25.0
"""The PR axis reaches at least this far (past the beginner band), whatever the player's figures."""


@dataclass(frozen=True)
class PlayerCharts:
    """The page's pictures: each list with a history and its chart; the PR chart and the chart
    of wins and losses, None when there is nothing to draw."""

    ratings: tuple[tuple[RatingHistory, str], ...]
    pr: str | None
    records: str | None


def player_charts(page: PlayerPageView) -> PlayerCharts:
    words: Any = environment().get_template(f"{page.language}/web.txt").make_module({"language": page.language})
    return PlayerCharts(
        ratings=tuple((history, chart_svg(rating_chart(history, page.name, words))) for history in page.history),
        pr=chart_svg(pr_chart(page.prs, page.name, words)) if page.prs else None,
        records=chart_svg(records_chart(page.records, page.name, words)) if page.records else None,
    )


def _say(words: Any, name: str, *arguments: object) -> str:
    return str(getattr(words, name)(*arguments)).strip()


def rating_chart(history: RatingHistory, name: str, words: Any) -> Chart:
    """One list: its rating before the first kept change (x 0), then after each (x 1, 2, …)."""
    values = [history.start, *(step.rating for step in history.steps)]
    low, high = min(*values, START_RATING), max(*values, START_RATING)
    margin = max(10.0, (high - low) * 0.1)
    return Chart(
        title=_say(words, "rating_list", history.kind), x_label=_say(words, "rating_x"),
        y_label=_say(words, "rating_y"),
        y_range=(10 * math.floor((low - margin) / 10), 10 * math.ceil((high + margin) / 10)),
        x_range=(0, max(len(history.steps), 1)),
        series=(Series(tuple((float(x), value) for x, value in enumerate(values))),),
        references=(Reference(START_RATING, _say(words, "rating_start")),),
        description=_say(words, "rating_description", name, history.kind, history.start, values[-1],
                         len(history.steps)))


def pr_chart(points: tuple[PRPoint, ...], name: str, words: Any) -> Chart:
    """The PR of each reviewed match as a point, its moving average as a dashed line, and the
    bands' bounds as reference lines, each labelled with the band above it."""
    top = max(PR_FLOOR, 5 * math.ceil(max(point.pr for point in points) / 5))
    names = [key for _, key in BANDS[1:]] + [WORST_BAND]
    references = (Reference(0.0, _say(words, "pr_band", BANDS[0][1])),
                  *(Reference(bound, _say(words, "pr_band", key)) for (bound, _), key in zip(BANDS, names)
                    if bound < top))
    return Chart(
        title=_say(words, "pr_title"), x_label=_say(words, "pr_x"), y_label=_say(words, "pr_y"),
        y_range=(0.0, top), x_range=(0.5, len(points) + 0.5),
        x_ticks=tuple(Tick(number, str(number)) for number in _whole_ticks(len(points))),
        series=(Series(tuple((float(number), point.pr) for number, point in enumerate(points, start=1)),
                       label=_say(words, "pr_series"), style="points", moving_average=PR_AVERAGE_OVER,
                       average_label=_say(words, "pr_average", PR_AVERAGE_OVER)),),
        references=references,
        description=_say(words, "pr_description", name, len(points), points[-1].pr, points[-1].average,
                         min(PR_AVERAGE_OVER, len(points))))


def records_chart(records: tuple[FormatRecord, ...], name: str, words: Any) -> Chart:
    """A green bar for the wins and a red one for the losses of each format (a grey one for
    ties where there were any), the format's name under the first."""
    bars: list[Bar] = []
    for record in records:
        bars.append(Bar(_say(words, "format_short", record.format, record.length), record.won, "good"))
        bars.append(Bar("", record.lost, "bad"))
        if record.tied:
            bars.append(Bar("", record.tied, "muted"))
    most = max(max(bar.value for bar in bars), 1)
    step = max(1, math.ceil(most / 5))
    top = step * math.ceil(most / step)
    return Chart(
        title=_say(words, "records_title"), x_label=_say(words, "records_x"), y_label=_say(words, "records_y"),
        y_range=(0.0, float(top)), bars=tuple(bars),
        y_ticks=tuple(Tick(value, str(value)) for value in range(0, top + 1, step)),
        description=_say(words, "records_description", name, sum(record.won for record in records),
                         sum(record.lost for record in records)))


def _whole_ticks(count: int) -> range:
    """Match numbers 1 … ``count``, at most about ten of them labelled."""
    return range(1, count + 1, max(1, math.ceil(count / 10)))
