"""Handlers for daemon tests, selected in subprocesses through PBEM_TEST_HANDLER=echo_handlers:NAME."""

from __future__ import annotations

import os
import time
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy

from sqlmodel import Session

from pbem.store.mail_records import queue_mail
from pbem.store.mail_records import InboundMail, InboundState

SERVICE = "backgammon@localhost"


def echo(session: Session, raw: bytes, inbound: InboundMail) -> None:
    """Answer every mail with its own text; a body saying `boom` raises, `quiet` is ignored."""
    incoming = BytesParser(policy=default_policy).parsebytes(raw)
    body = incoming.get_body(preferencelist=("plain",))
    text = body.get_content() if body is not None else ""
    if "boom" in text:
        raise RuntimeError("the handler exploded")
    if "quiet" in text:
        inbound.state, inbound.reason = InboundState.IGNORED, "asked to stay quiet"
        return
    answer = EmailMessage()
    answer["From"] = SERVICE
    answer["To"] = inbound.sender
    answer["Subject"] = f"Re: {inbound.subject}"
    answer["In-Reply-To"] = inbound.message_id
    answer.set_content(f"echo: {text}")
    queue_mail(session, answer)


def slow_echo(session: Session, raw: bytes, inbound: InboundMail) -> None:
    """The echo, then a pause inside the open transaction: a kill lands mid-mail."""
    echo(session, raw, inbound)
    time.sleep(float(os.environ.get("PBEM_TEST_HANDLER_DELAY", "0.1")))
