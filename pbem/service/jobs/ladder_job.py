"""The ladder job: a challenge not accepted within its ladder's answer time is won by the challenger.

The daemon runs :func:`expire_challenges` every few minutes.  It finds the open challenges (match
rows of a ladder still ``invited``, through the index on ``matches.ladder_id``), and ends each
one whose time is up in a transaction of its own: the match row locked first, then the ladder's,
as every change of a ladder's standing takes them, so that two daemons end a challenge once.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from sqlalchemy import and_
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, col, select

from pbem.config import Config
from pbem.periodic import PeriodicJob
from pbem.service.games import ladder_standing
from pbem.service.mailroom.post import send_letters
from pbem.service.table.conversation import Conversation
from pbem.service.table.dice import SEEDED_DICE
from pbem.service.table.news import last_mail_of
from pbem.service.table.tables import Table, locked_match
from pbem.store.db import make_engine, session_scope, utc_now
from pbem.store.game_records import Ladder, MatchRecord, MatchStatus, Player, Seat

log = logging.getLogger(__name__)

LADDER_JOB_INTERVAL = timedelta(minutes=10)


def _due(session: Session, now: datetime) -> list[int]:
    """The ids of the unanswered challenges whose answer time is over at ``now``.  The time to
    answer starts again when the one challenged comes back from a vacation, which holds every
    clock of theirs (a challenge during a vacation waits for its end, as a move clock does)."""
    rows = session.exec(select(MatchRecord.id, MatchRecord.created_at, Ladder.answer_days, Player.vacation_until)
                        .join(Ladder, col(Ladder.id) == col(MatchRecord.ladder_id))
                        .join(Seat, and_(col(Seat.match_id) == MatchRecord.id, col(Seat.number) == 1))
                        .join(Player, col(Player.id) == Seat.player_id)
                        .where(MatchRecord.status == MatchStatus.INVITED.value)
                        .order_by(col(MatchRecord.id))).all()
    return [match_id for match_id, created_at, days, vacation_until in rows
            if match_id is not None
            and max(created_at, vacation_until or created_at) + timedelta(days=days) <= now]


def expire_challenges(engine: Engine, config: Config, now: datetime) -> int:
    """End every challenge not accepted in time as won by its challenger; returns how many."""
    with session_scope(engine) as session:
        due = _due(session, now)
    ended = 0
    for match_id in due:
        try:
            with session_scope(engine) as session:
                record = locked_match(session, match_id, skip_locked=True)
                if record is not None and record.status == MatchStatus.INVITED:  # else: answered meanwhile
                    _expire(session, record, config, now)
                    ended += 1
        except (StaleDataError, OperationalError) as exc:  # changed meanwhile: looked at again next run
            log.warning("challenge %s: not ended this time (%s)", match_id, type(exc).__name__)
    return ended


def _expire(session: Session, record: MatchRecord, config: Config, now: datetime) -> None:
    table = Table.load(session, record)
    log.info("challenge %s: not accepted in time, won by %s", table.id, table.players[0].address)
    talk = Conversation(session, config, table.players[0], last_mail_of(table, 0), SEEDED_DICE, now)
    record.status = MatchStatus.DECLINED
    record.finished_at = now
    ladder_standing.record_result(talk, table, challenger_won=True, how=ladder_standing.HowDecided.UNANSWERED)
    send_letters(talk)


def ladder_job(config: Config) -> PeriodicJob:
    """The scheduler job for ``pbem serve``, on an engine of its own."""
    engine = make_engine(config.database.url)

    async def run() -> None:
        await asyncio.to_thread(expire_challenges, engine, config, utc_now())

    return PeriodicJob("expire-challenges", run, LADDER_JOB_INTERVAL)
