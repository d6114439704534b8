"""Every mail the service received and every mail it wants to send.

An incoming mail's Message-ID is unique, so a mail read twice is applied once. An outgoing mail
is a row written in the same transaction as the state change it reports, and sent afterwards.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from datetime import datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import EmailPolicy
from email.policy import default as default_policy
from email.utils import getaddresses, make_msgid, parseaddr
from enum import StrEnum

from sqlalchemy import JSON, Connection, Index, LargeBinary, Table, Text, event, insert, text
from sqlmodel import Field, Session, SQLModel

from pbem.addresses import bounce_address
from pbem.store.db import UTCDateTime, utc_now


class InboundState(StrEnum):
    APPLIED = "applied"
    IGNORED = "ignored"
    FAILED = "failed"
    """Shunted: put aside for the operator; the same mail read again is put aside again."""
    REQUEUED = "requeued"
    """A shunted mail the operator put back (``pbem requeue``): it is applied when read again."""


class InboundMail(SQLModel, table=True):
    """A mail read from the inbox; `state` says what became of it, `reason` why."""

    __tablename__ = "inbound_mail"
    __table_args__ = (
        # The retention job's next mails to prune (``pbem.service.jobs.retention``): only the rows not
        # yet pruned are in it, so a mail kept for years after its game costs no entry here.
        Index("ix_inbound_mail_unpruned", "processed_at",
              sqlite_where=text("pruned_at IS NULL"), postgresql_where=text("pruned_at IS NULL")),
    )

    id: int | None = Field(default=None, primary_key=True)
    message_id: str = Field(sa_type=Text, unique=True, index=True)
    sender: str = Field(sa_type=Text, default="")
    subject: str = Field(sa_type=Text, default="")
    raw: bytes = Field(sa_type=LargeBinary)
    received_at: datetime = Field(sa_type=UTCDateTime)
    state: InboundState = Field(sa_type=Text, default=InboundState.APPLIED)
    reason: str = Field(sa_type=Text, default="")
    processed_at: datetime | None = Field(sa_type=UTCDateTime, default=None)
    match_id: int | None = Field(default=None, index=True)
    """The match the mail was about, if any: its raw text is kept while the match runs."""
    pruned_at: datetime | None = Field(sa_type=UTCDateTime, default=None)
    """When ``raw`` was emptied by the retention job, and with it what only the raw mail's reader
    needs (sender, subject, reason): the row stays, so a re-delivered mail is still recognised
    as applied."""


class OutboundMail(SQLModel, table=True):
    """A mail to send; unsent while `sent_at` is None, retried from `next_attempt_at` on."""

    __tablename__ = "outbound_mail"
    __table_args__ = (
        # The earlier mails of an answer's conversation still unsent (``pbem.daemon.pipeline``:
        # each recipient's mails about a match go out in order): only the unsent are in it.
        Index("ix_outbound_mail_unsent", "match_id",
              sqlite_where=text("sent_at IS NULL"), postgresql_where=text("sent_at IS NULL")),
    )

    id: int | None = Field(default=None, primary_key=True)
    message_id: str = Field(sa_type=Text, unique=True, index=True)
    sender: str = Field(sa_type=Text)
    recipients: list[str] = Field(sa_type=JSON)
    raw: bytes = Field(sa_type=LargeBinary)
    created_at: datetime = Field(sa_type=UTCDateTime)
    sent_at: datetime | None = Field(sa_type=UTCDateTime, default=None, index=True)
    attempts: int = 0
    next_attempt_at: datetime = Field(sa_type=UTCDateTime)
    last_error: str = Field(sa_type=Text, default="")
    match_id: int | None = Field(default=None, index=True)
    """The match the answer was about, if any: the answer is kept while the match runs."""
    bounce_tag: str | None = Field(sa_type=Text, default=None, unique=True, index=True)
    """The secret of its envelope sender (``service+bounce-TAG@domain``): a bounce names it."""


SUPERSEDED = "superseded"
"""The start of the reason of an answer dropped unsent because a newer one about the same
match to the same recipient shows a later state (``pbem.daemon.pipeline``)."""

RAW_MAIL_TABLES = ("inbound_mail", "outbound_mail")


def store_raw_mail_fast(connection: Connection, table: str) -> None:
    """On PostgreSQL, keep the ``raw`` mails of ``table`` with lz4 (or, where the server lacks
    it, uncompressed): its default pglz spends 2 ms on every answer with a picture, mostly
    failing to shrink the base64 PNG, while lz4 takes a fifth of that and stores less."""
    if connection.dialect.name != "postgresql":
        return
    lz4 = connection.exec_driver_sql(
        "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)").first()
    how = "SET COMPRESSION lz4" if lz4 else "SET STORAGE EXTERNAL"
    connection.exec_driver_sql(f"ALTER TABLE {table} ALTER COLUMN raw {how}")


def _after_create(target: Table, connection: Connection, **_: object) -> None:
    store_raw_mail_fast(connection, target.name)


for _table in (InboundMail.__table__, OutboundMail.__table__):  # type: ignore[attr-defined]
    event.listen(_table, "after_create", _after_create)


class OutboundGivenUp(SQLModel, table=True):
    """An answer no longer tried: refused for good by the mail server, or failing past
    ``[limits] give_up_after``.  ``pbem status`` lists these for the operator.  An answer
    dropped because a newer one about the same match to the same recipient shows a later state
    (its reason starts with :data:`SUPERSEDED`) is listed too, but is nothing to fix."""

    __tablename__ = "outbound_given_up"

    outbound_id: int = Field(foreign_key="outbound_mail.id", primary_key=True)
    given_up_at: datetime = Field(sa_type=UTCDateTime)
    reason: str = Field(sa_type=Text, default="")


class DeliveryFailure(SQLModel, table=True):
    """A bounce: one of our mails could not be delivered to ``address`` (permanently, or
    delayed while the server still tries), and the server's reason."""

    __tablename__ = "delivery_failures"

    id: int | None = Field(default=None, primary_key=True)
    address: str = Field(sa_type=Text, index=True)
    permanent: bool
    status: str = Field(sa_type=Text, default="")
    diagnostic: str = Field(sa_type=Text, default="")
    reason: str = Field(sa_type=Text, default="")
    """The reason class (``pbem.mail.bounce_reasons.Reason``); empty for a failure recorded before it."""
    outbound_id: int | None = Field(default=None, index=True)
    match_id: int | None = Field(default=None, index=True)
    reported_at: datetime = Field(sa_type=UTCDateTime, index=True)


