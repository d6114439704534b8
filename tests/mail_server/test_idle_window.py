"""Issue 36, item 6: no mail waits for the poll.  Once IDLE has begun, the source asks the
mailbox whether a mail waits that its last fetch did not return, since no IDLE push may name it:
one beyond the fetch's batch, announced before (the burst that waited 60 s), or one that came
between the fetch and IDLE (Dovecot announces that one as IDLE begins; the source does not rely
on it).  The poll here is long, so only the source's own look can wake the daemon in time."""

from __future__ import annotations

import asyncio
import time

from aioimaplib import aioimaplib
from conftest import SERVICE
from test_connections import imap_config

from pbem.mail.imap import ImapSource

WAIT = 8.0
"""The poll interval: a mail the source misses is seen only after this long."""


def _mail(number: int) -> bytes:
    return f"Subject: {number}\r\nMessage-ID: <window{number}@example.org>\r\n\r\nroll\r\n".encode()


def test_a_mail_that_comes_between_the_fetch_and_idle_wakes_the_daemon_at_once(dovecot, monkeypatch):
    """The server delivers at exactly that moment: just before the IDLE command goes out."""
    dovecot.deliver(SERVICE[0], _mail(1))
    real_idle_start = aioimaplib.IMAP4.idle_start
    deliveries: list[int] = []

    async def idle_start_after_a_delivery(self: aioimaplib.IMAP4, *args: object, **kwargs: object) -> object:
        if not deliveries:  # the first IDLE of the watcher: the mail arrives just before it
            deliveries.append(2)
            dovecot.deliver(SERVICE[0], _mail(2))
        return await real_idle_start(self, *args, **kwargs)

    monkeypatch.setattr(aioimaplib.IMAP4, "idle_start", idle_start_after_a_delivery)

    async def scenario() -> tuple[float, list[bytes]]:
        source = ImapSource(imap_config(dovecot), timeout=5)
        try:
            (first,) = await source.fetch()
            await source.mark_done(first.key)
            started = time.monotonic()
            await source.wait_for_mail(WAIT)
            woke = time.monotonic() - started
            return woke, [message.raw for message in await source.fetch()]
        finally:
            await source.close()

    woke, fetched = asyncio.run(scenario())
    assert deliveries == [2]
    assert woke < WAIT / 2 and len(fetched) == 1 and b"Subject: 2" in fetched[0], (woke, fetched)


def test_mail_left_beyond_a_fetchs_batch_is_read_at_once_not_at_the_poll(dovecot, monkeypatch):
    """The burst of issue 36: a fetch takes at most FETCH_BATCH mails, and the rest were
    announced to the watching connection already, so no later push names them (Dovecot's
    RECENT count, which often woke the daemon by chance, belongs to the connection that saw the
    mails first: here the one that fetched them, as with a second daemon)."""
    monkeypatch.setattr("pbem.mail.imap.FETCH_BATCH", 2)

    async def scenario() -> tuple[float, int, int]:
        source = ImapSource(imap_config(dovecot), timeout=5)
        try:
            await source.wait_for_mail(0.2)  # the watcher connects and waits; nothing came
            for number in range(3):  # a burst
                dovecot.deliver(SERVICE[0], _mail(10 + number))
            batch = await source.fetch()
            await source.wait_for_mail(WAIT)  # the burst announced to the watcher
            for message in batch:
                await source.mark_done(message.key)
            started = time.monotonic()
            await source.wait_for_mail(WAIT)
            return time.monotonic() - started, len(batch), len(await source.fetch())
        finally:
            await source.close()

    woke, first, rest = asyncio.run(scenario())
    assert (first, rest) == (2, 1) and woke < WAIT / 2, (woke, first, rest)
