"""``pbem db upgrade`` and ``pbem db status``: the database's schema revision (Alembic)."""

from __future__ import annotations

import argparse
import sys

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from pbem.cli.loading import UsageError, config_of, engine_of, missing_database, unusable_database
from pbem.config import Config
from pbem.store.db import (SchemaError, head_revision, known_revisions, schema_revision, unknown_revision,
                           upgrade_schema)

EXIT_OUT_OF_DATE = 1


def status(args: argparse.Namespace) -> int:
    """Print the revision of the database and of this program; 1 when ``pbem db upgrade`` is due."""
    lines, current = schema_report(config_of(args.config, mail_secrets=False))
    for line in lines:
        print(line)
    return 0 if current else EXIT_OUT_OF_DATE


def schema_report(config: Config) -> tuple[list[str], bool]:
    """What ``pbem db status`` and ``pbem check`` say about the database's schema revision, and
    whether it is one this program can serve (a database not yet created is); an unreachable
    database ends the command (``UsageError``).  A missing SQLite file is not created."""
    head = head_revision()
    missing = missing_database(config)
    if missing is not None:  # said without creating it: the data directory may be mistyped
        return [f"no database at {missing}: it will be created at revision {head}"], True
    engine = engine_of(config)
    try:
        with engine.connect() as connection:
            current = schema_revision(connection)
    except SQLAlchemyError as exc:
        raise UsageError(unusable_database(config, exc)) from None
    finally:
        engine.dispose()
    if current is None:
        return [f"new database: it will be created at revision {head}"], True
    lines = [f"database at revision {current}; this program: {head}"]
    if current not in known_revisions():
        return lines + [unknown_revision(current)], False
    if current != head:
        return lines + ["run `pbem db upgrade` (back up the database first)"], False
    return lines, True


def upgrade(args: argparse.Namespace) -> int:
    """Bring the database to this program's revision, keeping every row; an SQLite database is
    backed up first unless ``--no-backup``."""
    config = config_of(args.config, mail_secrets=False)
    engine = engine_of(config)
    try:
        _backup_first(config, engine, args.no_backup)
        before, now = upgrade_schema(engine)
    except SchemaError as exc:
        raise UsageError(str(exc)) from None
    except SQLAlchemyError as exc:
        raise UsageError(unusable_database(config, exc)) from None
    finally:
        engine.dispose()
    print(f"database upgraded from revision {before} to {now}" if before != now else f"database at revision {now}",
          file=sys.stdout)
    return 0


def _backup_first(config: Config, engine: Engine, skip: bool) -> None:
    """Before an upgrade changes anything: a backup of an SQLite database, and where it is; on
    PostgreSQL, a reminder of pg_dump (the upgrade is one transaction there too)."""
    with engine.connect() as connection:
        current = schema_revision(connection)
    if current is None or current == head_revision() or current not in known_revisions():
        return
    if engine.dialect.name != "sqlite":
        print("PostgreSQL: pbem takes no backup of it; take one with pg_dump first (`pbem backup` says how)")
        return
    if skip:
        print("no backup taken (--no-backup)")
        return
    from pbem.cli.backup import take_backup

    print(f"backup of revision {current} written to {take_backup(config, None, current)}", flush=True)
