"""Invitations through the pipeline: a per-sender limit a day, and `stop` for anyone who wants no more."""

from __future__ import annotations

import pytest
from post_office import Player, PostOffice, text_of

from pbem.config import load_config


@pytest.fixture
def office(config_file):
    config_file.write_text(config_file.read_text() + "\n[limits]\ninvitations_per_day = 2\n", encoding="utf-8")
    return PostOffice(load_config(config_file))


def test_invitations_are_limited_per_sender_and_day(office):
    anna, carl = Player(office, "anna@example.org", "Anna"), Player(office, "carl@example.org", "Carl")
    friends = [Player(office, f"friend{n}@example.org", f"Friend {n}") for n in range(3)]
    for friend in friends[:2]:
        anna.write_confirmed(f"invite {friend.address}")
        assert "Invitation from Anna" in str(friend.last["Subject"])
    sent = anna.write_confirmed(f"invite {friends[2].address}")
    assert [mail["To"] for mail in sent] == [anna.sender]
    assert "You have sent 2 invitations in the last 24 hours" in text_of(anna.last)
    assert friends[2].inbox == [] and len(office.matches()) == 2
    # the limit is Anna's alone
    carl.write_confirmed(f"invite {friends[2].address}")
    assert "Invitation from Carl" in str(friends[2].last["Subject"])


def test_the_limit_is_told_in_german(office):
    anna = Player(office, "anna@example.org", "Anna")
    for n in range(3):
        anna.write_confirmed(f"einladen friend{n}@example.org")
    anna.write_confirmed("sprache de")
    anna.write_confirmed("einladen friend9@example.org")
    assert "Sie haben in den letzten 24 Stunden 2 Einladungen verschickt" in text_of(anna.last)


def test_stop_means_no_invitation_ever_again_and_the_inviter_is_told(office):
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    anna.write_confirmed("invite ben@example.org")
    ben.reply("stop")
    assert "You will receive no more invitations" in text_of(ben.last)
    received = len(ben.inbox)
    sent = anna.write_confirmed("invite ben@example.org")
    assert [mail["To"] for mail in sent] == [anna.sender]
    assert "ben@example.org does not wish to receive invitations, so none was sent." in text_of(anna.last)
    assert len(ben.inbox) == received
