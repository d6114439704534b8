"""The benches' one rig: the config, the mail servers, PostgreSQL, the daemon and the scripted players.

Every bench needs some of these and none of them is what it measures, so they live here once and
each script in ``bench/`` keeps only its options, its measurement and its figures.  The parts
that the tests already have are theirs, reused: the post office with its players
(tests/service/post_office.py), the live one on real mail servers
(tests/mail_server/live_office.py), Dovecot and the aiosmtpd sink (tests/mail_server/mail_servers.py)
and the private PostgreSQL (tests/postgres_server.py).  Importing this module puts those folders
on ``sys.path``, so a bench imports the rig first.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _folder in ("tests", "tests/service", "tests/mail_server"):
    if str(ROOT / _folder) not in sys.path:
        sys.path.insert(0, str(ROOT / _folder))

# the tests' harness; the benches take its classes from here (hence the explicit re-exports)
from live_office import LivePostOffice as LivePostOffice  # noqa: E402
from mail_servers import Dovecot, SmtpServer  # noqa: E402
from post_office import LoadedDice as LoadedDice, Player as Player, PostOffice as PostOffice  # noqa: E402
from postgres_server import PostgresServer as PostgresServer  # noqa: E402

from pbem.config import Config, load_config  # noqa: E402
from pbem.store.game_records import MatchStatus  # noqa: E402

SERVICE = ("backgammon@localhost", "service-secret")
"""The service's address, which is also its login on the private Dovecot, and its password."""
DAEMON_STOP_SECONDS = 30.0
CLOCK_TICK = os.sysconf("SC_CLK_TCK")
"""The unit of the CPU times in /proc."""

Settings = Mapping[str, object]
"""One table of the config file: its keys and values."""


def write_config(directory: Path, **tables: Settings) -> Config:
    """``directory/pbem.toml`` with the data in ``directory/data``, plus the given tables (an
    empty one is left out): one writer, so that every bench's daemon is configured alike and a
    bench names only the settings it is about."""
    (directory / "data").mkdir(parents=True, exist_ok=True)
    document = {"service": {"address": SERVICE[0], "data_dir": str(directory / "data")}, **tables}
    path = directory / "pbem.toml"
    path.write_text("".join(f"[{name}]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items())
                            for name, table in document.items() if table), encoding="utf-8")
    return load_config(path)


def database_table(url: str | None) -> Settings:
    """The ``[database]`` table for ``url``; none (SQLite in the data directory) without one."""
    return {"url": url} if url else {}


def scratch_office(directory: Path, seed: int, database: str | None = None, **tables: Settings) -> PostOffice:
    """The tests' post office in ``directory`` (Maildir in and out, the real pipeline and service in
    this process), its dice seeded, the web board off: on SQLite, or the ``database`` URL."""
    config = write_config(directory, database=database_table(database), web={"enabled": False}, **tables)
    return PostOffice(config, LoadedDice(seed=seed))


@contextmanager
def scratch() -> Iterator[Path]:
    """A temporary directory for a bench's configs, databases and logs."""
    with tempfile.TemporaryDirectory(prefix="pbem-bench-") as directory:
        yield Path(directory)


@contextmanager
def postgresql() -> Iterator[PostgresServer]:
    """A private PostgreSQL server, as the tests start it; ``new_database()`` gives a fresh one."""
    server = PostgresServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def mail_servers() -> Iterator[tuple[Dovecot, SmtpServer]]:
    """A private Dovecot with the service's mailbox, and an SMTP server that records what it gets."""
    dovecot, smtp = Dovecot(dict([SERVICE])), SmtpServer()
    dovecot.start()
    smtp.start()
    try:
        yield dovecot, smtp
    finally:
        smtp.stop()
        dovecot.remove()


@contextmanager
def live_office(database: str | None = None, dice: LoadedDice | None = None,
                **tables: Settings) -> Iterator[LivePostOffice]:
    """The post office on real mail servers: players mail by IMAP to a private Dovecot, answers
    are recorded by the SMTP sink.  Its config (IMAP with IDLE, invitations unlimited, the web
    board off, ``tables`` more) is ``office.config``, on a scratch directory (:func:`directory_of`).
    The daemon runs either in this process (``office.run``) or as ``pbem serve`` processes
    (:func:`serving`)."""
    with mail_servers() as (dovecot, smtp), scratch() as directory:
        config = write_config(
            directory, database=database_table(database),
            imap={"host": "127.0.0.1", "port": dovecot.port, "security": "none", "username": SERVICE[0],
                  "password": SERVICE[1], "poll_interval": 60, "idle": True},
            smtp={"host": "127.0.0.1", "port": smtp.port, "security": "none"},
            limits={"invitations_per_day": 0},
            web={"enabled": False},  # several daemons on one machine would need a port each
            **tables)
        yield LivePostOffice(config, dovecot, smtp, dice)


def directory_of(config: Config) -> Path:
    """The directory :func:`write_config` wrote ``config`` into: where logs and profiles go."""
    return Path(config.source).parent


def log_of(config: Config, number: int = 0) -> Path:
    """The log of the ``number``-th daemon :func:`serving` started on ``config``."""
    return directory_of(config) / f"serve-{number}.log"


