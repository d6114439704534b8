"""The Assistant's levels (issue 38): legal and never absurd, reproducible from the game's seed,
and ordered; the strongest is today's engine itself.  gnubg's calibration is in
``bench/assistant_bench.py --levels``; here bgsage's own 1-ply equity loss is the cheap measure."""

from __future__ import annotations

import random
import statistics
from dataclasses import replace

import pytest

from pbem.assistant import engine
from pbem.assistant.engine import CubeContext, Engine
from pbem.assistant.levels import BY_KEY, LEVELS, STRONGEST, NoisyPlayer, player
from pbem.rules import game as rules
from pbem.rules.moves import apply_play, legal_plays
from pbem.rules.position import Position
from pbem.rules.scoring import MatchRules

WEAKER = [level.key for level in LEVELS if level.key != STRONGEST]


def _raw() -> Engine:
    loaded = engine(1)
    assert loaded is not None, "bgsage must load in the test environment"
    return loaded


def _positions(count: int, seed: int) -> list[rules.Game]:
    """``count`` seeded positions of random play, each with its dice rolled and a choice to make."""
    rng, games = random.Random(seed), []
    while len(games) < count:
        board = Position.start()
        for _ in range(rng.randint(0, 60)):
            plays = legal_plays(board, (rng.randint(1, 6), rng.randint(1, 6)))
            board = rng.choice(list(plays)) if plays else board
            if board.mover_off == 15:
                break
            board = board.swap()
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        if board.mover_off < 15 and board.opponent_off < 15 and len(legal_plays(board, dice)) > 1:
            games.append(rules.Game(rules=MatchRules(), score=(0, 0), crawford=False, board=board, seat=0,
                                    phase=rules.Phase.TO_MOVE, dice=dice))
    return games


POSITIONS = _positions(40, 38)


def _loss(bot: Engine, game: rules.Game, play) -> float:
    assert game.dice is not None
    equities = bot.play_equities(game.board, game.dice, CubeContext.of(game, 0))
    return max(equities.values()) - equities[apply_play(game.board, play)]


def test_the_strongest_level_is_the_configured_engine_itself() -> None:
    strongest = _raw()
    assert player(STRONGEST, strongest, "seed") is strongest
    assert player("no such level", strongest, "seed") is strongest
    assert isinstance(player("beginner", strongest, "seed"), NoisyPlayer)


@pytest.mark.parametrize("level", WEAKER)
def test_every_play_is_legal_never_costs_more_than_the_cap_and_a_replay_plays_the_same(level: str) -> None:
    raw = _raw()
    plays = []
    for number, game in enumerate(POSITIONS):
        assert game.dice is not None
        play = player(level, raw, f"seed-{number}").choose_play(game)
        assert apply_play(game.board, play) in legal_plays(game.board, game.dice)
        assert _loss(raw, game, play) <= BY_KEY[level].max_loss + 1e-9
        assert player(level, raw, f"seed-{number}").choose_play(game) == play, "the same seed, the same play"
        plays.append(play)
    others = [player(level, raw, f"other-{number}").choose_play(game) for number, game in enumerate(POSITIONS)]
    assert others != plays or level == "expert", "another game's seed plays otherwise somewhere"


def test_the_levels_are_ordered_by_the_equity_they_lose() -> None:
    raw = _raw()
    losses = [statistics.mean(_loss(raw, game, player(level, raw, f"seed-{number}").choose_play(game))
                              for number, game in enumerate(POSITIONS)) for level in WEAKER]
    assert losses == sorted(losses, reverse=True) and len(set(losses)) == len(losses), losses
    assert losses[0] > 0.02, "a beginner loses equity"


@pytest.mark.parametrize("level", WEAKER)
def test_no_level_makes_an_absurd_cube_decision(level: str) -> None:
    """Far from the border every level decides as the engine does: it doubles and drops a
    hopeless position, takes an opening double, and never doubles the opening position."""
    raw = _raw()
    crushing = rules.Game(rules=MatchRules(), score=(0, 0), crawford=False, seat=0, phase=rules.Phase.ROLL_OR_DOUBLE,
                          board=Position(_side({3: 1, 4: 1, 5: 1}), _side({4: 1, 5: 1, 6: 2})))
    start = replace(crushing, board=Position.start())
    for number in range(10):
        bot = player(level, raw, f"seed-{number}")
        assert bot.answer_double(rules.double(crushing, 0)) == "drop"
        assert bot.answer_double(rules.double(start, 0)) == "take"
        assert not bot.wants_to_double(start)


def _side(points: dict[int, int]) -> tuple[int, ...]:
    side = [0] * 25
    for point, count in points.items():
        side[point - 1] += count
    return tuple(side)
