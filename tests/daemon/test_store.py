"""The database layer: transactions, the schema version, UTC times, SQLite settings, unique mails."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from pbem.store.db import (SchemaError, create_schema, head_revision, make_engine, schema_revision, session_scope,
                           utc_now)
from pbem.store.mail_records import InboundMail, InboundState, OutboundMail


def inbound(message_id: str = "<a@x>") -> InboundMail:
    return InboundMail(message_id=message_id, sender="a@x.org", subject="s", raw=b"raw", received_at=utc_now())


def test_session_scope_commits_on_success_and_rolls_back_on_error(engine):
    with session_scope(engine) as session:
        session.add(inbound("<kept@x>"))
    with pytest.raises(RuntimeError):
        with session_scope(engine) as session:
            session.add(inbound("<lost@x>"))
            session.flush()
            raise RuntimeError("handler failed")
    with session_scope(engine) as session:
        assert session.exec(select(InboundMail.message_id)).all() == ["<kept@x>"]


def test_message_ids_are_unique(engine):
    with session_scope(engine) as session:
        session.add(inbound())
    with pytest.raises(IntegrityError):
        with session_scope(engine) as session:
            session.add(inbound())


def test_times_come_back_aware_in_utc(engine):
    local = datetime(2026, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    with session_scope(engine) as session:
        session.add(OutboundMail(message_id="<o@x>", sender="s@x.org", recipients=["a@x.org", "b@x.org"],
                                 raw=b"r", created_at=local, next_attempt_at=local))
    with session_scope(engine) as session:
        row = session.exec(select(OutboundMail)).one()
    assert row.created_at == local and row.created_at.tzinfo == timezone.utc
    assert row.recipients == ["a@x.org", "b@x.org"] and row.sent_at is None and row.attempts == 0
    with pytest.raises(Exception, match="naive"):
        with session_scope(engine) as session:
            session.add(OutboundMail(message_id="<n@x>", sender="s", recipients=[], raw=b"",
                                     created_at=datetime(2026, 1, 1), next_attempt_at=utc_now()))


def test_inbound_state_defaults_to_applied(engine):
    with session_scope(engine) as session:
        session.add(inbound())
    with session_scope(engine) as session:
        assert session.exec(select(InboundMail)).one().state == InboundState.APPLIED


def test_a_new_database_is_created_at_the_newest_revision_and_one_of_an_unknown_revision_is_refused(engine):
    create_schema(engine)
    create_schema(engine)  # again: nothing to do
    with engine.begin() as connection:
        assert schema_revision(connection) == head_revision()
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(SchemaError, match="does not know"):
        create_schema(engine)


@pytest.mark.sqlite_only
def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'deep' / 'er' / 'pbem.db'}")
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() >= 5000
    engine.dispose()


def test_a_queued_mail_is_one_row_with_what_sending_it_from_memory_needs(engine):
    """``queue_mail`` writes its row at once (a Core INSERT, no ORM object): the row and the
    record it returns agree, a rolled-back transaction keeps neither, and a query in the same
    transaction already sees the row."""
    from email.message import EmailMessage

    from pbem.store.mail_records import hold_answers_until, queue_mail, queued_mails

    def message() -> EmailMessage:
        mail = EmailMessage()
        mail["From"], mail["To"], mail["Cc"] = "Backgammon <bg@example.org>", "ann@example.org", "bo@example.org"
        mail.set_content("your turn")
        return mail

    later = utc_now() + timedelta(seconds=90)
    with session_scope(engine) as session:
        hold_answers_until(session, later)
        first = queue_mail(session, message(), 7)
        second = queue_mail(session, message())
        assert session.exec(select(OutboundMail.id).where(OutboundMail.sent_at == None)).all() == [  # noqa: E711
            first.id, second.id]
        assert queued_mails(session) == [first, second]
    with pytest.raises(RuntimeError):
        with session_scope(engine) as session:
            queue_mail(session, message())
            raise RuntimeError("handler failed")
    with session_scope(engine) as session:
        rows = session.exec(select(OutboundMail).order_by(OutboundMail.id)).all()
    assert [row.id for row in rows] == [first.id, second.id] and first.id != second.id
    row = rows[0]
    assert (row.message_id, row.sender, tuple(row.recipients), row.raw, row.created_at, row.next_attempt_at) == (
        first.message_id, first.sender, first.recipients, first.raw, first.created_at, first.next_attempt_at)
    assert first.recipients == ("ann@example.org", "bo@example.org") and first.next_attempt_at == later
    assert (row.match_id, rows[1].match_id, row.attempts, row.sent_at, row.last_error) == (7, None, 0, None, "")
    assert first.sender == f"bg+bounce-{row.bounce_tag}@example.org" and row.bounce_tag != rows[1].bounce_tag
    assert row.raw.startswith(b"From: Backgammon <bg@example.org>") and f"Message-ID: {row.message_id}".encode() in row.raw
