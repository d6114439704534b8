"""``pbem requeue MESSAGE-ID`` and ``pbem requeue --all``: shunted mails back into the inbox.

A mail the daemon could not apply (or that killed it twice) is put aside, in ``pbem/failed`` on
IMAP or ``.pbem.failed`` in the Maildir, and ``pbem status`` lists it.  Once the cause is
fixed, this puts it back; the daemon then applies it as a new mail (its earlier failure is
recorded, not counted against it).
"""

from __future__ import annotations

import argparse
import asyncio

from pbem.cli.loading import UsageError, config_of
from pbem.mail.connecting import MailServerError
from pbem.mail.reading import is_safe_message_id
from pbem.mail.transport import open_inbound_source


def requeue(args: argparse.Namespace) -> int:
    config = config_of(args.config)
    message_id = None if args.all else _message_id(args.message_id)
    source = open_inbound_source(config)

    async def put_back() -> int:
        try:
            return await source.requeue(message_id)
        finally:
            await source.close()

    try:
        count = asyncio.run(put_back())
    except (OSError, MailServerError) as exc:
        raise UsageError(f"{source!r}: {type(exc).__name__}: {exc}; nothing was put back") from None
    if count == 0:
        print("no shunted mail" + ("" if message_id is None else f" with Message-ID {message_id}"))
        return 1
    print(f"{count} mail{'s' if count != 1 else ''} put back into the inbox; the daemon reads "
          f"{'them' if count != 1 else 'it'} at its next round")
    return 0


def _message_id(text: str) -> str:
    message_id = text.strip()
    if not message_id.startswith("<"):
        message_id = f"<{message_id}>"
    if not is_safe_message_id(message_id):
        raise UsageError(f"not a Message-ID: {text!r} (as pbem status shows it, e.g. <abc@example.org>)")
    return message_id
