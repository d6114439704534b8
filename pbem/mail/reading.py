"""Reading a player's mail: who wrote it, which game it answers, and what they newly wrote.

Every mail is untrusted, so the work spent on one is bounded before it is parsed
(:func:`check_bounds`): the header section, each header field, encoded words, MIME nesting and
the text read all have limits, and every pattern runs on bounded windows of a line or two, so
no mail of up to ``max_mail_bytes`` costs more than a fraction of a second.

A reply carries much more than the player's words: the quoted service mail with its board, the
mail client's attribution line ("On … wrote:", "Am … schrieb …:", "Le … a écrit :") or Outlook
header block, a signature.  Only the newly written text may be read as commands (SPEC §3), so
this module cuts everything else away, and tells mails that must never be answered
(auto-replies, bounces, mailing lists, robots; RFC 3834) from mails written by a person.

The new text is found in this order: the plain part (else the HTML part without its
blockquotes and client quote containers), unflowed (RFC 3676) so that a command never merges
with the line below it; the original starts at an Outlook header block, an "Original Message"
line, a run of lines of the service mail being answered, or an attribution line (every
language mail-parser-reply knows, and any line naming the service's address, name or
Message-IDs): an attribution is dropped when a '>' quote follows it and ends the text when an
unquoted original does; '>' lines go; a signature ends it unless a command still follows; the
service's own board and ID lines go.  At most :data:`MAX_NEW_LINES` lines are read.

Games are found by a per-player token that the service puts into the address players reply to
(``local+TOKEN@domain``) and into its own Message-IDs (``<TOKEN.UNIQUE@domain>``); the helpers
that make both live here too, so that reading and composing agree on one format.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email import errors
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.parser import BytesParser
from html import unescape as unescape_html
from typing import Any

from inscriptis import Inscriptis
from inscriptis.model.config import ParserConfig
from lxml import etree
from lxml import html as lxml_html
from mailparser_reply.constants import GENERIC_MAIL_SEPARATOR, MAIL_LANGUAGES
from mailparser_reply.parser import EmailMessage as ReplyParser

from pbem.addresses import BOUNCE_PREFIX, is_machine_address, is_plain_address
from pbem.names import holds_address
from pbem.mail.policy import MAIL_POLICY
from pbem.mail import authentication

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
MAX_PARSED_BODY_BYTES = 256 * 1024
"""Of the body, only this much is parsed: commands stand in the first text part, at its top."""
MAX_BODY_CHARS = 256 * 1024
"""Decoded text of the body part read."""
MAX_HTML_CHARS = 64 * 1024
"""Of an HTML part, read before its tags are taken out (the reply stands at its top)."""
MAX_SCANNED_LINES = 5000
"""Lines of the body looked at, quotes and blank lines included."""
MAX_NEW_LINES = 60
"""Non-blank lines of new text read (as Mailman's ``email_commands_max_lines``); more are ignored."""
MAX_WINDOW_CHARS = 160
"""An attribution line (or two lines of one) is never longer: longer lines are not matched
against the patterns (a line naming the service's address or name is found at any length)."""
MAX_PATTERN_CHECKS = 40
"""Attribution and header-block patterns tried per mail; each costs up to about a millisecond."""
MAX_OWN_PLACES = 8
"""Places of one line in our own mail tried as the start of a quoted run (a blank-free mail repeats
few lines; this bounds the work for one that repeats many)."""
MAX_OWN_LINE_CHARS = 4000
"""A line compared with the lines of our own mail as a reader sees it, at most (ours are shorter)."""
MAX_STYLE_CHARS = 16 * 1024
"""Of a style attribute or a ``<style>`` element, read for what it hides (the HTML itself is
at most MAX_HTML_CHARS)."""
MAX_STYLE_RULES = 100
"""Simple rules of ``<style>`` elements applied per mail (each is tried on every element)."""
KEPT_REFUSED_BODY_BYTES = 64 * 1024
"""Of the body of a refused mail, what is stored (:func:`refused_copy`)."""
MAX_CONTENT_FIELD_CHARS = 1000
"""A Content-* header field: the email package parses these again on every look."""
MAX_MESSAGE_ID_CHARS = 250
MAX_REFERENCES = 50
"""Message-IDs read from References, newest first."""

_MESSAGE_ID = re.compile(rf"<[!-;=?-~]{{1,{MAX_MESSAGE_ID_CHARS}}}>")
"""A Message-ID that may be copied into an answer: printable ASCII, no space or angle bracket
(and, checked by :func:`is_safe_message_id`, no encoded word, which a header would decode)."""
_TOKEN_MESSAGE_ID = re.compile(rf"<({TOKEN_PATTERN})\.[^<>@\s]+@[^<>\s]+>")
_ENCODED_WORD = "=?"
_CONTAINER = re.compile(rb"^content-type:[ \t]*(?:\r?\n[ \t]+)?(?:multipart|message)/", re.IGNORECASE | re.MULTILINE)
_PART = re.compile(rb"^content-type:", re.IGNORECASE | re.MULTILINE)

_REPLY_LANGUAGES = tuple(language for language, patterns in MAIL_LANGUAGES.items() if patterns.get("wrote_header"))
_EXTRA_ATTRIBUTIONS = (
    r"^(?:> ?)*Em\s.{1,160}\sescreveu:$",  # Portuguese (Gmail)
    r"^(?:> ?)*El\s.{1,160}\sescribi[óo]:$",  # Spanish with one space (Gmail)
    r"^(?:> ?)*W dniu\s.{1,160}\s(?:napisał(?:\(a\))?|nadesłał):$",  # Polish (Gmail)
    r"^(?:> ?)*Op\s.{1,160}\sschreef\s.{1,160}:$",  # Dutch (Gmail)
    r"^(?:> ?)*.{1,160}\shat\s.{1,160}\sFolgendes geschrieben:$",  # Yahoo, German
    r"^(?:> ?)*.{1,160}\sschrieb am\s.{1,160}:$",
    r"^(?:> ?)*-{2,} ?On\s.{1,160}\swrote ?-{2,}$",  # Zoho
)
_ATTRIBUTION = re.compile(
    "|".join([MAIL_LANGUAGES[language]["wrote_header"] for language in _REPLY_LANGUAGES] + list(_EXTRA_ATTRIBUTIONS)),
    re.MULTILINE | re.IGNORECASE,
)
"""'On … wrote:' lines in every language mail-parser-reply knows, and a few it misses; they are
only ever matched against a window of one or two lines of at most MAX_WINDOW_CHARS."""
_OUTLOOK_SEPARATOR = r"^_{32,}$"
"""Outlook's line above its header block, which the parser misses right after a text line."""
_HEADER_BLOCK = re.compile(
    "|".join(
        [MAIL_LANGUAGES[language]["from_header"] for language in _REPLY_LANGUAGES if "from_header" in MAIL_LANGUAGES[language]]
        + [GENERIC_MAIL_SEPARATOR, _OUTLOOK_SEPARATOR]
    ),
    re.MULTILINE | re.IGNORECASE,
)
"""Outlook 'From:/Sent:/To:/Subject:' (or 'Von:/Gesendet:/An:/Betreff:', …) blocks and
'----- Original Message -----': the original follows unquoted, so everything after it goes."""
_HEADER_BLOCK_START = re.compile(r"^[* ]*(?:[^\W\d]{2,20}(?: [^\W\d]{2,20})?) ?:|^-{5,}|^_{32,}$")
"""A cheap first test before _HEADER_BLOCK runs on a window of lines: 'Word:' or a rule."""
_HEADER_BLOCK_LINES = 5

_GERMAN_SENT_FROM = re.compile(r"^von meinem \S+(?: \S+){0,2} gesendet$", re.IGNORECASE)
"""Apple's 'Von meinem iPhone gesendet', which the parser knows only in English."""

_SERVICE_LINE = re.compile(
    r"^(?:(?:position|match)\s+id\s*:\s*\S+|dice (?:commitment|seed)\s*:\s*\S+|[v^]?[|+].*[|+].*|(?:\d{1,2} +){5,}\d{1,2})$",
    re.IGNORECASE,
)
"""The service's own identifier lines, board frame lines and point-number rows, when a client
quotes without '>'."""

_SUBJECT_PREFIX = re.compile(r"^\s*(?:(?:re|aw|fwd?|wg)\s*(?:\[\d+\])?\s*:|\[[^\]]{0,80}\])\s*", re.I)

_EMAIL_PACKAGE_ERRORS = (AttributeError, IndexError, LookupError, TypeError, ValueError, RecursionError)
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


@dataclass(frozen=True)
class IncomingMail:
    """What the service needs to know of one incoming mail."""

    message_id: str
    sender: str
    sender_name: str
    subject: str
    in_reply_to: str | None
    references: list[str]
    reply_tokens: list[str]
    """Candidate game tokens, most trustworthy first; the service looks them up in this order."""
    new_text: str
    automatic: str | None
    """Why this mail must never be answered, or None for a mail written by a person."""
    size: int
    too_large: bool = False
    """Over ``max_bytes``: only the header was read, and ``new_text`` is empty."""
    language_hint: str | None = field(default=None)
    """The Content-Language the mail declares, if any (lower case, e.g. ``de``)."""
    sender_authenticated: bool = False
    """The operator's own mail server vouches for the From address (``Authentication-Results``
    of the trusted authserv-id: ``pbem.mail.authentication``)."""


@dataclass(frozen=True)
class ReadingContext:
    """What the service knows that helps to read a mail; mail/ itself knows nothing of games.

    ``is_command`` tells a command line (for signatures and unflowing); ``quoted_text`` gives
    the text of the service's own mail named by the given Message-IDs (newest first), so that
    an unmarked quote of it is cut away.
    """

    service_address: str
    service_name: str = ""
    max_bytes: int | None = None
    is_command: Callable[[str], bool] = field(default=lambda line: False)
    quoted_text: Callable[[Sequence[str]], str | None] = field(default=lambda message_ids: None)
    trusted_authserv_id: str | None = None
    """The authserv-id of the operator's own server, whose Authentication-Results are believed."""


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
    header_end = _header_end(raw)
    if header_end > MAX_HEADER_BYTES:
        raise UnreadableMail(f"the header is larger than {MAX_HEADER_BYTES} bytes")
    if len(_CONTAINER.findall(raw)) > MAX_CONTAINERS:
        raise UnreadableMail(f"more than {MAX_CONTAINERS} nested MIME containers")
    if len(_PART.findall(raw)) > MAX_PARTS:
        raise UnreadableMail(f"more than {MAX_PARTS} MIME parts")


def refused_copy(raw: bytes) -> bytes:
    """What is kept of a mail the service refused (too large, unreadable, automatic): its header
    (at most MAX_HEADER_BYTES) and the first KEPT_REFUSED_BODY_BYTES of its body, enough for
    an operator to see what it was, never a stranger's 27 MB in the database."""
    header_end = min(_header_end(raw), MAX_HEADER_BYTES)
    return raw[: header_end + KEPT_REFUSED_BODY_BYTES]


def _header_end(raw: bytes) -> int:
    """Where the header section ends (the whole mail when there is no body)."""
    ends = [found for separator in (b"\r\n\r\n", b"\n\n") if (found := raw.find(separator)) >= 0]
    return min(ends, default=len(raw))


def read_mail(raw: bytes, service_address: str | ReadingContext) -> IncomingMail:
    """Read one raw RFC 5322 mail as received by the service (see the module docstring)."""
    context = service_address if isinstance(service_address, ReadingContext) else ReadingContext(service_address)
    if not raw.strip():
        raise UnreadableMail("the mail is empty")
    check_bounds(raw)
    too_large = context.max_bytes is not None and len(raw) > context.max_bytes
    header_end = _header_end(raw)
    source = raw[:header_end] + b"\r\n\r\n" if too_large else raw[: header_end + MAX_PARSED_BODY_BYTES]
    try:
        message = BytesParser(policy=MAIL_POLICY).parsebytes(source)
    except _EMAIL_PACKAGE_ERRORS as error:
        raise UnreadableMail(f"the MIME structure cannot be read ({type(error).__name__})") from None
    _check_fields(message)
    try:
        sender_name, sender = _sender(message)
    except UnreadableMail:
        if not _sent_to_bounce_address(message, context.service_address):
            raise
        sender_name, sender = "", ""  # a bounce, whatever its From (``<>``, ``MAILER-DAEMON``): never answered
    references = _message_ids(message, "References")[-MAX_REFERENCES:]
    in_reply_to = next(iter(_message_ids(message, "In-Reply-To")), None)
    answered = list(dict.fromkeys(([in_reply_to] if in_reply_to else []) + references[::-1]))
    body = "" if too_large else _body_text(message, context)
    return IncomingMail(
        message_id=message_id_of(raw),
        sender=sender,
        sender_name=sender_name,
        subject=_subject(message),
        in_reply_to=in_reply_to,
        references=references,
        reply_tokens=_reply_tokens(message, context.service_address, answered),
        new_text=new_text(body, context, context.quoted_text(answered) if body else None),
        automatic=_why_automatic(message, sender, context.service_address),
        size=len(raw),
        too_large=too_large,
        language_hint=_raw_header(message, "Content-Language").strip().lower()[:2] or None,
        sender_authenticated=context.trusted_authserv_id is not None and authentication.sender_authenticated(
            _raw_headers(message, "Authentication-Results"), sender, context.trusted_authserv_id)
        and _written_to_service(message, context.service_address),
    )


def _written_to_service(message: Message, service_address: str) -> bool:
    """The mail's own To or Cc names the service (any +tag).  A signed mail its sender wrote to
    somebody else, sent on to us unchanged by its recipient (a DKIM replay), still passes DKIM
    and DMARC, but was never written to the service: it proves nothing here.  (To and Cc are
    what signers sign; Delivered-To and X-Original-To, added on delivery, say nothing of it.)"""
    local, _, domain = service_address.lower().rpartition("@")
    ours = re.compile(rf"(?<![\w.+-]){re.escape(local)}(?:\+[^@\s<>,;]*)?@{re.escape(domain)}(?![\w.-])",
                      re.IGNORECASE)
    return any(ours.search(value) for header in ("To", "Cc") for value in _raw_headers(message, header))


def _check_fields(message: Message) -> None:
    """Every header field of every part within the limits (raw values: nothing is decoded yet)."""
    for part in message.walk():
        for name, value in part.raw_items():
            limit = MAX_CONTENT_FIELD_CHARS if name.lower().startswith("content-") else MAX_FIELD_CHARS
            if len(value) > limit or str(value).count(_ENCODED_WORD) > MAX_ENCODED_WORDS:
                raise UnreadableMail(f"the {name[:40]} header is beyond the limits")


def _raw_headers(message: Message, name: str) -> list[str]:
    return [str(value) for key, value in message.raw_items() if key.lower() == name.lower()]


def _raw_header(message: Message, name: str) -> str:
    return next(iter(_raw_headers(message, name)), "")


def _decoded_header(message: Message, name: str, raw: str) -> str:
    """One header value decoded; one the email package cannot parse is taken as written."""
    try:
        return str(message.policy.header_fetch_parse(name, raw))
    except _EMAIL_PACKAGE_ERRORS:
        return raw


def _subject(message: Message) -> str:
    raw = _raw_header(message, "Subject")
    if len(raw) > MAX_SUBJECT_CHARS or raw.count(_ENCODED_WORD) > MAX_SUBJECT_ENCODED_WORDS:
        return ""
    return " ".join(_decoded_header(message, "Subject", raw).split())


def _sender(message: Message) -> tuple[str, str]:
    """(display name, lower-cased address) of the one From address; anything else is refused.

    The address is what ``email.headerregistry`` parses, and must be plain ASCII (pbem answers
    without SMTPUTF8): a mail with no From, several From headers, several addresses in From, or
    an address with control or non-ASCII characters cannot be answered, so it is not read.
    Where only the display name is odd (raw UTF-8, an encoded word in quotes, line breaks
    hidden in encoded words, an address as the name), the one ``<address>`` is what counts.
    """
    values = _raw_headers(message, "From")
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
    except _EMAIL_PACKAGE_ERRORS:
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
        message = BytesParser(policy=MAIL_POLICY).parsebytes(raw[: min(_header_end(raw), MAX_HEADER_BYTES)],
                                                              headersonly=True)
        try:
            sender = _sender(message)[1]
        except UnreadableMail:
            sender = ""
        return sender, _subject(message)[:MAX_SUBJECT_CHARS]
    except Exception:  # the mail is recorded even when its header cannot be read at all
        return "", ""


def recorded_sender_and_subject(mail: IncomingMail) -> tuple[str, str]:
    """What :func:`sender_and_subject` gives for the mail read as ``mail``: its record takes them
    from the reading, without parsing the header once more."""
    return mail.sender, mail.subject[:MAX_SUBJECT_CHARS]


def message_id_of(raw: bytes) -> str:
    """The mail's Message-ID (the first valid ``<…>`` of the header), or one made from a hash of
    its bytes.

    The same mail read twice gets the same id either way: this is what makes applying it
    idempotent, so the pipeline and the reader both use this one function.  Only printable
    ASCII ids are taken, so an id copied into an answer's In-Reply-To is always safe.
    """
    header = raw[: min(_header_end(raw), MAX_HEADER_BYTES)].decode("ascii", errors="replace")
    for match in re.finditer(r"^message-id:[ \t]*((?:[^\r\n]|\r?\n[ \t])*)", header, re.IGNORECASE | re.MULTILINE):
        found = _MESSAGE_ID.search(match.group(1))
        if found and is_safe_message_id(found.group()):
            return found.group()
        break
    return f"<{hashlib.sha256(raw).hexdigest()[:40]}@pbem.invalid>"


def is_safe_message_id(message_id: str) -> bool:
    """True for a Message-ID that may be copied into a header: nothing in it is decoded or breaks."""
    return _MESSAGE_ID.fullmatch(message_id) is not None and "=?" not in message_id


def _message_ids(message: Message, header: str) -> list[str]:
    return [found for found in _MESSAGE_ID.findall(" ".join(_raw_headers(message, header)))
            if is_safe_message_id(found)]


def _reply_tokens(message: Message, service_address: str, answered: list[str]) -> list[str]:
    """Tokens from the address the player wrote to, then from the mails answered (newest first)."""
    local, _, domain = service_address.lower().rpartition("@")
    plus_address = re.compile(rf"(?<![\w.+-]){re.escape(local)}\+({TOKEN_PATTERN})@{re.escape(domain)}(?![\w.-])",
                              re.IGNORECASE)
    candidates = [found.group(1).lower()
                  for header in ("To", "Cc", "Delivered-To", "X-Original-To")
                  for value in _raw_headers(message, header)
                  for found in plus_address.finditer(value)]
    candidates += [match[1] for message_id in answered if (match := _TOKEN_MESSAGE_ID.fullmatch(message_id))]
    return list(dict.fromkeys(candidates))


BOUNCE_RECIPIENT_HEADERS = ("To", "Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To", "Cc")
"""Where a bounce address stands: the header the bouncing server wrote, or one our own server adds."""


def _sent_to_bounce_address(message: Message, service_address: str) -> bool:
    """Whether the mail came to one of the service's VERP bounce addresses."""
    local, _, domain = service_address.lower().rpartition("@")
    pattern = re.compile(rf"(?<![\w.+-]){re.escape(local)}\+{BOUNCE_PREFIX}{TOKEN_PATTERN}@{re.escape(domain)}",
                         re.IGNORECASE)
    return any(pattern.search(value) for name in BOUNCE_RECIPIENT_HEADERS for value in _raw_headers(message, name))


def _why_automatic(message: Message, sender: str, service_address: str) -> str | None:
    """The first sign that a machine sent this mail (RFC 3834 and common practice), if any."""
    if not sender:
        return "sent to a bounce address, with no readable From"
    auto_submitted = _raw_header(message, "Auto-Submitted").strip().lower()
    if auto_submitted and auto_submitted.split(";")[0].strip() != "no":
        return f"Auto-Submitted: {auto_submitted[:100]}"
    precedence = _raw_header(message, "Precedence").strip().lower()
    if precedence in _BULK_PRECEDENCE:
        return f"Precedence: {precedence}"
    for header in ("List-Id", "List-Unsubscribe", "X-Autoreply", "X-Autorespond"):
        if header in message:
            return f"{header} header"
    if is_machine_address(sender):
        return f"sent by {sender}"
    if sender == service_address.lower():
        return "sent by the service itself"
    if _raw_header(message, "Return-Path").strip() == "<>":
        return "empty Return-Path (a bounce)"
    if message.get_content_type() == "multipart/report":
        return "multipart/report (a delivery or read report)"
    if _AUTOMATIC_SUBJECT.match(_subject(message)):
        return "a subject only machines write"
    return None


def _body_text(message: EmailMessage, context: ReadingContext) -> str:
    """The mail's text: the plain part if there is one, else the HTML part turned into text.

    A MIME structure the email package cannot take apart reads as no text: the sender is still
    known and gets the answer for a mail that says nothing the service can act on.
    """
    try:
        part = message.get_body(preferencelist=("plain", "html"))
        if part is None:
            return ""
        text = _decoded(part)[:MAX_BODY_CHARS].replace("\r\n", "\n")
        if part.get_content_type() == "text/html":
            return html_to_text(text[:MAX_HTML_CHARS])
        if str(part.get_param("format", "")).lower() == "flowed":
            return unflow(text, context, str(part.get_param("delsp", "")).lower() == "yes")
        return text
    except _EMAIL_PACKAGE_ERRORS:
        return ""


def _decoded(part: Message) -> str:
    """The part's text, surviving wrong or unknown charset labels rather than failing."""
    payload = part.get_payload(decode=True) or b""
    if not isinstance(payload, bytes):
        return ""
    payload = payload[: 4 * MAX_BODY_CHARS]
    for charset in (part.get_content_charset() or "us-ascii", "utf-8"):
        try:
            return payload.decode(charset)
        except (LookupError, UnicodeDecodeError):
            continue
    return payload.decode("cp1252", errors="replace")


def unflow(text: str, context: ReadingContext, delete_space: bool = False) -> str:
    """Join the soft line breaks of format=flowed (RFC 3676), keeping quote depths apart.

    A paragraph also ends after a command line, before a line that alone is a command, and
    before an attribution or header line: a client that leaves a space after ``accept`` (or
    after "Good luck!") must not glue it to the line below.  At most MAX_SCANNED_LINES lines.
    """
    patterns = _Patterns(context)
    is_command = context.is_command
    paragraphs: list[tuple[int, list[str]]] = []
    joining = False
    for line in text.split("\n", MAX_SCANNED_LINES)[:MAX_SCANNED_LINES]:
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:].removeprefix(" ")
        if (joining and paragraphs and paragraphs[-1][0] == depth and not is_command(content.strip())
                and not patterns.opens_original(content.strip())):
            paragraphs[-1][1].append(content)
        else:
            paragraphs.append((depth, [content]))
        joining = content.endswith(" ") and content != "-- "
        if joining and delete_space:
            paragraphs[-1][1][-1] = content[:-1]
        if joining and len(paragraphs[-1][1]) == 1 and is_command(content.strip()):
            joining = False
    return "\n".join(f"{'>' * depth} {''.join(pieces)}" if depth else "".join(pieces) for depth, pieces in paragraphs)


