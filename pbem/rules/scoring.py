"""Formats, game results and the running score of a match, series or money session.

A *game* (see :mod:`pbem.rules.game`) ends with a :class:`Result`; a :class:`Score` adds the
results up under the :class:`MatchRules` chosen at the invitation and says when the whole
thing is over and who won it.  Seats are 0 (the player who invited, gnubg's player 0) and 1.

Formats (SPEC section 2):

* ``single``: one game; the score is that game's points.
* ``match``: first to ``length`` points, with the Crawford rule: the first game after a player
  reaches ``length - 1`` is played without the cube (the Crawford game), later games with it
  (post-Crawford).  A match game lost by resignation or timeout loses the match (SPEC ``$quit``).
* ``money``: game after game until the players stop; every point is worth ``stake``.
* ``games``: a series of ``length`` games; the most points wins, equal points are a tie.

A drawn game (``$remis``) scores 0 points but counts as a game played.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum, StrEnum
from typing import Any

DEFAULT_CUBE_CAP = 64


class Format(StrEnum):
    """How games are strung together; the values are the invitation keywords."""

    SINGLE = "single"
    MATCH = "match"
    MONEY = "money"
    GAMES = "games"


class WinKind(IntEnum):
    """How much a win is worth before the cube: the value is the multiplier."""

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


class Ending(StrEnum):
    """How a game ended; the .mat file and the mails word each one differently."""

    PLAYED = "played"
    DROPPED = "dropped"
    RESIGNED = "resigned"
    """``$quit``: in a match, the match is resigned too."""
    RESIGNATION_ACCEPTED = "resignation_accepted"
    """A resignation offered at a level (``resign gammon``) and accepted: this game only."""
    TIMEOUT = "timeout"
    SETTLED = "settled"
    """Lost on time in a game invited with ``settle``: scored by the engine's equity."""
    DRAWN = "drawn"


@dataclass(frozen=True, slots=True)
class MatchRules:
    """The format and options chosen at the invitation; fixed for the whole match or session.

    ``length`` is the match length in points (``match``) or the number of games (``games``);
    it is 1 for ``single`` and 0 for ``money``.  ``stake`` is what one point is worth in money
    play.  ``cube_cap`` is the highest cube value (1 plays without a cube).  ``beaver`` and
    ``jacoby`` exist only in money play, as in gnubg.
    """

    format: Format = Format.SINGLE
    length: int = 1
    stake: int = 1
    cube_cap: int = DEFAULT_CUBE_CAP
    beaver: bool = False
    jacoby: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "format", Format(self.format))
        expected_length = {Format.SINGLE: 1, Format.MONEY: 0}.get(self.format)
        if expected_length is not None and self.length != expected_length:
            raise ValueError(f"a {self.format} game has length {expected_length}, not {self.length}")
        if self.format in (Format.MATCH, Format.GAMES) and not 1 <= self.length < 1 << 15:
            raise ValueError(f"{self.format} length must be 1-32767, not {self.length}")
        if self.stake < 1:
            raise ValueError(f"the stake must be positive, not {self.stake}")
        if self.cube_cap < 1 or self.cube_cap & (self.cube_cap - 1) or self.cube_cap > 1 << 15:
            raise ValueError(f"the cube cap must be a power of two up to 32768, not {self.cube_cap}")
        if (self.beaver or self.jacoby) and self.format is not Format.MONEY:
            raise ValueError("beaver and Jacoby exist only in money play")

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format.value,
            "length": self.length,
            "stake": self.stake,
            "cube_cap": self.cube_cap,
            "beaver": self.beaver,
            "jacoby": self.jacoby,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MatchRules:
        return cls(**data)


@dataclass(frozen=True, slots=True)
class Result:
    """How one game ended.

    ``points`` is what the game scores: ``kind`` times ``cube``, except that the Jacoby rule
    may count a gammon single and that a drawn game scores 0 (``winner`` and ``kind`` None).
    """

    winner: int | None
    kind: WinKind | None
    cube: int
    ending: Ending
    points: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "winner": self.winner,
            "kind": None if self.kind is None else int(self.kind),
            "cube": self.cube,
            "ending": self.ending.value,
            "points": self.points,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        kind = data["kind"]
        return cls(
            winner=data["winner"],
            kind=None if kind is None else WinKind(kind),
            cube=data["cube"],
            ending=Ending(data["ending"]),
            points=data["points"],
        )


@dataclass(frozen=True, slots=True)
class Score:
    """The running score: points per seat, games finished, and where the Crawford rule stands."""

    rules: MatchRules
    points: tuple[int, int] = (0, 0)
    games: int = 0
    crawford_played: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "points": list(self.points),
            "games": self.games,
            "crawford_played": self.crawford_played,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Score:
        return cls(
            rules=MatchRules.from_dict(data["rules"]),
            points=(data["points"][0], data["points"][1]),
            games=data["games"],
            crawford_played=data["crawford_played"],
        )


def is_crawford_game(score: Score) -> bool:
    """True when the next game is the Crawford game: the first after a player reaches length - 1.

    A 1-point match has no Crawford game (gnubg agrees): the cube is dead there anyway.
    """
    rules = score.rules
    return (
        rules.format is Format.MATCH
        and rules.length > 1
        and not score.crawford_played
        and not is_over(score)
        and rules.length - 1 in score.points
    )


def is_post_crawford(score: Score) -> bool:
    """True once the Crawford game has been played: the trailer may double again."""
    return score.crawford_played


def add_result(score: Score, result: Result) -> Score:
    """The score after the next game ended with ``result``."""
    points = list(score.points)
    if result.winner is not None:
        points[result.winner] += result.points
        if score.rules.format is Format.MATCH and result.ending in (Ending.RESIGNED, Ending.TIMEOUT):
            points[result.winner] = max(points[result.winner], score.rules.length)
    return replace(
        score,
        points=(points[0], points[1]),
        games=score.games + 1,
        crawford_played=score.crawford_played or is_crawford_game(score),
    )


def is_over(score: Score) -> bool:
    """True when no further game belongs to this match, series or single game.

    Money play is never over by itself: the players stop when they like.
    """
    rules = score.rules
    if rules.format is Format.MATCH:
        return max(score.points) >= rules.length
    if rules.format is Format.MONEY:
        return False
    return score.games >= rules.length


def winner(score: Score) -> int | None:
    """The seat that won (match, series, single game) or leads (money); None for a tie."""
    first, second = score.points
    if score.rules.format is Format.MATCH and not is_over(score):
        return None
    if first == second:
        return None
    return 0 if first > second else 1


def away(score: Score, seat: int) -> int:
    """Points ``seat`` still needs to win the match (match play only)."""
    return max(score.rules.length - score.points[seat], 0)


def money_balance(score: Score) -> tuple[int, int]:
    """What each seat has won (positive) or lost (negative): the point difference times the stake."""
    difference = (score.points[0] - score.points[1]) * score.rules.stake
    return difference, -difference


def seen_from(points: tuple[int, int], seat: int) -> tuple[int, int]:
    """Two seats' points as ``seat`` sees them: its own first."""
    return (points[seat], points[1 - seat])
