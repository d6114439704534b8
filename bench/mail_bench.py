"""How fast the whole mail pipeline is against a local Dovecot and aiosmtpd, next to a bare client.

    python bench/mail_bench.py [--games 10] [--rounds 4] [--latency-moves 20] [--seed 1]
                               [--reviews 10] [--reviews-in-thread]

Needs Dovecot (`apt-get install dovecot-imapd`); the servers are the tests' own
(tests/mail_server/mail_servers.py), started privately on loopback ports.

- pipeline: `--games` games are running; in each round the player to act in every game mails
  a move at once (roll, take or a move, as a player would answer). The figure is moves per
  second from the first delivery to the last answer accepted by the SMTP server: IMAP IDLE →
  fetch → the game service applies the move in one transaction → commit → move to pbem/done →
  the answers (usually two) sent by SMTP.
- latency: one move at a time, from its delivery (the APPEND) to its answer accepted by the
  SMTP server, with IDLE on: p50 and p95.
- latency while reviews run: the same, one move after another in one game for as long as the
  daemon's review job works through `--reviews` queued reviews of finished games (the whole games of
  tests/data/review_games.json, in turn) at the configured plies, in its worker process as
  `pbem serve` runs it (`--reviews-in-thread`: in a thread of the daemon's process instead, to
  show what the GIL, which bgsage holds while it evaluates, would do to the mail).
- bare client: the same IMAP and SMTP operations with aioimaplib and aiosmtplib and no service
  (deliver the same number of mails, NOOP + UID SEARCH, UID FETCH and UID MOVE each, two mails
  sent by SMTP each), as moves per second; then the ratio, and how long the game service itself
  took per mail (the part of the pipeline that is not mail).

Dovecot reports new mail to an IDLE session about half a second after it arrives, so that is
the floor of the latency.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "mail_server"))

import aiosmtplib
from aioimaplib import aioimaplib
from conftest import SERVICE, write_config
from live_office import LivePostOffice
from mail_servers import Dovecot, SmtpServer, crlf
from post_office import LoadedDice, Player
from sqlmodel import Session, select

from pbem.config import Config, load_config
from pbem.periodic import PeriodicJob
from pbem.mail.local_client import compose_reply
from pbem.service.review_job import in_process, review_job, run_reviews
from pbem.store.game_records import MatchStatus, ReviewJob
from pbem.store.mail_records import InboundMail

REVIEW_GAMES = ROOT / "tests" / "data" / "review_games.json"
MAX_MOVES_DURING_REVIEWS = 500


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
    args = parser.parse_args()
    dovecot, smtp = Dovecot(dict([SERVICE])), SmtpServer()
    dovecot.start()
    smtp.start()
    scratch = Path(tempfile.mkdtemp(prefix="pbem-bench-"))
    try:
        data_dir = scratch / "data"
        data_dir.mkdir()
        config = load_config(write_config(data_dir, dovecot, smtp, extra="[limits]\ninvitations_per_day = 0\n"))
        office = LivePostOffice(config, dovecot, smtp, LoadedDice(seed=args.seed))
        office.jobs.append(reviewing(config, office, args.reviews_in_thread))
        moves, seconds, latencies, reviewed = office.run(
            lambda: play(office, args.games, args.rounds, args.latency_moves, args.reviews))
        service_ms = 1000 * statistics.mean(service_seconds(office))
        bare_moves, bare_seconds = asyncio.run(bare_client(dovecot, smtp, moves))
    finally:
        smtp.stop()
        dovecot.remove()
        shutil.rmtree(scratch, ignore_errors=True)
    rate, bare_rate = moves / seconds, bare_moves / bare_seconds
    print(f"pipeline:    {moves} moves in {seconds:.2f} s = {rate:.1f} moves/s "
          f"({args.games} games, {args.rounds} rounds, IDLE on)")
    print(f"latency:     delivery → answer sent, {len(latencies)} moves one by one: "
          f"p50 {percentile(latencies, 50) * 1000:.0f} ms, p95 {percentile(latencies, 95) * 1000:.0f} ms")
    if args.reviews:
        latencies, done, _ = reviewed
        where = "a thread of the daemon's process" if args.reviews_in_thread else "the review job's worker process"
        print(f"reviews:     delivery → answer sent, {len(latencies)} moves one by one while {args.reviews} reviews "
              f"of whole games (plies {config.assistant.plies}) were computed in {where} and mailed "
              f"({done} mailed by the last move): p50 {percentile(latencies, 50) * 1000:.0f} ms, "
              f"p95 {percentile(latencies, 95) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms")
    print(f"bare client: {bare_moves} moves' IMAP and SMTP operations in {bare_seconds:.2f} s = {bare_rate:.1f} moves/s")
    print(f"ratio:       pipeline / bare client = {rate / bare_rate:.2f}")
    print(f"of which:    the game service (handle_mail, in its transaction) took {service_ms:.0f} ms per mail")


def play(office: LivePostOffice, games: int, rounds: int, latency_moves: int,
         reviews: int) -> tuple[int, float, list[float], tuple[list[float], int, int]]:
    """Runs in the worker thread while the daemon serves: set up, burst rounds, then one by one."""
    pairs = []
    for number in range(games):
        inviter = Player(office, f"white{number}@example.org", f"White {number}")
        invitee = Player(office, f"black{number}@example.org", f"Black {number}")
        inviter.write_confirmed(f"invite {invitee.address} match 15")
        invitee.reply("accept")
        pairs.append((office.matches()[-1].id, (inviter, invitee)))
    moves, started = 0, time.monotonic()
    for _ in range(rounds):
        batch = [mail for match_id, players in pairs if (mail := next_move(office, match_id, players)) is not None]
        for player, message in batch:
            player.outbox.append(message)
            office.dovecot.deliver(SERVICE[0], message)
        office.settle()
        office.file(office.collect())
        moves += len(batch)
    seconds = time.monotonic() - started
    latencies = one_by_one(office, *pairs[0], latency_moves)
    if not reviews:
        return moves, seconds, latencies, ([], 0, 0)
    queue_reviews(office, pairs[1][0], reviews)
    while not reviews_begun(office):  # the job runs every few seconds
        time.sleep(0.05)
    during: list[float] = []  # one move after another for as long as reviews are computed
    while reviews_done(office) < reviews and len(during) < MAX_MOVES_DURING_REVIEWS:
        if not (latency := one_by_one(office, *pairs[0], 1)):
            break
        during += latency
    return moves, seconds, latencies, (during, reviews_done(office), reviews_begun(office))


def one_by_one(office: LivePostOffice, match_id: int, players: tuple[Player, Player], count: int) -> list[float]:
    """Moves mailed one at a time: seconds from each delivery to its answer accepted by SMTP."""
    latencies = []
    for _ in range(count):
        found = next_move(office, match_id, players)
        if found is None:
            break
        player, message = found
        player.post(message)
        answer = next(mail for mail in reversed(office.smtp.recorder.received)
                      if f"In-Reply-To: {message['Message-ID']}".encode() in mail.raw)
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
    table = office.table(match_id)
    if table.status is not MatchStatus.RUNNING or table.game is None or table.game.to_act is None:
        return None
    seat = table.game.to_act
    player = players[seat]
    last = player.last_of(table.token(seat))
    command = player.next_command(seat, last) if last is not None else None
    return None if command is None else (player, compose_reply(player.sender, last, command))


async def bare_client(dovecot: Dovecot, smtp: SmtpServer, moves: int) -> tuple[int, float]:
    """The IMAP and SMTP work of `moves` moves, with no service in between."""
    answer = crlf(b"From: backgammon@localhost\nTo: anna@example.org\nSubject: Your turn\n\n" + b"board\n" * 60)
    move = crlf(b"From: anna@example.org\nTo: backgammon@localhost\nSubject: Re: Your turn\n\n24/18 13/9\n")
    imap = aioimaplib.IMAP4(host="127.0.0.1", port=dovecot.port)
    await imap.wait_hello_from_server()
    await imap.login(*SERVICE)
    await imap.create("bare")
    await imap.select("INBOX")
    sender = aiosmtplib.SMTP(hostname="127.0.0.1", port=smtp.port, start_tls=False)
    await sender.connect()
    started = time.monotonic()
    for _ in range(moves):
        await asyncio.to_thread(dovecot.deliver, SERVICE[0], move)
    await imap.noop()
    search = await imap.uid_search("ALL", charset=None)
    uids = [word.decode() for line in search.lines[:-1] for word in bytes(line).split()]
    for uid in uids:
        await imap.uid("fetch", uid, "(BODY.PEEK[])")
        await imap.uid("move", uid, "bare")
        for recipient in ("anna@example.org", "ben@example.org"):
            await sender.sendmail("backgammon@localhost", [recipient], answer)
    seconds = time.monotonic() - started
    await sender.quit()
    await imap.logout()
    return len(uids), seconds


def service_seconds(office: LivePostOffice) -> list[float]:
    """Per mail, the time from its InboundMail row to the end of the handler: the service's own share."""
    with Session(office.engine) as session:
        return [(row.processed_at - row.received_at).total_seconds()
                for row in session.exec(select(InboundMail)).all() if row.processed_at is not None]


def percentile(values: list[float], percent: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]


if __name__ == "__main__":
    main()