_SIGNATURE_TAIL = r"(.|\s)*)"


def _signature_pattern(languages: Sequence[str]) -> re.Pattern[str]:
    """mail-parser-reply's signature pattern, without its tail that swallows the rest of the
    text: it is matched at the start of one line at a time."""
    pattern: re.Pattern[str] = ReplyParser(text="", languages=list(languages), keep_hyphen_lists=True).SIGNATURE_REGEX
    if pattern.pattern.endswith(_SIGNATURE_TAIL):
        return re.compile(pattern.pattern[: -len(_SIGNATURE_TAIL)] + ")", pattern.flags)
    return pattern


_SIGNATURE = _signature_pattern(_REPLY_LANGUAGES)


class _Patterns:
    """The pattern tests of one mail, within a budget of MAX_PATTERN_CHECKS costly matches."""

    def __init__(self, context: ReadingContext) -> None:
        self.context = context
        self.checks_left = MAX_PATTERN_CHECKS
        local, _, domain = context.service_address.lower().rpartition("@")
        self._service_address = re.compile(
            rf"(?<![\w.+-]){re.escape(local)}(?:\+[^@\s]*)?@{re.escape(domain)}(?![\w-])") if local else None

    def _afford(self) -> bool:
        self.checks_left -= 1
        return self.checks_left >= 0

    def is_attribution(self, window: str) -> bool:
        """'On … wrote:' in any known language (a window of one or two lines)."""
        return (len(window) <= MAX_WINDOW_CHARS and window.rstrip().endswith((":", "-")) and self._afford()
                and bool(_ATTRIBUTION.match(window)))

    def is_header_block(self, lines: list[str], index: int) -> bool:
        """An Outlook header block ('From:/Sent:/To:', in any known language) starts here."""
        if not _HEADER_BLOCK_START.match(lines[index][:MAX_WINDOW_CHARS]) or not self._afford():
            return False
        window = "\n".join(each[:MAX_WINDOW_CHARS] for each in lines[index : index + _HEADER_BLOCK_LINES])
        return bool(_HEADER_BLOCK.match(window))

    def opens_original(self, line: str) -> bool:
        return bool(self.names_service(line) or self.is_attribution(line) or self.is_header_block([line], 0))

    def names_service(self, line: str) -> bool:
        """The line names the service's address (any +tag), one of its Message-IDs, or its name
        at the end of an attribution ("…, Backgammon by Mail wrote:")."""
        lowered = line.lower()
        if self._service_address is not None and (self._service_address.search(lowered)
                                                  or _TOKEN_MESSAGE_ID.search(lowered)):
            return True
        name = self.context.service_name.lower()
        return bool(name) and name in lowered and lowered.rstrip().endswith((":", "-"))


