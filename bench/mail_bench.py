"""How fast the whole mail pipeline is against a local Dovecot and aiosmtpd, next to a bare client.

    python bench/mail_bench.py [--games 10] [--rounds 4] [--latency-moves 20] [--seed 1]
                               [--reviews 10] [--reviews-in-thread] [--database postgresql]
                               [--whole-games 10] [--profile] [--daemon-core N] [--small]

Needs Dovecot (`apt-get install dovecot-imapd`); the servers are the tests' own, started by the
benches' rig (bench/rig.py) privately on loopback ports.

- pipeline (one daemon): `--games` games are running; in each round the player to act in every
  game mails a move at once (roll, take or a move, as a player would answer). A round is timed
  from its first delivery to its last answer accepted by the SMTP server: IMAP IDLE → fetch →
  the game service applies the move in one transaction → commit → move to pbem/done → the
  answers (usually two) sent by SMTP. The figure is moves per second over the rounds (the
  players' own work between rounds, reading the answers and choosing the next moves, is not
  counted).
- bare client: the same rounds with aioimaplib and aiosmtplib and no service: the same mails
  delivered one after another, IDLE until the server reports them (as the daemon learns of
  mail), NOOP + UID SEARCH, UID FETCH and UID MOVE each, two mails sent by SMTP each; then the
  ratio pipeline / bare client (goal: at least 0.5). For comparison, also the bare client as it
  was measured before: every mail delivered first, then NOOP instead of IDLE (no IDLE wait).
- latency: one move at a time, from its delivery (the APPEND) to its answer accepted by the
  SMTP server, with IDLE on: p50 and p95.
- latency while reviews run: the same, one move after another in one game for as long as the
  daemon's review job works through `--reviews` queued reviews of finished games (the whole games of
  tests/data/review_games.json, in turn) at the configured plies, in its worker process as
  `pbem serve` runs it (`--reviews-in-thread`: in a thread of the daemon's process instead, to
  show what the GIL, which bgsage holds while it evaluates, would do to the mail).
- `--database postgresql`: on a private PostgreSQL server (tests/postgres_server.py), the same
  rounds served first by one, then by two `pbem serve` processes on one database and one
  mailbox (a fresh database and mailbox each); prints both rates, the ratio two / one (goal: at
  least 1.6), and counts the answers: any sent twice (one Message-ID twice, or a mail answered
  twice) is reported as a duplicate. It also prints the CPU time the rounds cost per move, as the
  kernel counts it (/proc): the daemons', PostgreSQL's, Dovecot's, this process's (the SMTP
  server and the players) and the whole machine's; and from that what the machine allows two
  daemons at most: every round waits once for Dovecot's IDLE notice, and the rest cannot go faster
  than all cores busy with the CPU the moves need.

- whole games (the CPU per mail of issue 23, on either database): `--whole-games` single games
  played to the end by one daemon with the default settings, as /proc counts its process
  (`--profile`: sampled by py-spy beside it). `--daemon-core N` pins the daemon to core N alone
  and this bench, Dovecot and PostgreSQL to the other cores: on the 2-core development machine
  the daemon otherwise shares both cores with them, which costs it 1 to 2 ms a mail.

Dovecot reports new mail to an IDLE session about half a second after it arrives, so that is
the floor of the latency, and of every round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from pathlib import Path

import aiosmtplib
from aioimaplib import aioimaplib
from rig import (ROOT, SERVICE, CpuMeter, LivePostOffice, LoadedDice, Player, PostgresServer, directory_of, live_office,
                 log_of, next_answer, pair_up, percentile, postgresql, sampling, serving, start_match)
from sqlmodel import Session, select

from mail_servers import SMTP_POLICY, Dovecot, Received, SmtpServer, crlf  # (tests/mail_server: the rig puts it on the path)
from pbem.config import Config
from pbem.periodic import PeriodicJob
from pbem.mail.local_client import compose_reply
from pbem.service.jobs.review_job import in_process, review_job, run_reviews
from pbem.store.game_records import ReviewJob
from pbem.store.mail_records import InboundMail

REVIEW_GAMES = ROOT / "tests" / "data" / "review_games.json"
MAX_MOVES_DURING_REVIEWS = 500
SETTLE_POLL_SECONDS = 0.05
"""How often the players look whether the round is over: rarely enough to leave the daemon the
CPU (rounds are timed by the SMTP server's clock, not by this poll)."""
CORES = os.cpu_count() or 1
PROFILE_RATE = 250
"""py-spy's samples per second with --profile."""
IDLE_NOTICE_SECONDS = 0.5
"""How long after a mail arrives Dovecot tells an IDLE session of it: every round waits this once."""


@dataclass
class Rounds:
    """Moves mailed in bursts: how many, and the seconds from each round's first delivery to its
    last answer accepted by the SMTP server, summed."""

    moves: int = 0
    seconds: float = 0.0
    mailed: set[str] = field(default_factory=set)
    """The Message-IDs of the moves mailed."""
    traffic: list[tuple[list[bytes], list[Received]]] = field(default_factory=list)
    """Per round, the moves mailed and the answers sent, as the servers had them: the bare
    client replays exactly these."""

    cpu: dict[str, float] = field(default_factory=dict)
    """CPU seconds spent during the rounds, per kind of process (see :class:`rig.CpuMeter`)."""

    @property
    def rate(self) -> float:
        return self.moves / self.seconds if self.seconds else float("nan")

    def cpu_ms_per_move(self, kind: str) -> float:
        return 1000 * self.cpu.get(kind, 0.0) / self.moves if self.moves else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="games played side by side (default 10)")
    parser.add_argument("--rounds", type=int, default=4, help="moves mailed in each game (default 4)")
    parser.add_argument("--latency-moves", type=int, default=20, help="moves timed one by one (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the dice (default 1)")
    parser.add_argument("--reviews", type=int, default=10, help="reviews queued; moves are timed one by one until "
                        "they are all mailed (default 10; 0: skip)")
    parser.add_argument("--reviews-in-thread", action="store_true",
                        help="compute the reviews in a thread of the daemon's process, not in its worker process")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite",
                        help="postgresql: one, then two `pbem serve` processes on a private PostgreSQL server")
    parser.add_argument("--whole-games", type=int, default=10,
                        help="single games played to the end by one `pbem serve` for the CPU per mail (default 10)")
    parser.add_argument("--profile", action="store_true",
                        help="sample the daemon with py-spy while it plays the whole games, and print where its CPU went")
    parser.add_argument("--daemon-core", type=int, metavar="N",
                        help="whole games with the daemon pinned to core N (taskset) and this bench, Dovecot and "
                        "PostgreSQL on the other cores: the daemon's figure without sharing its cores")
    parser.add_argument("--small", action="store_true",
                        help="a quick run that only shows the bench works (CI): 2 games, 1 round, 2 moves timed, "
                        "no reviews, the daemon of the whole games on a core of its own where there are two")
    args = parser.parse_args()
    if args.small:
        args.games, args.rounds, args.latency_moves, args.reviews, args.whole_games = 2, 1, 2, 0, 1
    cores = sorted(os.sched_getaffinity(0))
    if args.daemon_core is not None and (args.daemon_core not in cores or len(cores) < 2):
        parser.error(f"--daemon-core must be one of the cores {cores}, and another must be left")
    if args.small and args.database == "sqlite" and args.daemon_core is None and len(cores) >= 2:
        args.daemon_core = cores[-1]  # so that CI runs the pinning too
    if args.database == "postgresql":
        several_daemons(args.games, args.rounds)
        with postgresql() as server:
            whole_games(server.new_database(), args.whole_games, args.profile, args.small)
    else:
        one_daemon(args)
        whole_games(None, args.whole_games, args.profile, args.small, args.daemon_core)


