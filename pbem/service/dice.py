"""Where the dice come from: the operating system's secure generator, never a seeded PRNG.

Players who cannot watch the dice being rolled must be able to trust them; ``secrets`` draws
from the OS CSPRNG.  The service takes any :class:`DiceRoller`, so tests can load the dice.
"""

from __future__ import annotations

import secrets
from typing import Protocol

from pbem.rules.game import Dice


class DiceRoller(Protocol):
    def roll(self) -> Dice: ...


class SecureDice:
    """Two fair dice from the OS cryptographically secure random number generator."""

    def roll(self) -> Dice:
        return secrets.randbelow(6) + 1, secrets.randbelow(6) + 1


SECURE_DICE = SecureDice()
