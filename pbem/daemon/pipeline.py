"""The mail pipeline, in stages that each do one thing and can be repeated safely (Mailman runners).

Inbox: a source message → its Message-ID → already processed? mark done at the source and stop →
else, in one transaction, the InboundMail row and whatever the handler changes (state and
OutboundMail rows) → commit → mark done. A handler that raises leaves no trace but a `failed`
InboundMail row, and the message is shunted (mark_failed) so the next one can go on; a database
that is unreachable or busy (OperationalError) is no fault of the mail: it stays for the next round.

Before a mail's transaction starts, its start is written to the attempt journal
(:mod:`pbem.store.attempts`, a file in the data directory), and once the transaction committed
it is removed. A start left behind means the process died in that mail: a mail that killed the
process twice is shunted instead of applied a third time, so one poison mail cannot keep the
daemon in a crash loop. The mail's transaction is its only one: it finds whether the mail was
applied before, applies it, and stores its record, its changes and its answers together.

Several daemons may share one PostgreSQL database and one mailbox: a mail is claimed (an
advisory lock on its Message-ID) before it is applied, and a daemon that finds it claimed leaves
it to the other; what a mail changes is locked (``pbem.service.table.tables``) or versioned, and a mail
whose rows another process changed meanwhile is applied again from the start.

Outbox: the answers a daemon's own mail queued are its own for OWN_ANSWER_LEASE (their next
attempt is put that far ahead in the mail's transaction, so no other daemon's outbox job takes
them): it sends them from memory, as soon as the mail is applied, without claiming or reading
them again, and records each by one UPDATE. Every other unsent OutboundMail row whose time has
come (another daemon's that died, a retry) → each claimed (on PostgreSQL an advisory lock, and
its next attempt put SEND_LEASE ahead) and read again → sink → `sent_at`, recorded while the
next one is sent → claim released. A failed send is retried
with growing back-off (capped at an hour) under the same Message-ID, until the server refuses
every recipient for good (5xx) or `give_up_after` has passed: then it is given up, logged and
listed by `pbem status`. A crash between sending and recording means the mail is sent again: at
least once, and the Maildir sink makes that exactly once.

Each recipient's mails about one match (its *conversation*: the same ``match_id`` and
recipients) go out in the order they were queued, through retries, restarts and several daemons:
a mail waits while an earlier one of its conversation is neither sent nor given up (an own answer
that must wait is made due at once, for whichever outbox job sends it after the earlier one, and
so is the earlier one if it waits out a back-off: the newest mail never waits an hour for a retry),
and is checked again as it is claimed.  A game mail is dropped unsent (given up as
:data:`~pbem.store.mail_records.SUPERSEDED`) when a newer mail of its conversation shows a later
state of the game (its Message-ID's stamp) and was sent already, or when it is itself a retry
(a first attempt that failed may have been delivered, and a later call to act is on its way):
it would tell its reader to act on a turn that is over.  One mail that cannot be sent holds up
only the later mails of its own conversation.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from sqlalchemy.engine import Engine, Row
from sqlalchemy import ColumnElement, Text, and_, bindparam, cast, insert, inspect, or_, update
from sqlalchemy.orm import aliased
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, col, select

from pbem.mail.composing import parse_game_message_id
from pbem.mail.connecting import PermanentRefusal
from pbem.mail.sinks import OutboundSink
from pbem.mail.headers import message_id_of, sender_and_subject
from pbem.mail.sources import InboundSource, SourceMessage
from pbem.store.attempts import AttemptJournal, MemoryJournal
from pbem.store.db import claim, once_more_if_disconnected, session_scope, utc_now
from pbem.store.mail_records import (SUPERSEDED, InboundMail, InboundState, OutboundGivenUp, OutboundMail,
                                     hold_answers_until, queued_mails)

log = logging.getLogger(__name__)

Handler = Callable[[Session, bytes, InboundMail], None]
"""The application: applies one mail within the open transaction `session`.

