"""The database engine, transactions and the schema, for SQLite and PostgreSQL alike.

All tables share `SQLModel.metadata`.  A new database is created whole from the models and
stamped with the newest Alembic revision (`pbem/store/migrations/`); an existing one is changed
only by `pbem db upgrade` (:func:`upgrade_schema`), and the daemon refuses a database at another
revision with a message naming that command.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import DateTime, event, inspect, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.sql.expression import Executable
from sqlalchemy.exc import DBAPIError
from sqlalchemy.types import TypeDecorator
from sqlmodel import Session, SQLModel, create_engine

from pbem.store.revision import HEAD_REVISION

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

MODEL_MODULES = ("pbem.store.mail_records", "pbem.store.game_records", "pbem.store.ledger", "pbem.store.watching")
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
ALEMBIC_VERSION_TABLE = "alembic_version"
LEGACY_VERSION_TABLE = "schema_version"
"""Where pbem before migrations recorded its schema version (1 or 2)."""
SCHEMA_LOCK_KEY = 0x70626D  # "pbm"
SQLITE_BUSY_TIMEOUT_MS = 30_000
T = TypeVar("T")


class SchemaError(Exception):
    """The database is at another schema revision than the program (unknown to it, or not yet upgraded)."""


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


POOL_SIZE = 10
"""Connections a daemon keeps open to PostgreSQL (up to as many more for a burst)."""
POOL_RECYCLE_SECONDS = 3600
"""A pooled connection older than this is replaced at its next checkout (servers and firewalls
drop connections idle for long)."""


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets WAL (readers never block the daemon) and a busy timeout."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        # Claims hold a connection each while their mail is applied or sent, beside the sessions
        # that apply and record it, the jobs and the web board: ten kept open, so that no
        # connection (a server process) is made and ended for every mail.  No ping per checkout
        # (a round trip for every transaction): a connection the server dropped fails its first
        # statement, which throws away every pooled connection of that time, and the work is
        # done again (the pipeline and claims at once, jobs at their next run).
        return create_engine(url, pool_size=POOL_SIZE, pool_recycle=POOL_RECYCLE_SECONDS)
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


_TRY_LOCK = text("SELECT pg_try_advisory_lock(:key)")
_UNLOCK = text("SELECT pg_advisory_unlock(:key)")


def claim(engine: Engine, key: str, still: Executable | None = None,
          still_params: dict[str, Any] | None = None, found: list[Any] | None = None) -> Callable[[], None] | None:
    """Claim ``key`` (a mail's Message-ID) for this process; returns the function that releases
    it, or None when another process holds it.

    On PostgreSQL, several daemons may read the same mail from one mailbox: a session advisory
    lock, held on a connection of its own, lets exactly one apply it and put it away; it is
    released by the function returned, or when the process dies (its connection closes).  On
    SQLite only one daemon runs per file (``pbem serve`` refuses a second), so every claim
    succeeds.  ``still``, on PostgreSQL: a query that must find a row once the lock is taken (the
    work is still to be done), sent on the lock's connection with no transaction around it; when
    it finds none, the claim is let go at once and None returned (``still_params``: its values;
    ``found``: a list that receives the rows it found).
    """
    if engine.dialect.name != "postgresql":
        return lambda: None
    number = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
    connection = once_more_if_disconnected(lambda: _try_lock(engine, number))
    if connection is None:
        return None
    try:
        if still is not None:
            rows = connection.execute(still, still_params).all()
            if not rows:
                connection.execute(_UNLOCK, {"key": number})
                connection.close()
                return None
            if found is not None:
                found.extend(rows)
    except BaseException:
        connection.close()
        raise

    def release() -> None:
        try:
            connection.execute(_UNLOCK, {"key": number})
        finally:
            connection.close()

    return release


def _try_lock(engine: Engine, number: int) -> Connection | None:
    """A connection holding the session advisory lock ``number``, or None when another holds it.
    The connection is in autocommit: the lock and its release are one statement each, with no
    transaction around them."""
    connection = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    try:
        mine = bool(connection.execute(_TRY_LOCK, {"key": number}).scalar())
    except BaseException:
        connection.close()
        raise
    if not mine:
        connection.close()
        return None
    return connection


def once_more_if_disconnected(work: Callable[[], T]) -> T:
    """Run ``work``; if it failed because the database had dropped its connection (a restarted
    server: every pooled connection of that time is thrown away then), run it once more."""
    try:
        return work()
    except DBAPIError as error:
        if not error.connection_invalidated:
            raise
    return work()


def clock_offset(engine: Engine, now: Callable[[], datetime] = utc_now) -> float:
    """How many seconds the database server's clock is ahead of this host's (0 on SQLite, where
    the database is this host's).  Daemons on several hosts decide by their own clocks when an
    answer another daemon holds is due, and when a game's clock runs out."""
    if engine.dialect.name != "postgresql":
        return 0.0
    with engine.connect() as connection:
        before = now()
        server: datetime = connection.execute(text("SELECT clock_timestamp()")).scalar_one()
        after = now()
    return float((server - (before + (after - before) / 2)).total_seconds())


def import_model_modules() -> None:
    """Register every table with `SQLModel.metadata`."""
    for name in MODEL_MODULES:
        importlib.import_module(name)


def _alembic(connection: Connection) -> AlembicConfig:
    from alembic.config import Config as AlembicConfig  # Alembic loads only for schema work

    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest schema revision this program knows (``tests/daemon/test_migrations.py`` holds
    it equal to the head of ``migrations/``; a constant, so that a command starts without
    Alembic)."""
    return HEAD_REVISION


def known_revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    return {script.revision for script in ScriptDirectory(str(MIGRATIONS)).walk_revisions()}


def unknown_revision(revision: str) -> str:
    """What to say of a database at a revision this program has no migration for: a newer pbem
    (or another branch) wrote it, or it is damaged; nothing of it is changed."""
    return (f"the database has schema revision {revision}, which this program does not know (its newest is "
            f"{head_revision()}; nothing was changed): run the pbem release that wrote it, or a newer one "
            f"(`pbem --version` names the revision it knows), or restore the backup taken before it was written")


def schema_revision(connection: Connection) -> str | None:
    """The database's schema revision: Alembic's, else ``0001`` or ``0002`` for a database of
    pbem before migrations (the version in its ``schema_version`` table), else None for a new,
    empty database."""
    tables = inspect(connection)
    if tables.has_table(ALEMBIC_VERSION_TABLE):
        current = connection.execute(text(f"SELECT version_num FROM {ALEMBIC_VERSION_TABLE}")).scalar()
        if current is not None:
            return str(current)
    if tables.has_table(LEGACY_VERSION_TABLE):
        version = connection.execute(text(f"SELECT max(version) FROM {LEGACY_VERSION_TABLE}")).scalar()
        return f"{int(version or 0):04d}"
    return None


def _lock(connection: Connection) -> None:
    """Several daemons may start together: on PostgreSQL, schema work waits for one lock
    (SQLite serialises writers itself)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})


