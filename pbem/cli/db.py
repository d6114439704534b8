"""``pbem db upgrade`` and ``pbem db status``: the database's schema revision (Alembic)."""

from __future__ import annotations

import argparse
import sys

from sqlalchemy.exc import SQLAlchemyError

from pbem.cli.loading import UsageError, config_of, engine_of, unusable_database
from pbem.store.db import SchemaError, head_revision, known_revisions, schema_revision, upgrade_schema

EXIT_OUT_OF_DATE = 1


def status(args: argparse.Namespace) -> int:
    """Print the revision of the database and of this program; 1 when ``pbem db upgrade`` is due."""
    config = config_of(args.config, mail_secrets=False)
    engine = engine_of(config)
    try:
        with engine.connect() as connection:
            current = schema_revision(connection)
    except SQLAlchemyError as exc:
        raise UsageError(unusable_database(config, exc)) from None
    finally:
        engine.dispose()
    head = head_revision()
    if current is None:
        print(f"new database: it will be created at revision {head}")
        return 0
    print(f"database at revision {current}; this program: {head}")
    if current not in known_revisions():
        print("the database is newer than this program: upgrade pbem")
        return EXIT_OUT_OF_DATE
    if current != head:
        print("run `pbem db upgrade` (back up the database first)")
        return EXIT_OUT_OF_DATE
    return 0


def upgrade(args: argparse.Namespace) -> int:
    """Bring the database to this program's revision, keeping every row."""
    config = config_of(args.config, mail_secrets=False)
    engine = engine_of(config)
    try:
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
