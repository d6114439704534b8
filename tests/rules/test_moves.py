"""Legal plays and play validation: hand-written rule cases and properties against a reference.

Boards are written as ``{point: checkers}`` in the mover's numbering for both sides (25 = the
mover's bar); the opponent's bar is given separately.
"""

from __future__ import annotations

import itertools
import pickle
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.rules.moves import IllegalPlay, apply_play, apply_step, check_play, legal_plays
from pbem.rules.position import BAR, Position


def board(mover: dict[int, int], opponent: dict[int, int] | None = None, opponent_bar: int = 0) -> Position:
    """A position from point counts in the mover's numbering (opponent checkers included)."""
    mover_side = [0] * 25
    for point, count in mover.items():
        mover_side[point - 1] = count
    opponent_side = [0] * 25
    for point, count in (opponent or {}).items():
        opponent_side[24 - point] = count
    opponent_side[24] = opponent_bar
    return Position(tuple(mover_side), tuple(opponent_side))


def counts(position: Position) -> dict[int, int]:
    """The mover's checkers as ``{point: count}`` (25 = bar)."""
    return {index + 1: count for index, count in enumerate(position.mover) if count}


def reason(position: Position, dice: tuple[int, int], steps: list[tuple[int, int]]) -> IllegalPlay:
    with pytest.raises(IllegalPlay) as caught:
        check_play(position, dice, steps)
    return caught.value


# --- legal plays: hand-written cases ------------------------------------------------------------


def test_opening_rolls_have_the_known_number_of_plays() -> None:
    start = Position.start()
    assert len(legal_plays(start, (3, 1))) == 16
    assert len(legal_plays(start, (6, 5))) == 7
    assert apply_play(start, ((8, 5), (6, 5))) in legal_plays(start, (3, 1))


def test_plays_are_written_from_the_back_and_reach_their_position() -> None:
    start = Position.start()
    plays = legal_plays(start, (6, 5))
    assert plays[apply_play(start, ((24, 18), (18, 13)))] == ((24, 18), (18, 13))
    assert plays[apply_play(start, ((13, 8), (24, 18)))] == ((24, 18), (13, 8))


def test_turn_is_not_passed() -> None:
    start = Position.start()
    for reached in legal_plays(start, (4, 2)):
        assert reached.opponent == start.opponent
        assert sum(reached.mover) == 15


def test_blocked_points_are_not_landed_on() -> None:
    position = board({13: 1, 1: 14}, {7: 2, 8: 3})
    assert legal_plays(position, (6, 5)) == {}


def test_a_blot_is_hit_and_goes_to_the_opponents_bar() -> None:
    position = board({13: 1, 1: 14}, {9: 1, 5: 2})
    plays = legal_plays(position, (4, 3))
    hit = apply_play(position, ((13, 9), (9, 6)))
    assert hit in plays
    assert hit.opponent[24] == 1 and hit.opponent[24 - 9] == 0
    assert plays[hit] == ((13, 9), (9, 6))
    passing = apply_play(position, ((13, 10), (10, 6)))
    assert passing.opponent[24] == 0 and passing in plays


def test_several_on_the_bar_only_some_can_enter() -> None:
    """Three on the bar, 5-3 with the 5-point entry (20) blocked: one enters, nothing else moves."""
    position = board({25: 3, 6: 12}, {20: 2})
    plays = legal_plays(position, (5, 3))
    assert list(plays.values()) == [((25, 22),)]


def test_several_on_the_bar_enter_with_doubles_and_then_the_rest_moves() -> None:
    position = board({25: 2, 13: 2, 6: 11}, {21: 1, 19: 2, 17: 2})
    plays = legal_plays(position, (4, 4))
    assert plays
    for play in plays.values():
        assert play[:2] == ((25, 21), (25, 21))
        assert len(play) == 4
    assert apply_play(position, ((25, 21), (25, 21), (13, 9), (13, 9))) in plays
    assert all(reached.opponent[24] == 1 for reached in plays)