def whole_games(database: str | None, games: int, profile: bool, small: bool = False,
                daemon_core: int | None = None) -> None:
    """The CPU a mail costs `pbem serve` with default settings: whole single games by mail
    (invitation, acceptance, every roll and move, the end with its review), as /proc counts the
    daemon's own process, its review worker apart; after one game played first, so that what a
    daemon does once (imports, templates, fonts) is not counted.  `small` (CI): two rounds of
    moves only, without the game played first or the reviews.  With `daemon_core`, the daemon
    runs on that core alone and this process, Dovecot and the rest on the other cores."""
    rounds = 2 if small else 10**6
    if daemon_core is not None:  # before the mail servers start: they inherit it
        os.sched_setaffinity(0, set(os.sched_getaffinity(0)) - {daemon_core})
    with live_office(database) as office:
        profiled = directory_of(office.config) / "profile.txt"
        with serving(office.config, 1, None if daemon_core is None else [daemon_core]) as daemons:
            meter = CpuMeter([daemon.pid for daemon in daemons])
            if not small:
                play_rounds(office, start_games(office, 1, terms=""), rounds)
                wait_for_reviews(office, 1)
            with sampling(daemons[0].pid, profiled if profile else None, PROFILE_RATE):
                before, mails_before = meter.read(), len(office.delivered_at)
                play_rounds(office, start_games(office, games, terms="", first=1), rounds)
                if not small:
                    wait_for_reviews(office, games + 1)
                spent = CpuMeter.spent(before, meter.read())
            mails = len(office.delivered_at) - mails_before
        kind = "PostgreSQL" if database else "SQLite (the default)"
        daemon_ms = 1000 * spent["daemons"] / mails
        placed = "" if daemon_core is None else f", on core {daemon_core} alone (taskset; the rest on the others)"
        print(f"whole games: {games} single games by mail on {kind}, {mails} player mails (invitations and "
              f"acceptances included), one `pbem serve` with default settings{placed}:")
        print(f"             the daemon's process {daemon_ms:.1f} ms CPU per mail applied (/proc; goal: at most 15), "
              f"{1000 / daemon_ms:.0f} mails per CPU-second; its review worker {1000 * spent['reviews'] / games:.0f} ms "
              f"CPU per game reviewed (plies of the defaults)")
        print(f"             the others per mail: PostgreSQL {1000 * spent['postgresql'] / mails:.1f} ms, Dovecot "
              f"{1000 * spent['dovecot'] / mails:.1f} ms, this process (SMTP server, players) "
              f"{1000 * spent['bench'] / mails:.1f} ms")
        if profile:
            from profile_bench import report  # noqa: PLC0415

            if keep := os.environ.get("PBEM_KEEP_PROFILE"):
                shutil.copy(profiled, keep)
            report(profiled.read_text(encoding="utf-8"), mails, 1000 * spent["daemons"],
                   argparse.Namespace(database="postgresql" if database else "sqlite", rate=PROFILE_RATE))


