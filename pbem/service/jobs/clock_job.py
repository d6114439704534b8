"""The clock job: reminders before a clock runs out, and the loss on time when both have.

The daemon runs :func:`check_clocks` every minute.  It finds the matches whose next alarm has
come with a range scan of the index on ``matches.deadline_at`` (which is None for every match
without a running clock), so its cost grows with the alarms due, never with the games played.
Each match is handled in a transaction of its own, and its mails go through the same outbox
and letters as the answers to a player's mail.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import SelectOfScalar

from pbem import assistant as pbem_assistant
from pbem.config import Config
from pbem.periodic import PeriodicJob
from pbem.render.views import EventKind, Notice
from pbem.rules import game as rules
from pbem.rules.clock import Alarm, due_alarm, next_alarm_at, time_left
from pbem.service.games import play
from pbem.service.mailroom.post import send_letters
from pbem.service.table import clocks
from pbem.service.table.conversation import Conversation
from pbem.service.table.dice import SEEDED_DICE, DiceRoller
from pbem.service.table.news import last_mail_of
from pbem.service.table.tables import Table, locked_match
from pbem.store.db import make_engine, session_scope, utc_now
from pbem.store.game_records import MatchRecord

log = logging.getLogger(__name__)

CLOCK_JOB_INTERVAL = timedelta(minutes=1)


def due_matches_query(now: datetime) -> SelectOfScalar[int | None]:
    """The ids of the matches with an alarm due at ``now``, the most overdue first."""
    return (select(col(MatchRecord.id)).where(col(MatchRecord.deadline_at) <= now)
            .order_by(col(MatchRecord.deadline_at)))


def check_clocks(engine: Engine, config: Config, now: datetime, dice: DiceRoller = SEEDED_DICE) -> int:
    """Give every alarm due at ``now``; returns how many matches had one."""
    with session_scope(engine) as session:
        due = [match_id for match_id in session.exec(due_matches_query(now)).all() if match_id is not None]
    for match_id in due:
        try:
            with session_scope(engine) as session:
                record = locked_match(session, match_id, skip_locked=True)
                if record is not None:  # None: another daemon has it in hand (and gives the alarm)
                    _alarm(session, record, config, now, dice)
        except (StaleDataError, OperationalError) as exc:  # changed meanwhile: looked at again next run
            log.warning("match %s: clock not checked this time (%s)", match_id, type(exc).__name__)
    return len(due)


def clock_job(config: Config) -> PeriodicJob:
    """The scheduler job for ``pbem serve``, on an engine of its own (the pipeline keeps its own)."""
    engine = make_engine(config.database.url)

    async def run() -> None:
        await asyncio.to_thread(check_clocks, engine, config, utc_now())

    return PeriodicJob("check-clocks", run, CLOCK_JOB_INTERVAL)


def _settled(talk: Conversation, table: Table, seat: int) -> rules.Game | None:
    """The game scored by the engine's equity (the invitation said ``settle``); None when bgsage
    cannot be loaded any more, and the game is then lost on time as without ``settle``."""
    game = table.game
    assert game is not None
    engine = pbem_assistant.engine(talk.config.assistant.plies)
    if engine is None:
        log.warning("match %s: settle asked for, but bgsage cannot be loaded: lost on time", table.id)
        talk.event(table, EventKind.SETTLE_FAILED, seat)
        return None
    value = engine.settlement(game)
    settled = rules.settle(game, seat, value)
    assert settled.result is not None
    talk.event(table, EventKind.SETTLED, seat, on_roll=game.seat, value=round(value, 3), cube=game.cube,
               equity=round(value / game.cube, 3), phase=game.phase.value,
               dice=list(game.dice) if game.phase is rules.Phase.TO_MOVE and game.dice else None,
               points=settled.result.points, winner=settled.result.winner)
    return settled


def _alarm(session: Session, record: MatchRecord, config: Config, now: datetime, dice: DiceRoller) -> None:
    table = Table.load(session, record)
    running = clocks.running_clock(table, config)
    seat = record.clock_seat
    due = None if running is None or seat is None else due_alarm(running, record.alarms_given, now)
    if running is None or seat is None or due is None:  # changed since the query: look again later
        record.deadline_at = None if running is None else next_alarm_at(running, record.alarms_given)
        session.add(record)
        return
    index, alarm = due
    talk = Conversation(session, config, table.players[seat], last_mail_of(table, seat), dice, now)
    if alarm is Alarm.TIMEOUT:
        assert table.game is not None
        log.info("match %s: %s lost on time", table.id, table.players[seat].address)
        game = table.game
        talk.event(table, EventKind.TIMED_OUT, seat)
        settled = _settled(talk, table, seat) if record.options.get("settle") else None
        table.game = settled if settled is not None else rules.timeout(game, seat)
        play.advance(talk, table)
    else:
        move_left, bank_left = time_left(running, now)
        talk.say_template(Notice(alarm.value), table, move_left=move_left, bank_left=bank_left)
        record.alarms_given = index + 1
        record.deadline_at = next_alarm_at(running, index + 1)
    send_letters(talk)
