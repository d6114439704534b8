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


def test_a_new_database_is_created_at_the_newest_revision_and_a_newer_one_is_refused(engine):
    create_schema(engine)
    create_schema(engine)  # again: nothing to do
    with engine.begin() as connection:
        assert schema_revision(connection) == head_revision()
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(SchemaError, match="newer"):
        create_schema(engine)


@pytest.mark.sqlite_only
def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'deep' / 'er' / 'pbem.db'}")
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() >= 5000
    engine.dispose()
