"""What every ``pbem`` command that reads the configuration shares: load it, open the database,
or say in one line why not (exit status 2)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import SQLAlchemyError

from pbem.config import Config, ConfigError, load_config
from pbem.store.db import SchemaError, create_schema, make_engine

EXIT_USAGE = 2


class UsageError(Exception):
    """The command cannot run as asked (an unusable config file, database or argument);
    ``pbem.cli.main`` prints the message after the command's name and exits with status 2."""


def config_of(path: Path | None, mail_secrets: bool = True) -> Config:
    """The configuration; ``mail_secrets=False`` for commands that use only the database."""
    try:
        return load_config(path, mail_secrets)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


SUPPORTED_DATABASES = ("sqlite", "postgresql")
"""The backends of ``[database] url`` (SQLAlchemy's names, as the URL's scheme begins)."""


def engine_of(config: Config, create: bool = True) -> Engine:
    """An engine for the configured database, or why there is none (a backend pbem does not
    support, a driver not installed, or, with ``create=False``, an SQLite file that does not exist:
    a read-only command with a mistyped data directory must not leave an empty database there)."""
    url = make_url(config.database.url)
    backend = url.get_backend_name()
    if backend not in SUPPORTED_DATABASES:
        raise UsageError(f"{config.source}: [database] url: {backend} is not supported; use "
                         "sqlite:///PATH or postgresql://USER@HOST/NAME")
    missing = missing_database(config)
    if not create and missing is not None:
        raise UsageError(f"no database at {missing} (is the data directory mistyped?); "
                         "pbem serve or pbem db upgrade creates it")
    try:
        return make_engine(config.database.url)
    except ModuleNotFoundError as exc:
        raise UsageError(f"{config.source}: [database] url needs the Python package {exc.name}: "
                         "pip install 'pbem[postgres]'") from None


def missing_database(config: Config) -> Path | None:
    """The configured SQLite file when it does not exist (yet); None for one that does, and for
    PostgreSQL (whose server says whether the database exists)."""
    url = make_url(config.database.url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    path = Path(url.database)
    return None if path.is_file() else path


def database_of(config: Config, create: bool = True) -> Engine:
    """The configured database with its schema in place; ``create=False`` for the commands that
    only read it, which end with one line when it does not exist."""
    engine = engine_of(config, create)
    try:
        create_schema(engine)
    except SchemaError as exc:
        engine.dispose()
        raise UsageError(str(exc)) from None
    except SQLAlchemyError as exc:
        engine.dispose()
        raise UsageError(unusable_database(config, exc)) from None
    return engine


def unusable_database(config: Config, error: SQLAlchemyError) -> str:
    """One line: the database cannot be used, and what its driver said."""
    cause = getattr(error, "orig", None) or error
    url = make_url(config.database.url).render_as_string(hide_password=True)
    return f"cannot use the database {url}: {str(cause).splitlines()[0]}"
