"""A player's own page of all their games (``BASE_URL/p/<page token>``), linked from the footer of
every mail to them.

The page token is the player's alone and is never a game's token: it shows their running games,
each with the link of their own seat only, their finished matches (the result, the ``.mat``, the
engine's review), the tournaments they entered (their own copy of the bracket, how far they came)
and the ladders they stand on, their ratings and their credits, and the player over time
(:mod:`pbem.service.pages.player_history`: rating history, PR per match, wins and losses by format,
drawn as SVG charts by :mod:`pbem.render.web_page`); it acts on nothing (no form), so
it needs no CSRF token; the web app gives it the same limits and headers as a game's page and
keeps its token out of the log.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.assistant import review
from pbem.config import Config
from pbem.render.views import FinishedRow, LadderRow, PlayerPageView, TournamentRow
from pbem.rules import brackets, scoring
from pbem.rules.rating import RatingKind
from pbem.service.games import credits
from pbem.service.games import ratings
from pbem.service.games.ladder_standing import ladder_link
from pbem.service.pages import player_history
from pbem.service.people.account import game_rows
from pbem.service.table.assistant import is_assistant
from pbem.service.table.letters import seat_name, shown_name
from pbem.service.table.tables import Table
from pbem.store.db import utc_now
from pbem.store.game_records import (Ladder, MatchRecord, MatchStatus, Player, ReviewJob, Seat, TournamentEntry,
                                     TournamentRecord, TournamentStatus)

FINISHED_SHOWN = 30
"""The newest finished matches the page lists; it says how many older ones it leaves out."""


class PlayerPages:
    """The service behind ``/p/<token>`` (:class:`pbem.web.app.BoardService`'s ``player_page``)."""

    def __init__(self, config: Config, engine: Engine, clock: Callable[[], datetime] = utc_now) -> None:
        self.config = config
        self.engine = engine
        self.clock = clock

    def page(self, page_token: str) -> PlayerPageView | None:
        """The page of the player whose page token this is; None for any other string."""
        with Session(self.engine) as session:
            player = session.exec(select(Player).where(Player.page_token == page_token)).first()
            if player is None or is_assistant(player):
                return None
            language = player.language or self.config.service.language
            finished, more = finished_rows(session, player, self.config, language)
            return PlayerPageView(
                language=language,
                name=shown_name(player, language),
                games=tuple(game_rows(session, player, self.config, self.clock(), language)),
                ratings=tuple((kind.value, rating.rating, rating.experience)
                              for kind, rating in ((kind, ratings.rating_of(player, kind)) for kind in RatingKind)),
                balance=credits.balance(session, player, self.config),
                finished=tuple(finished), more_finished=more,
                tournaments=tuple(tournament_rows(session, player, self.config)),
                ladders=tuple(ladder_rows(session, player, self.config)),
                history=player_history.rating_histories(session, player),
                prs=player_history.pr_points(finished),
                records=player_history.format_records(session, player),
            )


def finished_rows(session: Session, player: Player, config: Config, language: str) -> tuple[list[FinishedRow], int]:
    """The player's newest finished matches, and how many older ones are left out."""
    mine = (select(MatchRecord).join(Seat, col(Seat.match_id) == MatchRecord.id)
            .where(Seat.player_id == player.id, MatchRecord.status == MatchStatus.FINISHED))
    total = session.exec(select(func.count()).select_from(mine.subquery())).one()
    records = session.exec(mine.order_by(col(MatchRecord.finished_at).desc(), col(MatchRecord.id).desc())
                           .limit(FINISHED_SHOWN)).all()
    jobs: dict[int, list[ReviewJob]] = {}
    for job in session.exec(select(ReviewJob).where(col(ReviewJob.match_id).in_([r.id for r in records]))).all():
        jobs.setdefault(job.match_id, []).append(job)
    rows = []
    for record in records:
        table = Table.load(session, record)
        seat = table.seat_of(player)
        assert seat is not None
        winner = scoring.winner(table.score)
        reviews = jobs.get(table.id, [])
        results = [job.result for job in reviews if job.result is not None]
        pending = any(job.done_at is None for job in reviews)
        combined = review.combine(results)["players"] if results and not pending else None
        rows.append(FinishedRow(
            opponent=seat_name(table, 1 - seat, language),
            rules=table.score.rules,
            score=scoring.seen_from(table.score.points, seat),
            won=None if winner is None else winner == seat,
            day=(record.finished_at or record.updated_at).date().isoformat(),
            link=None if config.web is None else config.web.link(table.token(seat)),
            mat_link=None if config.web is None else config.web.link(table.token(seat)) + "/match.mat",
            review=None if combined is None else (len(results), combined[seat]["error_rate"],
                                                  combined[1 - seat]["error_rate"]),
            review_pending=pending,
            prize=table.prize is not None,
            pr=None if combined is None else player_history.match_pr(combined, seat),
        ))
    return rows, total - len(rows)


def tournament_rows(session: Session, player: Player, config: Config) -> list[TournamentRow]:
    """The tournaments the player entered, the newest first, with how far they came."""
    records = session.exec(select(TournamentRecord).join(TournamentEntry, col(TournamentEntry.tournament_id)
                                                         == TournamentRecord.id)
                           .where(TournamentEntry.player_id == player.id)
                           .order_by(col(TournamentRecord.created_at).desc(), col(TournamentRecord.id).desc())).all()
    rows = []
    for record in records:
        bracket = None if record.bracket is None else brackets.Bracket.from_dict(record.bracket)
        assert player.id is not None
        link = None
        if config.web is not None and player.page_token is not None:
            link = config.web.tournament_link(record.code, player.page_token)
        rows.append(TournamentRow(
            name=record.name, link=link, status=str(record.status), size=record.size,
            rounds=0 if bracket is None else bracket.rounds,
            reached=0 if bracket is None else brackets.reached(bracket, player.id) + 1,
            places=None if bracket is None else brackets.places(bracket, player.id),
            withdrawn=bracket is not None and player.id in bracket.withdrawn
            and record.status != TournamentStatus.OPEN,
        ))
    return rows


def ladder_rows(session: Session, player: Player, config: Config) -> list[LadderRow]:
    """The ladders the player stands on, with their place."""
    return [LadderRow(ladder.name, ladder_link(ladder, config), ladder.standing.index(player.id) + 1,
                      len(ladder.standing))
            for ladder in session.exec(select(Ladder).order_by(col(Ladder.name))).all()
            if player.id in ladder.standing]
