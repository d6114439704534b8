"""Mails that must change nothing, through Dovecot and aiosmtpd: forged senders, guessed tokens,
replayed and stale mails; mails too large to read; names and subjects that try to add headers."""

from __future__ import annotations

import copy
from email.message import EmailMessage

import pytest
from conftest import SERVICE
from live_office import LivePostOffice
from post_office import prose_of, LoadedDice, Player, acts, invite_and_accept, recipient, refused, text_of

from pbem.mail.local_client import compose_mail, compose_reply

FAST_POLL = 0.05


@pytest.fixture
def office(mail_config, dovecot, smtp_server) -> LivePostOffice:
    return LivePostOffice(mail_config, dovecot, smtp_server, LoadedDice(seed=1, script=[(3, 1), (6, 5)]))


def changes_nothing(office: LivePostOffice, player: Player, message: EmailMessage, says: str) -> None:
    """`message` changes no game; its writer alone is answered, once, saying `says`."""
    before, count = office.snapshot(), office.outbound_count()
    sent = player.post(message)
    assert office.snapshot()[0] == before[0]
    assert [recipient(mail) for mail in sent] == [player.address] and office.outbound_count() == count + 1
    assert sent[0]["In-Reply-To"] == message["Message-ID"]
    assert says in prose_of(sent[0]), text_of(sent[0])


def test_forged_guessed_replayed_and_stale_mails_change_nothing(office):
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    carl = Player(office, "carl@example.org", "Carl")

    def script() -> None:
        invite_and_accept(office, anna, ben, "invite ben@example.org")
        acts(office, anna, "8/5 6/5")
        bens_mail = ben.last
        # Ben's valid token, but another From address: Carl's and even Anna's
        changes_nothing(office, carl, compose_reply(carl.sender, bens_mail, "roll"), "a game that you do not play")
        changes_nothing(office, anna, compose_reply(anna.sender, bens_mail, "double"), "a game that you do not play")
        # a token made up by Ben himself
        guess = compose_mail(ben.sender, "backgammon+abcdefghijklmnopqrstuvwxyz@localhost", "Re: game", "roll\n")
        changes_nothing(office, ben, guess, "please reply to the last mail of that game")
        # Ben rolls; the very same mail delivered again is applied once and answered once
        roll = compose_reply(ben.sender, bens_mail, "roll")
        assert len(ben.post(roll)) == 1  # his dice; Anna hears of the roll with his move (no notice of it)
        after, count = office.snapshot(), office.outbound_count()
        assert office.deliver(copy.deepcopy(roll)) == []
        assert office.snapshot() == after and office.outbound_count() == count
        # the same text with a new Message-ID, replying to the mail that asked Ben to roll
        refused(office, ben, "roll", "You answered an older mail of this game", to=bens_mail)

    office.run(script, poll_interval=FAST_POLL)
    assert office.inbound(ben.outbox[-2]["Message-ID"]).state == "applied"


def test_a_mail_over_the_size_limit_is_refused_politely(office):
    anna = Player(office, "anna@example.org", "Anna")
    message = compose_mail(anna.sender, SERVICE[0], "invite", "invite ben@example.org\n" + "x" * 30_000)

    def script() -> list[EmailMessage]:
        return anna.post(message)

    (answer,) = office.run(script, poll_interval=FAST_POLL)
    assert "larger than 20 kB" in prose_of(answer)
    assert office.matches() == []


def test_names_and_subjects_with_line_breaks_add_no_headers(office):
    """A display name and a subject that decode to CR LF and a header of their own go all the way
    through the service: the answer reaches the sender alone and carries no header it did not mean."""
    raw = (b"From: =?utf-8?q?Carl=0D=0ABcc=3A_victim=40example=2Eorg?= <carl@example.org>\r\n"
           b"To: backgammon@localhost\r\n"
           b"Subject: =?utf-8?q?help=0D=0ABcc=3A_victim=40example=2Eorg=0D=0A=0D=0Abody?=\r\n"
           b"Message-ID: <injection@example.org>\r\n"
           b"Content-Type: text/plain; charset=utf-8\r\n\r\nhelp\r\n")

    def script() -> None:
        office.dovecot.deliver(SERVICE[0], raw)
        office.settle()

    office.run(script, poll_interval=FAST_POLL)
    (received,) = office.smtp.recorder.received
    assert received.recipients == ("carl@example.org",)
    header_block = received.raw.split(b"\r\n\r\n", 1)[0]
    names = [line.split(b":", 1)[0].lower() for line in header_block.split(b"\r\n") if line[:1] not in (b" ", b"\t")]
    assert b"bcc" not in names and names.count(b"to") == 1 and names.count(b"subject") == 1
    (answer,) = office.collect()
    assert answer["In-Reply-To"] == "<injection@example.org>"
    assert all("\r" not in value and "\n" not in value for value in map(str, answer.values()))
