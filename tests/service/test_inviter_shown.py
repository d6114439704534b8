"""An invitation shows who sent it (issue 34, item 2): the inviter's address stands beside any
name they chose, in the mail and on the invitation's page, in both languages."""

from __future__ import annotations

import pytest
from post_office import Player, PostOffice, text_of, token_of
from test_web_board import client_of, web_config


@pytest.fixture
def office(config):
    return PostOffice(web_config(config))


def _first_line(mail) -> str:
    """The first paragraph after the greeting ("Hello b,"), its lines joined."""
    greeting, first = text_of(mail).split("\n\n")[:2]
    assert greeting.endswith(","), greeting
    return " ".join(first.split())


@pytest.mark.parametrize(("name", "shown"), [("A", "A"), ("Backgammon by MaiI", "attacker"),
                                             ("b at example dot org", "attacker")])
def test_the_invitee_reads_the_inviters_address_in_the_first_line_and_on_the_page(office, name, shown):
    attacker = Player(office, "attacker@evil.example", name)
    b = Player(office, "b@example.org", "B")
    attacker.write_confirmed("invite b@example.org")
    invitation = b.last
    assert _first_line(invitation).startswith(f"{shown} <attacker@evil.example> invites you to backgammon by mail"), \
        text_of(invitation)
    assert name == shown or name not in str(invitation["Subject"]) + text_of(invitation)
    page = client_of(office).get(f"/g/{token_of(invitation)}").text
    assert f"{shown} &lt;attacker@evil.example&gt; invites you to backgammon by mail" in page


def test_the_german_invitation_shows_the_address_too(office):
    attacker = Player(office, "attacker@evil.example", "A")
    b = Player(office, "b@example.org", "B")
    attacker.write_confirmed("einladen b@example.org", yes="ja")
    invitation = b.last
    assert _first_line(invitation).startswith("A <attacker@evil.example> lädt Sie zu Backgammon per Mail ein"), \
        text_of(invitation)
    page = client_of(office).get(f"/g/{token_of(invitation)}").text
    assert "A &lt;attacker@evil.example&gt; lädt Sie zu Backgammon per Mail ein" in page


def test_an_invitation_after_a_declined_one_shows_the_address_again(office):
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    anna.write_confirmed("invite ben@example.org")
    ben.reply("decline")
    anna.write_confirmed("invite ben@example.org")
    assert _first_line(ben.last).startswith("Anna <anna@example.org> invites you")
