"""The Assistant's strength and answer time, judged by GNU Backgammon (not by bgsage).

    python bench/assistant_bench.py [--plies 1 2] [--matches 6] [--length 5] [--seed 1] [--judge 2]
                                    [--with-reviews] [--money [--games 12]] [--keep DIR] [--small]
    python bench/assistant_bench.py --levels [--matches 20] [--judged N] [--length 3] [--seed 1]
                                    [--judge 2] [--small]

For each strength in ``--plies``, the Assistant plays ``--matches`` seeded matches to
``--length`` points against itself (``--money``: a money session of ``--games`` games with
beavers and the Jacoby rule), every decision timed: each play with a choice, each cube
decision (double or roll where the cube may be turned, take, drop or beaver).  The matches go
into ``.mat`` files exactly as the service writes them (``pbem.rules.matfile``), and GNU
Backgammon (``gnubg``, /usr/games on Debian) imports them and runs ``analyse match`` at
``--judge`` plies (gnubg's own plies: 2 is its "2-ply").  Printed per strength: gnubg's error
rate in mEMG for checker play, for cube decisions and overall (both seats are the Assistant),
its very bad moves and cube errors, and the answer time per decision (p50, p95, wall clock) and
the CPU time per decision (this process, all of bgsage's threads).

``--with-reviews`` keeps a review computing while the decisions are timed, as the daemon
computes them: the service's own :class:`pbem.service.jobs.review_job.ReviewPool` (one worker
process, started with ``spawn``, niced) reviews each finished game, and the last one again
whenever it has nothing new, so a review competes for the CPU during every timed decision.
Prints figures only; gnubg runs niced, one process at a time.

``--levels`` measures the Assistant's levels (``pbem.assistant.levels``) instead: each level plays
``--matches`` matches to ``--length`` points against the next stronger level (seats alternating,
the noise seeded per game as the service seeds it), and gnubg analyses them (only the first
``--judged`` of each pairing, if given).  Printed per level: gnubg's error rate over its own
seats in the judged matches (against the level below and the level above), its very bad moves
and cube errors, the answer time p95 over all its decisions (no review running) and the mean CPU
per decision, and its share of the matches won against the next level.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from gnubg_judge import analyse, rates  # noqa: E402

from pbem.assistant import engine  # noqa: E402
from pbem.assistant.engine import Engine  # noqa: E402
from pbem.assistant.levels import LEVELS, player  # noqa: E402
from pbem.rules import game as rules  # noqa: E402
from pbem.rules.matfile import match_text  # noqa: E402
from pbem.rules.moves import legal_plays  # noqa: E402
from pbem.rules.scoring import Format, MatchRules, Score, add_result, is_over  # noqa: E402
from pbem.service.jobs.review_job import ReviewPool  # noqa: E402

NAMES = ("Assistant", "Assistant_2")
FIRST_REVIEWED = ROOT / "tests" / "data" / "review_games.json"
"""A finished game to review until the bench has finished one of its own."""


class Reviews:
    """A review always computing in the service's review worker process, while the bench plays."""

    def __init__(self, plies: int) -> None:
        self._pool = ReviewPool(plies)
        self._latest: dict[str, Any] = json.loads(FIRST_REVIEWED.read_text())["games"][0]["game"]
        self._stop, self._first = threading.Event(), threading.Event()
        self.done = 0
        self._thread = threading.Thread(target=lambda: asyncio.run(self._keep_reviewing()), daemon=True)

    def __enter__(self) -> "Reviews":
        """Starts reviewing, and returns once the worker has loaded bgsage and finished a review."""
        self._thread.start()
        self._first.wait()
        return self

    def finished(self, game: rules.Game) -> None:
        """The next review is of this game (the daemon's review job would queue it now)."""
        self._latest = game.to_dict()

    async def _keep_reviewing(self) -> None:
        while not self._stop.is_set():
            await self._pool.compute(self._latest)
            self.done += 1
            self._first.set()

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._pool.close()


