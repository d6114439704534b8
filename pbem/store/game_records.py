"""Players, matches and finished games: the state the game service reads and writes.

A *match* here is whatever one invitation started: a single game, a match to N points, a money
session or a series of N games (``rules`` says which).  It lives in one row from the invitation
to the end, with the running score and the game in progress as JSON documents written by the
rules core's ``to_dict``; finished games move to :class:`FinishedGame` for the ``.mat`` file.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Column, Connection, Index, Integer, Text, UniqueConstraint, event, text
from sqlmodel import Field, Session, SQLModel

from pbem.rules.rating import START_RATING, RatingKind
from pbem.store.db import UTCDateTime, utc_now


def _version_column() -> Column[int]:
    """A row's version, counted up by every write of it: SQLAlchemy writes ``WHERE version = the
    version read`` and raises StaleDataError when another process changed the row meanwhile, so
    no change is ever overwritten blindly (``pbem.daemon.pipeline`` applies the mail again)."""
    return Column("version", Integer, nullable=False, server_default="1")


_PLAYER_VERSION = _version_column()
_MATCH_VERSION = _version_column()


class Player(SQLModel, table=True):
    """Someone who wrote to the service or was invited; known by their address."""

    __tablename__ = "players"
    __mapper_args__ = {"version_id_col": _PLAYER_VERSION}
    __table_args__ = tuple(
        # The ``ratings`` answer reads the best in order, and counts who is above a player in
        # their band of ratings, from these (``pbem.service.games.ratings.standings``): only players
        # with rated play of the kind are in each, so that a list few have played (the prize
        # list) is not read through everybody else.
        Index(f"ix_players_rated_{kind}", f"rating_{kind}",
              sqlite_where=text(f"experience_{kind} > 0"), postgresql_where=text(f"experience_{kind} > 0"))
        for kind in ("match", "casual", "prize"))

    id: int | None = Field(default=None, primary_key=True)
    version: int = Field(default=1, sa_column=_PLAYER_VERSION)
    address: str = Field(sa_type=Text, unique=True, index=True)
    name: str = Field(sa_type=Text, default="")
    language: str | None = Field(sa_type=Text, default=None)
    """None: the service's default language."""
    numbering: str = Field(sa_type=Text, default="own")
    refuses_invitations: bool = False
    """Set by ``stop``: never send this address an invitation again."""
    autoroll: bool = False
    """``autoroll on``: the service rolls at once for them instead of asking "roll or double"."""
    copies: bool = False
    """``copies on``: a mail after each of their own accepted moves and each roll of the opponent
    too; by default a player gets mail only when they must act, or something is for them alone."""
    automove: bool = True
    """``automove off``: the service does not play a roll that has only one play for them."""
    greedy: bool = False
    """``greedy on``: with all checkers home and no contact, a roll that can bear off a checker
    with every die is played so for them."""
    page_token: str | None = Field(sa_type=Text, default=None, unique=True, index=True)
    """The secret of the player's own page of all their games (``/p/<token>``), never a game's
    token; made when a mail first links to it (:func:`pbem.service.table.conversation.page_token_of`)."""
    unsubscribe_token: str | None = Field(sa_type=Text, default=None, unique=True, index=True)
    """The secret of the address's ``List-Unsubscribe`` links (a mail to ``service+TOKEN@…``, or a
    POST to ``/u/TOKEN``): it does what ``stop`` does; made when a mail first carries it."""
    bounces: int = 0
    """Permanent delivery failures of mails to this address since its owner last wrote; at
    ``[limits] bounce_limit`` the address gets no more mail (:mod:`pbem.service.mailroom.bounces`)."""
    created_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
    rating_match: float = START_RATING
    """FIBS-style rating for matches (``pbem.rules.rating``); ``experience_match`` the sum of n."""
    experience_match: int = 0
    rating_casual: float = START_RATING
    """The rating for everything that is not a match: single games, series, money play."""
    experience_casual: int = 0
    rating_prize: float = START_RATING
    """The rating for prize play (seed 004's list: n is 5, 4 or 2 by the prize format)."""
    experience_prize: int = 0
    vacation_until: datetime | None = Field(sa_type=UTCDateTime, default=None)
    """Their clocks stand still until then (``vacation N``)."""
    vacation_days: dict[str, int] = Field(sa_type=JSON, default_factory=dict)
    """Vacation days taken, by calendar year ("2025": 12), for the yearly allowance."""

    @property
    def display_name(self) -> str:
        """The name from their From header, else the part of the address before the @."""
        return self.name or self.address.split("@", 1)[0]


