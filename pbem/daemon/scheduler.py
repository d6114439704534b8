"""The daemon's run loop: APScheduler jobs for the inbox, the outbox and any periodic work.

Each job runs under its own lock, so it never overlaps itself however it was started (its
interval, or the inbox watcher that wakes as soon as mail arrives). On SIGTERM/SIGINT the mail in
hand is finished, nothing new is started, and `serve` returns.
"""

from __future__ import annotations

import asyncio
import fcntl
import gc
import logging
import re
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from datetime import datetime, timedelta, timezone

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy.engine import Engine, make_url
from starlette.types import ASGIApp

from pbem.config import Config
from pbem.daemon.pipeline import Handler, InboxResult, MailPipeline
from pbem.daemon.web import WebServer, WebServerError
from pbem.mail.headers import TOKEN_PATTERN
from pbem.mail.transport import open_inbound_source, open_outbound_sink
from pbem.periodic import PeriodicJob
from pbem.store.attempts import FileJournal
from pbem.store.db import clock_offset, create_schema, make_engine

log = logging.getLogger(__name__)

OUTBOX_INTERVAL = timedelta(seconds=5)
MAX_CLOCK_OFFSET_SECONDS = 5.0
"""A host whose clock is further off the database server's is told so at start: several daemons
need their clocks in step (an answer another daemon holds for 60 s would be sent twice)."""
YOUNG_COLLECTION_THRESHOLD = 7000
"""Allocations between two collections of the youngest generation (Python's default is 700):
reading and composing one mail makes tens of thousands of short-lived objects."""
ERROR_PAUSE_SECONDS = 1.0


