"""The whole service on real mail servers: players' mails go in by IMAP, answers come out by SMTP.

:class:`LivePostOffice` is the post office of ``tests/service/post_office.py`` (so its players,
bots and checks of every answer work unchanged), but behind it runs the real daemon
(:class:`pbem.daemon.scheduler.Daemon`) with :class:`ImapSource` on Dovecot and :class:`SmtpSink`
on aiosmtpd. The daemon runs in the main thread's event loop (it installs signal handlers); the
players' script runs in a worker thread and waits, after each mail, until the mailbox is empty
and every answer owed has been sent.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default as default_policy
from functools import partial
from pathlib import Path
from typing import TypeVar

from sqlmodel import Session, col, func, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "service"))

from mail_servers import Dovecot, SmtpServer
from post_office import LoadedDice, PostOffice

from pbem.config import Config
from pbem.daemon.pipeline import MailPipeline
from pbem.daemon.scheduler import Daemon
from pbem.periodic import PeriodicJob
from pbem.mail.imap import ImapSource
from pbem.mail.smtp import SmtpSink
from pbem.service import handle_mail
from pbem.store.mail_records import OutboundMail

T = TypeVar("T")
SERVICE_USER = "backgammon@localhost"
SETTLE_SECONDS = 30.0


class LivePostOffice(PostOffice):
    def __init__(self, config: Config, dovecot: Dovecot, smtp: SmtpServer, dice: LoadedDice | None = None) -> None:
        super().__init__(config, dice)
        self.dovecot = dovecot
        self.smtp = smtp
        self.collected = 0
        self.delivered_at: dict[str, float] = {}
        self.disruptions: dict[int, Callable[[], None]] = {}
        """Trouble to cause right after the n-th delivery (1-based), while the daemon reads it."""
        self.jobs: list[PeriodicJob] = []
        """Periodic jobs the daemon runs besides the mail (the review job, in the bench)."""

    def deliver(self, message: EmailMessage) -> list[EmailMessage]:
        """Put the mail into the service's mailbox, wait for the daemon, return what it sent."""
        self.delivered_at[str(message["Message-ID"])] = time.monotonic()
        self.dovecot.deliver(SERVICE_USER, message)
        if disruption := self.disruptions.get(len(self.delivered_at)):
            disruption()
        self.settle()
        return self.collect()

    def settle(self, timeout: float = SETTLE_SECONDS) -> None:
        """Wait until the mailbox is empty and every answer owed was accepted by the SMTP server."""
        deadline = time.monotonic() + timeout
        while self.dovecot.pending(SERVICE_USER) or self.unsent():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.dovecot.pending(SERVICE_USER)} mails waiting, unsent: {self.unsent_rows()}")
            time.sleep(0.01)

    def unsent(self) -> int:
        """How many answers wait to be sent (counted by the database: the rows hold whole mails)."""
        with Session(self.engine) as session:
            return session.exec(select(func.count()).select_from(OutboundMail)
                                .where(col(OutboundMail.sent_at).is_(None))).one()

    def unsent_rows(self) -> list[tuple]:
        with Session(self.engine) as session:
            query = select(OutboundMail).where(col(OutboundMail.sent_at).is_(None))
            return [(row.message_id, row.attempts, row.next_attempt_at, row.last_error)
                    for row in session.exec(query).all()]

    def collect(self) -> list[EmailMessage]:
        """The mails the SMTP server received since the last look, in order, with the line ends a
        mail client stores (LF)."""
        received = self.smtp.recorder.received[self.collected:]
        self.collected += len(received)
        return [message_from_bytes(mail.raw.replace(b"\r\n", b"\n"), policy=default_policy)  # type: ignore[misc]
                for mail in received]

    def run(self, script: Callable[[], T], poll_interval: float | None = None) -> T:
        """Run the daemon while `script` plays in a worker thread; returns what the script returns."""
        return asyncio.run(self._run(script, poll_interval or self.config.poll_interval))

    async def _run(self, script: Callable[[], T], poll_interval: float) -> T:
        assert self.config.imap is not None and self.config.smtp is not None
        handler = partial(handle_mail, config=self.config, dice=self.dice) if self.dice else partial(
            handle_mail, config=self.config)
        source, sink = ImapSource(self.config.imap, timeout=5), SmtpSink(self.config.smtp, timeout=5)
        daemon = Daemon(MailPipeline(self.engine, source, sink, handler), poll_interval, self.jobs)
        logging.getLogger("apscheduler").setLevel(logging.ERROR)  # a fast poll skips runs, as it should
        running = asyncio.ensure_future(daemon.run())
        try:
            return await asyncio.to_thread(script)
        finally:
            daemon.request_stop()
            await running
            await source.close()
            await sink.close()
