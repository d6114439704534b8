"""Backups of an SQLite database, taken while the daemon runs, and their restore.

A backup is ``VACUUM INTO`` a new file: one read transaction, so the copy is the database as
one moment saw it (WAL lets the daemon write on meanwhile), compacted, and checked with
``PRAGMA quick_check`` before it is called a backup.  A restore puts such a file in place of
the database, keeping the one it replaces beside it; PostgreSQL has ``pg_dump`` for both.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime
from pathlib import Path

from pbem.store.db import ALEMBIC_VERSION_TABLE, LEGACY_VERSION_TABLE, SQLITE_BUSY_TIMEOUT_MS

BACKUP_FOLDER = "backups"
"""Where ``pbem db upgrade`` puts the backup it takes first, in the data directory."""


class BackupError(Exception):
    """No backup (or restore) was made: the file exists, is no pbem database, or is damaged."""


def default_backup_path(data_dir: Path, revision: str | None, now: datetime) -> Path:
    """``DATA_DIR/backups/pbem-<revision>-<UTC time>.db`` (``-2``, ``-3``… for another in the
    same second): the revision says which pbem reads it."""
    stem = data_dir / BACKUP_FOLDER / f"pbem-{revision or 'new'}-{now.strftime('%Y%m%dT%H%M%SZ')}"
    path, number = stem.with_name(stem.name + ".db"), 1
    while path.exists():
        number += 1
        path = stem.with_name(f"{stem.name}-{number}.db")
    return path


def backup_sqlite(database: Path, target: Path) -> str | None:
    """Copy ``database`` into the new file ``target`` as one moment saw it; returns the copy's
    schema revision."""
    if target.exists():
        raise BackupError(f"{target} exists already; name a new file")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")  # a copy cut short is never taken for a backup
    partial.unlink(missing_ok=True)
    source = sqlite3.connect(database, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)
    try:
        source.execute("VACUUM INTO ?", (str(partial),))
    except sqlite3.Error as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"no backup of {database}: {exc}") from None
    finally:
        source.close()
    with open(partial, "rb") as written:  # on disk before it is called a backup
        os.fsync(written.fileno())
    try:
        revision = check_backup(partial)
    except BackupError:
        partial.unlink()
        raise
    os.rename(partial, target)
    return revision


def check_backup(path: Path) -> str | None:
    """The schema revision of the backup at ``path``, after SQLite's quick check of every page."""
    try:
        database = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BackupError(f"{path}: {exc}") from None
    try:
        verdict = database.execute("PRAGMA quick_check").fetchone()
        if verdict != ("ok",):
            raise BackupError(f"{path} is damaged: {verdict[0] if verdict else 'no answer'}")
        return _revision(database)
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path} is no SQLite database of pbem: {exc}") from None
    finally:
        database.close()


def _revision(database: sqlite3.Connection) -> str | None:
    tables = {name for (name,) in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if ALEMBIC_VERSION_TABLE in tables:
        row = database.execute(f"SELECT version_num FROM {ALEMBIC_VERSION_TABLE}").fetchone()
        if row is not None:
            return str(row[0])
    if LEGACY_VERSION_TABLE in tables:
        (version,) = database.execute(f"SELECT max(version) FROM {LEGACY_VERSION_TABLE}").fetchone()
        return f"{int(version or 0):04d}"
    if "players" not in tables:
        raise BackupError("it holds no table of pbem")
    return None


def restore_sqlite(database: Path, backup: Path, now: datetime) -> tuple[str | None, Path | None]:
    """Put a copy of ``backup`` in place of ``database`` (the daemon stopped); returns the
    backup's revision and where the database it replaced is kept (None: there was none).

    The replaced database's write-ahead log goes with it (SQLite would otherwise apply it to
    the restored file), after a checkpoint that folds it into the file."""
    revision = check_backup(backup)
    incoming = database.with_name(database.name + ".restoring")
    incoming.unlink(missing_ok=True)
    source = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    target = sqlite3.connect(incoming)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()
    with open(incoming, "rb") as written:
        os.fsync(written.fileno())
    kept = None
    if database.exists():
        old = sqlite3.connect(database, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)
        try:
            old.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            old.close()
        kept = database.with_name(f"{database.name}.before-restore-{now.strftime('%Y%m%dT%H%M%SZ')}")
        os.rename(database, kept)
        for suffix in ("-wal", "-shm"):
            left = database.with_name(database.name + suffix)
            if left.exists():
                os.rename(left, kept.with_name(kept.name + suffix))
    os.replace(incoming, database)
    return revision, kept
