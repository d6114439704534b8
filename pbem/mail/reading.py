"""Reading a player's mail: who wrote it, which game it answers, and what they newly wrote.

A reply carries much more than the player's words: the quoted service mail with its board, the
mail client's attribution line ("On … wrote:", "Am … schrieb …:") or Outlook header block, a
signature.  Only the newly written text may be read as commands (SPEC §3), so this module cuts
everything else away, and tells mails that must never be answered (auto-replies, bounces,
mailing lists; RFC 3834) from mails written by a person.

The new text is found in this order: the plain part (else the HTML part without its
blockquotes and client quote containers); an Outlook header block or "Original Message" line
ends it; an attribution line is dropped when a '>' quote follows it and ends the text when an
unquoted original does; '>' lines go; a signature ("-- ", "Sent from my iPhone", closing words)
ends it unless a command still follows; the service's own board and ID lines go.  Attribution,
header and signature patterns come from mail-parser-reply (English and German).

Games are found by a per-player token that the service puts into the address players reply to
(``local+TOKEN@domain``) and into its own Message-IDs (``<TOKEN.UNIQUE@domain>``); the helpers
that make both live here too, so that reading and composing agree on one format.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from email.message import EmailMessage, Message
from email.parser import BytesHeaderParser, BytesParser
from email.policy import default as default_policy
from email.utils import getaddresses, parseaddr
from html.parser import HTMLParser

from mailparser_reply.constants import GENERIC_MAIL_SEPARATOR, MAIL_LANGUAGES
from mailparser_reply.parser import EmailMessage as ReplyParser

from pbem.commands import Note, parse_commands

TOKEN_PATTERN = r"[a-z2-7]{26}"
"""A game token: 128 random bits in lower-case base32 without padding."""

_TOKEN_MESSAGE_ID = re.compile(rf"<({TOKEN_PATTERN})\.[^<>@\s]+@[^<>\s]+>")
_MESSAGE_ID = re.compile(r"<[^<>\s]+>")

_REPLY_LANGUAGES = ("de", "en")
_OUTLOOK_SEPARATOR = r"^_{32,}$"
"""Outlook's line above its header block, which the parser misses right after a text line."""
_GERMAN_SENT_FROM = re.compile(r"^von meinem \S+(?: \S+){0,2} gesendet$", re.MULTILINE | re.IGNORECASE)
"""Apple's 'Von meinem iPhone gesendet', which the parser knows only in English."""
_ATTRIBUTION = re.compile(
    "|".join(MAIL_LANGUAGES[language]["wrote_header"] for language in _REPLY_LANGUAGES),
    re.MULTILINE | re.IGNORECASE,
)
"""'On … wrote:' / 'Am … schrieb …:' lines: a quote follows, usually marked with '>'."""
_HEADER_BLOCK = re.compile(
    "|".join(
        [MAIL_LANGUAGES[language]["from_header"] for language in _REPLY_LANGUAGES]
        + [GENERIC_MAIL_SEPARATOR, _OUTLOOK_SEPARATOR]
    ),
    re.MULTILINE | re.IGNORECASE,
)
"""Outlook 'From:/Sent:/To:/Subject:' (or 'Von:/Gesendet:/An:/Betreff:') blocks and
'----- Original Message -----': the original follows unquoted, so everything after it goes."""

_SERVICE_LINE = re.compile(
    r"^(?:(?:position|match)\s+id\s*:\s*\S+|[v^]?[|+].*[|+].*)$", re.IGNORECASE
)
"""The service's own identifier lines and board frame lines, when a client quotes without '>'."""

_SUBJECT_PREFIX = re.compile(r"^\s*(?:(?:re|aw|fwd?|wg)\s*(?:\[\d+\])?\s*:|\[[^\]]*\])\s*", re.I)

_EMAIL_PACKAGE_ERRORS = (AttributeError, IndexError, LookupError, TypeError, ValueError)
"""What the email package raises on malformed input instead of registering a defect."""

_AUTOMATIC_SENDERS = ("mailer-daemon", "postmaster")
_BULK_PRECEDENCE = ("bulk", "junk", "list")


class UnreadableMail(ValueError):
    """A mail that cannot be read at all: it has no sender to answer."""

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


def read_mail(raw: bytes, service_address: str) -> IncomingMail:
    """Read one raw RFC 5322 mail as received by ``service_address``."""
    if not raw.strip():
        raise UnreadableMail("the mail is empty")
    message = BytesParser(policy=default_policy).parsebytes(raw)
    sender_name, sender = _sender(message)
    references = _message_ids(message, "References")
    in_reply_to = next(iter(_message_ids(message, "In-Reply-To")), None)
    return IncomingMail(
        message_id=message_id_of(raw),
        sender=sender,
        sender_name=sender_name,
        subject=" ".join(_header(message, "Subject").split()),
        in_reply_to=in_reply_to,
        references=references,
        reply_tokens=_reply_tokens(message, service_address, in_reply_to, references),
        new_text=new_text(_body_text(message)),
        automatic=_why_automatic(message, sender, service_address),
        size=len(raw),
    )


