"""The pipeline's stages: applied once, failures shunted, the outbox retried with back-off."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path

import pytest
from sqlmodel import select

import echo_handlers
from pbem.cli import main
from pbem.daemon.pipeline import MailPipeline, Outcome, retry_delay
from pbem.mail.sinks import MaildirSink
from pbem.mail.headers import message_id_of
from pbem.mail.sources import DONE_FOLDER, FAILED_FOLDER, MaildirSource
from pbem.store.db import make_engine, session_scope, utc_now
from pbem.store.mail_records import InboundMail, InboundState, OutboundGivenUp, OutboundMail, queue_mail


def mail(text: str, message_id: str | None = "<m1@example.org>", sender: str = "alice@example.org") -> bytes:
    message = EmailMessage()
    message["From"] = f"Alice <{sender}>"
    message["To"] = "backgammon@localhost"
    message["Subject"] = "hello"
    if message_id:
        message["Message-ID"] = message_id
    message.set_content(text)
    return message.as_bytes()


def deliver(inbox: Path, name: str, raw: bytes) -> None:
    (inbox / "new" / name).write_bytes(raw)


def files(folder: Path) -> list[Path]:
    return sorted(path for sub in ("new", "cur") for path in (folder / sub).iterdir())


class FlakySink:
    """Fails the first `failures` sends, then delivers into a list."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.sent: list[tuple[bytes, str, list[str]]] = []
        self.attempts = 0

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        self.attempts += 1
        if self.attempts <= self.failures:
            raise ConnectionError("server says no")
        self.sent.append((raw, sender, recipients))

    async def close(self) -> None:
        return None


@pytest.fixture
def pipeline(engine, config):
    source, sink = MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir)
    return MailPipeline(engine, source, sink, echo_handlers.echo)


def inbound_rows(engine) -> list[InboundMail]:
    with session_scope(engine) as session:
        return list(session.exec(select(InboundMail).order_by(InboundMail.id)).all())


def outbound_rows(engine) -> list[OutboundMail]:
    with session_scope(engine) as session:
        return list(session.exec(select(OutboundMail).order_by(OutboundMail.id)).all())


def test_a_mail_is_applied_answered_and_marked_done(pipeline, engine, config):
    deliver(config.inbox_dir, "1.a", mail("hi there"))
    results = asyncio.run(pipeline.read_inbox())
    assert [r.outcome for r in results] == [Outcome.APPLIED]
    [row] = inbound_rows(engine)
    assert (row.message_id, row.sender, row.subject, row.state) == ("<m1@example.org>", "alice@example.org",
                                                                    "hello", InboundState.APPLIED)
    assert row.processed_at is not None and row.processed_at.tzinfo is not None
    assert (row.raw, row.reason, row.match_id, row.pruned_at) == (mail("hi there"), "", None, None)
    assert row.received_at is not None and row.received_at.tzinfo is not None
    assert files(config.inbox_dir) == [] and len(files(config.inbox_dir / DONE_FOLDER)) == 1
    assert asyncio.run(pipeline.flush_outbox()) == 1
    [sent] = files(config.outbox_dir)
    answer = BytesParser(policy=default_policy).parsebytes(sent.read_bytes())
    assert answer["To"] == "alice@example.org" and answer["In-Reply-To"] == "<m1@example.org>"
    assert answer.get_content().strip() == "echo: hi there"
    assert outbound_rows(engine)[0].sent_at is not None


def test_the_record_takes_from_the_header_what_the_handler_left_empty(pipeline, engine, config):
    def sets_the_sender_only(session, raw, inbound):
        inbound.sender = "read@example.org"

    pipeline.handler = sets_the_sender_only
    deliver(config.inbox_dir, "1.a", mail("hi"))
    asyncio.run(pipeline.read_inbox())
    [row] = inbound_rows(engine)
    assert (row.sender, row.subject) == ("read@example.org", "hello")


