"""The mail pipeline, in stages that each do one thing and can be repeated safely (Mailman runners).

Inbox: a source message → its Message-ID → already processed? mark done at the source and stop →
else, in one transaction, the InboundMail row and whatever the handler changes (state and
OutboundMail rows) → commit → mark done. A handler that raises leaves no trace but a `failed`
InboundMail row, and the message is shunted (mark_failed) so the next one can go on; a database
that is unreachable or busy (OperationalError) is no fault of the mail: it stays for the next round.

Before a mail's transaction starts, an InboundAttempt row is committed and counted up; the
transaction that applies the mail deletes it. A row left behind means the process died in that
mail: a mail that killed the process twice is shunted instead of applied a third time, so one
poison mail cannot keep the daemon in a crash loop.

Several daemons may share one PostgreSQL database and one mailbox: a mail is claimed (an
advisory lock on its Message-ID) before it is applied, and a daemon that finds it claimed leaves
it to the other; what a mail changes is locked (``pbem.service.tables``) or versioned, and a mail
whose rows another process changed meanwhile is applied again from the start.

Outbox: unsent OutboundMail rows whose time has come → claimed (their next attempt moved past a
lease, in one conditional UPDATE) → sink → `sent_at`. A failed send is retried
with growing back-off (capped at an hour) under the same Message-ID, until the server refuses
every recipient for good (5xx) or `give_up_after` has passed: then it is given up, logged and
listed by `pbem status`. One mail that cannot be sent never holds up the others. A crash between
sending and recording means the mail is sent again: at least once, and the Maildir sink makes
that exactly once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum

from sqlalchemy.engine import Engine
from sqlalchemy import update
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, col, select

from pbem.mail.connecting import PermanentRefusal
from pbem.mail.sinks import OutboundSink
from pbem.mail.reading import message_id_of, sender_and_subject
from pbem.mail.sources import InboundSource, SourceMessage
from pbem.store.db import claim, session_scope, utc_now
from pbem.store.mail_records import InboundAttempt, InboundMail, InboundState, OutboundGivenUp, OutboundMail

log = logging.getLogger(__name__)

Handler = Callable[[Session, bytes, InboundMail], None]
"""The application: applies one mail within the open transaction `session`.