def _headers(message: Message, name: str) -> list[str]:
    """All values of a header, decoded; one the email package cannot parse is taken as written."""
    values = []
    for key, raw in message.raw_items():
        if key.lower() == name.lower():
            try:
                values.append(str(message.policy.header_fetch_parse(key, raw)))
            except _EMAIL_PACKAGE_ERRORS:
                values.append(raw)
    return values


def _header(message: Message, name: str) -> str:
    return next(iter(_headers(message, name)), "")


def _sender(message: Message) -> tuple[str, str]:
    """(display name, lower-cased bare address) of From; a mail without one cannot be answered."""
    name, address = parseaddr(_header(message, "From"))
    local, at, domain = address.rpartition("@")
    if not (at and local and domain):
        raise UnreadableMail("no sender address in From")
    return name, address.lower()


def message_id_of(raw: bytes) -> str:
    """The mail's Message-ID (the first ``<…>`` of the header), or one made from a hash of its bytes.

    The same mail read twice gets the same id either way: this is what makes applying it
    idempotent, so the pipeline and the reader both use this one function.
    """
    try:
        header = BytesHeaderParser(policy=default_policy).parsebytes(raw).get("Message-ID", "")
        found = _MESSAGE_ID.search(str(header))
    except Exception:  # a header so broken that the parser gives up still names a mail
        found = None
    return found.group() if found else f"<{hashlib.sha256(raw).hexdigest()[:40]}@pbem.invalid>"


def _message_ids(message: Message, header: str) -> list[str]:
    return _MESSAGE_ID.findall(" ".join(_headers(message, header)))


def _reply_tokens(
    message: Message, service_address: str, in_reply_to: str | None, references: list[str]
) -> list[str]:
    """Tokens from the address the player wrote to, then from the mail answered, then the thread."""
    local, _, domain = service_address.lower().rpartition("@")
    plus_address = re.compile(rf"{re.escape(local)}\+({TOKEN_PATTERN})@{re.escape(domain)}")
    recipients = [
        address.lower()
        for header in ("To", "Cc", "Delivered-To", "X-Original-To")
        for _, address in getaddresses(_headers(message, header))
    ]
    candidates = [match[1] for address in recipients if (match := plus_address.fullmatch(address))]
    for message_id in ([in_reply_to] if in_reply_to else []) + references[::-1]:
        if match := _TOKEN_MESSAGE_ID.fullmatch(message_id):
            candidates.append(match[1])
    return list(dict.fromkeys(candidates))


def _why_automatic(message: Message, sender: str, service_address: str) -> str | None:
    """The first sign that a machine sent this mail (RFC 3834 and common practice), if any."""
    auto_submitted = _header(message, "Auto-Submitted").strip().lower()
    if auto_submitted and auto_submitted.split(";")[0].strip() != "no":
        return f"Auto-Submitted: {auto_submitted}"
    precedence = _header(message, "Precedence").strip().lower()
    if precedence in _BULK_PRECEDENCE:
        return f"Precedence: {precedence}"
    for header in ("List-Id", "List-Unsubscribe", "X-Autoreply", "X-Autorespond"):
        if header in message:
            return f"{header} header"
    if sender.partition("@")[0] in _AUTOMATIC_SENDERS:
        return f"sent by {sender}"
    if sender == service_address.lower():
        return "sent by the service itself"
    if _header(message, "Return-Path").strip() == "<>":
        return "empty Return-Path (a bounce)"
    if _header(message, "Content-Type").partition(";")[0].strip().lower() == "multipart/report":
        return "multipart/report (a delivery or read report)"
    return None


def _body_text(message: EmailMessage) -> str:
    """The mail's text: the plain part if there is one, else the HTML part turned into text.

    A MIME structure the email package cannot take apart reads as no text: the sender is still
    known and gets the answer for a mail that says nothing the service can act on.
    """
    try:
        part = message.get_body(preferencelist=("plain", "html"))
        if part is None:
            return ""
        return _part_text(part)
    except _EMAIL_PACKAGE_ERRORS:
        return ""


def _part_text(part: Message) -> str:
    text = _decoded(part).replace("\r\n", "\n")
    if part.get_content_type() == "text/html":
        return html_to_text(text)
    if str(part.get_param("format", "")).lower() == "flowed":
        return _unflow(text, delete_space=str(part.get_param("delsp", "")).lower() == "yes")
    return text


def _decoded(part: Message) -> str:
    """The part's text, surviving wrong or unknown charset labels rather than failing."""
    payload = part.get_payload(decode=True) or b""
    for charset in (part.get_content_charset() or "us-ascii", "utf-8"):
        try:
            return payload.decode(charset)
        except (LookupError, UnicodeDecodeError):
            continue
    return payload.decode("cp1252", errors="replace")