def new_text(body: str, context: ReadingContext | None = None, quoted: str | None = None) -> str:
    """Only what the player newly wrote: no quote, attribution, header block, signature or board.

    ``quoted`` is the text of the service mail being answered, if known: a run of its lines
    quoted without '>' is cut like any other original.
    """
    context = context or ReadingContext("")
    patterns = _Patterns(context)
    lines = [line.strip() for line in body[:MAX_BODY_CHARS].replace("\r\n", "\n").split("\n", MAX_SCANNED_LINES)]
    del lines[MAX_SCANNED_LINES:]
    lines = _cut_original(lines, patterns, OwnText(quoted or ""))
    lines = [line for line in lines if not line.startswith(">")]
    lines = _cut_signature(lines, context.is_command)
    lines = [line for line in lines if not _SERVICE_LINE.match(line[:MAX_WINDOW_CHARS])]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _cut_original(lines: list[str], patterns: _Patterns, own_text: OwnText) -> list[str]:
    """Lines up to the unquoted original (at most MAX_NEW_LINES of them not quoted); attribution
    lines that introduce a '>' quote are dropped, and the text after that quote is kept."""
    kept: list[str] = []
    read = 0
    index = 0
    while index < len(lines) and read < MAX_NEW_LINES:
        line = lines[index]
        if line.startswith(">") or not line:
            kept.append(line)
            index += 1
            continue
        span = _original_span(lines, index, patterns, own_text)
        if span:
            following = next((later for later in lines[index + span:] if later), "")
            if not following.startswith(">"):
                break
            index += span
            continue
        kept.append(line)
        read += 1
        index += 1
    return kept