def test_doubles_enter_all_three_from_the_bar_before_the_fourth_die_moves() -> None:
    position = board({25: 3, 6: 12}, {19: 2, 21: 3, 22: 2, 23: 2, 24: 2})
    plays = legal_plays(position, (5, 5))
    entered = ((25, 20),) * 3
    assert set(plays.values()) == {entered + ((20, 15),), entered + ((6, 1),)}


def test_four_on_the_bar_and_the_entry_point_blocked_for_one_die() -> None:
    position = board({25: 4, 6: 11}, {20: 2})
    assert legal_plays(position, (5, 5)) == {}
    assert list(legal_plays(position, (5, 2)).values()) == [((25, 23),)]


def test_closed_board_with_a_checker_on_the_bar_has_no_play() -> None:
    position = board({25: 1, 6: 14}, {point: 2 for point in range(19, 25)})
    for dice in itertools.product(range(1, 7), repeat=2):
        assert legal_plays(position, dice) == {}
    assert check_play(position, (6, 6), []) == position


def test_entered_checker_must_come_home_before_bearing_off() -> None:
    """All others are home, but the checker from the bar uses every six to come home."""
    position = board({25: 1, 6: 4, 5: 5, 4: 5})
    assert list(legal_plays(position, (6, 6)).values()) == [((25, 19), (19, 13), (13, 7), (7, 1))]


def test_bearing_off_is_allowed_once_the_last_checker_came_home_in_the_same_turn() -> None:
    position = board({7: 1, 6: 14})
    assert list(legal_plays(position, (6, 6)).values()) == [((7, 1), (6, 0), (6, 0), (6, 0))]


def test_bearing_off_is_not_allowed_with_a_checker_outside() -> None:
    position = board({8: 1, 6: 14}, {2: 2})
    assert legal_plays(position, (6, 6)) == {}


def test_hit_during_bear_off() -> None:
    position = board({6: 2, 5: 3, 4: 4, 2: 6}, {3: 1, 12: 14})
    plays = legal_plays(position, (3, 1))
    hits = [reached for reached in plays if reached.opponent[24] == 1]
    assert apply_play(position, ((6, 3), (3, 2))) in hits
    assert apply_play(position, ((6, 3), (4, 3))) in hits
    assert apply_play(position, ((4, 3), (3, 0))) in hits
    assert all(reached.opponent[24] + sum(reached.opponent[:24]) == 15 for reached in plays)


def test_higher_die_bears_off_from_the_highest_point_only() -> None:
    position = board({5: 1, 2: 1})
    plays = legal_plays(position, (6, 3))
    assert {tuple(sorted(counts(reached).items())) for reached in plays} == {(), ((2, 1),)}
    assert plays[board({2: 1})] == ((5, 2), (2, 0))
    assert plays[board({})] == ((5, 0), (2, 0))


def test_exact_die_bears_off_from_its_point_even_with_higher_checkers() -> None:
    position = board({6: 1, 3: 1})
    plays = legal_plays(position, (3, 1))
    assert board({5: 1}) in plays  # 3/off 6/5
    assert board({6: 1, 3: 0}) not in plays  # 3/off alone would leave the 1 unused


def test_smaller_die_first_makes_the_larger_one_playable() -> None:
    """6-1: nothing plays a six at first, but 13/12 opens 12/6, so both dice must be used."""
    position = board({13: 1, 2: 14}, {7: 2})
    assert list(legal_plays(position, (6, 1)).values()) == [((13, 12), (12, 6))]


def test_only_one_die_playable_must_be_the_larger() -> None:
    position = board({13: 1}, {2: 2})
    assert list(legal_plays(position, (6, 5)).values()) == [((13, 7),)]


def test_only_the_smaller_die_playable_is_played() -> None:
    position = board({13: 1}, {2: 2, 7: 2})
    assert list(legal_plays(position, (6, 5)).values()) == [((13, 8),)]