def _unflow(text: str, delete_space: bool) -> str:
    """Join the soft line breaks of format=flowed (RFC 3676), keeping quote depths apart."""
    lines: list[tuple[int, str]] = []
    joining = False
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:].removeprefix(" ")
        if joining and lines and lines[-1][0] == depth:
            lines[-1] = (depth, lines[-1][1] + content)
        else:
            lines.append((depth, content))
        joining = content.endswith(" ") and content != "-- "
        if joining and delete_space:
            lines[-1] = (depth, lines[-1][1][:-1])
    return "\n".join(f"{'>' * depth} {content}" if depth else content for depth, content in lines)


def new_text(body: str) -> str:
    """Only what the player newly wrote: no quote, attribution, header block, signature or board."""
    parser = ReplyParser(text=body, languages=list(_REPLY_LANGUAGES), keep_hyphen_lists=True)
    text = _cut_original(parser.text)
    text = "\n".join(line for line in text.split("\n") if not line.startswith(">"))
    for signature in (parser.SIGNATURE_REGEX, _GERMAN_SENT_FROM):
        text = _cut_signature(text, signature)
    lines = [line for line in text.split("\n") if not _SERVICE_LINE.match(line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _cut_signature(text: str, signature: re.Pattern[str]) -> str:
    """Cut the first signature after which the player gives no command.

    Closing words ("Thanks, good game!", "Grüße an Anna") often stand above a command, and a
    command must never be lost to a signature.
    """
    start = 0
    while found := signature.search(text, start):
        if not any(not isinstance(command, Note) for command in parse_commands(text[found.start() :])):
            return text[: found.start()]
        line_end = text.find("\n", found.start() + len(found.group()) - len(found.group().lstrip()))
        if line_end < 0:
            break
        start = line_end + 1
    return text


def _cut_original(text: str) -> str:
    """Cut off an unquoted original; drop attribution lines that introduce a '>' quote."""
    for header in _HEADER_BLOCK.finditer(text):
        if not _is_quoted_at(text, header.start()):
            text = text[: header.start()]
            break
    for attribution in reversed(list(_ATTRIBUTION.finditer(text))):
        if _is_quoted_at(text, attribution.start()):
            continue
        following = text[attribution.end() :].lstrip()
        if following.startswith(">"):
            text = text[: attribution.start()] + text[attribution.end() :]
        else:
            text = text[: attribution.start()]
    return text


def _is_quoted_at(text: str, position: int) -> bool:
    """Whether the line where a match starts (a match may begin with its line break) is quoted."""
    while text.startswith("\n", position):
        position += 1
    return text.startswith(">", text.rfind("\n", 0, position) + 1)


_BLOCK_TAGS = frozenset(
    "address article dd div dl dt footer h1 h2 h3 h4 h5 h6 header li ol p pre section table tr "
    "ul".split()
)
_BLOCK_BOUNDARY = "\x00"
"""Marks where a block starts or ends: a line break unless the line has just broken anyway."""
_SKIPPED_TAGS = frozenset(("blockquote", "head", "script", "style", "title"))
_SKIPPED_CLASSES = frozenset(("gmail_quote", "gmail_signature", "moz-cite-prefix", "yahoo_quoted"))
_ORIGINAL_FOLLOWS_IDS = frozenset(
    ("divrplyfwdmsg", "appendonsend", "mail-editor-reference-message-container")
)


class _HtmlText(HTMLParser):
    """Collects the visible text of an HTML mail, leaving out quotes, styles and the original."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping: str | None = None
        self.skip_depth = 0
        self.preformatted = 0
        self.original_reached = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.original_reached:
            return
        if self.skipping:
            self.skip_depth += tag == self.skipping
            return
        attributes = {name: (value or "").lower() for name, value in attrs}
        if attributes.get("id") in _ORIGINAL_FOLLOWS_IDS:
            self.original_reached = True
            return
        if tag in _SKIPPED_TAGS or _SKIPPED_CLASSES & set(attributes.get("class", "").split()):
            self.skipping, self.skip_depth = tag, 1
            return
        self.preformatted += tag == "pre"
        if tag in ("br", "hr"):
            self.parts.append("\n")
        elif tag in _BLOCK_TAGS:
            self.parts.append(_BLOCK_BOUNDARY)

    def handle_endtag(self, tag: str) -> None:
        if self.original_reached:
            return
        if self.skipping:
            self.skip_depth -= tag == self.skipping
            if self.skip_depth == 0:
                self.skipping = None
            return
        self.preformatted -= tag == "pre" and self.preformatted > 0
        if tag in _BLOCK_TAGS:
            self.parts.append(_BLOCK_BOUNDARY)

    def handle_data(self, data: str) -> None:
        if self.original_reached or self.skipping:
            return
        data = data.replace("\u00a0", " ")
        self.parts.append(data if self.preformatted else re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """The text a reader sees in an HTML mail, one line per block, quotes left out."""
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    text = re.sub(rf" *{_BLOCK_BOUNDARY}[{_BLOCK_BOUNDARY} ]*", _BLOCK_BOUNDARY, "".join(parser.parts))
    text = re.sub(rf"(^|\n){_BLOCK_BOUNDARY}", r"\1", text).replace(_BLOCK_BOUNDARY, "\n")
    lines = [line.strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
