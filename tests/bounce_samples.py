"""The bounces of ``tests/data/bounces/``, filled in for a test: which mail of ours bounced
(its tag and Message-ID), for whom, and to which service address; and what each must read as
(:data:`CORPUS`, for the table-driven test and ``bench/bounce_bench.py``)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from pbem.mail.bounce_reasons import Reason

SAMPLES = Path(__file__).resolve().parent / "data" / "bounces"
PERMANENT = ("postfix", "exim", "exchange", "gmail")
"""The samples of a permanent failure; ``postfix-delayed`` is a delay warning."""


def bounce_sample(name: str, tag: str, recipient: str, message_id: str,
                  service_address: str = "games@pbem.test") -> bytes:
    local, _, domain = service_address.rpartition("@")
    raw = (SAMPLES / f"{name}.eml").read_bytes()
    header, blank, body = raw.partition(b"\n\n")  # each bounce a Message-ID of its own: two are two mails
    raw = re.sub(rb"(?im)^(message-id:[ \t]*<)[^>]+>", b"\\g<1>" + uuid.uuid4().hex.encode() + b"@bounce.test>",
                 header, count=1) + blank + body
    for placeholder, value in ((b"games+bounce-@@TAG@@@pbem.test", f"{local}+bounce-{tag}@{domain}"),
                               (b"games@pbem.test", service_address), (b"@@RCPT_LOCAL@@", recipient.split("@")[0]),
                               (b"@@RCPT@@", recipient), (b"@@MESSAGE_ID@@", message_id)):
        raw = raw.replace(placeholder, value.encode())
    return raw


@dataclass(frozen=True)
class Sample:
    """One bounce of the corpus: the MTA family that writes it and what it must read as."""

    family: str
    reason: Reason | None
    """The invitee's failure; None for a mail that is no bounce (it reports no failure)."""
    complaint: bool = False


CORPUS: dict[str, Sample] = {
    "postfix": Sample("Postfix", Reason.USER_UNKNOWN),
    "postfix-host-unknown": Sample("Postfix", Reason.HOST_UNKNOWN),
    "postfix-too-big": Sample("Postfix", Reason.TOO_BIG),
    "postfix-spamhaus": Sample("Postfix", Reason.BLOCKED),
    "postfix-ptr": Sample("Postfix", Reason.BLOCKED),
    "postfix-expired-4xx": Sample("Postfix", Reason.EXPIRED),
    "postfix-rejected": Sample("Postfix", Reason.REJECTED),
    "postfix-unreadable-answer": Sample("Postfix", Reason.REJECTED),
    "postfix-delayed": Sample("Postfix", Reason.DELAYED),
    "postfix-relayed": Sample("Postfix", None),
    "sendmail": Sample("Sendmail", Reason.USER_UNKNOWN),
    "sendmail-v5": Sample("Sendmail V5", Reason.USER_UNKNOWN),
    "sendmail-warning": Sample("Sendmail", Reason.DELAYED),
    "exim": Sample("Exim", Reason.USER_UNKNOWN),
    "exim-mailbox-full": Sample("Exim", Reason.MAILBOX_FULL),
    "exim-expired": Sample("Exim", Reason.EXPIRED),
    "qmail": Sample("qmail", Reason.USER_UNKNOWN),
    "exchange2003": Sample("Exchange 2003", Reason.USER_UNKNOWN),
    "exchange2010-mailbox-full": Sample("Exchange 2010", Reason.MAILBOX_FULL),
    "exchange": Sample("Office 365", Reason.USER_UNKNOWN),
    "office365-spf": Sample("Office 365", Reason.AUTHENTICATION),
    "gmail": Sample("Gmail", Reason.USER_UNKNOWN),
    "gmail-dmarc": Sample("Gmail", Reason.AUTHENTICATION),
    "gmail-spam": Sample("Gmail", Reason.SPAM),
    "gmail-over-quota": Sample("Gmail", Reason.MAILBOX_FULL),
    "yahoo": Sample("Yahoo", Reason.USER_UNKNOWN),
    "yahoo-deferred": Sample("Yahoo", Reason.BLOCKED),
    "amazonses": Sample("Amazon SES", Reason.USER_UNKNOWN),
    "amazonses-json": Sample("Amazon SES", None),
    "amazonworkmail": Sample("Amazon WorkMail", Reason.USER_UNKNOWN),
    "barracuda": Sample("Barracuda", Reason.BLOCKED),
    "dragonfly": Sample("DragonFly", Reason.USER_UNKNOWN),
    "notes": Sample("Notes", Reason.USER_UNKNOWN),
    "opensmtpd": Sample("OpenSMTPD", Reason.USER_UNKNOWN),
    "kddi": Sample("KDDI", Reason.TOO_BIG),
    "messagelabs": Sample("MessageLabs", Reason.SPAM),
    "mimecast": Sample("Mimecast", Reason.BLOCKED),
    "dsn-several": Sample("Postfix", Reason.USER_UNKNOWN),
    "dsn-forwarded": Sample("Postfix", Reason.USER_UNKNOWN),
    "dsn-no-diagnostic": Sample("Postfix", Reason.USER_UNKNOWN),
    "dsn-to-service": Sample("Postfix", Reason.USER_UNKNOWN),
    "auto-reply": Sample("Exchange", None),
    "vacation-plain": Sample("a person's mail program", None),
    "arf": Sample("ARF", None, complaint=True),
}
"""Every bounce of ``tests/data/bounces/`` and what it says of its recipient (``@@RCPT@@``)."""
