"""The Assistant's engine: legal plays only, sensible cube actions, draws only when behind."""

from __future__ import annotations

import random
from dataclasses import replace

from pbem.assistant import engine
from pbem.assistant.engine import Engine
from pbem.assistant.review import review_game
from pbem.rules import game as rules
from pbem.rules.moves import apply_play, legal_plays
from pbem.rules.position import Position
from pbem.rules.scoring import Format, MatchRules, Score


def _engine() -> Engine:
    loaded = engine(1)
    assert loaded is not None, "bgsage must load in the test environment"
    return loaded


def _side(points: dict[int, int]) -> tuple[int, ...]:
    side = [0] * 25
    for point, count in points.items():
        side[point - 1] += count
    return tuple(side)


def _game(mover: dict[int, int], opponent: dict[int, int], rules_: MatchRules = MatchRules()) -> rules.Game:
    """A game where seat 0 is on roll (may double) in the given position."""
    return rules.Game(rules=rules_, score=(0, 0), crawford=False, board=Position(_side(mover), _side(opponent)),
                      seat=0, phase=rules.Phase.ROLL_OR_DOUBLE)


def test_every_play_is_one_our_rules_allow_in_many_random_positions() -> None:
    bot, rng, checked = _engine(), random.Random(20240611), 0
    while checked < 400:
        board = Position.start()
        for _ in range(rng.randint(0, 80)):
            plays = legal_plays(board, (rng.randint(1, 6), rng.randint(1, 6)))
            if plays:
                board = rng.choice(list(plays))
            if board.mover_off == 15:
                break
            board = board.swap()
        if board.mover_off == 15 or board.opponent_off == 15:
            continue
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        game = replace(_game({}, {}), board=board, phase=rules.Phase.TO_MOVE, dice=dice)
        play = bot.choose_play(game)
        allowed = legal_plays(board, dice)
        assert (apply_play(board, play) in allowed) if allowed else play == ()
        checked += 1


def test_it_doubles_a_huge_lead_and_the_opponent_drops_a_hopeless_double() -> None:
    bot = _engine()
    game = _game({3: 1, 4: 1, 5: 1}, {4: 1, 5: 1, 6: 2})
    assert bot.game_winning_chance(game, 0) > 0.9
    assert bot.wants_to_double(game)
    assert bot.answer_double(rules.double(game, 0)) == "drop"


def test_it_takes_a_close_double_and_does_not_double_too_early() -> None:
    bot = _engine()
    close = _game({6: 5, 5: 5, 4: 3, 3: 2}, {7: 2, 6: 5, 5: 4, 4: 3, 3: 1})
    assert 0.65 < bot.game_winning_chance(close, 0) < 0.8
    assert bot.answer_double(rules.double(close, 0)) == "take"
    even = _game({6: 5, 5: 5, 4: 3, 3: 2}, {6: 5, 5: 5, 4: 4, 3: 1})
    assert not bot.wants_to_double(even)


def test_it_beavers_a_double_it_is_favourite_in_when_beavers_are_allowed() -> None:
    bot = _engine()
    money = MatchRules(format=Format.MONEY, length=0, beaver=True)
    behind = _game({6: 5, 5: 5, 4: 3, 3: 2}, {5: 5, 4: 5, 3: 5}, money)
    assert bot.game_winning_chance(behind, 0) < 0.45
    assert bot.answer_double(rules.double(behind, 0)) == "beaver"
    assert bot.answer_double(rules.double(replace(behind, rules=MatchRules()), 0)) == "take"


def test_it_accepts_a_draw_only_when_behind() -> None:
    bot = _engine()
    ahead = _game({3: 1, 4: 1, 5: 1}, {4: 1, 5: 1, 6: 2})
    assert not bot.accepts_draw(ahead, 0)
    assert bot.accepts_draw(ahead, 1)


def test_a_deliberately_terrible_move_is_the_biggest_mistake_of_the_review() -> None:
    bot, rng = _engine(), random.Random(7)
    game = rules.new_game(Score(MatchRules()), (3, 1))
    assert game is not None and game.seat == 0
    terrible = min(legal_plays(game.board, (3, 1)).values(), key=lambda play: bot.play_equities(
        game.board, (3, 1), engine_context(game))[apply_play(game.board, play)])
    game = rules.play(game, 0, terrible)
    while game.phase is not rules.Phase.OVER:
        if game.phase is rules.Phase.TO_MOVE:
            game = rules.play(game, game.seat, bot.choose_play(game))
        elif game.phase is rules.Phase.DOUBLE_OFFERED:
            game = getattr(rules, bot.answer_double(game))(game, game.to_act)
        elif game.phase is rules.Phase.ROLL_OR_DOUBLE and bot.wants_to_double(game):
            game = rules.double(game, game.seat)
        else:
            game = rules.roll(game, game.seat, (rng.randint(1, 6), rng.randint(1, 6)))
    review = review_game(bot, game)
    worst = review["mistakes"][0][0]
    assert worst["number"] == 1 and worst["dice"] == [3, 1] and worst["loss"] > 100
    assert worst["best"]["own"] == "8/5 6/5"
    assert review["players"][0]["error_rate"] > review["players"][1]["error_rate"]
    assert review["players"][0]["decisions"] > 5


