"""Mails that must change nothing: strangers, foreign or guessed tokens, older mails, automatic
mail, and a mail delivered twice."""

from __future__ import annotations

import copy

import pytest
from sqlalchemy import event
from post_office import prose_of, Player, PostOffice, acts, check_answers, refused, text_of, token_of

from pbem.mail.local_client import compose_mail, compose_reply
from pbem.store.mail_records import InboundState


@pytest.fixture
def game(opened_game):
    """Anna opened with 3-1 and played; Ben is asked to roll or double; Carl is a stranger."""
    office, anna, ben = opened_game
    return office, anna, ben, Player(office, "carl@example.org", "Carl")


def unchanged(office: PostOffice, player: Player, message, says: str) -> None:
    """``message`` changes no game; its writer alone gets a friendly answer saying ``says``."""
    before, count = office.snapshot(), office.outbound_count()
    sent = player.post(message)
    assert office.snapshot()[0] == before[0]
    check_answers(office, message, sent)
    assert len(sent) == 1 and office.outbound_count() == count + 1
    assert says in prose_of(sent[0]), text_of(sent[0])


def test_a_stranger_without_a_token_changes_nothing(game):
    office, anna, ben, carl = game
    message = compose_mail(carl.sender, "backgammon@localhost", "my move", "24/18 13/11\n")
    unchanged(office, carl, message, "please reply to the last mail of that game")
    assert token_of(carl.last) is None and "You have no running games" in prose_of(carl.last)


def test_a_token_from_another_address_changes_nothing(game):
    office, anna, ben, carl = game
    bens_mail = ben.last
    unchanged(office, carl, compose_reply(carl.sender, bens_mail, "roll"), "a game that you do not play")
    # even the opponent cannot act with Ben's token: it is Ben's alone
    anna_forged = compose_reply(anna.sender, bens_mail, "double")
    unchanged(office, anna, anna_forged, "a game that you do not play")


def test_the_token_holder_is_read_with_the_match_and_anyone_else_by_address(game):
    """The sender of a mail whose token is theirs is the seat's player, read with the match (no
    statement of its own), also when their address is written in capitals; a mail with someone
    else's token is still its sender's, read by address, and changes nothing."""
    office, anna, ben, carl = game
    sent_statements: list[str] = []

    def keep(_connection, _cursor, statement, *_) -> None:
        sent_statements.append(" ".join(statement.split()))

    event.listen(office.engine, "before_cursor_execute", keep)
    try:
        roll = compose_reply("Ben <BEN@Example.ORG>", ben.last, "roll")
        ben.post(roll)
        by_address = [statement for statement in sent_statements if "FROM players WHERE players.address" in statement]
        assert by_address == [] and office.table().game.dice is not None
        unchanged(office, carl, compose_reply(carl.sender, ben.last, "double"), "a game that you do not play")
        assert any("FROM players WHERE players.address" in statement for statement in sent_statements)
    finally:
        event.remove(office.engine, "before_cursor_execute", keep)


def test_a_guessed_token_changes_nothing(game):
    office, anna, ben, carl = game
    guess = compose_mail(ben.sender, "backgammon+abcdefghijklmnopqrstuvwxyz@localhost", "Re: game", "roll\n")
    unchanged(office, ben, guess, "please reply to the last mail of that game")
    forged_reference = compose_mail(ben.sender, "backgammon@localhost", "Re: game", "roll\n")
    forged_reference["In-Reply-To"] = "<abcdefghijklmnopqrstuvwxyz.1-2.00ff@localhost>"
    unchanged(office, ben, forged_reference, "please reply to the last mail of that game")


def test_a_reply_to_an_older_mail_changes_nothing_and_shows_the_current_position(game):
    office, anna, ben, carl = game
    old_turn_mail = next(mail for mail in anna.inbox if "Your turn (3-1)" in str(mail["Subject"]))
    # Her newest mail while Ben is on turn (she gets none for her own move): not older, but the
    # rules refuse a move out of turn
    answer = refused(office, anna, "8/5 6/5", "It is not your turn", to=old_turn_mail)
    assert "Now it is Ben's turn" in prose_of(answer)

    office.dice.load((6, 5), (5, 2))
    acts(office, ben, "double")
    double_mail = anna.last
    refused(office, anna, "8/5 6/5", "You answered an older mail of this game", to=old_turn_mail)
    acts(office, anna, "take")
    acts(office, ben, ben.next_command(1) or "")
    refused(office, anna, "drop", "You answered an older mail of this game", to=double_mail)
    assert office.table().game.cube == 2


def test_a_note_or_board_request_in_reply_to_an_older_mail_is_still_read(game):
    office, anna, ben, carl = game
    old_turn_mail = next(mail for mail in anna.inbox if "Your turn (3-1)" in str(mail["Subject"]))
    sent = anna.reply("board", to=old_turn_mail)
    assert "older mail" not in prose_of(sent[0]) and "Now it is Ben's turn" in prose_of(sent[0])


@pytest.mark.parametrize("header, value, sender", [
    ("Auto-Submitted", "auto-replied", "Anna <anna@example.org>"),
    ("Precedence", "bulk", "Anna <anna@example.org>"),
    ("X-Loop", "none", "MAILER-DAEMON@mail.example.org"),
])
def test_automatic_mail_is_never_answered(game, header, value, sender):
    office, anna, ben, carl = game
    message = compose_reply(sender, ben.last if "anna" not in sender else anna.last, "I am out of office.\nroll")
    message[header] = value
    before, count = office.snapshot(), office.outbound_count()
    assert office.deliver(message) == []
    assert office.snapshot() == before and office.outbound_count() == count
    inbound = office.inbound(str(message["Message-ID"]))
    assert inbound is not None and inbound.state == InboundState.IGNORED


def test_a_mail_delivered_twice_is_applied_once(game):
    office, anna, ben, carl = game
    office.dice.load((6, 5))
    message = compose_reply(ben.sender, ben.last, "roll")
    sent = ben.post(message)
    assert len(sent) == 1  # Ben's answer; Anna hears of his roll in her next mail (issue 20)
    after, count = office.snapshot(), office.outbound_count()
    assert office.deliver(copy.deepcopy(message)) == []
    assert office.snapshot() == after and office.outbound_count() == count
