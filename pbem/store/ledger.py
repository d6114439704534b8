"""The credits ledger: accounts, and movements of whole cents between them, in double entry.

Append-only: a :class:`Movement` is written once with its :class:`Entry` rows (one per account,
signed cents) that sum to zero, and no entry is ever changed or deleted.  Each account keeps its
balance in ``balance_cents`` as well, so that a balance is read (and locked) as one row; it is
changed only by :func:`post`, in the transaction that writes the entries, and ``pbem ledger
check`` (:func:`check_ledger`) proves it equal to the sum of the account's entries.

No account but the issuer's (the source of every credit there is: start grants and the
operator's grants) ever goes below zero: :func:`post` locks the accounts it moves, in the order
of their ids, refuses a movement that would overdraw one, and the database's check constraint
holds it too.

Several daemons share a PostgreSQL database, so locks are taken in one order everywhere, and no
two transactions wait for each other in a circle: a match's row first (``locked_match``; only
one transaction at a time moves a match's escrow), then the issuer (created before any other
account, so it has the lowest id), then players' accounts by id, and the house's account (which
every settlement shares) last of all, by the last movement of its transaction
(``pbem.service.games.credits.settle``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, CheckConstraint, Column, Text, cast, func, literal_column, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Field, Session, SQLModel, col

from pbem.store.db import UTCDateTime, utc_now
from pbem.store.game_records import MatchRecord, MatchStatus, Player


class AccountKind(StrEnum):
    PLAYER = "player"
    ESCROW = "escrow"
    """The stakes of one prize match, held from the acceptance to the end."""
    HOUSE = "house"
    """The fees."""
    ISSUER = "issuer"
    """Where every credit comes from: its balance is minus all credits ever granted."""


class MovementKind(StrEnum):
    START = "start"
    """The starting grant of a new account (``[credits] start``)."""
    GRANT = "grant"
    """``pbem credits grant``."""
    STAKE = "stake"
    PAYOUT = "payout"
    REFUND = "refund"
    FEE = "fee"


MAX_LEDGER_CENTS = 10**15
"""No balance goes beyond ±10,000,000,000,000.00 ℂ (the issuer's is minus all credits granted;
every other is part of that): :func:`post` refuses a movement that would, so that no sum of
balances or entries comes near the 64-bit integers the database keeps them in (9.2 × 10¹⁸)."""
MAX_MOVED_CENTS = 100_000_000
"""The most one entry moves, :data:`pbem.rules.prizes.MAX_AMOUNT` (1,000,000.00 ℂ) in cents."""

HOUSE_KEY = "house"
ISSUER_KEY = "issuer"


def player_key(player_id: int) -> str:
    return f"player:{player_id}"


def escrow_key(match_id: int) -> str:
    return f"escrow:{match_id}"


class Account(SQLModel, table=True):
    __tablename__ = "accounts"
    __table_args__ = (
        CheckConstraint("kind = 'issuer' OR balance_cents >= 0", name="ck_accounts_not_negative"),
    )

    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(sa_type=Text, unique=True, index=True)
    """``player:ID``, ``escrow:MATCH``, ``house`` or ``issuer``: one account each."""
    kind: AccountKind = Field(sa_type=Text)
    player_id: int | None = Field(default=None, foreign_key="players.id", index=True)
    match_id: int | None = Field(default=None, foreign_key="matches.id", index=True)
    balance_cents: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, server_default="0"))
    created_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)


class Movement(SQLModel, table=True):
    __tablename__ = "ledger_movements"

    id: int | None = Field(default=None, primary_key=True)
    kind: MovementKind = Field(sa_type=Text)
    match_id: int | None = Field(default=None, foreign_key="matches.id", index=True)
    reason: str = Field(sa_type=Text, default="")
    created_at: datetime = Field(sa_type=UTCDateTime, default_factory=utc_now)


class Entry(SQLModel, table=True):
    __tablename__ = "ledger_entries"

    id: int | None = Field(default=None, primary_key=True)
    movement_id: int = Field(foreign_key="ledger_movements.id", index=True)
    account_id: int = Field(foreign_key="accounts.id", index=True)
    amount_cents: int = Field(sa_column=Column(BigInteger, nullable=False))
    """Positive: credited to the account; negative: taken from it."""


class Overdrawn(Exception):
    """A movement would take an account below zero; nothing of it was written."""

    def __init__(self, account_id: int, balance_cents: int, wanted_cents: int) -> None:
        super().__init__(f"account {account_id} holds {balance_cents} cents, {wanted_cents} wanted")
        self.account_id = account_id
        self.balance_cents = balance_cents
        self.wanted_cents = wanted_cents


class BeyondLimit(ValueError):
    """A movement would move more than :data:`MAX_MOVED_CENTS` at once or take a balance beyond
    :data:`MAX_LEDGER_CENTS`; nothing of it was written."""


def ensure_account(session: Session, key: str, kind: AccountKind, *, player_id: int | None = None,
                   match_id: int | None = None) -> tuple[int, bool]:
    """The id of the account ``key``, created if missing; True when this call created it.

    ``INSERT … ON CONFLICT DO NOTHING``: of two processes creating the same account, the second
    waits for the first and then finds it, so an account (and its starting grant) exists once.
    """
    insert = postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    inserted = session.execute(
        insert(Account).values(key=key, kind=kind.value, player_id=player_id, match_id=match_id,
                               balance_cents=0, created_at=utc_now())
        .on_conflict_do_nothing(index_elements=["key"]).returning(col(Account.id))
    ).scalar_one_or_none()
    if inserted is not None:
        return inserted, True
    return session.execute(select(col(Account.id)).where(col(Account.key) == key)).scalar_one(), False


def account_id_of(session: Session, key: str) -> int | None:
    return session.execute(select(col(Account.id)).where(col(Account.key) == key)).scalar_one_or_none()


def lock_balances(session: Session, account_ids: Iterable[int]) -> dict[int, int]:
    """The balances in cents of these accounts, each row locked until the transaction ends, taken
    one by one in the order of their ids (every process takes them in this order)."""
    balances = {}
    for account_id in sorted(set(account_ids)):
        balances[account_id] = session.execute(
            select(col(Account.balance_cents)).where(col(Account.id) == account_id).with_for_update()
        ).scalar_one()
    return balances


def post(session: Session, kind: MovementKind, transfers: Sequence[tuple[int, int]], *,
         match_id: int | None = None, reason: str = "", now: datetime | None = None) -> int:
    """Write one movement: ``transfers`` are (account id, signed cents) summing to zero; returns
    the movement's id.  Raises :class:`Overdrawn` (having written nothing) when an account other
    than the issuer's would go below zero, :class:`BeyondLimit` when it would move or hold too
    much."""
    if sum(cents for _, cents in transfers) != 0:
        raise ValueError(f"a movement must sum to zero: {transfers}")
    if len(transfers) < 2 or len({account_id for account_id, _ in transfers}) != len(transfers):
        raise ValueError(f"a movement moves between two or more different accounts: {transfers}")
    if any(not isinstance(cents, int) or abs(cents) > MAX_MOVED_CENTS for _, cents in transfers):
        raise BeyondLimit(f"a movement moves whole cents, at most {MAX_MOVED_CENTS} at once: {transfers}")
    balances = lock_balances(session, (account_id for account_id, _ in transfers))
    issuer = account_id_of(session, ISSUER_KEY)
    for account_id, cents in transfers:
        if account_id != issuer and balances[account_id] + cents < 0:
            raise Overdrawn(account_id, balances[account_id], -cents)
        if abs(balances[account_id] + cents) > MAX_LEDGER_CENTS:
            raise BeyondLimit(f"account {account_id} would hold {balances[account_id] + cents} cents, "
                              f"beyond the ledger's limit of {MAX_LEDGER_CENTS}")
    movement = Movement(kind=kind, match_id=match_id, reason=reason, created_at=now or utc_now())
    session.add(movement)
    session.flush()
    assert movement.id is not None
    for account_id, cents in sorted(transfers):
        session.add(Entry(movement_id=movement.id, account_id=account_id, amount_cents=cents))
        changed = session.execute(
            update(Account).where(col(Account.id) == account_id)
            .where((col(Account.kind) == AccountKind.ISSUER.value) | (col(Account.balance_cents) + cents >= 0))
            .values(balance_cents=col(Account.balance_cents) + cents).returning(col(Account.id))
        ).scalar_one_or_none()
        if changed is None:  # cannot happen under the row lock; a guard all the same
            raise Overdrawn(account_id, balances[account_id], -cents)
    session.flush()
    return movement.id


def balance_cents(session: Session, key: str) -> int | None:
    """The balance of account ``key`` as last committed (None: no such account), unlocked."""
    return session.execute(select(col(Account.balance_cents)).where(col(Account.key) == key)).scalar_one_or_none()


@dataclass(frozen=True)
class EntryLine:
    """One entry of an account's statement."""

    created_at: datetime
    kind: MovementKind
    amount_cents: int
    match_id: int | None
    reason: str


