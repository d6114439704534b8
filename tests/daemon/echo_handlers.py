"""Handlers for daemon tests, and a `pbem serve` that runs one of them instead of the game service:

    python -c "import sys, echo_handlers; sys.exit(echo_handlers.serve_main(sys.argv[1:]))" \
        --config FILE --handler slow_echo --delay 0.3
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy

from sqlmodel import Session

from pbem.config import load_config
from pbem.daemon.scheduler import configure_logging, serve
from pbem.mail.headers import sender_and_subject
from pbem.store.mail_records import InboundMail, InboundState, queue_mail

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
    sender, subject = sender_and_subject(raw)
    answer["To"] = sender
    answer["Subject"] = f"Re: {subject}"
    answer["In-Reply-To"] = inbound.message_id
    answer.set_content(f"echo: {text}")
    queue_mail(session, answer)


def ignore(session: Session, raw: bytes, inbound: InboundMail) -> None:
    """Record the mail as read and do nothing else."""
    inbound.state, inbound.reason = InboundState.IGNORED, "ignored by the test handler"


def slow_echo(session: Session, raw: bytes, inbound: InboundMail, delay: float = 0.1) -> None:
    """The echo, then a pause inside the open transaction: a kill lands mid-mail."""
    echo(session, raw, inbound)
    time.sleep(delay)


def serve_main(argv: list[str]) -> int:
    """`pbem serve` with one of these handlers and no periodic jobs."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--handler", choices=("echo", "slow_echo"), required=True)
    parser.add_argument("--delay", type=float, default=0.1)
    args = parser.parse_args(argv)
    configure_logging()
    handler = echo if args.handler == "echo" else (
        lambda session, raw, inbound: slow_echo(session, raw, inbound, args.delay))
    asyncio.run(serve(load_config(args.config), handler))
    return 0
