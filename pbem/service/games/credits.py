"""Credits (play money, ℂ): every player's account, the stakes of prize games, and their payout.

No purchase, no payout, no real money: credits come only from the starting grant of a new
account (``[credits] start``) and the operator's ``pbem credits grant``, both ledger movements
from the issuer's account (:mod:`pbem.store.ledger`).

A prize game's life in the ledger, each step inside the transaction of the mail (or clock alarm)
that causes it:

* accepting the invitation moves both deposits, player → escrow, in one transaction, or none of
  them when either player cannot cover theirs (the invitation then stays open);
* the transaction that ends the series, match or game pays the escrow out whole, escrow →
  players and escrow → house (:func:`pbem.rules.prizes.payout`), so the escrow of a finished
  game is always empty.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlmodel import Session

from pbem.config import Config
from pbem.render.views import EventKind, Notice
from pbem.rules import prizes
from pbem.rules.prizes import Prize, from_cents, to_cents
from pbem.rules.scoring import Result
from pbem.service.table.assistant import is_assistant
from pbem.service.table.conversation import Conversation
from pbem.service.table.tables import Table
from pbem.store import ledger
from pbem.store.ledger import AccountKind, MovementKind
from pbem.store.game_records import Player

STATEMENT_ENTRIES = 10
"""How many entries the ``credits`` answer lists."""


def player_account(session: Session, player: Player, config: Config, now: datetime) -> int:
    """The player's account id; a new account gets the starting grant in the same transaction."""
    assert player.id is not None
    issuer = issuer_account(session)  # created before any other account: the lowest id, locked first
    account_id, created = ledger.ensure_account(session, ledger.player_key(player.id), AccountKind.PLAYER,
                                                player_id=player.id)
    start = to_cents(config.credits.start)
    if created and start > 0:
        ledger.post(session, MovementKind.START, [(issuer, -start), (account_id, start)], now=now)
    return account_id


def issuer_account(session: Session) -> int:
    return ledger.ensure_account(session, ledger.ISSUER_KEY, AccountKind.ISSUER)[0]


def house_account(session: Session) -> int:
    return ledger.ensure_account(session, ledger.HOUSE_KEY, AccountKind.HOUSE)[0]


def balance(session: Session, player: Player, config: Config) -> Decimal:
    """The player's balance; for a player without an account yet, the starting grant it will
    open with (so that reading changes nothing)."""
    assert player.id is not None
    cents = ledger.balance_cents(session, ledger.player_key(player.id))
    return config.credits.start if cents is None else from_cents(cents)


def grant(session: Session, player: Player, value: Decimal, reason: str, config: Config,
          now: datetime) -> Decimal:
    """``pbem credits grant``: credits from the issuer to the player; returns the new balance."""
    account_id = player_account(session, player, config, now)
    cents = to_cents(value)
    if cents <= 0:
        raise ValueError(f"a grant must be more than zero, not {value}")
    ledger.post(session, MovementKind.GRANT, [(issuer_account(session), -cents), (account_id, cents)],
                reason=reason, now=now)
    return balance(session, player, config)


def statement(talk: Conversation, table: Table | None = None) -> None:
    """``credits`` / ``konto``: the balance and the last entries of the sender's account."""
    account_id = player_account(talk.session, talk.sender, talk.config, talk.now)
    entries = [{"date": line.created_at.date().isoformat(), "kind": line.kind.value,
                "amount": from_cents(line.amount_cents), "match": line.match_id, "reason": line.reason}
               for line in ledger.last_entries(talk.session, account_id, STATEMENT_ENTRIES)]
    talk.say_template(Notice.CREDITS, table, balance=balance(talk.session, talk.sender, talk.config),
                      entries=entries)


def allowed(prize: Prize, config: Config) -> bool:
    """Whether the server allows this stake, or this rate with this limit (``[credits]``)."""
    if prize.kind is prizes.PrizeKind.SINGLE:
        return (prize.rate, prize.limit) in config.credits.rate_limits
    return prize.stake in config.credits.stakes


def fee_percent_of(prize: Prize, config: Config) -> Decimal:
    """The fee the prize game pays: the one fixed at its invitation; for a prize stored before
    fees were kept with it, the config's."""
    return config.credits.fee_percent if prize.fee_percent is None else prize.fee_percent


def invitation_terms(prize: Prize | None, config: Config) -> dict[str, object]:
    """What an invitation's mail says of its prize: the prize, the fee, what the winner gets and
    what a tie gives back (nothing without a prize)."""
    if prize is None:
        return {"prize": None}
    fee_percent = fee_percent_of(prize, config)
    return {"prize": prize, "fee_percent": fee_percent, "winner_gets": prizes.winner_gets(prize, fee_percent),
            "tie_back": prizes.tie_back(prize, fee_percent)}