_TAG = re.compile(r"<[^<>]{0,1000}>")


def _as_seen(line: str) -> str:
    """A line as a reader sees it: HTML tags left out, entities decoded, spaces made single.
    A reply's HTML source read as text (its Content-Type damaged) quotes our mail this way.
    A line longer than MAX_OWN_LINE_CHARS is no line of ours and is left as it is (bounded work)."""
    if len(line) > MAX_OWN_LINE_CHARS:
        return line
    if "<" in line or "&" in line:
        line = unescape_html(_TAG.sub(" ", line))
    return " ".join(line.split())


class OwnText:
    """The text of the service mail being answered, to recognise it quoted without '>'.

    A player copies lines of our mail (the example move, a command) and writes them as their own;
    such a line must never be cut because it also stands in our mail.  So only a run of lines that
    follow each other in our mail counts as a quote: three of them, or two when one is a line of
    the board or the identifiers, which nobody types.  Blank lines are passed over on both sides.

    Lines are compared as a reader sees them (:func:`_as_seen`): when a reply's quote has lost
    its markers, as HTML whose source arrives as text after header damage, our mail is still
    known by its run of lines, and the example move in it is not played.  ``text`` may hold our
    mail's plain text and the text of its HTML part one after the other.
    """

    RUN = 3
    SEARCHED = 6 * RUN
    """Lines after a line of ours searched for the rest of its run (tags alone are no lines)."""

    def __init__(self, text: str) -> None:
        self.lines = [seen for line in text.split("\n") if (seen := _as_seen(line))]
        self.places: dict[str, list[int]] = {}
        for place, line in enumerate(self.lines):
            self.places.setdefault(line, []).append(place)

    def starts_quote(self, lines: list[str], index: int) -> bool:
        """``lines[index]`` begins a run of our mail's lines, quoted without '>'."""
        places = self.places.get(_as_seen(lines[index]))
        if not places:
            return False
        following = [seen for line in lines[index + 1 : index + self.SEARCHED]
                     if (seen := _as_seen(line))][: self.RUN - 1]
        for place in places[:MAX_OWN_PLACES]:
            run = 1
            for offset, line in enumerate(following, start=1):
                if place + offset >= len(self.lines) or self.lines[place + offset] != line:
                    break
                run += 1
            board = any(_SERVICE_LINE.match(line[:MAX_WINDOW_CHARS]) for line in self.lines[place : place + run])
            if run >= self.RUN or (run == 2 and board):
                return True
        return False