def wait_for_reviews(office: LivePostOffice, count: int, timeout: float = 600.0) -> None:
    """Until `count` reviews were mailed (the review job works every few seconds); the review
    mails are filed with their players."""
    deadline = time.monotonic() + timeout
    while reviews_done(office) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{reviews_done(office)} of {count} reviews mailed")
        time.sleep(0.2)
    office.settle()
    office.file(office.collect())


def one_daemon(args: argparse.Namespace) -> None:
    """The daemon in this process on SQLite, the latencies, and the bare client on the same servers."""
    with live_office(dice=LoadedDice(seed=args.seed)) as office:
        config, dovecot, smtp = office.config, office.dovecot, office.smtp
        office.jobs.append(reviewing(config, office, args.reviews_in_thread))
        pipeline, latencies, reviewed = office.run(
            lambda: play(office, args.games, args.rounds, args.latency_moves, args.reviews))
        service_ms = 1000 * statistics.mean(service_seconds(office))
        bare = asyncio.run(bare_client(dovecot, smtp, pipeline.traffic, idle=True))
        every_mail = ([move for moves, _ in pipeline.traffic for move in moves],
                      [answer for _, answers in pipeline.traffic for answer in answers])
        bare_at_once = asyncio.run(bare_client(dovecot, smtp, [every_mail], idle=False))
    print(f"pipeline:    {pipeline.moves} moves in {pipeline.seconds:.2f} s = {pipeline.rate:.1f} moves/s "
          f"(one daemon, SQLite; {args.games} games, {args.rounds} rounds, IDLE on)")
    print(f"latency:     delivery → answer sent, {len(latencies)} moves one by one: "
          f"p50 {percentile(latencies, 50) * 1000:.0f} ms, p95 {percentile(latencies, 95) * 1000:.0f} ms")
    if args.reviews:
        latencies, done, _ = reviewed
        where = "a thread of the daemon's process" if args.reviews_in_thread else "the review job's worker process"
        print(f"reviews:     delivery → answer sent, {len(latencies)} moves one by one while {args.reviews} reviews "
              f"of whole games (plies {config.assistant.plies}) were computed in {where} and mailed "
              f"({done} mailed by the last move): p50 {percentile(latencies, 50) * 1000:.0f} ms, "
              f"p95 {percentile(latencies, 95) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms")
    print(f"bare client: {bare.moves} moves' IMAP and SMTP operations in the same rounds (IDLE) in "
          f"{bare.seconds:.2f} s = {bare.rate:.1f} moves/s")
    print(f"ratio:       one daemon / bare client = {pipeline.rate / bare.rate:.2f}  (goal: at least 0.5)")
    print(f"             (the bare client with every mail delivered first and no IDLE wait: "
          f"{bare_at_once.rate:.1f} moves/s; ratio {pipeline.rate / bare_at_once.rate:.2f})")
    print(f"of which:    the game service (handle_mail, in its transaction) took {service_ms:.0f} ms per mail")


