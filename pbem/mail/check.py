"""Trying the configured IMAP and SMTP servers the way the daemon will use them (`pbem check`).

Connects, secures the connection, logs in and opens the mailbox, and sends nothing. Each server
gets one line: OK with what was found, or what is wrong in plain words.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from pbem.config import Config, ImapConfig, SmtpConfig
from pbem.mail.connecting import explain
from pbem.mail.dkim import DkimKeyError, published, signer_of
from pbem.mail.imap import DONE_FOLDER, FAILED_FOLDER, ImapSession
from pbem.mail.smtp import SmtpSink

TIMEOUT = 10.0


async def check_imap(config: ImapConfig) -> str:
    session = await ImapSession.open(config, TIMEOUT)
    try:
        wake = "IDLE offered: new mail is read at once" if session.can_idle else \
            f"no IDLE: the mailbox is polled every {config.poll_interval:g} s"
        if not config.idle:
            wake = f"idle = false: the mailbox is polled every {config.poll_interval:g} s"
        return (f"logged in as {config.username}; mailbox {config.mailbox!r} holds {session.exists} mail(s); "
                f"{wake}; done mail goes to {session.folder(DONE_FOLDER)}, unreadable mail to "
                f"{session.folder(FAILED_FOLDER)}")
    finally:
        await session.close()


async def check_smtp(config: SmtpConfig) -> str:
    client = await SmtpSink(config, TIMEOUT).connect()
    try:
        await client.noop()
    finally:
        client.close()
    login = f"logged in as {config.username}" if config.username else "no login configured"
    return f"connected; {login}; nothing was sent"


async def check_all(config: Config, out: TextIO) -> bool:
    """Print one line per server; True when every configured server works."""
    imap_fine = await _check_one(
        "IMAP", config.imap, check_imap, f"the local Maildir inbox {config.inbox_dir} is read", out)
    smtp_fine = await _check_one(
        "SMTP", config.smtp, check_smtp, f"mail is put into the local Maildir outbox {config.outbox_dir}", out)
    dkim_fine = check_dkim(config, out)
    return imap_fine and smtp_fine and dkim_fine


def check_dkim(config: Config, out: TextIO) -> bool:
    """One line on DKIM signing, when ``[smtp]`` asks for it: the key works and the DNS publishes
    it (with the record to publish), or what is wrong."""
    try:
        signer = signer_of(config)
    except DkimKeyError as exc:
        print(f"DKIM: FAILED: {exc}", file=out)
        return False
    if signer is None:
        return True
    fine, found = published(signer)
    print(f"DKIM: {'OK' if fine else 'FAILED'}: mail is signed as {signer.describe()}; {found}; the TXT record "
          f"{signer.dns_name} must read \"{signer.dns_record}\"", file=out)
    return fine


async def _check_one(label: str, server: Any, check: Callable[[Any], Awaitable[str]], local: str,
                     out: TextIO) -> bool:
    """One server's line: not configured (``local`` is used instead), OK with what was found, or why not."""
    if server is None:
        print(f"{label}: not configured; {local}", file=out)
        return True
    try:
        print(f"{label} {server.host}:{server.port} ({server.security}): OK: {await check(server)}", file=out)
    except Exception as exc:
        print(explain(exc, label, server.host, server.port, server.security), file=out)
        return False
    return True
