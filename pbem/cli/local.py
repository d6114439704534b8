"""``pbem send`` and ``pbem outbox``: playing on the embedded default's local Maildir folders from
a terminal, as a mail client would."""

from __future__ import annotations

import argparse
import os
import sys
import time
from email.utils import parseaddr
from pathlib import Path

from pbem.cli.loading import UsageError, config_of
from pbem.config import DATA_DIR_VARIABLE, EMBEDDED_DEFAULT, is_mail_address
from pbem.mail.local_client import (compose_mail, compose_reply, deliver_to_maildir, format_listing, format_mail,
                                    list_outbox, read_mail_file)

EXIT_NOTHING_FOUND = 1


def send(args: argparse.Namespace) -> int:
    """Drop a mail from ``--from`` into the local inbox; TEXT ``-`` reads standard input."""
    config = config_of(args.config)
    if config.imap is not None:
        raise UsageError(f"{config.source} reads mail over IMAP, not from the local inbox; "
                         "write to the service address with a mail client")
    if not is_mail_address(parseaddr(args.sender)[1]):
        raise UsageError(f"--from: not a mail address: {args.sender!r}")
    _require_maildir(config.inbox_dir, "inbox", config.source)
    body = sys.stdin.read() if args.text == "-" else args.text
    if args.reply_to is None:
        message = compose_mail(args.sender, config.service.address, args.subject or "", body)
    else:
        try:
            original = read_mail_file(args.reply_to)
        except OSError as exc:
            raise UsageError(f"--reply-to: cannot read {args.reply_to}: {exc.strerror}") from None
        message = compose_reply(args.sender, original, body)
        if args.subject is not None:
            message.replace_header("Subject", args.subject)
    delivered = deliver_to_maildir(config.inbox_dir, message)
    if not args.wait:
        print(delivered)
        return 0
    for answer in _answers_to(config.outbox_dir, str(message["Message-ID"]), delivered):
        print(answer)
    return 0


def _answers_to(outbox: Path, message_id: str, delivered: Path) -> list[Path]:
    """The files of the daemon's answers to the mail, once it has applied it and sent them
    (none, when the sender asked for no copy of their own move)."""
    deadline = time.monotonic() + WAIT_SECONDS
    seen: set[Path] = set()
    answers: list[Path] = []
    applied_at: float | None = None
    while time.monotonic() < deadline:
        if applied_at is None and not delivered.exists():  # taken from the inbox: applied
            applied_at = time.monotonic()
        for path in _outbox_files(outbox) - seen:  # each new file is read once
            seen.add(path)
            if str(read_mail_file(path).get("In-Reply-To", "")) == message_id:
                answers.append(path)
        if applied_at is not None and (answers or time.monotonic() - applied_at > ANSWER_GRACE_SECONDS):
            if not answers:
                print("applied; no answer to you: your opponent is on turn (copies on sends a copy)", file=sys.stderr)
            return sorted(answers)
        time.sleep(0.2)
    raise UsageError(f"no answer within {WAIT_SECONDS} s: is pbem serve running on {outbox.parent}?")


WAIT_SECONDS = 30
"""How long ``pbem send --wait`` waits for the running daemon to apply the mail."""
ANSWER_GRACE_SECONDS = 3.0
"""After the mail was applied, how long ``--wait`` waits for an answer that may not come."""


def _outbox_files(outbox: Path) -> set[Path]:
    return {path for sub in ("new", "cur") if (outbox / sub).is_dir() for path in (outbox / sub).iterdir()
            if path.is_file()}


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
