"""Mails that fit correspondence play (issue 20, items 3 and 4).

By default a player gets a mail only when they must act, when something is for them alone, or
when a game ends: no copy of their own move, no notice of the opponent's roll; the opponent's
move and roll are told in the next mail they get.  A roll with only one play is played for them
(``automove``), and with ``greedy on`` a bear-off with every die when nothing else matters.
"""

from __future__ import annotations

import pytest
from post_office import acts, prose_of, recipient, set_game, side, text_of

from pbem.commands import Automove, CommandError, Greedy, parse_commands
from pbem.rules.game import Phase
from pbem.rules.moves import legal_plays
from pbem.rules.position import Position
from pbem.service.games.play import greedy_play
from pbem.service.pages import web_board
from pbem.service.table import letters

ANNA, BEN = "anna@example.org", "ben@example.org"


@pytest.fixture
def arranged(accepted_game, monkeypatch):
    """The accepted game, for tests that arrange a board with ``set_game``: the letters' "last
    move" highlight replays the record from the starting position, which an arranged board
    never came from, so it is left out."""
    monkeypatch.setattr(letters, "_last_move", lambda game, seat: None)
    return accepted_game


def recipients(sent) -> list[str]:
    return sorted(recipient(mail) for mail in sent)


def test_a_player_gets_no_mail_for_their_own_move_or_the_opponents_roll_by_default(accepted_game):
    office, anna, ben = accepted_game
    office.dice.load((6, 5))
    assert recipients(anna.reply("8/5 6/5")) == [BEN]  # no copy of Anna's own move
    assert recipients(ben.reply("roll")) == [BEN]  # Anna is not told of Ben's roll on its own
    turn = anna.answers(ben.reply("24/13"))
    assert len(turn) == 1 and "Your turn" in str(turn[0]["Subject"])
    told = prose_of(turn[0])
    assert "Ben rolled 6-5" in told and "Ben played 24/13" in told, told


def test_copies_on_brings_back_the_copy_and_the_notice_of_the_roll(accepted_game):
    office, anna, ben = accepted_game
    anna.reply("copies on")
    assert "a mail after every move of yours" in prose_of(anna.last)
    office.dice.load((6, 5))
    assert recipients(anna.reply("8/5 6/5", to=anna.last)) == [ANNA, BEN]
    assert recipients(ben.reply("roll")) == [ANNA, BEN]
    assert "Ben rolled 6-5" in prose_of(anna.last)


def test_a_copy_is_off_for_a_new_player_and_on_again_only_when_asked(accepted_game):
    office, anna, ben = accepted_game
    with office.engine.connect() as connection:
        rows = connection.exec_driver_sql("SELECT copies, automove, greedy FROM players ORDER BY address").all()
    assert [tuple(map(bool, row)) for row in rows] == [(False, True, False), (False, True, False)]


def _forced_for_ben(office) -> None:
    """Anna (to move, 3-1) and Ben, who owns no cube and cannot double, with two checkers on his
    6-point and three on his 2-point: his next roll 6-5 has only one play, 6/1 6/off."""
    table = office.table()
    anna_side = side({22: 2, 13: 5, 8: 3, 6: 5})
    set_game(office, table.id, board=Position(anna_side, side({6: 2, 2: 3})), cube=2, cube_owner=0)


def test_a_forced_play_is_played_for_the_player_and_told_in_both_players_next_mails(arranged):
    office, anna, ben = arranged
    _forced_for_ben(office)
    office.dice.load((6, 5))
    sent = anna.reply("13/10 13/12")
    assert recipients(sent) == [ANNA]  # Ben's roll and forced play need no mail to Ben
    told = prose_of(sent[0])
    assert "Ben rolled 6-5" in told and "Ben's only play, made automatically: 6/1 6/off" in told, told
    assert "roll  or  double" in text_of(sent[0])  # and Anna, who owns the cube, is asked
    game = office.table().game
    assert game.to_act == 0 and game.phase is Phase.ROLL_OR_DOUBLE
    office.dice.load((3, 1), (2, 1))
    assert recipients(anna.reply("roll")) == [ANNA]
    sent = anna.reply("22/19 22/21")  # Ben's 2-1 has several plays: his turn, his first mail since
    assert recipients(sent) == [BEN]
    ben_told = prose_of(ben.last)
    assert "Your only play, made automatically: 6/1 6/off" in ben_told, ben_told
    assert "Anna rolled 3-1. Anna played 22/21 22/19. You rolled 2-1" in ben_told, ben_told