It may set `inbound.state = InboundState.IGNORED` and `inbound.reason`; it queues answers with
`pbem.store.mail_records.queue_mail(session, message)`. Raising rolls everything back and shunts the mail.
A new mail's record comes without `sender` and `subject`: the handler may set them from its own
reading of the mail (``pbem.mail.headers.sender_and_subject`` gives the same), and those it left
empty are taken from the header after it ran (the header is then not parsed twice).
"""

MAX_ERROR_LENGTH = 500
RETRY_FIRST = timedelta(seconds=30)
RETRY_MAX = timedelta(hours=1)
MAX_DEATHS = 2
"""A mail during which the process died this often is shunted, not tried again."""
CONFLICT_ATTEMPTS = 3
"""How often a mail is applied again when another process changed the same rows meanwhile."""
GIVE_UP_AFTER = timedelta(days=3)
SEND_LEASE = timedelta(seconds=30)
"""On PostgreSQL, how long a claimed answer is left to the daemon sending it even if its claim
is lost; a daemon killed while sending leaves the answer to be sent again after that."""
OWN_ANSWER_LEASE = timedelta(seconds=60)
"""How long the answers of a daemon's own mail are left to it alone: no other daemon's outbox job
takes them before (by its own clock).  A daemon that stops cleanly hands them back at once; one
killed first leaves them to any daemon's outbox job once the lease is over (on SQLite, where one
daemon runs per file, the next daemon takes them back as it starts)."""
OUTBOX_BATCH = 16
"""How many due answers are read at a time (each is claimed on its own as it is sent)."""


def retry_delay(attempts: int) -> timedelta:
    """30 s after the first failure, doubling up to an hour: a mail server gets time to come back.

    The exponent stops growing once the hour is reached, so no number of attempts overflows.
    """
    doublings = min(max(attempts - 1, 0), 16)
    return min(RETRY_FIRST * (1 << doublings), RETRY_MAX)


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
    answers: tuple[int, ...] = ()
    """The OutboundMail rows its transaction queued: this daemon sends them first."""


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
    journal: AttemptJournal = field(default_factory=MemoryJournal)
    """Where the start of each mail is written down before it is applied (``pbem serve``: a
    :class:`pbem.store.attempts.FileJournal` in the data directory)."""
    stopping: bool = field(default=False, init=False)
    _own_answers: deque[ClaimedMail] = field(default_factory=deque, init=False)
    """The answers this pipeline's mails queued, not yet sent: its own while their lease lasts."""
    _in_hand: set[int] = field(default_factory=set, init=False)
    """Mails sent whose sending is being recorded: the later mails of their conversations need
    not wait for the record."""
    _put_off: bool = field(default=False, init=False)
    """An own answer waits for an earlier mail of its conversation: the due mails are sent next."""

    def stop(self) -> None:
        """Finish the mail in hand, then take no more."""
        self.stopping = True

    async def read_inbox(self, after_each: Callable[[InboxResult], None] = lambda result: None) -> list[InboxResult]:
        """Process every waiting message, one transaction each; `after_each` hears of each one
        processed as soon as it is put away (the daemon starts sending its answers meanwhile)."""
        results = []
        for message in await self.source.fetch():
            if self.stopping:
                break
            try:
                results.append(await self.process(message))
            except Exception:  # the database or the source failed: the mail stays for the next round
                log.exception("inbox %s: not processed, will be tried again", message.key)
            else:
                after_each(results[-1])
        return results

    async def process(self, message: SourceMessage) -> InboxResult:
        """Claim the mail, apply it (in a worker thread, so a slow handler does not stall the
        event loop), put it away, and only then release the claim: another daemon that read the
        same mail finds it applied and already moved."""
        message_id = message_id_of(message.raw)
        several = self.engine.dialect.name == "postgresql"  # on SQLite a claim is nothing
        applying = asyncio.ensure_future(asyncio.to_thread(
            self._claim_and_apply if several else self._apply_unclaimed, message.raw, message_id))
        try:
            claimed = await asyncio.shield(applying)
        except asyncio.CancelledError:  # the thread goes on: its claim is let go once it is done
            applying.add_done_callback(functools.partial(_let_go_once_applied, message_id))
            raise
        if claimed is None:
            log.debug("inbox %s: %s", message_id, Outcome.IN_HAND.value)
            return InboxResult(Outcome.IN_HAND, message_id)
        release, result = claimed
        try:
            if result.outcome is Outcome.FAILED:
                await self.source.mark_failed(message.key, result.reason)
            else:
                await self.source.mark_done(message.key)
        finally:
            if several:
                await asyncio.to_thread(_let_go, release, message_id)
        log.info("inbox %s: %s%s", result.message_id, result.outcome.value,
                 f" ({result.reason})" if result.reason else "")
        return result

    def _claim_and_apply(self, raw: bytes, message_id: str) -> tuple[Callable[[], None], InboxResult] | None:
        """In one worker thread: claim the mail, then apply it; None when another daemon holds it.
        The claim is kept (and returned) until the mail is put away."""
        release = claim(self.engine, message_id)
        if release is None:
            return None
        try:
            return release, self._apply(raw, message_id)
        except BaseException:
            _let_go(release, message_id)
            raise

    def _apply_unclaimed(self, raw: bytes, message_id: str) -> tuple[Callable[[], None], InboxResult]:
        return _nothing, self._apply(raw, message_id)

    def _apply(self, raw: bytes, message_id: str) -> InboxResult:
        deaths = self.journal.start(message_id)
        try:
            if deaths >= MAX_DEATHS:
                reason = f"the process died {deaths} times while applying this mail; shunted"
                log.error("inbox %s: %s", message_id, reason)
                result = self._record_failure(raw, message_id, reason)
            else:
                result = once_more_if_disconnected(lambda: self._apply_with_retries(raw, message_id))
        except (OperationalError, InterfaceError):
            self.journal.take_back(message_id)  # the database failed (busy, locked, gone), not the mail
            raise
        self.journal.end(message_id)
        return result

    def _apply_with_retries(self, raw: bytes, message_id: str) -> InboxResult:
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
                raise  # the database went away or is busy: the mail stays in the inbox for the next round
            except Exception as exc:
                return self._record_failure(raw, message_id, exc)
        raise AssertionError("unreachable")

    def _apply_once(self, raw: bytes, message_id: str) -> InboxResult:
        """The mail's one transaction.  Its record is added only after the handler ran, so that
        it is written by one INSERT with everything the handler set on it."""
        with session_scope(self.engine) as session:
            found = session.connection().execute(_INBOUND_STATE, {"message_id": message_id}).first()
            if (settled := _settled(found, message_id)) is not None:
                return settled
            # A mail read before is loaded as an object only when the operator requeued it.
            inbound = self._new_inbound(raw, message_id) if found is None else session.get_one(InboundMail, found.id)
            inbound.state, inbound.reason = InboundState.APPLIED, ""
            now = self.clock()
            hold_answers_until(session, now + OWN_ANSWER_LEASE)
            self.handler(session, raw, inbound)
            inbound.processed_at = self.clock()  # after the handler: received to processed is its time
            _fill_from_header(inbound, raw)
            _keep_record(session, inbound)
            queued = queued_mails(session)
        answers = [ClaimedMail(mail.id, mail.message_id, mail.sender, mail.recipients, mail.raw, 0,
                               mail.created_at, _nothing, mail.next_attempt_at, mail.match_id) for mail in queued]
        self._own_answers.extend(answers)
        return InboxResult(Outcome(str(inbound.state)), message_id, inbound.reason,
                           tuple(answer.id for answer in answers))

    def _record_failure(self, raw: bytes, message_id: str, error: Exception | str) -> InboxResult:
        """Shunt the mail, unless it was applied or shunted meanwhile (by another daemon)."""
        reason = error if isinstance(error, str) else _describe(error)
        if isinstance(error, Exception):
            log.error("inbox %s: failed: %s", message_id, reason, exc_info=error)
        with session_scope(self.engine) as session:
            inbound = self._find_inbound(session, message_id)
            if (settled := _settled(inbound, message_id)) is not None:
                return settled
            if inbound is None:
                inbound = self._new_inbound(raw, message_id)
                _fill_from_header(inbound, raw)
            inbound.state, inbound.reason, inbound.processed_at = InboundState.FAILED, reason, self.clock()
            session.add(inbound)
        return InboxResult(Outcome.FAILED, message_id, reason)

    def _new_inbound(self, raw: bytes, message_id: str) -> InboundMail:
        """A new mail's record, its sender and subject still empty (see :data:`Handler`)."""
        return InboundMail(message_id=message_id, raw=raw, received_at=self.clock())

    def _is_processed(self, message_id: str) -> bool:
        with session_scope(self.engine) as session:
            inbound = self._find_inbound(session, message_id)
            return inbound is not None and inbound.state not in (InboundState.FAILED, InboundState.REQUEUED)

    @staticmethod
    def _find_inbound(session: Session, message_id: str) -> InboundMail | None:
        return session.exec(_INBOUND_BY_MESSAGE_ID, params={"message_id": message_id}).first()

    async def flush_outbox(self) -> int:
        """Send this pipeline's own answers, then every due mail once; returns how many were sent."""
        sent = await self._send_in_turn(self._own_in_hand())
        self._put_off = False
        return sent + await self._send_due()

    async def _send_due(self) -> int:
        """Every due mail once, in the order they were queued."""
        sent, last = 0, 0
        while not self.stopping:
            due = await asyncio.to_thread(self._due_ids, last)
            if not due:
                break
            last = due[-1]
            sent += await self.send(due)
        return sent

    async def send_own_answers(self) -> int:
        """Send the answers this pipeline's own mails queued, from memory, in the order they were
        queued; returns how many were sent.  When one of them had to wait for an earlier mail of
        its conversation (a review the review job just queued, a retry), the due mails follow."""
        sent = await self._send_in_turn(self._own_in_hand())
        if self._put_off:
            self._put_off = False
            sent += await self._send_due()
        return sent

    async def send(self, outbound_ids: list[int]) -> int:
        """Send these mails, those of them that are due and nobody else claims; returns how many
        were sent.  Each is claimed just before it is sent."""
        return await self._send_in_turn(self._claimed(outbound_ids))

    def own_answers_waiting(self) -> bool:
        return bool(self._own_answers)

    def hand_back_own_answers(self) -> None:
        """On a clean stop: make the answers not sent yet due at once, for whichever daemon runs next."""
        ids = [answer.id for answer in self._own_answers]
        self._own_answers.clear()
        if ids:
            with session_scope(self.engine) as session:
                session.connection().execute(
                    update(OutboundMail).where(col(OutboundMail.id).in_(ids))
                    .where(col(OutboundMail.sent_at).is_(None)).values(next_attempt_at=self.clock()))

    def take_back_leases(self) -> None:
        """At the start of the only daemon on a database (SQLite): the answers a killed
        predecessor held for itself are due at once (a retry's back-off is kept: it has attempts)."""
        now = self.clock()
        with session_scope(self.engine) as session:
            session.connection().execute(
                update(OutboundMail).where(col(OutboundMail.sent_at).is_(None))
                .where(col(OutboundMail.attempts) == 0).where(col(OutboundMail.next_attempt_at) > now)
                .values(next_attempt_at=now))

    async def _own_in_hand(self) -> AsyncIterator[ClaimedMail]:
        """Own answers, from memory.  Only the one daemon on SQLite sends one within its lease
        without asking: on PostgreSQL each is claimed and found unsent first (another host's
        clock may run ahead, and a send may outlast the lease), and past its lease any other
        daemon may have sent it, so it is claimed and read again as every due answer is."""
        while self._own_answers and not self.stopping:
            answer = self._own_answers.popleft()
            if self.engine.dialect.name == "postgresql":
                mail = await asyncio.to_thread(self._claim_own, answer)
            elif answer.lease_until is not None and self.clock() >= answer.lease_until:
                mail = await asyncio.to_thread(self._claim_outbound, answer.id)
            elif answer.match_id is not None:
                mail = await asyncio.to_thread(self._in_turn, answer)
            else:
                mail = answer
            if mail is not None:
                yield mail

    def _claim_own(self, answer: ClaimedMail) -> ClaimedMail | None:
        """The answer, claimed (as :meth:`_claim_outbound` claims one) if it is still unsent and
        its turn in its conversation has come: two statements on the claim's connection, no
        transaction, and the mail not read again."""
        if answer.match_id is None:
            release = claim(self.engine, f"outbound {answer.id}", still=_UNSENT_ROW, still_params={"row": answer.id})
            return None if release is None else replace(answer, release=release)
        rows: list[Row[Any]] = []
        release = claim(self.engine, f"outbound {answer.id}", still=_CONVERSATION, found=rows,
                        still_params={"row": answer.id, "match": answer.match_id})
        if release is None:  # sent, given up, or another daemon holds it
            return None
        turn = _turn(rows, answer, self._in_hand)
        if turn is _Turn.NOW:
            return replace(answer, release=release)
        try:
            self._not_now(answer.id, turn, answer.match_id)
        finally:
            _let_go(release, answer.message_id)
        return None

    def _in_turn(self, answer: ClaimedMail) -> ClaimedMail | None:
        """An own answer within its lease (the only daemon, on SQLite), if its turn in its
        conversation has come: one statement, no claim."""
        with self.engine.connect() as connection:
            rows = list(connection.execute(_CONVERSATION, {"row": answer.id, "match": answer.match_id}).all())
        turn = _turn(rows, answer, self._in_hand)
        if turn is _Turn.NOW:
            return answer
        self._not_now(answer.id, turn, answer.match_id)
        return None

    def _not_now(self, outbound_id: int, turn: _Turn, match_id: int | None) -> None:
        """A mail whose turn has not come: a later one of its conversation is made due (for the
        outbox job that sends it after the earlier one), and so are the earlier ones waiting out
        a back-off: the server may be back, and a stale retry is then dropped at once rather than
        holding up the newest mail for up to an hour; one superseded is given up."""
        if turn is _Turn.GONE:
            return
        with session_scope(self.engine) as session:
            if turn is _Turn.WAIT:
                now = self.clock()
                session.connection().execute(_DUE_NOW, {"row": outbound_id, "now": now})
                session.connection().execute(_EARLIER_DUE_NOW, {"row": outbound_id, "match": match_id, "now": now})
                self._put_off = True
            else:
                self._drop_superseded(session, outbound_id)

    def _drop_superseded(self, session: Session, outbound_id: int) -> None:
        if session.get(OutboundGivenUp, outbound_id) is None:
            session.add(OutboundGivenUp(outbound_id=outbound_id, given_up_at=self.clock(), reason=_SUPERSEDED_REASON))
        log.info("outbox row %d: dropped unsent: %s", outbound_id, _SUPERSEDED_REASON)

    async def _claimed(self, outbound_ids: list[int]) -> AsyncIterator[ClaimedMail]:
        for outbound_id in outbound_ids:
            if self.stopping:
                break
            mail = await asyncio.to_thread(self._claim_outbound, outbound_id)
            if mail is not None:
                yield mail

    async def _send_in_turn(self, mails: AsyncIterator[ClaimedMail]) -> int:
        """Send each mail, and record how it went (in a worker thread) while the next one is
        taken and sent: the database's commit and the mail server's answer overlap instead of
        adding up; returns how many were sent."""
        sent = 0
        recording: asyncio.Task[int] | None = None
        try:
            async for mail in mails:
                error = await self._send(mail)
                if error is None:
                    self._in_hand.add(mail.id)
                if recording is not None:
                    sent += await recording
                recording = asyncio.create_task(self._record(mail, error))
        finally:
            if recording is not None:
                sent += await recording
        return sent

    async def _send(self, mail: ClaimedMail) -> Exception | None:
        """Hand the mail to the sink; the error if it failed."""
        try:
            await self.sink.send(mail.raw, mail.sender, list(mail.recipients))
        except Exception as exc:
            return exc
        return None

    async def _record(self, mail: ClaimedMail, error: Exception | None) -> int:
        """Record how sending went (1 if it was sent), then release the claim; a failure to
        record is logged, and the mail is due again."""
        try:
            return await self._record_outcome(mail, error)
        finally:
            self._in_hand.discard(mail.id)

    async def _record_outcome(self, mail: ClaimedMail, error: Exception | None) -> int:
        try:
            if error is None:
                await asyncio.to_thread(self._record_and_let_go, mail)
                log.info("outbox %s to %s: sent", mail.message_id, ", ".join(mail.recipients))
                return 1
            delay = self.delay_after_failure(mail.attempts + 1)
            give_up = isinstance(error, PermanentRefusal) or self.clock() - mail.created_at >= self.give_up_after
            await asyncio.to_thread(self._record_and_let_go, mail, error=_describe(error), delay=delay,
                                    give_up=give_up)
        except Exception:  # recording failed (the database): the mail is due again next round
            log.exception("outbox row %d: not recorded, will be tried again", mail.id)
            return 0
        if give_up:
            log.error("outbox %s to %s: given up after %d attempts (%s)", mail.message_id,
                      ", ".join(mail.recipients), mail.attempts + 1, _describe(error))
        else:
            log.warning("outbox %s to %s: not sent, attempt %d, retry in %ds (%s)", mail.message_id,
                        ", ".join(mail.recipients), mail.attempts + 1, delay.total_seconds(), _describe(error))
        return 0

    def _due_ids(self, after: int) -> list[int]:
        """Up to OUTBOX_BATCH due mails queued after row `after`, in the order they were queued
        (one pass over the outbox tries each mail once, however the others went)."""
        with session_scope(self.engine) as session:
            query = (select(OutboundMail.id).where(_still_to_send()).where(col(OutboundMail.id) > after)
                     .where(OutboundMail.next_attempt_at <= self.clock()).where(~_WAITS_BEHIND)
                     .order_by(col(OutboundMail.id)).limit(OUTBOX_BATCH))
            return [outbound_id for outbound_id in session.exec(query).all() if outbound_id is not None]

    def _claim_outbound(self, outbound_id: int) -> ClaimedMail | None:
        """The mail, claimed for sending by this process (:func:`pbem.store.db.claim`: on PostgreSQL
        an advisory lock, which a process that dies lets go at once); None when another daemon
        holds it, or it was sent, given up or put off meanwhile (read again once claimed).

        On PostgreSQL its next attempt is also put SEND_LEASE ahead: a lock lost with its
        connection (the database restarted while the mail is sent) does not let another daemon
        send it too, and a mail whose outcome cannot be recorded is tried again after that."""
        release = claim(self.engine, f"outbound {outbound_id}")
        if release is None:
            return None
        try:
            with session_scope(self.engine) as session:
                now = self.clock()
                row = session.exec(
                    select(OutboundMail).where(OutboundMail.id == outbound_id).where(_still_to_send())
                    .where(OutboundMail.next_attempt_at <= now)).first()
                if row is not None and row.id is not None and row.match_id is not None:
                    rows = session.connection().execute(_CONVERSATION, {"row": row.id, "match": row.match_id}).all()
                    turn = _turn(list(rows), row, self._in_hand)
                    if turn is _Turn.SUPERSEDED:
                        self._drop_superseded(session, row.id)
                    if turn is not _Turn.NOW:  # an earlier mail of its conversation goes first
                        row = None
                if row is not None and self.engine.dialect.name == "postgresql":
                    row.next_attempt_at = now + SEND_LEASE
                    session.add(row)
        except BaseException:
            release()
            raise
        if row is None or row.id is None:
            release()
            return None
        return ClaimedMail(row.id, row.message_id, row.sender, tuple(row.recipients), row.raw, row.attempts,
                           row.created_at, release, None)

    def _record_and_let_go(self, mail: ClaimedMail, *, error: str = "", delay: timedelta = timedelta(0),
                           give_up: bool = False) -> None:
        """Record how sending went, then release the mail's claim, in one worker thread (the claim
        is released also when recording fails)."""
        try:
            self._record_send(mail.id, error=error, delay=delay, give_up=give_up)
        finally:
            if mail.release is not _nothing:
                _let_go(mail.release, mail.message_id)

    def _record_send(self, outbound_id: int, *, error: str = "", delay: timedelta = timedelta(0),
                     give_up: bool = False) -> None:
        """One UPDATE (the mail itself is not read again), and the give-up row if it is given up;
        done once more at once if the database had dropped the connection (a mail recorded as
        unsent would be sent again)."""
        once_more_if_disconnected(lambda: self._write_outcome(outbound_id, error, delay, give_up))

    def _write_outcome(self, outbound_id: int, error: str, delay: timedelta, give_up: bool) -> None:
        now = self.clock()
        if not error:
            with self.engine.begin() as connection:
                connection.execute(_SENT, {"row": outbound_id, "now": now})
            return
        with session_scope(self.engine) as session:
            session.connection().execute(_NOT_SENT, {"row": outbound_id, "error": error, "next": now + delay})
            if give_up and session.get(OutboundGivenUp, outbound_id) is None:
                session.add(OutboundGivenUp(outbound_id=outbound_id, given_up_at=now, reason=error))