def test_the_same_mail_twice_is_applied_once(pipeline, engine, config):
    deliver(config.inbox_dir, "1.a", mail("once"))
    deliver(config.inbox_dir, "2.a", mail("once"))
    results = asyncio.run(pipeline.read_inbox())
    assert [r.outcome for r in results] == [Outcome.APPLIED, Outcome.ALREADY_DONE]
    deliver(config.inbox_dir, "3.a", mail("once"))
    assert [r.outcome for r in asyncio.run(pipeline.read_inbox())] == [Outcome.ALREADY_DONE]
    assert len(inbound_rows(engine)) == 1 and len(outbound_rows(engine)) == 1
    assert len(files(config.inbox_dir / DONE_FOLDER)) == 3


def test_a_mail_without_message_id_gets_a_stable_one(pipeline, engine, config):
    raw = mail("no id", message_id=None)
    assert message_id_of(raw) == message_id_of(raw) != message_id_of(mail("other", message_id=None))
    deliver(config.inbox_dir, "1.a", raw)
    deliver(config.inbox_dir, "2.a", raw)
    assert [r.outcome for r in asyncio.run(pipeline.read_inbox())] == [Outcome.APPLIED, Outcome.ALREADY_DONE]
    assert inbound_rows(engine)[0].message_id == message_id_of(raw)


def test_a_handler_exception_shunts_the_mail_and_the_rest_continues(pipeline, engine, config):
    deliver(config.inbox_dir, "1.a", mail("first", "<a@x>"))
    deliver(config.inbox_dir, "2.a", mail("boom", "<b@x>"))
    deliver(config.inbox_dir, "3.a", mail("third", "<c@x>"))
    results = asyncio.run(pipeline.read_inbox())
    assert [r.outcome for r in results] == [Outcome.APPLIED, Outcome.FAILED, Outcome.APPLIED]
    assert "the handler exploded" in results[1].reason
    rows = {row.message_id: row for row in inbound_rows(engine)}
    assert rows["<b@x>"].state == InboundState.FAILED and "RuntimeError" in rows["<b@x>"].reason
    assert (rows["<b@x>"].sender, rows["<b@x>"].subject) == ("alice@example.org", "hello")
    assert len(outbound_rows(engine)) == 2  # nothing of the failed mail's work survived
    assert [p.name for p in files(config.inbox_dir / FAILED_FOLDER)] == ["2.a"]
    assert len(files(config.inbox_dir / DONE_FOLDER)) == 2


def test_a_shunted_mail_is_put_aside_again_until_it_is_requeued(pipeline, engine, config, config_file):
    deliver(config.inbox_dir, "1.a", mail("boom", "<b@x>"))
    asyncio.run(pipeline.read_inbox())
    pipeline.handler = lambda session, raw, inbound: None
    failed = files(config.inbox_dir / FAILED_FOLDER)[0]
    failed.rename(config.inbox_dir / "new" / failed.name)  # read again (another daemon, a crash)
    assert [r.outcome for r in asyncio.run(pipeline.read_inbox())] == [Outcome.FAILED]
    assert files(config.inbox_dir) == [] and len(files(config.inbox_dir / FAILED_FOLDER)) == 1
    assert main(["requeue", "<b@x>", "--config", str(config_file)]) == 0
    assert inbound_rows(engine)[0].state == InboundState.REQUEUED
    assert [r.outcome for r in asyncio.run(pipeline.read_inbox())] == [Outcome.APPLIED]
    [row] = inbound_rows(engine)
    assert row.state == InboundState.APPLIED and row.reason == ""


def test_requeue_clears_the_record_of_a_shunted_mail_removed_by_hand(pipeline, engine, config, config_file, capsys):
    deliver(config.inbox_dir, "1.a", mail("boom", "<b@x>"))
    asyncio.run(pipeline.read_inbox())
    files(config.inbox_dir / FAILED_FOLDER)[0].unlink()
    assert main(["requeue", "--all", "--config", str(config_file)]) == 0
    assert "1 record of shunted mail cleared" in capsys.readouterr().out
    assert main(["status", "--config", str(config_file)]) == 0