def engine_context(game: rules.Game):  # noqa: ANN201 - a tiny helper for the test above
    from pbem.assistant.engine import CubeContext

    return CubeContext.of(game, game.seat)


def _plays_worth(*equities: float) -> dict[Position, float]:
    """Distinct positions (one more checker borne off each) worth the given equities."""
    return {Position(_side({6: 15 - off}), _side({6: 15})): equity for off, equity in enumerate(equities)}


def test_only_plays_close_to_the_best_are_searched_deeper_best_first() -> None:
    from pbem.assistant.engine import CLOSE_PLAY, CLOSE_PLAYS_SEARCHED, close_plays

    clear = _plays_worth(0.30, 0.30 - CLOSE_PLAY - 0.001, 0.10)
    assert [clear[each] for each in close_plays(clear)] == [0.30]
    close = _plays_worth(0.10, 0.30, 0.28, 0.29, 0.295, 0.285)
    assert [close[each] for each in close_plays(close)] == [0.30, 0.295, 0.29, 0.285][:CLOSE_PLAYS_SEARCHED]
    pinned = _plays_worth(-1.0, -1.0, -1.0)  # every play loses the same cash: nothing to search
    assert len(close_plays(pinned)) == 1
    far = _plays_worth(-2.5, -2.6, -3.0, -3.1)  # a decided game: the backgammon is at stake
    assert [far[each] for each in close_plays(far)] == [-2.5]
    assert [far[each] for each in close_plays(far, decided=True)] == [-2.5, -2.6, -3.0, -3.1]


def test_a_play_that_ends_the_game_is_never_searched_deeper() -> None:
    from pbem.assistant.engine import close_plays

    won, not_yet = Position(_side({}), _side({6: 15})), Position(_side({2: 1}), _side({6: 15}))
    assert won.mover_off == 15
    assert close_plays({not_yet: 1.0, won: 0.99}) == [not_yet]


class _DeeperSearch:
    """Stands in for the deeper search: fixed equities per play, and the plays it was asked about."""

    def __init__(self, equities: dict[Position, float]) -> None:
        self.equities, self.asked = equities, []

    def equity(self, before: Position, after: Position, context) -> float:  # noqa: ANN001
        self.asked.append(after)
        return self.equities[after]


def test_the_deeper_search_decides_between_close_plays_only(monkeypatch) -> None:
    bot = engine(2)
    assert bot is not None and bot.deep_plies == 3
    game = replace(_game({}, {}), board=Position.start(), phase=rules.Phase.TO_MOVE, dice=(3, 1))
    shallow = bot.play_equities(game.board, game.dice, engine_context(game))
    ranked = sorted(shallow, key=lambda after: -shallow[after])
    assert shallow[ranked[0]] - shallow[ranked[1]] > 0.04  # 8/5 6/5 by far: no deeper search
    search = _DeeperSearch({})
    monkeypatch.setattr(bot, "_deep_plays", search)
    assert apply_play(game.board, bot.choose_play(game)) == ranked[0] and search.asked == []

    game = replace(game, dice=(2, 1))  # 13/11 6/5 or 24/23 13/11 and others, all close at the opening
    shallow = bot.play_equities(game.board, game.dice, engine_context(game))
    ranked = sorted(shallow, key=lambda after: -shallow[after])
    assert shallow[ranked[0]] - shallow[ranked[1]] < 0.04
    search = _DeeperSearch({ranked[0]: 0.0, ranked[1]: 0.01})
    monkeypatch.setattr(bot, "_deep_plays", search)
    assert apply_play(game.board, bot.choose_play(game)) == ranked[1]
    assert search.asked == ranked[:2]


def test_in_a_decided_game_plays_far_apart_are_searched_deeper_for_the_backgammon() -> None:
    """A lost game, cube 2 at 0-0 of a 5-point match: a backgammon (6 points) loses the match, a
    gammon does not.  gnubg at 2-ply: 23/17 19/17 (-2.995) saves it best, 23/21 23/17 (-3.230)
    is a very bad move; 2 plies ranks 23/17 19/17 ninth, 0.5 behind its best, 23/21 23/17."""
    from pbem.rules.gnubg_ids import position_from_id
    from pbem.rules.notation import Colour, Numbering, format_play

    game = rules.Game(rules=MatchRules(format=Format.MATCH, length=5), score=(0, 0), crawford=False,
                      board=position_from_id("JwAAwGwXgCQDAA"), seat=0, phase=rules.Phase.TO_MOVE, dice=(6, 2),
                      cube=2, cube_owner=0)
    bot = engine(2)
    assert bot is not None
    assert format_play(game.board, bot.choose_play(game), Numbering.OWN, Colour.of_seat(0)) == "23/17 19/17"
