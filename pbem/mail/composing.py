"""Composing the service's mails: a rendered letter → a MIME message with the right headers.

Every mail the service sends is an automatic answer (RFC 3834 ``Auto-Submitted: auto-replied``),
threads under the mail it answers or the last one of its game, and, when it belongs to a game,
carries the recipient's game token in its Reply-To address and its Message-ID, so that any
reply finds the game again.  A game Message-ID also records the state it showed
(``<TOKEN.G-T.RANDOM@domain>``: game number and turn), which tells a reply to an older mail.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from datetime import datetime

from pbem.mail.reading import TOKEN_PATTERN, reply_address

MAX_REFERENCES = 12
"""Older References are dropped: the thread stays whole with the newest dozen."""

_GAME_MESSAGE_ID = re.compile(rf"^<({TOKEN_PATTERN})\.(\d+)-(\d+)\.[0-9a-f]+@[^<>\s]+>$")


@dataclass(frozen=True)
class Attachment:
    filename: str
    content_type: str
    data: bytes


@dataclass(frozen=True)
class Letter:
    """One mail to one person, already worded in their language."""

    to_address: str
    to_name: str
    subject: str
    text: str
    language: str
    token: str | None = None
    """The recipient's game token, or None for a mail that belongs to no game."""
    stamp: tuple[int, int] | None = None
    """(game number, turn) of the state the mail shows, recorded in its Message-ID."""
    in_reply_to: str | None = None
    references: tuple[str, ...] = ()
    attachments: tuple[Attachment, ...] = field(default=())


@dataclass(frozen=True)
class GameStamp:
    """What a game Message-ID tells of the mail a player answered."""

    token: str
    game_number: int
    turn: int


def game_message_id(token: str, stamp: tuple[int, int], domain: str) -> str:
    """A unique Message-ID naming the game token and the state the mail showed."""
    return f"<{token}.{stamp[0]}-{stamp[1]}.{secrets.token_hex(8)}@{domain}>"


def parse_game_message_id(message_id: str | None) -> GameStamp | None:
    """The stamp of one of our game Message-IDs, or None for any other Message-ID."""
    match = _GAME_MESSAGE_ID.match(message_id or "")
    if match is None:
        return None
    return GameStamp(match.group(1), int(match.group(2)), int(match.group(3)))


def compose(letter: Letter, service_address: str, service_name: str, now: datetime) -> EmailMessage:
    """The MIME message for ``letter``, sent from the service address."""
    domain = service_address.rpartition("@")[2]
    message = EmailMessage()
    message["From"] = Address(_one_line(service_name), addr_spec=service_address)
    message["To"] = Address(_one_line(letter.to_name), addr_spec=letter.to_address)
    if letter.token is not None:
        message["Reply-To"] = Address(_one_line(service_name), addr_spec=reply_address(service_address, letter.token))
    message["Subject"] = _one_line(letter.subject)
    message["Date"] = format_datetime(now)
    if letter.token is not None and letter.stamp is not None:
        message["Message-ID"] = game_message_id(letter.token, letter.stamp, domain)
    else:
        message["Message-ID"] = make_msgid(domain=domain)
    if letter.in_reply_to:
        message["In-Reply-To"] = letter.in_reply_to
    references = [*letter.references, *([letter.in_reply_to] if letter.in_reply_to else [])]
    if references:
        message["References"] = " ".join(dict.fromkeys(references[-MAX_REFERENCES:]))
    message["Auto-Submitted"] = "auto-replied"
    message["X-Auto-Response-Suppress"] = "All"
    message["Content-Language"] = letter.language
    message.set_content(letter.text)
    for attachment in letter.attachments:
        maintype, _, subtype = attachment.content_type.partition("/")
        message.add_attachment(attachment.data, maintype=maintype, subtype=subtype, filename=attachment.filename)
    return message


def _one_line(text: str) -> str:
    """Header text with every line break and control character folded to a space.

    A name or subject taken from a player can never start a header of its own.
    """
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
