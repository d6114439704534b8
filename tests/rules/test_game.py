"""The game state machine: opening, rolls, plays, cube actions, results, resignation, draw."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.rules import game as g
from pbem.rules.game import ActionKind, Game, Phase, RuleError
from pbem.rules.gnubg_ids import GameState, match_id
from pbem.rules.moves import IllegalPlay, legal_plays
from pbem.rules.position import CHECKERS, Position
from pbem.rules.scoring import Ending, Format, MatchRules, Score, WinKind

SINGLE = MatchRules()
MONEY = MatchRules(Format.MONEY, length=0)
BEAVER = MatchRules(Format.MONEY, length=0, beaver=True)
JACOBY = MatchRules(Format.MONEY, length=0, jacoby=True)


def side(**points: int) -> tuple[int, ...]:
    """A side from keyword points: ``p6=5`` puts five checkers on point 6, ``bar=1`` on the bar."""
    slots = [0] * 25
    for name, count in points.items():
        slots[24 if name == "bar" else int(name[1:]) - 1] = count
    return tuple(slots)


def started(rules: MatchRules = SINGLE, opening: tuple[int, int] = (3, 1), **score: object) -> Game:
    game = g.new_game(Score(rules, **score), opening)  # type: ignore[arg-type]
    assert game is not None
    return game


def at_roll(game: Game, board: Position, seat: int = 0) -> Game:
    """``game`` with ``board`` and ``seat`` about to roll or double."""
    return replace(game, board=board, seat=seat, phase=Phase.ROLL_OR_DOUBLE, dice=None)


def rolled(game: Game, board: Position, dice: tuple[int, int], seat: int = 0) -> Game:
    return g.roll(at_roll(game, board, seat), seat, dice)


def raises(code: str, action: object, *arguments: object) -> RuleError:
    with pytest.raises(RuleError) as caught:
        action(*arguments)  # type: ignore[operator]
    assert caught.value.code == code
    return caught.value


def test_opening_tie_asks_for_a_new_roll() -> None:
    assert g.new_game(Score(SINGLE), (4, 4)) is None


@pytest.mark.parametrize(("opening", "starter", "dice"), [((3, 1), 0, (3, 1)), ((2, 5), 1, (5, 2))])
def test_opening_higher_die_plays_both_dice(
    opening: tuple[int, int], starter: int, dice: tuple[int, int]
) -> None:
    game = started(opening=opening)
    assert (game.seat, game.to_act, game.phase, game.dice) == (starter, starter, Phase.TO_MOVE, dice)
    assert game.board == Position.start()
    assert game.record[0].kind is ActionKind.ROLL and game.record[0].dice == dice


def test_play_passes_the_turn_and_the_board_turns_round() -> None:
    game = started()
    after = g.play(game, 0, ((8, 5), (6, 5)))
    assert (after.seat, after.phase, after.dice, after.turn) == (1, Phase.ROLL_OR_DOUBLE, None, game.turn + 1)
    assert after.board.opponent[4] == 2 and after.board.mover == Position.start().mover
    assert after.record[-1].kind is ActionKind.MOVE


def test_play_records_the_generators_play_whatever_the_player_wrote() -> None:
    game = started(opening=(6, 5))
    after = g.play(game, 0, ((24, 13),))
    assert sorted(after.record[-1].play or ()) in ([(18, 13), (24, 18)], [(19, 13), (24, 19)])


def test_wrong_player_and_wrong_phase_are_refused() -> None:
    game = started()
    assert raises("not_your_turn", g.play, game, 1, ((8, 5), (6, 5))).details == {"to_act": 0}
    raises("already_rolled", g.double, game, 0)
    raises("already_rolled", g.roll, game, 0, (1, 2))
    raises("no_double_pending", g.take, game, 0)
    after = g.play(game, 0, ((8, 5), (6, 5)))
    raises("roll_first", g.play, after, 1, ((24, 23),))
    raises("invalid_dice", g.roll, after, 1, (0, 7))


def test_an_illegal_play_changes_nothing() -> None:
    game = started()
    with pytest.raises(IllegalPlay):
        g.play(game, 0, ((8, 2),))


def test_a_roll_that_cannot_be_played_passes_the_turn_by_itself() -> None:
    closed = Position(side(bar=1, p13=14), side(p1=2, p2=2, p3=2, p4=2, p5=2, p6=2, p13=3))
    game = rolled(started(), closed, (6, 6))
    assert game.turn_was_passed
    assert (game.seat, game.phase, game.board) == (1, Phase.ROLL_OR_DOUBLE, closed.swap())
    assert [action.kind for action in game.record[-2:]] == [ActionKind.ROLL, ActionKind.MOVE]
    assert not g.roll(game, 1, (3, 1)).turn_was_passed


def test_double_take_gives_the_cube_to_the_taker_and_the_doubler_must_roll() -> None:
    game = at_roll(started(MONEY), Position.start())
    assert g.can_double(game)
    offered = g.double(game, 0)
    assert (offered.phase, offered.to_act, offered.cube) == (Phase.DOUBLE_OFFERED, 1, 1)
    raises("not_your_turn", g.take, offered, 0)
    raises("double_pending", g.roll, offered, 0, (3, 1))
    taken = g.take(offered, 1)
    assert (taken.phase, taken.to_act, taken.cube, taken.cube_owner) == (Phase.TO_ROLL, 0, 2, 1)
    assert not g.can_double(taken)
    raises("cube_not_yours", g.double, taken, 0)
    after = g.play(g.roll(taken, 0, (3, 1)), 0, ((8, 5), (6, 5)))
    assert after.phase is Phase.ROLL_OR_DOUBLE  # the owner may redouble
    redoubled = g.take(g.double(after, 1), 0)
    assert (redoubled.cube, redoubled.cube_owner, redoubled.to_act) == (4, 0, 1)


def test_the_opponent_of_the_cube_owner_must_roll() -> None:
    game = replace(at_roll(started(MONEY), Position.start()), cube=2, cube_owner=0)
    after = g.play(g.roll(game, 0, (3, 1)), 0, ((8, 5), (6, 5)))
    assert after.phase is Phase.TO_ROLL
    raises("cube_not_yours", g.double, after, 1)


def test_drop_ends_the_game_for_the_value_before_the_double() -> None:
    game = replace(at_roll(started(MONEY), Position.start()), cube=4, cube_owner=0)
    dropped = g.drop(g.double(game, 0), 1)
    assert dropped.phase is Phase.OVER and dropped.to_act is None
    assert dropped.result == g.Result(winner=0, kind=WinKind.SINGLE, cube=4, ending=Ending.DROPPED, points=4)
    raises("game_over", g.roll, dropped, 1, (3, 1))


def test_cube_cap_stops_doubling() -> None:
    capped = replace(
        at_roll(started(MatchRules(Format.MONEY, length=0, cube_cap=8)), Position.start()),
        cube=8,
        cube_owner=0,
    )
    assert raises("cube_at_cap", g.double, capped, 0).details == {"cap": 8}
    at_64 = replace(at_roll(started(MONEY), Position.start()), cube=64, cube_owner=0)
    raises("cube_at_cap", g.double, at_64, 0)
    assert g.double(replace(at_64, cube=32), 0).record[-1].cube == 64


def test_beaver_keeps_the_cube_and_the_doubler_answers() -> None:
    offered = g.double(at_roll(started(BEAVER), Position.start()), 0)
    beavered = g.beaver(offered, 1)
    assert (beavered.phase, beavered.to_act, beavered.cube, beavered.cube_owner) == (
        Phase.DOUBLE_OFFERED,
        0,
        2,
        1,
    )
    assert beavered.record[-1].kind is ActionKind.BEAVER and beavered.record[-1].cube == 4
    raises("beaver_not_allowed", g.beaver, beavered, 0)
    taken = g.take(beavered, 0)
    assert (taken.cube, taken.cube_owner, taken.to_act, taken.phase) == (4, 1, 0, Phase.TO_ROLL)
    dropped = g.drop(beavered, 0)
    assert dropped.result is not None
    assert (dropped.result.winner, dropped.result.points) == (1, 2)


def test_beaver_only_in_money_play_with_beavers_enabled() -> None:
    raises("beaver_not_allowed", g.beaver, g.double(at_roll(started(MONEY), Position.start()), 0), 1)
    match = at_roll(started(MatchRules(Format.MATCH, length=7)), Position.start())
    raises("beaver_not_allowed", g.beaver, g.double(match, 0), 1)
    near_cap = replace(at_roll(started(BEAVER), Position.start()), cube=32, cube_owner=0)
    raises("cube_at_cap", g.beaver, g.double(near_cap, 0), 1)


def test_no_doubling_in_the_crawford_game_but_again_after_it() -> None:
    rules = MatchRules(Format.MATCH, length=5)
    crawford = started(rules, points=(4, 2))
    assert crawford.crawford
    after = g.play(crawford, 0, ((8, 5), (6, 5)))
    assert after.phase is Phase.TO_ROLL
    raises("crawford_game", g.double, replace(after, phase=Phase.ROLL_OR_DOUBLE), 1)
    post = started(rules, points=(4, 2), crawford_played=True)
    assert not post.crawford
    assert g.play(post, 0, ((8, 5), (6, 5))).phase is Phase.ROLL_OR_DOUBLE


def test_dead_cube_the_leader_who_wins_the_match_with_any_win_may_not_double() -> None:
    rules = MatchRules(Format.MATCH, length=5)
    game = at_roll(started(rules, points=(4, 2), crawford_played=True), Position.start())
    assert raises("dead_cube", g.double, game, 0).details == {"cube": 1}
    assert g.play(g.roll(game, 0, (3, 1)), 0, ((8, 5), (6, 5))).phase is Phase.ROLL_OR_DOUBLE
    assert g.double(at_roll(game, Position.start(), seat=1), 1).phase is Phase.DOUBLE_OFFERED


LAST_CHECKER = side(p1=1)


@pytest.mark.parametrize(
    ("loser", "kind"),
    [
        (side(p6=14), WinKind.SINGLE),
        (side(p7=15), WinKind.GAMMON),
        (side(p7=14, p19=1), WinKind.BACKGAMMON),
        (side(p7=14, bar=1), WinKind.BACKGAMMON),
        (side(p18=15), WinKind.GAMMON),
    ],
)
def test_bearing_off_the_last_checker_wins_single_gammon_or_backgammon(
    loser: tuple[int, ...], kind: WinKind
) -> None:
    game = replace(rolled(started(MONEY), Position(LAST_CHECKER, loser), (2, 1)), cube=2, cube_owner=1)
    over = g.play(game, 0, ((1, 0),))
    assert over.phase is Phase.OVER
    assert over.result == g.Result(winner=0, kind=kind, cube=2, ending=Ending.PLAYED, points=2 * kind)


def test_jacoby_counts_a_gammon_single_with_a_centred_cube() -> None:
    gammon = Position(LAST_CHECKER, side(p7=15))
    over = g.play(rolled(started(JACOBY), gammon, (2, 1)), 0, ((1, 0),))
    assert over.result is not None and (over.result.kind, over.result.points) == (WinKind.GAMMON, 1)
    turned = replace(rolled(started(JACOBY), gammon, (2, 1)), cube=2, cube_owner=1)
    over = g.play(turned, 0, ((1, 0),))
    assert over.result is not None and over.result.points == 4


@pytest.mark.parametrize(
    ("board", "kind"),
    [
        (Position.start(), WinKind.BACKGAMMON),  # contact: a checker can still be hit and sent back
        (Position(side(p6=15), side(p12=15)), WinKind.GAMMON),  # a race, nothing left behind
        (Position(side(p6=15), side(p20=1, p12=14)), WinKind.BACKGAMMON),  # stuck in the winner's home
        (Position(side(p6=15), side(p12=14)), WinKind.SINGLE),  # the loser has borne one off
        (Position(side(p6=14, p20=1), side(p12=15)), WinKind.BACKGAMMON),  # the winner still behind
    ],
)
def test_resignation_scores_the_highest_result_still_possible(board: Position, kind: WinKind) -> None:
    # seat 1, the winner, is on roll: ``board`` is seen from the winner; seat 0 resigns.
    game = replace(at_roll(started(MONEY), board, seat=1), cube=2, cube_owner=0)
    over = g.resign(game, 0)
    assert over.result == g.Result(winner=1, kind=kind, cube=2, ending=Ending.RESIGNED, points=2 * kind)
    assert over.record[-1].kind is ActionKind.RESIGN


def test_resignation_by_the_player_on_roll_and_timeout_score_the_same() -> None:
    game = at_roll(started(MONEY), Position(side(p12=15), side(p6=15)))
    resigned = g.resign(game, 0)
    timed_out = g.timeout(game, 0)
    assert resigned.result is not None and timed_out.result is not None
    assert (resigned.result.winner, resigned.result.kind) == (1, WinKind.GAMMON)
    assert timed_out.result == replace(resigned.result, ending=Ending.TIMEOUT)
    assert timed_out.record[-1].kind is ActionKind.TIMEOUT


def test_resignation_with_jacoby_and_a_centred_cube_counts_single() -> None:
    over = g.resign(at_roll(started(JACOBY), Position.start()), 1)
    assert over.result is not None and (over.result.kind, over.result.points) == (WinKind.BACKGAMMON, 1)


def test_draw_when_both_offer() -> None:
    game = started()
    offered = g.offer_draw(game, 1)
    assert offered.draw_offer == 1 and offered.phase is Phase.TO_MOVE
    raises("draw_already_offered", g.offer_draw, offered, 1)
    drawn = g.offer_draw(offered, 0)
    assert drawn.phase is Phase.OVER
    assert drawn.result == g.Result(winner=None, kind=None, cube=1, ending=Ending.DRAWN, points=0)
    assert [action.kind for action in drawn.record[-2:]] == [ActionKind.DRAW_OFFER, ActionKind.DRAW]
    raises("game_over", g.offer_draw, drawn, 1)


def test_any_other_action_of_the_answering_player_withdraws_the_draw_offer() -> None:
    offered = g.offer_draw(started(), 1)
    assert g.play(offered, 0, ((8, 5), (6, 5))).draw_offer is None


def test_the_offering_players_own_actions_keep_the_draw_offer() -> None:
    offered = g.offer_draw(started(), 0)
    after = g.play(offered, 0, ((8, 5), (6, 5)))
    assert after.draw_offer == 0
    assert g.offer_draw(after, 1).result is not None


def test_a_resignation_offer_is_accepted_at_its_level_or_rejected() -> None:
    game = replace(started(MONEY), cube=2, cube_owner=1)  # seat 0 to move with 3-1
    offered = g.offer_resignation(game, 0, WinKind.GAMMON)
    assert offered.resign_offer == (0, WinKind.GAMMON) and offered.record == game.record
    raises("no_resignation_offered", g.accept_resignation, offered, 0)  # not one's own offer
    over = g.accept_resignation(offered, 1)
    assert over.result == g.Result(winner=1, kind=WinKind.GAMMON, cube=2, ending=Ending.RESIGNATION_ACCEPTED, points=4)
    assert over.record[-1] == g.Action(ActionKind.RESIGN, 0) and over.resign_offer is None
    rejected = g.reject_resignation(offered, 1)
    assert rejected.resign_offer is None and rejected.phase is Phase.TO_MOVE
    raises("no_resignation_offered", g.reject_resignation, rejected, 1)
    assert g.Game.from_dict(json.loads(json.dumps(offered.to_dict()))) == offered


def test_any_action_withdraws_a_resignation_offer() -> None:
    offered = g.offer_resignation(started(), 0, WinKind.SINGLE)
    assert g.play(offered, 0, ((8, 5), (6, 5))).resign_offer is None
    raises("no_resignation_offered", g.accept_resignation, g.play(offered, 0, ((8, 5), (6, 5))), 1)


def test_a_game_stored_before_resignation_offers_loads() -> None:
    stored = started().to_dict()
    del stored["resign_offer"]
    assert g.Game.from_dict(stored).resign_offer is None


def test_match_id_state_follows_gnubg_fields() -> None:
    game = started(MatchRules(Format.MATCH, length=5), opening=(1, 2))
    assert match_id(g.match_id_state(game)) == "cAmlAAAAAAAE"  # as gnubg shows it
    offered = g.double(g.play(game, 1, ((24, 23), (13, 11))), 0)
    state = g.match_id_state(offered)
    assert (state.player_on_roll, state.turn, state.double_offered, state.dice) == (0, 1, True, (0, 0))
    assert offered.board.mover == Position.start().mover  # still seen from the doubler
    over = g.drop(offered, 1)
    assert g.match_id_state(over).game_state is GameState.DROPPED


def test_an_offer_to_resign_is_in_the_match_id_as_gnubg_writes_it() -> None:
    """gnubg, ``new match 3`` (player 1 rolled 5-4), then ``resign normal``: cIlyAAAAAAAE became
    cKFyAAAAAAAE: the resignation's value set and the turn with the player who answers it."""
    game = started(MatchRules(Format.MATCH, length=3), opening=(4, 5))
    assert match_id(g.match_id_state(game)) == "cIlyAAAAAAAE"
    offered = g.offer_resignation(game, 1, WinKind.SINGLE)
    assert match_id(g.match_id_state(offered)) == "cKFyAAAAAAAE"
    assert g.match_id_state(g.offer_resignation(game, 1, WinKind.BACKGAMMON)).resignation_offered == 3
    assert match_id(g.match_id_state(g.reject_resignation(offered, 0))) == "cIlyAAAAAAAE"


