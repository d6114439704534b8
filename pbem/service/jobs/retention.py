"""The retention job: old mails are dropped, so storage stays bounded for years.

A mail's raw text (an answer with its board picture is some 100 KB) is needed while its game
runs: to cut a quoted reply down to what is new, and for the operator to look at.  Once the
match has been finished or declined for ``[database] retention_days``, and for a mail of no
match once it is that old, :func:`prune_mail` empties an incoming mail's ``raw``, sender,
subject and reason (its row stays, with the Message-ID, so the same mail delivered again is
still recognised as applied) and deletes a sent answer (a reply to it is recognised by the token
and turn in its Message-ID, not by its row) and the match's done review jobs (a copy of each
game and the review's figures, needed only for the match's totals and the review on the game's
page).  The results and the games
(the ``.mat``) stay.  Shunted mails, answers not yet sent or given up and reviews given up are
never touched.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, delete, exists, func, or_, update
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from pbem.config import Config
from pbem.periodic import PeriodicJob
from pbem.store.db import make_engine, session_scope, utc_now
from pbem.store.game_records import MatchRecord, MatchStatus, ReviewJob
from pbem.store.mail_records import InboundMail, InboundState, OutboundMail

log = logging.getLogger(__name__)

RETENTION_JOB_INTERVAL = timedelta(hours=1)
PRUNE_BATCH = 500
"""Rows emptied per transaction: no long lock on the mail tables while the daemon runs."""


def _over(mail_match_id: Any, cutoff: datetime) -> ColumnElement[bool]:
    """The row belongs to no match, or to one that ended before ``cutoff``.

    Asked of each candidate row (found by its own table's index of what is old and not yet
    pruned) by the match's primary key: a test of "its match is among the ended ones" made the
    databases read every ended match and all it kept, every hour, however little was due.
    """
    kept = (select(col(MatchRecord.id)).where(col(MatchRecord.id) == mail_match_id)
            .where(or_(col(MatchRecord.status).not_in([MatchStatus.FINISHED.value, MatchStatus.DECLINED.value]),
                       func.coalesce(MatchRecord.finished_at, MatchRecord.updated_at) >= cutoff)))
    return ~exists(kept)


def prune_mail(engine: Engine, now: datetime, retention: timedelta) -> int:
    """Drop what is past retention (see the module docstring); returns how many mails and reviews."""
    cutoff = now - retention
    inbound = (select(col(InboundMail.id)).where(col(InboundMail.pruned_at).is_(None))
               .where(col(InboundMail.processed_at) < cutoff)
               .where(col(InboundMail.state) != InboundState.FAILED.value)
               .where(_over(col(InboundMail.match_id), cutoff)).limit(PRUNE_BATCH))
    outbound = (select(col(OutboundMail.id)).where(col(OutboundMail.sent_at) < cutoff)
                .where(_over(col(OutboundMail.match_id), cutoff)).limit(PRUNE_BATCH))
    reviews = (select(col(ReviewJob.id)).where(col(ReviewJob.done_at) < cutoff).where(col(ReviewJob.error) == "")
               .where(_over(col(ReviewJob.match_id), cutoff)).limit(PRUNE_BATCH))
    pruned = 0
    for due, drop in ((inbound, lambda ids: update(InboundMail).where(col(InboundMail.id).in_(ids))
                       .values(raw=b"", sender="", subject="", reason="", pruned_at=now)),
                      (outbound, lambda ids: delete(OutboundMail).where(col(OutboundMail.id).in_(ids))),
                      (reviews, lambda ids: delete(ReviewJob).where(col(ReviewJob.id).in_(ids)))):
        while True:
            with session_scope(engine) as session:
                ids = list(session.exec(due).all())
                if ids:
                    session.connection().execute(drop(ids))
            pruned += len(ids)
            if len(ids) < PRUNE_BATCH:
                break
    if pruned:
        log.info("retention: %d mails and reviews older than %d days dropped", pruned, retention.days)
    return pruned


def retention_job(config: Config) -> PeriodicJob:
    """The scheduler job for ``pbem serve``, hourly, on an engine of its own."""
    engine = make_engine(config.database.url)
    retention = timedelta(days=config.database.retention_days)

    async def run() -> None:
        await asyncio.to_thread(prune_mail, engine, utc_now(), retention)

    return PeriodicJob("retention", run, RETENTION_JOB_INTERVAL)