def test_the_handler_may_ignore_a_mail(pipeline, engine, config):
    deliver(config.inbox_dir, "1.a", mail("quiet please"))
    assert [r.outcome for r in asyncio.run(pipeline.read_inbox())] == [Outcome.IGNORED]
    assert inbound_rows(engine)[0].reason == "asked to stay quiet"
    assert files(config.inbox_dir) == []


def test_stop_finishes_the_mail_in_hand_and_takes_no_more(engine, config):
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir), None)

    def stop_after_applying(session, raw, inbound):
        echo_handlers.echo(session, raw, inbound)
        pipeline.stop()

    pipeline.handler = stop_after_applying
    deliver(config.inbox_dir, "1.a", mail("one", "<a@x>"))
    deliver(config.inbox_dir, "2.a", mail("two", "<b@x>"))
    assert [r.outcome for r in asyncio.run(pipeline.read_inbox())] == [Outcome.APPLIED]
    assert [p.name for p in files(config.inbox_dir)] == ["2.a"]


class Clock:
    def __init__(self) -> None:
        self.now = utc_now()

    def __call__(self) -> datetime:
        return self.now


def test_outbox_retries_with_growing_back_off_and_one_message_id(engine, config):
    with session_scope(engine) as session:
        message = EmailMessage()
        message["From"], message["To"], message["Bcc"] = "backgammon@localhost", "bob@example.org", "c@example.org"
        message.set_content("answer")
        queue_mail(session, message)
    clock = Clock()
    sink = FlakySink(failures=3)
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    delays = []
    for _ in range(3):
        assert asyncio.run(pipeline.flush_outbox()) == 0
        [row] = outbound_rows(engine)
        delays.append(row.next_attempt_at - clock.now)
        assert asyncio.run(pipeline.flush_outbox()) == 0  # not yet due: no attempt
        clock.now = row.next_attempt_at
    assert delays == [retry_delay(1), retry_delay(2), retry_delay(3)]
    assert delays[0] < delays[1] < delays[2]
    assert asyncio.run(pipeline.flush_outbox()) == 1
    assert sink.attempts == 4
    [(raw, sender, recipients)] = sink.sent
    [row] = outbound_rows(engine)
    assert row.attempts == 4 and row.sent_at == clock.now and row.last_error == ""
    assert message_id_of(raw) == row.message_id
    assert sender == f"backgammon+bounce-{row.bounce_tag}@localhost"  # VERP: a bounce names this mail
    assert recipients == ["bob@example.org", "c@example.org"]
    assert b"c@example.org" not in raw
    assert asyncio.run(pipeline.flush_outbox()) == 0 and sink.attempts == 4


def test_retry_delay_grows_to_a_cap():
    assert retry_delay(1) == timedelta(seconds=30)
    assert retry_delay(2) == timedelta(seconds=60)
    assert retry_delay(20) == timedelta(hours=1)


def test_retry_delay_never_overflows_however_many_attempts():
    for attempts in (42, 43, 1000, 10**9):
        assert retry_delay(attempts) == timedelta(hours=1)


class RefusingSink:
    """Refuses every mail to one address (a mailbox the server keeps refusing), sends the rest."""

    def __init__(self, refused: str) -> None:
        self.refused = refused
        self.sent: list[list[str]] = []

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        if self.refused in recipients:
            raise ConnectionError("451 try again later")
        self.sent.append(recipients)

    async def close(self) -> None:
        return None


def test_an_answer_failing_past_give_up_after_is_given_up_and_never_blocks_the_others(engine, config):
    def queue(to: str) -> None:
        with session_scope(engine) as session:
            message = EmailMessage()
            message["From"], message["To"] = "backgammon@localhost", to
            message.set_content("answer")
            queue_mail(session, message)

    queue("ghost@example.org")
    clock = Clock()
    sink = RefusingSink("ghost@example.org")
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock,
                            give_up_after=timedelta(days=3))
    for hour in range(80):  # 80 hours of hourly retries, answers to others queued in between
        queue(f"player{hour}@example.org")
        asyncio.run(pipeline.flush_outbox())
        clock.now += timedelta(hours=1, seconds=1)
    assert [recipients for recipients in sink.sent] == [[f"player{hour}@example.org"] for hour in range(80)]
    with session_scope(engine) as session:
        (given_up,) = session.exec(select(OutboundGivenUp)).all()
        ghost = session.get(OutboundMail, given_up.outbound_id)
        assert ghost.recipients == ["ghost@example.org"] and "451" in given_up.reason
        assert 72 <= ghost.attempts <= 74
    attempts = ghost.attempts
    clock.now += timedelta(days=1)
    asyncio.run(pipeline.flush_outbox())
    with session_scope(engine) as session:
        assert session.get(OutboundMail, given_up.outbound_id).attempts == attempts  # never tried again


