"""``pbem credits grant|show`` and ``pbem ledger check``: the operator's view of the credits.

Credits are play money: ``credits grant`` is the operator's only way to add any, and it is a
ledger movement like every other (from the issuer's account), never a changed balance.
"""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal

from sqlmodel import Session, select

from pbem.cli.loading import UsageError, config_of, database_of
from pbem.rules.prizes import amount
from pbem.service import credits
from pbem.store.db import session_scope, utc_now
from pbem.store.game_records import Player
from pbem.store.ledger import check_ledger

EXIT_PROBLEMS = 1


def _player(session: Session, address: str) -> Player:
    player = session.exec(select(Player).where(Player.address == address.lower())).first()
    if player is None:
        raise UsageError(f"no player with the address {address}")
    return player


def _amount(text: str) -> Decimal:
    try:
        value = amount(text)
    except ValueError:
        raise UsageError(f"not an amount of credits like 10 or 2.50: {text}") from None
    if value <= 0:
        raise UsageError(f"a grant must be more than zero: {text}")
    return value


def grant(args: argparse.Namespace) -> int:
    """Add credits to a player's account, as a ledger movement; prints the new balance."""
    value = _amount(args.amount)
    if not args.reason.strip():
        raise UsageError("--reason must say why (it stays in the ledger)")
    config = config_of(args.config, mail_secrets=False)
    engine = database_of(config)
    try:
        with session_scope(engine) as session:
            player = _player(session, args.address)
            after = credits.grant(session, player, value, args.reason.strip(), config, utc_now())
        print(f"{player.address} {after:.2f}")
    finally:
        engine.dispose()
    return 0


def show(args: argparse.Namespace) -> int:
    """``ADDRESS BALANCE``, one line."""
    config = config_of(args.config, mail_secrets=False)
    engine = database_of(config)
    try:
        with Session(engine) as session:
            player = _player(session, args.address)
            print(f"{player.address} {credits.balance(session, player, config):.2f}")
    finally:
        engine.dispose()
    return 0


def check(args: argparse.Namespace) -> int:
    """0 when the ledger is sound; else each problem on a line of its own, and 1."""
    config = config_of(args.config, mail_secrets=False)
    engine = database_of(config)
    try:
        with Session(engine) as session:
            problems = check_ledger(session)
            movements, accounts = credits.ledger_size(session)
    finally:
        engine.dispose()
    for problem in problems:
        print(f"pbem ledger check: {problem}", file=sys.stderr)
    if problems:
        return EXIT_PROBLEMS
    print(f"ledger sound: {movements} movements, {accounts} accounts, every movement sums to zero "
          "and every balance equals its entries")
    return 0
