"""The ladder's standing (pbem.rules.ladder): every change keeps a permutation of its players,
and places move only as the rules say."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pbem.rules.ladder import LadderError, Standing, can_challenge, join, leave, place, result

standings = st.lists(st.integers(1, 500), min_size=2, max_size=40, unique=True).map(tuple)


@st.composite
def challenges(draw: st.DrawFn) -> tuple[Standing, int, int, int]:
    """A standing, a challenger, a defender above them within the reach, and the reach."""
    standing: Standing = draw(standings)
    below = draw(st.integers(2, len(standing)))
    reach = draw(st.integers(1, 6))
    above = draw(st.integers(max(1, below - reach), below - 1))
    return standing, standing[below - 1], standing[above - 1], reach


@given(standings, st.integers(501, 600))
def test_join_puts_the_newcomer_at_the_bottom(standing: Standing, newcomer: int) -> None:
    joined = join(standing, newcomer)
    assert joined[:-1] == standing and place(joined, newcomer) == len(standing) + 1


@given(standings)
def test_joining_twice_is_refused(standing: Standing) -> None:
    with pytest.raises(LadderError) as refused:
        join(standing, standing[0])
    assert refused.value.code == "already_on"


@given(standings, st.data())
def test_leave_moves_everyone_below_up_one(standing: Standing, data: st.DataObject) -> None:
    leaver = data.draw(st.sampled_from(standing))
    left = leave(standing, leaver)
    assert sorted(left) == sorted(set(standing) - {leaver})
    for other in left:
        before, after = place(standing, other), place(left, other)
        assert before is not None and after is not None
        assert after == (before - 1 if before > standing.index(leaver) + 1 else before)
    with pytest.raises(LadderError):
        leave(left, leaver)


@given(challenges())
def test_a_challenge_within_reach_is_allowed(case: tuple[Standing, int, int, int]) -> None:
    standing, challenger, defender, reach = case
    assert can_challenge(standing, challenger, defender, reach)


@given(standings, st.data(), st.integers(1, 6))
def test_no_challenge_down_sideways_or_beyond_reach(standing: Standing, data: st.DataObject, reach: int) -> None:
    challenger, defender = data.draw(st.sampled_from(standing)), data.draw(st.sampled_from(standing))
    distance = standing.index(challenger) - standing.index(defender)
    assert can_challenge(standing, challenger, defender, reach) == (0 < distance <= reach)
    assert not can_challenge(standing, challenger, 10_000, reach)
    assert not can_challenge(standing, 10_000, defender, reach)


@given(challenges())
def test_a_winning_challenger_takes_the_defenders_place(case: tuple[Standing, int, int, int]) -> None:
    standing, challenger, defender, _ = case
    after = result(standing, challenger, defender, challenger_won=True)
    assert sorted(after) == sorted(standing)  # still a permutation of the same players
    high, low = standing.index(defender), standing.index(challenger)
    assert after.index(challenger) == high
    assert after[:high] == standing[:high] and after[low + 1:] == standing[low + 1:]  # outside: untouched
    assert after[high + 1:low + 1] == standing[high:low]  # between: each down one, in order


@given(challenges())
def test_a_losing_challenger_changes_nothing(case: tuple[Standing, int, int, int]) -> None:
    standing, challenger, defender, _ = case
    assert result(standing, challenger, defender, challenger_won=False) == standing


@given(standings, st.data(), st.booleans())
def test_a_winner_already_above_or_a_player_gone_changes_nothing(
        standing: Standing, data: st.DataObject, challenger_won: bool) -> None:
    first, second = data.draw(st.sampled_from(standing)), data.draw(st.sampled_from(standing))
    assume(first != second)
    upper, lower = sorted((first, second), key=standing.index)
    # the "challenger" stands higher by now (the standing changed while the match ran)
    assert result(standing, upper, lower, challenger_won=True) == standing
    gone = leave(standing, lower)
    assert result(gone, lower, upper, challenger_won) == gone
    assert result(gone, upper, lower, challenger_won) == gone


@given(standings, st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39), st.booleans()), max_size=30))
def test_any_sequence_of_results_keeps_a_permutation(standing: Standing, games: list[tuple[int, int, bool]]) -> None:
    current = standing
    for low, high, won in games:
        if low < len(current) and high < len(current) and low != high:
            current = result(current, current[low], current[high], won)
    assert sorted(current) == sorted(standing) and len(set(current)) == len(current)


def test_an_example() -> None:
    standing = (1, 2, 3, 4, 5)
    assert can_challenge(standing, 5, 2, 3) and not can_challenge(standing, 5, 1, 3)
    assert result(standing, 5, 2, True) == (1, 5, 2, 3, 4)
    assert result(standing, 5, 2, False) == standing
    assert leave(result(standing, 5, 2, True), 1) == (5, 2, 3, 4)
