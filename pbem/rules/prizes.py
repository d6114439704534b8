"""Prize play for credits (play money, ℂ): the formats of seed 004 (EdenCity) and what each
result pays, as exact decimals.

Three formats, chosen at the invitation:

* ``prize games 3 stake S`` (:attr:`PrizeKind.SERIES`): a series of 3 games without the cube;
  each player stakes S.  The winner gets 2S less the fee (4.50 for 2.50, 9 for 5); on a tie
  each gets their stake back less the fee.
* ``prize match 5 stake S`` (:attr:`PrizeKind.MATCH`): a match to 5 points; the same stakes and
  payouts (a match has no tie).
* ``prize single rate R limit L`` (:attr:`PrizeKind.SINGLE`): one game paid per point.  Each
  player deposits L.  The winner wins points × R, at most L, less the fee, and gets their own
  deposit back; the loser gets back what of their deposit they did not lose.

Whoever leaves the table (``$quit``, a timeout) loses: the opponent wins the series or match at
once, and a single game at the highest result still possible on the board.

The fee is ``fee_percent`` of what is won (of each stake on a tie), rounded to the cent, half up;
what a player gets is the amount less that fee, so the payouts and the fee always add up to the
two deposits exactly: no cent is created or lost.  Amounts are :class:`~decimal.Decimal` with two
places here and whole cents in the ledger (:func:`to_cents`, :func:`from_cents`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Any

from pbem.rules.scoring import Ending, Format, MatchRules, Result, Score
from pbem.rules.scoring import winner as score_winner

CENT = Decimal("0.01")
HUNDRED = Decimal(100)
SERIES_GAMES = 3
MATCH_POINTS = 5
LEAVING = (Ending.RESIGNED, Ending.TIMEOUT)
"""How a player leaves the table: ``$quit`` and a timeout (a resignation offered at a level and
accepted ends only that game)."""


class PrizeKind(StrEnum):
    SERIES = "games"
    MATCH = "match"
    SINGLE = "single"


MAX_AMOUNT = Decimal("1000000.00")
"""The largest amount of credits anything may name (a stake, a grant, a config value): far above
any play, far below what 64-bit cents hold (the ledger bounds balances too:
``pbem.store.ledger.MAX_LEDGER_CENTS``)."""
AMOUNT_PATTERN = re.compile(r"[0-9]{1,7}(?:[.,][0-9]{1,2})?")
"""Plain ASCII digits, at most one decimal separator (``.`` or ``,``) and two decimals: no sign,
exponent, underscore, grouping or other script's digits, so that a hostile number is refused
before :class:`~decimal.Decimal` sees it."""


def amount(text: str | int | float | Decimal) -> Decimal:
    """An amount of credits from 0 to :data:`MAX_AMOUNT` with at most two places, written as
    :data:`AMOUNT_PATTERN` (a number goes through its shortest text, so 2.5 is 2.50); ValueError
    with a one-line reason otherwise.  It never raises anything else, whatever the text."""
    if isinstance(text, bool):
        raise ValueError(f"not an amount: {text!r}")
    written = text.strip() if isinstance(text, str) else str(text)
    if written.startswith("-"):
        raise ValueError(f"must be 0 or more: {text!r}")
    if not AMOUNT_PATTERN.fullmatch(written):
        raise ValueError(f"not an amount of credits like 10 or 2.50 (digits, at most two decimals): {text!r}")
    value = Decimal(written.replace(",", "."))
    if value > MAX_AMOUNT:
        raise ValueError(f"more than the largest amount of credits, {MAX_AMOUNT}: {text!r}")
    return value.quantize(CENT)


def to_cents(value: Decimal) -> int:
    """Whole cents of an amount with at most two places (the ledger stores integers)."""
    cents = value * 100
    if cents != cents.to_integral_value():
        raise ValueError(f"{value} is not a whole number of cents")
    return int(cents)


def from_cents(cents: int) -> Decimal:
    return (Decimal(cents) / 100).quantize(CENT)


def fee(value: Decimal, percent: Decimal) -> Decimal:
    """The house's share of ``value``: ``percent`` of it, to the cent, half up."""
    return (value * percent / HUNDRED).quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Prize:
    """What an invitation plays for: ``stake`` for a series or match, ``rate`` and ``limit``
    for a single game (the others zero), and the house's ``fee_percent``, fixed when the
    invitation is sent so that the game pays what its invitation promised (None: not fixed yet,
    as read from a mail, or a prize stored before fees were kept with it)."""

    kind: PrizeKind
    stake: Decimal = Decimal(0)
    rate: Decimal = Decimal(0)
    limit: Decimal = Decimal(0)
    fee_percent: Decimal | None = None

    def with_fee(self, fee_percent: Decimal) -> Prize:
        return replace(self, fee_percent=fee_percent)

    @property
    def deposit(self) -> Decimal:
        """What each player puts in escrow when the invitation is accepted."""
        return self.limit if self.kind is PrizeKind.SINGLE else self.stake

    def match_rules(self, cube_cap: int) -> MatchRules:
        """The game format: 3 games without the cube, a match to 5, or one game (seed 004)."""
        if self.kind is PrizeKind.SERIES:
            return MatchRules(format=Format.GAMES, length=SERIES_GAMES, cube_cap=1)
        if self.kind is PrizeKind.MATCH:
            return MatchRules(format=Format.MATCH, length=MATCH_POINTS, cube_cap=cube_cap)
        return MatchRules(format=Format.SINGLE, length=1, cube_cap=cube_cap)

    def rating_weight(self) -> int:
        """The n of the prize rating list (seed 004): 5 for the match to 5, 4 for the series of
        3 games, 2 for a single prize game."""
        return {PrizeKind.MATCH: 5, PrizeKind.SERIES: 4, PrizeKind.SINGLE: 2}[self.kind]

    def to_dict(self) -> dict[str, str]:
        fee = {} if self.fee_percent is None else {"fee_percent": str(self.fee_percent)}
        return {"kind": self.kind.value, "stake": str(self.stake), "rate": str(self.rate), "limit": str(self.limit),
                **fee}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Prize:
        fee = data.get("fee_percent")
        return cls(PrizeKind(data["kind"]), amount(data["stake"]), amount(data["rate"]), amount(data["limit"]),
                   None if fee is None else amount(fee))


