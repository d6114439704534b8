"""How many mails the service sends per mail a player writes, on whole games with the defaults.

    python bench/mail_count_bench.py [--games 6] [--assistant-games 3] [--seed 1] [--small]
                                     [--old-defaults]

Whole games by scripted mail through the real pipeline (the tests' post office: Maildir in and
out, the mail service, SQLite): pairs of players invite each other and play single games to
the end, each answering every mail that asks them to act as a simple player does (roll, take,
the first legal move); other players play single games against the Assistant.  Every mail a
player writes counts (the invitation, its confirmation, ``accept`` and every answer), and every
mail the service sends to a player.  Printed: the mails per player mail for human against
human, against the Assistant and overall, and how often a mail told of a play made for a player (automove).  Goal (issue 20):
at most 1.2 overall with the default settings.  ``--old-defaults``: every player writes
``copies on`` and ``automove off`` first, the defaults before issue 20, for comparison.  ``--small``: one game
of each kind, for CI (a few seconds).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from rig import Player, PostOffice, pair_up, scratch, scratch_office, start_match

from post_office import play_turn, text_of  # (tests/service: the rig puts it on the path)
from pbem.store.game_records import MatchStatus

MAX_STEPS = 2000


@dataclass
class Count:
    """Mails written by the players and mails the service sent them."""

    written: int = 0
    received: int = 0
    automoves: int = 0

    def add(self, other: Count) -> None:
        self.written += other.written
        self.received += other.received
        self.automoves += other.automoves

    @property
    def ratio(self) -> float:
        return self.received / self.written if self.written else 0.0


def _counted(players: list[Player]) -> Count:
    received = sum(len(player.inbox) for player in players)
    automoves = sum(prose.count("made automatically") + prose.count("played automatically")
                    for player in players for mail in player.inbox for prose in (text_of(mail),))
    return Count(sum(len(player.outbox) for player in players), received, automoves)


def human_game(office: PostOffice, number: int, old_defaults: bool) -> Count:
    """Two players invite, accept and play one single game to the end."""
    (players,) = pair_up(office, 1, first=number)
    match_id = start_match(office, players)
    if old_defaults:
        for seat, player in enumerate(players):
            player.reply("copies on\nautomove off", to=player.last_of(office.table(match_id).token(seat)))
    for _ in range(MAX_STEPS):
        table = office.table(match_id)
        if table.status is MatchStatus.FINISHED:
            return _counted(list(players))
        play_turn(office, players, match_id)
    raise AssertionError("the game did not end")


def assistant_game(office: PostOffice, number: int, old_defaults: bool) -> Count:
    """One player plays a single game against the Assistant to the end."""
    carla = Player(office, f"carla{number}@example.org", f"Carla {number}")
    carla.write("play assistant")
    if old_defaults:
        carla.reply("copies on\nautomove off")
    for _ in range(MAX_STEPS):
        if office.table().status is MatchStatus.FINISHED:
            return _counted([carla])
        command = carla.next_command(0, carla.last)
        assert command, f"Carla must act but was not told so:\n{text_of(carla.last)}"
        carla.reply(command)
    raise AssertionError("the game did not end")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=6, help="single games human against human")
    parser.add_argument("--assistant-games", type=int, default=3, help="single games against the Assistant")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--old-defaults", action="store_true",
                        help="every player writes  copies on  and  automove off  first")
    parser.add_argument("--small", action="store_true", help="one game of each kind, for CI")
    options = parser.parse_args()
    if options.small:
        options.games, options.assistant_games = 1, 1
    with scratch() as directory:
        office = scratch_office(directory, options.seed)
        humans, assistant = Count(), Count()
        for number in range(options.games):
            humans.add(human_game(office, number, options.old_defaults))
        for number in range(options.assistant_games):
            assistant.add(assistant_game(office, number, options.old_defaults))
    overall = Count()
    overall.add(humans)
    overall.add(assistant)
    setting = "copies on, automove off (the old defaults)" if options.old_defaults else "default settings"
    print(f"mails per player mail, whole single games, {setting}:")
    for name, count in (("human against human", humans), ("against the Assistant", assistant),
                        ("overall", overall)):
        print(f"  {name:22} {count.ratio:5.2f}   ({count.received} sent for {count.written} written; "
              f"{count.automoves} plays made for a player told)")
    print("goal: at most 1.20 overall" + ("" if options.old_defaults else f" -> {'met' if overall.ratio <= 1.2 else 'NOT met'}"))


if __name__ == "__main__":
    main()