def test_larger_die_rule_in_the_bear_off() -> None:
    """With one checker left either die bears it off; both plays reach the same position."""
    position = board({5: 1})
    assert list(legal_plays(position, (6, 5)).values()) == [((5, 0),)]


def test_doubles_of_which_only_two_can_be_played() -> None:
    position = board({20: 1, 1: 14}, {8: 2})
    assert list(legal_plays(position, (4, 4)).values()) == [((20, 16), (16, 12))]


def test_doubles_of_which_three_can_be_played() -> None:
    position = board({20: 1, 1: 14}, {8: 2})
    assert list(legal_plays(position, (3, 3)).values()) == [((20, 17), (17, 14), (14, 11))]


def test_bear_off_ends_before_all_dice_are_used() -> None:
    position = board({1: 2})
    assert list(legal_plays(position, (4, 4)).values()) == [((1, 0), (1, 0))]


# --- apply_step --------------------------------------------------------------------------------


def test_apply_step_refuses_what_cannot_happen_on_a_board() -> None:
    start = Position.start()
    for step in [(20, 15), (13, 19), (26, 20), (13, 13), (24, 19)]:
        with pytest.raises(ValueError):
            apply_step(start, step)
    with pytest.raises(ValueError):
        apply_step(start, (25, 20))


# --- check_play: accepted plays ------------------------------------------------------------------


def test_check_play_accepts_any_order_and_combined_steps() -> None:
    start = Position.start()
    expected = apply_play(start, ((24, 18), (13, 8)))
    assert check_play(start, (6, 5), [(13, 8), (24, 18)]) == expected
    assert check_play(start, (5, 6), [(24, 18), (13, 8)]) == expected
    assert check_play(start, (6, 5), [(24, 13)]) == apply_play(start, ((24, 18), (18, 13)))
    assert check_play(start, (4, 4), [(24, 16), (13, 5)]) == apply_play(
        start, ((24, 20), (20, 16), (13, 9), (9, 5))
    )


def test_combined_step_finds_the_open_intermediate_point() -> None:
    position = board({13: 1, 2: 14}, {7: 2})
    assert check_play(position, (6, 1), [(13, 6)]) == board({6: 1, 2: 14}, {7: 2})


def test_combined_step_over_a_blot_prefers_not_to_hit() -> None:
    position = board({13: 1, 1: 14}, {9: 1, 5: 2})
    reached = check_play(position, (4, 3), [(13, 6)])
    assert reached.opponent[24] == 0
    assert check_play(position, (4, 3), [(13, 9), (9, 6)]).opponent[24] == 1


def test_combined_step_hits_when_the_only_way_passes_a_blot() -> None:
    position = board({13: 1, 1: 14}, {9: 1, 10: 2})
    assert check_play(position, (4, 3), [(13, 6)]).opponent[24] == 1


def test_other_intermediate_points_reaching_the_same_position_are_accepted() -> None:
    start = Position.start()
    expected = apply_play(start, ((24, 20), (20, 18)))
    assert check_play(start, (4, 2), [(24, 22), (22, 18)]) == expected
    assert check_play(start, (4, 2), [(22, 18), (24, 22)]) == expected


def test_bar_entry_may_be_written_after_the_other_step() -> None:
    position = board({25: 1, 13: 5, 6: 9})
    assert check_play(position, (6, 2), [(13, 7), (25, 23)]) == board({23: 1, 13: 4, 7: 1, 6: 9})


def test_no_play_possible_and_nothing_stated_is_accepted() -> None:
    position = board({13: 1, 1: 14}, {7: 2, 8: 3})
    assert check_play(position, (6, 5), []) == position


