"""The Assistant's answer time per move and its strength, over a seeded set of positions.

    python bench/assistant_bench.py [--positions 300] [--seed 1] [--plies 1] [--judge 2]

Positions come from seeded games of the Assistant against itself.  For each, the Assistant
chooses its play (timed); a stronger bgsage (``--judge`` plies) then says how much equity that
play lost against the best play our rules allow.  Prints figures only.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from pbem.assistant import engine
from pbem.assistant.engine import CubeContext, Engine
from pbem.rules import game as rules
from pbem.rules.moves import apply_play, legal_plays
from pbem.rules.scoring import MatchRules, Score


def positions(count: int, seed: int, bot: Engine) -> list[rules.Game]:
    """Games waiting for a play with a real choice, from seeded self-play at 1 ply."""
    rng, found = random.Random(seed), []
    while len(found) < count:
        game = rules.new_game(Score(MatchRules()), (rng.randint(1, 6), rng.randint(1, 6)))
        while game is not None and game.phase is not rules.Phase.OVER and len(found) < count:
            if game.phase is rules.Phase.TO_MOVE:
                assert game.dice is not None
                if len(legal_plays(game.board, game.dice)) > 1:
                    found.append(game)
                game = rules.play(game, game.seat, bot.choose_play(game))
            else:
                game = rules.roll(game, game.seat, (rng.randint(1, 6), rng.randint(1, 6)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plies", type=int, default=1, help="the Assistant's strength")
    parser.add_argument("--judge", type=int, default=2, help="the judge's strength (higher)")
    args = parser.parse_args()
    bot, judge = engine(args.plies), engine(args.judge)
    if bot is None or judge is None:
        raise SystemExit("bgsage cannot be loaded here")
    games = positions(args.positions, args.seed, engine(1))
    times, losses = [], []
    for game in games:
        assert game.dice is not None
        start = time.perf_counter()
        play = bot.choose_play(game)
        times.append(time.perf_counter() - start)
        equities = judge.play_equities(game.board, game.dice, CubeContext.of(game, game.seat))
        losses.append(max(equities.values()) - equities[apply_play(game.board, play)])
    quantiles = statistics.quantiles(times, n=20)
    print(f"positions: {len(games)} (seed {args.seed}), Assistant at {args.plies} ply, judge at {args.judge} ply")
    print(f"answer time per move: p50 {1000 * statistics.median(times):.1f} ms, p95 {1000 * quantiles[18]:.1f} ms")
    print(f"equity lost per move: {1000 * statistics.mean(losses):.1f} millipoints "
          f"(moves losing any: {sum(loss > 0.0005 for loss in losses)})")


if __name__ == "__main__":
    main()