def several_daemons(games: int, rounds: int) -> None:
    """One, then two `pbem serve` processes on PostgreSQL: the rates, their ratio, and duplicates.

    Where the machine has a core for each daemon and two more, each daemon runs on a core of its
    own (``taskset``) and PostgreSQL, Dovecot and this bench on the others, so that the ratio
    shows how the daemons scale rather than how they share cores with everything else."""
    own_cores = sorted(os.sched_getaffinity(0))
    pinned = len(own_cores) >= 2 + 2
    if pinned:  # PostgreSQL and Dovecot are started by this process: they inherit the rest
        os.sched_setaffinity(0, own_cores[2:])
    try:
        with postgresql() as server:
            results = {daemons: daemons_on_postgresql(server, daemons, games, rounds,
                                                      own_cores[:daemons] if pinned else None)
                       for daemons in (1, 2)}
    finally:
        os.sched_setaffinity(0, own_cores)
    for daemons, (played, duplicates, shares) in results.items():
        print(f"{daemons} daemon{'s' if daemons > 1 else ' '}:   {played.moves} moves in {played.seconds:.2f} s = "
              f"{played.rate:.1f} moves/s (PostgreSQL, `pbem serve` processes; {games} games, {rounds} rounds); "
              f"duplicates: {duplicates or 'none'}")
        for number, counts in enumerate(shares):
            print(f"             daemon {number + 1} (whole run, with the invitations): "
                  + ", ".join(f"{counts[what]} {what}" for what in LOGGED)
                  + f"; {played.rate / daemons:.1f} moves/s on average per daemon")
        others = played.cpu["machine"] - played.cpu["daemons"]
        daemon_seconds = played.cpu["daemons"]
        print(f"             CPU per move while the rounds ran (/proc): the daemons {played.cpu_ms_per_move('daemons'):.0f} ms "
              f"({played.moves / daemon_seconds if daemon_seconds else float('nan'):.0f} moves per daemon CPU-second), "
              f"everything else {1000 * others / played.moves:.0f} ms (PostgreSQL "
              f"{played.cpu_ms_per_move('postgresql'):.0f}, Dovecot {played.cpu_ms_per_move('dovecot'):.0f}, "
              f"this process: SMTP server and players {played.cpu_ms_per_move('bench'):.0f}); "
              f"the machine busy {100 * played.cpu['machine'] / (played.seconds * CORES):.0f} % of {CORES} cores")
    one, two = results[1][0], results[2][0]
    print(f"ratio:       two daemons / one daemon = {two.rate / one.rate:.2f}  (goal: at least 1.6)")
    if pinned:
        print(f"             each daemon on a core of its own (taskset -c {own_cores[0]} and {own_cores[1]}); PostgreSQL, "
              f"Dovecot and this bench on cores {', '.join(map(str, own_cores[2:]))}")
        return
    per_move = two.cpu["machine"] / two.moves
    floor = rounds * IDLE_NOTICE_SECONDS + two.moves * per_move / CORES
    print(f"             not pinned: two daemons on cores of their own need 4 cores (one each, and the rest for "
          f"PostgreSQL, Dovecot and this bench); this machine has {len(own_cores)}, shared by all of them, so the "
          f"CPU caps the ratio: {two.moves} moves at {1000 * per_move:.0f} ms of CPU each on {CORES} cores, after "
          f"{rounds} IDLE notices of {IDLE_NOTICE_SECONDS} s, take at least {floor:.2f} s = {two.moves / floor:.1f} "
          f"moves/s, {two.moves / floor / one.rate:.2f} times one daemon")