def test_an_unreachable_database_leaves_the_mail_for_the_next_round(engine, config):
    from sqlalchemy.exc import OperationalError

    calls = []

    def database_gone(session, raw, inbound):
        calls.append(inbound.message_id)
        if len(calls) == 1:
            raise OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly"))
        echo_handlers.echo(session, raw, inbound)

    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir), database_gone)
    deliver(config.inbox_dir, "1.a", mail("hello", "<a@x>"))
    assert asyncio.run(pipeline.read_inbox()) == []  # not shunted: nothing recorded as failed
    assert [p.name for p in files(config.inbox_dir)] == ["1.a"] and not files(config.inbox_dir / FAILED_FOLDER)
    assert [r.outcome for r in asyncio.run(pipeline.read_inbox())] == [Outcome.APPLIED]
    assert calls == ["<a@x>", "<a@x>"]


def queue_answers(engine, count: int) -> None:
    with session_scope(engine) as session:
        for number in range(count):
            message = EmailMessage()
            message["From"], message["To"] = "backgammon@localhost", f"player{number}@example.org"
            message.set_content(f"answer {number}")
            queue_mail(session, message)


class StoppingSink(FlakySink):
    """Delivers, and asks the pipeline to stop after the first mail (SIGTERM while sending)."""

    def __init__(self) -> None:
        super().__init__(failures=0)
        self.pipeline: MailPipeline | None = None

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        await super().send(raw, sender, recipients)
        assert self.pipeline is not None
        self.pipeline.stop()


def test_a_stopping_daemon_sends_no_more_and_leaves_the_rest_due(engine, config):
    queue_answers(engine, 5)
    clock = Clock()
    sink = StoppingSink()
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    sink.pipeline = pipeline
    assert asyncio.run(pipeline.flush_outbox()) == 1
    rows = outbound_rows(engine)
    assert [row.sent_at is not None for row in rows] == [True, False, False, False, False]
    assert all(row.next_attempt_at <= clock.now and row.attempts == 0 for row in rows[1:])
    successor = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    assert asyncio.run(successor.flush_outbox()) == 4
    assert [recipients for _, _, recipients in sink.sent] == [[f"player{n}@example.org"] for n in range(5)]


def test_an_answer_claimed_by_another_daemon_is_left_to_it_and_sent_once(engine, config):
    from pbem.daemon.pipeline import SEND_LEASE
    queue_answers(engine, 3)
    clock = Clock()
    other = MailPipeline(engine, MaildirSource(config.inbox_dir), FlakySink(0), echo_handlers.echo, clock=clock)
    held = other._claim_outbound(outbound_rows(engine)[1].id)  # the other daemon is sending it now
    assert held is not None
    sink = FlakySink(0)
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    if engine.dialect.name == "postgresql":  # on SQLite only one daemon runs: there is nobody to leave it to
        assert asyncio.run(pipeline.flush_outbox()) == 2
        assert [recipients for _, _, recipients in sink.sent] == [["player0@example.org"], ["player2@example.org"]]
        held.release()  # the other daemon died without sending it: it is sent once its lease is over
        assert asyncio.run(pipeline.flush_outbox()) == 0
        clock.now += SEND_LEASE
        assert asyncio.run(pipeline.flush_outbox()) == 1
    else:
        held.release()
        assert asyncio.run(pipeline.flush_outbox()) == 3
    assert sorted(recipients[0] for _, _, recipients in sink.sent) == [f"player{n}@example.org" for n in range(3)]
    assert asyncio.run(pipeline.flush_outbox()) == 0 and len(sink.sent) == 3
    assert other._claim_outbound(outbound_rows(engine)[1].id) is None  # sent meanwhile: not claimed again