def _original_span(lines: list[str], index: int, patterns: _Patterns, own_text: OwnText) -> int:
    """How many lines from ``index`` introduce the original (0: none do)."""
    line = lines[index]
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if own_text.starts_quote(lines, index):
        return 1  # the service's own mail, quoted without '>'
    if patterns.names_service(line):
        return 1
    if following and patterns.names_service(following) and not patterns.context.is_command(line):
        if line.endswith(("<", "(", ",")) or patterns.is_attribution(f"{line} {following}"):
            return 2  # an attribution wrapped before the service's address
    if patterns.is_attribution(line):
        return 1
    if following.rstrip().endswith((":", "-")) and patterns.is_attribution(f"{line}\n{following}"):
        return 2
    return 1 if patterns.is_header_block(lines, index) else 0


def _cut_signature(lines: list[str], is_command: Callable[[str], bool]) -> list[str]:
    """Cut at the first signature after which the player gives no command.

    Closing words ("Thanks, good game!", "Grüße an Anna") often stand above a command, and a
    command must never be lost to a signature.  One pass: the last command line is found first.
    """
    last_command = max((index for index, line in enumerate(lines) if line and is_command(line)), default=-1)
    for index in range(last_command + 1, len(lines)):
        line = lines[index]
        if not line or len(line) > MAX_WINDOW_CHARS:
            continue
        window = "\n" + "\n".join(lines[index : index + 2])[:MAX_WINDOW_CHARS]
        if _GERMAN_SENT_FROM.match(line) or _SIGNATURE.match(window, 1 if index else 0):
            return lines[:index]
    return lines


