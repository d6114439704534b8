"""Where a move's CPU goes: the service applying a burst of moves by mail, sampled by py-spy.

    python bench/profile_bench.py [--moves 300] [--database postgresql] [--rate 250] [--small]

The profile is taken from outside, by py-spy (``py-spy record --format raw``), so that the
worker threads in which the pipeline applies each mail (``asyncio.to_thread``) and records each
answer count as well as the main thread; an in-process cProfile sees the main thread only.
The process plays whole single games by scripted mail through the real pipeline (the tests'
post office: Maildir in and out, the mail service, SQLite, or a private PostgreSQL with
``--database postgresql``), pairs of players answering each mail as a simple player does, until
``--moves`` mails have been applied.  Its own scripted players' work (reading the answers,
choosing the moves) is counted apart, under "the scripted players".

Printed: the samples of the service's work by part (the database's Python side, the board
picture, composing mails, templates, reading mails, the rules, the rest), and the 15 functions
with the most samples of their own (self time), and the 40 functions of pbem with the most samples in
all (their callees included: where the time of a move is spent in our own terms), as milliseconds
of CPU per move.  ``--small``:
40 moves, for CI.  issue 23 names the goal: at most 15 ms of the daemon's CPU per move.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from email.message import EmailMessage
from pathlib import Path

from rig import cpu_seconds, pair_up, postgresql, py_spy, scratch, scratch_office, start_match

PARTS = (
    ("the scripted players", ("post_office.py", "local_client.py", "bench/profile_bench.py", "bench/rig.py")),
    ("database (SQLAlchemy, psycopg, sqlite3)", ("sqlalchemy/", "sqlmodel/", "psycopg/", "sqlite3/", "alembic/")),
    ("board picture (Pillow)", ("render/board_image.py", "PIL/")),
    ("composing mails (email)", ("mail/composing.py", "email/generator.py", "email/message.py", "email/_header",
                                 "email/contentmanager.py", "email/headerregistry.py", "email/_policybase.py",
                                 "email/policy.py", "email/quoprimime.py", "email/base64mime.py", "email/charset.py")),
    ("templates (Jinja2)", ("jinja2/", "render/templating.py")),
    ("reading mails (parsing, quotes)", ("mail/reading.py", "mail/headers.py", "mail/replies.py",
                                         "mail/html_text.py", "email/feedparser.py", "email/parser.py",
                                         "mailparser_reply", "inscriptis", "lxml")),
    ("rules core", ("pbem/rules/",)),
    ("Maildir in and out", ("mail/sources.py", "mail/sinks.py", "mailbox.py")),
)
TOP_FUNCTIONS = 15
IDLE_LEAVES = ("_worker (concurrent/futures/thread.py:81)",)
"""A worker thread of asyncio.to_thread waiting for work in ``work_queue.get`` (py-spy counts it
as running)."""
TOP_OWN_FUNCTIONS = 40


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=300)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--rate", type=int, default=250, help="py-spy's samples per second")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--small", action="store_true", help="40 moves, for CI")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.small:
        options.moves = 40
    if options.child:
        play(options)
        return
    with scratch() as directory:
        raw, figures = directory / "profile.txt", directory / "figures.txt"
        command = [sys.executable, __file__, "--child", "--moves", str(options.moves), "--database", options.database,
                   "--seed", str(options.seed)]
        spy = [*py_spy(options.rate, raw), "--"]
        environment = {**os.environ, "PBEM_PROFILE_FIGURES": str(figures)}
        finished = subprocess.run([*spy, *command], capture_output=True, text=True, env=environment)
        if finished.returncode != 0 or not raw.exists():
            sys.exit(f"py-spy failed ({finished.returncode}):\n{finished.stderr[-2000:]}")
        moves, cpu_ms, statements, transactions = (float(value) for value in figures.read_text(encoding="utf-8").split())
        report(raw.read_text(encoding="utf-8"), int(moves), cpu_ms, options)
        print(f"database: {statements / moves:.1f} statements and {transactions / moves:.1f} transactions per mail "
              "applied, sending its answers included (issue 23's goal: one transaction for the mail, one per "
              "answer sent)")


def report(collapsed: str, moves: int, cpu_ms: float, options: argparse.Namespace) -> None:
    """The samples by part and the busiest functions, as CPU ms per move."""
    by_part: collections.Counter[str] = collections.Counter()
    by_function: collections.Counter[str] = collections.Counter()
    by_own_function: collections.Counter[str] = collections.Counter()
    total = 0
    for line in collapsed.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        if frames[-1].startswith(("thread (", "process ")) or frames[-1].startswith(IDLE_LEAVES) or any(
                "(idle)" in frame or "select.py" in frame or "selectors.py" in frame for frame in frames[-2:]):
            continue  # waiting, not working (a thread with no Python frame on top is waiting too)
        total += count
        by_part[_part(frames)] += count
        by_function[_function(frames[-1])] += count
        for name in {_function(frame) for frame in frames if "pbem/" in frame and "bench/" not in frame}:
            by_own_function[name] += count
    per_sample = cpu_ms / moves / total if total else 0.0
    service = total - by_part["the scripted players"]
    print(f"profile of {moves} moves by mail ({options.database}, py-spy at {options.rate} Hz, worker threads "
          f"included): {cpu_ms / moves:.1f} ms CPU per move in all, {service * per_sample:.1f} ms the service's")
    for name, count in by_part.most_common():
        print(f"  {name:44} {count * per_sample:6.2f} ms/move  ({100 * count / total:4.1f}%)")
    print(f"the {TOP_FUNCTIONS} functions with the most time of their own:")
    for name, count in by_function.most_common(TOP_FUNCTIONS):
        print(f"  {count * per_sample:6.2f} ms/move  {name}")
    print(f"the {TOP_OWN_FUNCTIONS} functions of pbem with the most time in all (their callees included):")
    for name, count in by_own_function.most_common(TOP_OWN_FUNCTIONS):
        print(f"  {count * per_sample:6.2f} ms/move  {name}")


def _part(frames: list[str]) -> str:
    """The part a sample's work belongs to: the innermost frame that names one."""
    for frame in reversed(frames):
        for name, markers in PARTS:
            if any(marker in frame for marker in markers):
                return name
    return "the rest of the service (Python)"


