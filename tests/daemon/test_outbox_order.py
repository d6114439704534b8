"""Each recipient's mails about one match go out in the order they were queued (issue 33).

After an SMTP outage, "Game over … your turn (4-2)" of game 1 reached a player a minute after
"Match over": a retry went out after newer mails of the same match.  Now a mail waits while an
earlier one of its conversation (match and recipient) is neither sent nor given up, through
retries, restarts and several daemons, and a game mail whose state a newer one has superseded
is dropped instead of arriving as a stale call to act.  These run on SQLite and, with
``--database postgresql``, on PostgreSQL, where every send is claimed.
"""

from __future__ import annotations

import asyncio
import io
from datetime import timedelta
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy

from sqlmodel import Session, select

from pbem.daemon.pipeline import OWN_ANSWER_LEASE, MailPipeline
from pbem.mail.headers import message_id_of
from pbem.mail.sources import MaildirSource
from pbem.service.pages.reports import status_report
from pbem.store.db import session_scope
from pbem.store.mail_records import SUPERSEDED, InboundMail, OutboundGivenUp, OutboundMail, queue_mail
from test_mail_pipeline import Clock, FlakySink, deliver, mail

TOKEN = "a" * 26


def answer(to: str, match_id: int | None, stamp: tuple[int, int] | None = None, text: str = "answer") -> EmailMessage:
    """A mail of the service to ``to`` about ``match_id``; with ``stamp``, a game mail showing
    that state (its Message-ID names it, as the game service's do)."""
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "backgammon@localhost", to, text
    if stamp is not None:
        message["Message-ID"] = f"<{TOKEN}.{stamp[0]}-{stamp[1]}.{abs(hash((to, text))):x}@localhost>"
    message.set_content(text)
    return message


def queue(engine, message: EmailMessage, match_id: int | None) -> str:
    with session_scope(engine) as session:
        return queue_mail(session, message, match_id).message_id


def answering(to: str, match_id: int, stamp: tuple[int, int] | None = None):
    """A handler whose every mail is answered by one mail to ``to`` about ``match_id``, its text
    the mail's own (a daemon's own answer, sent from memory)."""
    def handler(session: Session, raw: bytes, inbound: InboundMail) -> None:
        text = BytesParser(policy=default_policy).parsebytes(raw).get_body(("plain",)).get_content().strip()
        queue_mail(session, answer(to, match_id, stamp, text), match_id)
    return handler


def texts(sink: FlakySink) -> list[tuple[str, str]]:
    """What the sink delivered: (recipient, text), in order."""
    return [(recipients[0], BytesParser(policy=default_policy).parsebytes(raw).get_body(("plain",)).get_content()
             .strip()) for raw, _, recipients in sink.sent]


class FailingUntil(FlakySink):
    """Refuses every mail (the SMTP server is down) until ``up`` is set; then delivers."""

    def __init__(self) -> None:
        super().__init__(failures=0)
        self.up = False

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        self.attempts += 1
        if not self.up:
            raise ConnectionError("421 service not available")
        self.sent.append((raw, sender, recipients))


def test_a_later_mail_waits_for_an_earlier_one_of_its_conversation_through_a_retry_and_a_restart(engine, config):
    clock = ahead()
    sink = FailingUntil()
    source = MaildirSource(config.inbox_dir)
    first = MailPipeline(engine, source, sink, answering("ben@example.org", 7), clock=clock)
    queue(engine, answer("ben@example.org", 7, text="game over, your turn"), 7)
    assert asyncio.run(first.flush_outbox()) == 0  # the server is down: retried in 30 s
    sink.up = True
    # The daemon restarts; mails of the same match to Ben, to Anna, and of another match to Ben follow.
    daemon = MailPipeline(engine, source, sink, answering("ben@example.org", 7), clock=clock)
    daemon.take_back_leases()
    deliver(config.inbox_dir, "1.a", mail("match over", "<m1@example.org>"))
    asyncio.run(daemon.read_inbox())
    queue(engine, answer("anna@example.org", 7, text="match over, to Anna"), 7)
    queue(engine, answer("ben@example.org", 8, text="another match"), 8)
    # The own answer waits for the first, which is made due at once (the server may be back): the
    # first goes with the due others, the own answer with the next pass (the outbox job's, 5 s
    # later), and none waits out the first's back-off.
    assert asyncio.run(daemon.send_own_answers()) == 3
    assert texts(sink) == [("ben@example.org", "game over, your turn"), ("anna@example.org", "match over, to Anna"),
                           ("ben@example.org", "another match")]
    assert asyncio.run(daemon.flush_outbox()) == 1
    assert texts(sink)[3:] == [("ben@example.org", "match over")]
    assert all(row.sent_at is not None for row in _rows(engine))


def test_an_earlier_mail_given_up_holds_up_nothing(engine, config):
    clock = ahead()
    sink = RefusingText("lost")
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, answering("ben@example.org", 7),
                            clock=clock, give_up_after=timedelta(minutes=1))
    queue(engine, answer("ben@example.org", 7, text="lost"), 7)
    assert asyncio.run(pipeline.flush_outbox()) == 0
    queue(engine, answer("ben@example.org", 7, text="next"), 7)
    assert asyncio.run(pipeline.flush_outbox()) == 0  # waits for the first
    clock.now += timedelta(minutes=2)
    assert asyncio.run(pipeline.flush_outbox()) == 1  # the first fails for good, given up: the next goes
    assert texts(sink) == [("ben@example.org", "next")]