_SKIPPED_TAGS = frozenset(("blockquote", "head", "script", "style", "title", "template", "noscript"))
"""Never shown, or the quoted original: left out with everything inside."""
_SKIPPED_CLASSES = frozenset(("gmail_quote", "gmail_signature", "moz-cite-prefix", "yahoo_quoted"))
_ORIGINAL_FOLLOWS_IDS = frozenset(
    ("divrplyfwdmsg", "appendonsend", "mail-editor-reference-message-container")
)
_DECLARATION = re.compile(r"\s*([a-z-]+)\s*:\s*([^;]*?)\s*(?:!important\s*)?(?:;|$)", re.IGNORECASE)
_STYLE_RULE = re.compile(r"([^{}]{1,200})\{([^{}]{0,2000})\}")
_SIMPLE_SELECTOR = re.compile(r"([a-z][a-z0-9]*)?(?:([.#])([\w-]+))?", re.IGNORECASE)
_ZERO = re.compile(r"[+-]?(?:0+(?:\.0*)?|\.0+)(?:[a-z%]+)?", re.IGNORECASE)
"""A length or number of zero ("0", "0px", "0.0em"; not "auto" or "small", which hold no zero)."""
_NAMED_COLOURS = {"white": (255, 255, 255), "black": (0, 0, 0), "red": (255, 0, 0), "green": (0, 128, 0),
                  "blue": (0, 0, 255), "yellow": (255, 255, 0), "gray": (128, 128, 128), "grey": (128, 128, 128),
                  "silver": (192, 192, 192), "snow": (255, 250, 250), "ivory": (255, 255, 240),
                  "whitesmoke": (245, 245, 245), "ghostwhite": (248, 248, 255)}
