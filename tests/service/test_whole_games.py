"""Whole games and a match through the real pipeline, checked move by move (SPEC §4)."""

from __future__ import annotations

import pytest

from post_office import (
    LoadedDice, Player, PostOffice, attachment, finished_games, invite_and_accept, play_to_end, recipient,
    prose_of,
    text_of,
)

from pbem.rules.notation import Numbering
from pbem.rules.scoring import Ending, Format
from pbem.store.game_records import MatchStatus


@pytest.mark.long_game
def test_single_game_to_the_end_with_own_and_fixed_numbering(config):
    office = PostOffice(config, LoadedDice(seed=7))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben", numbering=Numbering.FIXED)
    ben.write_confirmed("numbering fixed")
    assert "fixed numbering" in prose_of(ben.last)
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")

    steps = play_to_end(office, (anna, ben), match_id)
    assert steps > 30

    table = office.table(match_id)
    (game,) = finished_games(office, match_id)
    result = game.result
    assert result is not None and result.ending is Ending.PLAYED and result.winner is not None
    assert table.score.points[result.winner] == result.points > 0
    assert table.score.points[1 - result.winner] == 0
    winner, loser = (anna, ben)[result.winner], (anna, ben)[1 - result.winner]
    assert "you win" in str(winner.last["Subject"]) and f"{winner.name} wins" in str(loser.last["Subject"])
    for player in (anna, ben):
        mat = attachment(player.last, ".mat")
        # a single game is scored like money play, which the .mat format writes as 0 points
        assert mat is not None and " 0 point match" in mat and "Anna" in mat and "Ben" in mat
        moves = sum(1 for action in game.record if action.kind.value == "move")
        assert mat.count(": ") >= moves  # every turn is a line "dice: play"
        assert "Wins" in mat
        assert "Reply rematch to play again." in prose_of(player.last)
    # Every board is labelled in its reader's numbering: Ben's in the fixed one, as Black.
    fixed_top = " 1  2  3  4  5  6       7  8  9 10 11 12"
    own_bottom = " 12 11 10  9  8  7       6  5  4  3  2  1"
    for mail in (mail for mail in ben.inbox if "+------" in text_of(mail)):
        assert fixed_top in text_of(mail) and "Ben (you, Black)" in text_of(mail)
    for mail in (mail for mail in anna.inbox if "+------" in text_of(mail)):
        assert own_bottom in text_of(mail) and fixed_top not in text_of(mail)


@pytest.mark.long_game
def test_match_to_3_with_crawford_game(config):
    # seed 19: a gammon to 2-0, the Crawford game (2-1), a post-Crawford game to 3-1
    office = PostOffice(config, LoadedDice(seed=19))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org match 3")

    play_to_end(office, (anna, ben), match_id)

    table = office.table(match_id)
    games = finished_games(office, match_id)
    assert table.score.rules.format is Format.MATCH and table.score.rules.length == 3
    assert [game.crawford for game in games] == [False, True, False]
    assert [game.score for game in games] == [(0, 0), (2, 0), (2, 1)]
    assert table.score.points == (3, 1) and table.record.game_number == 3
    assert table.status is MatchStatus.FINISHED
    crawford_start = [mail for mail in anna.inbox if "Game 2 begins" in prose_of(mail)]
    assert len(crawford_start) == 1 and "This is the Crawford game: no doubling." in prose_of(crawford_start[0])
    assert "over: you win" in str(anna.last["Subject"]) and "over: Anna wins" in str(ben.last["Subject"])
    assert "Anna wins, 3 to 1." in prose_of(ben.last)
    for player in (anna, ben):
        mat = attachment(player.last, ".mat")
        assert mat is not None and " 3 point match" in mat and mat.count(" Game ") == 3
        assert " Anna : 2                       Ben : 1" in mat


@pytest.mark.long_game
def test_a_game_with_the_real_secure_dice(config):
    office = PostOffice(config)
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    play_to_end(office, (anna, ben), match_id)
    assert office.table(match_id).status is MatchStatus.FINISHED
    assert sum(office.table(match_id).score.points) > 0
    assert all(recipient(mail) in (anna.address, ben.address) for mail in anna.inbox + ben.inbox)
