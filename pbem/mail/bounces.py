"""Bounces: which of our mails came back, to whom, and why (RFC 3464 and the common others).

Every mail the service sends carries a VERP envelope sender, ``service+bounce-TAG@domain``, with
an unguessable tag of its own (:func:`pbem.addresses.bounce_address`): a bounce is sent to that address, and
the tag names the very mail that failed, whatever the bounce looks like.  Which recipients
failed, and whether for good, is read by ``flufl.bounce`` (DSNs, Exim, qmail, Exchange, …); the
reason (the diagnostic line) from the DSN's per-recipient fields, or, in a bounce that has
none, from the first line that looks like a mail server's answer.

mail/ knows nothing of games: this module says what bounced; :mod:`pbem.service.bounces`
decides what that means.
"""

from __future__ import annotations

import email
import logging
import re
from dataclasses import dataclass
from email.message import Message
from email.parser import BytesHeaderParser, HeaderParser

from flufl.bounce import all_failures

from pbem.addresses import BOUNCE_PREFIX
from pbem.mail.reading import TOKEN_PATTERN

log = logging.getLogger(__name__)

MAX_DIAGNOSTIC = 300
"""Characters of a diagnostic line kept: enough for any server's reason, never a whole mail."""
DIAGNOSTIC_LINES = 12
"""Lines below the failed address searched for its reason (not the copy of our mail further on)."""
MAX_HEADER_BYTES = 256_000
MAX_SCANNED_PARTS = 20
"""MIME parts looked at for reasons and original Message-IDs: a bounce has three or four."""
_RECIPIENT_HEADERS = ("To", "Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To", "Cc")
"""Where the bounce address stands: the header the bouncing server wrote, or the one our own
server adds on delivery."""
_SERVER_ANSWER = re.compile(r"\b[45]\d\d(?:[ -]|: )(?:[45]\.\d{1,3}\.\d{1,3}\b)?.*|\b[45]\.\d{1,3}\.\d{1,3}\b.*")
"""A mail server's answer: ``550 5.1.1 …``, ``550-…``, Yahoo's ``554: …``, or a bare status code."""
_BARE_STATUS = re.compile(r"\W*[45]\.\d{1,3}\.\d{1,3}\W*")
"""A status code with no words after it (qmail's "Sorry, no mailbox here by that name. (#5.1.1)"):
the reason is the whole line."""
_CONTINUATION = re.compile(r"(?<=\S)\s+[45]\d\d(?:[ -][45]\.\d{1,3}\.\d{1,3}\s|-)\s*")
_MESSAGE_ID_LINE = re.compile(r"^message-id:[ \t]*(<[^<>\s]{1,250}>)", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Failure:
    """One recipient a mail could not be delivered to."""

    address: str
    permanent: bool
    """A permanent failure (5.x.x, "failed"); else a delay, which the server still retries."""
    status: str
    """The DSN status code (``5.1.1``), or empty when the bounce gives none."""
    diagnostic: str
    """The mail server's reason in one line, or empty."""


@dataclass(frozen=True)
class Bounce:
    """What a bounce tells: the tags of our mails it names, the Message-IDs of the mails it
    returns (where it includes their header), and the failed recipients."""

    tags: tuple[str, ...]
    original_message_ids: tuple[str, ...]
    failures: tuple[Failure, ...]


def bounce_tags(addresses: list[str], service_address: str) -> tuple[str, ...]:
    """The tags of the bounce addresses among ``addresses`` (any case)."""
    local, _, domain = service_address.lower().rpartition("@")
    pattern = re.compile(rf"(?<![\w.+-]){re.escape(local)}\+{BOUNCE_PREFIX}({TOKEN_PATTERN})@{re.escape(domain)}")
    return tuple(dict.fromkeys(tag for address in addresses for tag in pattern.findall(address.lower())))


def sent_to_bounce_address(raw: bytes, service_address: str) -> bool:
    """Whether the mail came to one of our bounce addresses (only its header is read): whatever
    it is, a bounce or an auto-responder answering the envelope sender, it is never answered."""
    header = BytesHeaderParser().parsebytes(raw[:MAX_HEADER_BYTES])
    return bool(bounce_tags([str(value) for name in _RECIPIENT_HEADERS for value in header.get_all(name, [])],
                            service_address))


def read_bounce(raw: bytes, service_address: str) -> Bounce | None:
    """The bounce in ``raw``, or None when it is no bounce (a vacation notice sent to the
    envelope sender, a read receipt, a person's mail)."""
    message = email.message_from_bytes(raw)  # flufl.bounce reads compat32 messages
    try:
        temporary, permanent = all_failures(message)
    except Exception as exc:  # a detector choked on a malformed mail: no bounce we can read
        log.info("bounce detectors failed on a mail (%s: %s)", type(exc).__name__, exc)
        return None
    if not temporary and not permanent:
        return None
    fields = _dsn_fields(message)
    text = _bounce_text(message)
    failures = []
    for addresses, is_permanent in ((permanent, True), (temporary - permanent, False)):
        for encoded in sorted(addresses):
            address = encoded.decode("ascii", "replace").strip().lower()
            status, diagnostic = fields.get(address, ("", ""))
            failures.append(Failure(address, is_permanent, status, diagnostic or _diagnostic_in(text, address)))
    headers = [str(value) for name in _RECIPIENT_HEADERS for value in message.get_all(name, [])]
    return Bounce(bounce_tags(headers, service_address), _original_message_ids(message, text), tuple(failures))


def _parts(message: Message) -> list[Message]:
    """The bounce's own MIME parts, never those of the mail it returns (``message/rfc822``)."""
    parts: list[Message] = []
    waiting = [message]
    while waiting and len(parts) < MAX_SCANNED_PARTS:
        part = waiting.pop(0)
        parts.append(part)
        if part.is_multipart() and part.get_content_maintype() == "multipart":
            waiting.extend(child for child in part.get_payload() if isinstance(child, Message))
    return parts


def _dsn_fields(message: Message) -> dict[str, tuple[str, str]]:
    """Status and diagnostic of each recipient of the DSN's delivery-status parts, by address."""
    fields: dict[str, tuple[str, str]] = {}
    for part in _parts(message):
        if part.get_content_type() != "message/delivery-status" or not part.is_multipart():
            continue
        for block in part.get_payload():
            if not isinstance(block, Message):
                continue
            status = _one_line(str(block.get("Status", "")))[:20]
            diagnostic = str(block.get("Diagnostic-Code", "")).partition(";")
            reason = (status, _without_continuations(_one_line(diagnostic[2] or diagnostic[0])))
            # flufl.bounce names the Original-Recipient (the address we sent to) where the DSN
            # has one, the Final-Recipient (where a forward led) else: the reason is under both.
            for name in ("Final-Recipient", "Original-Recipient", "X-Actual-Recipient"):
                address = str(block.get(name, "")).partition(";")[2].strip().strip("<>").lower()
                if address:
                    fields.setdefault(address, reason)
    return fields


def _bounce_text(message: Message) -> str:
    """The human-readable text of the bounce (its text parts, not the mail it returns)."""
    texts = []
    for part in _parts(message):
        if part.get_content_maintype() == "text" and part.get_content_type() != "text/rfc822-headers":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                texts.append(payload[:64_000].decode(part.get_content_charset() or "utf-8", "replace"))
    return "\n".join(texts)


def _diagnostic_in(text: str, address: str) -> str:
    """The reason a bounce without DSN fields gives: the first mail server's answer after the
    line naming ``address`` (Exim writes it under the address), else anywhere."""
    lines = text.splitlines()
    start = next((index for index, line in enumerate(lines) if address in line.lower()), 0)
    for line in [*lines[start:start + DIAGNOSTIC_LINES], *lines[:start]]:
        found = _SERVER_ANSWER.search(line)
        if found:
            return _one_line(line if _BARE_STATUS.fullmatch(found.group(0)) else found.group(0))
    return ""


def _original_message_ids(message: Message, text: str) -> tuple[str, ...]:
    """The Message-IDs of the returned mail: from its attached header, or a copy in the text."""
    found = []
    for part in _parts(message):
        if part.get_content_type() == "text/rfc822-headers":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                headers = HeaderParser().parsestr(payload[:64_000].decode("utf-8", "replace"))
                found.append(str(headers.get("Message-ID", "")))
        elif part.get_content_type() == "message/rfc822" and part.is_multipart():
            inner = part.get_payload(0)
            if isinstance(inner, Message):
                found.append(str(inner.get("Message-ID", "")))
    found.extend(_MESSAGE_ID_LINE.findall(text))
    return tuple(dict.fromkeys(" ".join(message_id.split()) for message_id in found if message_id.strip()))


def _without_continuations(line: str) -> str:
    """A multi-line server answer (``550-5.1.1 … 550-5.1.1 …``) with its code written once."""
    return _CONTINUATION.sub(" ", line)


def _one_line(text: str) -> str:
    """Printable, on one line, and short: a server's reason shown to a player and the operator."""
    line = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return line if len(line) <= MAX_DIAGNOSTIC else line[: MAX_DIAGNOSTIC - 1] + "…"