_PAPER = (255, 255, 255)
"""What a mail client shows under text that sets no background."""
_TOO_CLOSE = 16
"""Text whose colour is this close to its background (per channel) cannot be read."""
_LAYOUT = ParserConfig(display_links=False, display_images=False)


def _declarations(style: str) -> dict[str, str]:
    return {name.lower(): value.strip().lower() for name, value in _DECLARATION.findall(style[:MAX_STYLE_CHARS])}


def _colour(value: str) -> tuple[int, int, int] | None:
    """A CSS colour as RGB (None: none, or one not known here); of a shorthand like ``background:
    #000 url(…)``, its first word."""
    value = value.strip()
    if not value.startswith("rgb"):
        value = value.split()[0] if value.split() else ""
    if value in _NAMED_COLOURS:
        return _NAMED_COLOURS[value]
    if re.fullmatch(r"#[0-9a-f]{3}", value):
        return int(value[1] * 2, 16), int(value[2] * 2, 16), int(value[3] * 2, 16)
    if re.fullmatch(r"#[0-9a-f]{6}", value):
        return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)
    found = re.fullmatch(r"rgba?\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*(?:,\s*[\d.]+%?\s*)?\)", value)
    return (int(found.group(1)), int(found.group(2)), int(found.group(3))) if found else None


def _transparent(value: str) -> bool:
    found = re.fullmatch(r"rgba\([^)]*,\s*([\d.]+)%?\s*\)", value)
    return value == "transparent" or bool(found and float(found.group(1) or 0) == 0)


_LENGTH = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))\s*(px|em|rem|pt|pc|cm|mm|in|%|vw|vh|ch|ex)?")
_PIXELS = {None: 1.0, "px": 1.0, "em": 16.0, "rem": 16.0, "ex": 8.0, "ch": 8.0, "pt": 4 / 3, "pc": 16.0,
           "cm": 96 / 2.54, "mm": 96 / 25.4, "in": 96.0, "%": 6.0, "vw": 6.0, "vh": 6.0}
"""CSS units in pixels, roughly (a percentage of a mail's width of about 600 pixels)."""
FAR_OUT_PIXELS = 500
"""A box moved this far (or text indented this far) is off the screen of any mail reader."""
_SCALE = re.compile(r"scale(?:[xyz]|3d)?\(([^()]{0,100})\)")
_CLIP_RECT = re.compile(r"rect\(([^()]{0,100})\)")
_CLIP_PATH_NOTHING = re.compile(r"(?:circle|ellipse)\(\s*0[a-z%]*[\s,)]|inset\(\s*(?:[5-9]\d|\d{3,})(?:\.\d*)?%\s*\)")


def _pixels(value: str) -> float | None:
    """A CSS length in pixels (roughly), or None for anything else (``auto``, ``calc(…)``)."""
    found = _LENGTH.fullmatch(value.strip())
    return None if found is None else float(found.group(1)) * _PIXELS[found.group(2)]


def _zero(declarations: dict[str, str], name: str) -> bool:
    return name in declarations and bool(_ZERO.fullmatch(declarations[name]))


def _far_out(declarations: dict[str, str], name: str) -> bool:
    length = _pixels(declarations.get(name, ""))
    return length is not None and abs(length) >= FAR_OUT_PIXELS


def _clipped(declarations: dict[str, str]) -> bool:
    """Overflow cut off: what does not fit the box is not seen."""
    values = " ".join(declarations.get(name, "") for name in ("overflow", "overflow-x", "overflow-y")).split()
    return any(value in ("hidden", "clip") for value in values)


def _positioned(declarations: dict[str, str]) -> bool:
    return declarations.get("position") in ("absolute", "fixed")


def _scaled_to_nothing(declarations: dict[str, str]) -> bool:
    for arguments in _SCALE.findall(declarations.get("transform", "")[:MAX_STYLE_CHARS]):
        if any(_ZERO.fullmatch(argument.strip()) for argument in arguments.split(",")):
            return True
    return any(_ZERO.fullmatch(factor) for factor in declarations.get("scale", "").split())


def _clip_to_nothing(declarations: dict[str, str]) -> bool:
    """``clip: rect(…)`` of no area (on a positioned box, the only kind it clips), or a
    ``clip-path`` that leaves nothing (a circle of no radius, an inset of half the box or more)."""
    rect = _CLIP_RECT.search(declarations.get("clip", ""))
    if rect is not None and _positioned(declarations):
        written = re.split(r"[\s,]+", rect.group(1).strip())
        sides = [length for side in written if (length := _pixels(side)) is not None]
        if len(written) == len(sides) == 4:
            top, right, bottom, left = sides
            if bottom <= top or right <= left:
                return True
    return bool(_CLIP_PATH_NOTHING.search(declarations.get("clip-path", "")))


