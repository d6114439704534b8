"""The mail room's entry: a stored mail read once and its commands parsed once.

:func:`read_incoming` hands the raw bytes to :func:`pbem.mail.reading.read_mail`, which gives
the one :class:`~pbem.mail.reading.IncomingMail` (sender, references, bounce, language, new
text); :meth:`Incoming.of` parses its commands.  Everything after works on these two values:
nothing in the service parses the mail's bytes, headers or text again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from sqlmodel import Session, select

from pbem import commands
from pbem.config import Config
from pbem.mail.reading import IncomingMail, read_mail
from pbem.mail.replies import ReadingContext, quotable_of_sent
from pbem.service.mailroom.post import SENT_TEXTS
from pbem.store.mail_records import OutboundMail

_QUOTED_LOOKUPS = 5


@dataclass(frozen=True)
class Incoming:
    """A mail written by a person, read, with its commands parsed once."""

    mail: IncomingMail
    commands: tuple[commands.Command, ...]
    """The commands, moves, notes and errors of the new text (or of the bare subject, when the
    text is empty), in the order written."""
    lines: tuple[str, ...]
    """The line each command was read from, as written (of a note of several lines, its first)."""

    @classmethod
    def of(cls, mail: IncomingMail) -> Incoming:
        parsed = commands.parse_commands(mail.new_text, mail.bare_subject)
        return cls(mail, tuple(parsed), _lines_read(mail, parsed))

    def lines_holding(self, kinds: tuple[type, ...]) -> list[str]:
        """The lines, as written, that hold a command of one of ``kinds`` (a request to confirm
        quotes them)."""
        return [line for line, command in zip(self.lines, self.commands) if isinstance(command, kinds)]


def _lines_read(mail: IncomingMail, parsed: Sequence[commands.Command]) -> tuple[str, ...]:
    """The line each of ``parsed`` stands on: every non-blank line is one command, but for the
    lines of a note, which make one note together."""
    if not mail.new_text.strip():
        return (mail.bare_subject.strip(),) * len(parsed)
    lines = iter([line.strip() for line in mail.new_text.splitlines() if line.strip()])
    read = []
    for command in parsed:
        read.append(next(lines))
        if isinstance(command, commands.Note):
            for _ in range(sum(1 for line in command.text.splitlines() if line) - 1):
                next(lines)
    return tuple(read)


def read_incoming(session: Session, raw: bytes, config: Config) -> IncomingMail:
    """The mail in ``raw``, read once (raises :class:`pbem.mail.headers.UnreadableMail`)."""
    return read_mail(raw, ReadingContext(
        service_address=config.service.address,
        service_name=config.service.name,
        max_bytes=config.limits.max_mail_bytes,
        is_command=commands.is_command_line,
        quoted_text=partial(_our_text, session, config.service.address),
        trusted_authserv_id=config.imap.trusted_authserv_id if config.imap is not None else None,
        written_in=commands.written_in,
    ))


def _our_text(session: Session, service_address: str, message_ids: Sequence[str]) -> str | None:
    """The text (see :func:`pbem.mail.replies.quotable`) of the newest of our own mails among
    ``message_ids`` (newest first)."""
    domain = "@" + service_address.rpartition("@")[2].lower() + ">"
    ours = [message_id for message_id in message_ids if message_id.lower().endswith(domain)][:_QUOTED_LOOKUPS]
    for message_id in ours:
        kept = SENT_TEXTS.get(message_id)
        if kept is not None:
            return kept
        raw = session.exec(select(OutboundMail.raw).where(OutboundMail.message_id == message_id)).first()
        if raw is not None:
            return quotable_of_sent(raw)
    return None