def daemons_on_postgresql(server: PostgresServer, daemons: int, games: int, rounds: int,
                          cores: list[int] | None) -> tuple[Rounds, str, list[Counter[str]]]:
    with live_office(server.new_database()) as office:  # its schema made before the daemons start
        with serving(office.config, daemons, cores) as processes:
            played = play_rounds(office, start_games(office, games), rounds,
                                 CpuMeter([process.pid for process in processes]))
        shares = [log_counts(log_of(office.config, number)) for number in range(daemons)]
        return played, duplicates(office, played.mailed), shares


LOGGED = ("applied", "ignored", "changed meanwhile", "sent")
"""What a daemon's log says of each mail (pbem.daemon.pipeline), counted per daemon."""


def log_counts(log: Path) -> Counter[str]:
    """How many mails a daemon's log reports for each of LOGGED."""
    counts: Counter[str] = Counter()
    for line in log.read_text(errors="replace").splitlines():
        counts.update(what for what in LOGGED if f": {what}" in line or f"({what}" in line)
    return counts


def duplicates(office: LivePostOffice, mailed: set[str]) -> str:
    """What the SMTP server got twice: one Message-ID sent twice, or one of the `mailed` moves
    answered twice to one recipient."""
    received = [message_from_bytes(mail.raw) for mail in office.smtp.recorder.received]
    sent_twice = sum(count - 1 for count in Counter(str(mail["Message-ID"]) for mail in received).values())
    answers = Counter((str(mail["In-Reply-To"]), str(mail["To"])) for mail in received
                      if str(mail["In-Reply-To"]) in mailed)
    answered_twice = sum(count - 1 for count in answers.values())
    found = [f"{sent_twice} answers sent twice"] if sent_twice else []
    found += [f"{answered_twice} mails answered again"] if answered_twice else []
    return ", ".join(found)


def play(office: LivePostOffice, games: int, rounds: int, latency_moves: int,
         reviews: int) -> tuple[Rounds, list[float], tuple[list[float], int, int]]:
    """Runs in the worker thread while the daemon serves: set up, burst rounds, then one by one."""
    pairs = start_games(office, games)
    played = play_rounds(office, pairs, rounds)
    latencies = one_by_one(office, *pairs[0], latency_moves)
    if not reviews:
        return played, latencies, ([], 0, 0)
    queue_reviews(office, pairs[1][0], reviews)
    while not reviews_begun(office):  # the job runs every few seconds
        time.sleep(0.05)
    during: list[float] = []  # one move after another for as long as reviews are computed
    while reviews_done(office) < reviews and len(during) < MAX_MOVES_DURING_REVIEWS:
        if not (latency := one_by_one(office, *pairs[0], 1)):
            break
        during += latency
    return played, latencies, (during, reviews_done(office), reviews_begun(office))


def start_games(office: LivePostOffice, games: int, terms: str = "match 15",
                first: int = 0) -> list[tuple[int, tuple[Player, Player]]]:
    """`games` matches on `terms` (default: to 15 points), invited and accepted by mail:
    (match id, (white, black)); the players are numbered from `first`."""
    return [(start_match(office, players, terms), players)
            for players in pair_up(office, games, ("white", "black"), first)]