def test_more_due_mails_than_one_batch_are_all_sent_in_order(engine, config):
    from pbem.daemon.pipeline import OUTBOX_BATCH
    queue_answers(engine, 2 * OUTBOX_BATCH + 3)
    sink = FlakySink(0)
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo)
    assert asyncio.run(pipeline.flush_outbox()) == 2 * OUTBOX_BATCH + 3
    assert [recipients for _, _, recipients in sink.sent] == [[f"player{n}@example.org"]
                                                             for n in range(2 * OUTBOX_BATCH + 3)]
    assert all(row.sent_at is not None and row.attempts == 1 for row in outbound_rows(engine))


def test_a_mail_s_answers_are_its_daemon_s_own_for_their_lease_and_sent_from_memory(engine, config):
    from pbem.daemon.pipeline import OWN_ANSWER_LEASE
    queue_answers(engine, 2)  # due answers of other mails (another daemon's, say)
    clock = Clock()
    sink = FlakySink(0)
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    deliver(config.inbox_dir, "1.a", mail("hi there"))
    [result] = asyncio.run(pipeline.read_inbox())
    rows = outbound_rows(engine)
    assert result.outcome is Outcome.APPLIED and result.answers == (rows[-1].id,)
    assert rows[-1].next_attempt_at == clock.now + OWN_ANSWER_LEASE  # no other daemon takes it meanwhile
    other_sink = FlakySink(0)
    other = MailPipeline(engine, MaildirSource(config.inbox_dir), other_sink, echo_handlers.echo, clock=clock)
    assert asyncio.run(other.flush_outbox()) == 2  # another daemon's outbox job: only the two others
    assert asyncio.run(pipeline.send_own_answers()) == 1
    assert [recipients for _, _, recipients in sink.sent] == [["alice@example.org"]]
    assert [row.sent_at is not None for row in outbound_rows(engine)] == [True, True, True]
    assert asyncio.run(pipeline.send_own_answers()) == 0 and asyncio.run(pipeline.flush_outbox()) == 0
    clock.now += OWN_ANSWER_LEASE
    assert asyncio.run(other.flush_outbox()) == 0 and len(sink.sent) + len(other_sink.sent) == 3  # sent once


def test_the_answers_of_a_daemon_that_died_before_sending_them_are_sent_once_their_lease_is_over(engine, config):
    from pbem.daemon.pipeline import OWN_ANSWER_LEASE
    clock = Clock()
    dead = MailPipeline(engine, MaildirSource(config.inbox_dir), FlakySink(0), echo_handlers.echo, clock=clock)
    deliver(config.inbox_dir, "1.a", mail("hi there"))
    asyncio.run(dead.read_inbox())  # and the process dies before it sends the answer
    sink = FlakySink(0)
    successor = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    assert asyncio.run(successor.flush_outbox()) == 0
    clock.now += OWN_ANSWER_LEASE
    assert asyncio.run(successor.flush_outbox()) == 1 and asyncio.run(successor.flush_outbox()) == 0
    assert [recipients for _, _, recipients in sink.sent] == [["alice@example.org"]]


def applied_mails(pipeline: MailPipeline, config, count: int) -> MailPipeline:
    """``pipeline`` after it applied ``count`` mails (their answers not sent yet)."""
    for number in range(count):
        deliver(config.inbox_dir, f"{number}.a", mail("hi there", message_id=f"<m{number}@example.org>"))
    asyncio.run(pipeline.read_inbox())
    return pipeline