RATING_COLUMNS = {
    RatingKind.MATCH: ("rating_match", "experience_match"),
    RatingKind.CASUAL: ("rating_casual", "experience_casual"),
    RatingKind.PRIZE: ("rating_prize", "experience_prize"),
}
"""Each kind's rating and experience columns of :class:`Player`; experience over 0 is rated play."""

RATING_BAND = 8.0
"""The width of a :class:`RatingCount` band: a power of two, so that :func:`rating_band` and the
comparisons with a band's bounds agree for every float."""


def rating_band(rating: float) -> int:
    """The band a rating lies in: ``[band * RATING_BAND, (band + 1) * RATING_BAND)``."""
    return math.floor(rating / RATING_BAND)


class RatingCount(SQLModel, table=True):
    """How many players with rated play of a kind have a rating in one band.

    The ``ratings`` answer sums these rows (a few hundred at most, whatever the players) for the
    number of rated players and for those above a player's band, and counts only the player's own
    band from the rating's index (``pbem.service.games.ratings.standings``): counting every rated player
    for every answer grew with the players.  Changed with the ratings, in the same transaction
    (:func:`move_rating_counts_at_commit`).
    """

    __tablename__ = "rating_counts"

    kind: str = Field(sa_type=Text, primary_key=True)
    band: int = Field(primary_key=True)
    players: int = 0


