"""The bounces of ``tests/data/bounces/``, filled in for a test: which mail of ours bounced
(its tag and Message-ID), for whom, and to which service address."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

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
