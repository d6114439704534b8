"""Why a mail came back, as a mail operator reads it: a small taxonomy and the tables that map
a server's answer onto it.

The enhanced status code (RFC 3463, ``class.subject.detail``) says most: ``X.1.1`` a bad
mailbox, ``X.1.2`` a bad domain, ``X.2.2`` a full mailbox, ``X.7.x`` security and policy.  But
many servers give a generic code (``5.0.0``, ``5.7.1``) or none, and say in words what
happened; so the words that name the *service* as the culprit (a block list, SPF, spam) are
read first, then the precise codes, then the other words, then the code's class and subject,
then the bare SMTP reply code.  A failure returned with a 4.x.x status (the server gave up
retrying) is never a hard failure of the address.  Pure: no I/O, no state.
"""

from __future__ import annotations

import re
from enum import StrEnum


class Reason(StrEnum):
    """What went wrong with one recipient (the values are stored and name the notice texts)."""

    USER_UNKNOWN = "user_unknown"
    HOST_UNKNOWN = "host_unknown"
    MAILBOX_FULL = "mailbox_full"
    TOO_BIG = "too_big"
    EXPIRED = "expired"
    BLOCKED = "blocked"
    POLICY = "policy"
    AUTHENTICATION = "authentication"
    SPAM = "spam"
    REJECTED = "rejected"
    DELAYED = "delayed"
    NOT_A_FAILURE = "not_a_failure"


HARD = frozenset({Reason.USER_UNKNOWN, Reason.HOST_UNKNOWN})
"""The address itself is bad: these count toward ``bounce_limit``."""
SERVICE_SIDE = frozenset({Reason.BLOCKED, Reason.POLICY, Reason.AUTHENTICATION, Reason.SPAM})
"""The receiving server refused the service, not the address: the operator must act."""
SOFT = frozenset({Reason.MAILBOX_FULL, Reason.TOO_BIG, Reason.EXPIRED})
"""The mail did not arrive, but may another time."""

ENHANCED_STATUS = re.compile(r"(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.]*\d)")
REPLY_CODE = re.compile(r"(?<![\d.#-])([245])\d\d(?=[ -]|:|$)")


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), re.IGNORECASE)


_FIRST_WORDS: tuple[tuple[re.Pattern[str], Reason], ...] = (
    # Office 365's edge blocking of an address not in its directory reads like a block, but is not.
    (_words(r"recipient address rejected: access denied", r"recipientnotfound", r"recipnotfound"),
     Reason.USER_UNKNOWN),
    (_words(r"over (?:the )?quota", r"quota (?:exceeded|full)", r"mailbox (?:is )?full", r"receiving mail at a rate"),
     Reason.MAILBOX_FULL),
    (_words(r"\bspf\b", r"\bdkim\b", r"\bdmarc\b", r"sender policy framework", r"unauthenticated",
            r"not authenticated", r"authentication (?:failed|failure|required|check)", r"domainkeys",
            r"could not be authenticated", r"fails? (?:sender )?authentication"), Reason.AUTHENTICATION),
    (_words(r"\bspam\b", r"unsolicited", r"\bjunk\b", r"\bbulk mail", r"\bvirus", r"malware", r"phish",
            r"content (?:filter|rejected|was rejected)", r"message content", r"suspicious"), Reason.SPAM),
    (_words(r"block ?list", r"black ?list", r"deny ?list", r"blocked", r"\bdnsbl\b", r"\brbl\b", r"spamhaus",
            r"spamcop", r"\bsorbs\b", r"barracudacentral", r"reputation", r"(?<!not )listed (?:at|on|in|by)\b",
            r"client host .{0,80}(?:refused|rejected)", r"reverse (?:dns|hostname|lookup|address)", r"\brdns\b",
            r"\bptr\b", r"not allowed to send", r"too many (?:connections|messages|mails|recipients)", r"rate ?limit",
            r"temporarily deferred", r"unexpected volume", r"user complaints", r"\[ts[0-9]{2}\]",
            r"\[bl[0-9]{2}\]", r"\bthrottl", r"\bbanned\b", r"(?:your|sending|connecting) ip\b",
            r"\bip (?:address )?.{0,40}(?:rejected|refused|not allowed)", r"envelope blocked",
            r"connection (?:refused|rejected|denied)", r"access denied"), Reason.BLOCKED),
    (_words(r"\bsender (?:address|domain|rejected|denied|blocked|verify)", r"unroute?able sender", r"\baup#",
            r"not authori[sz]ed", r"\bpolic(?:y|ies)\b", r"administrative prohibition", r"not permitted", r"prohibited"),
     Reason.POLICY),
)
"""Words read before the status code: those that blame the service (``5.7.1`` or ``5.0.0``
says nothing, and an invitee must never pay for the service's block) and those of a full
mailbox (``552 5.2.2 Over quota`` under a DSN's ``Status: 5.1.1``)."""

