"""A mail is read once (issue 37): the service hands its raw bytes to mail/'s one reading
(:func:`pbem.mail.reading.read_mail`, through the mail room's entry) and never parses them,
or their header, again (not for the bounce check, not for the game it answers), and parses
its commands once (not again for the confirmation check)."""

from __future__ import annotations

import email.parser
import typing
from dataclasses import dataclass, field
from typing import Any

import post_office
import pytest
from bounce_samples import bounce_sample
from post_office import LoadedDice, Player, PostOffice, acts, invite_and_accept, recipient
from sqlmodel import Session, select

from pbem.mail.local_client import compose_mail, ensure_maildir
from pbem.mail.reading import read_mail
from pbem.mail.replies import ReadingContext
from pbem import commands
from pbem.service.mailroom import inbox
from pbem.service.mailroom.incoming import Incoming
from pbem.store.mail_records import OutboundMail

_PREFIX = 200
"""Bytes compared to tell a parse of the mail being handled (a parse of any slice of it
starts with its first bytes)."""


@dataclass
class Readings:
    handled: int = 0
    read: int = 0
    inside: int = 0
    """Parses of the handled mail's bytes within the one reading."""
    outside: list[str] = field(default_factory=list)
    """Parses of the handled mail's bytes anywhere else in handle_mail (its first line, to show)."""
    parsed_twice: list[str] = field(default_factory=list)
    """Texts whose commands were parsed twice for one mail (or its language read after the reading)."""
    raw: bytes | None = None
    reading: bool = False
    texts: list[str] = field(default_factory=list)


@pytest.fixture
def readings(monkeypatch) -> Readings:
    counted = Readings()
    handle_mail, read_incoming = post_office.handle_mail, inbox.read_incoming
    parsebytes = email.parser.BytesParser.parsebytes
    parse_commands, written_in = commands.parse_commands, commands.written_in

    def handling(session: Any, raw: bytes, *args: Any, **options: Any) -> None:
        counted.handled += 1
        counted.raw, counted.texts = raw, []
        try:
            handle_mail(session, raw, *args, **options)
        finally:
            counted.raw = None
        counted.parsed_twice += [text for text in set(counted.texts) if counted.texts.count(text) > 1]

    def reading(*args: Any) -> Any:
        counted.read += 1
        counted.reading = True
        try:
            return read_incoming(*args)
        finally:
            counted.reading = False

    def parsing(self: Any, text: bytes, headersonly: bool = False) -> Any:
        raw = counted.raw
        if raw is not None and text and raw.startswith(text[:_PREFIX]):
            if counted.reading:
                counted.inside += 1
            else:
                counted.outside.append(raw.split(b"\n", 1)[0].decode("ascii", "replace"))
        return parsebytes(self, text, headersonly)

    def parsing_commands(text: str, subject: str = "") -> list[commands.Command]:
        counted.texts.append(text or subject)
        return parse_commands(text, subject)

    def language(text: str, subject: str = "") -> str | None:
        if not counted.reading:
            counted.parsed_twice.append(f"language of {text or subject}")
        return written_in(text, subject)

    monkeypatch.setattr(commands, "parse_commands", parsing_commands)
    monkeypatch.setattr(commands, "written_in", language)
    monkeypatch.setattr(post_office, "handle_mail", handling)
    monkeypatch.setattr(inbox, "read_incoming", reading)
    monkeypatch.setattr(email.parser.BytesParser, "parsebytes", parsing)
    return counted