def missing(session: Session, player: Player, deposit: Decimal, config: Config) -> Decimal:
    """How much the player lacks to deposit ``deposit`` (zero when they can)."""
    return max(deposit - balance(session, player, config), Decimal(0))


def refuse_invitation(talk: Conversation, prize: Prize, invitee: Player, table: Table | None = None) -> bool:
    """Tell the sender why a prize invitation cannot be sent (True), or nothing (False): a stake
    the server does not allow, the Assistant (who has no account), or a sender who cannot cover
    the deposit.  The invitee's balance is theirs alone: it is checked when they accept."""
    credits = talk.config.credits
    if not allowed(prize, talk.config):
        talk.say_template(Notice.PRIZE_NOT_ALLOWED, table, prize=prize, stakes=credits.stakes,
                          rate_limits=credits.rate_limits)
        return True
    if is_assistant(invitee):
        talk.say_template(Notice.PRIZE_NOT_WITH_ASSISTANT, table)
        return True
    short = missing(talk.session, talk.sender, prize.deposit, talk.config)
    if short:
        talk.say_template(Notice.PRIZE_NOT_COVERED, table, deposit=prize.deposit, short=short,
                          balance=balance(talk.session, talk.sender, talk.config))
        return True
    return False


def escrow(talk: Conversation, table: Table, prize: Prize) -> list[Decimal] | None:
    """Move both deposits into the match's escrow and return both balances after, or, when
    either player cannot cover theirs, move nothing at all: each hears what they themselves
    lack (never the other's balance or shortfall), and the invitation stays open (None).

    Both player accounts are locked (in the order of their ids) before their balances are read,
    so that no other transaction can spend the credits between the check and the movement.
    """
    session = talk.session
    accounts = [player_account(session, player, talk.config, talk.now) for player in table.players]
    balances = ledger.lock_balances(session, accounts)
    deposit = to_cents(prize.deposit)
    short = [max(deposit - balances[account_id], 0) for account_id in accounts]
    if any(short):
        talk.event(table, EventKind.PRIZE_NOT_COVERED, 1, deposit=prize.deposit,
                   short=[from_cents(cents) for cents in short],
                   balances=[from_cents(balances[account_id]) for account_id in accounts])
        return None
    escrow_id = ledger.ensure_account(session, ledger.escrow_key(table.id), AccountKind.ESCROW, match_id=table.id)[0]
    for account_id in accounts:
        ledger.post(session, MovementKind.STAKE, [(account_id, -deposit), (escrow_id, deposit)],
                    match_id=table.id, now=talk.now)
    return [balance(session, player, talk.config) for player in table.players]


def settle(talk: Conversation, table: Table, prize: Prize, last: Result) -> None:
    """Pay the escrow out at the end of the prize game, in the transaction that ends it: to the
    players (payout, refund) and the fee to the house; the escrow is then empty.

    The transaction takes no lock after this one: the house's account, which every settlement
    shares, is then held only by transactions that wait for nothing more."""
    session = talk.session
    paid = prizes.payout(prize, table.score, last, fee_percent_of(prize, talk.config))
    escrow_id = ledger.account_id_of(session, ledger.escrow_key(table.id))
    assert escrow_id is not None, f"prize match {table.id} ends without an escrow"
    held = ledger.lock_balances(session, [escrow_id])[escrow_id]
    assert held == to_cents(paid.total), f"match {table.id}: escrow holds {held} cents, payout {paid}"
    accounts = [player_account(session, player, talk.config, talk.now) for player in table.players]
    for seat, account_id in enumerate(accounts):
        cents = to_cents(paid.to_seats[seat])
        if cents:
            kind = MovementKind.PAYOUT if seat == paid.winner else MovementKind.REFUND
            ledger.post(session, kind, [(escrow_id, -cents), (account_id, cents)], match_id=table.id, now=talk.now)
    if paid.fee:
        cents = to_cents(paid.fee)
        ledger.post(session, MovementKind.FEE, [(escrow_id, -cents), (house_account(session), cents)],
                    match_id=table.id, now=talk.now)
    talk.event(table, EventKind.PRIZE_PAID, paid.winner, prize=prize, paid=list(paid.to_seats), fee=paid.fee,
               won=paid.won, balances=[balance(session, player, talk.config) for player in table.players])


def ledger_size(session: Session) -> tuple[int, int]:
    """How many movements and accounts the ledger holds (for ``pbem ledger check``)."""
    return ledger.count_rows(session)
