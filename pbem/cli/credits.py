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
from pbem.service.games import credits
from pbem.service.table.assistant import is_assistant
from pbem.store.db import session_scope, utc_now
from pbem.store.game_records import Player
from pbem.store.ledger import BeyondLimit, check_ledger

EXIT_PROBLEMS = 1
MAX_REASON_CHARS = 200
"""The player reads the reason in their ``credits`` mail: one line of at most this many characters."""


def _player(session: Session, address: str) -> Player:
    player = session.exec(select(Player).where(Player.address == address.lower())).first()
    if player is None:
        raise UsageError(f"no player with the address {address}")
    return player


def _amount(text: str) -> Decimal:
    try:
        value = amount(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if value <= 0:
        raise UsageError(f"a grant must be more than zero: {text}")
    return value


def _reason(text: str) -> str:
    """The reason on one line (line breaks, tabs and control characters become single spaces)."""
    reason = " ".join("".join(char if char.isprintable() else " " for char in text).split())
    if not reason:
        raise UsageError("--reason must say why (it stays in the ledger, and the player reads it)")
    if len(reason) > MAX_REASON_CHARS:
        raise UsageError(f"--reason is {len(reason)} characters long; at most {MAX_REASON_CHARS}, please")
    return reason


def grant(args: argparse.Namespace) -> int:
    """Add credits to a player's account, as a ledger movement; prints the new balance."""
    value = _amount(args.amount)
    reason = _reason(args.reason)
    config = config_of(args.config, mail_secrets=False)
    engine = database_of(config, create=False)
    try:
        with session_scope(engine) as session:
            player = _player(session, args.address)
            if is_assistant(player):
                raise UsageError("the Assistant plays no prize games and has no account: grant to a person")
            try:
                after = credits.grant(session, player, value, reason, config, utc_now())
            except BeyondLimit as exc:
                raise UsageError(f"nothing granted: {exc}") from None
        print(f"{player.address} {after:.2f}")
    finally:
        engine.dispose()
    return 0


def show(args: argparse.Namespace) -> int:
    """``ADDRESS BALANCE``, one line."""
    config = config_of(args.config, mail_secrets=False)
    engine = database_of(config, create=False)
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
    engine = database_of(config, create=False)
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
