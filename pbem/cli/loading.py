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


def engine_of(config: Config) -> Engine:
    """An engine for the configured database, or why there is none (a driver not installed)."""
    try:
        return make_engine(config.database.url)
    except ModuleNotFoundError as exc:
        raise UsageError(f"{config.source}: [database] url needs the Python package {exc.name}: "
                         "pip install 'pbem[postgres]'") from None


def database_of(config: Config) -> Engine:
    """The configured database with its schema in place."""
    engine = engine_of(config)
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