@dataclass(frozen=True)
class ClaimedMail:
    """An answer claimed for sending, or one of this daemon's own answers: what sending it and
    recording how it went need."""

    id: int
    message_id: str
    sender: str
    recipients: tuple[str, ...]
    raw: bytes
    attempts: int
    created_at: datetime
    release: Callable[[], None]
    """Lets go of the claim, once the outcome is recorded."""
    lease_until: datetime | None
    """An own answer's end of lease (None: a due answer claimed from the outbox)."""
    match_id: int | None = None
    """The match it is about: with its recipients, its conversation, whose mails go out in order."""


class _Turn(Enum):
    """Whether a mail's turn in its conversation has come."""

    NOW = "now"
    WAIT = "wait"
    """An earlier mail of its conversation is neither sent nor given up."""
    SUPERSEDED = "superseded"
    GONE = "gone"
    """Sent or given up meanwhile."""


_SUPERSEDED_REASON = (f"{SUPERSEDED}: a newer mail to the same recipient about the same match shows a later state "
                      "of the game")


def _turn(rows: list[Row[Any]], mail: ClaimedMail | OutboundMail, in_hand: set[int]) -> _Turn:
    """What :data:`_CONVERSATION` found says of ``mail``: send it now, let it wait for an
    earlier mail, drop it as superseded, or nothing (it is gone).  A mail in ``in_hand`` was sent
    and is being recorded."""
    if not any(row.id == mail.id for row in rows):
        return _Turn.GONE
    assert mail.id is not None
    if any(row.id < mail.id and row.id not in in_hand for row in rows):
        return _Turn.WAIT
    shown = parse_game_message_id(mail.message_id)
    if shown is None:  # no state of a game (a review, a mail of no game): nothing supersedes it
        return _Turn.NOW
    for row in rows:
        later = parse_game_message_id(row.message_id) if row.id > mail.id else None
        if later is not None and (later.game_number, later.turn) > (shown.game_number, shown.turn) \
                and (row.sent_at is not None or mail.attempts > 0):
            return _Turn.SUPERSEDED
    return _Turn.NOW