def play_rounds(office: LivePostOffice, pairs: list[tuple[int, tuple[Player, Player]]], rounds: int,
                cpu: CpuMeter | None = None) -> Rounds:
    """In each round, the player to act in every game mails their move at once (see the docstring);
    with `cpu`, the CPU time spent from each round's start to its end is counted too."""
    played = Rounds()
    players_of = {player.address: players for _, players in pairs for player in players}
    for _ in range(rounds):
        before = cpu.read() if cpu is not None else {}
        batch = [mail for match_id, players in pairs if (mail := next_move(office, match_id, players)) is not None]
        if not batch:  # every match is over
            break
        answered = len(office.smtp.recorder.received)
        moves = [crlf(message.as_bytes(policy=SMTP_POLICY)) for _, message in batch]
        for player, message in batch:
            player.outbox.append(message)
            played.mailed.add(str(message["Message-ID"]))

        def delivering(index: int) -> None:
            office.delivered_at[str(batch[index][1]["Message-ID"])] = time.monotonic()

        office.dovecot.deliver_all(SERVICE[0], moves, delivered=delivering)
        settle(office, {str(message["Message-ID"]): _opponent(players_of[player.address], player).address
                        for player, message in batch}, answered)
        if cpu is not None:
            for kind, seconds in CpuMeter.spent(before, cpu.read()).items():
                played.cpu[kind] = played.cpu.get(kind, 0.0) + seconds
        answers = office.smtp.recorder.received[answered:]
        played.moves += len(batch)
        played.seconds += max(mail.at for mail in answers) - office.delivered_at[str(batch[0][1]["Message-ID"])]
        played.traffic.append((moves, list(answers)))
        office.file(office.collect())
    return played


def _opponent(players: tuple[Player, Player], player: Player) -> Player:
    return players[1] if players[0] is player else players[0]


def settle(office: LivePostOffice, moves: dict[str, str], answered: int, timeout: float = 60.0) -> None:
    """Wait until every one of `moves` (Message-ID → the mover's opponent) was answered, told by
    the SMTP server as each answer arrives: a reply to the move (a roll's dice, an error), or the
    opponent's mail that tells it (the mover gets no copy of a move); then, looking seldom, until
    the mailbox is empty and every answer owed was sent. The players add no work of their own to
    the daemon's while the round runs."""
    deadline = time.monotonic() + timeout
    unanswered = dict(moves)

    def all_answered(received: list[Received]) -> bool:
        nonlocal answered
        for mail in received[answered:]:
            headers = BytesHeaderParser(policy=SMTP_POLICY).parsebytes(mail.raw)
            unanswered.pop(str(headers["In-Reply-To"]), None)
            told = str(headers["To"]).lower()
            for move, opponent in list(unanswered.items()):
                if opponent.lower() in told:
                    del unanswered[move]
                    break
        answered = len(received)
        return not unanswered

    if not office.smtp.recorder.wait_until(all_answered, timeout):
        raise TimeoutError(f"{len(unanswered)} of {len(moves)} moves not answered")
    while office.dovecot.pending(SERVICE[0]) or office.unsent():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{office.dovecot.pending(SERVICE[0])} mails waiting, unsent: {office.unsent_rows()}")
        time.sleep(SETTLE_POLL_SECONDS)


def one_by_one(office: LivePostOffice, match_id: int, players: tuple[Player, Player], count: int) -> list[float]:
    """Moves mailed one at a time: seconds from each delivery to its first answer accepted by SMTP
    (a reply to the move, or the opponent's mail that tells it: the mover gets no copy)."""
    latencies = []
    for _ in range(count):
        found = next_move(office, match_id, players)
        if found is None:
            break
        player, message = found
        before = len(office.smtp.recorder.received)
        player.post(message)
        told = f"<{_opponent(players, player).address}>".encode()
        answer = next((mail for mail in office.smtp.recorder.received[before:]
                       if f"In-Reply-To: {message['Message-ID']}".encode() in mail.raw or told in mail.raw), None)
        if answer is None:
            raise RuntimeError(f"no answer to {message['Message-ID']} was sent")
        latencies.append(answer.at - office.delivered_at[str(message["Message-ID"])])
    return latencies


def reviewing(config: Config, office: LivePostOffice, in_thread: bool) -> PeriodicJob:
    """The daemon's review job as `pbem serve` has it, or computing in a thread of its process."""
    if not in_thread:
        return review_job(config)
    compute = in_process(config.assistant.plies)

    async def run() -> None:
        await run_reviews(office.engine, config, compute)

    job = review_job(config)
    return PeriodicJob(job.name, run, job.interval, close=job.close)


