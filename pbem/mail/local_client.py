"""A terminal mail client for the local Maildir inbox and outbox (`pbem send`, `pbem outbox`).

`send` writes a mail as a real client would (headers, MIME, and for a reply the subject, the
threading headers and the quoted original), so that a whole game can be played from a terminal and
the service sees exactly what it will see from Thunderbird or Gmail.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from email.utils import formatdate, getaddresses, make_msgid, parseaddr, parsedate_to_datetime
from pathlib import Path

from pbem.mail.sources import ensure_maildir

USER_AGENT = "pbem send"


def compose_mail(sender: str, to: str, subject: str, text: str) -> EmailMessage:
    """A new plain-text mail, with the headers every mail client sets."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = make_msgid(domain=_domain_of(sender))
    message["User-Agent"] = USER_AGENT
    message.set_content(text if text.endswith("\n") else text + "\n", charset="utf-8")
    return message


def compose_reply(sender: str, original: EmailMessage, text: str) -> EmailMessage:
    """A reply to `original`: to its Reply-To (else From), "Re:" subject, threaded, original quoted."""
    recipient = str(original.get("Reply-To") or original.get("From", ""))
    subject = str(original.get("Subject", ""))
    if not subject.lower().startswith(("re:", "aw:")):
        subject = f"Re: {subject}"
    body = f"{text.rstrip()}\n\n{attribution_line(original)}\n{quote(original_text(original))}"
    message = compose_mail(sender, recipient, subject, body)
    original_id = original.get("Message-ID")
    if original_id is not None:
        message["In-Reply-To"] = str(original_id)
        message["References"] = " ".join([*str(original.get("References", "")).split(), str(original_id)])
    return message


def attribution_line(original: EmailMessage) -> str:
    return f"On {original.get('Date', 'an earlier day')}, {original.get('From', 'someone')} wrote:"


def original_text(original: EmailMessage) -> str:
    body = original.get_body(preferencelist=("plain",))
    return body.get_content() if body is not None else ""


def quote(text: str) -> str:
    return "".join(f"> {line}\n" if line else ">\n" for line in text.rstrip("\n").split("\n"))


def deliver_to_maildir(maildir: Path, message: EmailMessage) -> Path:
    """Deliver as a mail server does: write into tmp/, then rename into new/ (never half a mail)."""
    ensure_maildir(maildir)
    name = f"{time.time_ns()}.{uuid.uuid4().hex}.{socket.gethostname().replace('/', '_').replace(':', '_')}"
    temporary = maildir / "tmp" / name
    temporary.write_bytes(message.as_bytes(policy=default_policy))
    target = maildir / "new" / name
    os.rename(temporary, target)
    return target


def read_mail_file(path: Path) -> EmailMessage:
    with open(path, "rb") as file:
        return BytesParser(policy=default_policy).parse(file)


@dataclass(frozen=True)
class OutboxEntry:
    path: Path
    message: EmailMessage

    @property
    def recipients(self) -> list[str]:
        values = [str(value) for header in ("To", "Cc") for value in self.message.get_all(header, [])]
        return [address.lower() for _, address in getaddresses(values) if address]

    @property
    def sent(self) -> str:
        try:
            return parsedate_to_datetime(str(self.message["Date"])).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        except (TypeError, ValueError):
            return datetime.fromtimestamp(self.path.stat().st_mtime).strftime("%Y-%m-%d %H:%M:%S")


def list_outbox(outbox: Path, to: str | None = None) -> list[OutboxEntry]:
    """Mails in the outbox, oldest first, optionally only those to `to`."""
    paths = [path for sub in ("new", "cur") if (outbox / sub).is_dir() for path in (outbox / sub).iterdir()
             if path.is_file()]
    entries = [OutboxEntry(path, read_mail_file(path)) for path in sorted(paths, key=_write_order)]
    if to is None:
        return entries
    wanted = parseaddr(to)[1].lower()
    return [entry for entry in entries if wanted in entry.recipients]


def _write_order(path: Path) -> tuple[int, str]:
    return path.stat().st_mtime_ns, path.name


def format_listing(entries: Iterable[OutboxEntry]) -> str:
    return "".join(f"{entry.sent}  to {', '.join(entry.recipients)}  {entry.message.get('Subject', '')}\n"
                   f"    {entry.path}\n" for entry in entries)


def format_mail(entry: OutboxEntry) -> str:
    headers = "".join(f"{name}: {entry.message[name]}\n"
                      for name in ("Return-Path", "From", "To", "Reply-To", "Date", "Subject")
                      if entry.message[name] is not None)
    return f"{headers}File: {entry.path}\n\n{original_text(entry.message)}"


def _domain_of(address: str) -> str:
    try:
        return Address(addr_spec=parseaddr(address)[1]).domain or "localhost"
    except (ValueError, IndexError):
        return "localhost"