def _still_to_send() -> ColumnElement[bool]:
    """The condition on outgoing mails neither sent nor given up."""
    return and_(col(OutboundMail.sent_at).is_(None), col(OutboundMail.id).not_in(select(OutboundGivenUp.outbound_id)))


# The statements of every mail, built once with their values as parameters: SQLAlchemy keeps the
# cache key of a statement object, where one built anew for each mail is keyed afresh (about
# half of what running a short statement costs in Python).
_INBOUND_BY_MESSAGE_ID = select(InboundMail).where(InboundMail.message_id == bindparam("message_id"))
_INBOUND_STATE = (select(InboundMail.id, InboundMail.state, InboundMail.reason)
                  .where(InboundMail.message_id == bindparam("message_id")))
_UNSENT_ROW = select(OutboundMail.id).where(OutboundMail.id == bindparam("row")).where(_still_to_send())
_OTHER, _THIS = aliased(OutboundMail), aliased(OutboundMail)
_WAITS_BEHIND = (select(_OTHER.id).where(
    col(_OTHER.match_id) == col(OutboundMail.match_id),
    cast(_OTHER.recipients, Text) == cast(OutboundMail.recipients, Text),
    col(_OTHER.id) < col(OutboundMail.id), col(_OTHER.sent_at).is_(None),
    col(_OTHER.id).not_in(select(OutboundGivenUp.outbound_id))).exists())