def create_schema(engine: Engine) -> None:
    """Create a new database whole, at the newest revision; refuse one at another revision.

    An older database is not changed here: ``pbem db upgrade`` does that, on purpose, once.
    """
    with engine.begin() as connection:
        _lock(connection)
        current = schema_revision(connection)
        head = head_revision()
        if current is None:
            from alembic import command

            import_model_modules()
            SQLModel.metadata.create_all(connection)
            command.stamp(_alembic(connection), head)
        elif current == head:
            return
        elif current not in known_revisions():
            raise SchemaError(unknown_revision(current))
        else:
            raise SchemaError(f"the database has schema revision {current}, older than this program's {head}: "
                              "back it up, then run `pbem db upgrade` with the same --config")


def upgrade_schema(engine: Engine) -> tuple[str | None, str]:
    """``pbem db upgrade``: bring the database to the newest revision, keeping every row;
    returns (the revision before, the revision now).

    All of it is one transaction, DDL included, so that an upgrade killed at any point (or
    failing) leaves the old schema and a rerun starts it again; on PostgreSQL DDL is
    transactional, on SQLite a connection of its own makes it so (:func:`_migration_engine`).
    On SQLite a migration may rebuild a table others refer to, which SQLite allows only with its
    foreign key checks off: they are checked once before the migration commits.
    """
    migration_engine = _migration_engine(engine)
    try:
        with migration_engine.begin() as connection:
            result = _upgrade(connection)
            if connection.dialect.name == "sqlite" and \
                    connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall():
                raise SchemaError("the upgraded database would break a reference between its tables; "
                                  "nothing was changed")
        return result
    finally:
        if migration_engine is not engine:
            migration_engine.dispose()


def _migration_engine(engine: Engine) -> Engine:
    """The engine schema work runs on: ``engine`` itself on PostgreSQL; on SQLite one whose
    transactions hold DDL too.  Python's sqlite3 module, left to itself, begins a transaction
    only before INSERT, UPDATE or DELETE, so a migration's CREATE TABLE (Alembic's
    ``_alembic_tmp_*`` copies) would be committed at once and a killed upgrade leave it behind:
    this engine takes over the transactions (the "pysqlite transaction fix" of SQLAlchemy's
    SQLite documentation), begins them with BEGIN IMMEDIATE (the write lock at once, so a
    running daemon waits rather than fails midway), and runs with foreign key checks off (they
    cannot be switched inside a transaction)."""
    if engine.dialect.name != "sqlite" or engine.url.database in (None, "", ":memory:"):
        return engine
    migration_engine = create_engine(engine.url, connect_args={"check_same_thread": False,
                                                               "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

    def connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # no implicit BEGIN or COMMIT by the driver
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=OFF")
        cursor.close()

    def begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    event.listen(migration_engine, "connect", connect)
    event.listen(migration_engine, "begin", begin)
    return migration_engine


def _upgrade(connection: Connection) -> tuple[str | None, str]:
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    _lock(connection)
    before = schema_revision(connection)
    head = head_revision()
    if before is not None and before not in known_revisions():
        raise SchemaError(unknown_revision(before))
    if before is None:
        import_model_modules()
        SQLModel.metadata.create_all(connection)
        command.stamp(_alembic(connection), head)
    else:
        if MigrationContext.configure(connection).get_current_revision() is None:
            command.stamp(_alembic(connection), before)  # a database of pbem before migrations
        command.upgrade(_alembic(connection), "head")
    return before, head