def last_entries(session: Session, account_id: int, count: int) -> list[EntryLine]:
    """The account's newest ``count`` entries, newest first."""
    rows = session.execute(
        select(col(Movement.created_at), col(Movement.kind), col(Entry.amount_cents), col(Movement.match_id),
               col(Movement.reason))
        .join(Movement, col(Movement.id) == col(Entry.movement_id))
        .where(col(Entry.account_id) == account_id)
        .order_by(col(Entry.id).desc()).limit(count)
    ).all()
    return [EntryLine(row[0], MovementKind(row[1]), row[2], row[3], row[4]) for row in rows]


def check_ledger(session: Session) -> list[str]:
    """Every way the ledger is broken, one line each; empty when it is sound: each movement has
    two or more entries summing to zero, each balance equals the sum of its account's entries,
    no account but the issuer's is below zero, no escrow of a match that no longer runs holds
    credits, and the whole ledger sums to zero.  Values that are no integer cents or beyond the
    limits (written around :func:`post`) are reported first, and then the sums are not taken:
    they could not be trusted, and SQLite's would fail."""
    problems = _values_out_of_bounds(session)
    if problems:
        return [*problems, *_accounts_misplaced(session), "the sums were not checked: first repair the values above"]
    problems += _accounts_misplaced(session)
    unbalanced = session.execute(
        select(col(Movement.id), func.coalesce(func.sum(Entry.amount_cents), 0), func.count(col(Entry.id)))
        .outerjoin(Entry, col(Entry.movement_id) == col(Movement.id))
        .group_by(col(Movement.id))
        .having((func.coalesce(func.sum(Entry.amount_cents), 0) != 0) | (func.count(col(Entry.id)) < 2))
        .order_by(col(Movement.id))
    ).all()
    problems += [f"movement {movement_id}: its {count} entries sum to {total} cents, not 0"
                 if count >= 2 else f"movement {movement_id}: {count} entries, not two or more"
                 for movement_id, total, count in unbalanced]
    sums = (select(col(Entry.account_id).label("account_id"), func.sum(Entry.amount_cents).label("total"))
            .group_by(col(Entry.account_id)).subquery())
    entries_total = func.coalesce(sums.c.total, 0)
    wrong = session.execute(
        select(col(Account.key), col(Account.balance_cents), entries_total)
        .outerjoin(sums, sums.c.account_id == col(Account.id))
        .where(entries_total != col(Account.balance_cents))
        .order_by(col(Account.id))
    ).all()
    problems += [f"account {key}: balance {balance} cents, but its entries sum to {total}"
                 for key, balance, total in wrong]
    negative = session.execute(
        select(col(Account.key), col(Account.balance_cents))
        .where(col(Account.kind) != AccountKind.ISSUER.value, col(Account.balance_cents) < 0)
    ).all()
    problems += [f"account {key}: below zero ({balance} cents)" for key, balance in negative]
    orphans = session.execute(
        select(func.count()).select_from(Entry)
        .where(~select(literal_column("1")).where(col(Movement.id) == col(Entry.movement_id)).exists())
    ).scalar_one()
    if orphans:
        problems.append(f"{orphans} entries belong to no movement")
    stuck = session.execute(
        select(col(Account.key), col(Account.balance_cents))
        .join(MatchRecord, col(MatchRecord.id) == col(Account.match_id))
        .where(col(Account.kind) == AccountKind.ESCROW.value, col(Account.balance_cents) != 0,
               col(MatchRecord.status) != MatchStatus.RUNNING.value)
    ).all()
    problems += [f"account {key}: its match no longer runs, but it holds {balance} cents" for key, balance in stuck]
    total = session.execute(select(func.coalesce(func.sum(Account.balance_cents), 0))).scalar_one()
    if total != 0:
        problems.append(f"the balances of all accounts sum to {total} cents, not 0")
    return problems


