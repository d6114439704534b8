"""``pbem send`` and ``pbem outbox``: playing on the embedded default's local Maildir folders from
a terminal, as a mail client would."""

from __future__ import annotations

import argparse
import os
import sys
import time
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.policy import default as default_policy
from email.utils import parseaddr
from pathlib import Path

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.cli.loading import UsageError, config_of, engine_of
from pbem.config import DATA_DIR_VARIABLE, EMBEDDED_DEFAULT, is_mail_address
from pbem.mail.local_client import (compose_mail, compose_reply, deliver_to_maildir, format_listing, format_mail,
                                    list_outbox, original_text, read_mail_file)
from pbem.rules.notation import NotationError, parse_play
from pbem.store.mail_records import InboundMail, InboundState, OutboundMail

EXIT_NOTHING_FOUND = 1
EXIT_NOT_APPLIED = 1
"""``pbem send --wait``: the daemon shunted the mail for the operator, or ignored it."""

WAIT_SECONDS = 30
"""How long ``pbem send --wait`` waits for the running daemon to apply the mail and answer."""


def send(args: argparse.Namespace) -> int:
    """Drop a mail from ``--from`` into the local inbox; TEXT ``-`` reads standard input."""
    config = config_of(args.config)
    if config.imap is not None:
        raise UsageError(f"{config.source} reads mail over IMAP, not from the local inbox; "
                         "write to the service address with a mail client")
    if not is_mail_address(parseaddr(args.sender)[1]):
        raise UsageError(f"--from: not a mail address: {args.sender!r}")
    _require_maildir(config.inbox_dir, "inbox", config.source)
    if (args.text is None) == (not args.example):
        raise UsageError("give the mail's TEXT or --example, one of them")
    if args.example and args.reply_to is None:
        raise UsageError("--example answers a mail: name it with --reply-to FILE")
    body = sys.stdin.read() if args.text == "-" else args.text or ""
    if args.reply_to is None:
        message = compose_mail(args.sender, config.service.address, args.subject or "", body)
    else:
        try:
            original = read_mail_file(args.reply_to)
        except OSError as exc:
            raise UsageError(f"--reply-to: cannot read {args.reply_to}: {exc.strerror}") from None
        if args.example:
            body = offered_move(original) or ""
            if not body:
                print(f"pbem send: {args.reply_to} shows no move to copy: it asks for none now (answer what it "
                      "asks instead, such as roll, take or accept; or nothing, while the opponent is on turn)",
                      file=sys.stderr)
                return EXIT_NOTHING_FOUND
            print(f"pbem send: the move the mail shows: {body}", file=sys.stderr)
        message = compose_reply(args.sender, original, body)
        if args.subject is not None:
            message.replace_header("Subject", args.subject)
    engine = engine_of(config, create=False) if args.wait else None
    after = _last_outbound_id(engine) if engine is not None else 0
    delivered = deliver_to_maildir(config.inbox_dir, message)
    if engine is None:
        print(delivered)
        return 0
    try:
        applied, answers = wait_for_answers(engine, config.outbox_dir, str(message["Message-ID"]), after)
    finally:
        engine.dispose()
    for answer in answers:
        print(answer)
    return 0 if applied else EXIT_NOT_APPLIED


