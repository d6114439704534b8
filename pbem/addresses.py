"""The one rule for a mail address pbem will write to, shared by mail reading, commands and config.

pbem answers over plain SMTP without SMTPUTF8, so an address must be plain ASCII: a dot-atom
local part, a dotted domain, no control characters, no quoting, at most 254 characters
(RFC 5321).  The length is checked before the pattern runs, so matching stays cheap.
"""

from __future__ import annotations

import re

MAX_ADDRESS_LENGTH = 254
MAX_LOCAL_PART_LENGTH = 64

_ATOM = r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
ADDRESS_PATTERN = rf"{_ATOM}(?:\.{_ATOM})*@{_LABEL}(?:\.{_LABEL})*"
_ADDRESS = re.compile(ADDRESS_PATTERN, re.IGNORECASE)

MACHINE_LOCAL_PARTS = frozenset((
    "postmaster", "mailer-daemon", "mailerdaemon", "noreply", "no-reply", "no_reply", "donotreply",
    "do-not-reply", "do_not_reply", "bounce", "bounces", "abuse", "root", "nobody", "daemon",
    "hostmaster", "listserv", "majordomo",
))
"""Local parts of mailboxes that no person reads (RFC 2142 role accounts and robots)."""


def is_plain_address(address: str) -> bool:
    """True for an ASCII address pbem can answer: dot-atom@dotted.domain, ≤ 254 characters."""
    if len(address) > MAX_ADDRESS_LENGTH or not address.isascii():
        return False
    local = address.rpartition("@")[0]
    return len(local) <= MAX_LOCAL_PART_LENGTH and _ADDRESS.fullmatch(address) is not None


def is_machine_address(address: str) -> bool:
    """True for postmaster, mailer-daemon, noreply and other robots, with or without a +tag."""
    local = address.lower().rpartition("@")[0].split("+", 1)[0]
    return local in MACHINE_LOCAL_PARTS or local.startswith(("noreply", "no-reply", "donotreply"))


def is_person_address(address: str) -> bool:
    """True for an address that may receive an invitation: plain, with a dotted domain, no robot,
    no pipe or path."""
    local, _, domain = address.rpartition("@")
    return (is_plain_address(address) and "." in domain and not is_machine_address(address)
            and not set(local) & set("|/"))


BOUNCE_PREFIX = "bounce-"
"""The plus-tag of our envelope senders: ``service+bounce-TAG@domain`` (VERP)."""


def bounce_address(service_address: str, tag: str) -> str:
    """The envelope sender of one outgoing mail: a bounce of it comes back naming ``tag``."""
    local, _, domain = service_address.rpartition("@")
    return f"{local}+{BOUNCE_PREFIX}{tag}@{domain}"
