"""Every mail the service received and every mail it wants to send.

An incoming mail's Message-ID is unique, so a mail read twice is applied once. An outgoing mail
is a row written in the same transaction as the state change it reports, and sent afterwards.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, LargeBinary, Text
from sqlmodel import Field, SQLModel

from pbem.store.db import UTCDateTime


class InboundState(StrEnum):
    APPLIED = "applied"
    IGNORED = "ignored"
    FAILED = "failed"


class InboundMail(SQLModel, table=True):
    """A mail read from the inbox; `state` says what became of it, `reason` why."""

    __tablename__ = "inbound_mail"

    id: int | None = Field(default=None, primary_key=True)
    message_id: str = Field(sa_type=Text, unique=True, index=True)
    sender: str = Field(sa_type=Text, default="")
    subject: str = Field(sa_type=Text, default="")
    raw: bytes = Field(sa_type=LargeBinary)
    received_at: datetime = Field(sa_type=UTCDateTime)
    state: InboundState = Field(sa_type=Text, default=InboundState.APPLIED)
    reason: str = Field(sa_type=Text, default="")
    processed_at: datetime | None = Field(sa_type=UTCDateTime, default=None)


class OutboundMail(SQLModel, table=True):
    """A mail to send; unsent while `sent_at` is None, retried from `next_attempt_at` on."""

    __tablename__ = "outbound_mail"

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


class InboundAttempt(SQLModel, table=True):
    """A mail being applied, written and committed before its transaction starts: if the process
    dies in it, the row stays, and a mail that killed the process twice is shunted."""

    __tablename__ = "inbound_attempts"

    message_id: str = Field(sa_type=Text, primary_key=True)
    attempts: int = 0
    started_at: datetime = Field(sa_type=UTCDateTime)


class OutboundGivenUp(SQLModel, table=True):
    """An answer no longer tried: refused for good by the mail server, or failing past
    ``[limits] give_up_after``.  ``pbem status`` lists these for the operator."""

    __tablename__ = "outbound_given_up"

    outbound_id: int = Field(foreign_key="outbound_mail.id", primary_key=True)
    given_up_at: datetime = Field(sa_type=UTCDateTime)
    reason: str = Field(sa_type=Text, default="")
