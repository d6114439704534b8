"""The daemon's run loop in-process: jobs never overlap themselves, errors do not stop it, stop is clean."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from datetime import timedelta

import pytest

from echo_handlers import ignore

from pbem.daemon.pipeline import MailPipeline
from pbem.daemon.scheduler import Daemon
from pbem.periodic import PeriodicJob
from pbem.mail.sinks import MaildirSink
from pbem.mail.sources import MaildirSource


def make_daemon(engine, config, jobs=()) -> Daemon:
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir), ignore)
    return Daemon(pipeline, poll_interval=60, jobs=jobs)


def test_a_periodic_job_never_runs_concurrently_with_itself_and_errors_are_logged(engine, config, caplog):
    running = 0
    overlaps = []
    runs = 0

    async def slow_and_sometimes_failing() -> None:
        nonlocal running, runs
        running += 1
        overlaps.append(running)
        runs += 1
        await asyncio.sleep(0.25)
        running -= 1
        if runs == 1:
            raise ValueError("first run fails")

    async def scenario() -> None:
        daemon = make_daemon(engine, config, [PeriodicJob("clocks", slow_and_sometimes_failing,
                                                          timedelta(seconds=0.05))])
        asyncio.get_running_loop().call_later(1.2, daemon.request_stop)
        await daemon.run()

    with caplog.at_level(logging.ERROR):
        asyncio.run(scenario())
    assert runs >= 2 and max(overlaps) == 1
    assert "clocks: ValueError: first run fails" in caplog.text


def test_sigterm_stops_the_run_loop(engine, config):
    async def scenario() -> None:
        daemon = make_daemon(engine, config)
        asyncio.get_running_loop().call_later(0.3, os.kill, os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(daemon.run(), timeout=10)

    asyncio.run(scenario())


def test_job_names_are_unique(engine, config):
    daemon = make_daemon(engine, config)
    job = PeriodicJob("read-inbox", lambda: asyncio.sleep(0), timedelta(seconds=1))
    with pytest.raises(ValueError, match="read-inbox"):
        daemon.add_periodic_job(job)


class BrokenSource:
    """Always says mail is there, and fails to read it."""

    def __init__(self) -> None:
        self.fetches = 0

    async def fetch(self):
        self.fetches += 1
        raise OSError("disk on fire")

    async def wait_for_mail(self, timeout: float) -> None:
        return None

    async def mark_done(self, key: str) -> None: ...

    async def mark_failed(self, key: str, reason: str) -> None: ...

    async def close(self) -> None: ...


def test_a_failing_inbox_does_not_spin_or_stop_the_daemon(engine, config, caplog):
    source = BrokenSource()

    async def scenario() -> None:
        pipeline = MailPipeline(engine, source, MaildirSink(config.outbox_dir), ignore)
        daemon = Daemon(pipeline, poll_interval=60)
        asyncio.get_running_loop().call_later(1.5, daemon.request_stop)
        await daemon.run()

    with caplog.at_level(logging.ERROR):
        asyncio.run(scenario())
    assert 2 <= source.fetches <= 4
    assert "read-inbox: OSError: disk on fire" in caplog.text