def test_bear_off_written_in_either_order_is_accepted() -> None:
    position = board({5: 1, 2: 1})
    assert check_play(position, (6, 3), [(2, 0), (5, 0)]) == board({})
    assert check_play(position, (6, 3), [(5, 0)]) == board({2: 1})  # the position of 5/2 2/off
    assert check_play(position, (6, 3), [(5, 2), (2, 0)]) == board({2: 1})


# --- check_play: reasons ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("position", "dice", "steps", "code", "details"),
    [
        (Position.start(), (6, 5), [(20, 14), (13, 8)], "no_checker", {"from": 20, "to": 14, "point": 20}),
        (Position.start(), (6, 5), [(25, 19), (13, 8)], "no_checker", {"from": 25, "to": 19, "point": 25}),
        (Position.start(), (6, 5), [(24, 19), (13, 7)], "blocked", {"from": 24, "to": 19, "point": 19}),
        (board({25: 1, 13: 14}), (6, 5), [(13, 7), (13, 8)], "bar_first", {"from": 13, "to": 7}),
        (board({7: 1, 6: 14}), (6, 1), [(7, 6), (6, 0)], None, None),
        (board({8: 1, 6: 14}), (6, 1), [(8, 7), (6, 0)], "bearing_off_not_allowed", {"from": 6, "to": 0}),
        (Position.start(), (6, 5), [(24, 20), (13, 8)], "wrong_die", {"from": 24, "to": 20, "dice": "6", "distance": 4}),
        (Position.start(), (6, 5), [(24, 12)], "wrong_die", {"from": 24, "to": 12, "dice": "6-5", "distance": 12}),
        (board({5: 2, 2: 1}), (4, 3), [(2, 0), (5, 1)], "wrong_die", {"from": 2, "to": 0, "dice": "3", "distance": 2}),
        (Position.start(), (6, 5), [(24, 18)], "dice_not_fully_used", {"used": 1, "possible": 2}),
        (Position.start(), (6, 5), [], "dice_not_fully_used", {"used": 0, "possible": 2}),
        (Position.start(), (3, 3), [(24, 21), (13, 10)], "dice_not_fully_used", {"used": 2, "possible": 4}),
        (board({13: 1}, {2: 2}), (6, 5), [(13, 8)], "larger_die_required", {"die": 6, "smaller": 5}),
        (Position.start(), (6, 5), [(24, 18), (13, 8), (8, 3)], "too_many_steps", {"steps": 3, "dice": "6-5"}),
        (Position.start(), (6, 5), [(24, 13), (13, 8)], "beyond_dice", {"dice": "6-5"}),
        (Position.start(), (3, 1), [(24, 20), (8, 7)], "beyond_dice", {"dice": "3-1"}),
        (board({25: 1, 6: 14}, {p: 2 for p in range(19, 25)}), (6, 5), [(25, 19)], "no_move_possible", {"dice": "6-5"}),
        (Position.start(), (6, 5), [(8, 13), (24, 18)], "wrong_direction", {"from": 8, "to": 13}),
        (Position.start(), (6, 5), [(30, 24), (24, 18)], "no_such_point", {"from": 30, "to": 24}),
    ],
)
def test_check_play_reasons(
    position: Position,
    dice: tuple[int, int],
    steps: list[tuple[int, int]],
    code: str | None,
    details: dict[str, int | str] | None,
) -> None:
    if code is None:
        assert check_play(position, dice, steps) in legal_plays(position, dice)
        return
    error = reason(position, dice, steps)
    assert (error.code, error.details) == (code, details)
    assert str(error) and "{" not in str(error)


def test_blocked_intermediate_point_of_a_combined_step_is_named() -> None:
    position = board({13: 1, 12: 1, 1: 13}, {7: 2, 8: 2})
    error = reason(position, (6, 5), [(13, 2)])
    assert (error.code, error.details["point"]) == ("blocked", 7)


def test_a_blocked_entry_is_named_rather_than_bar_first() -> None:
    position = board({25: 1, 13: 14}, {20: 2})
    error = reason(position, (6, 5), [(13, 8), (25, 20)])
    assert (error.code, error.details) == ("blocked", {"from": 25, "to": 20, "point": 20})


