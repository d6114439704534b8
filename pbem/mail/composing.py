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
from functools import lru_cache
from datetime import datetime
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.headerregistry import Address, BaseHeader
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.policy import default as default_policy
from email.utils import format_datetime, make_msgid

from pbem.mail.policy import MAIL_POLICY, MailMessage, header_to_keep
from pbem.mail.headers import TOKEN_PATTERN, is_safe_message_id, reply_address

MAX_REFERENCES = 12
"""Older References are dropped: the thread stays whole with the newest dozen."""

_REPLY_TOKEN = re.compile(rf"\+({TOKEN_PATTERN})@")
_GAME_MESSAGE_ID = re.compile(rf"^<({TOKEN_PATTERN})\.(\d+)-(\d+)\.[0-9a-f]+@[^<>\s]+>$")


@dataclass(frozen=True)
class Attachment:
    filename: str
    content_type: str
    data: bytes
    charset: str | None = None
    """For a text attachment: the encoding of ``data``, declared so clients show "ü" as "ü"."""


@dataclass(frozen=True)
class InlineImage:
    """A picture the HTML part shows by ``cid:`` (mail clients block external images)."""

    content_id: str
    """Without the angle brackets: the HTML refers to ``cid:<content_id>``."""
    filename: str
    data: bytes
    subtype: str = "png"


def new_content_id(name: str, service_address: str) -> str:
    """A unique Content-ID for an inline picture of a mail from ``service_address``."""
    return f"{name}.{secrets.token_hex(8)}@{service_address.rpartition('@')[2]}"


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
    html: str | None = None
    """The same letter as HTML, sent as the alternative to ``text``."""
    images: tuple[InlineImage, ...] = field(default=())
    """Pictures the HTML shows, sent with it as ``multipart/related``."""
    unsubscribe: tuple[str, ...] = ()
    """The ``List-Unsubscribe`` URIs (mailto, https) of a mail to someone who has not played."""


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


def reply_token_of(raw: bytes) -> str | None:
    """The token in the Reply-To of one of our own stored mails (None: it has none), read from
    its header alone."""
    reply_to = BytesHeaderParser(policy=default_policy).parsebytes(raw).get("Reply-To", "")
    found = _REPLY_TOKEN.search(str(reply_to))
    return None if found is None else found.group(1)


def compose(letter: Letter, service_address: str, service_name: str, now: datetime) -> EmailMessage:
    """The MIME message for ``letter``, sent from the service address.

    Text only: ``text/plain``.  With HTML: ``multipart/alternative`` (text, then HTML, wrapped
    with its pictures in ``multipart/related``).  Attachments (the ``.mat``) make the top level
    ``multipart/mixed``.
    """
    domain = service_address.rpartition("@")[2]
    message = MailMessage(policy=MAIL_POLICY)
    message["From"] = _address_header("From", service_name, service_address)
    message["To"] = _address_header("To", letter.to_name, letter.to_address)
    if letter.token is not None:
        message["Reply-To"] = _address_header("Reply-To", service_name, reply_address(service_address, letter.token))
    message["Subject"] = _one_line(letter.subject)
    message["Date"] = format_datetime(now)
    if letter.token is not None and letter.stamp is not None:
        message["Message-ID"] = game_message_id(letter.token, letter.stamp, domain)
    else:
        message["Message-ID"] = make_msgid(domain=domain)
    in_reply_to = letter.in_reply_to if letter.in_reply_to and is_safe_message_id(letter.in_reply_to) else None
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
    references = [reference for reference in [*letter.references, *([in_reply_to] if in_reply_to else [])]
                  if is_safe_message_id(reference)]
    if references:
        message["References"] = " ".join(dict.fromkeys(references[-MAX_REFERENCES:]))
    message["Auto-Submitted"] = "auto-replied"
    if letter.unsubscribe:
        # RFC 2369 and 8058: a mailbox provider offers its reader an "unsubscribe" button; with
        # an https URI it POSTs "List-Unsubscribe=One-Click" to it, without opening a page.
        message["List-Unsubscribe"] = ", ".join(f"<{uri}>" for uri in letter.unsubscribe)
        if any(uri.startswith("https://") for uri in letter.unsubscribe):
            message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message["X-Auto-Response-Suppress"] = "All"
    message.set_content(letter.text)
    if letter.html is not None:
        message.add_alternative(letter.html, subtype="html")
        *_, html_part = message.iter_parts()
        for image in letter.images:
            html_part.add_related(image.data, maintype="image", subtype=image.subtype, cid=f"<{image.content_id}>",
                                  filename=image.filename, disposition="inline")
        if letter.images:
            html_part.set_param("type", "text/html")  # RFC 2387: the type of the related root
    for attachment in letter.attachments:
        maintype, _, subtype = attachment.content_type.partition("/")
        message.add_attachment(attachment.data, maintype=maintype, subtype=subtype, filename=attachment.filename,
                               params={"charset": attachment.charset} if attachment.charset else None)
    message["Content-Language"] = letter.language  # after the body: setting content clears Content-*
    for part in message.walk():
        if part.is_multipart():
            part.set_boundary(_new_boundary())
    return message


HEADERS_KEPT = 4096
"""How many parsed header objects are kept: an address header is parsed once per player and game."""


@lru_cache(maxsize=HEADERS_KEPT)
def _address_header(name: str, display_name: str, address: str) -> BaseHeader:
    """The header ``name`` for one address, parsed once and kept: the policy parses every header
    set (an address takes a few tenths of a millisecond), and the same From, To and Reply-To
    recur in every mail of a game.  Header objects are immutable strings: shared safely."""
    return header_to_keep(MAIL_POLICY, name, str(Address(_one_line(display_name), addr_spec=address)))


def _new_boundary() -> str:
    """A MIME boundary no part can contain by chance (128 random bits), so the generator need not
    search the whole mail, picture and all, for a line that happens to equal it."""
    return f"=_pbem_{secrets.token_hex(16)}"


def _one_line(text: str) -> str:
    """Header text with every line break and control character folded to a space.

    A name or subject taken from a player can never start a header of its own. RFC 2047 encoded
    words are decoded first (they may hide a line break that Python's header folding would write
    out decoded), and any left over are broken up.
    """
    for _ in range(3):
        try:
            decoded = str(make_header(decode_header(text)))
        except (HeaderParseError, LookupError, UnicodeError):
            break
        if decoded == text:
            break
        text = decoded
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split()).replace("=?", "= ?")
