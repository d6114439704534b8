"""Ratings at the end of a rated game or match, and the ``ratings`` list.

A match (``match N``) changes the match ratings when it ends; a single game or a series of N
games changes the casual ratings when it ends; money play changes them game by game, each
game counting 1.  A prize game for credits changes only the prize ratings, when it ends (seed
004: n is 5 for the match to 5, 4 for the series of 3 games, 2 for a single prize game), and
who leaves the table loses it.  A draw or a tied series changes nothing, nor does a game against the
Assistant or one invited ``unrated``.  The formula is :mod:`pbem.rules.rating`'s.  Each change
is also kept as a :class:`~pbem.store.game_records.RatingChange`, the personal page's history.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, literal_column
from sqlmodel import Session, col, func, select

from pbem.render.views import EventKind, Notice
from pbem.rules import prizes, rating, scoring
from pbem.service.table.assistant import is_assistant
from pbem.service.table.conversation import Conversation
from pbem.service.table.tables import Table
from pbem.store.game_records import (RATING_BAND, RATING_COLUMNS, Player, RatingChange, RatingCount,
                                     move_rating_counts_at_commit, rating_band)

TOP = 10
"""How many players the ``ratings`` answer lists per rating."""


def is_rated(table: Table) -> bool:
    return bool(table.record.options.get("rated", True)) and not any(map(is_assistant, table.players))


def record_result(talk: Conversation, table: Table, result: scoring.Result, match_over: bool) -> None:
    """Rate the game that just ended with ``result`` if it decides something rated.

    Called for every game; ``match_over`` says whether it ended the match, series or session.
    """
    rules = table.score.rules
    prize = table.prize
    if not is_rated(table):
        return
    if prize is not None and match_over:
        winner = prizes.prize_winner(table.score, result)
    elif rules.format is scoring.Format.MONEY:
        winner = result.winner
    elif match_over:
        winner = scoring.winner(table.score)
    else:
        return
    if winner is None:
        return
    kind = rating.RatingKind.PRIZE if prize is not None else rating.kind_of(rules)
    n = prize.rating_weight() if prize is not None else rating.weight(rules)
    before = [rating_of(player, kind) for player in table.players]
    won, lost = rating.rate(before[winner], before[1 - winner], n)
    after = [won, lost] if winner == 0 else [lost, won]
    for player, old, new in zip(table.players, before, after):
        rating_field, experience_field = RATING_COLUMNS[kind]
        setattr(player, rating_field, new.rating)
        setattr(player, experience_field, new.experience)
        talk.session.add(player)
        assert player.id is not None
        talk.session.add(RatingChange(player_id=player.id, kind=kind.value, match_id=table.id, before=old.rating,
                                      rating=new.rating, experience=new.experience, changed_at=talk.now))
    move_rating_counts_at_commit(talk.session, kind, [(old.rating if old.experience else None, new.rating)
                                                      for old, new in zip(before, after)])
    talk.event(table, EventKind.RATINGS_CHANGED, winner, kind=kind.value,
               ratings=[[old.rating, new.rating] for old, new in zip(before, after)])


def rating_of(player: Player, kind: rating.RatingKind) -> rating.Rating:
    rating_field, experience_field = RATING_COLUMNS[kind]
    return rating.Rating(getattr(player, rating_field), getattr(player, experience_field))


def standings(session: Session, player: Player, kind: rating.RatingKind, top: int = TOP) -> dict[str, Any]:
    """The best ``top`` players with rated play of this kind, and ``player``'s place among them all.

    The number of rated players and of those in higher bands come from the kept counts
    (:class:`RatingCount`), those above the player in their own band from the rating's index.
    """
    rating_column, experience_column = (getattr(Player, name) for name in RATING_COLUMNS[kind])
    rated = col(experience_column) > literal_column("0")  # as written in the partial index, for the planner
    best = session.exec(select(Player).where(rated).order_by(col(rating_column).desc(), col(Player.id))
                        .limit(top)).all()
    rows = [{"place": place, "name": player_row.display_name, **vars(rating_of(player_row, kind))}
            for place, player_row in enumerate(best, start=1)]
    mine = rating_of(player, kind)
    band = rating_band(mine.rating)
    above_in_band = (select(func.count()).select_from(Player).where(rated)
                     .where(col(rating_column) > mine.rating, col(rating_column) < (band + 1) * RATING_BAND))
    total, above = session.exec(
        select(func.coalesce(func.sum(RatingCount.players), 0),
               func.coalesce(func.sum(case((col(RatingCount.band) > band, RatingCount.players), else_=0)), 0)
               + above_in_band.scalar_subquery())
        .where(RatingCount.kind == kind.value)).one()
    place = 1 + above if mine.experience > 0 else None
    return {"kind": kind.value, "rows": rows, "total": total, "place": place, **vars(mine)}


def list_ratings(talk: Conversation, table: Table | None) -> None:
    """``ratings`` / ``rangliste``: the three lists and the sender's places."""
    lists = [standings(talk.session, talk.sender, kind) for kind in rating.RatingKind]
    talk.say_template(Notice.RATINGS_LIST, table, lists=lists)
