"""Bounces: which of our mails came back, to whom, and why (RFC 3464 and the common others).

Every mail the service sends carries a VERP envelope sender, ``service+bounce-TAG@domain``, with
an unguessable tag of its own (:func:`pbem.addresses.bounce_address`): a bounce is sent to that address, and
the tag names the very mail that failed, whatever the bounce looks like.  Which recipients
failed is read by ``flufl.bounce`` (DSNs, Exim, qmail, Exchange, …), by the DSN's own
per-recipient fields (RFC 3464: Final-Recipient, Original-Recipient, Action, Status,
Diagnostic-Code, also where they stand in plain text), and, where neither finds one, from the
addresses the bounce's own text names (qmail, Notes, KDDI, Sendmail V5's transcript, …; the
service takes only a recipient of the very mail).  The diagnostic line comes from the DSN
fields, or from the first line near the address that looks like a mail server's answer; the
reason (:mod:`pbem.mail.bounce_reasons`) from the status, the words and the reply code.

Not bounces: provider notifications in JSON (Amazon SES), auto-replies, delivery and relay
notifications (2.x.x).  An abuse report (ARF, RFC 5965) names the address that complained.

mail/ knows nothing of games: this module says what bounced; :mod:`pbem.service.mailroom.bounces`
decides what that means.
"""

from __future__ import annotations

import email
import logging
import re
from dataclasses import dataclass
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import Message
from email.parser import HeaderParser

from flufl.bounce import all_failures

from pbem.addresses import ADDRESS_PATTERN, BOUNCE_PREFIX, is_machine_address
from pbem.mail.bounce_reasons import REPLY_CODE, Reason, classify, delay_warning, status_in
from pbem.mail.headers import BOUNCE_RECIPIENT_HEADERS as _RECIPIENT_HEADERS, TOKEN_PATTERN

log = logging.getLogger(__name__)

DETECTOR_BYTES = 256 * 1024
"""How much of a bounce ``flufl.bounce``'s detectors read: every DSN, Exim or qmail report states
its failures near its top, and the detectors take seconds on a mail of many short lines (a
hostile 2 MB one took 3.6 s); the mail returned below is no business of theirs."""

MAX_DIAGNOSTIC = 300
"""Characters of a diagnostic line kept: enough for any server's reason, never a whole mail."""
DIAGNOSTIC_LINES = 12
"""Lines below the failed address searched for its reason (not the copy of our mail further on)."""
MAX_NAMED = 20
"""Addresses taken from a bounce in no known shape: a bounce names one or a few."""
MAX_SCANNED_PARTS = 20
"""MIME parts looked at for reasons and original Message-IDs: a bounce has three or four."""
_SERVER_ANSWER = re.compile(r"\b[45]\d\d(?:[ -]|: )(?:[45]\.\d{1,3}\.\d{1,3}\b)?.*|\b[45]\.\d{1,3}\.\d{1,3}\b.*")
"""A mail server's answer: ``550 5.1.1 …``, ``550-…``, Yahoo's ``554: …``, or a bare status code."""
_BARE_STATUS = re.compile(r"\W*[45]\.\d{1,3}\.\d{1,3}\W*")
"""A status code with no words after it (qmail's "Sorry, no mailbox here by that name. (#5.1.1)"):
the reason is the whole line."""
_CONTINUATION = re.compile(r"(?<=\S)\s+[45]\d\d(?:[ -][45]\.\d{1,3}\.\d{1,3}\s|-)\s*")
_PLAIN_ADDRESS = re.compile(ADDRESS_PATTERN + r"\Z", re.IGNORECASE)
_BETWEEN_ADDRESSES = re.compile(r"[\s<>()\[\],;:\"'=/|]+")
MAX_ADDRESS_CHARS = 254
_WORDS = re.compile(r"[^\W\d_]{2,}")
_LABEL_ONLY = re.compile(r"[\s<>()]*(?:[\w-]+\s+){0,5}[\w-]+\s*:[\s<>()]*|[\s<>()]*on [\d.:/ ]+")
"""What stands beside an address but is no reason: "Recipient address:", "Could not be delivered
to:", " on 25.11.2026 10:00"."""
_DSN_TEXT_BLOCK = re.compile(
    r"^[ \t]*(?:final|original)-recipient:[ \t]*(?:rfc822|[\w-]+)?[ \t]*;?[ \t]*<?([^\s<>;]+@[^\s<>;]+)>?[ \t]*$"
    r"(?P<fields>(?:\n[ \t]*[\w-]+:.*$|\n[ \t]+\S.*$){0,12})", re.IGNORECASE | re.MULTILINE)
