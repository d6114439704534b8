"""Game commands by mail with loaded dice: wrong moves, the cube, $quit, $remis, rematch, settings."""

from __future__ import annotations

import re
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from post_office import prose_of, Player, PostOffice, acts, finished_games, identifiers, invite_and_accept, recipient, refused, set_game, text_of

from pbem.rules.game import Phase
from pbem.rules.gnubg_ids import match_id_state
from pbem.rules.scoring import Ending
from pbem.store.game_records import MatchStatus


def opening(office: PostOffice, anna: Player, ben: Player, invitation: str = "invite ben@example.org") -> int:
    """Anna opens with 3-1 and makes her 5 point; Ben is asked to roll or double."""
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, invitation)
    assert "Your turn (3-1)" in str(anna.last["Subject"])
    sent = acts(office, anna, "8/5 6/5")
    assert [recipient(mail) for mail in sent] == [ben.address]  # no copy of her own move (issue 20)
    assert "Anna played 8/5 6/5." in text_of(ben.last)
    assert "Your turn: roll or double" in str(ben.last["Subject"])
    return match_id


def test_wrong_moves_are_explained_and_change_nothing(office, anna, ben):
    office.dice.load((3, 1))
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    refused(office, anna, "13/10 13/12", "13/12: point 12 is blocked")
    wrong_die = refused(office, anna, "24/18 6/5", "24/18 is a move of 6, but you have only the 3 left to play")
    assert "In short: write your move" in prose_of(wrong_die)  # the help that fits a wrong move
    refused(office, anna, "8/5", "You must play as much of the roll as you can")
    refused(office, anna, "24/18 13/", "I cannot read")
    refused(office, anna, "13/27", "There is no point 27")
    not_yours = refused(office, ben, "24/21 24/23", "It is not your turn")
    assert "In short" not in prose_of(not_yours)  # no guide to moves for a turn that is not yours
    acts(office, anna, "24/23 13/10")

    office.dice.load((6, 4))
    acts(office, ben, "roll")
    assert "Your turn (6-4)" in str(ben.last["Subject"])
    acts(office, ben, "24/18 6/2*")
    office.dice.load((5, 3))
    acts(office, anna, "roll")
    refused(office, anna, "13/8 13/10", "you have a checker on the bar; it must enter first")
    acts(office, anna, "bar/20 13/10")
    assert "Anna played bar/20 13/10" in text_of(ben.last)


def test_double_take_redouble_drop_in_a_single_game(office, anna, ben):
    match_id = opening(office, anna, ben)
    refused(office, anna, "double", "It is not your turn")
    acts(office, ben, "double")
    assert "Ben doubles to 2: double offered" in str(anna.last["Subject"])
    assert "Reply  take  or  drop" in text_of(anna.last) and "beaver" not in text_of(anna.last)
    assert match_id_state(identifiers(anna.last)[1]).double_offered
    refused(office, anna, "beaver", "A beaver is not allowed here")
    refused(office, ben, "roll", "A double is waiting for its answer")
    office.dice.load((6, 5))
    acts(office, anna, "take")
    assert "Anna took; the cube is at 2" in text_of(ben.last)
    assert "Your turn (6-5)" in str(ben.last["Subject"])  # Ben cannot redouble: rolled at once
    state = match_id_state(identifiers(ben.last)[1])
    assert (state.cube_value, state.cube_owner) == (2, 0)
    acts(office, ben, "24/13")
    assert "Your turn: roll or double" in str(anna.last["Subject"])  # Anna owns the cube
    acts(office, anna, "double")
    assert "Anna doubles to 4" in str(ben.last["Subject"])
    acts(office, ben, "drop")

    table = office.table(match_id)
    assert table.status is MatchStatus.FINISHED and table.score.points == (2, 0)
    (game,) = finished_games(office, match_id)
    assert game.result is not None and game.result.ending is Ending.DROPPED and game.result.cube == 2
    assert "game over: you win" in str(anna.last["Subject"])
    assert "You win a single game (double dropped): 2 points." in text_of(anna.last)
    assert "Anna wins a single game (double dropped): 2 points." in text_of(ben.last)