_HIDING_TRICKS: tuple[tuple[str, Callable[[dict[str, str]], bool]], ...] = (
    ("display: none", lambda style: style.get("display") == "none"),
    ("visibility: hidden or collapse", lambda style: style.get("visibility") in ("hidden", "collapse")),
    ("opacity: 0", lambda style: _zero(style, "opacity")),
    ("font-size: 0", lambda style: _zero(style, "font-size")),
    ("a transparent colour", lambda style: _transparent(style.get("color", ""))),
    ("mso-hide: all (Outlook's own)", lambda style: style.get("mso-hide") == "all"),
    ("max-height: 0", lambda style: _zero(style, "max-height")),
    ("height, width or max-width 0, overflow hidden",
     lambda style: any(_zero(style, name) for name in ("height", "width", "max-width")) and _clipped(style)),
    ("line-height: 0, overflow hidden", lambda style: _zero(style, "line-height") and _clipped(style)),
    ("text-indent far out", lambda style: _far_out(style, "text-indent")),
    ("positioned far out (left, top or right: -9999px)",
     lambda style: _positioned(style) and any((_pixels(style.get(side, "")) or 0) <= -FAR_OUT_PIXELS
                                              for side in ("left", "top", "right"))),
    ("positioned far out by a margin", lambda style: _positioned(style) and any(
        (_pixels(style.get(side, "")) or 0) <= -FAR_OUT_PIXELS for side in ("margin-left", "margin-top"))),
    ("clip or clip-path to nothing", _clip_to_nothing),
    ("transform: scale(0)", _scaled_to_nothing),
)
"""Every way of hiding text by style that the reading knows, in one place: each takes the
declarations of one element (its own and those of the simple ``<style>`` rules that match it).
Colours (text in the colour of its background) are judged apart, as they depend on the boxes
around the element (:meth:`_Visibility.hidden`)."""


def _hides(declarations: dict[str, str]) -> bool:
    """Declarations that leave their element's text unseen, whatever surrounds it."""
    return any(trick(declarations) for _, trick in _HIDING_TRICKS)


class _Visibility:
    """What the eye does not see in an HTML mail: hidden by an attribute, an inline style or a
    simple rule of a ``<style>`` element, or written in the colour of its background."""

    def __init__(self, root: Any) -> None:
        self.rules: list[tuple[str | None, str | None, str | None, dict[str, str]]] = []
        for style in root.iter("style"):
            for selectors, body in _STYLE_RULE.findall((style.text or "")[:MAX_STYLE_CHARS]):
                declarations = _declarations(body)
                for selector in selectors.split(","):
                    simple = _SIMPLE_SELECTOR.fullmatch(selector.strip())
                    if simple and any(simple.groups()) and len(self.rules) < MAX_STYLE_RULES:
                        tag, kind, name = simple.groups()
                        self.rules.append((tag and tag.lower(), kind, name and name.lower(), declarations))

    def style_of(self, element: Any) -> dict[str, str]:
        """The element's declarations: the simple rules that match it, then its own attributes."""
        declarations: dict[str, str] = {}
        classes = set(str(element.get("class", "")).lower().split())
        ident = str(element.get("id", "")).lower()
        for tag, kind, name, rule in self.rules:
            if (tag is not None and tag != element.tag) or (kind == "." and name not in classes) \
                    or (kind == "#" and name != ident):
                continue
            declarations.update(rule)
        declarations.update(_declarations(str(element.get("style", ""))))
        if element.tag == "font" and element.get("color"):
            declarations.setdefault("color", str(element.get("color")).lower())
        if element.get("bgcolor"):
            declarations.setdefault("background-color", str(element.get("bgcolor")).lower())
        return declarations

    def hidden(self, element: Any, background: tuple[int, int, int]) -> tuple[bool, tuple[int, int, int]]:
        """Whether ``element`` is unseen on ``background``, and the background of what it holds."""
        declarations = self.style_of(element)
        own = _colour(declarations.get("background-color", declarations.get("background", "")))
        behind = own or background
        if element.get("hidden") is not None or _hides(declarations):
            return True, behind
        colour = _colour(declarations.get("color", ""))
        return colour is not None and all(abs(a - b) <= _TOO_CLOSE for a, b in zip(colour, behind)), behind


def _drop(node: Any) -> None:
    """Remove ``node`` and what it holds, keeping the text that follows it."""
    parent = node.getparent()
    if parent is None:
        return
    if node.tail:
        previous = node.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + node.tail
        else:
            parent.text = (parent.text or "") + node.tail
    parent.remove(node)


def _cut_from(node: Any) -> None:
    """Remove ``node`` and everything after it in the document (the original a reply quotes)."""
    first = True
    while node.getparent() is not None:
        parent = node.getparent()
        for later in list(node.itersiblings()):
            parent.remove(later)
        node.tail = None
        if first:
            parent.remove(node)
            first = False
        node = parent


def _visible_tree(html: str) -> Any:
    """The mail's HTML parsed by lxml, everything a reader does not see taken out (None: no HTML)."""
    try:
        root = lxml_html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return None
    for comment in list(root.iter(etree.Comment, etree.ProcessingInstruction)):
        _drop(comment)
    original = next((element for element in root.iter() if isinstance(element.tag, str)
                     and str(element.get("id", "")).lower() in _ORIGINAL_FOLLOWS_IDS), None)
    if original is not None:
        _cut_from(original)
    visibility = _Visibility(root)
    pending: list[tuple[Any, tuple[int, int, int]]] = [(root, _PAPER)]
    unseen = []
    while pending:  # no recursion: a deep tree costs no stack
        element, background = pending.pop()
        for child in element:
            if not isinstance(child.tag, str):
                continue
            hidden, behind = visibility.hidden(child, background)
            if hidden or child.tag in _SKIPPED_TAGS or _SKIPPED_CLASSES & set(str(child.get("class", "")).split()):
                unseen.append(child)
            else:
                pending.append((child, behind))
    for element in unseen:
        _drop(element)
    return root


def html_to_text(html: str) -> str:
    """The text a reader sees in an HTML mail, one line per block: quotes, the original and text
    hidden from the eye (by ``hidden``, by styles, in the colour of its background) left out.

    lxml parses it (in linear time, whatever the markup) and inscriptis lays the text out."""
    root = _visible_tree(html)
    if root is None:
        return ""
    text = Inscriptis(root, _LAYOUT).get_text().replace("\u00a0", " ")
    lines = [line.strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
