"""A match loaded for play: its row, both players, the score and the game, as rules-core objects.

The service works on :class:`Table` objects and writes them back with :meth:`Table.save`; the
rules core never sees the database, and the database only sees ``to_dict`` documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import bindparam
from sqlmodel import Session, col, select

from pbem.mail.composing import MAX_REFERENCES
from pbem.rules.game import Game
from pbem.rules.notation import Colour, Numbering
from pbem.rules.prizes import Prize
from pbem.rules.scoring import Score
from pbem.store.db import utc_now
from pbem.store.game_records import FinishedGame, MatchRecord, MatchStatus, Player, Seat
from pbem.store.row_writes import write_changes
from pbem.store.watching import MatchWatch


@dataclass
class Table:
    record: MatchRecord
    seats: tuple[Seat, Seat]
    players: tuple[Player, Player]
    score: Score
    game: Game | None
    unwatched: bool = field(default=False, compare=False)
    """Known to have no watch settings (read with the match): nobody can be watching it, and
    nothing needs to ask."""

    @classmethod
    def load(cls, session: Session, record: MatchRecord) -> Table:
        """The table of ``record``: its seats and players in one statement."""
        rows = session.exec(_SEATS_OF_MATCH, params={"match_id": record.id}).all()
        assert len(rows) == 2, f"match {record.id} has {len(rows)} seats"
        (seat_0, player_0), (seat_1, player_1) = rows
        game = Game.from_dict(record.game) if record.game is not None else None
        return cls(record, (seat_0, seat_1), (player_0, player_1), Score.from_dict(record.score), game)

    def save(self, session: Session) -> None:
        """Write the match and its seats: what changed of them now, with one UPDATE each
        (:func:`~pbem.store.row_writes.write_changes`); a new one is left to the ORM's flush."""
        self.record.score = self.score.to_dict()
        self.record.game = self.game.to_dict() if self.game is not None else None
        self.record.updated_at = utc_now()
        for row in (self.record, *self.seats):
            if not write_changes(session, row):
                session.add(row)

    @property
    def id(self) -> int:
        assert self.record.id is not None
        return self.record.id

    @property
    def prize(self) -> Prize | None:
        """What the match plays for in credits (``prize …`` at the invitation), or None."""
        document = self.record.options.get("prize")
        return None if document is None else Prize.from_dict(document)

    @property
    def dice_seed(self) -> bytes | None:
        """The secret seed of the current game's dice (None: a game begun before seeds)."""
        seed = self.record.dice_seed
        return None if seed is None else bytes.fromhex(seed)

    @property
    def status(self) -> MatchStatus:
        return MatchStatus(self.record.status)

    def seat_of(self, player: Player) -> int | None:
        for seat, seated in enumerate(self.players):
            if seated.id == player.id:
                return seat
        return None

    def token(self, seat: int) -> str:
        return self.seats[seat].token

    def thread(self, seat: int) -> list[str]:
        return self.seats[seat].thread

    def add_to_thread(self, seat: int, message_id: str) -> None:
        """Remember ``message_id`` as the newest mail of the seat's thread (JSON lists are replaced,
        not mutated, so that the change is saved)."""
        self.seats[seat].thread = [*self.thread(seat), message_id][-MAX_REFERENCES:]

    def take_notes(self, seat: int) -> list[str]:
        """The personal notes waiting for ``seat``, which are delivered now."""
        notes, self.seats[seat].notes = self.seats[seat].notes, []
        return list(notes)

    def leave_note(self, for_seat: int, text: str) -> None:
        """Keep a note for ``for_seat``'s next mail; of many waiting, only the newest that fit in
        MAX_WAITING_NOTES_CHARS are kept, so no opponent can make that mail too big to deliver."""
        notes = [*self.seats[for_seat].notes, text]
        while len(notes) > 1 and sum(len(note) for note in notes) > MAX_WAITING_NOTES_CHARS:
            notes.pop(0)
        self.seats[for_seat].notes = notes

    def numbering(self, seat: int) -> Numbering:
        return Numbering(self.players[seat].numbering)

    @staticmethod
    def colour(seat: int) -> Colour:
        return Colour.of_seat(seat)

    @property
    def stamp(self) -> tuple[int, int]:
        """(game number, decision count): what a mail showed, to recognise replies to older mails.

        Draw offers do not count: an offer must not make the opponent's turn mail look old.
        """
        if self.game is None:
            return (self.record.game_number, 0)
        decisions = sum(1 for action in self.game.record if action.kind != "draw_offer")
        return (self.record.game_number, decisions)

    def finished_games(self, session: Session) -> list[Game]:
        rows = session.exec(
            select(FinishedGame).where(FinishedGame.match_id == self.id).order_by(col(FinishedGame.number))
        ).all()
        return [Game.from_dict(row.game) for row in rows]


MAX_WAITING_NOTES_CHARS = 4000

# Built once, as the pipeline's statements of every mail (SQLAlchemy keeps their cache keys).
_SEATS_OF_MATCH = (select(Seat, Player).join(Player, col(Player.id) == Seat.player_id)
                   .where(Seat.match_id == bindparam("match_id")).order_by(col(Seat.number)))
_BY_TOKEN = (select(MatchRecord, Seat.number, MatchWatch).join(Seat, col(Seat.match_id) == MatchRecord.id)
             .outerjoin(MatchWatch, col(MatchWatch.match_id) == MatchRecord.id).where(Seat.token == bindparam("token")))
_BY_TOKEN_LOCKED = _BY_TOKEN.with_for_update(of=MatchRecord).execution_options(populate_existing=True)


def locked_match(session: Session, match_id: int, *, skip_locked: bool = False) -> MatchRecord | None:
    """The match row, read afresh and locked until the transaction ends, so that of two processes
    changing one match the second waits and then sees the first one's change (on PostgreSQL;
    SQLite has one writer at a time, and the version column catches the rest).  With
    ``skip_locked``, a match another process holds gives None instead of waiting."""
    lock: bool | dict[str, bool] = {"skip_locked": True} if skip_locked else True
    return session.get(MatchRecord, match_id, with_for_update=lock, populate_existing=True)


def table_for_token(session: Session, token: str, *, lock: bool = True) -> tuple[Table, int] | None:
    """The match a game token belongs to, locked (as :func:`locked_match` locks it: the row read
    afresh once locked), and the seat it was given to; the match, the seat and the watch
    settings in one statement.  ``lock=False`` only to show it (the web board's page), so that a
    reader holds up no mail."""
    found = session.exec(_BY_TOKEN_LOCKED if lock else _BY_TOKEN, params={"token": token}).first()
    if found is None:
        return None
    record, seat, watch = found
    table = Table.load(session, record)
    table.unwatched = watch is None
    return table, seat


def tables_of(session: Session, player: Player, statuses: tuple[MatchStatus, ...], *,
              lock: bool = True) -> list[Table]:
    """The player's matches in the given states, oldest first; to change them, locked as
    :func:`locked_match` locks one (in the order of their ids, as every lock of several matches
    is taken); ``lock=False`` only to read them, so that a list holds up no other daemon."""
    query = (select(MatchRecord).join(Seat, col(Seat.match_id) == MatchRecord.id)
             .where(Seat.player_id == player.id)
             .where(col(MatchRecord.status).in_([status.value for status in statuses]))
             .order_by(col(MatchRecord.id)))
    if lock:
        query = query.with_for_update(of=MatchRecord).execution_options(populate_existing=True)
    records = session.exec(query).all()
    return [Table.load(session, record) for record in records]