def test_beaver_in_money_play_then_the_next_game(office, anna, ben):
    match_id = opening(office, anna, ben, "invite ben@example.org money beaver")
    acts(office, ben, "double")
    assert "(or  beaver)" in text_of(anna.last)
    acts(office, anna, "beaver")
    assert "Anna beavered: the cube is at 4" in text_of(ben.last)
    assert "Reply  take  or  drop" in text_of(ben.last)
    # The beaver offers the cube at 4 (the double at 2, taken and redoubled), never "to 8".
    assert str(ben.last["Subject"]).endswith("Anna beavers: cube 4"), ben.last["Subject"]
    assert "Anna beavers: takes your double and redoubles to 4. Reply take or drop" in prose_of(ben.last)
    assert "8" not in str(ben.last["Subject"])
    refused(office, anna, "take", "It is not your turn")
    office.dice.load((2, 1))
    acts(office, ben, "take")
    state = match_id_state(identifiers(ben.last)[1])
    assert (state.cube_value, state.cube_owner) == (4, 0)
    acts(office, ben, "13/11 6/5*")
    office.dice.load((4, 4))
    refused(office, anna, "beaver", "No double has been offered")
    acts(office, anna, "double")
    assert "Anna doubles to 8" in str(ben.last["Subject"])
    office.dice.load((5, 2))  # the opening roll of the next game: Anna starts
    acts(office, ben, "drop")

    table = office.table(match_id)
    assert table.status is MatchStatus.RUNNING and table.score.points == (4, 0)
    assert table.record.game_number == 2 and table.game is not None and table.game.phase is Phase.TO_MOVE
    assert "You win a single game (double dropped): 4 points." in text_of(anna.last)
    assert "Game 2 begins" in text_of(anna.last) and "It is your turn with 5-2" in text_of(anna.last)
    assert str(anna.last["Subject"]).endswith("game over: you win a single game – Your turn (5-2)")
    assert str(ben.last["Subject"]).endswith("game over: Anna wins a single game – Waiting for Anna")


def test_quit_in_a_match_gives_the_opponent_the_match(office, anna, ben):
    match_id = opening(office, anna, ben, "invite ben@example.org match 5")
    acts(office, ben, "$quit")
    table = office.table(match_id)
    assert table.status is MatchStatus.FINISHED and table.score.points[0] >= 5
    (game,) = finished_games(office, match_id)
    assert game.result is not None and game.result.ending is Ending.RESIGNED and game.result.winner == 0
    assert "over: you win" in str(anna.last["Subject"]) and "over: Anna wins" in str(ben.last["Subject"])
    assert "Ben resigned." in text_of(anna.last)


def test_quit_in_a_single_game_scores_the_highest_possible_result(office, anna, ben):
    match_id = opening(office, anna, ben)
    acts(office, anna, "$quit")
    (game,) = finished_games(office, match_id)
    # Anna's back checkers are still in Ben's home board: a backgammon
    assert game.result is not None and game.result.points == 3 and game.result.winner == 1
    assert office.table(match_id).score.points == (0, 3)


def test_remis_on_both_sides_is_a_draw_and_a_move_withdraws_it(office, anna, ben):
    match_id = opening(office, anna, ben)
    acts(office, anna, "$remis")
    assert "Anna offered a draw: answer $remis to accept it" in text_of(ben.last)
    office.dice.load((6, 6))
    acts(office, ben, "roll")
    acts(office, ben, "24/18(2) 13/7(2)")  # any other move declines the draw
    table = office.table(match_id)
    assert table.game is not None and table.game.draw_offer is None
    office.dice.load((2, 1))
    acts(office, anna, "roll")
    acts(office, anna, "13/11 6/5")
    acts(office, ben, "$remis")  # on his own turn: Anna is asked for her answer, not told to wait
    assert office.table(match_id).status is MatchStatus.RUNNING
    offer = anna.last
    assert "Ben offers a draw" in str(offer["Subject"]) and "Waiting" not in str(offer["Subject"])
    assert "reply $remis to accept it" in prose_of(offer) and "We will write when it is yours" not in prose_of(offer)
    acts(office, anna, "$remis")
    table = office.table(match_id)
    assert table.status is MatchStatus.FINISHED and table.score.points == (0, 0)
    assert "game over: draw" in str(ben.last["Subject"]) and "The game ends in a draw." in text_of(ben.last)


def test_rematch_after_the_end(office, anna, ben):
    first = opening(office, anna, ben)
    refused(office, anna, "rematch", "A rematch can be asked for when the game or match is over")
    acts(office, anna, "$quit")
    sent = ben.reply("rematch")
    assert any("Your rematch invitation has been sent to Anna" in text_of(mail) for mail in ben.answers(sent))
    invitation = anna.last
    assert "Invitation from Ben" in str(invitation["Subject"]) and invitation in sent
    office.dice.load((1, 2))
    anna.reply("accept", to=invitation)
    table = office.table()
    assert table.id != first and table.record.rematch_of == first
    assert [player.address for player in table.players] == [ben.address, anna.address]
    assert table.status is MatchStatus.RUNNING and "Your turn (2-1)" in str(anna.last["Subject"])


