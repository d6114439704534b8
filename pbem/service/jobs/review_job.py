"""The review job: the bgsage review of finished games, computed and mailed apart from all mail.

The mail that ends a game writes a :class:`ReviewJob` row in its own transaction and is
answered at once (its letters say that the review follows).  The daemon runs
:func:`review_job` every few seconds; for each pending row it

1. claims it in a short transaction (``claimed_at``, counted in ``attempts``), unless another
   run holds a claim younger than :data:`CLAIM_LEASE`;
2. computes the review with no transaction open, in a worker process of its own
   (:class:`ReviewPool`): bgsage holds the GIL while it evaluates, so in the daemon's process
   it would stall every thread, the mails' included;
3. in one short transaction sets ``done_at`` (only where it is still unset), stores the result
   and queues the review mail to both players (never to the Assistant), threaded into the game:
   the review alone, with a link to the game's page, since the match may have gone on
   meanwhile, its HTML with the chart of the reader's winning chances (:func:`review_letter`).

A daemon that dies after step 1 leaves the claim behind: it is taken up again once the lease
has passed, and since ``done_at`` and the mails are committed together, and only by the run
that set ``done_at``, every review is mailed exactly once.  A review that fails
:data:`MAX_ATTEMPTS` times is given up (``done_at`` set, ``error`` kept, no mail).  The review
of the last game of a match carries the totals over the reviews of all its games, so it waits
until every earlier game's job is done.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, or_, select

from pbem import assistant as pbem_assistant
from pbem.assistant import review
from pbem.config import Config
from pbem.mail.composing import InlineImage, Letter, compose, new_content_id
from pbem.periodic import PeriodicJob
from pbem.render.templating import environment, render, wrap_prose
from pbem.render.charts import chart_png
from pbem.render.review_chart import HEIGHT as CHART_HEIGHT, WIDTH as CHART_WIDTH, chart_caption, review_chart
from pbem.render.views import EventKind, ReviewView, WinningChances
from pbem.rules.game import Game
from pbem.service.table.assistant import is_assistant
from pbem.service.table.letters import games_link, render_event, seat_name, shown_name
from pbem.service.table.letters import undeliverable
from pbem.service.table.news import Event, last_mail_of
from pbem.service.table.tables import Table
from pbem.store.db import make_engine, session_scope, utc_now
from pbem.store.game_records import MatchRecord, MatchStatus, ReviewJob
from pbem.store.mail_records import queue_mail

log = logging.getLogger(__name__)

REVIEW_JOB_INTERVAL = timedelta(seconds=5)
CLAIM_LEASE = timedelta(minutes=5)
"""A claim this old belongs to a daemon that died (a review takes seconds): it is taken up again."""
MAX_ATTEMPTS = 3
WORKER_NICENESS = 10
"""The worker process computes at a lower priority than the daemon, whose mails come first."""

Compute = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""A game's ``to_dict()`` → its review (``pbem.assistant.review.review_game``)."""


class ReviewUnavailable(Exception):
    """bgsage could not be loaded where the review is computed."""


@dataclass(frozen=True)
class Claimed:
    job_id: int
    game: dict[str, Any]
    result: dict[str, Any] | None
    attempts: int


def review_of(plies: int, game: dict[str, Any]) -> dict[str, Any]:
    """The review of one finished game (runs in the worker process, or in tests in-process)."""
    engine = pbem_assistant.engine(plies)
    if engine is None:
        raise ReviewUnavailable("bgsage could not be loaded")
    return review.review_game(engine, Game.from_dict(game))


def in_process(plies: int) -> Compute:
    """Compute in a thread of this process (tests, and tools without a daemon)."""
    async def compute(game: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(review_of, plies, game)
    return compute


def _worker_start() -> None:
    try:
        os.nice(WORKER_NICENESS)
    except OSError:
        pass


class ReviewPool:
    """One worker process for the reviews, started when first needed and again after it died."""

    def __init__(self, plies: int) -> None:
        self.plies = plies
        self._pool: ProcessPoolExecutor | None = None

    async def compute(self, game: dict[str, Any]) -> dict[str, Any]:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_worker_start)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, review_of, self.plies, game)
        except BrokenProcessPool:  # the worker died (in bgsage, or killed): a new one next time
            self.close(wait=False)
            raise

    def close(self, wait: bool = True) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=True)
            self._pool = None


