"""A 64-player knockout of matches to 1 point, played by scripted mail from the opening mail to
the champion.

    python bench/tournament_bench.py [--players 64] [--seed 1] [--small]

Through the real pipeline (the tests' post office: Maildir in and out, the mail service,
SQLite): one player opens ``tournament new Bench knockout N match 1``, the others join (each
confirming their new mail), the field starts by itself when it is full, and every match is
played to its end by both players answering each mail as a simple player does (roll, take, the
first legal move), round by round, each pairing as soon as it starts.  Printed: the wall time,
the mails written and sent, and per game the mails and the milliseconds of the daemon's work.
``--small``: 8 players, for CI.
"""

from __future__ import annotations

import argparse
import time

from rig import Player, PostOffice, cpu_seconds, scratch, scratch_office
from sqlmodel import Session, col, select

from post_office import play_turn, text_of  # (tests/service: the rig puts it on the path)
from pbem.rules.brackets import SIZES
from pbem.store.game_records import FinishedGame, MatchRecord, MatchStatus, TournamentRecord

MAX_STEPS = 200_000


def running_matches(office: PostOffice) -> list[int]:
    with Session(office.engine) as session:
        return [match_id for match_id in session.exec(
            select(MatchRecord.id).where(col(MatchRecord.tournament_id).is_not(None),
                                         MatchRecord.status == MatchStatus.RUNNING.value)
            .order_by(col(MatchRecord.id))).all() if match_id is not None]


def play_one_turn(office: PostOffice, by_address: dict[str, Player], match_id: int) -> None:
    """The player to act in the match answers their last mail of it."""
    seated = [by_address[player.address] for player in office.table(match_id).players]
    play_turn(office, seated, match_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=64, choices=SIZES)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--small", action="store_true", help="8 players, for CI")
    options = parser.parse_args()
    if options.small:
        options.players = 8
    with scratch() as directory:
        office = scratch_office(directory, options.seed)
        players = [Player(office, f"player{number}@example.org", f"Player {number}")
                   for number in range(options.players)]
        by_address = {player.address: player for player in players}
        started, cpu_before = time.perf_counter(), cpu_seconds()
        (answer,) = players[0].write_confirmed(f"tournament new Bench knockout {options.players} match 1")
        code = text_of(answer).split("tournament join ")[1].split()[0]
        for player in players[1:]:
            player.write_confirmed(f"tournament join {code}")
        for _ in range(MAX_STEPS):
            running = running_matches(office)
            if not running:
                break
            for match_id in running:  # one turn in each running match, as players answer in parallel
                if office.table(match_id).status is MatchStatus.RUNNING:
                    play_one_turn(office, by_address, match_id)
        elapsed = time.perf_counter() - started
        cpu_ms = (cpu_seconds() - cpu_before) * 1000
        with Session(office.engine) as session:
            record = session.exec(select(TournamentRecord)).one()
            games = len(session.exec(select(FinishedGame.id)).all())
            matches = len(session.exec(select(MatchRecord.id).where(col(MatchRecord.tournament_id).is_not(None))).all())
        assert record.status == "finished", record.status
        written = sum(len(player.outbox) for player in players)
        received = sum(len(player.inbox) for player in players)
    print(f"knockout of {options.players} players, matches to 1 point, by mail (SQLite, one process: "
          "service and scripted players):")
    print(f"  {matches} matches, {games} games in {elapsed:.1f} s wall, {cpu_ms / 1000:.1f} s CPU")
    print(f"  {written} mails written, {received} sent: {written / games:.1f} written and {received / games:.1f} "
          f"sent per game; {cpu_ms / written:.1f} ms CPU per mail written")


if __name__ == "__main__":
    main()
