"""How long the web board's server takes per page and per move, next to the same moves by mail.

    python bench/web_bench.py [--games 6] [--turns 30] [--seed 1] [--small]

`--games` games are started by mail (tests/service/post_office.py: the real pipeline on local
Maildirs, the real handler) with the web board configured.  Then, turn by turn, the player to
act in each game acts on their page (the real Starlette app, called over ASGI by Starlette's
TestClient): they load the page, then press roll, take, or send a legal move from the page's
own list (the first complete play of its step graph).  The server time is what the app itself
measures and logs per request (``web GET /g/… 200 4.2 ms``: routing, limits, the service in its
transaction with the match locked, the letters queued, the page rendered), not the client's.

The same number of turns is then played by mail in as many fresh games: each mail delivered to
the Maildir inbox and applied by the pipeline (read, apply in one transaction, queue the
answers, commit, mark done), timed around ``read_inbox``, outbox sending not included (the web's
moves queue their mails as well, and do not send them either).

Prints p50 and p95 of each (goal: a page and a move each at most 50 ms at p95).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import statistics
import sys
import time
from collections.abc import Iterator

from rig import LoadedDice, Player, PostOffice, pair_up, percentile, scratch, start_match, write_config
from starlette.testclient import TestClient

from pbem.config import Config
from pbem.mail.local_client import compose_reply, deliver_to_maildir
from pbem.rules.game import Phase
from pbem.rules.moves import legal_plays
from pbem.rules.notation import Colour, format_play
from pbem.service.pages.web_board import WebBoard
from pbem.web.app import board_app

_LOGGED = re.compile(r"^web (GET|POST) \S+ (\d+) ([\d.]+) ms$")


class ServerTimes(logging.Handler):
    """The app's own time per request, from its log line."""

    def __init__(self) -> None:
        super().__init__()
        self.times: dict[str, list[float]] = {"GET": [], "POST": []}

    def emit(self, record: logging.LogRecord) -> None:
        found = _LOGGED.match(record.getMessage())
        if found and found.group(2) in ("200", "409", "422"):
            self.times[found.group(1)].append(float(found.group(3)))


def percentiles(values: list[float]) -> str:
    return f"p50 {statistics.median(values):6.1f} ms   p95 {percentile(values, 95):6.1f} ms   (n={len(values)})"


def start_games(config: Config, count: int, seed: int) -> tuple[PostOffice, list[tuple[Player, Player]]]:
    office = PostOffice(config, LoadedDice(seed=seed))
    pairs = pair_up(office, count)
    for players in pairs:
        start_match(office, players)
    return office, pairs


def to_act(office: PostOffice, match_id: int) -> tuple[int, str] | None:
    """The seat to act and what it answers by mail (roll, take or a legal move), or None."""
    table = office.table(match_id)
    game = table.game
    if game is None or game.phase is Phase.OVER or game.to_act is None:
        return None
    seat = game.to_act
    if game.phase is Phase.DOUBLE_OFFERED:
        return seat, "take"
    if game.phase is Phase.ROLL_OR_DOUBLE:
        return seat, "roll"
    plays = legal_plays(game.board, game.dice)
    first = sorted(plays.values())[0]
    return seat, format_play(game.board, first, table.numbering(seat), Colour.of_seat(seat))


def turns_of(office: PostOffice, turns: int) -> Iterator[tuple[int, int, str]]:
    """``turns`` rounds of one turn in every game, as long as it runs: (match id, the seat to act,
    its answer), each found after the turn before was played."""
    matches = [record.id for record in office.matches()]
    for _ in range(turns):
        for match_id in matches:
            if (acting := to_act(office, match_id)) is not None:
                yield match_id, *acting


def by_web(config: Config, games: int, turns: int, seed: int) -> tuple[list[float], list[float]]:
    office, _ = start_games(config, games, seed)
    times = ServerTimes()
    logging.getLogger("pbem.web.app").addHandler(times)
    logging.getLogger("pbem.web.app").setLevel(logging.INFO)
    web = config.web.model_copy(update={"requests_per_minute": 100_000, "address_requests_per_minute": 100_000})
    client = TestClient(board_app(web, WebBoard(config, office.engine, dice=office.dice)), base_url="http://127.0.0.1")
    for match_id, seat, answer in turns_of(office, turns):
        token = office.table(match_id).token(seat)
        page = client.get(f"/g/{token}").text
        fields = dict(re.findall(r'name="(csrf|version)" value="([^"]*)"', page))
        action = "move" if answer not in ("roll", "take") else answer
        done = client.post(f"/g/{token}", data={**fields, "action": action, "move": answer})
        assert done.status_code == 200, (done.status_code, answer)
    return times.times["GET"], times.times["POST"]


def by_mail(config: Config, games: int, turns: int, seed: int) -> list[float]:
    office, pairs = start_games(config, games, seed)
    players = {player.address: player for pair in pairs for player in pair}
    times = []
    for match_id, seat, answer in turns_of(office, turns):
        table = office.table(match_id)
        player = players[table.players[seat].address]
        mail = compose_reply(player.sender, player.last_of(table.token(seat)), answer)
        deliver_to_maildir(config.inbox_dir, mail)
        started = time.perf_counter()
        asyncio.run(office.pipeline.read_inbox())
        times.append((time.perf_counter() - started) * 1000)
        office.file(office.run())
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--small", action="store_true", help="a quick run that only shows the bench works (CI)")
    arguments = parser.parse_args()
    if arguments.small:
        arguments.games, arguments.turns = 1, 4
    with scratch() as directory:  # the web board configured, as by default
        pages, moves = by_web(write_config(directory / "web"), arguments.games, arguments.turns, arguments.seed)
        mails = by_mail(write_config(directory / "mail"), arguments.games, arguments.turns, arguments.seed)
    print(f"web page (GET /g/<token>):         {percentiles(pages)}")
    print(f"web move (POST /g/<token>):        {percentiles(moves)}")
    print(f"the same moves by mail (pipeline): {percentiles(mails)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