class Timer:
    """Wall-clock and CPU time of each decision (the CPU of this process: every bgsage thread)."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {"checker": [], "cube": []}
        self.cpu: list[float] = []
        self._started = (0.0, 0.0)

    def start(self) -> None:
        self._started = (time.perf_counter(), time.process_time())

    def stop(self, kind: str) -> None:
        self.wall[kind].append(time.perf_counter() - self._started[0])
        self.cpu.append(time.process_time() - self._started[1])


def play_match(bot: Engine, match_rules: MatchRules, rng: random.Random, games_left: int,
               timer: Timer, reviews: Reviews | None) -> list[rules.Game]:
    """One match (or money session of at most ``games_left`` games) of the Assistant against itself."""
    score, games = Score(match_rules), []
    while not is_over(score) and len(games) < games_left:
        game = None
        while game is None:
            game = rules.new_game(score, (rng.randint(1, 6), rng.randint(1, 6)))
        while game.phase is not rules.Phase.OVER:
            game = _step(bot, game, rng, timer)
        games.append(game)
        if reviews is not None:
            reviews.finished(game)
        score = add_result(score, game.result)
    return games


def _step(bots: Engine | tuple[Any, Any], game: rules.Game, rng: random.Random, timer: Timer | tuple[Timer, Timer]
          ) -> rules.Game:
    """One action of ``game``: each seat's decision by its own bot (one for both seats, or a pair),
    timed by its own timer."""
    assert game.to_act is not None
    bot = bots[game.to_act] if isinstance(bots, tuple) else bots
    if isinstance(timer, tuple):
        timer = timer[game.to_act]
    timer.start()
    if game.phase is rules.Phase.TO_MOVE:
        assert game.dice is not None
        play = bot.choose_play(game)
        if len(legal_plays(game.board, game.dice)) > 1:
            timer.stop("checker")
        return rules.play(game, game.seat, play)
    if game.phase is rules.Phase.DOUBLE_OFFERED:
        answer = bot.answer_double(game)
        timer.stop("cube")
        return getattr(rules, answer)(game, game.to_act)
    if game.phase is rules.Phase.ROLL_OR_DOUBLE:
        doubles = bot.wants_to_double(game)
        timer.stop("cube")
        if doubles:
            return rules.double(game, game.seat)
    return rules.roll(game, game.seat, (rng.randint(1, 6), rng.randint(1, 6)))


def measure(plies: int, args: argparse.Namespace) -> dict:
    bot = engine(plies)
    if bot is None:
        raise SystemExit("bgsage cannot be loaded here")
    if args.money:
        match_rules = MatchRules(format=Format.MONEY, length=0, beaver=True, jacoby=True)
    else:
        match_rules = MatchRules(format=Format.MATCH, length=args.length)
    rng, timer, mats, played = random.Random(args.seed), Timer(), [], 0
    started = time.perf_counter()
    with Reviews(plies) if args.with_reviews else _no_reviews() as reviews:
        while (played < args.games) if args.money else (len(mats) < args.matches):
            games = play_match(bot, match_rules, rng, args.games - played if args.money else 10**6, timer, reviews)
            played += len(games)
            mats.append(match_text(games, NAMES))
    playing = time.perf_counter() - started
    if args.keep:
        folder = Path(args.keep)
        folder.mkdir(parents=True, exist_ok=True)
        for number, text in enumerate(mats, start=1):
            (folder / f"plies{plies}-{number}.mat").write_text(text)
    started = time.perf_counter()
    analysis = analyse(mats, plies=args.judge, jacoby=match_rules.jacoby, beaver=match_rules.beaver)
    judging = time.perf_counter() - started
    figures = rates([seat for match in analysis for seat in match["seats"]])
    every = timer.wall["checker"] + timer.wall["cube"]
    return {"plies": plies, "matches": len(mats), "games": played, **figures, "p50": statistics.median(every),
            "p95": _p95(every), "checker_p95": _p95(timer.wall["checker"]), "cube_p95": _p95(timer.wall["cube"]),
            "cpu_mean": statistics.mean(timer.cpu), "cpu_p95": _p95(timer.cpu), "timed": len(every),
            "reviews": reviews.done if reviews is not None else 0, "playing": playing, "judging": judging}


def play_levels(levels: tuple[str, str], match_rules: MatchRules, rng: random.Random, name: str,
                timers: tuple[Timer, Timer]) -> tuple[list[rules.Game], int]:
    """One match of ``levels[0]`` (seat 0) against ``levels[1]``, each game's noise seeded by
    ``name`` and the game's number as the service seeds it by the game's dice seed; returns the
    games and the winner's seat."""
    strongest = engine(2)
    assert strongest is not None
    score, games = Score(match_rules), []
    while not is_over(score):
        seed = f"{name}:{len(games)}"
        bots = (player(levels[0], strongest, seed), player(levels[1], strongest, seed))
        game = None
        while game is None:
            game = rules.new_game(score, (rng.randint(1, 6), rng.randint(1, 6)))
        while game.phase is not rules.Phase.OVER:
            game = _step(bots, game, rng, timers)
        games.append(game)
        score = add_result(score, game.result)
    return games, 0 if score.points[0] >= match_rules.length else 1


