"""Shared fixtures: a private data directory, a config on it, a database with the full schema."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from sqlalchemy.engine import Engine
from sqlmodel import Session

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


@pytest.fixture
def config_file(data_dir: Path) -> Path:
    """A config file for the embedded default on `data_dir` (Maildir in and out, SQLite)."""
    path = data_dir.parent / "pbem.toml"
    path.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{data_dir}"\n', encoding="utf-8")
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