def test_each_mail_is_read_once_and_its_bytes_never_parsed_again(config, readings):
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")  # a confirmed invitation, an accept
    acts(office, anna, "8/5 6/5")  # a move, in the game's thread
    anna.reply("help\n8/5 6/5")  # an answer to an older mail of the game: refused
    sent = ben.write_confirmed("invite bne@example.net")  # held for confirmation, its line quoted
    (invitation,) = [mail for mail in sent if recipient(mail) == "bne@example.net"]
    with Session(office.engine) as session:
        tag = session.exec(select(OutboundMail.bounce_tag)
                           .where(OutboundMail.message_id == str(invitation["Message-ID"]))).one()
    assert tag is not None
    ensure_maildir(config.inbox_dir)
    (config.inbox_dir / "new" / "bounce").write_bytes(bounce_sample(
        "postfix", tag, "bne@example.net", str(invitation["Message-ID"]), config.service.address))
    (told,) = office.run()  # the bounce: read once, its failure told to the inviter
    assert recipient(told) == "ben@example.org"
    assert readings.handled >= 8
    assert readings.read == readings.handled
    assert readings.inside >= readings.handled
    assert readings.outside == []
    assert readings.parsed_twice == []


@pytest.mark.parametrize(("subject", "text"), [
    ("pbem", "Hello Anna,\nwhat a game.\n\nlang de\n  numbering fixed  \nThanks!\n\nhelp\nhelp\nBye,\nBen"),
    ("pbem", "accept\nGood luck\n\n\nand have fun\nvacation 3\nwatch 7"),
    ("Re: [pbem] lang de", ""),
    ("Re: thanks", ""),
])
def test_each_command_keeps_the_line_it_was_read_from(subject, text):
    """A request to confirm quotes the lines that hold its commands, as written: the lines come
    from the one parse, and are those each line alone reads as."""
    raw = compose_mail("Ben <ben@example.org>", "backgammon@localhost", subject, text).as_bytes()
    mail = read_mail(raw, ReadingContext("backgammon@localhost", is_command=commands.is_command_line))
    letter = Incoming.of(mail)
    written = [line.strip() for line in (mail.new_text or mail.bare_subject).splitlines() if line.strip()]
    alone = [(line, command) for line in written for command in commands.parse_commands(line)]
    kinds = tuple(kind for kind in typing.get_args(commands.Command) if kind is not commands.Note)
    assert letter.lines_holding(kinds) == [line for line, command in alone if isinstance(command, kinds)]
    assert len(letter.lines) == len(letter.commands)


_READERS = {
    "email": {"message_from_bytes", "message_from_string", "message_from_binary_file"},
    "email.parser": {"*"},
    "email.feedparser": {"*"},
    "pbem.mail.headers": {"subject_text", "subject_of", "sender_of", "sender_and_subject", "message_id_of",
                          "message_ids", "raw_header", "raw_headers", "check_fields", "check_bounds",
                          "reply_tokens", "sent_to_bounce_address", "why_automatic", "written_to_service"},
    "pbem.mail.bounces": {"read_bounce"},
    "pbem.mail.replies": {"new_text", "unflow", "quotable"},
    "pbem.mail.html_text": {"html_to_text"},
    "pbem.mail.reading": {"read_mail"},
}
"""What reads a mail's bytes or header fields; of it the service may call only ``read_mail``,
and only at its entry (:mod:`pbem.service.mailroom.incoming`).  The dynamic test above sees a
parse of the bytes; this one also sees a field derived once more from the reading's own values
(the subject's text, a sender taken apart again), which no parse would show."""


def test_the_service_imports_no_reader_of_mail_but_at_its_entry():
    import ast
    from pathlib import Path

    import pbem.service

    root = Path(pbem.service.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in _READERS:
                names = {alias.name for alias in node.names}
                banned = names if "*" in _READERS[node.module] else names & _READERS[node.module]
                if name == "mailroom/incoming.py" and node.module == "pbem.mail.reading":
                    banned -= {"read_mail"}
                found += [f"{name}: {node.module}.{banned_name}" for banned_name in sorted(banned)]
            elif isinstance(node, ast.Import):
                found += [f"{name}: {alias.name}" for alias in node.names
                          if alias.name in _READERS and "*" in _READERS[alias.name]]
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.attr in _READERS.get(node.value.id, ())):
                found.append(f"{name}: {node.value.id}.{node.attr}")
    assert found == []