def measure_levels(args: argparse.Namespace) -> list[dict]:
    """Every level against the next stronger one; gnubg judges the first ``--judged`` of each pairing."""
    keys = [level.key for level in LEVELS]
    timers = {key: Timer() for key in keys}
    seats: dict[str, list[dict]] = {key: [] for key in keys}
    wins: dict[str, int] = {}
    match_rules = MatchRules(format=Format.MATCH, length=args.length)
    started = time.perf_counter()
    judging = 0.0
    for weaker, stronger in zip(keys, keys[1:]):
        rng, mats, won = random.Random(f"{args.seed}:{weaker}"), [], 0
        for number in range(args.matches):
            order = (weaker, stronger) if number % 2 == 0 else (stronger, weaker)
            games, winner = play_levels(order, match_rules, rng, f"{args.seed}:{weaker}:{number}",
                                        (timers[order[0]], timers[order[1]]))
            won += order[winner] == weaker
            if number < args.judged:
                mats.append((order, match_text(games, order)))
        wins[weaker] = won
        judged_from = time.perf_counter()
        analysis = analyse([text for _, text in mats], plies=args.judge)
        judging += time.perf_counter() - judged_from
        for (order, _), match in zip(mats, analysis):
            for seat, key in enumerate(order):
                seats[key].append(match["seats"][seat])
        print(f"  {weaker} against {stronger}: {won} of {args.matches} matches won "
              f"({time.perf_counter() - started:.0f} s so far, gnubg {judging:.0f} s)", file=sys.stderr, flush=True)
    rows = []
    for key in keys:
        every = timers[key].wall["checker"] + timers[key].wall["cube"]
        rows.append({"level": key, **rates(seats[key]), "p95": _p95(every), "timed": len(every),
                     "cpu_mean": statistics.mean(timers[key].cpu) if timers[key].cpu else 0.0,
                     "won": wins.get(key)})
    return rows


def print_levels(args: argparse.Namespace) -> None:
    print(f"Assistant levels, each against the next stronger: {args.matches} {args.length}-point matches per "
          f"pairing (seats alternating), seed {args.seed}; the first {args.judged} of each pairing judged by "
          f"gnubg analyse match at {args.judge}-ply (a level's error rate over its seats against both neighbours)")
    print(f"{'level':<13} {'decisions':>9} {'checker':>8} {'cube':>6} {'overall':>8} {'very bad':>8} "
          f"{'cube err':>8} {'p95 ms':>7} {'cpu ms':>7} {'won vs next':>12}")
    for row in measure_levels(args):
        won = "" if row["won"] is None else f"{row['won']}/{args.matches} {100 * row['won'] / args.matches:.0f}%"
        print(f"{row['level']:<13} {row['decisions']:>9} {row['checker']:>8.1f} {row['cube']:>6.1f} "
              f"{row['overall']:>8.1f} {row['very_bad']:>8} {row['cube_errors']:>8} {1000 * row['p95']:>7.0f} "
              f"{1000 * row['cpu_mean']:>7.0f} {won:>12}", flush=True)