def test_board_games_help_language_and_numbering(office, anna, ben):
    opening(office, anna, ben)
    game_mail = ben.last
    before = office.snapshot()
    sent = acts(office, ben, "board", to=game_mail)
    assert office.snapshot() == before and len(sent) == 1
    assert identifiers(ben.last) == identifiers(game_mail)
    acts(office, ben, "games", to=game_mail)
    assert "against Anna: a single game, score 0-0, your turn" in text_of(ben.last)
    ben.write("help")
    assert "How to play backgammon by mail" in text_of(ben.last)
    ben.write_confirmed("numbering fixed")
    assert "fixed numbering" in text_of(ben.last)
    ben.write_confirmed("lang de")
    office.dice.load((6, 5))
    acts(office, ben, "würfeln", to=game_mail)
    assert "Sie sind am Zug (6-5)" in str(ben.last["Subject"])
    assert "Hallo Ben" in text_of(ben.last)
    # Ben is Black in the fixed numbering: he moves from 1 towards 24
    acts(office, ben, "1-12")
    assert "Ben played 24/13" in text_of(anna.last)


def test_german_command_aliases(office, anna, ben):
    anna.write_confirmed("sprache de")
    office.dice.load((3, 1))
    anna.write_confirmed("einladen ben@example.org")
    ben.reply("annehmen")
    assert office.table().status is MatchStatus.RUNNING
    acts(office, anna, "8/5 6/5")
    acts(office, ben, "doppeln")
    assert "Ben doppelt auf 2: Doppler angeboten" in str(anna.last["Subject"])
    acts(office, anna, "ablehnen")
    table = office.table()
    assert table.status is MatchStatus.FINISHED and table.score.points == (0, 1)
    ben.write_confirmed("einladen anna@example.org")
    anna.reply("ablehnen")
    assert office.table().status is MatchStatus.DECLINED
    ben.write_confirmed("einladen anna@example.org match 3")
    office.dice.load((4, 2))
    anna.reply("annehmen")
    acts(office, anna, "$aufgeben")
    table = office.table()
    assert table.status is MatchStatus.FINISHED and table.score.points[0] >= 3


def test_an_empty_reply_gets_the_board_and_a_friendly_word(office, anna, ben):
    opening(office, anna, ben)
    answer = refused(office, ben, "", "Your mail has no command or move I could carry out")
    assert "reply  roll  or  double" in text_of(answer)
    assert office.table().seats[0].notes == []


def test_one_click_mailto_links_answer_an_invitation(office, anna, ben):
    anna.write_confirmed("invite ben@example.org lang de")
    invitation = ben.last
    assert "Einladung von Anna" in str(invitation["Subject"])
    link = re.search(r"mailto:(\S+)\?subject=(\w+)", text_of(invitation))
    assert link is not None and link.group(2) == "annehmen"
    click = EmailMessage()
    click["From"], click["To"], click["Subject"] = ben.sender, link.group(1), link.group(2)
    click["Date"], click["Message-ID"] = formatdate(), make_msgid(domain="example.org")
    office.dice.load((1, 2))
    ben.post(click)  # no body, no threading headers: the address and the subject say it all
    assert office.table().status is MatchStatus.RUNNING
    assert "Sie sind am Zug (2-1)" in str(ben.last["Subject"])


def test_resign_levels_as_on_fibs_accepted_rejected_or_withdrawn(office, anna, ben):
    match_id = opening(office, anna, ben)  # Ben is asked to roll or double
    acts(office, anna, "resign gammon")
    assert "You offered to resign a gammon (2 points); it stands until the answer, or until you play on." in prose_of(anna.last)
    offer = ben.last
    assert "Anna offered to resign a gammon (2 points): reply accept to win that" in prose_of(offer)
    assert "Anna offers to resign" in str(offer["Subject"])
    acts(office, ben, "reject")
    assert "Ben rejected the resignation" in prose_of(anna.last)
    assert office.table(match_id).game.resign_offer is None
    acts(office, anna, "resign single")
    office.dice.load((6, 4))
    acts(office, ben, "roll")  # any action withdraws the offer
    assert office.table(match_id).game.resign_offer is None
    refused(office, ben, "accept", "Nothing waits for your answer now")
    acts(office, ben, "24/18 13/9")
    acts(office, ben, "resign backgammon")
    acts(office, anna, "accept")
    table = office.table(match_id)
    assert table.status is MatchStatus.FINISHED and table.game.result.kind == 3 and table.score.points == (3, 0)
    assert "You win a backgammon (resignation): 3 points" in prose_of(anna.last)


