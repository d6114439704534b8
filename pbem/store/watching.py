"""Who may watch a match, and who does (issue 22, item 4).

A match's :class:`MatchWatch` row holds its watch code (a secret of its own, never a game token)
and each seat's ``watchers on``; a :class:`Watcher` row is an address that wrote ``watch CODE``
while both seats allowed it.  The rows stand beside the match rather than in it, so that the
game's own rows stay as they were: a match nobody ever let watch has no row here at all.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Text
from sqlmodel import Field, SQLModel

from pbem.store.db import UTCDateTime, utc_now


class MatchWatch(SQLModel, table=True):
    """A match's watch settings; made when a player of it first writes ``watchers on``."""

    __tablename__ = "match_watch"

    match_id: int = Field(foreign_key="matches.id", primary_key=True)
    code: str = Field(sa_type=Text, unique=True, index=True)
    """The code a friend writes as ``watch CODE`` and the page's ``/w/CODE``: lower-case base32."""
    allowed_0: bool = False
    """Seat 0 (the inviter) allows watching (``watchers on``)."""
    allowed_1: bool = False
    """Seat 1 (the invited player) allows watching."""
    waiting: list[dict[str, Any]] = Field(sa_type=JSON, default_factory=list)
    """Events the watchers were not yet sent (a roll waits for the move it is played with)."""

    def allowed(self) -> bool:
        """Watching is allowed while both players have it on."""
        return self.allowed_0 and self.allowed_1

    def allows(self, seat: int) -> bool:
        return self.allowed_0 if seat == 0 else self.allowed_1

    def allow(self, seat: int, on: bool) -> None:
        if seat == 0:
            self.allowed_0 = on
        else:
            self.allowed_1 = on


class Watcher(SQLModel, table=True):
    """An address that watches a match: it gets a read-only mail at the end of each game, or
    after each move (``every_move``)."""

    __tablename__ = "watchers"

    match_id: int = Field(foreign_key="matches.id", primary_key=True)
    player_id: int = Field(foreign_key="players.id", primary_key=True, index=True)
    since: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
    every_move: bool = False
    """``watch CODE every move``: a mail after each move; else one when each game ends."""
    last_message_id: str | None = Field(sa_type=Text, default=None)
    """The last watch mail of the match sent to this address: the next threads under it."""