def queue_reviews(office: LivePostOffice, match_id: int, count: int) -> None:
    """`count` review jobs of whole games, as the mails that end games write them."""
    games = [entry["game"] for entry in json.loads(REVIEW_GAMES.read_text(encoding="utf-8"))["games"]]
    with Session(office.engine) as session:
        for number in range(count):
            session.add(ReviewJob(match_id=match_id, game_number=number + 1, game=games[number % len(games)]))
        session.commit()


def reviews_begun(office: LivePostOffice) -> int:
    with Session(office.engine) as session:
        return len(session.exec(select(ReviewJob.id).where(ReviewJob.claimed_at.is_not(None))).all())  # type: ignore[union-attr]


def reviews_done(office: LivePostOffice) -> int:
    with Session(office.engine) as session:
        return len(session.exec(select(ReviewJob.id).where(ReviewJob.done_at.is_not(None))).all())  # type: ignore[union-attr]


def next_move(office: LivePostOffice, match_id: int, players: tuple[Player, Player]) -> tuple[Player, EmailMessage] | None:
    """The mail the player to act would write now (None when the match is over)."""
    found = next_answer(office, players, match_id)
    return None if found is None else (found[0], compose_reply(found[0].sender, found[1], found[2]))


async def bare_client(dovecot: Dovecot, smtp: SmtpServer, traffic: list[tuple[list[bytes], list[Received]]],
                      idle: bool) -> Rounds:
    """The IMAP and SMTP work of the pipeline's rounds, with no service in between: the very
    moves the players mailed and the very answers the daemon sent (pictures and all).

    idle: the mails of a round are delivered one after another while the client waits in IDLE and
    handles what the server reports, as the daemon does; else every mail of the round is
    delivered first and found with NOOP. Each mail is fetched and moved, and after it the
    round's answers are sent in turn, as many per mail as the daemon sent (the rest at the end)."""
    imap = aioimaplib.IMAP4(host="127.0.0.1", port=dovecot.port)
    await imap.wait_hello_from_server()
    await imap.login(*SERVICE)
    await imap.create("bare")
    await imap.select("INBOX")
    sender = aiosmtplib.SMTP(hostname="127.0.0.1", port=smtp.port, start_tls=False)
    await sender.connect()

    def deliver(moves: list[bytes]) -> None:
        dovecot.deliver_all(SERVICE[0], moves)

    async def pending() -> list[str]:
        await imap.noop()
        search = await imap.uid_search("ALL", charset=None)
        return [word.decode() for line in search.lines[:-1] for word in bytes(line).split()]

    async def send(answers: list[Received]) -> None:
        for answer in answers:
            await sender.sendmail(answer.sender, list(answer.recipients), answer.raw)

    result = Rounds()
    for moves, answers in traffic:
        answered, started = len(smtp.recorder.received), time.monotonic()
        delivering = asyncio.ensure_future(asyncio.to_thread(deliver, moves))  # (its login: some 10 ms more)
        if not idle:
            await delivering
        per_mail, unsent = -(-len(answers) // len(moves)), list(answers)
        handled = 0
        while handled < len(moves):
            if not (uids := await pending()):
                waiting = await imap.idle_start(timeout=10)
                try:
                    await imap.wait_server_push(timeout=10)
                except asyncio.TimeoutError:
                    pass
                imap.idle_done()
                await asyncio.wait_for(waiting, 5)
                continue
            for uid in uids:
                await imap.uid("fetch", uid, "(BODY.PEEK[])")
                await imap.uid("move", uid, "bare")
                await send(unsent[:per_mail])
                del unsent[:per_mail]
                handled += 1
        await send(unsent)
        await delivering
        result.moves += len(moves)
        result.seconds += max(mail.at for mail in smtp.recorder.received[answered:]) - started
    await sender.quit()
    await imap.logout()
    return result


def service_seconds(office: LivePostOffice) -> list[float]:
    """Per mail, the time from its InboundMail row to the end of the handler: the service's own share."""
    with Session(office.engine) as session:
        return [(row.processed_at - row.received_at).total_seconds()
                for row in session.exec(select(InboundMail)).all() if row.processed_at is not None]


if __name__ == "__main__":
    main()
