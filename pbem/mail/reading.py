"""Reading a player's mail once: raw bytes → one :class:`IncomingMail` holding everything the
service needs, so that nothing above mail/ parses bytes or headers again.

Every mail is untrusted, so the work spent on one is bounded before it is parsed
(:func:`pbem.mail.headers.check_bounds`), and no mail of up to ``max_mail_bytes`` costs more
than a fraction of a second.  The reading is done on three floors of this package:
:mod:`pbem.mail.headers` (who wrote it, what it answers, whether a machine sent it),
:mod:`pbem.mail.replies` (only what the player newly wrote, SPEC §3) with
:mod:`pbem.mail.html_text` (what an HTML part shows), and :mod:`pbem.mail.bounces` (which of
our mails a bounce returns).  This module puts their answers into the one value.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage, Message
from email.parser import BytesParser

from pbem.config import LANGUAGES
from pbem.mail import authentication
from pbem.mail.bounces import Bounce, read_bounce
from pbem.mail.composing import GameStamp, parse_game_message_id
from pbem.mail.headers import (EMAIL_PACKAGE_ERRORS, MAX_REFERENCES, MAX_SUBJECT_CHARS, UnreadableMail, check_bounds,
                               check_fields, header_end, message_id_of, message_ids, raw_header, raw_headers,
                               reply_tokens, sender_of, sent_to_bounce_address, subject_of, subject_text,
                               why_automatic, written_to_service)
from pbem.mail.html_text import MAX_HTML_CHARS, html_to_text
from pbem.mail.policy import MAIL_POLICY
from pbem.mail.replies import MAX_BODY_CHARS, ReadingContext, new_text, unflow

MAX_PARSED_BODY_BYTES = 256 * 1024
"""Of the body, only this much is parsed: commands stand in the first text part, at its top."""


@dataclass(frozen=True)
class IncomingMail:
    """Everything the service needs to know of one incoming mail, read once."""

    message_id: str
    sender: str
    sender_name: str
    """The display name of From, as written (the service decides whether it is honest)."""
    subject: str
    bare_subject: str
    """The subject without reply/forward prefixes and list tags: read as a command when the
    new text is empty (:func:`pbem.mail.headers.subject_text`)."""
    in_reply_to: str | None
    references: tuple[str, ...]
    reply_tokens: tuple[str, ...]
    """Candidate game tokens, most trustworthy first; the service looks them up in this order."""
    answered_stamp: GameStamp | None
    """What In-Reply-To tells, when it names one of our game mails."""
    referenced_stamps: tuple[GameStamp, ...]
    """What the game mails among References tell, oldest first."""
    new_text: str
    language: str | None
    """The Content-Language when it is one of ours, else the language of the new text's (or
    the bare subject's) words; None when neither tells."""
    automatic: str | None
    """Why this mail must never be answered, or None for a mail written by a person."""
    to_bounce_address: bool
    """Sent to one of our VERP bounce addresses: never answered, whatever it is."""
    bounce: Bounce | None
    """For an automatic mail (or one to a bounce address): the bounce it is, if it is one."""
    size: int
    too_large: bool = False
    """Over ``max_bytes``: only the header was read, and ``new_text`` is empty."""
    sender_authenticated: bool = False
    """The operator's own mail server vouches for the From address (``Authentication-Results``
    of the trusted authserv-id: ``pbem.mail.authentication``)."""


def read_mail(raw: bytes, service_address: str | ReadingContext) -> IncomingMail:
    """Read one raw RFC 5322 mail as received by the service (see the module docstring)."""
    context = service_address if isinstance(service_address, ReadingContext) else ReadingContext(service_address)
    if not raw.strip():
        raise UnreadableMail("the mail is empty")
    check_bounds(raw)
    too_large = context.max_bytes is not None and len(raw) > context.max_bytes
    end = header_end(raw)
    source = raw[:end] + b"\r\n\r\n" if too_large else raw[: end + MAX_PARSED_BODY_BYTES]
    try:
        message = BytesParser(policy=MAIL_POLICY).parsebytes(source)
    except EMAIL_PACKAGE_ERRORS as error:
        raise UnreadableMail(f"the MIME structure cannot be read ({type(error).__name__})") from None
    check_fields(message)
    to_bounce_address = sent_to_bounce_address(message, context.service_address)
    try:
        sender_name, sender = sender_of(message)
    except UnreadableMail:
        if not to_bounce_address:
            raise
        sender_name, sender = "", ""  # a bounce, whatever its From (``<>``, ``MAILER-DAEMON``): never answered
    references = message_ids(message, "References")[-MAX_REFERENCES:]
    in_reply_to = next(iter(message_ids(message, "In-Reply-To")), None)
    answered = list(dict.fromkeys(([in_reply_to] if in_reply_to else []) + references[::-1]))
    body = "" if too_large else _body_text(message, context)
    subject = subject_of(message)
    text = new_text(body, context, context.quoted_text(answered) if body else None)
    hint = raw_header(message, "Content-Language").strip().lower()[:2]
    automatic = why_automatic(message, sender, context.service_address)
    return IncomingMail(
        message_id=message_id_of(raw),
        sender=sender,
        sender_name=sender_name,
        subject=subject,
        bare_subject=subject_text(subject),
        in_reply_to=in_reply_to,
        references=tuple(references),
        reply_tokens=tuple(reply_tokens(message, context.service_address, answered)),
        answered_stamp=parse_game_message_id(in_reply_to),
        referenced_stamps=tuple(stamp for message_id in references
                                if (stamp := parse_game_message_id(message_id)) is not None),
        new_text=text,
        language=hint if hint in LANGUAGES else context.written_in(text, subject_text(subject)),
        automatic=automatic,
        to_bounce_address=to_bounce_address,
        bounce=read_bounce(raw[:context.max_bytes], context.service_address)
        if automatic or to_bounce_address else None,
        size=len(raw),
        too_large=too_large,
        sender_authenticated=context.trusted_authserv_id is not None and authentication.sender_authenticated(
            raw_headers(message, "Authentication-Results"), sender, context.trusted_authserv_id)
        and written_to_service(message, context.service_address),
    )


def recorded_sender_and_subject(mail: IncomingMail) -> tuple[str, str]:
    """What :func:`pbem.mail.headers.sender_and_subject` gives for the mail read as ``mail``: its
    record takes them from the reading, without parsing the header once more."""
    return mail.sender, mail.subject[:MAX_SUBJECT_CHARS]


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
    except EMAIL_PACKAGE_ERRORS:
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