def pending_jobs(engine: Engine, now: datetime) -> list[int]:
    """The jobs to do at ``now``, oldest first: not done, and unclaimed or their claim lapsed."""
    with session_scope(engine) as session:
        query = (select(ReviewJob.id).where(col(ReviewJob.done_at).is_(None))
                 .where(or_(col(ReviewJob.claimed_at).is_(None), col(ReviewJob.claimed_at) <= now - CLAIM_LEASE))
                 .order_by(col(ReviewJob.id)))
        return [job_id for job_id in session.exec(query).all() if job_id is not None]


def claim(engine: Engine, job_id: int, now: datetime) -> Claimed | None:
    """Claim the job for this run (None: done, or claimed by another run in the meantime)."""
    with session_scope(engine) as session:
        claimed = session.exec(
            update(ReviewJob)
            .where(col(ReviewJob.id) == job_id, col(ReviewJob.done_at).is_(None),
                   or_(col(ReviewJob.claimed_at).is_(None), col(ReviewJob.claimed_at) <= now - CLAIM_LEASE))
            .values(claimed_at=now, attempts=col(ReviewJob.attempts) + 1))
        if claimed.rowcount != 1:
            return None
        job = session.get(ReviewJob, job_id)
        assert job is not None
        return Claimed(job_id, job.game, job.result, job.attempts)


def give_back(engine: Engine, job_id: int, error: str, now: datetime) -> None:
    """The review failed: try again at the next run, or give it up after MAX_ATTEMPTS."""
    with session_scope(engine) as session:
        job = session.get(ReviewJob, job_id)
        if job is None or job.done_at is not None:
            return
        job.error = error[:500]
        if job.attempts >= MAX_ATTEMPTS:
            job.done_at = now
            log.error("review of match %s, game %s given up: %s", job.match_id, job.game_number, error)
        else:
            job.claimed_at = None
            log.warning("review of match %s, game %s failed, will be tried again: %s", job.match_id,
                        job.game_number, error)
        session.add(job)


def finish(engine: Engine, config: Config, job_id: int, result: dict[str, Any], now: datetime) -> bool:
    """Store the review and queue its mails, once; True when this call mailed it."""
    with session_scope(engine) as session:
        # The first statement writes, so SQLite holds the write lock for all that follows; the
        # condition on done_at lets exactly one run mail the review.
        done = session.exec(
            update(ReviewJob).where(col(ReviewJob.id) == job_id, col(ReviewJob.done_at).is_(None))
            .values(done_at=now, result=result, error=""))
        if done.rowcount != 1:
            return False
        job = session.get(ReviewJob, job_id)
        assert job is not None
        reviews = [result]
        if job.totals:
            earlier = session.exec(select(ReviewJob).where(ReviewJob.match_id == job.match_id)
                                   .where(col(ReviewJob.id) != job_id).order_by(col(ReviewJob.game_number))).all()
            if any(each.done_at is None for each in earlier):  # the totals wait for every game's review
                job.done_at, job.claimed_at = None, None
                session.add(job)
                return False
            reviews = [each.result for each in earlier if each.result is not None] + reviews
        record = session.exec(select(MatchRecord).where(MatchRecord.id == job.match_id).with_for_update()).one()
        table = Table.load(session, record)
        game = ReviewView.of(result)
        events = [Event(EventKind.GAME_REVIEW, None, {"number": job.game_number, **game.event_data()})] \
            if any(player.decisions for player in game.players) else []  # an empty review is left out
        if job.totals and len(reviews) > 1:
            combined = review.combine(reviews)
            events.append(Event(EventKind.MATCH_REVIEW, None,
                                {"games": combined["games"], **ReviewView.of(combined).event_data()}))
        if events:  # nothing to review at all (only forced moves): no mail
            charted = game if events[0].kind is EventKind.GAME_REVIEW else None
            _mail_review(session, config, table, job.game_number, events, charted, now)
        log.info("review of match %s, game %s mailed", job.match_id, job.game_number)
        return True