"""An earlier mail of the same conversation (match and recipients) is neither sent nor given up."""
_CONVERSATION = (select(OutboundMail.id, OutboundMail.message_id, OutboundMail.sent_at)
                 .where(col(OutboundMail.id).not_in(select(OutboundGivenUp.outbound_id)))
                 .where(or_(and_(col(OutboundMail.id) == bindparam("row"), col(OutboundMail.sent_at).is_(None)),
                            and_(col(OutboundMail.match_id) == bindparam("match"),
                                 cast(OutboundMail.recipients, Text) == select(cast(_THIS.recipients, Text))
                                 .where(col(_THIS.id) == bindparam("row")).scalar_subquery(),
                                 or_(and_(col(OutboundMail.id) < bindparam("row"), col(OutboundMail.sent_at).is_(None)),
                                     col(OutboundMail.id) > bindparam("row"))))))
"""The mail ``row`` itself while it is to be sent, and the mails of its conversation (``match``,
and the same recipients) that are not given up: the earlier ones not sent yet, all later ones."""
_DUE_NOW = (update(OutboundMail).where(col(OutboundMail.id) == bindparam("row"))
            .where(col(OutboundMail.sent_at).is_(None)).values(next_attempt_at=bindparam("now")))
_EARLIER_DUE_NOW = (update(OutboundMail)
                    .where(col(OutboundMail.match_id) == bindparam("match"),
                           cast(OutboundMail.recipients, Text) == select(cast(_THIS.recipients, Text))
                           .where(col(_THIS.id) == bindparam("row")).scalar_subquery(),
                           col(OutboundMail.id) < bindparam("row"), col(OutboundMail.sent_at).is_(None),
                           col(OutboundMail.attempts) > 0, col(OutboundMail.next_attempt_at) > bindparam("now"),
                           col(OutboundMail.id).not_in(select(OutboundGivenUp.outbound_id)))
                    .values(next_attempt_at=bindparam("now")))
