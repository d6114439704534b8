"""Trusted Authentication-Results attacked (review of issue 21): a mail Anna wrote to somebody
else, DKIM-signed by her provider, and sent on unchanged to the service by its recipient (a
"DKIM replay") passes DMARC at the operator's server, yet was never written to the service: it
must not act in Anna's name without her confirmation."""

from __future__ import annotations

import pytest
from post_office import Player, is_confirmation, recipient
from test_authenticated_senders import TRUSTED, office  # noqa: F401

from sqlmodel import Session, select

from pbem.mail.local_client import compose_mail
from pbem.store.game_records import Player as PlayerRow

PASS = f"{TRUSTED}; dkim=pass header.d=example.org header.s=s1; dmarc=pass header.from=example.org"


def stops(office, address: str) -> bool:
    with Session(office.engine) as session:
        return session.exec(select(PlayerRow.refuses_invitations).where(PlayerRow.address == address)).one()


@pytest.mark.parametrize("to", ["carla@example.net", "Carla <carla@example.net>, dora@example.net"])
def test_a_mail_anna_wrote_to_another_proves_nothing_when_it_is_sent_on_to_us(office, to):
    anna = Player(office, "anna@example.org", "Anna")
    # Anna's mail to Carla, as Carla received it, signed; Carla hands it to the service unchanged
    # (a new envelope recipient, the same header): the operator's server finds the signature good.
    mail = compose_mail(anna.sender, to, "Backgammon?", "Shall we play? Just write\n\nstop\n\nif you do not want to.")
    mail["Authentication-Results"] = PASS
    (answer,) = anna.post(mail)
    assert recipient(answer) == anna.address and is_confirmation(answer)  # Anna is asked, nothing done
    assert not stops(office, anna.address)


@pytest.mark.parametrize("to", ["backgammon@localhost", "Backgammon <BACKGAMMON@localhost>",
                                "carla@example.net, backgammon@localhost"])
def test_a_mail_written_to_the_service_is_still_proven_by_the_trusted_server(office, to):
    anna = Player(office, "anna@example.org", "Anna")
    mail = compose_mail(anna.sender, to, "pbem", "stop")
    mail["Authentication-Results"] = PASS
    sent = anna.post(mail)
    assert not any(is_confirmation(answer) for answer in sent)
    assert stops(office, anna.address)


def test_a_mail_cced_to_the_service_is_proven_too(office):
    anna = Player(office, "anna@example.org", "Anna")
    mail = compose_mail(anna.sender, "carla@example.net", "pbem", "stop")
    mail["Cc"] = "backgammon@localhost"
    mail["Authentication-Results"] = PASS
    anna.post(mail)
    assert stops(office, anna.address)