def _function(frame: str) -> str:
    """``function (file:line)`` → ``function (…/package/file)``, the line left out."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    return f"{name} ({'/'.join(Path(path).parts[-2:])})"


def play(options: argparse.Namespace) -> None:
    """The child: whole single games by mail until ``--moves`` mails were applied."""
    from post_office import play_turn  # noqa: PLC0415  (tests/service: the rig puts it on the path)
    from sqlalchemy import event  # noqa: PLC0415

    from pbem.store.game_records import MatchStatus  # noqa: PLC0415

    with ExitStack() as stack:
        directory = stack.enter_context(scratch())
        database = stack.enter_context(postgresql()).new_database() if options.database == "postgresql" else None
        office = scratch_office(directory, options.seed, database)

        def run() -> list[EmailMessage]:
            """What `pbem serve` does for each mail: apply it, then send its answers (the rest of
            the outbox is its outbox job's, every 5 seconds; the post office flushes it per mail)."""
            asyncio.run(office.pipeline.read_inbox())
            asyncio.run(office.pipeline.send_own_answers())
            return office.collect()

        office.run = run  # type: ignore[method-assign]
        counts = collections.Counter[str]()

        def count(what: str) -> None:
            """The pipeline works in worker threads (asyncio.to_thread); the scripted players
            read the database in the main thread, which is not counted."""
            if threading.current_thread() is not threading.main_thread():
                counts[what] += 1

        event.listen(office.engine, "before_cursor_execute", lambda *_: count("statements"))
        event.listen(office.engine, "commit", lambda *_: count("transactions"))
        applied, number = 0, 0
        started, wall = cpu_seconds(), time.perf_counter()
        while applied < options.moves:
            number += 1
            (players,) = pair_up(office, 1, first=number)
            match_id = start_match(office, players)
            applied += 3
            while applied < options.moves and office.table(match_id).status is MatchStatus.RUNNING:
                play_turn(office, players, match_id)
                applied += 1
        cpu_ms = (cpu_seconds() - started) * 1000
        print(f"{applied} mails applied in {time.perf_counter() - wall:.1f} s", file=sys.stderr)
        Path(os.environ["PBEM_PROFILE_FIGURES"]).write_text(
            f"{applied} {cpu_ms} {counts['statements']} {counts['transactions']}", encoding="utf-8")


if __name__ == "__main__":
    main()