def test_the_only_daemon_on_a_database_takes_back_the_answers_of_its_killed_predecessor_as_it_starts(engine, config):
    """On SQLite one daemon runs per file: nobody else can be sending them."""
    clock = Clock()
    dead = applied_mails(MailPipeline(engine, MaildirSource(config.inbox_dir), FlakySink(0), echo_handlers.echo,
                                      clock=clock), config, 2)
    asyncio.run(dead._record(dead._own_answers.popleft(), ConnectionError("server says no")))  # one failed
    sink = FlakySink(0)
    successor = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    successor.take_back_leases()
    assert asyncio.run(successor.flush_outbox()) == 1  # the unsent one at once; the failed one keeps its back-off
    clock.now += retry_delay(1)
    assert asyncio.run(successor.flush_outbox()) == 1 and len(sink.sent) == 2


def test_a_stopping_daemon_hands_back_the_answers_it_did_not_send(engine, config):
    clock = Clock()
    pipeline = applied_mails(MailPipeline(engine, MaildirSource(config.inbox_dir), FlakySink(0), echo_handlers.echo,
                                          clock=clock), config, 2)
    pipeline.stop()
    assert asyncio.run(pipeline.send_own_answers()) == 0
    pipeline.hand_back_own_answers()
    assert all(row.next_attempt_at == clock.now for row in outbound_rows(engine))
    sink = FlakySink(0)
    successor = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    assert asyncio.run(successor.flush_outbox()) == 2  # at once, not after the lease


class SlowSink(FlakySink):
    """A mail server that takes longer than an answer's lease: while it works, ``meanwhile`` runs
    (in a thread of its own, as another daemon would)."""

    def __init__(self, clock: Clock, meanwhile) -> None:
        super().__init__(0)
        self.clock, self.meanwhile = clock, meanwhile

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        from pbem.daemon.pipeline import OWN_ANSWER_LEASE
        self.clock.now += 2 * OWN_ANSWER_LEASE
        await asyncio.to_thread(self.meanwhile)
        await super().send(raw, sender, recipients)


def test_a_send_that_outlasts_its_lease_is_neither_cut_off_nor_sent_twice(engine, config):
    """A slow mail server is waited for (a send cut off after DATA may have been delivered): on
    PostgreSQL the claim held while it is sent keeps another daemon off it, however late."""
    clock = Clock()
    other_sink = FlakySink(0)
    other = MailPipeline(engine, MaildirSource(config.inbox_dir), other_sink, echo_handlers.echo, clock=clock)
    sink = SlowSink(clock, lambda: asyncio.run(other.flush_outbox()) if engine.dialect.name == "postgresql" else 0)
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    deliver(config.inbox_dir, "1.a", mail("hi there"))
    asyncio.run(pipeline.read_inbox())
    assert asyncio.run(pipeline.send_own_answers()) == 1
    assert other_sink.sent == [] and len(sink.sent) == 1
    [row] = outbound_rows(engine)
    assert row.sent_at is not None and row.attempts == 1 and row.last_error == ""
    assert asyncio.run(other.flush_outbox()) == 0


def test_an_own_answer_past_its_lease_is_claimed_and_read_again_before_it_is_sent(engine, config):
    """Another daemon may have sent it meanwhile (it waited behind a slow mail server, say)."""
    from pbem.daemon.pipeline import OWN_ANSWER_LEASE
    clock = Clock()
    sink = FlakySink(0)
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    deliver(config.inbox_dir, "1.a", mail("hi there"))
    asyncio.run(pipeline.read_inbox())
    clock.now += OWN_ANSWER_LEASE
    other = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    assert asyncio.run(other.flush_outbox()) == 1
    assert asyncio.run(pipeline.send_own_answers()) == 0 and len(sink.sent) == 1


@pytest.mark.postgresql_only
def test_a_host_whose_clock_runs_ahead_does_not_send_another_daemon_s_answer_twice(engine, config):
    """Found by attack23: another host's outbox job takes the answer as soon as its own clock says
    the lease is over; the daemon that holds it finds it sent when it claims it."""
    sink = FlakySink(0)  # one SMTP server, shared
    here = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo)
    other_engine = make_engine(config.database.url)
    there = MailPipeline(other_engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo,
                         clock=lambda: utc_now() + timedelta(seconds=61))
    deliver(config.inbox_dir, "1.a", mail("hi there"))

    async def both() -> None:
        [result] = await here.read_inbox()
        assert len(result.answers) == 1
        await there.flush_outbox()
        await here.send_own_answers()

    asyncio.run(both())
    other_engine.dispose()
    assert len(sink.sent) == 1


