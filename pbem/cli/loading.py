"""What every ``pbem`` command that reads the configuration shares: load it, open the database,
or say in one line why not (exit status 2)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

from pbem.config import Config, ConfigError, load_config
from pbem.store.db import SchemaError, create_schema, make_engine

EXIT_USAGE = 2


class UsageError(Exception):
    """The command cannot run as asked (an unusable config file, database or argument);
    ``pbem.cli.main`` prints the message after the command's name and exits with status 2."""


def config_of(path: Path | None) -> Config:
    try:
        return load_config(path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def database_of(config: Config) -> Engine:
    """The configured database with its schema in place."""
    engine = make_engine(config.database.url)
    try:
        create_schema(engine)
    except SchemaError as exc:
        engine.dispose()
        raise UsageError(str(exc)) from None
    return engine
