"""A private PostgreSQL server for the tests (Debian's `postgresql` binaries): `initdb` into a
temporary directory as the `postgres` user (PostgreSQL refuses to run as root), trust
authentication on a free loopback port, stopped at the end of the session."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

BIN = Path("/usr/lib/postgresql/15/bin")
START_SECONDS = 30.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="pbem-pg-"))
        self.port = _free_port()
        self._databases = 0
        self._as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def start(self) -> None:
        data = self.root / "data"
        data.mkdir()
        if self._as_postgres:
            shutil.chown(self.root, "postgres")
            shutil.chown(data, "postgres")
        self._run(str(BIN / "initdb"), "-D", str(data), "--auth=trust", "--username=postgres", "-E", "UTF8",
                  "--no-sync")
        self._run(str(BIN / "pg_ctl"), "-D", str(data), "-l", str(self.root / "log"), "-w", "-t", str(int(START_SECONDS)),
                  "-o", f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200", "start")

    def stop(self) -> None:
        self._run(str(BIN / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    def new_database(self) -> str:
        """A fresh, empty database; its SQLAlchemy URL."""
        self._databases += 1
        name = f"pbem_{self._databases}"
        self._run(str(BIN / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-q", "-c",
                  f"CREATE DATABASE {name}")
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def _run(self, *command: str, check: bool = True) -> None:
        result = subprocess.run([*self._as_postgres, *command], capture_output=True, text=True, timeout=60,
                                cwd=self.root)
        if check and result.returncode != 0:
            log = (self.root / "log").read_text() if (self.root / "log").exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed: {result.stderr}\n{log}")