class RefusingText(FlakySink):
    """Refuses every mail whose text holds ``word`` (one mailbox the server keeps refusing)."""

    def __init__(self, word: str) -> None:
        super().__init__(failures=0)
        self.word = word.encode()

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        if self.word in raw:
            raise ConnectionError("451 try again later")
        self.sent.append((raw, sender, recipients))


def test_a_retry_whose_state_a_newer_mail_shows_later_is_dropped_not_sent_as_a_call_to_act(engine, config):
    clock = ahead()
    sink = FailingUntil()
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink,
                            answering("ben@example.org", 7, stamp=(3, 0)), clock=clock)
    queue(engine, answer("ben@example.org", 7, (2, 0), "game 1 over: your turn (4-2)"), 7)
    assert asyncio.run(pipeline.flush_outbox()) == 0  # perhaps delivered, perhaps not: a retry
    sink.up = True
    deliver(config.inbox_dir, "1.a", mail("match over: X wins 7-0", "<m1@example.org>"))
    asyncio.run(pipeline.read_inbox())
    review = queue(engine, answer("ben@example.org", 7, text="review of game 1"), 7)  # no state: supersedes nothing
    assert asyncio.run(pipeline.send_own_answers()) == 2  # the retry, made due, is dropped: no waiting out its back-off
    assert texts(sink) == [("ben@example.org", "match over: X wins 7-0"), ("ben@example.org", "review of game 1")]
    assert message_id_of(sink.sent[-1][0]) == review
    with session_scope(engine) as session:
        (dropped,) = session.exec(select(OutboundGivenUp)).all()
        assert dropped.reason.startswith(SUPERSEDED)
        assert b"game 1 over" in session.get(OutboundMail, dropped.outbound_id).raw
        out = io.StringIO()
        assert status_report(session, out, config) == 0, out.getvalue()  # nothing for the operator to fix
        assert "1 superseded" in out.getvalue()
    assert asyncio.run(pipeline.flush_outbox()) == 0 and len(sink.sent) == 2


def test_a_game_mail_a_newer_sent_one_superseded_is_dropped_and_one_of_the_same_state_is_sent(engine, config):
    """An old mail still unsent (an older daemon's, put back by hand) after a newer one was
    sent: it would arrive as a stale call to act."""
    clock = ahead()
    sink = FlakySink(0)
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, answering("ben@example.org", 7),
                            clock=clock)
    old = queue(engine, answer("ben@example.org", 7, (1, 4), "your turn (old)"), 7)
    same = queue(engine, answer("ben@example.org", 7, (1, 6), "an error: not your turn"), 7)
    newer = queue(engine, answer("ben@example.org", 7, (1, 6), "your turn (new)"), 7)
    with session_scope(engine) as session:
        for row in session.exec(select(OutboundMail)).all():
            if row.message_id == newer:
                row.sent_at = clock.now
                session.add(row)
    asyncio.run(pipeline.flush_outbox())
    assert texts(sink) == [("ben@example.org", "an error: not your turn")]
    assert [message_id_of(raw) for raw, _, _ in sink.sent] == [same]
    with session_scope(engine) as session:
        (dropped,) = session.exec(select(OutboundGivenUp)).all()
        assert session.get(OutboundMail, dropped.outbound_id).message_id == old


def test_two_daemons_send_one_conversation_in_order(engine, config):
    """Daemon A applied a mail and holds its answer in memory; daemon B applies the next mail of
    the same match and must not send its answer to the same player first."""
    clock = ahead()
    a_sink, b_sink = FlakySink(0), FlakySink(0)
    source = MaildirSource(config.inbox_dir)
    a = MailPipeline(engine, source, a_sink, answering("ben@example.org", 7), clock=clock)
    b = MailPipeline(engine, source, b_sink, answering("ben@example.org", 7), clock=clock)
    deliver(config.inbox_dir, "1.a", mail("first", "<m1@example.org>"))
    asyncio.run(a.read_inbox())
    deliver(config.inbox_dir, "2.a", mail("second", "<m2@example.org>"))
    asyncio.run(b.read_inbox())
    assert asyncio.run(b.send_own_answers()) == 0  # waits for A's answer, and is made due
    assert [row.next_attempt_at <= clock.now for row in _rows(engine)] == [False, True]
    assert asyncio.run(a.send_own_answers()) == 1
    assert asyncio.run(b.flush_outbox()) == 1
    assert texts(a_sink) + texts(b_sink) == [("ben@example.org", "first"), ("ben@example.org", "second")]
    assert asyncio.run(a.flush_outbox()) == 0
    clock.now += OWN_ANSWER_LEASE
    assert asyncio.run(b.flush_outbox()) == 0 and len(a_sink.sent) + len(b_sink.sent) == 2  # each sent once


def ahead() -> Clock:
    """The daemons' clock, a minute ahead of the one :func:`queue_mail` stamps the mails with:
    every mail queued in the test is due."""
    clock = Clock()
    clock.now += timedelta(minutes=1)
    return clock


def _rows(engine) -> list[OutboundMail]:
    with session_scope(engine) as session:
        return list(session.exec(select(OutboundMail).order_by(OutboundMail.id)).all())
