"""Provably fair dice: every roll of a game derived from a seed committed to before the game.

At the start of a game the service draws a secret 32-byte seed and tells both players its
SHA-256, the *commitment*; when the game is over it reveals the seed.  Roll number k of the game
(k = 0, 1, 2, …: the opening roll first, the re-rolls of a tied opening roll included) reads the
32 bytes of ``HMAC-SHA256(key=seed, msg=str(k).encode("ascii"))`` in order, skips every byte
≥ 252 (so that each of the 252 values left maps to a face equally often) and makes each other
byte b the die ``b % 6 + 1``; the first two dice are the roll.  In the opening roll the first
die is seat 0's and the second seat 1's.

Anyone with the seed can recompute every roll, and nobody could choose the seed after the
commitment: the dice were fixed before the first one was shown.  This module is the derivation
alone (pure, no randomness): the service draws the seed, ``pbem verify-dice`` checks a game.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pbem.rules.game import Dice

SEED_BYTES = 32
_UNBIASED_BELOW = 252
"""42 × 6: the bytes below this value give each face the same 42 chances."""


class SeedError(ValueError):
    """Not a seed (32 bytes, written as 64 hexadecimal digits) or not a commitment (64 digits)."""


def seed_from_hex(text: str) -> bytes:
    """The seed written as 64 hex digits (either case, surrounding blanks ignored)."""
    return bytes.fromhex(_hex64(text, "dice seed"))


def commitment_from_hex(text: str) -> str:
    """A commitment as written: 64 hex digits, in lowercase as :func:`commitment` writes them."""
    return _hex64(text, "dice commitment")


def _hex64(text: str, what: str) -> str:
    cleaned = text.strip().lower()
    if len(cleaned) != 2 * SEED_BYTES or any(digit not in "0123456789abcdef" for digit in cleaned):
        raise SeedError(f"a {what} is {2 * SEED_BYTES} hexadecimal digits, not {text.strip()[:80]!r}")
    return cleaned


def commitment(seed: bytes) -> str:
    """The SHA-256 of the seed in 64 lowercase hex digits: what the first mail of a game shows."""
    return hashlib.sha256(seed).hexdigest()


def roll(seed: bytes, number: int) -> Dice:
    """Roll number ``number`` (counted from 0) of the game with ``seed``.

    Of the 32 bytes, at least two are below 252 except with a probability of about 10^-54 (31 of
    them ≥ 252); that roll could not be made, and :class:`ValueError` says so instead of
    inventing dice the rule does not give.
    """
    if len(seed) != SEED_BYTES:
        raise SeedError(f"a dice seed is {SEED_BYTES} bytes, not {len(seed)}")
    if number < 0:
        raise ValueError(f"roll numbers start at 0, not {number}")
    digest = hmac.new(seed, str(number).encode("ascii"), hashlib.sha256).digest()
    dice = [byte % 6 + 1 for byte in digest if byte < _UNBIASED_BELOW][:2]
    if len(dice) < 2:
        raise ValueError(f"roll {number} of this seed has fewer than two usable bytes")
    return dice[0], dice[1]


def opening(seed: bytes) -> tuple[int, Dice]:
    """The first roll of the game that is not a tie, and its number: tied opening rolls are
    rolled again, and each re-roll takes the next number."""
    number = 0
    while (dice := roll(seed, number))[0] == dice[1]:
        number += 1
    return number, dice


@dataclass(frozen=True)
class WrittenRoll:
    """A roll as a game record shows it: who rolled and the two dice (a ``.mat`` file writes
    the higher die first and the opening roll as the starter's)."""

    seat: int
    dice: Dice


@dataclass(frozen=True)
class RollCheck:
    """One written roll compared with the roll the seed gives."""

    number: int
    """The roll's number k."""
    written: WrittenRoll
    derived: Dice
    """Roll k of the seed; for the opening, (seat 0's die, seat 1's die)."""
    is_opening: bool = False

    @property
    def matches(self) -> bool:
        """The same two dice; for the opening also the starter, the seat of the higher die."""
        if self.is_opening and self.written.seat != (0 if self.derived[0] > self.derived[1] else 1):
            return False
        return sorted(self.written.dice) == sorted(self.derived)


def check_rolls(seed: bytes, written: Sequence[WrittenRoll]) -> Iterator[RollCheck]:
    """Each written roll of one game beside the roll the seed gives for it, in order.

    The first written roll is the opening: the first roll of the seed that is not a tie (the
    record shows no tied rolls, so their numbers are skipped), with the higher die's seat as the
    starter.  Each later written roll is the next number.  Dice are compared as a pair without
    order, since a ``.mat`` file writes the higher die first.
    """
    if not written:
        return
    number, dice = opening(seed)
    yield RollCheck(number, written[0], dice, is_opening=True)
    for offset, later in enumerate(written[1:], start=1):
        yield RollCheck(number + offset, later, roll(seed, number + offset))


@dataclass(frozen=True)
class GameProof:
    """One game's written rolls checked against a seed (``pbem verify-dice`` and the web board's
    ``/verify`` page both say what this finds, each in its own words)."""

    checks: tuple[RollCheck, ...]

    @property
    def wrong(self) -> tuple[RollCheck, ...]:
        return tuple(check for check in self.checks if not check.matches)

    @property
    def holds(self) -> bool:
        """Every written roll, and there is at least one, is the one the seed gives."""
        return bool(self.checks) and not self.wrong

    @property
    def ties(self) -> int:
        """How many tied opening rolls were rolled again (the record shows none of them)."""
        return self.checks[0].number if self.checks else 0


def prove_game(seed: bytes, written: Sequence[WrittenRoll]) -> GameProof:
    """The game's rolls beside the seed's (:func:`check_rolls`), kept for a verdict."""
    return GameProof(tuple(check_rolls(seed, written)))


def games_of_seed(seed: bytes, games: Sequence[Sequence[WrittenRoll]]) -> tuple[int, ...]:
    """The numbers (from 1) of the games of a record whose rolls are all the ones ``seed`` gives:
    a game-over mail reveals one game's seed, and a player may not know which game of the
    attached match it is.  A game is given up at its first roll the seed does not give, so that
    the many seeds and games one upload to ``/verify`` may hold cost a roll or two for each pair,
    not every roll of every game."""
    return tuple(number for number, written in enumerate(games, start=1)
                 if written and all(check.matches for check in check_rolls(seed, written)))