def test_a_database_that_fails_is_no_death_of_the_process(engine, config, monkeypatch):
    """Found by attack23: a locked or unreachable database (OperationalError) leaves the mail for
    the next round, and however often it happens the mail is not shunted as if it killed the process."""
    from sqlalchemy.exc import OperationalError
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), FlakySink(0), echo_handlers.echo)
    real = MailPipeline._apply_with_retries

    def locked(self, raw, message_id):
        raise OperationalError("UPDATE …", {}, Exception("database is locked"))

    monkeypatch.setattr(MailPipeline, "_apply_with_retries", locked)
    deliver(config.inbox_dir, "1.a", mail("hi there"))
    for _ in range(3):
        assert asyncio.run(pipeline.read_inbox()) == []
    assert pipeline.journal.interrupted() == []
    monkeypatch.setattr(MailPipeline, "_apply_with_retries", real)
    [result] = asyncio.run(pipeline.read_inbox())
    assert result.outcome is Outcome.APPLIED


@pytest.mark.postgresql_only
def test_an_answer_whose_claim_is_lost_while_it_is_sent_is_left_to_its_sender_for_the_lease(engine, config):
    from pbem.daemon.pipeline import SEND_LEASE
    queue_answers(engine, 1)
    clock = Clock()
    sending = MailPipeline(engine, MaildirSource(config.inbox_dir), FlakySink(0), echo_handlers.echo, clock=clock)
    held = sending._claim_outbound(outbound_rows(engine)[0].id)
    assert held is not None
    held.release()  # its connection, and the lock with it, went away (the database restarted) mid-send
    sink = FlakySink(0)
    other = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=clock)
    assert asyncio.run(other.flush_outbox()) == 0 and sink.sent == []  # not sent twice meanwhile
    clock.now += SEND_LEASE  # the first one never recorded it (it died): sent again, once
    assert asyncio.run(other.flush_outbox()) == 1 and asyncio.run(other.flush_outbox()) == 0


class HookSink(FlakySink):
    """Delivers into a list; before each mail, `hook(index)` runs (in a worker thread)."""

    def __init__(self, hook) -> None:
        super().__init__(0)
        self.hook = hook

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        await asyncio.to_thread(self.hook, len(self.sent))
        await super().send(raw, sender, recipients)


@pytest.mark.postgresql_only
def test_a_claim_whose_connection_is_cut_while_its_answer_is_sent_stops_nothing(engine, config):
    from sqlalchemy import text
    queue_answers(engine, 2)

    def cut_the_claims(index: int) -> None:
        if index == 0:
            with engine.connect() as connection:
                connection.execute(text(
                    "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                    "WHERE l.locktype = 'advisory' AND a.datname = current_database() "
                    "AND l.pid <> pg_backend_pid()"))
                connection.commit()

    sink = HookSink(cut_the_claims)
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo)
    assert asyncio.run(pipeline.flush_outbox()) == 2
    assert asyncio.run(pipeline.flush_outbox()) == 0
    assert [recipients for _, _, recipients in sink.sent] == [["player0@example.org"], ["player1@example.org"]]
    assert all(row.sent_at is not None and row.attempts == 1 for row in outbound_rows(engine))


