"""A bounce written by a real Postfix: the service sends an invitation through Postfix, the
invitee's server refuses the address, Postfix returns the invitation as a DSN to the VERP
envelope sender, and the service tells the inviter which address failed and why (issue 21)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default as default_policy
from functools import partial

import pytest
from sqlmodel import Session, select
from mail_servers import SmtpServer
from postfix_server import Postfix, available

from pbem.config import Config, SmtpConfig
from pbem.daemon.pipeline import MailPipeline
from pbem.mail.local_client import compose_mail, compose_reply, deliver_to_maildir
from pbem.mail.smtp import SmtpSink
from pbem.mail.sources import MaildirSource
from pbem.service import handle_mail
from pbem.store.db import create_schema, make_engine
from pbem.store.game_records import MatchRecord

INVITEE = "bne@example.net"
"""A mistyped address, whose server answers "user unknown"."""


@pytest.fixture
def servers() -> Iterator[tuple[Postfix, SmtpServer, SmtpServer]]:
    """Postfix; the invitee's server, which knows no such user; and the server that takes
    everything else (the inviter's mail and the bounces sent to the service)."""
    why_not = available()
    if why_not is not None:
        pytest.skip(why_not)
    invitees, everyone = SmtpServer(), SmtpServer()
    invitees.recorder.unknown_users.add(INVITEE)
    for server in (invitees, everyone):
        server.start()
    postfix = Postfix({"example.net": invitees.port, "example.org": everyone.port, "localhost": everyone.port})
    try:
        postfix.start()
        yield postfix, invitees, everyone
    finally:
        postfix.remove()
        for server in (invitees, everyone):
            server.stop()


def test_a_bounce_postfix_writes_withdraws_the_invitation_and_tells_the_inviter(config: Config, servers):
    postfix, invitees, everyone = servers
    engine = make_engine(config.database.url)
    create_schema(engine)
    sink = SmtpSink(SmtpConfig(host="127.0.0.1", port=postfix.port, security="none"))
    pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), sink, partial(handle_mail, config=config))

    def run(raw: bytes) -> None:
        (config.inbox_dir / "new").mkdir(parents=True, exist_ok=True)
        deliver_to_maildir(config.inbox_dir, message_from_bytes(raw, policy=default_policy))

        async def both() -> None:
            await pipeline.read_inbox()
            await pipeline.flush_outbox()
            await sink.close()
        asyncio.run(both())

    def received_by(address: str, count: int) -> list[EmailMessage]:
        everyone.recorder.wait_until(lambda mails: sum(address in mail.recipients for mail in mails) >= count, 30)
        return [message_from_bytes(mail.raw, policy=default_policy) for mail in everyone.recorder.received
                if address in mail.recipients]

    run(compose_mail("Anna <anna@example.org>", config.service.address, "pbem", f"invite {INVITEE}").as_bytes())
    (question,) = received_by("anna@example.org", 1)
    run(compose_reply("Anna <anna@example.org>", question, "yes").as_bytes())

    assert everyone.recorder.wait_until(lambda mails: any(mail.sender in ("", "<>") for mail in mails), 30), \
        postfix.log()
    (dsn,) = [mail for mail in everyone.recorder.received if mail.sender in ("", "<>")]
    (to_service,) = dsn.recipients
    assert re.fullmatch(r"backgammon\+bounce-[a-z2-7]{26}@localhost", to_service)
    assert b"Reporting-MTA: dns; mx.pbem.test" in dsn.raw  # written by Postfix, not by us
    run(b"Return-Path: <>\n" + dsn.raw)

    told = received_by("anna@example.org", 3)[-1]
    text = " ".join(told.get_body(preferencelist=("plain",)).get_content().split())
    assert f"Your invitation to {INVITEE} could not be delivered: the receiving mail server says this address does " \
           "not exist (the mail server answered \"550 5.1.1 No such user here\")" in text, text
    assert "The invitation is withdrawn" in text
    with Session(engine) as session:
        (record,) = session.exec(select(MatchRecord)).all()
        assert record.status == "declined"
    assert all("mailer-daemon" not in recipient.lower() for mail in everyone.recorder.received
               for recipient in mail.recipients)
    engine.dispose()
