"""Formats and the running score: match with Crawford, money with stake, games N with ties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.rules.scoring import (
    Ending,
    Format,
    MatchRules,
    Result,
    Score,
    WinKind,
    add_result,
    is_crawford_game,
    is_over,
    is_post_crawford,
    money_balance,
    winner,
)


def win(seat: int, points: int, ending: Ending = Ending.PLAYED) -> Result:
    return Result(winner=seat, kind=WinKind.SINGLE, cube=points, ending=ending, points=points)


DRAW = Result(winner=None, kind=None, cube=1, ending=Ending.DRAWN, points=0)


def play_out(score: Score, *results: Result) -> Score:
    for result in results:
        score = add_result(score, result)
    return score


def test_single_game_is_over_after_one_game_and_the_winner_has_the_points() -> None:
    score = play_out(Score(MatchRules()), win(1, 4))
    assert is_over(score)
    assert winner(score) == 1
    assert score.points == (0, 4)


def test_drawn_single_game_has_no_winner() -> None:
    score = play_out(Score(MatchRules()), DRAW)
    assert is_over(score) and winner(score) is None and score.points == (0, 0)


def test_match_is_won_by_the_first_to_reach_the_length() -> None:
    score = Score(MatchRules(Format.MATCH, length=5))
    score = play_out(score, win(0, 2), win(1, 2))
    assert not is_over(score) and winner(score) is None
    score = play_out(score, win(1, 4))
    assert is_over(score) and winner(score) == 1
    assert score.points == (2, 6)


def test_crawford_game_is_the_first_game_after_reaching_length_minus_one_only() -> None:
    score = play_out(Score(MatchRules(Format.MATCH, length=5)), win(0, 2))
    assert not is_crawford_game(score)
    score = play_out(score, win(0, 2))  # 4-0: one away
    assert is_crawford_game(score) and not is_post_crawford(score)
    score = play_out(score, win(1, 1))  # the Crawford game
    assert not is_crawford_game(score) and is_post_crawford(score)
    score = play_out(score, win(1, 2), win(1, 1))  # 4-4: still post-Crawford, no second one
    assert score.points == (4, 4)
    assert not is_crawford_game(score) and is_post_crawford(score)


def test_crawford_applies_when_the_trailer_reaches_length_minus_one_first() -> None:
    score = play_out(Score(MatchRules(Format.MATCH, length=3)), win(1, 2))
    assert is_crawford_game(score)


def test_no_crawford_game_in_a_one_point_match_nor_outside_match_play() -> None:
    assert not is_crawford_game(Score(MatchRules(Format.MATCH, length=1)))
    assert not is_crawford_game(Score(MatchRules(Format.GAMES, length=3), points=(0, 0)))


def test_resigning_a_match_game_loses_the_match() -> None:
    for ending in (Ending.RESIGNED, Ending.TIMEOUT):
        score = play_out(Score(MatchRules(Format.MATCH, length=7)), win(0, 3), win(1, 2, ending))
        assert is_over(score) and winner(score) == 1
        assert score.points == (3, 7)


def test_resigning_a_game_of_a_series_loses_only_that_game() -> None:
    score = play_out(Score(MatchRules(Format.GAMES, length=3)), win(1, 2, Ending.RESIGNED))
    assert score.points == (0, 2) and not is_over(score)


def test_games_series_ends_after_n_games_and_can_be_tied() -> None:
    score = play_out(Score(MatchRules(Format.GAMES, length=3)), win(0, 2), win(1, 1))
    assert not is_over(score)
    tied = play_out(score, win(1, 1))
    assert is_over(tied) and winner(tied) is None and tied.points == (2, 2)
    won = play_out(score, win(1, 4))
    assert is_over(won) and winner(won) == 1


def test_draw_counts_as_a_game_of_a_series_with_no_points() -> None:
    score = play_out(Score(MatchRules(Format.GAMES, length=2)), win(0, 1), DRAW)
    assert is_over(score) and winner(score) == 0 and score.games == 2


def test_money_is_never_over_and_pays_points_times_stake() -> None:
    score = play_out(Score(MatchRules(Format.MONEY, length=0, stake=5)), win(0, 2), win(1, 8), win(0, 1))
    assert not is_over(score)
    assert winner(score) == 1
    assert money_balance(score) == (-25, 25)


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(1, 12)), max_size=30))
def test_money_balance_is_zero_sum_and_matches_points(games: list[tuple[int, int]]) -> None:
    score = play_out(Score(MatchRules(Format.MONEY, length=0, stake=3)), *(win(s, p) for s, p in games))
    first, second = money_balance(score)
    assert first == -second
    assert first == 3 * (sum(p for s, p in games if s == 0) - sum(p for s, p in games if s == 1))


@pytest.mark.parametrize(
    "arguments",
    [
        {"format": Format.SINGLE, "length": 3},
        {"format": Format.MONEY, "length": 5},
        {"format": Format.MATCH, "length": 0},
        {"format": Format.MATCH, "length": 5, "beaver": True},
        {"format": Format.GAMES, "length": 3, "jacoby": True},
        {"format": Format.MONEY, "length": 0, "cube_cap": 48},
        {"format": Format.MONEY, "length": 0, "stake": 0},
    ],
)
def test_inconsistent_rules_are_refused(arguments: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        MatchRules(**arguments)  # type: ignore[arg-type]


def test_rules_results_and_scores_round_trip_through_dicts() -> None:
    rules = MatchRules(Format.MONEY, length=0, stake=2, cube_cap=16, beaver=True, jacoby=True)
    assert MatchRules.from_dict(rules.to_dict()) == rules
    result = Result(winner=1, kind=WinKind.BACKGAMMON, cube=4, ending=Ending.RESIGNED, points=12)
    assert Result.from_dict(result.to_dict()) == result
    assert Result.from_dict(DRAW.to_dict()) == DRAW
    score = Score(MatchRules(Format.MATCH, length=7), points=(6, 3), games=4, crawford_played=True)
    assert Score.from_dict(score.to_dict()) == score