"""The earlier mails of ``row``'s conversation that wait out a back-off (tried before: not a
daemon's own answer, whose lease this is), made due at ``now``."""
_SENT = (update(OutboundMail).where(col(OutboundMail.id) == bindparam("row"))
         .values(attempts=col(OutboundMail.attempts) + 1, last_error="", sent_at=bindparam("now")))
_NOT_SENT = (update(OutboundMail).where(col(OutboundMail.id) == bindparam("row"))
             .values(attempts=col(OutboundMail.attempts) + 1, last_error=bindparam("error"),
                     next_attempt_at=bindparam("next")))


def _fill_from_header(inbound: InboundMail, raw: bytes) -> None:
    """The record's sender and subject, from the raw header, where they are still empty."""
    if not (inbound.sender and inbound.subject):
        sender, subject = sender_and_subject(raw)
        inbound.sender, inbound.subject = inbound.sender or sender, inbound.subject or subject


def _keep_record(session: Session, inbound: InboundMail) -> None:
    """Write the mail's record: a new one by one prebuilt INSERT (the ORM's unit of work costs
    several times as much for a row nothing reads again), one read from the table by the ORM."""
    if inspect(inbound).transient:
        session.connection().execute(_INSERT_INBOUND, {name: getattr(inbound, name) for name in _INBOUND_COLUMNS})
    else:
        session.add(inbound)


