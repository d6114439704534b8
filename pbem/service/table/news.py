"""The news of a mail: what happened in each match while its commands ran, and where its
answers thread.  The commands record it (:class:`pbem.service.table.conversation.Conversation`);
the letters are worded from it at the end (:mod:`pbem.service.table.letters`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pbem.mail.composing import Attachment
from pbem.render.views import EventKind
from pbem.service.table.tables import Table


@dataclass(frozen=True)
class Event:
    """Something that happened in a match; ``seat`` did it (None: the service itself)."""

    kind: EventKind
    seat: int | None = None
    data: dict[str, Any] = field(default_factory=dict)
    automatic: bool = False
    """Done by the service for ``seat`` (a roll, a forced play), not by a command of theirs."""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "seat": self.seat, "data": self.data, "automatic": self.automatic}

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> Event:
        return cls(EventKind(document["kind"]), document["seat"], document["data"], document.get("automatic", False))


@dataclass
class News:
    """What happened in one match while this mail was applied."""

    table: Table
    events: list[Event] = field(default_factory=list)
    notify: set[int] = field(default_factory=set)
    """Seats (besides the sender) that get a letter."""
    for_sender: list[str] = field(default_factory=list)
    """Texts for the sender alone (errors, confirmations), already in their language."""
    attachments: list[Attachment] = field(default_factory=list)
    show_board: bool = True
    opened: bool = False
    """The match began with this mail (a tournament's pairing): its letters come after the
    letters about no match, which may announce it (the round that ended)."""


@dataclass(frozen=True)
class Answering:
    """Where the letters to the sender thread: under this Message-ID, after these References."""

    message_id: str | None
    references: tuple[str, ...] = ()



def last_mail_of(table: Table, seat: int) -> Answering:
    """The last mail of the seat's thread: a letter of the daemon's jobs (a clock's alarm, a
    review) threads under it, as an answer to the player's mail does under that mail."""
    thread = table.thread(seat)
    return Answering(thread[-1] if thread else None, tuple(thread[:-1]))