It may set `inbound.state = InboundState.IGNORED` and `inbound.reason`; it queues answers with
`pbem.store.mail_records.queue_mail(session, message)`. Raising rolls everything back and shunts the mail.
"""

MAX_ERROR_LENGTH = 500
RETRY_FIRST = timedelta(seconds=30)
RETRY_MAX = timedelta(hours=1)
MAX_DEATHS = 2
"""A mail during which the process died this often is shunted, not tried again."""
CONFLICT_ATTEMPTS = 3
"""How often a mail is applied again when another process changed the same rows meanwhile."""
OUTBOX_LEASE = timedelta(minutes=10)
"""How long a claimed answer is left to the daemon that claimed it; one that died meanwhile
leaves it to be sent by another (or by itself, restarted) after that."""
GIVE_UP_AFTER = timedelta(days=3)


def retry_delay(attempts: int) -> timedelta:
    """30 s after the first failure, doubling up to an hour: a mail server gets time to come back.

    The exponent stops growing once the hour is reached, so no number of attempts overflows.
    """
    doublings = min(max(attempts - 1, 0), 16)
    return min(RETRY_FIRST * 2**doublings, RETRY_MAX)


class Outcome(Enum):
    APPLIED = "applied"
    IGNORED = "ignored"
    FAILED = "failed"
    ALREADY_DONE = "already done"
    IN_HAND = "in hand elsewhere"
    """Another daemon is applying this mail right now; it also puts it away."""


@dataclass(frozen=True)
class InboxResult:
    outcome: Outcome
    message_id: str
    reason: str = ""


@dataclass
class MailPipeline:
    """The inbox and outbox stages over one database, one source and one sink."""

    engine: Engine
    source: InboundSource
    sink: OutboundSink
    handler: Handler
    delay_after_failure: Callable[[int], timedelta] = retry_delay
    clock: Callable[[], datetime] = utc_now
    give_up_after: timedelta = GIVE_UP_AFTER
    stopping: bool = field(default=False, init=False)

    def stop(self) -> None:
        """Finish the mail in hand, then take no more."""
        self.stopping = True

    async def read_inbox(self) -> list[InboxResult]:
        """Process every waiting message, one transaction each."""
        results = []
        for message in await self.source.fetch():
            if self.stopping:
                break
            try:
                results.append(await self.process(message))
            except Exception:  # the database or the source failed: the mail stays for the next round
                log.exception("inbox %s: not processed, will be tried again", message.key)
        return results

    async def process(self, message: SourceMessage) -> InboxResult:
        """Claim the mail, apply it (in a worker thread, so a slow handler does not stall the
        event loop), put it away, and only then release the claim: another daemon that read the
        same mail finds it applied and already moved."""
        message_id = message_id_of(message.raw)
        release = await asyncio.to_thread(claim, self.engine, message_id)
        if release is None:
            log.debug("inbox %s: %s", message_id, Outcome.IN_HAND.value)
            return InboxResult(Outcome.IN_HAND, message_id)
        try:
            result = await asyncio.to_thread(self._apply, message.raw, message_id)
            if result.outcome is Outcome.FAILED:
                await self.source.mark_failed(message.key, result.reason)
            else:
                await self.source.mark_done(message.key)
        finally:
            await asyncio.to_thread(release)
        log.info("inbox %s: %s%s", result.message_id, result.outcome.value,
                 f" ({result.reason})" if result.reason else "")
        return result

    def _apply(self, raw: bytes, message_id: str) -> InboxResult:
        with session_scope(self.engine) as session:
            previous = self._find_inbound(session, message_id)
            if previous is not None and previous.state == InboundState.FAILED:
                # Shunted before (by this daemon before a crash, or by another one meanwhile):
                # put aside again, not applied again, until the operator requeues it.
                return InboxResult(Outcome.FAILED, message_id, previous.reason)
            if previous is not None and previous.state != InboundState.REQUEUED:
                return InboxResult(Outcome.ALREADY_DONE, message_id)
            deaths = self._count_attempt(session, message_id)
        if deaths >= MAX_DEATHS:
            reason = f"the process died {deaths} times while applying this mail; shunted"
            log.error("inbox %s: %s", message_id, reason)
            return self._record_failure(raw, message_id, reason)
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            try:
                return self._apply_once(raw, message_id)
            except (IntegrityError, StaleDataError) as exc:
                # Another process changed what this mail read (a game, a player) or applied the
                # same mail meanwhile: read everything again, up to CONFLICT_ATTEMPTS times.
                if self._is_processed(message_id):
                    return InboxResult(Outcome.ALREADY_DONE, message_id)
                if attempt == CONFLICT_ATTEMPTS:
                    return self._record_failure(raw, message_id, exc)
                log.info("inbox %s: changed meanwhile by another process (%s); applying it again",
                         message_id, type(exc).__name__)
            except (OperationalError, InterfaceError):
                # The database went away or is busy: the mail stays in the inbox and is tried again
                # (its attempt stays counted, so a mail that keeps failing this way is shunted too).
                raise
            except Exception as exc:
                return self._record_failure(raw, message_id, exc)
        raise AssertionError("unreachable")

    def _apply_once(self, raw: bytes, message_id: str) -> InboxResult:
        with session_scope(self.engine) as session:
            inbound = self._find_inbound(session, message_id) or self._new_inbound(raw, message_id)
            inbound.state, inbound.reason = InboundState.APPLIED, ""
            session.add(inbound)
            session.flush()
            self.handler(session, raw, inbound)
            inbound.processed_at = self.clock()
            session.add(inbound)
            self._forget_attempt(session, message_id)
        return InboxResult(Outcome(str(inbound.state)), message_id, inbound.reason)

    def _count_attempt(self, session: Session, message_id: str) -> int:
        """Record that applying the mail starts; returns how often it started before and never ended."""
        attempt = session.get(InboundAttempt, message_id) or InboundAttempt(message_id=message_id,
                                                                            started_at=self.clock())
        deaths = attempt.attempts
        attempt.attempts, attempt.started_at = deaths + 1, self.clock()
        session.add(attempt)
        return deaths

    @staticmethod
    def _forget_attempt(session: Session, message_id: str) -> None:
        attempt = session.get(InboundAttempt, message_id)
        if attempt is not None:
            session.delete(attempt)

    def _record_failure(self, raw: bytes, message_id: str, error: Exception | str) -> InboxResult:
        reason = error if isinstance(error, str) else _describe(error)
        if isinstance(error, Exception):
            log.error("inbox %s: failed: %s", message_id, reason, exc_info=error)
        with session_scope(self.engine) as session:
            inbound = self._find_inbound(session, message_id) or self._new_inbound(raw, message_id)
            inbound.state, inbound.reason, inbound.processed_at = InboundState.FAILED, reason, self.clock()
            session.add(inbound)
            self._forget_attempt(session, message_id)
        return InboxResult(Outcome.FAILED, message_id, reason)

    def _new_inbound(self, raw: bytes, message_id: str) -> InboundMail:
        sender, subject = sender_and_subject(raw)
        return InboundMail(message_id=message_id, sender=sender, subject=subject, raw=raw,
                           received_at=self.clock())

    def _is_processed(self, message_id: str) -> bool:
        with session_scope(self.engine) as session:
            inbound = self._find_inbound(session, message_id)
            return inbound is not None and inbound.state not in (InboundState.FAILED, InboundState.REQUEUED)

    @staticmethod
    def _find_inbound(session: Session, message_id: str) -> InboundMail | None:
        return session.exec(select(InboundMail).where(InboundMail.message_id == message_id)).first()

    async def flush_outbox(self) -> int:
        """Send every due mail once; returns how many were sent."""
        sent = 0
        for outbound_id in await asyncio.to_thread(self._due_ids):
            if self.stopping:
                break
            try:
                sent += await self._send_one(outbound_id)
            except Exception:  # recording failed (the database): the mail is due again next round
                log.exception("outbox row %d: not recorded, will be tried again", outbound_id)
        return sent

    def _due_ids(self) -> list[int]:
        with session_scope(self.engine) as session:
            given_up = select(OutboundGivenUp.outbound_id)
            query = (select(OutboundMail.id).where(col(OutboundMail.sent_at).is_(None))
                     .where(OutboundMail.next_attempt_at <= self.clock())
                     .where(col(OutboundMail.id).not_in(given_up)).order_by(col(OutboundMail.id)))
            return [outbound_id for outbound_id in session.exec(query).all() if outbound_id is not None]

    async def _send_one(self, outbound_id: int) -> int:
        outbound = await asyncio.to_thread(self._claim_outbound, outbound_id)
        if outbound is None:
            return 0
        try:
            await self.sink.send(outbound.raw, outbound.sender, list(outbound.recipients))
        except Exception as exc:
            delay = self.delay_after_failure(outbound.attempts + 1)
            give_up = isinstance(exc, PermanentRefusal) or self.clock() - outbound.created_at >= self.give_up_after
            await asyncio.to_thread(self._record_send, outbound_id, error=_describe(exc), delay=delay,
                                    give_up=give_up)
            if give_up:
                log.error("outbox %s to %s: given up after %d attempts (%s)", outbound.message_id,
                          ", ".join(outbound.recipients), outbound.attempts + 1, _describe(exc))
            else:
                log.warning("outbox %s to %s: not sent, attempt %d, retry in %ds (%s)", outbound.message_id,
                            ", ".join(outbound.recipients), outbound.attempts + 1, delay.total_seconds(),
                            _describe(exc))
            return 0
        await asyncio.to_thread(self._record_send, outbound_id)
        log.info("outbox %s to %s: sent", outbound.message_id, ", ".join(outbound.recipients))
        return 1

    def _claim_outbound(self, outbound_id: int) -> OutboundMail | None:
        """The mail, claimed for sending by this process for OUTBOX_LEASE; None when it is sent
        or was claimed by another daemon meanwhile.  One conditional UPDATE decides, so of
        several daemons exactly one sends it."""
        now = self.clock()
        with session_scope(self.engine) as session:
            claim = (update(OutboundMail).where(col(OutboundMail.id) == outbound_id)
                     .where(col(OutboundMail.sent_at).is_(None)).where(col(OutboundMail.next_attempt_at) <= now)
                     .values(next_attempt_at=now + OUTBOX_LEASE))
            if session.connection().execute(claim).rowcount != 1:
                return None
            return session.get(OutboundMail, outbound_id)

    def _record_send(self, outbound_id: int, *, error: str = "", delay: timedelta = timedelta(0),
                     give_up: bool = False) -> None:
        with session_scope(self.engine) as session:
            outbound = session.get(OutboundMail, outbound_id)
            if outbound is None:
                return
            now = self.clock()
            outbound.attempts += 1
            outbound.last_error = error
            if error:
                outbound.next_attempt_at = now + delay
            else:
                outbound.sent_at = now
            session.add(outbound)
            if give_up and session.get(OutboundGivenUp, outbound_id) is None:
                session.add(OutboundGivenUp(outbound_id=outbound_id, given_up_at=now, reason=error))


def _describe(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return " ".join(text.split())[:MAX_ERROR_LENGTH]