class Daemon:
    """Runs the pipeline's stages and the periodic jobs until asked to stop."""

    def __init__(self, pipeline: MailPipeline, poll_interval: float,
                 jobs: Sequence[PeriodicJob] = ()) -> None:
        self.pipeline = pipeline
        self.poll_interval = poll_interval
        self._inbox_job = PeriodicJob("read-inbox", self._read_inbox, timedelta(seconds=poll_interval))
        self._outbox_job = PeriodicJob("flush-outbox", self._flush_outbox, OUTBOX_INTERVAL)
        self._jobs: list[PeriodicJob] = [self._inbox_job, self._outbox_job]
        self._locks: dict[str, asyncio.Lock] = {}
        self._stop_requested = asyncio.Event()
        self._sending: asyncio.Task[None] | None = None
        self._settled = False
        for job in jobs:
            self.add_periodic_job(job)

    def add_periodic_job(self, job: PeriodicJob) -> None:
        if any(existing.name == job.name for existing in self._jobs):
            raise ValueError(f"a job named {job.name!r} is already registered")
        self._jobs.append(job)

    def request_stop(self) -> None:
        if not self._stop_requested.is_set():
            log.info("stopping: finishing the mail in hand")
        self.pipeline.stop()
        for job in self._jobs:
            if job.stop is not None:
                job.stop()
        self._stop_requested.set()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for signal_number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signal_number, self.request_stop)
        scheduler = AsyncIOScheduler(timezone=timezone.utc)
        now = datetime.now(timezone.utc)
        for job in self._jobs:
            self._locks[job.name] = asyncio.Lock()
            scheduler.add_job(self._exclusively, "interval", args=[job], id=job.name, name=job.name,
                              seconds=job.interval.total_seconds(), next_run_time=now,
                              max_instances=1, coalesce=True, misfire_grace_time=None)
        scheduler.start()
        watcher = asyncio.create_task(self._watch_inbox())
        try:
            await self._stop_requested.wait()
        finally:
            scheduler.pause()
            await watcher
            for lock in self._locks.values():  # the job in hand finishes before we go
                async with lock:
                    pass
            scheduler.shutdown(wait=False)
            await self._hand_back_own_answers()
            for job in self._jobs:
                if job.close is not None:
                    job.close()
            for signal_number in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signal_number)

    async def _exclusively(self, job: PeriodicJob) -> bool:
        """Run `job` unless stopping, one run at a time; False when it raised (logged; the daemon goes on)."""
        async with self._locks[job.name]:
            if self._stop_requested.is_set():
                return True
            try:
                await job.run()
            except Exception as exc:
                log.error("%s: %s: %s", job.name, type(exc).__name__, exc)
                return False
            return True

    async def _watch_inbox(self) -> None:
        """Handle mail as soon as the source says it arrived, rather than at the next poll."""
        while not self._stop_requested.is_set():
            arrival = asyncio.ensure_future(self.pipeline.source.wait_for_mail(self.poll_interval))
            stop = asyncio.ensure_future(self._stop_requested.wait())
            done, pending = await asyncio.wait({arrival, stop}, return_when=asyncio.FIRST_COMPLETED)
            for future in pending:
                future.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            if stop in done:
                return
            if arrival.exception() is not None:
                log.error("read-inbox: waiting for mail failed: %s", arrival.exception())
                await asyncio.sleep(ERROR_PAUSE_SECONDS)
            elif not await self._exclusively(self._inbox_job):
                await asyncio.sleep(ERROR_PAUSE_SECONDS)  # mail that cannot be handled must not spin the loop

    async def _read_inbox(self) -> None:
        results = await self.pipeline.read_inbox(after_each=self._wake_outbox)
        if results and not self._settled:
            _settle_garbage_collector()
            self._settled = True
        if self._sending is not None:
            await self._sending

    def _wake_outbox(self, result: InboxResult) -> None:
        """Send the answers of a mail as soon as it is applied, while the next mail is applied,
        in a task of their own that the inbox job waits for at the end.  This daemon sends what
        its own mails queued (the pipeline keeps them); the outbox job (every few seconds) sends
        whatever else is due."""
        if result.answers and (self._sending is None or self._sending.done()):
            self._sending = asyncio.create_task(self._send_own_answers())

    async def _send_own_answers(self) -> None:
        async with self._locks[self._outbox_job.name]:  # not beside a flush of the whole outbox
            while self.pipeline.own_answers_waiting() and not self.pipeline.stopping:
                try:
                    await self.pipeline.send_own_answers()
                except Exception as exc:  # the database: the outbox job sends them when it can
                    log.error("sending the answers: %s: %s", type(exc).__name__, exc)
                    return

    async def _flush_outbox(self) -> None:
        await self.pipeline.flush_outbox()

    async def _hand_back_own_answers(self) -> None:
        if self._sending is not None:
            await self._sending
        try:
            await asyncio.to_thread(self.pipeline.hand_back_own_answers)
        except Exception as exc:  # the database: they are sent once their lease is over
            log.error("handing back the answers not sent: %s: %s", type(exc).__name__, exc)


