"""The player over time, for their own page (issue 38): the rating of each list after every rated
result, the performance rating (PR) of each reviewed match with its moving average, and the wins
and losses of every finished match by format.  Figures only, in the typed views the page's text
and its charts are both made from, so that the two never disagree."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlmodel import Session, col, func, select

from pbem.assistant.performance import band, performance_rating
from pbem.render.charts import moving_average
from pbem.render.views import PR_AVERAGE_OVER, FinishedRow, FormatRecord, MatchPR, PRPoint, RatingHistory, RatingStep
from pbem.rules import scoring
from pbem.rules.rating import RatingKind
from pbem.store.game_records import MatchRecord, MatchStatus, Player, RatingChange, Seat

HISTORY_SHOWN = 200
"""The newest rating changes drawn per list: money play is rated game by game, and a line of
thousands of steps on a chart 600 pixels wide shows no more than one of two hundred."""

FORMAT_ORDER = {scoring.Format.MATCH: 0, scoring.Format.GAMES: 1, scoring.Format.SINGLE: 2, scoring.Format.MONEY: 3}


def rating_histories(session: Session, player: Player) -> tuple[RatingHistory, ...]:
    """Each list the player has a kept rating change on: the newest ``HISTORY_SHOWN`` changes,
    read by ``ix_rating_history_player``."""
    histories = []
    for kind in RatingKind:
        mine = (RatingChange.player_id == player.id, RatingChange.kind == kind.value)
        changes = list(reversed(session.exec(select(RatingChange).where(*mine).order_by(col(RatingChange.id).desc())
                                             .limit(HISTORY_SHOWN)).all()))
        if not changes:
            continue
        more = 0
        if len(changes) == HISTORY_SHOWN:
            more = session.exec(select(func.count()).select_from(RatingChange).where(*mine)).one() - HISTORY_SHOWN
        histories.append(RatingHistory(
            kind=kind.value, start=changes[0].before, more=more,
            steps=tuple(RatingStep(change.changed_at.date().isoformat(), change.rating) for change in changes)))
    return tuple(histories)


def match_pr(combined: Sequence[dict[str, Any]], seat: int) -> MatchPR | None:
    """The PRs of a match from its games' reviews combined (``pbem.assistant.review.combine``'s
    ``players``, lost in millipoints); None when every play of the player was forced."""
    mine, theirs = combined[seat], combined[1 - seat]
    pr = performance_rating(mine["lost"], mine["decisions"])
    if pr is None:
        return None
    return MatchPR(pr=pr, band=band(pr), opponent_pr=performance_rating(theirs["lost"], theirs["decisions"]))


def pr_points(rows: Sequence[FinishedRow]) -> tuple[PRPoint, ...]:
    """The matches of ``rows`` (the newest first, as the page lists them) that have a PR, the
    oldest first, each with the moving average of the last ``PR_AVERAGE_OVER`` PRs, as the chart
    draws it (:func:`pbem.render.charts.moving_average`)."""
    reviewed = [row for row in reversed(rows) if row.pr is not None]
    prs = tuple((float(number), row.pr.pr) for number, row in enumerate(reviewed) if row.pr is not None)
    return tuple(PRPoint(day=row.day, opponent=row.opponent, pr=pr, band=band(pr), average=round(average, 1),
                         link=row.link)
                 for row, (_, pr), (_, average) in zip(reviewed, prs, moving_average(prs, PR_AVERAGE_OVER)))


def format_records(session: Session, player: Player) -> tuple[FormatRecord, ...]:
    """Wins, losses and ties of all the player's finished matches by format (and length): their
    scores only, one statement."""
    finished = session.exec(select(MatchRecord.score, Seat.number).join(Seat, col(Seat.match_id) == MatchRecord.id)
                            .where(Seat.player_id == player.id, MatchRecord.status == MatchStatus.FINISHED)).all()
    tally: Counter[tuple[scoring.Format, int, str]] = Counter()
    for score_data, seat in finished:
        score = scoring.Score.from_dict(dict(score_data))
        winner = scoring.winner(score)
        outcome = "tied" if winner is None else "won" if winner == seat else "lost"
        tally[(score.rules.format, score.rules.length, outcome)] += 1
    formats = sorted({(format, length) for format, length, _ in tally}, key=lambda key: (FORMAT_ORDER[key[0]], key[1]))
    return tuple(FormatRecord(format=format.value, length=length, won=tally[(format, length, "won")],
                              lost=tally[(format, length, "lost")], tied=tally[(format, length, "tied")])
                 for format, length in formats)
