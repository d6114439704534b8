"""The database engine, transactions and the schema, for SQLite and PostgreSQL alike.

All tables share `SQLModel.metadata`; `create_schema` imports every model module so that one call
creates the whole schema and records its version.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import DateTime, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, Session, SQLModel, create_engine, select

SCHEMA_VERSION = 2
MODEL_MODULES = ("pbem.store.mail_records", "pbem.store.game_records")
SQLITE_BUSY_TIMEOUT_MS = 30_000


class SchemaError(Exception):
    """The database was written by a newer version of pbem than the one running."""


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that always comes back timezone-aware in UTC, also from SQLite (which drops zones)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given; use timezone-aware UTC times")
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class SchemaVersion(SQLModel, table=True):
    """One row per schema version applied to this database."""

    __tablename__ = "schema_version"

    version: int = Field(primary_key=True)
    applied_at: datetime = Field(sa_type=UTCDateTime)


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets WAL (readers never block the daemon) and a busy timeout."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False,
                                              "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
    event.listen(engine, "connect", _configure_sqlite_connection)
    return engine


def _configure_sqlite_connection(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """One transaction: committed when the block ends normally, rolled back when it raises."""
    with Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def import_model_modules() -> None:
    """Register every table with `SQLModel.metadata` (modules not written yet are skipped)."""
    for name in MODEL_MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)


def create_schema(engine: Engine) -> None:
    """Create missing tables and record the schema version; refuse a database of another schema version."""
    import_model_modules()
    SQLModel.metadata.create_all(engine)
    with session_scope(engine) as session:
        found = current_schema_version(session)
        if found is None:
            session.add(SchemaVersion(version=SCHEMA_VERSION, applied_at=utc_now()))
        elif found > SCHEMA_VERSION:
            raise SchemaError(f"the database has schema version {found}, newer than this program's "
                              f"{SCHEMA_VERSION}; upgrade pbem")
        elif found < SCHEMA_VERSION:
            raise SchemaError(f"the database has schema version {found}, older than this program's "
                              f"{SCHEMA_VERSION}, and pbem has no migrations yet: start with a fresh database")


def current_schema_version(session: Session) -> int | None:
    versions = session.exec(select(SchemaVersion.version)).all()
    return max(versions, default=None)
