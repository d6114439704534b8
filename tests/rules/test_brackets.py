"""Knockout brackets (pbem.rules.brackets) for every field size, with byes, withdrawals and
ties in the seeding, played out at random by hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.rules.brackets import (SIZES, Bracket, BracketError, bracket_rounds, bracket_size, champion, current_round,
                                 new_bracket, next_match, ready, record_result, round_over, seed_order, withdraw)


def test_the_standard_seed_order():
    assert seed_order(4) == [1, 4, 2, 3]
    assert seed_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    for size in SIZES:
        order = seed_order(size)
        assert sorted(order) == list(range(1, size + 1))
        assert all(order[i] + order[i + 1] == size + 1 for i in range(0, size, 2))  # 1 meets N, 2 meets N-1 …
        half = size // 2
        assert (1 in order[:half]) != (2 in order[:half])  # 1 and 2 meet only in the final


@pytest.mark.parametrize("entrants, size", [(4, 4), (5, 8), (8, 8), (9, 16), (33, 64), (64, 64)])
def test_the_field_is_the_smallest_size_that_holds_everyone(entrants, size):
    assert bracket_size(entrants) == size


@pytest.mark.parametrize("entrants", [0, 3, 65])
def test_too_few_or_too_many_entrants_are_refused(entrants):
    with pytest.raises(BracketError):
        new_bracket(list(range(entrants)))


def test_byes_go_to_the_top_seeds_and_are_won_at_once():
    bracket = new_bracket([1, 2, 3, 4, 5])  # 8 lines, 3 byes
    assert [winner for winner in bracket.winners[0] if winner is not None] == [1, 2, 3]
    assert [pairing.players for pairing in ready(bracket)] == [(4, 5), (2, 3)]  # 2 and 3 need not wait


@st.composite
def played_out(draw):
    """A bracket of 4 to 64 entrants (ids in ranked order) played to its end at random, with
    some players withdrawing on the way; and the steps taken."""
    count = draw(st.integers(4, 64))
    ranked = draw(st.permutations(range(100, 100 + count)))
    bracket = new_bracket(ranked)
    played: list[tuple[int, int, int, tuple[int, int]]] = []
    while champion(bracket) is None:
        pairings = ready(bracket)
        assert pairings, "a bracket without a champion always has a match to play"
        if draw(st.integers(0, 9)) == 0:
            still_in = [player for player in bracket.entrants if player not in bracket.withdrawn]
            bracket = withdraw(bracket, draw(st.sampled_from(still_in)))
            continue
        pairing = draw(st.sampled_from(pairings))
        winner = draw(st.sampled_from(pairing.players))
        played.append((pairing.round, pairing.index, winner, pairing.players))
        bracket = record_result(bracket, pairing.round, pairing.index, winner)
    return ranked, bracket, played


@settings(max_examples=150, deadline=None)
@given(played_out())
def test_a_bracket_played_out_has_one_champion_and_every_result_holds(case):
    ranked, bracket, played = case
    size = bracket_size(len(ranked))
    assert bracket.size == size and sorted(bracket.entrants) == sorted(ranked)
    byes = size - len(ranked)
    assert {player for player, other in zip(bracket.lines[::2], bracket.lines[1::2]) if other is None} \
        == set(ranked[:byes])  # the byes are the top seeds'
    assert champion(bracket) in ranked
    for round, index, winner, players in played:
        assert bracket.winners[round][index] == winner and winner in players
    for round in range(bracket.rounds):
        assert round_over(bracket, round)
        for index, winner in enumerate(bracket.winners[round]):
            assert winner in bracket.players(round, index)
        if round + 1 < bracket.rounds:  # each winner plays on exactly once in the next round
            assert sorted(filter(None, bracket.winners[round])) == sorted(
                player for index in range(len(bracket.winners[round + 1]))
                for player in bracket.players(round + 1, index) if player is not None)
    assert current_round(bracket) == bracket.rounds and ready(bracket) == []
    assert Bracket.from_dict(bracket.to_dict()) == bracket


@settings(max_examples=100, deadline=None)
@given(st.integers(4, 64), st.data())
def test_a_withdrawn_player_never_wins_a_match_played_after(count, data):
    bracket = new_bracket(list(range(count)))
    quitter = data.draw(st.sampled_from(bracket.entrants))
    bracket = withdraw(bracket, quitter)
    while champion(bracket) is None:
        pairing = ready(bracket)[0]
        assert quitter not in pairing.players  # their matches to come were walkovers
        bracket = record_result(bracket, pairing.round, pairing.index, data.draw(st.sampled_from(pairing.players)))
    assert champion(bracket) != quitter


def test_ties_in_the_ranking_are_the_callers_to_break_and_the_same_ranking_gives_the_same_bracket():
    assert new_bracket([3, 1, 2, 4]) == new_bracket([3, 1, 2, 4])
    with pytest.raises(BracketError):
        new_bracket([1, 1, 2, 3])


def test_a_result_must_name_a_player_of_that_match_and_stands_once_given():
    bracket = new_bracket([1, 2, 3, 4])
    with pytest.raises(BracketError):
        record_result(bracket, 0, 0, 2)
    bracket = record_result(bracket, 0, 0, 4)
    assert record_result(bracket, 0, 0, 4) == bracket  # the same result twice (a mail read twice)
    with pytest.raises(BracketError):
        record_result(bracket, 0, 0, 1)
    with pytest.raises(BracketError):
        record_result(bracket, 5, 0, 1)


def test_each_players_next_match_is_its_round_and_the_opponent_once_known():
    bracket = new_bracket([1, 2, 3, 4, 5])  # byes for 1, 2, 3; Dora (4) meets Erik (5)
    assert [next_match(bracket, player) for player in (1, 2, 3, 4, 5)] == [(1, None), (1, 3), (1, 2), (0, 5), (0, 4)]
    bracket = record_result(bracket, 0, 1, 5)
    assert [next_match(bracket, player) for player in (1, 4, 5)] == [(1, 5), None, (1, 1)]
    bracket = record_result(record_result(bracket, 1, 0, 1), 1, 1, 3)
    assert [next_match(bracket, player) for player in (1, 2, 3)] == [(2, 3), None, (2, 1)]
    bracket = withdraw(bracket, 3)  # the final is lost by walkover: nobody has a match to come
    assert champion(bracket) == 1 and [next_match(bracket, player) for player in (1, 3)] == [None, None]


def test_the_bracket_as_text():
    bracket = record_result(new_bracket([1, 2, 3, 4, 5]), 0, 1, 5)
    names = {1: "Anna", 2: "Ben", 3: "Carla", 4: "Dora", 5: "Erik"}
    assert bracket_rounds(bracket, names) == [
        ["Anna – bye", "Dora – Erik: Erik", "Ben – bye", "Carla – bye"],
        ["Anna – Erik", "Ben – Carla"],
        ["? – ?"],
    ]
