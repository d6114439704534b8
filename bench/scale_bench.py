"""Whether the service stays fast when the database is big: 100,000 finished and 10,000 running games.

    python bench/scale_bench.py [--finished 100000] [--running 10000] [--samples 15]
                                [--storage-games 10] [--storage-only]
                                [--postgresql | --database-url URL --empty-database-url URL]
                                [--workdir DIR] [--small]

Prints figures only.  The goals (issues 12 and 23): a move mail, the ``games`` and ``ratings``
mails and the clock job take at most 1.2× their time on an empty database; ``pbem games``
answers within 1 s; the daemon stays under 200 MB; a finished game keeps at most 50 KB after
retention.

1. One single game is played through the real service (tests/service/post_office.py) and a
   5-point match is started and played a few turns, on a scratch SQLite database: their rows
   (match, seats, finished game, mails as stored) are the documents every bulk row copies.
2. The empty database: a fresh schema.  The big one: the same schema, then bulk INSERTs of
   players (one per five games, with ratings and experience), the finished and the running
   matches with their seats, each finished match's finished game, and the mails as the
   retention job leaves them: ``--mails`` incoming mail rows per finished game (their raw text,
   sender and subject emptied, their answers deleted), one incoming and one outgoing mail whole
   per running game.  The running games' clocks run, their alarms due in the next days.  Anna,
   who plays in the probe, has 50 finished matches behind her there.
3. The probe, the same on both databases with the same dice: Anna invites Ben and they play
   ``--samples`` turns (each move mail timed from its delivery to the Maildir to its answers in
   the outbox, the pipeline whole), Anna asks for ``games`` and ``ratings`` ``--samples``
   times each, the clock job runs ``--samples`` times with the probe match's move reminder made
   due (and once more with nothing due), and the retention job with nothing due.  Medians of the
   wall time and of this process's CPU time (the service runs in it; the CPU time holds when
   other work loads the machine), and big / empty.
4. ``pbem games`` run as a command (a new process each) on the big database: the first page,
   ``--status running``, ``--player`` and a page far back with ``--before``.
5. ``pbem serve`` on the big database until it has answered a move, a ``games`` and a
   ``ratings`` mail and run the clock job: its resident memory (VmRSS and the peak VmHWM from
   /proc), and its worker processes'.
6. Storage: ``--storage-games`` single games played whole between two players (and their
   reviews mailed) on a fresh database, then the retention job run as it runs
   ``retention_days`` after they ended: the bytes of every table and index beyond an empty
   database, per finished game, before and after retention (SQLite: its ``dbstat`` table after
   ``VACUUM``; PostgreSQL: ``pg_total_relation_size`` after ``VACUUM FULL``).  Alone with
   ``--storage-only``.

On SQLite the big database is built once into ``--workdir`` (default: a temporary directory)
and copied before each run, then upgraded as ``pbem db upgrade`` does when an older pbem built
it; ``--postgresql`` starts a private PostgreSQL server as the tests do
(tests/postgres_server.py); ``--database-url`` and ``--empty-database-url`` name two databases
of your own (``postgresql+psycopg://…``), whose pbem tables the bench drops and fills (the
empty one again for the storage figures).
"""

from __future__ import annotations

import argparse
import base64
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, NamedTuple

from rig import (LoadedDice, Player, PostgresServer, PostOffice, children, database_table, log_of, memory_kb,
                 next_answer, postgresql, serving, write_config)
from sqlalchemy import Table, func, select, text, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel

from post_office import invite_and_accept, play_to_end, text_of  # (tests/service: the rig puts it on the path)
from pbem.config import Config
from pbem.mail.local_client import compose_mail, compose_reply, deliver_to_maildir
from pbem.service.jobs.clock_job import check_clocks
from pbem.service.pages.reports import GamesWanted, games_rows
from pbem.service.jobs.retention import prune_mail
from pbem.store.db import create_schema, import_model_modules, make_engine, upgrade_schema, utc_now
from pbem.store.game_records import FinishedGame, MatchRecord, MatchStatus, Seat, count_rating_bands
from pbem.store.game_records import Player as PlayerRow
from pbem.store.mail_records import InboundMail, OutboundMail