def _accounts_misplaced(session: Session) -> list[str]:
    """Accounts that are not what their kind says: one issuer and one house, with their fixed
    keys; a player's account for an existing player, an escrow for an existing match, each
    under its own key.  (A changed kind would escape the below-zero check, a deleted match
    would hide its escrow from the check of finished games.)"""
    players = set(session.execute(select(col(Player.id))).scalars())
    matches = set(session.execute(select(col(MatchRecord.id))).scalars())
    problems = []
    singles = {AccountKind.ISSUER.value: ISSUER_KEY, AccountKind.HOUSE.value: HOUSE_KEY}
    found: dict[str, int] = {}
    rows = session.execute(select(col(Account.key), col(Account.kind), col(Account.player_id), col(Account.match_id))
                           .order_by(col(Account.id))).all()
    for key, kind, player_id, match_id in rows:
        if kind in singles:
            found[kind] = found.get(kind, 0) + 1
            right = key == singles[kind] and player_id is None and match_id is None
            if not right:
                problems.append(f"account {key}: of kind {kind}, which only the account {singles[kind]} is")
        elif kind == AccountKind.PLAYER.value:
            if player_id not in players or key != player_key(player_id) or match_id is not None:
                problems.append(f"account {key}: a player's account, but not of an existing player "
                                f"under the key {player_key(player_id) if player_id is not None else 'player:ID'}")
        elif kind == AccountKind.ESCROW.value:
            if match_id not in matches or key != escrow_key(match_id) or player_id is not None:
                problems.append(f"account {key}: an escrow, but not of an existing match "
                                f"under the key {escrow_key(match_id) if match_id is not None else 'escrow:MATCH'}")
        else:
            problems.append(f"account {key}: of no known kind ({kind})")
    problems += [f"{count} accounts of kind {kind}, not one" for kind, count in found.items() if count > 1]
    return problems


def _values_out_of_bounds(session: Session) -> list[str]:
    """Balances and entries that are not whole cents within the limits: stored as a REAL or text
    (SQLite keeps whatever is written) or too large for any sum to be safe."""
    problems = []
    for what, table_key, column, limit in (
        ("account", col(Account.key), col(Account.balance_cents), MAX_LEDGER_CENTS),
        ("entry", col(Entry.id), col(Entry.amount_cents), MAX_MOVED_CENTS),
    ):
        bad = (column > limit) | (column < -limit) | column.is_(None)
        if session.get_bind().dialect.name == "sqlite":
            bad = (func.typeof(column) != "integer") | bad
        rows = session.execute(select(table_key, cast(column, Text)).where(bad).order_by(table_key)).all()
        problems += [f"{what} {key}: {value} cents is not a whole number of cents within ±{limit}"
                     for key, value in rows]
    return problems


def count_rows(session: Session) -> tuple[int, int]:
    """How many movements and accounts there are."""
    movements = session.execute(select(func.count()).select_from(Movement)).scalar_one()
    accounts = session.execute(select(func.count()).select_from(Account)).scalar_one()
    return movements, accounts
