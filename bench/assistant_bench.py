"""The Assistant's strength and answer time, judged by GNU Backgammon (not by bgsage).

    python bench/assistant_bench.py [--plies 1 2] [--games 12] [--length 5] [--seed 1] [--judge 2]
                                    [--money] [--keep DIR] [--small]

For each strength in ``--plies``, the Assistant plays seeded matches to ``--length`` points
against itself (``--money``: a money session with beavers and the Jacoby rule) until
``--games`` games are finished, every decision timed: each play with a choice, each cube
decision (double or roll where the cube may be turned, take, drop or beaver).  The matches go
into a ``.mat`` file exactly as the service writes it (``pbem.rules.matfile``), and GNU
Backgammon (``gnubg``, /usr/games on Debian) imports it and runs ``analyse match`` at
``--judge`` plies (gnubg's own plies: 2 is its "2-ply").  Printed per strength: gnubg's error
rate in mEMG for checker play, for cube decisions and overall (both seats are the Assistant),
its very bad moves, and the answer time per decision (p50, p95).  Prints figures only; gnubg
runs niced, one process at a time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from gnubg_judge import analyse, rates  # noqa: E402

from pbem.assistant import engine  # noqa: E402
from pbem.assistant.engine import Engine  # noqa: E402
from pbem.rules import game as rules  # noqa: E402
from pbem.rules.matfile import match_text  # noqa: E402
from pbem.rules.moves import legal_plays  # noqa: E402
from pbem.rules.scoring import Format, MatchRules, Score, add_result, is_over  # noqa: E402

NAMES = ("Assistant", "Assistant_2")


def play_match(bot: Engine, match_rules: MatchRules, rng: random.Random, games_left: int,
               times: dict[str, list[float]]) -> list[rules.Game]:
    """One match (or money session of at most ``games_left`` games) of the Assistant against itself."""
    score, games = Score(match_rules), []
    while not is_over(score) and len(games) < games_left:
        game = None
        while game is None:
            game = rules.new_game(score, (rng.randint(1, 6), rng.randint(1, 6)))
        while game.phase is not rules.Phase.OVER:
            game = _step(bot, game, rng, times)
        games.append(game)
        score = add_result(score, game.result)
    return games


def _step(bot: Engine, game: rules.Game, rng: random.Random, times: dict[str, list[float]]) -> rules.Game:
    start = time.perf_counter()
    if game.phase is rules.Phase.TO_MOVE:
        assert game.dice is not None
        play = bot.choose_play(game)
        if len(legal_plays(game.board, game.dice)) > 1:
            times["checker"].append(time.perf_counter() - start)
        return rules.play(game, game.seat, play)
    if game.phase is rules.Phase.DOUBLE_OFFERED:
        answer = bot.answer_double(game)
        times["cube"].append(time.perf_counter() - start)
        return getattr(rules, answer)(game, game.to_act)
    if game.phase is rules.Phase.ROLL_OR_DOUBLE:
        doubles = bot.wants_to_double(game)
        times["cube"].append(time.perf_counter() - start)
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
    rng, times, mats, played = random.Random(args.seed), {"checker": [], "cube": []}, [], 0
    started = time.perf_counter()
    while played < args.games:
        games = play_match(bot, match_rules, rng, args.games - played, times)
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
    every = times["checker"] + times["cube"]
    return {"plies": plies, "games": played, **figures, "p50": statistics.median(every),
            "p95": _p95(every), "checker_p95": _p95(times["checker"]), "cube_p95": _p95(times["cube"]),
            "timed": len(every), "playing": playing, "judging": judging}


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18] if len(values) > 1 else (values or [0.0])[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, nargs="+", default=[1, 2], help="the Assistant's strengths")
    parser.add_argument("--games", type=int, default=12, help="games per strength")
    parser.add_argument("--length", type=int, default=5, help="match length")
    parser.add_argument("--money", action="store_true", help="a money session instead of matches")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--judge", type=int, default=2, help="gnubg's analysis plies")
    parser.add_argument("--keep", help="a folder to keep the .mat files in")
    parser.add_argument("--small", action="store_true",
                        help="a quick run that only shows the bench works (CI): one 1-point game at 1 ply, judged at 0 ply")
    args = parser.parse_args()
    if args.small:
        args.plies, args.games, args.length, args.judge = [1], 1, 1, 0
    what = "money session (beaver, Jacoby)" if args.money else f"{args.length}-point matches"
    print(f"Assistant against itself: {args.games} games per strength, {what}, seed {args.seed}; "
          f"judged by gnubg analyse match at {args.judge}-ply")
    print(f"{'plies':>5} {'games':>5} {'decisions':>9} {'checker':>8} {'cube':>6} {'overall':>8} "
          f"{'very bad':>8} {'p50 ms':>7} {'p95 ms':>7} {'p95 play':>8} {'p95 cube':>8}")
    for plies in args.plies:
        row = measure(plies, args)
        print(f"{row['plies']:>5} {row['games']:>5} {row['decisions']:>9} {row['checker']:>8.1f} "
              f"{row['cube']:>6.1f} {row['overall']:>8.1f} {row['very_bad']:>8} {1000 * row['p50']:>7.0f} "
              f"{1000 * row['p95']:>7.0f} {1000 * row['checker_p95']:>8.0f} {1000 * row['cube_p95']:>8.0f}"
              f"   (mEMG; {row['timed']} timed decisions; play {row['playing']:.0f} s, gnubg {row['judging']:.0f} s)",
              flush=True)


if __name__ == "__main__":
    main()