CHUNK = 2000
PROBE_HISTORY = 50
"""Finished matches Anna has played on the big database before the probe."""
ANNA, BEN = "anna@example.org", "ben@example.org"


def table_of(model: type[SQLModel]) -> Table:
    table = getattr(model, "__table__")
    assert isinstance(table, Table)
    return table


def configure(directory: Path, url: str | None, **limits: int) -> Config:
    """A config for the embedded default (Maildir in and out) on ``directory``, with ``limits``.

    Anna asks for ``games`` and ``ratings`` in new mails again and again: a mail that proves
    nothing of its sender is answered at most ``confirmations_per_day`` times a day (issue 34),
    so the bench lifts that limit."""
    return write_config(directory, database=database_table(url),
                        limits={"confirmations_per_day": 1_000_000, **limits})


# -- 1. the documents to copy ------------------------------------------------------------------


@dataclass
class Templates:
    """Rows as the service wrote them, by table: a finished match and a running one."""

    finished: dict[str, Any]
    running: dict[str, Any]
    seats_finished: list[dict[str, Any]]
    seats_running: list[dict[str, Any]]
    finished_game: dict[str, Any]
    inbound: dict[str, Any]
    outbound: dict[str, Any]


def rows(engine: Engine, model: type[SQLModel], *where: Any) -> list[dict[str, Any]]:
    with engine.connect() as connection:
        return [dict(row) for row in connection.execute(table_of(model).select().where(*where)).mappings()]


def play_templates(directory: Path) -> Templates:
    """Play a single game to its end and a 5-point match a few turns through the service."""
    shutil.rmtree(directory, ignore_errors=True)
    config = configure(directory, None)
    office = PostOffice(config, LoadedDice(seed=3))
    anna, ben = Player(office, ANNA, "Anna"), Player(office, BEN, "Ben")
    finished = invite_and_accept(office, anna, ben, f"invite {BEN}")
    play_to_end(office, (anna, ben), finished)
    running = invite_and_accept(office, anna, ben, f"invite {BEN} match 5")
    for _ in range(12):
        play_turn(office, (anna, ben), running)
    engine = office.engine
    match_table = table_of(MatchRecord)
    templates = Templates(
        finished=rows(engine, MatchRecord, match_table.c.id == finished)[0],
        running=rows(engine, MatchRecord, match_table.c.id == running)[0],
        seats_finished=rows(engine, Seat, table_of(Seat).c.match_id == finished),
        seats_running=rows(engine, Seat, table_of(Seat).c.match_id == running),
        finished_game=rows(engine, FinishedGame, table_of(FinishedGame).c.match_id == finished)[0],
        inbound=max(rows(engine, InboundMail), key=lambda row: len(row["raw"])),
        outbound=max(rows(engine, OutboundMail), key=lambda row: len(row["raw"])),
    )
    engine.dispose()
    return templates


def play_turn(office: PostOffice, players: tuple[Player, Player], match_id: int) -> Timing:
    """The player to act answers their last mail as a player would; returns the time from
    delivering that mail to its answers in the outbox."""
    found = next_answer(office, players, match_id)
    assert found is not None, f"the probe match ended, or its last mail asks nothing:\n{text_of(players[0].last)}"
    player, last, command = found
    return timed(lambda: player.reply(command, to=last))


class Timing(NamedTuple):
    wall: float
    cpu: float
    """Seconds of this process's CPU, all its threads (the service runs in it): what the work
    cost, however busy the machine was with other work."""


def timed(work: Callable[[], object]) -> Timing:
    start, cpu = time.perf_counter(), time.process_time()
    work()
    return Timing(time.perf_counter() - start, time.process_time() - cpu)