@contextmanager
def serving(config: Config, daemons: int = 1, cores: Sequence[int] | None = None) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``daemons`` processes of ``pbem serve`` on ``config``, this checkout's code (``-m`` from its
    root), each logging to :func:`log_of`; stopped with SIGTERM at the end, and a daemon that
    ended otherwise shows its log.  With ``cores``, daemon i runs on core ``cores[i]`` alone
    (taskset)."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for number in range(daemons):
            pin = ["taskset", "-c", str(cores[number])] if cores is not None else []
            with log_of(config, number).open("wb") as log:
                processes.append(subprocess.Popen([*pin, sys.executable, "-m", "pbem.cli", "serve", "--config",
                                                   str(config.source)], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT))
        yield processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for number, process in enumerate(processes):
            try:
                process.wait(DAEMON_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.returncode not in (0, -signal.SIGTERM):
                print(f"pbem serve {number} ended with {process.returncode}:\n"
                      + log_of(config, number).read_text(errors="replace")[-3000:], file=sys.stderr)


def pair_up(office: PostOffice, count: int, names: tuple[str, str] = ("anna", "ben"),
            first: int = 0) -> list[tuple[Player, Player]]:
    """``count`` pairs of scripted players, numbered from ``first``: ``anna0@example.org``
    ("Anna 0") and ``ben0@example.org``, and so on."""
    return [(Player(office, f"{names[0]}{number}@example.org", f"{names[0].title()} {number}"),
             Player(office, f"{names[1]}{number}@example.org", f"{names[1].title()} {number}"))
            for number in range(first, first + count)]


def start_match(office: PostOffice, players: tuple[Player, Player], terms: str = "") -> int:
    """The first player invites the second (``terms``: e.g. ``match 15``; none: a single game)
    and confirms, the second accepts; the match's id.  Unlike the tests' ``invite_and_accept``
    it checks nothing, so that a bench spends no time on checks."""
    inviter, invitee = players
    inviter.write_confirmed(f"invite {invitee.address} {terms}".strip())
    invitee.reply("accept")
    return office.table().id


def next_answer(office: PostOffice, players: Sequence[Player], match_id: int) -> tuple[Player, EmailMessage, str] | None:
    """What the player to act in the match answers, as a simple player does (roll, take, the first
    legal move): the player, their last mail of the match and the command; None when the match is
    over or that mail asks nothing."""
    table = office.table(match_id)
    if table.status is not MatchStatus.RUNNING or table.game is None or table.game.to_act is None:
        return None
    seat = table.game.to_act
    player = players[seat]
    last = player.last_of(table.token(seat))
    command = player.next_command(seat, last) if last is not None else None
    return None if last is None or command is None else (player, last, command)


def cpu_seconds() -> float:
    """This process's CPU seconds so far, user and system, every thread (the in-process service's too)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def py_spy(rate: int, output: Path) -> list[str]:
    """The start of a py-spy command that samples every thread at ``rate`` per second into
    ``output`` (raw, collapsed stacks); add ``--pid N`` or ``-- command``."""
    return [str(Path(sys.executable).parent / "py-spy"), "record", "--format", "raw", "--rate", str(rate),
            "--output", str(output), "--threads", "--nonblocking"]


@contextmanager
def sampling(pid: int, output: Path | None, rate: int) -> Iterator[None]:
    """With ``output``, py-spy samples process ``pid`` (every thread) into it while the block runs."""
    if output is None:
        yield
        return
    spy = subprocess.Popen([*py_spy(rate, output), "--pid", str(pid)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        spy.wait(DAEMON_STOP_SECONDS)


def percentile(values: list[float], percent: int) -> float:
    """The ``percent``-th percentile (inclusive: between the values measured)."""
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]


class CpuMeter:
    """CPU time from /proc (the kernel's count, not the daemon's own): of the whole machine
    (``machine``: every process, also those that ended meanwhile) and of the processes of
    each kind: ``daemons`` (the `pbem serve` processes themselves), ``reviews`` (their children:
    the review job's worker process), ``postgresql``, ``dovecot``, and ``bench`` (this process:
    the players and the SMTP server)."""

    KINDS = ("daemons", "reviews", "postgresql", "dovecot", "bench")

    def __init__(self, daemons: list[int]) -> None:
        self.daemons = set(daemons)

    def read(self) -> dict[object, float]:
        """The machine's busy seconds (key ``machine``) and each process's (key: its pid and kind)."""
        counts: dict[object, float] = {}
        with open("/proc/stat") as stat:
            user, nice, system, idle, iowait, irq, softirq, steal = map(int, stat.readline().split()[1:9])
        counts["machine"] = (user + nice + system + irq + softirq + steal) / CLOCK_TICK
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                raw = (entry / "stat").read_text()
            except OSError:
                continue
            name, fields = raw[raw.index("(") + 1:raw.rindex(")")], raw.rpartition(")")[2].split()
            kind = self._kind(int(entry.name), name, int(fields[1]))
            if kind is not None:
                counts[(int(entry.name), kind)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICK
        return counts

    @staticmethod
    def spent(before: dict[object, float], after: dict[object, float]) -> dict[str, float]:
        """Seconds per kind between two readings: what each process running at the second spent
        since the first (a process that ended in between is counted in ``machine`` only)."""
        spent = dict.fromkeys(("machine", *CpuMeter.KINDS), 0.0)
        for key, seconds in after.items():
            kind = key if isinstance(key, str) else key[1]  # type: ignore[index]
            spent[kind] += seconds - before.get(key, 0.0)
        return spent

    def _kind(self, pid: int, name: str, parent: int) -> str | None:
        if pid in self.daemons:
            return "daemons"
        if parent in self.daemons:
            return "reviews"
        if pid == os.getpid():
            return "bench"
        if name.startswith(("postgres", "postmaster")):
            return "postgresql"
        if name in ("dovecot", "imap", "imap-login", "auth", "anvil", "log", "config", "stats"):
            return "dovecot"
        return None


def memory_kb(pid: int) -> dict[str, int]:
    """A process's resident memory now (``VmRSS``) and at its peak (``VmHWM``), in KB, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    return {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines()
            if line.startswith(("VmRSS", "VmHWM"))}


def children(pid: int) -> list[int]:
    """A process's children (a daemon's worker processes)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found
