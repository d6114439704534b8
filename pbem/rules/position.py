"""The backgammon position: where all 30 checkers are, seen from the player on roll.

One model for the whole product, laid out as GNU Backgammon lays out its board, so that the
gnubg identifiers and the oracle tests need no translation:

* ``mover[i]`` is the number of the mover's checkers on the mover's point ``i + 1`` (0..23);
  ``mover[24]`` is the mover's bar.  The mover moves from high points to low points and bears
  off below point 1.
* ``opponent`` is the same for the other player, counted from *their* side: the opponent's
  point ``p`` is the mover's point ``25 - p``.
* Borne-off checkers are not stored: they are ``15`` minus the checkers on the board.

A position is immutable and hashable, so that a set of positions de-duplicates plays that reach
the same board, and it never knows about dice, cube or clocks (those belong to the game).
"""

from __future__ import annotations

from dataclasses import dataclass

CHECKERS = 15
BAR = 24
"""Index of the bar in a side's tuple (its 'point 25')."""

Side = tuple[int, ...]

_START_SIDE: Side = (0,) * 5 + (5,) + (0,) + (3,) + (0,) * 4 + (5,) + (0,) * 10 + (2,) + (0,)


@dataclass(frozen=True, slots=True)
class Position:
    """The board seen from the player on roll; see the module docstring for the layout."""

    mover: Side
    opponent: Side

    def __post_init__(self) -> None:
        for side in (self.mover, self.opponent):
            if len(side) != 25 or any(n < 0 for n in side) or sum(side) > CHECKERS:
                raise ValueError(f"not a backgammon side: {side!r}")
        for point in range(24):
            if self.mover[point] and self.opponent[23 - point]:
                raise ValueError(f"both players have checkers on point {point + 1}")

    @classmethod
    def start(cls) -> Position:
        """The standard starting position."""
        return cls(_START_SIDE, _START_SIDE)

    def swap(self) -> Position:
        """The same board seen from the other player (used when the turn passes)."""
        return unchecked_position(self.opponent, self.mover)

    @property
    def mover_off(self) -> int:
        """Checkers the mover has borne off."""
        return CHECKERS - sum(self.mover)

    @property
    def opponent_off(self) -> int:
        """Checkers the opponent has borne off."""
        return CHECKERS - sum(self.opponent)

    @property
    def mover_pips(self) -> int:
        """The mover's pip count (a checker on the bar counts 25)."""
        return pip_count(self.mover)

    @property
    def opponent_pips(self) -> int:
        """The opponent's pip count."""
        return pip_count(self.opponent)

    def mover_can_bear_off(self) -> bool:
        """True when all the mover's checkers are in the home board (points 1-6) or off."""
        return all_home(self.mover)


def unchecked_position(mover: Side, opponent: Side) -> Position:
    """A Position without the checks of ``__post_init__``, for the rules core's own steps: the
    other side's view or checkers moved of a valid position is valid (replaying a game makes
    thousands of them)."""
    position = object.__new__(Position)
    object.__setattr__(position, "mover", mover)
    object.__setattr__(position, "opponent", opponent)
    return position


def pip_count(side: Side) -> int:
    """Pips a side needs to bear off all its checkers."""
    return sum(count * (index + 1) for index, count in enumerate(side))


def all_home(side: Side) -> bool:
    """True when no checker of ``side`` stands outside its home board or on the bar."""
    return not any(side[6:])
