"""Fast at scale: every statement that a move mail, the ``games`` and ``ratings`` mails, the
clock job and the retention job send finds its rows by an index, so that their cost does not
grow with the games played (bench/scale_bench.py measures it on 100,000 games).  Read from
SQLite's plans for the statements as sent, with their parameters unknown to the planner."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from post_office import acts
from sqlalchemy import event, update

from pbem.service.jobs.clock_job import check_clocks
from pbem.service.jobs.retention import prune_mail
from pbem.store.db import utc_now
from pbem.store.game_records import MatchRecord

GROWING = ("matches", "seats", "players", "finished_games", "inbound_mail", "outbound_mail", "review_jobs")
"""The tables that grow with every game played."""
_FULL_SCAN = re.compile(r"^SCAN (\w+)(?: AS \w+)?(?: USING (?:COVERING )?INDEX (\w+))?$")
"""A table read whole, or one of its indexes read whole: that is only fine when a LIMIT stops it
and the index holds only the rows the statement wants (the best ten of a rating, read in order
from the partial index of the players with rated play of its kind), or the LIMIT may never be
reached."""
_LIMITED = re.compile(r"\bLIMIT\b", re.IGNORECASE)
RETENTION = timedelta(days=30)


@contextmanager
def statements(engine) -> Iterator[list[tuple[str, tuple]]]:
    """The SELECT, UPDATE and DELETE statements sent on ``engine`` in the block, with parameters."""
    sent: list[tuple[str, tuple]] = []

    def record(_connection, _cursor, statement, parameters, _context, executemany) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE")) and not executemany:
            sent.append((statement, tuple(parameters)))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


def full_scans(engine, sent: list[tuple[str, tuple]]) -> list[tuple[str, str]]:
    """(table, statement) for every growing table a statement reads whole, not by an index."""
    found = []
    with engine.connect() as connection:
        partial = {name for name, sql in connection.exec_driver_sql("SELECT name, sql FROM sqlite_schema "
                                                                    "WHERE type = 'index'") if " WHERE " in (sql or "")}
        for statement, parameters in sent:
            for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters):
                scan = _FULL_SCAN.match(row[3])
                if scan and scan.group(1) in GROWING and not (scan.group(2) in partial and _LIMITED.search(statement)):
                    found.append((scan.group(1), statement))
    return found


@pytest.mark.sqlite_only
def test_move_games_ratings_clock_job_and_retention_read_by_index(opened_game):
    office, anna, ben = opened_game
    acts(office, ben, "roll")
    move, record_id, now = ben.next_command(1), office.table().id, utc_now()
    with statements(office.engine) as sent:  # what the service sends, not the test's own look-ups
        assert move and ben.reply(move) and anna.write("games") and anna.write("ratings")
        with office.engine.begin() as connection:  # the move reminder is due
            connection.execute(update(MatchRecord).where(MatchRecord.id == record_id)
                               .values(clock_started_at=now - timedelta(days=2, hours=1),
                                       deadline_at=now - timedelta(hours=1)))
        assert check_clocks(office.engine, office.config, now) == 1
        prune_mail(office.engine, now + RETENTION, RETENTION)
    assert len(sent) > 20
    assert full_scans(office.engine, sent) == []