def test_reason_survives_pickling() -> None:
    error = reason(Position.start(), (6, 5), [(24, 18)])
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.details, str(copy)) == (error.code, error.details, str(error))


def test_reason_is_plain_english() -> None:
    assert str(reason(Position.start(), (6, 5), [(24, 19), (13, 7)])) == (
        "24/19: point 19 is blocked by two or more opposing checkers."
    )
    assert "the bar" in str(reason(Position.start(), (6, 5), [(25, 19), (13, 8)]))


# --- properties against a plain reference ---------------------------------------------------------


def reference_steps(position: Position, die: int) -> list[tuple[int, int]]:
    """Single-die steps, straight from the rules."""
    mover, opponent = position.mover, position.opponent
    origins = [25] if mover[24] else [point for point in range(1, 25) if mover[point - 1]]
    all_home = sum(mover[6:]) == 0
    steps = []
    for origin in origins:
        target = origin - die
        if target >= 1:
            if opponent[24 - target] < 2:
                steps.append((origin, target))
        elif all_home:
            higher_checkers = sum(mover[origin:6])
            if target == 0 or higher_checkers == 0:
                steps.append((origin, 0))
    return steps


def reference_move(position: Position, step: tuple[int, int]) -> Position:
    mover, opponent = list(position.mover), list(position.opponent)
    origin, target = step
    mover[origin - 1] -= 1
    if target:
        mover[target - 1] += 1
        if opponent[24 - target] == 1:
            opponent[24 - target] = 0
            opponent[24] += 1
    return Position(tuple(mover), tuple(opponent))


