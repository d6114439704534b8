"""An operator's first hour with the ``pbem`` command: ``--version``, a description on every
``--help``, ``pbem check`` opening the database, unsupported database URLs, read-only commands
that never create a database, and a quiet start."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.cli import _parser, main, subcommand_parsers
from pbem.daemon.scheduler import configure_logging
from pbem.store.db import create_schema, head_revision, make_engine

READ_ONLY_COMMANDS = [
    ["games"], ["status"], ["players"], ["export", "1"], ["ledger", "check"],
    ["credits", "show", "anna@example.org"], ["credits", "grant", "anna@example.org", "1", "--reason", "typo"],
    ["verify-dice", "--match", "1"],
]


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """``pbem serve`` and ``configure_logging`` set up logging for a process; put it back for the next tests."""
    root = logging.getLogger()
    watched = ("alembic", "apscheduler", "aioimaplib", "uvicorn.error")
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in watched}
    yield
    root.handlers[:], root.level = handlers, level
    for name, before in levels.items():
        logging.getLogger(name).setLevel(before)


def _config(tmp_path: Path, data_dir: Path, database: str | None = None) -> Path:
    path = tmp_path / "pbem.toml"
    text = f'[service]\ndata_dir = "{data_dir}"\n[web]\nenabled = false\n'
    if database is not None:
        text += f'[database]\nurl = "{database}"\n'
    path.write_text(text, encoding="utf-8")
    return path


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["--version"])
    assert ended.value.code == 0
    said = capsys.readouterr().out
    assert said.startswith("pbem ") and said.endswith(f", schema revision {head_revision()}\n")


def test_every_subcommand_has_a_description_on_its_help_page() -> None:
    commands = dict(subcommand_parsers(_parser()))
    assert {"serve", "check", "games", "db status", "credits grant", "ledger check", "rules legal"} <= set(commands)
    missing = [name for name, parser in commands.items() if not parser.description]
    assert not missing, missing


@pytest.mark.parametrize("command", READ_ONLY_COMMANDS, ids=[" ".join(words[:2]) for words in READ_ONLY_COMMANDS])
def test_a_command_that_only_reads_creates_no_database_in_a_mistyped_data_dir(
        tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    typo = tmp_path / "pbem-dta"
    assert main([*command, "--config", str(_config(tmp_path, typo))]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "no database at" in error and "pbem-dta" in error, error
    assert not typo.exists()


def test_db_status_says_a_database_is_missing_without_creating_it(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    typo = tmp_path / "pbem-dta"
    assert main(["db", "status", "--config", str(_config(tmp_path, typo))]) == 0
    assert capsys.readouterr().out.startswith(f"no database at {typo}")
    assert not typo.exists()


@pytest.mark.parametrize("url", ["mysql://pbem@localhost/pbem", "oracle://pbem@localhost/pbem",
                                 "mssql+pyodbc://pbem@server/pbem"])
@pytest.mark.parametrize("command", [["check"], ["games"], ["db", "upgrade"], ["serve"]])
def test_an_unsupported_database_names_the_supported_ones(tmp_path: Path, url: str, command: list[str],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "--config", str(_config(tmp_path, tmp_path / "data", url))]) == 2
    error = capsys.readouterr().err
    assert "is not supported" in error and "sqlite:///" in error and "postgresql://" in error, error
    assert "pip install" not in error


def test_pbem_check_says_the_schema_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    config = _config(tmp_path, data)
    assert main(["check", "--config", str(config)]) == 0
    assert f"database: no database at {data / 'pbem.db'}: it will be created at revision" in capsys.readouterr().out
    engine = make_engine(f"sqlite:///{data / 'pbem.db'}")
    create_schema(engine)
    engine.dispose()
    assert main(["check", "--config", str(config)]) == 0
    head = head_revision()
    assert f"database: database at revision {head}; this program: {head}" in capsys.readouterr().out


def test_pbem_check_fails_on_an_unreachable_postgresql(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path, tmp_path / "data", "postgresql+psycopg://pbem@127.0.0.1:1/pbem")
    assert main(["check", "--config", str(config)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("pbem check: cannot use the database postgresql+psycopg://pbem@127.0.0.1:1/pbem"), error
    assert len(error.splitlines()) == 1


@pytest.mark.parametrize("verbose", [False, True])
def test_a_start_logs_alembic_only_when_verbose(verbose: bool) -> None:
    configure_logging(verbose=verbose)
    assert logging.getLogger("alembic.runtime.migration").isEnabledFor(logging.INFO) is verbose
    assert logging.getLogger("alembic.runtime.migration").isEnabledFor(logging.WARNING)
