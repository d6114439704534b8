"""``pbem db upgrade`` and ``pbem db status``: the database's schema revision (Alembic)."""

from __future__ import annotations

import argparse
import sys

from sqlalchemy.exc import SQLAlchemyError

from pbem.cli.loading import UsageError, config_of
from pbem.store.db import SchemaError, head_revision, make_engine, schema_revision, upgrade_schema

EXIT_OUT_OF_DATE = 1


def status(args: argparse.Namespace) -> int:
    """Print the revision of the database and of this program; 1 when ``pbem db upgrade`` is due."""
    engine = make_engine(config_of(args.config).database.url)
    try:
        with engine.connect() as connection:
            current = schema_revision(connection)
    except SQLAlchemyError as exc:
        raise UsageError(f"cannot read the database: {exc}") from None
    finally:
        engine.dispose()
    head = head_revision()
    if current is None:
        print(f"new database: it will be created at revision {head}")
        return 0
    print(f"database at revision {current}; this program: {head}")
    if current != head:
        print("run `pbem db upgrade` (back up the database first)")
        return EXIT_OUT_OF_DATE
    return 0


def upgrade(args: argparse.Namespace) -> int:
    """Bring the database to this program's revision, keeping every row."""
    engine = make_engine(config_of(args.config).database.url)
    try:
        before, now = upgrade_schema(engine)
    except SchemaError as exc:
        raise UsageError(str(exc)) from None
    finally:
        engine.dispose()
    print(f"database upgraded from revision {before} to {now}" if before != now else f"database at revision {now}",
          file=sys.stdout)
    return 0
