"""``pbem requeue MESSAGE-ID`` and ``pbem requeue --all``: shunted mails back into the inbox.

A mail the daemon could not apply (or that killed it twice) is put aside, in ``pbem/failed`` on
IMAP or ``.pbem.failed`` in the Maildir, recorded as failed, and listed by ``pbem status``; read
again, it is put aside again.  Once the cause is fixed, this marks its record *requeued* (so the
daemon applies it when it reads it again, and ``pbem status`` no longer lists it) and puts the
mail back into the inbox.
"""

from __future__ import annotations

import argparse
import asyncio

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import col

from pbem.cli.loading import UsageError, config_of, database_of
from pbem.mail.connecting import MailServerError
from pbem.mail.headers import is_safe_message_id
from pbem.mail.transport import open_inbound_source
from pbem.store.db import session_scope
from pbem.store.mail_records import InboundMail, InboundState


def requeue(args: argparse.Namespace) -> int:
    config = config_of(args.config)
    message_id = None if args.all else _message_id(args.message_id)
    engine = database_of(config)
    source = open_inbound_source(config)

    async def put_back() -> int:
        try:
            return await source.requeue(message_id)
        finally:
            await source.close()

    try:
        records = _mark(engine, message_id, InboundState.FAILED, InboundState.REQUEUED)
        try:
            count = asyncio.run(put_back())
        except (OSError, MailServerError) as exc:
            _mark(engine, message_id, InboundState.REQUEUED, InboundState.FAILED, only=records)
            raise UsageError(f"{source!r}: {type(exc).__name__}: {exc}; nothing was put back") from None
    finally:
        engine.dispose()
    if count:
        print(f"{count} mail{'s' if count != 1 else ''} put back into the inbox; the daemon reads "
              f"{'them' if count != 1 else 'it'} at its next round")
    elif records:
        print(f"no shunted mail in the mailbox (removed by hand?); {len(records)} record"
              f"{'s' if len(records) != 1 else ''} of shunted mail cleared from pbem status")
    else:
        print("no shunted mail" + ("" if message_id is None else f" with Message-ID {message_id}"))
        return 1
    return 0


def _mark(engine: Engine, message_id: str | None, before: InboundState, after: InboundState,
          only: list[int] | None = None) -> list[int]:
    """Set the records of shunted mail (the one named, or all) from ``before`` to ``after``;
    returns their row ids."""
    query = update(InboundMail).where(col(InboundMail.state) == before.value).values(state=after.value)
    if message_id is not None:
        query = query.where(col(InboundMail.message_id) == message_id)
    if only is not None:
        query = query.where(col(InboundMail.id).in_(only))
    with session_scope(engine) as session:
        return [row for (row,) in session.connection().execute(query.returning(col(InboundMail.id))).all() if row is not None]


def _message_id(text: str) -> str:
    message_id = text.strip()
    if not message_id.startswith("<"):
        message_id = f"<{message_id}>"
    if not is_safe_message_id(message_id):
        raise UsageError(f"not a Message-ID: {text!r} (as pbem status shows it, e.g. <abc@example.org>)")
    return message_id
