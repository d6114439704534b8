"""Where outgoing mail goes: a small async interface and its local Maildir implementation.

SMTP (`pbem.mail.smtp`) plugs in behind the same two methods. A sink may be asked to send a mail again after a crash,
so the Maildir sink names each file after the Message-ID: a resend replaces, never duplicates.  As a delivering mail
server does, it writes the envelope sender as ``Return-Path:`` on top, so an operator sees each mail's VERP address.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path
from typing import Protocol

from pbem.mail.dkim import DkimSigner
from pbem.mail.headers import message_id_of
from pbem.mail.sources import ensure_maildir


class OutboundSink(Protocol):
    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        """Deliver `raw` or raise; returning means the mail is safely handed over."""

    async def close(self) -> None: ...


def outbox_file_name(message_id: str) -> str:
    return hashlib.sha256(message_id.encode("utf-8")).hexdigest()[:32] + ".pbem"


class MaildirSink:
    """Writes each mail to `DIR/new/<hash of Message-ID>`, through `DIR/tmp` so readers never see half a mail."""

    def __init__(self, path: Path) -> None:
        self.path = path
        ensure_maildir(path)

    def __repr__(self) -> str:
        return f"MaildirSink({str(self.path)!r})"

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        name = outbox_file_name(message_id_of(raw))
        temporary = self.path / "tmp" / name
        line_end = b"\r\n" if raw[:raw.find(b"\n") + 1].endswith(b"\r\n") else b"\n"
        with open(temporary, "wb") as file:
            file.write(b"Return-Path: <" + sender.encode("ascii", "replace") + b">" + line_end + raw)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path / "new" / name)

    async def close(self) -> None:
        return None


class DkimSigningSink:
    """Signs each mail (``pbem.mail.dkim``), then hands it to the sink behind it: mails are
    stored unsigned and signed as they leave, so a retry after a key rotation gets the new key."""

    def __init__(self, sink: OutboundSink, signer: DkimSigner) -> None:
        self.sink = sink
        self.signer = signer

    def __repr__(self) -> str:
        return f"{self.sink!r} signing DKIM {self.signer.describe()}"

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        # About 10 ms for a 100 KB mail with RSA-2048: in a worker thread, so that the web board
        # sharing this event loop is not held up.
        signed = await asyncio.to_thread(self.signer.sign, raw)
        await self.sink.send(signed, sender, recipients)

    async def close(self) -> None:
        await self.sink.close()
