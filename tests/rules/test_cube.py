"""The cube's own rules: ownership, cap, Crawford, dead cube, beaver, Jacoby."""

from __future__ import annotations

import pytest

from pbem.rules.cube import beaver_refusal, double_refusal, is_dead_cube, points_won
from pbem.rules.scoring import Format, MatchRules, WinKind

MONEY = MatchRules(Format.MONEY, length=0)
MATCH7 = MatchRules(Format.MATCH, length=7)


def test_centred_cube_may_be_turned_by_either_side() -> None:
    for seat in (0, 1):
        assert double_refusal(MONEY, (0, 0), 1, None, seat, crawford=False) is None


def test_only_the_owner_may_redouble() -> None:
    assert double_refusal(MONEY, (0, 0), 2, 1, 1, crawford=False) is None
    assert double_refusal(MONEY, (0, 0), 2, 1, 0, crawford=False) == "cube_not_yours"


def test_no_double_above_the_cap() -> None:
    assert double_refusal(MONEY, (0, 0), 32, 0, 0, crawford=False) is None
    assert double_refusal(MONEY, (0, 0), 64, 0, 0, crawford=False) == "cube_at_cap"
    capped = MatchRules(Format.MONEY, length=0, cube_cap=8)
    assert double_refusal(capped, (0, 0), 8, 0, 0, crawford=False) == "cube_at_cap"
    no_cube = MatchRules(Format.SINGLE, cube_cap=1)
    assert double_refusal(no_cube, (0, 0), 1, None, 0, crawford=False) == "cube_at_cap"


def test_no_double_in_the_crawford_game() -> None:
    assert double_refusal(MATCH7, (6, 2), 1, None, 1, crawford=True) == "crawford_game"
    assert double_refusal(MATCH7, (6, 2), 1, None, 1, crawford=False) is None  # post-Crawford


@pytest.mark.parametrize(
    ("score", "cube", "seat", "dead"),
    [
        ((6, 2), 1, 0, True),  # the leader wins the match with any win
        ((6, 2), 1, 1, False),  # the trailer post-Crawford: a free double is still a double
        ((5, 0), 2, 0, True),
        ((5, 0), 1, 0, False),
        ((4, 4), 2, 1, False),
    ],
)
def test_dead_cube_in_match_play(score: tuple[int, int], cube: int, seat: int, dead: bool) -> None:
    assert is_dead_cube(MATCH7, score, cube, seat) is dead
    assert (double_refusal(MATCH7, score, cube, None, seat, crawford=False) == "dead_cube") is dead


def test_cube_is_never_dead_outside_match_play() -> None:
    assert not is_dead_cube(MONEY, (100, 0), 1, 0)
    assert not is_dead_cube(MatchRules(Format.GAMES, length=3), (10, 0), 8, 0)


def test_beaver_only_when_enabled_and_under_the_cap() -> None:
    assert beaver_refusal(MONEY, 2) == "beaver_not_allowed"
    beavers = MatchRules(Format.MONEY, length=0, beaver=True)
    assert beaver_refusal(beavers, 2) is None
    assert beaver_refusal(beavers, 32) is None
    assert beaver_refusal(beavers, 64) == "cube_at_cap"


def test_jacoby_counts_gammons_single_until_the_cube_is_turned() -> None:
    jacoby = MatchRules(Format.MONEY, length=0, jacoby=True)
    assert points_won(jacoby, WinKind.GAMMON, 1) == 1
    assert points_won(jacoby, WinKind.BACKGAMMON, 1) == 1
    assert points_won(jacoby, WinKind.GAMMON, 2) == 4
    assert points_won(MONEY, WinKind.GAMMON, 1) == 2
    assert points_won(MATCH7, WinKind.BACKGAMMON, 4) == 12
