"""Issue 36: an upgrade killed at any point leaves the old schema, and a rerun finishes it.

``pbem db upgrade`` runs in a process of its own that kills itself (SIGKILL) right after its Nth
SQL statement (``killed_after_statements.py``), for N spread over the whole upgrade; after each
kill the database is at its old revision with none of Alembic's ``_alembic_tmp_*`` tables, and
the next run goes on.  ``PBEM_UPGRADE_KILL_POINTS`` sets how many points (6 by default; the
issue's 50 with ``PBEM_UPGRADE_KILL_POINTS=50``, as docs/development.md says)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from pbem.store.db import head_revision, make_engine, schema_revision

from test_migrations import SCHEMA_1, _installation, _kept_mail, _plays_on, back_to_before_0011

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from post_office import LoadedDice, Player, PostOffice  # noqa: E402

from pbem.config import load_config  # noqa: E402

KILLED = Path(__file__).resolve().parent / "killed_after_statements.py"
POINTS = int(os.environ.get("PBEM_UPGRADE_KILL_POINTS", "6"))


def _upgrade(config_file: Path, kill_after: int, fail: bool = False) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PBEM_KILL_AFTER": str(kill_after), "PBEM_FAIL_INSTEAD": "1" if fail else "",
                   "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                  os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(KILLED), "db", "upgrade", "--config", str(config_file)],
                          capture_output=True, text=True, env=environment, timeout=120)


def _state(url: str) -> tuple[str | None, list[str]]:
    """The database's revision and any table a migration left half made."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return schema_revision(connection), [name for name in inspect(connection).get_table_names()
                                                 if name.startswith("_alembic_tmp")]
    finally:
        engine.dispose()


def _killed_at_many_points_then_finished(config_file: Path, url: str, before: str, statements: int) -> None:
    points = sorted({max(1, round(statements * (index + 1) / (POINTS + 1))) for index in range(POINTS)} | {statements})
    for point in points:
        run = _upgrade(config_file, point)
        assert run.returncode == -signal.SIGKILL, (point, run.stderr)
        assert _state(url) == (before, []), point
    failed = _upgrade(config_file, points[len(points) // 2], fail=True)  # a migration's error, midway
    assert failed.returncode != 0 and "made to fail by the test" in failed.stderr, failed.stderr
    assert _state(url) == (before, [])
    finished = _upgrade(config_file, 0)
    assert finished.returncode == 0, finished.stderr
    assert f"from revision {before} to {head_revision()}" in finished.stdout
    assert _state(url) == (head_revision(), [])


def _statements_of_an_upgrade(tmp_path: Path) -> int:
    config_file = _installation(SCHEMA_1 / "pbem.db", tmp_path / "count")
    run = _upgrade(config_file, 0)
    assert run.returncode == 0, run.stderr
    return int(run.stderr.rsplit("statements: ", 1)[1])


@pytest.mark.sqlite_only
def test_an_upgrade_from_the_first_releases_killed_at_many_points_is_finished_by_a_rerun_and_play_goes_on(tmp_path):
    statements = _statements_of_an_upgrade(tmp_path)
    assert statements > 100  # every migration from 0001 runs
    config_file = _installation(SCHEMA_1 / "pbem.db", tmp_path / "live")
    _killed_at_many_points_then_finished(config_file, f"sqlite:///{tmp_path / 'live' / 'data' / 'pbem.db'}",
                                         "0001", statements)
    office = PostOffice(load_config(config_file), LoadedDice(seed=3))
    _plays_on(office, Player(office, "ben@example.org", "Ben"), 1, _kept_mail(SCHEMA_1, "ben-single"))
    _plays_on(office, Player(office, "anna@example.org", "Anna"), 0, _kept_mail(SCHEMA_1, "anna-match"))


@pytest.mark.postgresql_only
def test_an_upgrade_killed_at_many_points_on_postgresql_is_finished_by_a_rerun(engine, config, config_file):
    with engine.begin() as connection:
        before = back_to_before_0011(connection)
    engine.dispose()
    counting = _upgrade(config_file, 0)
    assert counting.returncode == 0, counting.stderr
    statements = int(counting.stderr.rsplit("statements: ", 1)[1])
    with engine.begin() as connection:  # the same walk back, once more
        back_to_before_0011(connection)
    engine.dispose()
    _killed_at_many_points_then_finished(config_file, config.database.url, before, statements)