def test_automove_off_asks_for_the_forced_play(arranged):
    office, anna, ben = arranged
    ben.write_confirmed("automatisch aus")
    assert "jeden Wurf selbst" in prose_of(ben.last) or "every roll yourself" in prose_of(ben.last)
    _forced_for_ben(office)
    office.dice.load((6, 5))
    sent = anna.reply("13/10 13/12", to=anna.last_of(office.table().token(0)))
    assert recipients(sent) == [BEN]
    assert "Reply with your move" in text_of(sent[0])
    acts(office, ben, "6/1 6/off")
    assert office.table().game.to_act == 0


def test_no_legal_play_passes_the_turn_without_a_mail_to_the_roller(arranged):
    """Ben on the bar against a closed board: his roll is passed, and only Anna, on turn again,
    gets a mail; it says what Ben rolled."""
    office, anna, ben = arranged
    closed = side({1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    ben_side = tuple([*side({10: 14})[:24], 1])
    set_game(office, office.table().id, board=Position(closed, ben_side), cube=2, cube_owner=0)
    office.dice.load((6, 5))
    sent = anna.reply("13/10 13/12")
    assert recipients(sent) == [ANNA]
    assert "Ben rolled 6-5 and cannot move" in prose_of(sent[0])


@pytest.mark.parametrize(("line", "command"), [
    ("automove off", Automove(False)), ("automatisch an", Automove(True)), ("greedy on", Greedy(True)),
    ("gierig aus", Greedy(False)), ("automove", CommandError("automove", "switch", "")),
])
def test_automove_and_greedy_are_read_in_both_languages(line, command):
    assert parse_commands(line) == [command]


def test_greedy_bears_off_with_every_die_only_when_nothing_else_matters():
    home = Position(side({6: 2, 5: 3, 3: 2, 1: 1}), side({6: 3, 12: 1}))
    play = greedy_play(home, (6, 3), legal_plays(home, (6, 3)))
    assert play is not None and sorted(play) == [(3, 0), (6, 0)]
    assert greedy_play(home, (4, 2), legal_plays(home, (4, 2))) is None  # no 4 or 2 to bear off
    contact = Position(side({6: 2, 5: 3, 3: 2, 1: 1}), side({23: 1, 6: 2}))  # one of theirs on our 2-point
    assert greedy_play(contact, (6, 3), legal_plays(contact, (6, 3))) is None
    outside = Position(side({7: 1, 5: 3}), side({6: 3}))
    assert greedy_play(outside, (6, 5), legal_plays(outside, (6, 5))) is None


def test_greedy_on_bears_off_for_the_player(arranged):
    office, anna, ben = arranged
    ben.write_confirmed("greedy on")
    assert "borne off for you" in prose_of(ben.last)
    table = office.table()
    set_game(office, table.id, board=Position(side({13: 7, 8: 3, 6: 5}), side({6: 2, 5: 2, 3: 1})),
             cube=2, cube_owner=0)
    office.dice.load((6, 5))
    sent = anna.reply("13/10 13/12", to=anna.last_of(table.token(0)))
    assert recipients(sent) == [ANNA]
    assert "Ben bore off with every die, played automatically (greedy): 6/off 5/off" in prose_of(sent[0])


def test_a_forced_play_after_a_move_on_the_web_board_is_told_in_the_next_mail(config, monkeypatch):
    """Anna moves on the page (no mail to her); Ben's roll and forced play follow at once, and
    Anna, on turn again, gets one mail telling all of it; Ben gets none."""
    from post_office import LoadedDice, Player, PostOffice, invite_and_accept, token_of  # noqa: PLC0415
    from test_web_board import client_of, form_of, web_config  # noqa: PLC0415

    monkeypatch.setattr(letters, "_last_move", lambda game, seat: None)
    monkeypatch.setattr(web_board, "moves_so_far", lambda table, seat: ())  # replays from the start too
    office = PostOffice(web_config(config), LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, ANNA, "Anna"), Player(office, BEN, "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    _forced_for_ben(office)
    office.dice.load((6, 5))
    client = client_of(office)
    token = token_of(anna.last)
    page = client.get(f"/g/{token}").text
    answer = client.post(f"/g/{token}", data={**form_of(page, "move"), "move": "13/10 13/12"})
    assert answer.status_code == 200, answer.text
    sent = office.run()
    office.file(sent)
    assert recipients(sent) == [ANNA]
    assert "Ben's only play, made automatically: 6/1 6/off" in prose_of(anna.last)

