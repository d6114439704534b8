"""FIBS-style Elo ratings, exactly the formula of SPEC §2.

::

    D   = |rating1 - rating2|
    P_u = 1 / (10^(D*sqrt(n)/2000) + 1)        probability that the lower-rated player wins
    P   = 1 - P_u if the lower-rated player won, else P_u
    K   = max(1, 5 - experience/100)            experience: sum of n over a player's rated games
    winner += 4*K*sqrt(n)*P ; loser -= 4*K*sqrt(n)*P   (K of each player is their own)

K uses each player's experience *before* the game, and both players' experience then grows
by n.  There are three separate ratings: one for matches (``match N``), one for casual play
(everything else: single games, series and money sessions), and one for prize play for credits
(seed 004's list, whose n is :meth:`pbem.rules.prizes.Prize.rating_weight`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from pbem.rules.scoring import Format, MatchRules

START_RATING = 1500.0


class RatingKind(StrEnum):
    MATCH = "match"
    CASUAL = "casual"
    PRIZE = "prize"


@dataclass(frozen=True)
class Rating:
    rating: float = START_RATING
    experience: int = 0


def kind_of(rules: MatchRules) -> RatingKind:
    return RatingKind.MATCH if rules.format is Format.MATCH else RatingKind.CASUAL


def weight(rules: MatchRules) -> int:
    """The n of the formula: how much one rated result of these rules counts.

    SPEC: "n: match length; a single game counts 1, a series of 3 games counts 4".  Read
    literally: a match to N counts N; a single game, and each game of a money session (rated
    game by game), counts 1; a series of N games counts N + 1 (3 → 4), because a series is
    decided by points, gammons and cubes included, so it is longer than a match to N; a series
    of one game is a single game and counts 1.
    """
    if rules.format is Format.MATCH:
        return rules.length
    if rules.format is Format.GAMES and rules.length > 1:
        return rules.length + 1
    return 1


def k_factor(experience: int) -> float:
    """Newcomers' ratings move up to five times faster than those of players with 400 points of experience."""
    return max(1.0, 5 - experience / 100)


def underdog_wins(difference: float, n: int) -> float:
    """P_u: the probability that the lower-rated player wins a contest worth ``n``."""
    return 1 / (10 ** (abs(difference) * math.sqrt(n) / 2000) + 1)


def rate(winner: Rating, loser: Rating, n: int) -> tuple[Rating, Rating]:
    """The winner's and the loser's new ratings after a result worth ``n``."""
    p_underdog = underdog_wins(winner.rating - loser.rating, n)
    p = 1 - p_underdog if winner.rating < loser.rating else p_underdog
    stake = 4 * math.sqrt(n) * p
    return (
        Rating(winner.rating + k_factor(winner.experience) * stake, winner.experience + n),
        Rating(loser.rating - k_factor(loser.experience) * stake, loser.experience + n),
    )
