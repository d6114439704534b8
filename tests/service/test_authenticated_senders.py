"""Issue 21, item 6: with ``[imap] trusted_authserv_id``, a new mail whose From address the
operator's own server vouches for (``Authentication-Results: ID; dmarc=pass``) is carried out
at once; any other new mail still asks its sender to confirm first."""

from __future__ import annotations

import logging

import pytest
from post_office import LoadedDice, Player, PostOffice, is_confirmation, recipient, text_of

from pbem.config import Config, ImapConfig
from pbem.mail.local_client import compose_mail
from pbem.store.game_records import MatchStatus

TRUSTED = "mx.pbem.example"


@pytest.fixture
def office(config: Config) -> PostOffice:
    """The service reading with an ``[imap]`` table that trusts TRUSTED (the test still feeds
    the local Maildir: the table only says whose Authentication-Results count)."""
    imap = ImapConfig.model_validate({"host": "127.0.0.1", "username": "backgammon", "password": "secret",
                                      "trusted_authserv_id": TRUSTED})
    return PostOffice(config.model_copy(update={"imap": imap}), LoadedDice(seed=1))


def invite(anna: Player, *authentication_results: str) -> list:
    message = compose_mail(anna.sender, anna.office.config.service.address, "pbem", "invite ben@example.org")
    for value in authentication_results:
        message["Authentication-Results"] = value
    return anna.post(message)


def test_an_invitation_vouched_for_by_the_trusted_server_needs_no_confirmation(office, caplog):
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    caplog.set_level(logging.INFO, logger="pbem.service.mailroom.inbox")
    sent = invite(anna, f"{TRUSTED}; spf=pass smtp.mailfrom=example.org; dmarc=pass header.from=example.org")
    assert "anna@example.org is vouched for by the trusted Authentication-Results" in caplog.text
    assert not any(is_confirmation(mail) for mail in sent), [text_of(mail)[:200] for mail in sent]
    assert office.table().status is MatchStatus.INVITED
    (card,) = [mail for mail in sent if recipient(mail) == ben.address]
    assert "Invitation from Anna" in str(card["Subject"])
    assert office.table().players[0].name == "Anna"  # a proven mail also gives its name


def test_an_aligned_dkim_pass_is_proof_too(office):
    anna = Player(office, "anna@example.org", "Anna")
    Player(office, "ben@example.org", "Ben")
    sent = invite(anna, f"{TRUSTED}; dkim=pass header.d=example.org header.s=s1")
    assert not any(is_confirmation(mail) for mail in sent)
    assert office.table().status is MatchStatus.INVITED


@pytest.mark.parametrize("headers", [
    (),
    ("other.example; dmarc=pass header.from=example.org",),
    (f"{TRUSTED}; dmarc=fail header.from=example.org",),
    (f"{TRUSTED}; dmarc=pass header.from=other.org",),
    (f"{TRUSTED}; dkim=pass header.d=other.org",),
    (f"{TRUSTED}; dmarc=pass header.from=example.org junk; ;",),
], ids=["no header", "another authserv-id", "dmarc fail", "another domain", "unaligned dkim", "malformed"])
def test_any_other_new_mail_still_asks_for_confirmation(office, headers):
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    (question,) = invite(anna, *headers)
    assert is_confirmation(question) and recipient(question) == anna.address
    assert office.matches() == [] and ben.inbox == []
    anna.reply("yes", to=question)
    assert office.table().status is MatchStatus.INVITED  # confirmed: carried out as today


def test_without_a_trusted_id_the_header_proves_nothing(config):
    office = PostOffice(config, LoadedDice(seed=1))
    anna = Player(office, "anna@example.org", "Anna")
    (question,) = invite(anna, f"{TRUSTED}; dmarc=pass header.from=example.org")
    assert is_confirmation(question) and office.matches() == []


def test_play_assistant_and_help_vouched_for_need_no_confirmation_and_no_limit(office):
    """Issue 34, item 1: a mail the trusted server vouches for proves its sender like a token:
    ``play assistant`` starts at once, and its answers count in no limit."""
    anna = Player(office, "anna@example.org", "Anna")
    for text in ["play assistant", *["help"] * (office.config.limits.confirmations_per_day + 2)]:
        message = compose_mail(anna.sender, office.config.service.address, "pbem", text)
        message["Authentication-Results"] = f"{TRUSTED}; dmarc=pass header.from=example.org"
        sent = anna.post(message)
        assert sent and not any(is_confirmation(mail) for mail in sent), text
    assert office.table().status is MatchStatus.RUNNING
