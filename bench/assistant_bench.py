"""The Assistant's strength and answer time, judged by GNU Backgammon (not by bgsage).

    python bench/assistant_bench.py [--plies 1 2] [--matches 6] [--length 5] [--seed 1] [--judge 2]
                                    [--with-reviews] [--money [--games 12]] [--keep DIR] [--small]

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


def _step(bot: Engine, game: rules.Game, rng: random.Random, timer: Timer) -> rules.Game:
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
    parser.add_argument("--matches", type=int, default=6, help="matches per strength")
    parser.add_argument("--length", type=int, default=5, help="match length")
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
    args = parser.parse_args()
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