def reference_plays(position: Position, dice: tuple[int, int]) -> tuple[set[Position], int]:
    """Legal resulting positions and the number of dice they use, by trying every sequence."""
    orders = [(dice[0],) * 4] if dice[0] == dice[1] else [dice, (dice[1], dice[0])]
    finals: dict[tuple[Position, tuple[int, ...]], None] = {}
    seen: set[tuple[Position, tuple[int, ...], tuple[int, ...]]] = set()

    def play(current: Position, remaining: tuple[int, ...], used: tuple[int, ...]) -> None:
        if (current, remaining, used) in seen:
            return
        seen.add((current, remaining, used))
        steps = reference_steps(current, remaining[0]) if remaining else []
        if not steps:
            finals[(current, used)] = None
        for step in steps:
            play(reference_move(current, step), remaining[1:], used + (remaining[0],))

    for order in orders:
        play(position, order, ())
    most = max(len(used) for _, used in finals)
    best = [(final, used) for final, used in finals if len(used) == most]
    if most == 1 and any(used[0] == max(dice) for _, used in best):
        best = [(final, used) for final, used in best if used[0] == max(dice)]
    return ({final for final, _ in best} if most else set()), most


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Valid positions: anywhere, late in the game, or bearing off with perhaps one straggler."""
    highest_index = draw(st.sampled_from([24, 11, 5]))
    mover = [0] * 25
    for _ in range(draw(st.integers(1, 15))):
        mover[draw(st.integers(0, highest_index))] += 1
    if highest_index == 5 and sum(mover) < 15 and draw(st.booleans()):
        mover[draw(st.integers(6, 24))] += 1
    free = [index for index in range(24) if not mover[23 - index]] + [24]
    opponent = [0] * 25
    for _ in range(draw(st.integers(0, 15))):
        opponent[draw(st.sampled_from(free))] += 1
    return Position(tuple(mover), tuple(opponent))


rolls = st.tuples(st.integers(1, 6), st.integers(1, 6))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(), rolls)
def test_legal_plays_equal_the_reference(position: Position, dice: tuple[int, int]) -> None:
    plays = legal_plays(position, dice)
    expected, most = reference_plays(position, dice)
    assert set(plays) == expected
    assert all(len(play) == most for play in plays.values())


@settings(max_examples=200, deadline=None)
@given(positions(), rolls)
def test_plays_conserve_checkers_and_reach_their_position(position: Position, dice: tuple[int, int]) -> None:
    for reached, play in legal_plays(position, dice).items():
        Position(reached.mover, reached.opponent)  # still a valid board
        borne_off = sum(1 for _, target in play if target == 0)
        assert reached.mover_off == position.mover_off + borne_off
        assert sum(reached.opponent) == sum(position.opponent)
        assert reached.opponent[24] - position.opponent[24] == sum(
            1 for a, b in zip(position.opponent[:24], reached.opponent[:24]) if a == 1 and b == 0
        )
        assert apply_play(position, play) == reached
        # The other side's view, made without the checks, is the checked one.
        swapped = reached.swap()
        assert swapped == Position(reached.opponent, reached.mover) and hash(swapped) == hash(
            Position(reached.opponent, reached.mover)) and swapped.swap() == reached


@settings(max_examples=100, deadline=None)
@given(positions(), rolls, st.randoms(use_true_random=False))
def test_check_play_accepts_every_play_in_any_order(
    position: Position, dice: tuple[int, int], rng: random.Random
) -> None:
    plays = legal_plays(position, dice)
    for reached in rng.sample(sorted(plays, key=lambda p: (p.mover, p.opponent)), min(10, len(plays))):
        orders = list(itertools.permutations(plays[reached]))
        for order in rng.sample(orders, min(2, len(orders))):
            assert check_play(position, dice, order) == reached


@settings(max_examples=150, deadline=None)
@given(positions(), rolls, st.data())
def test_check_play_accepts_exactly_the_legal_positions(
    position: Position, dice: tuple[int, int], data: st.DataObject
) -> None:
    """Steps played die by die that end in a legal position are accepted; others never reach an
    illegal one.  (A single stated step may also be read as a combined one: with 2-1 and the last
    checker on 2 next to a blot on 1, ``2/off`` is the only legal play ``2/1*/off``.)"""
    plays = legal_plays(position, dice)
    order = [dice[0]] * 4 if dice[0] == dice[1] else data.draw(st.permutations(dice))
    current, steps = position, []
    for die in order[: data.draw(st.integers(0, len(order)))]:
        candidates = reference_steps(current, die)
        if not candidates:
            break
        step = data.draw(st.sampled_from(candidates))
        steps.append(step)
        current = reference_move(current, step)
    if current in plays or (not plays and not steps):
        assert check_play(position, dice, steps).mover == current.mover
    else:
        try:
            reached = check_play(position, dice, steps)
        except IllegalPlay:
            return
        assert reached in plays and len(steps) < len(next(iter(plays.values())))


def test_a_bare_bear_off_may_stand_for_the_only_legal_play_through_a_hit() -> None:
    """2-1, the last checker on 2, a blot on 1: both dice must be used, so ``2/off`` is ``2/1*/off``."""
    mover = [0] * 25
    mover[1] = 1
    opponent = [0] * 25
    opponent[23] = 1
    position = Position(tuple(mover), tuple(opponent))
    (only,) = legal_plays(position, (2, 1))
    assert check_play(position, (2, 1), [(2, 0)]) == only
    assert only.mover_off == 15 and only.opponent[BAR] == 1


def test_kept_legal_plays_are_a_new_dict_each_time():
    """legal_plays keeps its answers (a mail asks several times); a caller changing the dict it
    got, or asking with a list of dice, changes nothing for the next."""
    start = Position.start()
    first = legal_plays(start, (3, 1))
    first.clear()
    again = legal_plays(start, [3, 1])  # type: ignore[arg-type]
    assert again and again == legal_plays(start, (1, 3)) | legal_plays(start, (3, 1))
    assert again is not legal_plays(start, (3, 1))