_PRECISE_CODES: dict[str, Reason] = {
    "1.1": Reason.USER_UNKNOWN, "1.3": Reason.USER_UNKNOWN, "1.6": Reason.USER_UNKNOWN,
    "2.1": Reason.USER_UNKNOWN, "1.2": Reason.HOST_UNKNOWN, "1.10": Reason.HOST_UNKNOWN,
    "4.4": Reason.HOST_UNKNOWN, "2.2": Reason.MAILBOX_FULL, "2.3": Reason.TOO_BIG, "3.4": Reason.TOO_BIG,
    "4.7": Reason.EXPIRED, "1.7": Reason.POLICY, "1.8": Reason.POLICY, "7.9": Reason.POLICY,
    "7.20": Reason.AUTHENTICATION, "7.21": Reason.AUTHENTICATION, "7.22": Reason.AUTHENTICATION,
    "7.23": Reason.AUTHENTICATION, "7.24": Reason.AUTHENTICATION, "7.26": Reason.AUTHENTICATION,
    "7.27": Reason.AUTHENTICATION, "7.25": Reason.BLOCKED, "7.28": Reason.BLOCKED,
}
"""``subject.detail`` codes (RFC 3463 and the IANA registry) that say exactly what happened."""

_OTHER_WORDS: tuple[tuple[re.Pattern[str], Reason], ...] = (
    (_words(r"host (?:or domain name )?not found", r"host unknown", r"unknown (?:host|domain)",
            r"domain (?:name )?(?:not found|does not exist|unknown|is not valid)", r"no (?:mx|such domain)\b",
            r"name service error", r"nxdomain", r"unroute?able", r"could not resolve", r"loops back to myself",
            r"null mx", r"does not accept mail", r"no route to host"), Reason.HOST_UNKNOWN),
    (_words(r"mailbox (?:is )?full", r"over (?:the )?quota", r"quota (?:exceeded|full)", r"exceed\w* .{0,30}quota",
            r"(?:storage|disk) (?:space|quota|allocation)", r"insufficient (?:storage|space|system storage)",
            r"too much mail", r"postfach (?:ist )?voll", r"full mailbox", r"mailbox size", r"\bis full\b"),
     Reason.MAILBOX_FULL),
    (_words(r"user unknown", r"unknown (?:user|recipient|local.?part|address|mailbox|addressee)",
            r"no such (?:user|mailbox|recipient|address|account|person)",
            r"(?:does not|doesn't|did not) exist", r"doesn't have an? .{1,40} account", r"not our customer",
            r"(?:user|mailbox|recipient|account|address)(?: name)? (?:is )?(?:not found|unavailable|disabled|inactive|"
            r"suspended|deactivated|invalid|not (?:active|available|listed|valid|known))",
            r"invalid (?:recipient|mailbox|address|user)",
            r"mailbox (?:is )?(?:unavailable|not available)", r"no mailbox", r"not a valid (?:mailbox|recipient|user)",
            r"undeliverable address", r"bad (?:recipient|address|destination)", r"no longer (?:valid|available|in use|"
            r"exists|active)", r"has been (?:disabled|terminated|closed|suspended)", r"account (?:closed|expired|is "
            r"disabled)", r"not listed in", r"unbekannt", r"existiert nicht", r"nicht gefunden"), Reason.USER_UNKNOWN),
    (_words(r"too (?:big|large)", r"size limit", r"size exceeds", r"exceeds? (?:the )?(?:maximum|size|message size)",
            r"message (?:size|length) exceeds", r"maximum (?:message )?size"), Reason.TOO_BIG),
    (_words(r"expired", r"retry time", r"retry timeout", r"too long", r"giving up", r"gave up", r"timed? ?out",
            r"no answer", r"\bdeferred\b", r"temporar", r"try (?:again )?later"), Reason.EXPIRED),
    (_words(r"relay"), Reason.REJECTED),
)
"""The words of the other reasons, read after the precise status codes."""

