"""Write review_games.json: five whole games and GNU Backgammon's analysis of each.

Usage (needs the gnubg program and bgsage; takes about a minute)::

    python tests/data/make_review_games.py > tests/data/review_games.json

Seat 0 is the Assistant at 1 ply; seat 1 plays like it but, with a probability that grows from
game to game, plays a random legal play, answers a double at random or doubles out of turn.
Each game is written with ``Game.to_dict`` and, next to it, gnubg's statistics per seat from
``analyse match`` at 2-ply of the game's ``.mat`` (see ``analyse`` in tests/gnubg_judge.py).
tests/test_assistant_review.py holds the end-of-game review to these figures.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gnubg_judge import analyse

from pbem.assistant import engine
from pbem.assistant.engine import Engine
from pbem.rules import game as rules
from pbem.rules.matfile import match_text
from pbem.rules.moves import legal_plays
from pbem.rules.scoring import Format, MatchRules, Score

SEED = 20261122
NAMES = ("Assistant", "Player")
PLIES = 2


def play_game(bot: Engine, rng: random.Random, match_rules: MatchRules, noise: float) -> rules.Game:
    """A whole game: seat 0 is the Assistant, seat 1 errs with probability ``noise`` per decision."""
    game = None
    while game is None:
        game = rules.new_game(Score(match_rules), (rng.randint(1, 6), rng.randint(1, 6)))
    while game.phase is not rules.Phase.OVER:
        errs = game.to_act == 1 and rng.random() < noise
        if game.phase is rules.Phase.TO_MOVE:
            assert game.dice is not None
            plays = list(legal_plays(game.board, game.dice).values())
            play = rng.choice(plays) if errs and plays else bot.choose_play(game)
            game = rules.play(game, game.seat, play)
        elif game.phase is rules.Phase.DOUBLE_OFFERED:
            answer = rng.choice(("take", "drop")) if errs else bot.answer_double(game)
            game = getattr(rules, answer)(game, game.to_act)
        elif game.phase is rules.Phase.ROLL_OR_DOUBLE and bot.wants_to_double(game) != (errs and rng.random() < 0.1):
            game = rules.double(game, game.seat)
        else:
            game = rules.roll(game, game.seat, (rng.randint(1, 6), rng.randint(1, 6)))
    return game


def main() -> None:
    bot, rng = engine(1), random.Random(SEED)
    assert bot is not None, "bgsage must load"
    money = MatchRules(format=Format.MONEY, length=0)
    match = MatchRules(format=Format.MATCH, length=7)
    games = [play_game(bot, rng, (money, match)[number % 2], (0.1, 0.25, 0.5)[number % 3]) for number in range(5)]
    judged = analyse([match_text([game], NAMES) for game in games], plies=PLIES)  # no Jacoby, no beavers
    data = {"made_by": "tests/data/make_review_games.py", "seed": SEED, "gnubg_plies": PLIES, "names": NAMES,
            "games": [{"game": game.to_dict(), "gnubg": each["seats"]} for game, each in zip(games, judged)]}
    json.dump(data, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
