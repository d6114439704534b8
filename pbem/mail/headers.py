"""The header of an incoming mail, read within limits: who wrote it, what it answers, whether
a machine sent it.

Every mail is untrusted, so the work spent on one is bounded before it is parsed
(:func:`check_bounds`): the header section, each header field, encoded words and MIME nesting
have limits.  Games are found by a per-player token that the service puts into the address
players reply to (``local+TOKEN@domain``) and into its own Message-IDs (``<TOKEN.UNIQUE@domain>``);
the helpers that make both live here too, so that reading and composing agree on one format.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from email import errors
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from typing import Any

from pbem.addresses import BOUNCE_PREFIX, is_machine_address, is_plain_address
from pbem.names import holds_address
from pbem.mail.policy import MAIL_POLICY

TOKEN_PATTERN = r"[a-z2-7]{26}"
"""A game token: 128 random bits in lower-case base32 without padding."""

# -- limits on the work per mail --------------------------------------------------------------

MAX_HEADER_BYTES = 64 * 1024
"""The whole header section of a mail."""
MAX_FIELD_CHARS = 16 * 1024
"""One header field, unfolded, in any MIME part."""
MAX_ENCODED_WORDS = 100
"""RFC 2047 encoded words in one header field (decoding them is the costly part of parsing)."""
MAX_FROM_CHARS = 998
MAX_FROM_ENCODED_WORDS = 10
MAX_SUBJECT_CHARS = 2000
MAX_SUBJECT_ENCODED_WORDS = 40
"""A longer Subject is not read (the mail still is)."""
MAX_CONTAINERS = 16
"""multipart/* and message/* parts in one mail: this also bounds the nesting depth."""
MAX_PARTS = 100
KEPT_REFUSED_BODY_BYTES = 64 * 1024
"""Of the body of a refused mail, what is stored (:func:`refused_copy`)."""
MAX_CONTENT_FIELD_CHARS = 1000
"""A Content-* header field: the email package parses these again on every look."""
MAX_MESSAGE_ID_CHARS = 250
MAX_REFERENCES = 50
"""Message-IDs read from References, newest first."""


MESSAGE_ID = re.compile(rf"<[!-;=?-~]{{1,{MAX_MESSAGE_ID_CHARS}}}>")
"""A Message-ID that may be copied into an answer: printable ASCII, no space or angle bracket
(and, checked by :func:`is_safe_message_id`, no encoded word, which a header would decode)."""
TOKEN_MESSAGE_ID = re.compile(rf"<({TOKEN_PATTERN})\.[^<>@\s]+@[^<>\s]+>")
"""One of the service's Message-IDs, which name the token of the player they were sent to."""
_ENCODED_WORD = "=?"
_CONTAINER = re.compile(rb"^content-type:[ \t]*(?:\r?\n[ \t]+)?(?:multipart|message)/", re.IGNORECASE | re.MULTILINE)
_PART = re.compile(rb"^content-type:", re.IGNORECASE | re.MULTILINE)

_SUBJECT_PREFIX = re.compile(r"^\s*(?:(?:re|aw|fwd?|wg)\s*(?:\[\d+\])?\s*:|\[[^\]]{0,80}\])\s*", re.I)

EMAIL_PACKAGE_ERRORS = (AttributeError, IndexError, LookupError, TypeError, ValueError, RecursionError)
"""What the email package raises on malformed input instead of registering a defect."""

_BULK_PRECEDENCE = ("bulk", "junk", "list")
_AUTOMATIC_SUBJECT = re.compile(
    r"^\W{0,3}(?:auto(?:matic|matische)?[ _-]?(?:generated|reply|response|antwort|generiert)"
    r"|out of (?:the )?office|abwesenheit|undeliverable|unzustellbar|delivery status notification"
    r"|mail delivery (?:failed|failure|subsystem)|returned mail|undelivered mail)",
    re.IGNORECASE,
)
"""Subjects only machines write; combined with no other sign they still mark an automatic mail."""


class UnreadableMail(ValueError):
    """A mail that cannot be read at all: no single clean sender, or beyond the limits."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def new_token() -> str:
    """A fresh unguessable game token (128 bits from the system's secure generator)."""
    return base64.b32encode(secrets.token_bytes(16)).decode("ascii").rstrip("=").lower()


def reply_address(service_address: str, token: str) -> str:
    """The service address with the token as plus-tag, for Reply-To: replies then name the game."""
    local, _, domain = service_address.rpartition("@")
    return f"{local}+{token}@{domain}"


def subject_text(subject: str) -> str:
    """The subject without reply/forward prefixes and list tags, to be read as a command."""
    previous = None
    while previous != subject:
        previous, subject = subject, _SUBJECT_PREFIX.sub("", subject, count=1)
    return subject.strip()


def check_bounds(raw: bytes) -> None:
    """Refuse, before any parsing, a mail whose header or MIME structure is beyond the limits."""
    if header_end(raw) > MAX_HEADER_BYTES:
        raise UnreadableMail(f"the header is larger than {MAX_HEADER_BYTES} bytes")
    if len(_CONTAINER.findall(raw)) > MAX_CONTAINERS:
        raise UnreadableMail(f"more than {MAX_CONTAINERS} nested MIME containers")
    if len(_PART.findall(raw)) > MAX_PARTS:
        raise UnreadableMail(f"more than {MAX_PARTS} MIME parts")


def refused_copy(raw: bytes) -> bytes:
    """What is kept of a mail the service refused (too large, unreadable, automatic): its header
    (at most MAX_HEADER_BYTES) and the first KEPT_REFUSED_BODY_BYTES of its body, enough for
    an operator to see what it was, never a stranger's 27 MB in the database."""
    return raw[: min(header_end(raw), MAX_HEADER_BYTES) + KEPT_REFUSED_BODY_BYTES]


def header_end(raw: bytes) -> int:
    """Where the header section ends (the whole mail when there is no body)."""
    ends = [found for separator in (b"\r\n\r\n", b"\n\n") if (found := raw.find(separator)) >= 0]
    return min(ends, default=len(raw))


def written_to_service(message: Message, service_address: str) -> bool:
    """The mail's own To or Cc names the service (any +tag).  A signed mail its sender wrote to
    somebody else, sent on to us unchanged by its recipient (a DKIM replay), still passes DKIM
    and DMARC, but was never written to the service: it proves nothing here.  (To and Cc are
    what signers sign; Delivered-To and X-Original-To, added on delivery, say nothing of it.)"""
    local, _, domain = service_address.lower().rpartition("@")
    ours = re.compile(rf"(?<![\w.+-]){re.escape(local)}(?:\+[^@\s<>,;]*)?@{re.escape(domain)}(?![\w.-])",
                      re.IGNORECASE)
    return any(ours.search(value) for header in ("To", "Cc") for value in raw_headers(message, header))


def check_fields(message: Message) -> None:
    """Every header field of every part within the limits (raw values: nothing is decoded yet)."""
    for part in message.walk():
        for name, value in part.raw_items():
            limit = MAX_CONTENT_FIELD_CHARS if name.lower().startswith("content-") else MAX_FIELD_CHARS
            if len(value) > limit or str(value).count(_ENCODED_WORD) > MAX_ENCODED_WORDS:
                raise UnreadableMail(f"the {name[:40]} header is beyond the limits")


def raw_headers(message: Message, name: str) -> list[str]:
    return [str(value) for key, value in message.raw_items() if key.lower() == name.lower()]


def raw_header(message: Message, name: str) -> str:
    return next(iter(raw_headers(message, name)), "")


def _decoded_header(message: Message, name: str, raw: str) -> str:
    """One header value decoded; one the email package cannot parse is taken as written."""
    try:
        return str(message.policy.header_fetch_parse(name, raw))
    except EMAIL_PACKAGE_ERRORS:
        return raw


def subject_of(message: Message) -> str:
    raw = raw_header(message, "Subject")
    if len(raw) > MAX_SUBJECT_CHARS or raw.count(_ENCODED_WORD) > MAX_SUBJECT_ENCODED_WORDS:
        return ""
    return " ".join(_decoded_header(message, "Subject", raw).split())


def sender_of(message: Message) -> tuple[str, str]:
    """(display name, lower-cased address) of the one From address; anything else is refused.

    The address is what ``email.headerregistry`` parses, and must be plain ASCII (pbem answers
    without SMTPUTF8): a mail with no From, several From headers, several addresses in From, or
    an address with control or non-ASCII characters cannot be answered, so it is not read.
    Where only the display name is odd (raw UTF-8, an encoded word in quotes, line breaks
    hidden in encoded words, an address as the name), the one ``<address>`` is what counts.
    """
    values = raw_headers(message, "From")
    if not values:
        raise UnreadableMail("no From header")
    if len(values) > 1:
        raise UnreadableMail("several From headers")
    value = values[0]
    if len(value) > MAX_FROM_CHARS or value.count(_ENCODED_WORD) > MAX_FROM_ENCODED_WORDS:
        raise UnreadableMail("the From header is beyond the limits")
    try:
        header: Any = message.policy.header_fetch_parse("From", value)  # an AddressHeader
        clean = not any(not isinstance(defect, errors.ObsoleteHeaderDefect) for defect in header.defects)
        addresses = header.addresses
    except EMAIL_PACKAGE_ERRORS:
        clean, addresses = False, ()
    if clean and len(addresses) == 1:
        address, name = addresses[0].addr_spec, addresses[0].display_name
    elif angle := _ONE_ANGLE_ADDRESS.fullmatch(value.strip()):
        address, name = angle["address"], _readable_name(angle["name"])
    elif clean:
        raise UnreadableMail("no single sender address in From")
    else:
        raise UnreadableMail("the From header is malformed")
    if not is_plain_address(address):
        raise UnreadableMail("the sender address cannot be answered")
    name = " ".join("".join(ch if ch.isprintable() else " " for ch in name).split())
    return ("" if holds_address(name) else name[:200]), address.lower()


_ONE_ANGLE_ADDRESS = re.compile(r"(?P<name>[^<>]*)<(?P<address>[^<>\s]+)>")
"""A display name (anything without angle brackets) and exactly one ``<address>``."""


def _readable_name(raw_name: str) -> str:
    """A display name as written (quotes off, encoded words decoded where they decode cleanly)."""
    name = raw_name.strip().strip('"').strip()
    try:
        name = name.encode("ascii", "surrogateescape").decode("utf-8")  # raw UTF-8 (RFC 6532)
    except UnicodeError:
        pass
    try:
        return str(make_header(decode_header(name)))
    except (HeaderParseError, errors.CharsetError, LookupError, UnicodeError, ValueError):
        return name  # a charset name with a raw 8-bit byte in it raises CharsetError


def sender_and_subject(raw: bytes) -> tuple[str, str]:
    """The From address and Subject for the record of any mail, even one that cannot be read:
    taken from the raw header, bounded, never failing."""
    try:
        message = BytesParser(policy=MAIL_POLICY).parsebytes(raw[: min(header_end(raw), MAX_HEADER_BYTES)],
                                                              headersonly=True)
        try:
            sender = sender_of(message)[1]
        except UnreadableMail:
            sender = ""
        return sender, subject_of(message)[:MAX_SUBJECT_CHARS]
    except Exception:  # the mail is recorded even when its header cannot be read at all
        return "", ""



def message_id_of(raw: bytes) -> str:
    """The mail's Message-ID (the first valid ``<…>`` of the header), or one made from a hash of
    its bytes.

    The same mail read twice gets the same id either way: this is what makes applying it
    idempotent, so the pipeline and the reader both use this one function.  Only printable
    ASCII ids are taken, so an id copied into an answer's In-Reply-To is always safe.
    """
    header = raw[: min(header_end(raw), MAX_HEADER_BYTES)].decode("ascii", errors="replace")
    for match in re.finditer(r"^message-id:[ \t]*((?:[^\r\n]|\r?\n[ \t])*)", header, re.IGNORECASE | re.MULTILINE):
        found = MESSAGE_ID.search(match.group(1))
        if found and is_safe_message_id(found.group()):
            return found.group()
        break
    return f"<{hashlib.sha256(raw).hexdigest()[:40]}@pbem.invalid>"


def is_safe_message_id(message_id: str) -> bool:
    """True for a Message-ID that may be copied into a header: nothing in it is decoded or breaks."""
    return MESSAGE_ID.fullmatch(message_id) is not None and "=?" not in message_id


def message_ids(message: Message, header: str) -> list[str]:
    return [found for found in MESSAGE_ID.findall(" ".join(raw_headers(message, header)))
            if is_safe_message_id(found)]


def reply_tokens(message: Message, service_address: str, answered: list[str]) -> list[str]:
    """Tokens from the address the player wrote to, then from the mails answered (newest first)."""
    local, _, domain = service_address.lower().rpartition("@")
    plus_address = re.compile(rf"(?<![\w.+-]){re.escape(local)}\+({TOKEN_PATTERN})@{re.escape(domain)}(?![\w.-])",
                              re.IGNORECASE)
    candidates = [found.group(1).lower()
                  for header in ("To", "Cc", "Delivered-To", "X-Original-To")
                  for value in raw_headers(message, header)
                  for found in plus_address.finditer(value)]
    candidates += [match[1] for message_id in answered if (match := TOKEN_MESSAGE_ID.fullmatch(message_id))]
    return list(dict.fromkeys(candidates))


BOUNCE_RECIPIENT_HEADERS = ("To", "Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To", "Cc")
"""Where a bounce address stands: the header the bouncing server wrote, or one our own server adds."""


def sent_to_bounce_address(message: Message, service_address: str) -> bool:
    """Whether the mail came to one of the service's VERP bounce addresses."""
    local, _, domain = service_address.lower().rpartition("@")
    pattern = re.compile(rf"(?<![\w.+-]){re.escape(local)}\+{BOUNCE_PREFIX}{TOKEN_PATTERN}@{re.escape(domain)}",
                         re.IGNORECASE)
    return any(pattern.search(value) for name in BOUNCE_RECIPIENT_HEADERS for value in raw_headers(message, name))


def why_automatic(message: Message, sender: str, service_address: str) -> str | None:
    """The first sign that a machine sent this mail (RFC 3834 and common practice), if any."""
    if not sender:
        return "sent to a bounce address, with no readable From"
    auto_submitted = raw_header(message, "Auto-Submitted").strip().lower()
    if auto_submitted and auto_submitted.split(";")[0].strip() != "no":
        return f"Auto-Submitted: {auto_submitted[:100]}"
    precedence = raw_header(message, "Precedence").strip().lower()
    if precedence in _BULK_PRECEDENCE:
        return f"Precedence: {precedence}"
    for header in ("List-Id", "List-Unsubscribe", "X-Autoreply", "X-Autorespond"):
        if header in message:
            return f"{header} header"
    if is_machine_address(sender):
        return f"sent by {sender}"
    if sender == service_address.lower():
        return "sent by the service itself"
    if raw_header(message, "Return-Path").strip() == "<>":
        return "empty Return-Path (a bounce)"
    if message.get_content_type() == "multipart/report":
        return "multipart/report (a delivery or read report)"
    if _AUTOMATIC_SUBJECT.match(subject_of(message)):
        return "a subject only machines write"
    return None