# -- 2. the big database ---------------------------------------------------------------------


def token(number: int) -> str:
    """A unique game token of the service's alphabet ([a-z2-7]{26})."""
    return base64.b32encode(number.to_bytes(16, "big")).decode().lower()[:26]


def chunks(items: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def insert(engine: Engine, model: type[SQLModel], items: Iterator[dict[str, Any]]) -> int:
    count = 0
    table = table_of(model)
    for chunk in chunks(items):
        with engine.begin() as connection:
            connection.execute(table.insert(), chunk)
        count += len(chunk)
    return count


def build_big(engine: Engine, templates: Templates, finished: int, running: int, mails: int, seed: int) -> None:
    """Fill a fresh schema with ``finished`` + ``running`` matches (ids 1…), as described above."""
    rng = random.Random(seed)
    now = utc_now()
    players = max(10, (finished + running) // 5)
    anna_id, ben_id = players + 1, players + 2

    def player_rows() -> Iterator[dict[str, Any]]:
        for number in range(1, players + 3):
            address = {anna_id: ANNA, ben_id: BEN}.get(number, f"player{number}@example.net")
            rated = rng.random() < 0.8 or number in (anna_id, ben_id)
            yield {"id": number, "version": 1, "address": address, "name": address.split("@")[0].title(),
                   "language": None if number in (anna_id, ben_id) else rng.choice([None, "de", "en"]),
                   "numbering": "own", "refuses_invitations": False,
                   "created_at": now - timedelta(days=rng.uniform(30, 1500)),
                   "rating_match": rng.gauss(1500, 120) if rated else 1500.0,
                   "experience_match": rng.randint(1, 400) if rated else 0,
                   "rating_casual": rng.gauss(1500, 100) if rated else 1500.0,
                   "experience_casual": rng.randint(1, 200) if rated else 0,
                   "vacation_until": None, "vacation_days": {}}

    def opponents(number: int) -> tuple[int, int]:
        if number <= PROBE_HISTORY:  # Anna's history
            return (anna_id, rng.randint(1, players)) if number % 2 else (rng.randint(1, players), anna_id)
        first = rng.randint(1, players)
        return first, (first + rng.randint(1, players - 1) - 1) % players + 1

    seated = [opponents(number) for number in range(1, finished + running + 1)]
    created = sorted(now - timedelta(days=rng.uniform(3, 1500)) for _ in range(finished)) + sorted(
        now - timedelta(days=rng.uniform(0, 3)) for _ in range(running))

    def match_rows() -> Iterator[dict[str, Any]]:
        for number in range(1, finished + running + 1):
            done = number <= finished
            row = dict(templates.finished if done else templates.running)
            row.update(id=number, version=1, created_at=created[number - 1], rematch_of=None)
            if done:
                row.update(updated_at=created[number - 1] + timedelta(days=2),
                           finished_at=created[number - 1] + timedelta(days=2))
            else:
                started = now - timedelta(hours=rng.uniform(0, 42))
                row.update(updated_at=started, clock_started_at=started, alarms_given=0,
                           deadline_at=started + timedelta(days=2))  # the move reminder, 6 h from now or later
            yield row

    def seat_rows() -> Iterator[dict[str, Any]]:
        for number in range(1, finished + running + 1):
            for seat in (templates.seats_finished if number <= finished else templates.seats_running):
                yield {**seat, "match_id": number, "player_id": seated[number - 1][seat["number"]],
                       "token": token(2 * number + seat["number"])}

    def finished_game_rows() -> Iterator[dict[str, Any]]:
        for number in range(1, finished + 1):
            yield {**templates.finished_game, "id": number, "match_id": number,
                   "finished_at": created[number - 1] + timedelta(days=2)}

    def mail_rows(template: dict[str, Any], direction: str) -> Iterator[dict[str, Any]]:
        """As after the retention job: a finished match keeps its incoming mails' rows without
        their text, and no answers; a running one keeps its mails whole (here the last of each)."""
        identity = 0
        for number in range(1, finished + running + 1):
            done = number <= finished
            for each in range((mails if direction == "in" else 0) if done else 1):
                identity += 1
                row = {**template, "id": identity, "match_id": number,
                       "message_id": f"<{direction}.{number}.{each}@bench.example.net>"}
                if "bounce_tag" in template:  # unique, as each mail's own envelope sender is
                    row["bounce_tag"] = f"{direction}{number}x{each}"
                if done:
                    row.update(raw=b"", sender="", subject="", reason="", pruned_at=now,
                               received_at=created[number - 1] + timedelta(days=1),
                               processed_at=created[number - 1] + timedelta(days=1))
                yield row

    started = time.perf_counter()
    counts = {
        "players": insert(engine, PlayerRow, player_rows()),
        "matches": insert(engine, MatchRecord, match_rows()),
        "seats": insert(engine, Seat, seat_rows()),
        "finished games": insert(engine, FinishedGame, finished_game_rows()),
        "inbound mails": insert(engine, InboundMail, mail_rows(templates.inbound, "in")),
        "outbound mails": insert(engine, OutboundMail, mail_rows(templates.outbound, "out")),
    }
    with engine.begin() as connection:
        count_rating_bands(connection)
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            for name in ("players", "matches", "finished_games", "inbound_mail", "outbound_mail"):
                connection.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                                        f"(SELECT max(id) FROM {name}))"))
            connection.execute(text("ANALYZE"))  # as autovacuum would soon after a load this size
    print(f"  built in {time.perf_counter() - started:.0f} s: "
          + ", ".join(f"{count:,} {name}" for name, count in counts.items()))