_INSERT_INBOUND = insert(InboundMail.__table__)  # type: ignore[attr-defined]
_INBOUND_COLUMNS = tuple(column.key for column in InboundMail.__table__.columns  # type: ignore[attr-defined]
                         if not column.primary_key)


def _settled(inbound: InboundMail | Row[Any] | None, message_id: str) -> InboxResult | None:
    """What became of a mail found recorded, unless the operator requeued it (None: apply it).
    A shunted one is put aside again, not applied, until the operator requeues it."""
    if inbound is None or inbound.state == InboundState.REQUEUED:
        return None
    if inbound.state == InboundState.FAILED:
        return InboxResult(Outcome.FAILED, message_id, inbound.reason)
    return InboxResult(Outcome.ALREADY_DONE, message_id)


def _let_go(release: Callable[[], None], key: str) -> None:
    """Release a claim; one whose connection went away (the database restarted) went with it."""
    try:
        release()
    except Exception as error:
        log.warning("claim of %s: releasing it failed (%s); it went with its connection", key, _describe(error))


def _let_go_once_applied(message_id: str,
                         applying: asyncio.Future[tuple[Callable[[], None], InboxResult] | None]) -> None:
    """After the wait for a mail's worker thread was cancelled: the claim it took is let go when
    it is done (the mail is applied, or not, as the thread left it; a daemon that reads it again
    finds which).  A thread that raised let go of its claim itself."""
    if applying.cancelled() or applying.exception() is not None or (claimed := applying.result()) is None:
        return
    if claimed[0] is _nothing:  # SQLite: nothing was claimed
        return
    asyncio.get_running_loop().run_in_executor(None, _let_go, claimed[0], message_id)


def _nothing() -> None:
    """The release of an own answer: nothing was claimed."""


def _describe(error: BaseException) -> str:
    """One line, short, and storable: a server's reply in another encoding comes decoded with
    surrogate escapes, which no database column takes (nor a NUL, which PostgreSQL refuses)."""
    text = f"{type(error).__name__}: {error}".encode("utf-8", "backslashreplace").decode("utf-8")
    return " ".join(text.replace("\0", " ").split())[:MAX_ERROR_LENGTH]
