"""Shared fixtures: a private data directory, a config on it, a database with the full schema."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from sqlalchemy.engine import Engine
from sqlmodel import Session

from postgres_server import PostgresServer

from pbem.config import Config, load_config
from pbem.store.db import create_schema, make_engine, session_scope


settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    # CI runs the same examples every time: a red CI run is then a real, repeatable failure.
    settings.load_profile("ci")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "pbem-data"
    path.mkdir()
    return path


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--database", choices=("sqlite", "postgresql"), default="sqlite",
                     help="the database the tests' configs use (postgresql: a private server is started)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests about one database run only on it: `.ci/run` runs the suite on each."""
    other = "sqlite_only" if config.getoption("--database") == "postgresql" else "postgresql_only"
    skip = pytest.mark.skip(reason=f"{other}: runs with --database {other.split('_')[0]}")
    for item in items:
        if other in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def postgres(request: pytest.FixtureRequest) -> Iterator[PostgresServer | None]:
    if request.config.getoption("--database") != "postgresql":
        yield None
        return
    server = PostgresServer()
    server.start()
    yield server
    server.stop()


WEB_OFF = "\n[web]\nenabled = false\n"
"""The ``[web]`` table of the tests' config files: the board off (see :func:`config_file`)."""


@pytest.fixture
def database_table(postgres: PostgresServer | None) -> str:
    """The ``[database]`` table of a test's config: none (SQLite in the data directory), or a
    fresh database of the private PostgreSQL server with ``--database postgresql``."""
    return f'[database]\nurl = "{postgres.new_database()}"\n' if postgres is not None else ""


@pytest.fixture
def config_file(data_dir: Path, database_table: str) -> Path:
    """A config file for the embedded default on `data_dir` (Maildir in and out), on the test
    run's database (:func:`database_table`), with the web board off: tests run many daemons at
    once, which cannot all listen on port 8080 (a test of the board turns it on, on a free port)."""
    path = data_dir.parent / "pbem.toml"
    database = database_table
    path.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{data_dir}"\n{database}'
                    f'{WEB_OFF}', encoding="utf-8")
    return path


@pytest.fixture
def config(config_file: Path) -> Config:
    return load_config(config_file)


@pytest.fixture
def engine(config: Config) -> Iterator[Engine]:
    engine = make_engine(config.database.url)
    create_schema(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """A session whose transaction commits at the end of the test (as the daemon's would)."""
    with session_scope(engine) as session:
        yield session