def queue_mail(session: Session, message: EmailMessage, match_id: int | None = None) -> QueuedMail:
    """Store `message` for sending when `session` commits; the envelope comes from its headers.

    The envelope sender is the From address with a ``+bounce-TAG`` of this mail's own (VERP), so
    that a bounce names the mail that failed; recipients are To, Cc and Bcc (Bcc is removed from
    the mail).  A message without a Message-ID gets one, which it then keeps across all retries.
    ``match_id`` is the match the mail is about (its answers are kept while the match runs).

    The row is written at once, by one prebuilt INSERT on the session's connection: the ORM's
    unit of work costs several times as much for a row nothing reads again as an object.
    """
    from_address = parseaddr(str(message.get("From", "")))[1]
    if not from_address:
        raise ValueError("a mail to send needs a From address")
    tag = new_bounce_tag()
    sender = bounce_address(from_address, tag)
    recipients = [address for _, address in getaddresses(
        [str(value) for header in ("To", "Cc", "Bcc") for value in message.get_all(header, [])]) if address]
    if not recipients:
        raise ValueError("a mail to send needs at least one recipient")
    del message["Bcc"]
    if message.get("Message-ID") is None:
        message["Message-ID"] = make_msgid(domain=Address(addr_spec=from_address).domain)
    now = utc_now()
    message_id, raw = " ".join(str(message["Message-ID"]).split()), _mail_bytes(message)
    first_attempt = session.info.get(_FIRST_ATTEMPT, now)
    result = session.connection().execute(_INSERT_OUTBOUND, {
        "message_id": message_id, "sender": sender, "recipients": recipients, "raw": raw, "created_at": now,
        "sent_at": None, "attempts": 0, "next_attempt_at": first_attempt, "last_error": "", "match_id": match_id,
        "bounce_tag": tag})
    key = result.inserted_primary_key
    assert key is not None
    queued = QueuedMail(key[0], message_id, sender, tuple(recipients), raw, now, first_attempt, match_id)
    session.info.setdefault(_QUEUED, []).append(queued)
    return queued


@dataclass(frozen=True)
class QueuedMail:
    """A mail :func:`queue_mail` wrote: what sending it from memory needs."""

    id: int
    message_id: str
    sender: str
    recipients: tuple[str, ...]
    raw: bytes
    created_at: datetime
    next_attempt_at: datetime
    match_id: int | None = None


_INSERT_OUTBOUND = insert(OutboundMail.__table__)  # type: ignore[attr-defined]


_WRITING = ("linesep", "max_line_length", "utf8", "cte_type", "refold_source", "mangle_from_")
"""The settings of a policy that change the bytes it writes."""


def _mail_bytes(message: EmailMessage) -> bytes:
    """The bytes to store and send, as ``email.policy.default`` writes them: under the message's
    own policy where that writes the same (the service's keeps its recurring headers folded)."""
    policy = message.policy
    if isinstance(policy, EmailPolicy) and all(getattr(policy, name) == getattr(default_policy, name)
                                               for name in _WRITING):
        return message.as_bytes()
    return message.as_bytes(policy=default_policy)


def new_bounce_tag() -> str:
    """128 random bits in lower-case base32, as a game token: nobody guesses another's bounce."""
    return base64.b32encode(secrets.token_bytes(16)).decode("ascii").rstrip("=").lower()


_QUEUED = "pbem queued mails"
_FIRST_ATTEMPT = "pbem first attempt"


def hold_answers_until(session: Session, until: datetime) -> None:
    """The mails `session` queues from now on are not due before ``until``: the daemon applying
    a mail sends its answers itself meanwhile (``pbem.daemon.pipeline.OWN_ANSWER_LEASE``).  Set
    before they are queued, so that each is written by its one INSERT."""
    session.info[_FIRST_ATTEMPT] = until


def queued_mails(session: Session) -> list[QueuedMail]:
    """The mails :func:`queue_mail` stored in `session`, in order."""
    return list(session.info.get(_QUEUED, []))