def reset(engine: Engine) -> None:
    """Drop pbem's tables (and Alembic's mark) from a database the bench fills, then a fresh schema."""
    import_model_modules()
    SQLModel.metadata.drop_all(engine)
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    create_schema(engine)


# -- 3. the probe ----------------------------------------------------------------------------


@dataclass
class Probe:
    office: PostOffice
    players: tuple[Player, Player]
    match_id: int
    times: dict[str, list[Timing]] = field(default_factory=dict)


def start_probe(config: Config) -> Probe:
    """Anna invites Ben to a 7-point match, which Ben accepts."""
    office = PostOffice(config, LoadedDice(seed=7, script=[(3, 1)]))
    anna, ben = Player(office, ANNA, "Anna"), Player(office, BEN, "Ben")
    return Probe(office, (anna, ben), invite_and_accept(office, anna, ben, f"invite {BEN} match 7"))


MEASURES: dict[str, Callable[[Probe], Timing]] = {
    "move mail": lambda probe: play_turn(probe.office, probe.players, probe.match_id),
    "games mail": lambda probe: timed(lambda: probe.players[0].write("games")),
    "ratings mail": lambda probe: timed(lambda: probe.players[0].write("ratings")),
    "clock job": lambda probe: clock_reminder(probe.office, probe.match_id),
    "clock job, nothing due": lambda probe: timed(lambda: check_clocks(probe.office.engine, probe.office.config,
                                                                       utc_now())),
    "retention, nothing due": lambda probe: timed(lambda: prune_mail(
        probe.office.engine, utc_now(), timedelta(days=probe.office.config.database.retention_days))),
}


def measure(probes: list[Probe], samples: int) -> None:
    """Every measure ``samples`` times on each probe in turn, first one, then the other first,
    so that the other work on the machine weighs on both alike."""
    for name, work in MEASURES.items():
        for sample in range(samples):
            for each in probes if sample % 2 == 0 else probes[::-1]:
                each.times.setdefault(name, []).append(work(each))