def random_game(seed: int, score: Score | None = None, resign: float = 0.005, draw: float = 0.0) -> Game:
    """A whole game with random dice, plays and cube actions; checks invariants on the way."""
    rng = random.Random(seed)
    score = score or Score(BEAVER)
    rules = score.rules
    game = None
    while game is None:
        game = g.new_game(score, (rng.randint(1, 6), rng.randint(1, 6)))
    while game.phase is not Phase.OVER:
        seat = game.to_act
        assert seat is not None
        turn = game.turn
        if game.phase is Phase.TO_MOVE:
            assert game.dice is not None
            game = g.play(game, seat, rng.choice(list(legal_plays(game.board, game.dice).values())))
        elif game.phase is Phase.DOUBLE_OFFERED:
            choice = rng.random()
            if choice < 0.1:
                game = g.drop(game, seat)
            elif choice < 0.2 and not game.beavered and rules.beaver and game.cube * 4 <= rules.cube_cap:
                game = g.beaver(game, seat)
            else:
                game = g.take(game, seat)
        elif game.phase is Phase.ROLL_OR_DOUBLE and rng.random() < 0.1:
            game = g.double(game, seat)
        elif rng.random() < resign:
            game = g.resign(game, rng.randint(0, 1))
        elif rng.random() < draw:
            game = g.offer_draw(g.offer_draw(game, seat), 1 - seat)
        else:
            game = g.roll(game, seat, (rng.randint(1, 6), rng.randint(1, 6)))
        assert game.turn > turn
        assert sum(game.board.mover) <= CHECKERS and sum(game.board.opponent) <= CHECKERS
    return game


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6))
def test_random_games_end_with_a_consistent_result_and_round_trip_as_json(seed: int) -> None:
    game = random_game(seed)
    result = game.result
    assert result is not None and result.winner in (0, 1)
    assert result.points >= result.cube
    if result.ending is Ending.PLAYED:
        assert game.board.mover_off == CHECKERS and result.winner == game.seat
    assert Game.from_dict(json.loads(json.dumps(game.to_dict()))) == game