def wait_for_answers(engine: Engine, outbox: Path, message_id: str, after: int,
                     timeout: float = WAIT_SECONDS) -> tuple[bool, list[Path]]:
    """Whether the daemon applied the mail (False: it shunted or ignored it, and says why on
    stderr), and the files of its answers, as soon as they are sent; at once when it queued none
    (a move that leaves the opponent to act, by default).

    The mail's inbound row and the answers it queued are written in one transaction, so once the
    row is there the answers' rows are too: their number is known, and nothing is guessed from
    how long an answer takes.  ``after``: the last outbound row before the mail was delivered."""
    deadline = time.monotonic() + timeout
    found: tuple[InboundState, str, set[str]] | None = None
    seen: dict[Path, str] = {}
    while True:
        if found is None:
            found = _answers_queued(engine, message_id, after)
        if found is not None:
            state, reason, due = found
            for path in _outbox_files(outbox) - seen.keys():  # each new file is read once
                seen[path] = " ".join(str(read_mail_file(path).get("Message-ID", "")).split())
            sent = sorted(path for path, sent_id in seen.items() if sent_id in due)
            if len(sent) >= len(due):
                if state is not InboundState.APPLIED:
                    print(f"not applied ({state.value}){': ' + reason if reason else ''}", file=sys.stderr)
                elif not due:
                    print("applied; no answer to you: your opponent is on turn (copies on sends a copy)",
                          file=sys.stderr)
                return state is InboundState.APPLIED, sent
        if time.monotonic() > deadline:
            what = "its answers were not sent" if found else "it was not applied"
            raise UsageError(f"{what} within {timeout:g} s: is pbem serve running on {outbox.parent}?")
        time.sleep(0.1)


def _answers_queued(engine: Engine, message_id: str, after: int) -> tuple[InboundState, str, set[str]] | None:
    """What became of the mail and the Message-IDs of the answers to it (its thread's replies);
    None while it is not applied."""
    with Session(engine) as session:
        inbound = session.exec(select(InboundMail.state, InboundMail.reason)
                               .where(InboundMail.message_id == message_id)).first()
        if inbound is None:
            return None
        rows = session.exec(select(OutboundMail.message_id, OutboundMail.raw).where(col(OutboundMail.id) > after)).all()
    parser = BytesHeaderParser(policy=default_policy)
    replies = {sent_id for sent_id, raw in rows
               if str(parser.parsebytes(raw).get("In-Reply-To", "")).strip() == message_id.strip()}
    return InboundState(inbound[0]), inbound[1], replies


def _last_outbound_id(engine: Engine) -> int:
    with Session(engine) as session:
        return session.exec(select(func.max(OutboundMail.id))).first() or 0


def _outbox_files(outbox: Path) -> set[Path]:
    return {path for sub in ("new", "cur") if (outbox / sub).is_dir() for path in (outbox / sub).iterdir()
            if path.is_file()}


def offered_move(message: EmailMessage) -> str | None:
    """The move a game mail shows as the form to write one in (``pbem send --example``): the line
    indented by two spaces after the sentence ending in a colon ("Write it like this …:"), when it
    reads as a move; None when the mail shows none (the reader is asked to roll or answer a
    double, or it is not their turn)."""
    lines = original_text(message).splitlines()
    for before, line in zip(lines, lines[1:]):
        if before.rstrip().endswith(":") and line.startswith("  ") and not line.startswith("   "):
            try:
                parse_play(line.strip())
            except NotationError:
                continue
            return line.strip()
    return None


def outbox(args: argparse.Namespace) -> int:
    """List what the service sent, newest last; ``--last`` prints the latest mail."""
    config = config_of(args.config)
    if config.smtp is not None:
        raise UsageError(f"{config.source} sends mail over SMTP; there is no local outbox")
    _require_maildir(config.outbox_dir, "outbox", config.source)
    entries = list_outbox(config.outbox_dir, args.to)
    if not entries:
        print(f"pbem outbox: no mail{f' to {args.to}' if args.to else ''} in {config.outbox_dir}", file=sys.stderr)
        return EXIT_NOTHING_FOUND
    if args.last_file:
        print(entries[-1].path)
    else:
        sys.stdout.write(format_mail(entries[-1]) if args.last else format_listing(entries))
    return 0


def _require_maildir(path: Path, what: str, source: str) -> None:
    """A folder ``pbem serve`` makes: missing, it is the wrong data directory, not an empty one."""
    if not (path / "new").is_dir():
        origin = f"${DATA_DIR_VARIABLE}" if source == EMBEDDED_DEFAULT and os.environ.get(DATA_DIR_VARIABLE) else source
        raise UsageError(f"no {what} at {path} (data directory from {origin}): start pbem serve first, "
                         f"or name the data directory of the running one with {DATA_DIR_VARIABLE}=DIR or --config")