class _no_reviews:
    """``with`` without a review running."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18] if len(values) > 1 else (values or [0.0])[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, nargs="+", default=[1, 2], help="the Assistant's strengths")
    parser.add_argument("--matches", type=int, help="matches per strength (default 6; --levels: per pairing, 20)")
    parser.add_argument("--length", type=int, help="match length (default 5; --levels: 3)")
    parser.add_argument("--money", action="store_true", help="a money session instead of matches")
    parser.add_argument("--games", type=int, default=12, help="games per strength of a money session")
    parser.add_argument("--with-reviews", action="store_true",
                        help="time the decisions while a review computes in the review worker process")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--judge", type=int, default=2, help="gnubg's analysis plies")
    parser.add_argument("--keep", help="a folder to keep the .mat files in")
    parser.add_argument("--small", action="store_true",
                        help="a quick run that only shows the bench works (CI): one 1-point match at 1 ply, "
                             "judged at 0 ply, timed while a review runs")
    parser.add_argument("--levels", action="store_true",
                        help="measure the levels, each against the next (default 20 3-point matches per pairing)")
    parser.add_argument("--judged", type=int, help="--levels: matches of each pairing gnubg judges (default: all)")
    args = parser.parse_args()
    if args.levels:
        args.matches, args.length = args.matches or 20, args.length or 3
        args.judged = args.matches if args.judged is None else args.judged
        if args.small:
            args.matches, args.judged, args.length, args.judge = 1, 1, 1, 0
        print_levels(args)
        return
    args.matches, args.length = args.matches or 6, args.length or 5
    if args.small:
        args.plies, args.matches, args.games, args.length, args.judge = [1], 1, 1, 1, 0
        args.with_reviews = True
    what = (f"a money session of {args.games} games (beaver, Jacoby)" if args.money
            else f"{args.matches} {args.length}-point matches")
    load = "while a review computes in the review worker" if args.with_reviews else "with no review running"
    print(f"Assistant against itself: {what} per strength, seed {args.seed}; judged by gnubg analyse match "
          f"at {args.judge}-ply; decisions timed {load}")
    print(f"{'plies':>5} {'games':>5} {'decisions':>9} {'checker':>8} {'cube':>6} {'overall':>8} "
          f"{'very bad':>8} {'cube err':>8} {'p50 ms':>7} {'p95 ms':>7} {'p95 play':>8} {'p95 cube':>8} "
          f"{'cpu ms':>7} {'cpu p95':>7}")
    for plies in args.plies:
        row = measure(plies, args)
        print(f"{row['plies']:>5} {row['games']:>5} {row['decisions']:>9} {row['checker']:>8.1f} "
              f"{row['cube']:>6.1f} {row['overall']:>8.1f} {row['very_bad']:>8} {row['cube_errors']:>8} "
              f"{1000 * row['p50']:>7.0f} {1000 * row['p95']:>7.0f} {1000 * row['checker_p95']:>8.0f} "
              f"{1000 * row['cube_p95']:>8.0f} {1000 * row['cpu_mean']:>7.0f} {1000 * row['cpu_p95']:>7.0f}"
              f"   (mEMG; {row['matches']} matches; {row['timed']} timed decisions; {row['reviews']} reviews "
              f"computed meanwhile; play {row['playing']:.0f} s, gnubg {row['judging']:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