async def _refusing_in_latin1(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """An SMTP server that refuses every recipient with a reply in Latin-1, not UTF-8."""
    writer.write(b"220 mx ESMTP\r\n")
    while line := await reader.readline():
        verb = line[:4].upper()
        replies = {b"EHLO": b"250 mx", b"HELO": b"250 mx", b"MAIL": b"250 ok", b"RSET": b"250 ok",
                   b"NOOP": b"250 ok", b"RCPT": b"550 5.1.1 Empf\xe4nger unbekannt", b"QUIT": b"221 bye"}
        writer.write(replies.get(verb, b"502 no") + b"\r\n")
        await writer.drain()
        if verb == b"QUIT":
            break
    writer.close()


def test_a_refusal_in_another_encoding_is_recorded_and_given_up(engine, config):
    from pbem.config import SmtpConfig
    from pbem.mail.smtp import SmtpSink
    queue_answers(engine, 1)

    async def three_passes() -> None:
        server = await asyncio.start_server(_refusing_in_latin1, "127.0.0.1", 0)
        sink = SmtpSink(SmtpConfig(host="127.0.0.1", port=server.sockets[0].getsockname()[1], security="none"),
                        timeout=5)
        pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo, clock=Clock())
        for _ in range(3):
            await pipeline.flush_outbox()
        await sink.close()
        server.close()

    asyncio.run(three_passes())
    [row] = outbound_rows(engine)
    with session_scope(engine) as session:
        [given_up] = session.exec(select(OutboundGivenUp)).all()
    assert row.attempts == 1 and row.sent_at is None and "Empf" in given_up.reason and "550" in row.last_error


@pytest.mark.postgresql_only
def test_connections_the_database_dropped_cost_no_mail_and_no_answer_twice(engine, config):
    """No ping per checkout: after the server dropped every connection (a restart), the first
    statement of each pooled one fails, and the pipeline does its work once more at once."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    sink = FlakySink(0)
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, echo_handlers.echo)
    for number in range(3):
        if number:
            admin = create_engine(engine.url, poolclass=NullPool)
            with admin.connect() as connection:
                dropped = connection.execute(text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()")).scalar()
            admin.dispose()
            assert dropped >= 1
        deliver(config.inbox_dir, f"{number}.a", mail("hi there", message_id=f"<m{number}@example.org>"))
        [result] = asyncio.run(pipeline.read_inbox())
        assert result.outcome is Outcome.APPLIED
        assert asyncio.run(pipeline.send_own_answers()) == 1
    assert [row.state for row in inbound_rows(engine)] == [InboundState.APPLIED] * 3
    assert all(row.sent_at is not None for row in outbound_rows(engine)) and len(sink.sent) == 3
    assert len(files(config.inbox_dir / DONE_FOLDER)) == 3


def test_the_offset_of_this_host_s_clock_from_the_database_server_s_is_measured(engine):
    """pbem serve warns at start when it is over MAX_CLOCK_OFFSET_SECONDS (several daemons decide
    by their own clocks when another's answer is due)."""
    from pbem.store.db import clock_offset
    assert abs(clock_offset(engine)) < 1.0
    behind = clock_offset(engine, now=lambda: utc_now() - timedelta(seconds=90))
    assert behind == 0.0 if engine.dialect.name == "sqlite" else 89.0 < behind < 91.0


@pytest.mark.postgresql_only
def test_a_read_cancelled_while_its_mail_is_applied_lets_go_of_the_claim_once_applied(engine, config):
    """The claim is taken and the mail applied in one worker thread: a task cancelled while that
    thread works still releases the claim when it is done, so that another daemon can put the
    mail away (it finds it applied) instead of leaving it "in hand elsewhere" for ever."""
    import threading

    from pbem.store.db import claim

    started, go_on = threading.Event(), threading.Event()

    def slow(session, raw, inbound):
        started.set()
        go_on.wait(10)
        echo_handlers.echo(session, raw, inbound)

    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), FlakySink(0), slow)
    deliver(config.inbox_dir, "1.a", mail("hello", "<a@example.org>"))

    async def cancel_midway() -> None:
        task = asyncio.create_task(pipeline.read_inbox())
        await asyncio.to_thread(started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert claim(engine, "<a@example.org>") is None  # still applying: held
        go_on.set()
        for _ in range(100):
            if (release := claim(engine, "<a@example.org>")) is not None:
                release()
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the claim is still held after the mail was applied")

    asyncio.run(cancel_midway())
    assert [row.state for row in inbound_rows(engine)] == [InboundState.APPLIED]
    other = MailPipeline(engine, MaildirSource(config.inbox_dir), FlakySink(0), echo_handlers.echo)
    assert [result.outcome for result in asyncio.run(other.read_inbox())] == [Outcome.ALREADY_DONE]
