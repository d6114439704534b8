"""Where the dice come from: each game's secret seed, drawn from the OS generator.

Players who cannot watch the dice being rolled must be able to trust them.  At the start of a
game :func:`new_seed` draws 32 bytes with ``secrets``; every roll of the game is derived from
them (:mod:`pbem.rules.dice`), the first mail of the game shows their SHA-256 and the game-over
mail reveals them, so anyone can check every roll afterwards (``pbem verify-dice``).

The service takes any :class:`DiceRoller`, so tests can load the dice; the daemon uses
:data:`SEEDED_DICE`.
"""

from __future__ import annotations

import secrets
from typing import Protocol

from pbem.rules import dice as fair_dice
from pbem.rules.game import Dice


class DiceRoller(Protocol):
    def roll(self, seed: bytes | None, number: int) -> Dice:
        """Roll ``number`` (from 0) of the game whose dice seed is ``seed``."""
        ...


def new_seed() -> bytes:
    """A game's secret dice seed, from the OS cryptographically secure generator."""
    return secrets.token_bytes(fair_dice.SEED_BYTES)


class SeededDice:
    """The roll the game's seed gives; a game begun before seeds existed (schema 0008) has none
    and rolls two dice from the OS generator, as it did before."""

    def roll(self, seed: bytes | None, number: int) -> Dice:
        if seed is None:
            return secrets.randbelow(6) + 1, secrets.randbelow(6) + 1
        return fair_dice.roll(seed, number)


SEEDED_DICE = SeededDice()