def test_resign_levels_in_german(office, anna, ben):
    match_id = opening(office, anna, ben)
    anna.reply("sprache de")
    ben.reply("sprache de")
    acts(office, anna, "aufgeben einfach")
    assert "Anna hat angeboten, einfach aufzugeben (1 Punkt): antworten Sie annehmen" in prose_of(ben.last)
    acts(office, ben, "annehmen")
    assert office.table(match_id).game.result.kind == 1
    (answer,) = anna.reply("aufgeben")
    assert "Das Ergebnis fehlt; schreiben Sie aufgeben einfach" in prose_of(answer)


def test_an_accepted_resignation_in_a_match_ends_the_game_not_the_match(office, anna, ben):
    match_id = opening(office, anna, ben, "invite ben@example.org match 5")
    acts(office, anna, "resign gammon")
    acts(office, ben, "accept")
    table = office.table(match_id)
    assert table.status is MatchStatus.RUNNING and table.score.points == (0, 2) and table.record.game_number == 2
    assert "Ben wins a gammon (resignation): 2 points" in prose_of(anna.last)
    assert "match over" not in str(anna.last["Subject"])


def test_a_money_invitation_names_the_game_and_its_options_plainly(office, anna, ben):
    anna.write_confirmed("invite ben@example.org money stake 2 beaver jacoby")
    assert ("Anna <anna@example.org> invites you to backgammon by mail: a money game at 2 per point (beavers, Jacoby"
            " rule).") in prose_of(ben.last)
    carol = Player(office, "carol@example.org", "Carol")
    anna.write_confirmed("invite carol@example.org money stake 2 beaver jacoby lang de")
    assert "Anna <anna@example.org> lädt Sie zu Backgammon per Mail ein: ein Geldspiel zu 2 je Punkt (Biber, Jacoby-Regel)." \
        in prose_of(carol.last)
    anna.write_confirmed("invite carol@example.org money jacoby")
    assert "ein Geldspiel zu 1 je Punkt (Jacoby-Regel)." in prose_of(carol.last)


def test_a_draw_in_a_match_replays_the_game_without_points_and_the_help_says_so(office, anna, ben):
    """The seed's $remis ends a game drawn; in a match that game is played again, the score as it was."""
    match_id = opening(office, anna, ben, "invite ben@example.org match 3")
    acts(office, anna, "$remis")
    acts(office, ben, "$remis")
    table = office.table(match_id)
    assert table.status is MatchStatus.RUNNING and table.score.points == (0, 0) and table.record.game_number == 2
    assert "in a match the game is played again from the start" in prose_of(anna.reply("help")[0])


def test_a_double_to_the_cap_offers_no_beaver(office, anna, ben):
    """A beaver of a double to 64 would put the cube at 128, over the cap: the prompt must not
    offer one that is then refused ("The cube cannot go higher than 64")."""
    match_id = opening(office, anna, ben, "invite ben@example.org money beaver")
    set_game(office, match_id, cube=32, cube_owner=1)
    acts(office, ben, "double", to=ben.last)
    assert "Ben doubles to 64. Reply  take  or  drop" in text_of(anna.last)
    assert "beaver" not in text_of(anna.last)
    refused(office, anna, "beaver", "The cube cannot go higher than 64")


def test_german_mails_call_the_cube_doppler_never_wuerfel(office, anna, ben):
    """"Würfel" are the dice: a German mail after a take or a beaver says where the cube
    (Doppler) stands, as the board's line "Doppler: 4" does."""
    office.dice.load((3, 1))
    anna.write_confirmed("einladen ben@example.org geld biber", yes="ja")
    ben.reply("annehmen")
    acts(office, anna, "8/5 6/5")
    acts(office, ben, "doppeln")
    acts(office, anna, "biber")
    assert "Anna hat gebibert: der Doppler steht auf 4." in prose_of(ben.last), prose_of(ben.last)
    office.dice.load((2, 1))
    acts(office, ben, "annehmen")
    assert "Ben hat angenommen; der Doppler steht auf 4." in prose_of(anna.last), prose_of(anna.last)


def test_every_game_command_has_its_action() -> None:
    """Dispatch is the lookup of the command's type: a game command without an action would be
    refused by a KeyError, so the table must name each type of ``GameCommand`` once."""
    import typing

    from pbem.service.games import play

    assert set(typing.get_args(play.GameCommand)) == set(play._ACTIONS)
