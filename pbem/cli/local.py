"""``pbem send`` and ``pbem outbox``: playing on the embedded default's local Maildir folders from
a terminal, as a mail client would."""

from __future__ import annotations

import argparse
import sys
from email.utils import parseaddr

from pbem.cli.loading import UsageError, config_of
from pbem.config import is_mail_address
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
    print(deliver_to_maildir(config.inbox_dir, message), file=sys.stdout)
    return 0


def outbox(args: argparse.Namespace) -> int:
    """List what the service sent, newest last; ``--last`` prints the latest mail."""
    config = config_of(args.config)
    if config.smtp is not None:
        raise UsageError(f"{config.source} sends mail over SMTP; there is no local outbox")
    entries = list_outbox(config.outbox_dir, args.to)
    if not entries:
        print(f"pbem outbox: no mail{f' to {args.to}' if args.to else ''} in {config.outbox_dir}", file=sys.stderr)
        return EXIT_NOTHING_FOUND
    sys.stdout.write(format_mail(entries[-1]) if args.last else format_listing(entries))
    return 0