_SUBJECTS: dict[str, Reason] = {
    "1": Reason.USER_UNKNOWN, "2": Reason.REJECTED, "3": Reason.REJECTED, "4": Reason.EXPIRED,
    "5": Reason.REJECTED, "6": Reason.REJECTED, "7": Reason.POLICY,
}
"""The status code's subject (RFC 3463 section 3) when nothing more precise is known."""

_REPLY_CODES: dict[str, Reason] = {"552": Reason.MAILBOX_FULL}
"""Bare SMTP reply codes with a meaning of their own (RFC 5321); another 5xx is a rejection."""

_WARNING_WORDS = _words(r"not yet been delivered", r"will (?:continue|keep) (?:trying|to try)",
                        r"still (?:being )?(?:trying|retried)", r"will (?:retry|try again)", r"this is a warning",
                        r"warning message only", r"no action is required", r"do not need to resend")
"""The words only a delay warning writes: they hold even where a detector took it for a failure."""
_DELAY_WORDS = _words(r"\bdelayed\b", _WARNING_WORDS.pattern)
"""The words of a delay warning, in a bounce that has no DSN fields."""


def status_in(text: str) -> str:
    """The first enhanced status code in ``text`` (``5.1.1``), or empty."""
    found = ENHANCED_STATUS.search(text)
    return found.group(0) if found else ""


def classify(status: str, diagnostic: str, action: str = "", final: bool = True) -> Reason:
    """The reason of one recipient's failure, from the DSN's Status and Action (or none) and the
    server's answer; ``final``: the mail was returned (not a delay warning)."""
    action = action.strip().lower()
    status = status_in(status) or status_in(diagnostic)
    reply = REPLY_CODE.search(diagnostic)
    code_class = status[:1] or (reply.group(1) if reply else "")
    if action in ("delivered", "relayed", "expanded") or code_class == "2":
        return Reason.NOT_A_FAILURE
    if action == "delayed" or not final:
        return Reason.DELAYED
    reason = _by_words(_FIRST_WORDS, diagnostic) or _PRECISE_CODES.get(status.partition(".")[2]) \
        or _by_words(_OTHER_WORDS, diagnostic) or _SUBJECTS.get(status.split(".")[1] if status else "") \
        or (_REPLY_CODES.get(reply.group(0), Reason.REJECTED) if reply else Reason.REJECTED)
    if code_class == "4" and reason in HARD | {Reason.REJECTED}:
        return Reason.EXPIRED  # returned after retries: the address may well be right
    return reason


def delay_warning(text: str, strictly: bool = False) -> bool:
    """Whether a bounce without DSN fields reads as a warning that delivery is still being tried;
    ``strictly``: in words no returned mail uses ("delayed" alone may tell why it expired)."""
    return bool((_WARNING_WORDS if strictly else _DELAY_WORDS).search(text))


def _by_words(table: tuple[tuple[re.Pattern[str], Reason], ...], text: str) -> Reason | None:
    return next((reason for pattern, reason in table if pattern.search(text)), None)


_CODES_ONLY = re.compile(r"(?:\b[245]\d\d\b|[245]\.\d{1,3}\.\d{1,3}|#|\bsmtp\b|[;:<>()\[\]\s.,-])+", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{2,}")


def readable(diagnostic: str) -> bool:
    """Whether the server's answer is a sentence worth quoting to a player (not ``550 :`` or ``77``)."""
    words = _WORD.findall(_CODES_ONLY.sub(" ", diagnostic))
    return len(words) >= 2 and sum(map(len, words)) >= 8
