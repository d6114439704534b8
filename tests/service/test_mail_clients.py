"""Replies written by real mail clients: only the new text is read; notes reach the opponent."""

from __future__ import annotations

import re

import pytest
from mail_clients import CLIENTS, gmail
from post_office import acts, check_answers, text_of

from pbem.rules.game import ActionKind


def notes_in(mail, name: str) -> list[str]:
    """The personal notes a mail passes on from ``name``."""
    found = re.search(rf"^{name} writes:\n((?:  .*\n)+)", text_of(mail), re.MULTILINE)
    return [line.strip() for line in found.group(1).splitlines()] if found else []


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_only_the_new_text_of_a_reply_is_applied(accepted_game, client):
    office, anna, ben = accepted_game
    turn_mail = anna.last
    assert "Write it like this" in text_of(turn_mail) and "Position ID:" in text_of(turn_mail)
    ben_before = ben.last
    reply = CLIENTS[client](anna.sender, turn_mail, "8/5 6/5\nGood luck, Ben!")
    sent = anna.post(reply)

    check_answers(office, reply, sent, {ben.address: ben_before})
    answer = anna.answers(sent)[0]
    assert "You played 8/5 6/5." in text_of(answer), text_of(answer)
    assert "Your note will be passed on to Ben." in text_of(answer)
    assert "cannot" not in text_of(answer) and "no command" not in text_of(answer)
    table = office.table()
    assert table.game is not None
    assert [action.kind for action in table.game.record] == [ActionKind.ROLL, ActionKind.MOVE]
    assert notes_in(ben.last, "Anna") == ["Good luck, Ben!"]
    assert table.seats[1].notes == [] and table.seats[0].notes == []


def test_a_note_alone_waits_for_the_opponents_next_mail(accepted_game):
    office, anna, ben = accepted_game
    acts(office, anna, "8/5 6/5")
    anna_mails = len(anna.inbox)
    sent = ben.post(gmail(ben.sender, ben.last, "Nice opening!\nSee you soon"))
    assert len(sent) == 1
    assert len(anna.inbox) == anna_mails  # nothing to tell Anna yet
    assert "Your note will be passed on to Anna." in text_of(ben.last)
    acts(office, ben, "roll")
    assert notes_in(anna.last, "Ben") == ["Nice opening!", "See you soon"]
    acts(office, ben, ben.next_command(1) or "")
    assert notes_in(anna.last, "Ben") == []  # delivered once
    assert office.table().seats[0].notes == []