def _mail_review(session: Session, config: Config, table: Table, number: int, events: list[Event],
                 game: ReviewView | None, now: datetime) -> None:
    """Queue the review to each player (never the Assistant), in the thread of their game.

    The review alone: it is mailed after the game, when the match may have gone on, so it
    shows no board, no identifiers and no call to act (a second "your turn" beside the game
    mail that asked for it would be stale as soon as either is answered).  Its Message-ID
    carries no game state, so a reply to it is read as a reply to the game mail before it.
    """
    for seat in (0, 1):
        player = table.players[seat]
        if is_assistant(player) or undeliverable(player, config):
            continue
        chances = None if game is None else game.winning_chances(seat)
        message = compose(review_letter(session, config, table, seat, number, events, chances),
                          config.service.address, config.service.name, now)
        queue_mail(session, message, table.id)
        table.add_to_thread(seat, str(message["Message-ID"]))
        session.add(table.seats[seat])


def review_letter(session: Session, config: Config, table: Table, seat: int, number: int,
                  events: list[Event], chances: WinningChances | None = None) -> Letter:
    """The review mail to ``seat``: the review in their language and numbering, the link to
    the game's page, threaded under the last mail of their game.  With ``chances`` its HTML
    shows the chart of the game as an inline picture; the text says every figure without it."""
    player = table.players[seat]
    language = player.language or config.service.language
    names = (seat_name(table, 0, language), seat_name(table, 1, language))
    images: tuple[InlineImage, ...] = ()
    chart: dict[str, str] | None = None
    if chances is not None and chances.points:
        drawn = review_chart(chances, number, names, language)
        picture = InlineImage(new_content_id("chances", config.service.address), "chances.png",
                              chart_png(drawn, CHART_WIDTH, CHART_HEIGHT))
        images = (picture,)
        chart = {"cid": picture.content_id, "alt": drawn.description, "caption": chart_caption(chances, names, language)}
    context = {
        "me": shown_name(player, language),
        "names": list(names), "chart": chart,
        "number": number, "reviews": [render_event(event, table, seat, language) for event in events],
        "running": table.status is MatchStatus.RUNNING, "service": config.service,
        "web_link": None if config.web is None else config.web.link(table.token(seat)),
        "games_link": games_link(session, player, config)}
    module: Any = environment().get_template(f"{language}/review.txt").make_module({"language": language, **context})
    subject = str(module.subject()).strip()
    answering = last_mail_of(table, seat)
    return Letter(to_address=player.address, to_name=player.name, subject=subject, text=wrap_prose(str(module)),
                  html=render("review.html", language, subject=subject, **context), language=language,
                  token=table.token(seat), in_reply_to=answering.message_id, references=answering.references,
                  images=images)


async def run_reviews(engine: Engine, config: Config, compute: Compute,
                      clock: Callable[[], datetime] = utc_now, stopping: Callable[[], bool] = lambda: False) -> int:
    """Do the pending review jobs, oldest first, until ``stopping()``; returns how many were mailed.

    The database work runs in threads and the review in ``compute``, so the event loop (and
    the mail it carries) never waits for either.  A daemon asked to stop finishes the review in
    hand (a few seconds) and claims no more.
    """
    mailed = 0
    for job_id in await asyncio.to_thread(pending_jobs, engine, clock()):
        if stopping():
            break
        claimed = await asyncio.to_thread(claim, engine, job_id, clock())
        if claimed is None:
            continue
        try:
            result = claimed.result if claimed.result is not None else await compute(claimed.game)
        except Exception as exc:
            await asyncio.to_thread(give_back, engine, job_id, f"{type(exc).__name__}: {exc}", clock())
            continue
        if await asyncio.to_thread(finish, engine, config, job_id, result, clock()):
            mailed += 1
    return mailed


def review_job(config: Config) -> PeriodicJob:
    """The scheduler job for ``pbem serve``: its own engine, and one worker process for bgsage."""
    engine = make_engine(config.database.url)
    pool = ReviewPool(config.assistant.plies)
    stopping = threading.Event()

    async def run() -> None:
        await run_reviews(engine, config, pool.compute, stopping=stopping.is_set)

    def close() -> None:
        pool.close()
        engine.dispose()

    return PeriodicJob("review-games", run, REVIEW_JOB_INTERVAL, stop=stopping.set, close=close)