def clock_reminder(office: PostOffice, match_id: int) -> Timing:
    """The clock job's run in which the probe match's move reminder is due (its clock turned
    back 2 days 1 hour); the reminder is then sent, untimed."""
    now = utc_now()
    with office.engine.begin() as connection:
        connection.execute(update(table_of(MatchRecord)).where(table_of(MatchRecord).c.id == match_id)
                           .values(clock_started_at=now - timedelta(days=2, hours=1), alarms_given=0,
                                   deadline_at=now - timedelta(hours=1)))
    due: list[int] = []
    timing = timed(lambda: due.append(check_clocks(office.engine, office.config, now)))
    assert due == [1], f"{due} matches had an alarm due"
    office.file(office.run())
    return timing


# -- 4. pbem games and 5. the daemon ---------------------------------------------------------


def pbem_command() -> list[str]:
    script = Path(sys.executable).parent / "pbem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pbem.cli"]


def time_pbem_games(config: Config, finished: int) -> list[tuple[str, float, int]]:
    """``pbem games`` with some options, each a process of its own: (options, seconds, lines)."""
    results = []
    for options in ([], ["--status", "running"], ["--status", "finished", "--limit", "100"], ["--player", ANNA],
                    ["--before", str(finished // 2)], ["--player", "player7@example.net", "--status", "finished"]):
        start = time.perf_counter()
        done = subprocess.run([*pbem_command(), "games", "--config", str(config.source), *options],
                              capture_output=True, text=True, check=True)
        results.append((" ".join(options) or "(first page)", time.perf_counter() - start,
                        len(done.stdout.splitlines())))
    return results


def time_games_query(config: Config, finished: int) -> list[tuple[str, float]]:
    """The query and rows of ``pbem games`` alone, in this process: (options, seconds)."""
    engine = make_engine(config.database.url)
    results = []
    try:
        for name, wanted in (("(first page)", GamesWanted()), ("--status running", GamesWanted(MatchStatus.RUNNING)),
                             ("--player " + ANNA, GamesWanted(player=ANNA)),
                             (f"--before {finished // 2}", GamesWanted(before=finished // 2))):
            with Session(engine) as session:
                results.append((name, timed(lambda: games_rows(session, config, wanted)).wall))
    finally:
        engine.dispose()
    return results


def daemon_memory(config: Config, result: Probe) -> tuple[dict[str, int], list[dict[str, int]], float]:
    """Run ``pbem serve`` on the database until it has answered a move, a games and a ratings
    mail; its memory and its workers', and the seconds that took."""
    office = result.office
    office.engine.dispose()
    outbox, failed = config.outbox_dir / "new", config.inbox_dir / ".pbem.failed"

    def shunted() -> int:
        return sum(1 for path in failed.rglob("*") if path.is_file())

    before, shunted_before = len(list(outbox.iterdir())), shunted()
    found = next_answer(office, result.players, result.match_id)
    assert found is not None
    player, last, command = found
    office.engine.dispose()
    with serving(config) as (daemon,):
        start = time.perf_counter()
        for message in (compose_reply(player.sender, last, command),
                        compose_mail(result.players[0].sender, config.service.address, "pbem", "games"),
                        compose_mail(result.players[0].sender, config.service.address, "pbem", "ratings")):
            deliver_to_maildir(config.inbox_dir, message)
        while len(list(outbox.iterdir())) < before + 3:  # the opponent told of the move (no copy), the lists
            problem = ("ended" if daemon.poll() is not None else "shunted a mail" if shunted() > shunted_before
                       else "did not answer in 5 minutes" if time.perf_counter() - start > 300 else None)
            if problem:
                raise RuntimeError(f"pbem serve {problem}; its log:\n{log_of(config).read_text()[-3000:]}")
            time.sleep(0.2)
        answered = time.perf_counter() - start
        time.sleep(3)  # the clock job and the review job have run once
        return memory_kb(daemon.pid), [memory_kb(child) for child in children(daemon.pid)], answered


# -- 6. storage per finished game -----------------------------------------------------------


SIZES = {
    "sqlite": "SELECT schema.tbl_name, stat.name, sum(stat.pgsize) FROM dbstat AS stat "
              "JOIN sqlite_schema AS schema ON schema.name = stat.name GROUP BY stat.name",
    "postgresql": "SELECT coalesce(tables.relname, class.relname), class.relname, "
                  "pg_total_relation_size(class.oid) - (CASE WHEN class.relkind = 'r' "
                  "THEN pg_indexes_size(class.oid) ELSE 0 END) "
                  "FROM pg_class AS class JOIN pg_namespace AS space ON space.oid = class.relnamespace "
                  "LEFT JOIN pg_index AS ix ON ix.indexrelid = class.oid "
                  "LEFT JOIN pg_class AS tables ON tables.oid = ix.indrelid "
                  "WHERE space.nspname = 'public' AND class.relkind IN ('r', 'i')",
}
"""(table, table or index, bytes) of everything the database keeps: SQLite's pages per b-tree,
PostgreSQL's relations with their TOAST (a table's own size leaves its indexes out)."""


def stored_sizes(engine: Engine) -> dict[tuple[str, str], int]:
    """The bytes of each table and index, compacted first (VACUUM; VACUUM FULL on PostgreSQL)
    so that pages freed by deletes do not count."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql("VACUUM FULL" if engine.dialect.name == "postgresql" else "VACUUM")
        return {(table, name): int(size) for table, name, size in
                connection.exec_driver_sql(SIZES[engine.dialect.name])}


@dataclass
class Storage:
    games: int
    mails: tuple[int, int]
    """Incoming and outgoing mails of those games."""
    base: dict[tuple[str, str], int]
    before: dict[tuple[str, str], int]
    after: dict[tuple[str, str], int]

    def per_game(self, sizes: dict[tuple[str, str], int], key: tuple[str, str] | None = None) -> float:
        """Bytes beyond the base, per finished game (of one object, or all)."""
        keys = [key] if key else sizes
        return sum(sizes.get(each, 0) - self.base.get(each, 0) for each in keys) / self.games


def measure_storage(directory: Path, url: str | None, games: int) -> Storage:
    """Single games played whole between two players (their reviews mailed), and the retention job
    run as it runs ``retention_days`` after their end: first one game, the base, then ``games``
    more, whose bytes are those they add to the base (so the first pages that every table and
    index takes once, and the players' rows, do not count as the games')."""
    shutil.rmtree(directory, ignore_errors=True)
    config = configure(directory, url, invitations_per_day=games + 1,
                          invitations_received_per_day=games + 1)  # every invitation in one day
    office = PostOffice(config, LoadedDice(seed=11))
    anna, ben = Player(office, ANNA, "Anna"), Player(office, BEN, "Ben")
    retention = timedelta(days=config.database.retention_days)

    def play(count: int) -> tuple[int, int]:
        """Play ``count`` games; the incoming and outgoing mails stored then."""
        for _ in range(count):
            play_to_end(office, (anna, ben), invite_and_accept(office, anna, ben, f"invite {BEN}"))
        office.review()
        with office.engine.connect() as connection:
            return (connection.execute(select(func.count()).select_from(table_of(InboundMail))).scalar_one(),
                    connection.execute(select(func.count()).select_from(table_of(OutboundMail))).scalar_one())

    def prune() -> None:
        prune_mail(office.engine, utc_now() + retention + timedelta(hours=1), retention)

    play(1)
    prune()
    base = stored_sizes(office.engine)
    with office.engine.connect() as connection:
        kept = connection.execute(select(func.count()).select_from(table_of(InboundMail))).scalar_one()
    stored = play(games)
    before = stored_sizes(office.engine)
    prune()
    after = stored_sizes(office.engine)
    office.engine.dispose()
    return Storage(games, (stored[0] - kept, stored[1]), base, before, after)


def print_storage(storage: Storage, dialect: str) -> None:
    print(f"\nstorage per finished game on {dialect}: {storage.games} single games played whole "
          f"({storage.mails[0] / storage.games:.0f} incoming and {storage.mails[1] / storage.games:.0f} outgoing mails "
          "each), then retention (goal: at most 50 KB after it)")
    print(f"  {'table and its indexes':44}{'before':>12}{'after':>10}   (bytes added to a database of one pruned "
          "game, per game)")
    tables = sorted({table for table, _ in storage.after} | {table for table, _ in storage.before})
    for table in sorted(tables, key=lambda name: -sum(storage.per_game(storage.after, key) for key in storage.after
                                                       if key[0] == name)):
        objects = sorted(key for key in {*storage.before, *storage.after} if key[0] == table)
        before = sum(storage.per_game(storage.before, key) for key in objects)
        after = sum(storage.per_game(storage.after, key) for key in objects)
        if round(before) == round(after) == 0:
            continue
        print(f"  {table:44}{before:12,.0f}{after:10,.0f}")
        for key in objects:
            if key[1] != table and round(storage.per_game(storage.after, key)):
                print(f"    {key[1]:42}{storage.per_game(storage.before, key):12,.0f}"
                      f"{storage.per_game(storage.after, key):10,.0f}")
    print(f"  {'all':44}{storage.per_game(storage.before):12,.0f}{storage.per_game(storage.after):10,.0f}"
          f"   = {storage.per_game(storage.after) / 1000:.1f} KB per game after retention")


# -- running it ------------------------------------------------------------------------------


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--finished", type=int, default=100_000, help="finished games (default 100,000)")
    parser.add_argument("--running", type=int, default=10_000, help="running games (default 10,000)")
    parser.add_argument("--mails", type=int, default=4, help="incoming mail rows per finished game (default 4)")
    parser.add_argument("--samples", type=int, default=15, help="timings per figure (default 15)")
    parser.add_argument("--storage-games", type=int, default=10,
                        help="single games played whole for the bytes kept per finished game (default 10)")
    parser.add_argument("--storage-only", action="store_true",
                        help="only the bytes kept per finished game, not the big database")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url", help="the big database, one of your own: pbem's tables in it are "
                                               "dropped, then filled (with --empty-database-url)")
    parser.add_argument("--empty-database-url", help="another of yours, for the empty database")
    parser.add_argument("--postgresql", action="store_true",
                        help="both on a private PostgreSQL server, as the tests start it")
    parser.add_argument("--workdir", type=Path, help="keep the work (and on SQLite the big database) here")
    parser.add_argument("--small", action="store_true",
                        help="a quick run that only shows the bench works (CI): 200 finished and 20 running games, "
                        "2 samples")
    args = parser.parse_args()
    if args.small:
        args.finished, args.running, args.samples, args.storage_games = 200, 20, 2, 1
    if bool(args.database_url) != bool(args.empty_database_url) or (args.database_url and args.postgresql):
        parser.error("--database-url and --empty-database-url go together, and not with --postgresql")

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="pbem-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        with ExitStack() as stack:
            server = stack.enter_context(postgresql()) if args.postgresql else None
            if args.storage_only:
                run_storage(args, workdir, server)
            else:
                run(args, workdir, server)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


def run(args: argparse.Namespace, workdir: Path, server: PostgresServer | None) -> None:
    print(f"scale bench: {args.finished:,} finished and {args.running:,} running games, "
          f"{args.samples} samples per figure, work in {workdir}")
    started = time.perf_counter()
    templates = play_templates(workdir / "templates")
    print(f"  documents from a game played through the service in {time.perf_counter() - started:.0f} s "
          f"(match row {len(str(templates.finished['game']))} chars of game, "
          f"outbound mail {len(templates.outbound['raw']):,} bytes)")

    def url(name: str) -> str | None:
        if server is not None:
            return str(server.new_database())
        return args.empty_database_url if name == "empty" else args.database_url

    shutil.rmtree(workdir / "empty", ignore_errors=True)
    empty_config = configure(workdir / "empty", url("empty"))
    engine = make_engine(empty_config.database.url)
    reset(engine)
    engine.dispose()
    empty = start_probe(empty_config)

    big_url = url("big")
    big_dir = workdir / "big"
    built = workdir / f"big-{args.finished}-{args.running}-{args.mails}-{args.seed}.db"
    if big_dir.exists():
        shutil.rmtree(big_dir)
    big_config = configure(big_dir, big_url)
    engine = make_engine(big_config.database.url)
    sqlite_file = Path(engine.url.database or "") if engine.dialect.name == "sqlite" else None
    if sqlite_file is not None and built.exists():
        engine.dispose()
        shutil.copyfile(built, sqlite_file)
        started = time.perf_counter()
        before, now = upgrade_schema(engine)
        engine.dispose()
        upgraded = f", upgraded from revision {before} to {now} in {time.perf_counter() - started:.0f} s"
        print(f"  big database copied from {built}" + (upgraded if before != now else ""))
    else:
        reset(engine)
        build_big(engine, templates, args.finished, args.running, args.mails, args.seed)
        engine.dispose()
        if sqlite_file is not None:
            shutil.copyfile(sqlite_file, built)
    if sqlite_file is not None:
        print(f"  SQLite file: {sqlite_file.stat().st_size / 1e6:,.0f} MB")
    big = start_probe(big_config)
    measure([empty, big], args.samples)
    empty.office.engine.dispose()
    big.office.engine.dispose()

    print(f"\n{'':24}{'empty':>10}{'big':>10}{'ratio':>8}{'CPU: empty':>14}{'big':>10}{'ratio':>8}"
          "   (medians; goal: ratio at most 1.2)")
    for name in empty.times:
        small_ms, big_ms = (median_ms([each.wall for each in probe.times[name]]) for probe in (empty, big))
        small_cpu, big_cpu = (median_ms([each.cpu for each in probe.times[name]]) for probe in (empty, big))
        print(f"  {name:22}{small_ms:8.1f}ms{big_ms:8.1f}ms{big_ms / small_ms:8.2f}"
              f"{small_cpu:12.1f}ms{big_cpu:8.1f}ms{big_cpu / max(small_cpu, 1e-3):8.2f}")

    print("\npbem games (a new process each; goal: at most 1 s)")
    for options, seconds, lines in time_pbem_games(big_config, args.finished):
        print(f"  {options:50}{seconds:6.2f} s  {lines} lines")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import pbem.cli.loading, pbem.service.pages.reports"], check=True)
    print(f"  of which starting Python and importing what it needs: {time.perf_counter() - started:.2f} s; "
          "the query and its rows alone:")
    for options, seconds in time_games_query(big_config, args.finished):
        print(f"  {options:50}{seconds * 1000:6.1f} ms")

    memory, workers, answered = daemon_memory(big_config, big)
    print(f"\npbem serve on the big database (goal: at most 200 MB): answered a move, games and ratings "
          f"in {answered:.1f} s from its start")
    print(f"  daemon: VmRSS {memory['VmRSS'] / 1024:.0f} MB, peak VmHWM {memory['VmHWM'] / 1024:.0f} MB")
    for number, worker in enumerate(workers, start=1):
        print(f"  worker {number}: VmRSS {worker['VmRSS'] / 1024:.0f} MB, peak VmHWM {worker['VmHWM'] / 1024:.0f} MB")

    run_storage(args, workdir, server)


def run_storage(args: argparse.Namespace, workdir: Path, server: PostgresServer | None) -> None:
    url = str(server.new_database()) if server is not None else args.empty_database_url
    if url is not None:
        engine = make_engine(url)
        reset(engine)
        engine.dispose()
    storage = measure_storage(workdir / "storage", url, args.storage_games)
    print_storage(storage, "PostgreSQL" if url else "SQLite")


if __name__ == "__main__":
    main()