@dataclass(frozen=True)
class Payout:
    """What the escrow of a finished prize game pays: to each seat, and the fee to the house.
    ``winner`` is the seat that won the prize (None: a tie or a draw); ``won`` what the winner
    won before the fee (a single game: the points times the rate, at most the limit)."""

    to_seats: tuple[Decimal, Decimal]
    fee: Decimal
    winner: int | None
    won: Decimal

    @property
    def total(self) -> Decimal:
        return self.to_seats[0] + self.to_seats[1] + self.fee


def left_the_table(last: Result) -> int | None:
    """The seat that left the table (``$quit`` or a timeout) in the game that ended with
    ``last``; None when nobody did."""
    if last.ending in LEAVING and last.winner is not None:
        return 1 - last.winner
    return None


def ends_the_prize(last: Result) -> bool:
    """True when the game that ended with ``last`` ends the prize series or match at once:
    somebody left the table."""
    return left_the_table(last) is not None


def prize_winner(score: Score, last: Result) -> int | None:
    """The seat that wins the prize: the opponent of one who left the table, else the winner of
    the series, match or game by points (None: a tie or a draw)."""
    leaver = left_the_table(last)
    return 1 - leaver if leaver is not None else score_winner(score)


def payout(prize: Prize, score: Score, last: Result, fee_percent: Decimal) -> Payout:
    """What the escrow (two deposits) pays when the prize game ends with ``score`` after the
    game that ended with ``last``."""
    deposit = prize.deposit
    winner = prize_winner(score, last)
    if prize.kind is PrizeKind.SINGLE:
        if winner is None:  # a drawn game: nothing won, both deposits go back whole
            return Payout((deposit, deposit), Decimal(0), None, Decimal(0))
        won = min(prize.rate * last.points, prize.limit)
        house = fee(won, fee_percent)
        seats = [deposit - won, deposit - won]
        seats[winner] = deposit + won - house
        return Payout((seats[0], seats[1]), house, winner, won)
    if winner is None:  # a tied series: each stake back, less the fee
        house = fee(deposit, fee_percent)
        return Payout((deposit - house, deposit - house), house * 2, None, Decimal(0))
    pot = deposit * 2
    house = fee(pot, fee_percent)
    seats = [Decimal(0), Decimal(0)]
    seats[winner] = pot - house
    return Payout((seats[0], seats[1]), house, winner, pot)


def winner_gets(prize: Prize, fee_percent: Decimal) -> Decimal:
    """What winning pays at most, before the deposit comes back: the pot less the fee for a
    series or match, the limit less the fee for a single game."""
    won = prize.limit if prize.kind is PrizeKind.SINGLE else prize.deposit * 2
    return won - fee(won, fee_percent)


def tie_back(prize: Prize, fee_percent: Decimal) -> Decimal:
    """What each player gets back on a tied series: the stake less the fee."""
    return prize.deposit - fee(prize.deposit, fee_percent)


def at_stake(prize: Prize, cube: int) -> Decimal:
    """What the game in progress is worth now to its winner before the fee: the pot for a series
    or match; for a single game, a single win at the cube's value times the rate, at most the limit."""
    if prize.kind is PrizeKind.SINGLE:
        return min(prize.rate * cube, prize.limit)
    return prize.deposit * 2
