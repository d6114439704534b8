"""`write_changes`: a loaded row's changes written by one Core UPDATE give the very row the
ORM's flush gives, write only what changed, check the version, and leave nothing for the flush."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session

from pbem.store.db import session_scope
from pbem.store.game_records import MatchRecord, MatchStatus, Player, Seat
from pbem.store.row_writes import write_changes


def _new_match(engine: Engine, token: str) -> int:
    with session_scope(engine) as session:
        player = Player(address=f"{token}@example.org")
        record = MatchRecord(score={"points": [0, 0]}, options={"rated": True})
        session.add_all([player, record])
        session.flush()
        assert record.id is not None and player.id is not None
        session.add(Seat(match_id=record.id, number=0, player_id=player.id, token=token, thread=["<a@x>"]))
        return record.id


def _change(record: MatchRecord, seat: Seat) -> None:
    """What a move changes, and some of what else a mail may change: JSON set to None and back,
    times, numbers, text."""
    record.game = {"board": [0, 2, 5], "record": [{"kind": "move", "play": None}]}
    record.score = {"points": [1, 0]}
    record.status = MatchStatus.RUNNING
    record.clock_stamp = None
    record.deadline_at = datetime(2026, 11, 30, 18, 26, 17, 853665, tzinfo=timezone.utc)
    record.dice_rolls += 3
    seat.thread = [*seat.thread, "<b@x>"]
    seat.news = [{"kind": "moved", "seat": 1, "data": {"plays": ["8/5", "6/5"]}}]
    seat.bank = 3600.5


def _raw_row(session: Session, table: str, match_id: int) -> dict[str, object]:
    key = "id" if table == "matches" else "match_id"
    row = session.connection().execute(text(f"SELECT * FROM {table} WHERE {key} = :id"), {"id": match_id}).mappings().one()
    return {name: value for name, value in row.items() if name not in ("id", "match_id", "player_id", "token",
                                                                         "created_at", "updated_at")}


@pytest.fixture
def statements(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def keep(_connection: object, _cursor: object, statement: str, *_: object) -> None:
        seen.append(" ".join(statement.split()))

    event.listen(engine, "before_cursor_execute", keep)
    yield seen
    event.remove(engine, "before_cursor_execute", keep)


def test_the_row_written_is_the_one_the_orm_writes(engine: Engine) -> None:
    by_orm, by_core = _new_match(engine, "aaaa"), _new_match(engine, "bbbb")
    with session_scope(engine) as session:
        for match_id in (by_orm, by_core):
            record, seat = session.get_one(MatchRecord, match_id), session.get_one(Seat, (match_id, 0))
            _change(record, seat)
            if match_id == by_core:
                assert write_changes(session, record) and write_changes(session, seat)
    with session_scope(engine) as session:
        for table in ("matches", "seats"):
            assert _raw_row(session, table, by_core) == _raw_row(session, table, by_orm)
        record = session.get_one(MatchRecord, by_core)
        assert record.version == 2 and record.clock_stamp is None and record.score == {"points": [1, 0]}
        assert session.get_one(Seat, (by_core, 0)).thread == ["<a@x>", "<b@x>"]


def test_only_what_changed_is_written_and_the_commit_writes_nothing_more(engine: Engine, statements: list[str]) -> None:
    match_id = _new_match(engine, "cccc")
    with session_scope(engine) as session:
        record, seat = session.get_one(MatchRecord, match_id), session.get_one(Seat, (match_id, 0))
        session.connection().execute(text("UPDATE seats SET bank = 99 WHERE match_id = :id"), {"id": match_id})
        record.score = {"points": [0, 0]}  # set again, equal: no change
        seat.thread = [*seat.thread, "<c@x>"]
        statements.clear()
        assert write_changes(session, record) and write_changes(session, seat)
        assert len(statements) == 1 and statements[0].startswith("UPDATE seats SET thread=")
        assert "bank" not in statements[0].split(" WHERE ")[0]
        assert not session.dirty
        statements.clear()
    assert not any(statement.startswith("UPDATE") for statement in statements)
    with session_scope(engine) as session:
        seat = session.get_one(Seat, (match_id, 0))
        assert seat.bank == 99 and seat.thread == ["<a@x>", "<c@x>"]
        assert session.get_one(MatchRecord, match_id).version == 1


def test_a_row_changed_meanwhile_is_refused_as_the_flush_refuses_it(engine: Engine) -> None:
    match_id = _new_match(engine, "dddd")
    with pytest.raises(StaleDataError):
        with session_scope(engine) as session:
            record = session.get_one(MatchRecord, match_id)
            session.connection().execute(text("UPDATE matches SET version = version + 1, game_number = 7 "
                                              "WHERE id = :id"), {"id": match_id})
            record.game_number = 1
            write_changes(session, record)
    with session_scope(engine) as session:
        record = session.get_one(MatchRecord, match_id)
        assert (record.version, record.game_number) == (1, 0)  # the transaction was rolled back whole


def test_a_new_or_deleted_row_is_left_to_the_orm(engine: Engine, statements: list[str]) -> None:
    match_id = _new_match(engine, "eeee")
    with session_scope(engine) as session:
        deleted = session.get_one(Seat, (match_id, 0))
        session.delete(deleted)
        pending = MatchRecord(score={})
        session.add(pending)
        statements.clear()
        assert not write_changes(session, pending) and not write_changes(session, deleted)
        assert statements == []


def test_a_row_with_its_version_unloaded_or_of_another_session_is_left_to_the_orm(engine: Engine) -> None:
    match_id = _new_match(engine, "ffff")
    other = Session(engine, expire_on_commit=False)
    try:
        elsewhere = other.get_one(MatchRecord, match_id)
        elsewhere.game_number = 9
        with session_scope(engine) as session:
            assert not write_changes(session, elsewhere)  # the session that holds it writes it, or nobody
            record = session.get_one(MatchRecord, match_id)
            session.expire(record, ["version"])
            record.game_number = 5
            assert not write_changes(session, record)
            session.add(record)
    finally:
        other.close()
    with session_scope(engine) as session:
        record = session.get_one(MatchRecord, match_id)
        assert (record.version, record.game_number) == (2, 5)