"""A recipient's DSN fields written as plain text (a DSN forwarded, or with no MIME structure)."""
_AUTO_REPLY_SUBJECT = re.compile(
    r"^\W{0,3}(?:auto(?:matic|matische)?[ _-]?(?:reply|respon|antwort)|out of (?:the )?office|abwesen|"
    r"vacation|urlaub|away from)", re.IGNORECASE)
_MAIL_SYSTEM_SENDER = re.compile(r"mailer-?daemon|postmaster|mail ?(?:delivery|router|system|administrator)|<>|"
                                 r"system administrator|\bmta\b")
_FAILURE_SUBJECT = re.compile(r"undeliver|unzustellbar|returned mail|failure|failed|delivery (?:status|report|error)|"
                              r"not delivered|could not be delivered|mail system error|non remis|nicht zugestellt|"
                              r"エラー|不達", re.IGNORECASE)
"""A report of a mail system, by its sender or subject: only such a mail, when its shape is
unknown, may tell of a failure without a server's answer in it."""
_JSON_NOTIFICATION = re.compile(rb'\A\s*\{.*?(?:notificationType|eventType|"Type"\s*:\s*"Notification")', re.DOTALL)
"""A provider's notification in JSON (Amazon SES by SNS): not a bounce to be read as one."""
_MESSAGE_ID_LINE = re.compile(r"^message-id:[ \t]*(<[^<>\s]{1,250}>)", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Failure:
    """One recipient a mail could not be delivered to."""

    address: str
    permanent: bool
    """The mail was returned (5.x.x or 4.x.x, "failed"); else a delay, which the server still retries."""
    status: str
    """The DSN status code (``5.1.1``), or empty when the bounce gives none."""
    diagnostic: str
    """The mail server's reason in one line, or empty."""
    reason: Reason


@dataclass(frozen=True)
class Bounce:
    """What a bounce tells: the tags of our mails it names, the Message-IDs of the mails it
    returns (where it includes their header), and the failed recipients."""

    tags: tuple[str, ...]
    original_message_ids: tuple[str, ...]
    failures: tuple[Failure, ...]
    named: frozenset[str] = frozenset()
    """Every address the bounce's own text and DSN fields name (lower case)."""
    complaints: tuple[str, ...] = ()
    """The addresses whose owners reported the mail as abuse (an ARF report)."""


def bounce_tags(addresses: list[str], service_address: str) -> tuple[str, ...]:
    """The tags of the bounce addresses among ``addresses`` (any case)."""
    local, _, domain = service_address.lower().rpartition("@")
    pattern = re.compile(rf"(?<![\w.+-]){re.escape(local)}\+{BOUNCE_PREFIX}({TOKEN_PATTERN})@{re.escape(domain)}")
    return tuple(dict.fromkeys(tag for address in addresses for tag in pattern.findall(address.lower())))


def read_bounce(raw: bytes, service_address: str) -> Bounce | None:
    """The bounce in ``raw``, or None when it is no bounce (a vacation notice sent to the
    envelope sender, a read receipt, a provider's JSON notification, a person's mail)."""
    message = email.message_from_bytes(raw)  # flufl.bounce reads compat32 messages
    if _is_auto_reply(message) or _JSON_NOTIFICATION.match(_body_start(message)):
        return None
    headers = [str(value) for name in _RECIPIENT_HEADERS for value in message.get_all(name, [])]
    text = _bounce_text(message)
    ids = _original_message_ids(message, text)
    tags = bounce_tags(headers, service_address)
    complaints = _complaints(message)
    if complaints:
        return Bounce(tags, ids, (), frozenset(complaints), complaints)
    try:
        temporary, permanent = all_failures(
            message if len(raw) <= DETECTOR_BYTES else email.message_from_bytes(raw[:DETECTOR_BYTES]))
    except Exception as exc:  # a detector choked on a malformed mail: our own reading still runs
        log.info("bounce detectors failed on a mail (%s: %s)", type(exc).__name__, exc)
        temporary, permanent = frozenset(), frozenset()
    fields = {**_dsn_text_fields(text), **_dsn_fields(message)}
    found: dict[str, bool] = {}  # address: returned for good (else a delay warning)
    warning = delay_warning(text)  # flufl.bounce's "temporary" also holds mails returned after 4.x.x
    for addresses, is_permanent in ((permanent, not delay_warning(text, strictly=True)),
                                    (temporary - permanent, not warning)):
        for encoded in sorted(addresses):
            found.setdefault(encoded.decode("ascii", "replace").strip().strip("<>").lower(), is_permanent)
    for block in {id(reason): reason for reason in fields.values()}.values():  # one address of each recipient
        names = [address for address, reason in fields.items() if reason is block]
        if not any(address in found for address in names):
            found[names[0]] = block[2] != "delayed"
    own = {message_id.strip("<>").lower() for message_id in ids}  # detectors take our quoted header for failures
    found = {address: final for address, final in found.items()
             if _PLAIN_ADDRESS.match(address) and address not in own and not _service_own(address, service_address)}
    named_only = not found  # no detector knew the shape: the addresses its text names
    if named_only:
        found = dict.fromkeys(_addresses_named(text, service_address), not warning)
    failures = []
    for address, final in found.items():
        status, diagnostic, action = fields.get(address, ("", "", ""))
        final = action != "delayed" if action else final
        diagnostic = diagnostic or _diagnostic_in(text, address)
        status = status or status_in(diagnostic)
        reason = classify(status, diagnostic, action, final=final)
        if named_only and reason in (Reason.REJECTED, Reason.DELAYED) and not REPLY_CODE.search(diagnostic) \
                and not status and not _from_a_mail_system(message):
            continue  # an address in a person's text that tells of no failure (an auto-reply's signature)
        if reason is not Reason.NOT_A_FAILURE:
            failures.append(Failure(address, reason is not Reason.DELAYED, status, diagnostic, reason))
    if not failures:
        return None
    named = frozenset(_addresses_in(text)) | fields.keys()
    return Bounce(tags, ids, tuple(failures), named)


def _is_auto_reply(message: Message) -> bool:
    """An auto-responder's answer to the envelope sender, not a report on delivery."""
    if message.get_content_type() == "multipart/report":
        return False
    if any(name in message for name in ("X-Autoreply", "X-Autorespond")):
        return True
    return str(message.get("Auto-Submitted", "")).strip().lower().startswith("auto-replied") and \
        bool(_AUTO_REPLY_SUBJECT.match(_subject(message)))


def _subject(message: Message) -> str:
    """The Subject decoded (an auto-reply's "=?UTF-8?Q?AutoRespons?= …"), bounded."""
    raw = str(message.get("Subject", ""))[:1000]
    try:
        return str(make_header(decode_header(raw)))
    except (HeaderParseError, LookupError, UnicodeError, ValueError):
        return raw


def _from_a_mail_system(message: Message) -> bool:
    """Whether the mail says it is a mail system's report (its sender or its subject)."""
    sender = str(message.get("From", "")).lower()
    return not sender.strip() or bool(_MAIL_SYSTEM_SENDER.search(sender)) or any(
        is_machine_address(address) for address in _addresses_in(sender)) or bool(
        _FAILURE_SUBJECT.search(_subject(message)))


def _body_start(message: Message) -> bytes:
    """The first bytes of the first leaf part (where a JSON notification starts)."""
    for part in _parts(message):
        if not part.is_multipart():
            payload = part.get_payload(decode=True)
            return payload[:4000] if isinstance(payload, bytes) else b""
    return b""


def _complaints(message: Message) -> tuple[str, ...]:
    """The complaining addresses of an abuse report (ARF, RFC 5965): its Original-Rcpt-To or
    Removal-Recipient, else the recipient of the mail it returns."""
    reports = [part for part in _parts(message) if part.get_content_type() == "message/feedback-report"]
    if not reports:
        return ()
    fields: list[str] = []
    for report in reports:
        payload = report.get_payload()
        blocks = payload if isinstance(payload, list) else [report]
        for block in blocks:
            if isinstance(block, Message):
                text = block.as_string() if block is not report else str(block.get_payload())
                fields += re.findall(r"(?im)^(?:original-rcpt-to|removal-recipient):\s*<?([^\s<>]+)>?", text)
    if not fields:
        for part in _parts(message):
            if part.get_content_type() in ("message/rfc822", "text/rfc822-headers"):
                inner = part.get_payload(0) if part.is_multipart() else HeaderParser().parsestr(
                    str(part.get_payload())[:64_000])
                if isinstance(inner, Message):
                    fields += [found for value in inner.get_all("To", []) for found in _addresses_in(str(value))]
    return tuple(dict.fromkeys(address.lower() for address in fields if _PLAIN_ADDRESS.match(address)))


def _service_own(address: str, service_address: str) -> bool:
    """The service's address or one of its +tag addresses (reply, bounce): never a recipient
    that failed, though a returned mail's quoted header names them."""
    local, _, domain = service_address.lower().rpartition("@")
    address_local, _, address_domain = address.rpartition("@")
    return address_domain == domain and (address_local == local or address_local.startswith(local + "+"))


def _addresses_in(text: str) -> list[str]:
    """The addresses in ``text``, lower case, in order: read word by word, not by a search from
    every position (which takes minutes on a hostile line of dots)."""
    return [word.strip(".").lower() for word in _BETWEEN_ADDRESSES.split(text)
            if "@" in word and len(word) <= MAX_ADDRESS_CHARS and _PLAIN_ADDRESS.match(word.strip("."))]


def _addresses_named(text: str, service_address: str) -> list[str]:
    """The addresses a bounce in no known shape names in its own text (the returned mail is not
    part of it), but for the service's own and the mail servers'."""
    domain = service_address.lower().rpartition("@")[2]
    return list(dict.fromkeys(
        address for address in _addresses_in(text)
        if address.rpartition("@")[2] != domain and not is_machine_address(address)))[:MAX_NAMED]


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


def _dsn_fields(message: Message) -> dict[str, tuple[str, str, str]]:
    """Status, diagnostic and action of each recipient of the DSN's delivery-status parts, by address."""
    fields: dict[str, tuple[str, str, str]] = {}
    for part in _parts(message):
        if part.get_content_type() != "message/delivery-status" or not part.is_multipart():
            continue
        for block in part.get_payload():
            if isinstance(block, Message):
                _add_recipient(fields, {name.lower(): str(value) for name, value in block.items()})
    return fields


def _dsn_text_fields(text: str) -> dict[str, tuple[str, str, str]]:
    """The same, from DSN fields written in the bounce's text."""
    fields: dict[str, tuple[str, str, str]] = {}
    for found in _DSN_TEXT_BLOCK.finditer(text):
        block = re.sub(r"\n[ \t]+", " ", found.group(0))
        _add_recipient(fields, {name.strip().lower(): value for name, _, value in
                                (line.partition(":") for line in block.splitlines())})
    return fields


def _add_recipient(fields: dict[str, tuple[str, str, str]], block: dict[str, str]) -> None:
    status = _one_line(block.get("status", ""))[:20]
    diagnostic = block.get("diagnostic-code", "").partition(";")
    action = _one_line(block.get("action", "")).lower().split(" ")[0]
    reason = (status, _without_continuations(_one_line(diagnostic[2] or diagnostic[0])), action)
    # flufl.bounce names the Original-Recipient (the address we sent to) where the DSN has
    # one, the Final-Recipient (where a forward led) else: the reason is under both.
    for name in ("original-recipient", "final-recipient", "x-actual-recipient"):
        value = block.get(name, "")
        address = (value.partition(";")[2] or value).strip().strip("<>").lower()
        if _PLAIN_ADDRESS.match(address):
            fields.setdefault(address, reason)


def _bounce_text(message: Message) -> str:
    """The human-readable text of the bounce (its text parts, not the mail it returns); also a
    delivery-status part or a multipart whose structure cannot be read (a wrong boundary)."""
    texts = []
    for part in _parts(message):
        unread = part.get_content_type() == "message/delivery-status" or part.get_content_maintype() == "multipart"
        if (part.get_content_maintype() == "text" and part.get_content_type() != "text/rfc822-headers") or (
                unread and not part.is_multipart()):
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                texts.append(payload[:64_000].decode(part.get_content_charset() or "utf-8", "replace"))
    return "\n".join(texts)


def _diagnostic_in(text: str, address: str) -> str:
    """The reason a bounce without DSN fields gives: the first mail server's answer near the
    line naming ``address`` (Exim writes it under the address); else the words on that line
    (Notes: "User … not listed in Domino Directory") or on the next (Exim's "retry timeout
    exceeded", KDDI); else a server's answer anywhere."""
    lines = text.splitlines()
    start = next((index for index, line in enumerate(lines) if address in line.lower()), None)
    near = [] if start is None else lines[start:start + DIAGNOSTIC_LINES]
    for line in near:
        found = _SERVER_ANSWER.search(line)
        if found:
            return _one_line(line if _BARE_STATUS.fullmatch(found.group(0)) else _unbracketed(found.group(0)))
    if start is not None:
        following = [line for line in lines[start + 1:start + 4] if line.strip()][:1]
        for line in [lines[start], *following]:
            rest = " ".join(word for word in line.split() if "@" not in word)
            if len(_WORDS.findall(rest)) >= 2 and not _LABEL_ONLY.fullmatch(rest):
                return _one_line(line)
    for line in lines[:start]:
        found = _SERVER_ANSWER.search(line)
        if found:
            return _one_line(line if _BARE_STATUS.fullmatch(found.group(0)) else _unbracketed(found.group(0)))
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


def _unbracketed(answer: str) -> str:
    """A server's answer without the bracket that closed it in the bounce's text (Sendmail's
    ``(reason: 550 5.7.1 …)``): a closing bracket it did not open is not its own."""
    return answer.rstrip()[:-1] if answer.rstrip().endswith(")") and answer.count(")") > answer.count("(") else answer


def _without_continuations(line: str) -> str:
    """A multi-line server answer (``550-5.1.1 … 550-5.1.1 …``) with its code written once."""
    return _CONTINUATION.sub(" ", line)


def _one_line(text: str) -> str:
    """Printable, on one line, and short: a server's reason shown to a player and the operator."""
    line = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return line if len(line) <= MAX_DIAGNOSTIC else line[: MAX_DIAGNOSTIC - 1] + "…"