def _settle_garbage_collector() -> None:
    """Once the first mail was applied (modules, templates, fonts and sprites are loaded by then),
    leave what exists out of every later collection (``gc.freeze``: the full collections scanned
    those hundreds of thousands of objects again and again) and collect young objects less often:
    a tenth of a move's CPU went to the collector."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


class AlreadyServing(Exception):
    """Another `pbem serve` holds the SQLite database: a second daemon on one SQLite file is refused."""


@contextmanager
def sqlite_daemon_lock(config: Config) -> Iterator[None]:
    """On SQLite, one daemon per database file: an exclusive lock on ``FILE.serve-lock`` for as long
    as the daemon runs (the kernel drops it when the process dies).  Several daemons need PostgreSQL.
    ``pbem restore`` takes it too: it replaces the file only while no daemon runs on it."""
    url = make_url(config.database.url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        yield
        return
    path = Path(url.database).with_name(Path(url.database).name + ".serve-lock")
    with open(path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AlreadyServing(f"another pbem serve is running on {url.database} (lock {path}); "
                                 "several daemons need PostgreSQL") from None
        yield


WebApp = Callable[[Engine], ASGIApp]
"""Makes the web board's app on the daemon's database engine (unless ``[web] enabled = false``)."""


async def serve(config: Config, handler: Handler, jobs: Sequence[PeriodicJob] = (),
                web_app: WebApp | None = None) -> None:
    """Run `handler` on the mail of `config`, and `jobs`, until SIGTERM/SIGINT (the CLI wires in
    the game service; tests may wire in another handler); with ``[web]`` and ``web_app``, the
    web board too, in the same event loop."""
    with sqlite_daemon_lock(config):
        await _serve(config, handler, jobs, web_app)


async def _serve(config: Config, handler: Handler, jobs: Sequence[PeriodicJob], web_app: WebApp | None) -> None:
    engine = make_engine(config.database.url)
    create_schema(engine)
    offset = clock_offset(engine)
    if abs(offset) > MAX_CLOCK_OFFSET_SECONDS:
        log.warning("this host's clock is %.0f s %s the database server's: keep the clocks of every host in step "
                    "(NTP), or several daemons may send an answer twice and end a game's clock early or late",
                    abs(offset), "behind" if offset > 0 else "ahead of")
    web = None
    if config.web is not None and web_app is not None:
        try:
            web = WebServer(config.web, web_app(engine))
        except WebServerError:
            engine.dispose()
            raise
    source = open_inbound_source(config)
    sink = open_outbound_sink(config)
    log.info("pbem serving %s (config: %s)", config.service.address, config.source)
    log.info("data directory %s; database %s", config.data_dir,
             make_url(config.database.url).render_as_string(hide_password=True))
    log.info("inbox %r; outbox %r", source, sink)
    try:
        pipeline = MailPipeline(engine, source, sink, handler, give_up_after=config.limits.give_up_after,
                                journal=FileJournal(config.applying_dir))
        if engine.dialect.name == "sqlite":  # the only daemon on this file (sqlite_daemon_lock)
            pipeline.take_back_leases()
        if web is not None:
            web.start()
        await Daemon(pipeline, config.poll_interval, jobs).run()
    finally:
        if web is not None:
            await web.stop()
        await source.close()
        await sink.close()
        engine.dispose()
    log.info("stopped")


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class WithoutTokens(logging.Formatter):
    """Cuts game tokens out of every log line as written: a token opens the game's page on the
    web board, and our Message-IDs (which the pipeline logs) begin with the recipient's token.
    It redacts the whole formatted output, not only the message: the arguments, an exception's
    text and its traceback too (SQLAlchemy's errors print their ``[parameters: …]``)."""

    _TOKEN = re.compile(rf"(?<![a-z0-9]){TOKEN_PATTERN}(?![a-z0-9])")

    def format(self, record: logging.LogRecord) -> str:
        formatted = self._TOKEN.sub("…", super().format(record))
        if record.exc_text:  # cached by format(); another handler would print it as it is
            record.exc_text = self._TOKEN.sub("…", record.exc_text)
        return formatted


def configure_logging(verbose: bool = False) -> None:
    """One line per event on standard error, as `pbem serve` logs (for journald or a terminal),
    without game tokens; the chatty libraries' INFO lines (Alembic's ten at every start, the
    scheduler's, every IMAP response) only when ``verbose``."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=LOG_FORMAT)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(WithoutTokens(LOG_FORMAT))
    quiet = logging.INFO if verbose else logging.WARNING
    logging.getLogger("alembic").setLevel(quiet)  # "Context impl SQLiteImpl.", "Will assume …", "Running stamp …"
    logging.getLogger("apscheduler").setLevel(quiet)
    logging.getLogger("aioimaplib").setLevel(quiet)  # it logs every untagged response at INFO
    logging.getLogger("uvicorn.error").setLevel(quiet)  # "Started server process", "Waiting for …"
