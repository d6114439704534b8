"""Fixtures: a private Dovecot and an aiosmtpd server per test, and a config that points at both."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mail_servers import Dovecot, SmtpServer

from pbem.config import Config, load_config

SERVICE = ("backgammon@localhost", "service-secret")


@pytest.fixture
def dovecot() -> Iterator[Dovecot]:
    server = Dovecot(dict([SERVICE]))
    server.start()
    yield server
    server.remove()


@pytest.fixture
def smtp_server() -> Iterator[SmtpServer]:
    server = SmtpServer()
    server.start()
    yield server
    server.stop()


WEB_OFF = "[web]\nenabled = false\n"
"""The web board off: several daemons of a test cannot all listen on port 8080."""


def write_config(data_dir: Path, dovecot: Dovecot, smtp: SmtpServer, database_table: str, *,
                 imap: dict[str, object] | None = None, extra: str = "") -> Path:
    """A config file for the test servers, on the test run's database (the ``database_table``
    fixture); `imap` changes or adds keys of the [imap] table."""
    settings = {"host": "127.0.0.1", "port": dovecot.port, "security": "none", "username": SERVICE[0],
                "password": SERVICE[1], "poll_interval": 60, "idle": True} | (imap or {})
    imap_table = "".join(f"{key} = {json.dumps(value)}\n" for key, value in settings.items())
    path = data_dir.parent / "pbem.toml"
    path.write_text(f"""
[service]
address = "{SERVICE[0]}"
data_dir = "{data_dir}"

[imap]
{imap_table}
[smtp]
host = "127.0.0.1"
port = {smtp.port}
security = "none"
{database_table}
{extra}
{"" if "[web]" in extra else WEB_OFF}
""", encoding="utf-8")
    return path


@pytest.fixture
def mail_config(data_dir: Path, dovecot: Dovecot, smtp_server: SmtpServer, database_table: str) -> Config:
    """IMAP and SMTP on the test servers; the 60 s poll shows that IDLE, not polling, wakes the daemon."""
    return load_config(write_config(data_dir, dovecot, smtp_server, database_table, extra="[limits]\nmax_mail_bytes = 20000\n"))


@pytest.fixture
def polling_config(data_dir: Path, dovecot: Dovecot, smtp_server: SmtpServer, database_table: str) -> Config:
    """IMAP without IDLE: the daemon polls (the tests poll fast, so that long games stay quick)."""
    return load_config(write_config(data_dir, dovecot, smtp_server, database_table, imap={"idle": False}))