class RatingChange(SQLModel, table=True):
    """One player's rating of one kind after a rated result: the personal page's rating history
    (``pbem.service.pages.player_history``).  Written beside the rating itself
    (``pbem.service.games.ratings.record_result``); the history begins with revision 0025, so a rating
    reached before has no row of its own (the page starts its line at the first change since).
    """

    __tablename__ = "rating_history"
    __table_args__ = (Index("ix_rating_history_player", "player_id", "kind", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    player_id: int = Field(foreign_key="players.id")
    kind: str = Field(sa_type=Text)
    """A :class:`~pbem.rules.rating.RatingKind` value."""
    match_id: int = Field(foreign_key="matches.id")
    """The match (or money session) whose result changed it."""
    before: float
    rating: float
    experience: int
    changed_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)


_ADD_TO_BAND = text("INSERT INTO rating_counts (kind, band, players) VALUES (:kind, :band, :players) "
                    "ON CONFLICT (kind, band) DO UPDATE SET players = rating_counts.players + excluded.players")
"""SQLite and PostgreSQL alike: the band's row made, or its count changed, in one statement."""


def move_rating_counts_at_commit(session: Session, kind: RatingKind,
                                 moves: Iterable[tuple[float | None, float]]) -> None:
    """Players of ``kind`` went from one rating (None: not rated yet) to another: their bands
    are changed when ``session`` commits, as the last thing before it, after the players' rows.

    A band's row is shared by every result near that rating: changed earlier, it would make
    every other rated result on PostgreSQL wait for the whole rest of this transaction (and
    a transaction that then waits for one of those, as a knockout's two semi-finals wait for
    their tournament's row, for it in turn).
    """
    session.info.setdefault(_RATING_MOVES, []).append((kind, list(moves)))


_RATING_MOVES = "pbem rating moves"


@event.listens_for(Session, "before_commit")
def _move_bands_at_commit(session: Session) -> None:
    waiting = session.info.pop(_RATING_MOVES, [])
    if waiting:
        session.flush()  # the players' rows (and their version check) first, then the bands
        for kind, moves in waiting:
            move_rating_counts(session.connection(), kind, moves)


@event.listens_for(Session, "after_rollback")
def _forget_bands(session: Session) -> None:
    session.info.pop(_RATING_MOVES, None)


def move_rating_counts(connection: Connection, kind: RatingKind,
                       moves: Iterable[tuple[float | None, float]]) -> None:
    """Players of ``kind`` went from one rating (None: not rated yet) to another.

    The bands are changed in their order, so that two transactions at once on PostgreSQL take
    their rows' locks in the same order and never wait for each other in a circle.
    """
    changes: Counter[int] = Counter()
    for before, after in moves:
        if before is not None:
            changes[rating_band(before)] -= 1
        changes[rating_band(after)] += 1
    rows = [{"kind": kind.value, "band": band, "players": change} for band, change in sorted(changes.items()) if change]
    if rows:
        connection.execute(_ADD_TO_BAND, rows)


def count_rating_bands(connection: Connection) -> None:
    """Count every kind's bands again from the players (revision 0020, and after a bulk load)."""
    connection.execute(text("DELETE FROM rating_counts"))
    for kind, (rating_column, experience_column) in RATING_COLUMNS.items():
        ratings = connection.execute(text(f"SELECT {rating_column} FROM players WHERE {experience_column} > 0"))
        move_rating_counts(connection, kind, [(None, rating) for rating in ratings.scalars()])


class MatchStatus(StrEnum):
    INVITED = "invited"
    DECLINED = "declined"
    RUNNING = "running"
    FINISHED = "finished"


class MatchRecord(SQLModel, table=True):
    """One invitation and everything played under it.

    Seat 0 invited, seat 1 was invited (gnubg's players 0 and 1); what belongs to a seat is a
    :class:`Seat` row of its own.
    """

    __tablename__ = "matches"
    __mapper_args__ = {"version_id_col": _MATCH_VERSION}
    __table_args__ = (UniqueConstraint("tournament_id", "tournament_round", "tournament_index",
                                       name="uq_matches_tournament_pairing"),)

    id: int | None = Field(default=None, primary_key=True)
    version: int = Field(default=1, sa_column=_MATCH_VERSION)
    status: MatchStatus = Field(sa_type=Text, default=MatchStatus.INVITED, index=True)
    options: dict[str, Any] = Field(sa_type=JSON, default_factory=dict)
    """The invitation's options beyond the rules (rated, clocks, language)."""
    score: dict[str, Any] = Field(sa_type=JSON)
    """``pbem.rules.scoring.Score.to_dict()``: the rules and the running score."""
    game: dict[str, Any] | None = Field(sa_type=JSON, default=None)
    """``pbem.rules.game.Game.to_dict()`` of the game in progress or the last one played."""
    game_number: int = 0
    rematch_of: int | None = Field(default=None, foreign_key="matches.id")
    created_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
    updated_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
    finished_at: datetime | None = Field(sa_type=UTCDateTime, default=None)
    # The clock of the seat that must act (``pbem.service.table.clocks``); all None while no clock runs.
    clock_seat: int | None = None
    clock_started_at: datetime | None = Field(sa_type=UTCDateTime, default=None)
    clock_stamp: list[int] | None = Field(sa_type=JSON, default=None)
    """The ``Table.stamp`` the clock was started for: a new stamp is a new turn."""
    alarms_given: int = 0
    """How many of the running clock's alarms (``pbem.rules.clock.alarms``) were given."""
    deadline_at: datetime | None = Field(sa_type=UTCDateTime, default=None, index=True)
    """The next alarm of the running clock; None unless running, so the clock job's indexed
    range scan never sees finished matches."""
    dice_seed: str | None = Field(sa_type=Text, default=None)
    """The secret seed of the current game's dice (``pbem.rules.dice``), 64 hex digits: drawn
    when the game starts, shown to nobody until it is over.  None for a game begun before
    schema 0008, whose dice came straight from the OS generator."""
    dice_rolls: int = 0
    """How many rolls the current game has taken from its seed: the next roll's number k.
    Counted up in the transaction that records the roll, under the match's lock."""
    tournament_id: int | None = Field(default=None, foreign_key="tournaments.id", index=True)
    """The knockout this match is a pairing of, at ``tournament_round``/``tournament_index`` of
    its bracket (unique: two daemons never start a pairing twice)."""
    tournament_round: int | None = None
    tournament_index: int | None = None
    ladder_id: int | None = Field(default=None, foreign_key="ladders.id", index=True)
    """The ladder this match is a challenge of (seat 0 the challenger), or None."""
    assistant_level: str | None = Field(sa_type=Text, default=None)
    """The Assistant's level in a match against it (``pbem.assistant.levels``: ``beginner`` …
    ``world_class``); None in other matches and in those begun before schema 0024, which
    the Assistant plays at its strongest."""


class Seat(SQLModel, table=True):
    """One side of a match: its player, its unguessable token (in the Reply-To address and the
    Message-IDs of its mails), its mail thread (the last Message-IDs, so that every mail threads
    under the previous), the notes waiting for it and what is left of its time bank."""

    __tablename__ = "seats"

    match_id: int = Field(foreign_key="matches.id", primary_key=True)
    number: int = Field(primary_key=True)
    """0: the inviter, 1: the invited player (gnubg's players 0 and 1)."""
    player_id: int = Field(foreign_key="players.id", index=True)
    token: str = Field(sa_type=Text, unique=True, index=True)
    thread: list[str] = Field(sa_type=JSON, default_factory=list)
    notes: list[str] = Field(sa_type=JSON, default_factory=list)
    """Personal notes waiting for this seat (written by the other), sent with its next mail."""
    news: list[dict[str, Any]] = Field(sa_type=JSON, default_factory=list)
    """Events of the match this seat was not sent a mail about (the opponent's move and roll,
    plays made for it), told in its next mail: ``{"kind", "seat", "data"}`` each."""
    bank: float | None = None
    """Seconds left in this seat's time bank when its clock last started (None: not started yet)."""


class FinishedGame(SQLModel, table=True):
    """A game that has ended, kept whole for the ``.mat`` file of its match."""

    __tablename__ = "finished_games"

    id: int | None = Field(default=None, primary_key=True)
    match_id: int = Field(foreign_key="matches.id", index=True)
    number: int
    game: dict[str, Any] = Field(sa_type=JSON)
    finished_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
    dice_seed: str | None = Field(sa_type=Text, default=None)
    """The game's dice seed, revealed by its game-over mail and kept here for good (mails are
    pruned, this row is not); None for a game begun before schema 0008."""


class AccountConfirmation(SQLModel, table=True):
    """Account commands (``lang``, ``numbering``, ``stop``, ``vacation``) from a mail that carried
    no token of the sender, held until the sender answers the confirmation mail sent to their
    address: a forged From can then change nothing of anybody's account."""

    __tablename__ = "account_confirmations"

    token: str = Field(sa_type=Text, primary_key=True)
    player_id: int = Field(foreign_key="players.id", index=True)
    commands: list[str] = Field(sa_type=JSON)
    """The command lines as written, read again when confirmed."""
    created_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
    confirmed_at: datetime | None = Field(sa_type=UTCDateTime, default=None)
    invited_by: int | None = Field(default=None, foreign_key="players.id")
    """The organiser whose ``tournament invite`` holds these lines for the player (None: the
    player's own mail asked for them): an invitation, counted in the daily limits."""


class ReviewJob(SQLModel, table=True):
    """The bgsage review of a finished game, waiting to be computed and mailed.

    Written in the transaction that ends the game, so that mail goes out at once; the daemon's
    review job (``pbem.service.jobs.review_job``) claims it (``claimed_at``), computes the review
    outside any transaction and process of the mails, and in one short transaction stores
    ``result``, queues the review mails and sets ``done_at``.  A claim older than the job's
    lease (its daemon died) is taken up again; ``done_at`` is set only together with the mails,
    so a review is mailed once.
    """

    __tablename__ = "review_jobs"

    id: int | None = Field(default=None, primary_key=True)
    match_id: int = Field(foreign_key="matches.id", index=True)
    game_number: int
    game: dict[str, Any] = Field(sa_type=JSON)
    """``pbem.rules.game.Game.to_dict()`` of the finished game: all the review needs."""
    totals: bool = False
    """The match ended with this game and had several: the mail adds the totals of all its games."""
    created_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
    claimed_at: datetime | None = Field(sa_type=UTCDateTime, default=None)
    attempts: int = 0
    result: dict[str, Any] | None = Field(sa_type=JSON, default=None)
    """``pbem.assistant.review.review_game``'s figures, once computed."""
    done_at: datetime | None = Field(sa_type=UTCDateTime, default=None, index=True)
    """Set in the transaction that queued the review mails (or when the job was given up)."""
    error: str = Field(sa_type=Text, default="")


_TOURNAMENT_VERSION = _version_column()


class TournamentStatus(StrEnum):
    OPEN = "open"
    """Taking entries."""
    RUNNING = "running"
    FINISHED = "finished"


class TournamentRecord(SQLModel, table=True):
    """A knockout tournament by mail; its bracket (``pbem.rules.brackets.Bracket.to_dict()``) is
    changed under the row's lock, as a match's game is."""

    __tablename__ = "tournaments"
    __mapper_args__ = {"version_id_col": _TOURNAMENT_VERSION}

    id: int | None = Field(default=None, primary_key=True)
    version: int = Field(default=1, sa_column=_TOURNAMENT_VERSION)
    code: str = Field(sa_type=Text, unique=True, index=True)
    """What players write to join (``tournament join CODE``): short, not secret."""
    name: str = Field(sa_type=Text)
    size: int
    match_length: int
    rated: bool = True
    move_clock: float | None = None
    """Seconds per move of its matches (None: the server's default), and the time bank."""
    time_bank: float | None = None
    organiser_id: int = Field(foreign_key="players.id")
    status: TournamentStatus = Field(sa_type=Text, default=TournamentStatus.OPEN, index=True)
    bracket: dict[str, Any] | None = Field(sa_type=JSON, default=None)
    rounds_told: int = 0
    """The rounds whose end every player has been sent a mail about."""
    created_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
    started_at: datetime | None = Field(sa_type=UTCDateTime, default=None)
    finished_at: datetime | None = Field(sa_type=UTCDateTime, default=None)


class TournamentEntry(SQLModel, table=True):
    """A player in a tournament, from joining on (``leave`` before the start deletes the row)."""

    __tablename__ = "tournament_entries"

    tournament_id: int = Field(foreign_key="tournaments.id", primary_key=True)
    player_id: int = Field(foreign_key="players.id", primary_key=True, index=True)
    joined_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
_LADDER_VERSION = _version_column()


class Ladder(SQLModel, table=True):
    """A ladder (``ladder join NAME``): its terms and its standing, the top first.

    The standing changes only under this row's lock (:func:`pbem.service.games.ladder_standing.locked_ladder`),
    and the version column catches any write that did not take it, so that of two results at
    once neither is lost."""

    __tablename__ = "ladders"
    __mapper_args__ = {"version_id_col": _LADDER_VERSION}

    id: int | None = Field(default=None, primary_key=True)
    version: int = Field(default=1, sa_column=_LADDER_VERSION)
    name: str = Field(sa_type=Text, unique=True, index=True)
    """Lower case letters, digits and dashes: what players write after ``ladder``."""
    code: str = Field(sa_type=Text, unique=True, index=True)
    """The secret of its read-only web page (``/l/<code>``), shaped like a game token so that the
    web app's checks and log redaction treat it as one; it opens nothing but that page."""
    match_length: int = 5
    reach: int = 3
    """A player may challenge anyone at most this many places above them."""
    answer_days: int = 7
    """A challenge not accepted within this many days counts as won by the challenger."""
    standing: list[int] = Field(sa_type=JSON, default_factory=list)
    """Player ids, place 1 first (``pbem.rules.ladder``)."""
    results: list[dict[str, Any]] = Field(sa_type=JSON, default_factory=list)
    """The latest results, newest last: ``{"at", "challenger", "defender", "winner", "how"}``."""
    created_by: int = Field(foreign_key="players.id")
    created_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)
