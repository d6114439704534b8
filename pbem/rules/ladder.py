"""A ladder's standing, pure: who stands where, who may challenge whom, and what a result does.

A standing is a tuple of player ids, the top first (place 1).  New players join at the bottom;
a player may challenge anyone at most ``reach`` places above them; the winner of a challenge
takes the higher of the two places: a winning challenger takes the defender's place, and
everyone from there down to the challenger's old place moves down one.  A challenger who
loses changes nothing.  Nothing here knows of mail, clocks or the database.
"""

from __future__ import annotations

Standing = tuple[int, ...]


class LadderError(ValueError):
    """A change the standing does not allow; ``code`` names it for the player's message."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def place(standing: Standing, player: int) -> int | None:
    """The player's place (1 = top), or None when they are not on the ladder."""
    return standing.index(player) + 1 if player in standing else None


def join(standing: Standing, player: int) -> Standing:
    """The standing with ``player`` new at the bottom (a player already on it: ``already_on``)."""
    if player in standing:
        raise LadderError("already_on")
    return (*standing, player)


def leave(standing: Standing, player: int) -> Standing:
    """The standing without ``player``: everyone below moves up one."""
    if player not in standing:
        raise LadderError("not_on")
    return tuple(other for other in standing if other != player)


def can_challenge(standing: Standing, challenger: int, defender: int, reach: int) -> bool:
    """Whether ``challenger`` may challenge ``defender``: both on the ladder, the defender above
    the challenger and at most ``reach`` places so."""
    below, above = place(standing, challenger), place(standing, defender)
    return below is not None and above is not None and 0 < below - above <= reach


def result(standing: Standing, challenger: int, defender: int, challenger_won: bool) -> Standing:
    """The standing after a challenge: the winner takes the higher of the two places, and the
    players from there down to the winner's old place move down one.  Whoever is no longer on
    the ladder (they left meanwhile) changes nothing, nor does a winner who already stands higher."""
    winner, loser = (challenger, defender) if challenger_won else (defender, challenger)
    winner_place, loser_place = place(standing, winner), place(standing, loser)
    if winner_place is None or loser_place is None or winner_place < loser_place:
        return standing
    rest = [other for other in standing if other != winner]
    rest.insert(loser_place - 1, winner)
    return tuple(rest)
