"""Knockout brackets, pure: seeding, byes, results, withdrawals and the bracket as text.

A bracket of ``size`` lines (a power of two) is filled from a ranking, best first, in the
standard order (seed 1 meets seed ``size``, 2 meets ``size - 1``, …, and 1 and 2 can meet only
in the final).  Fewer entrants than lines leave byes, which fall to the top seeds and are won at
once.  A match is named by its round (0 = the first) and its index in that round; its players
are the winners of the two matches of the round before that feed it.

A withdrawn player loses each match of theirs still to come by walkover; a match they were
playing is the service's to end (it resigns it), and its result comes in as any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

SIZES = (4, 8, 16, 32, 64)
"""The field sizes a knockout may be opened with."""
MIN_ENTRANTS = 4


class BracketError(ValueError):
    """A change the bracket does not allow (unknown match, a winner who did not play in it, …)."""


@dataclass(frozen=True)
class Pairing:
    """A match of the bracket whose two players are known."""

    round: int
    index: int
    players: tuple[int, int]
    """The higher seed's line first."""


@dataclass(frozen=True)
class Bracket:
    lines: tuple[int | None, ...]
    """The first round's lines, in bracket order: a player id, or None for a bye."""
    winners: tuple[tuple[int | None, ...], ...]
    """For each round, the winner of each of its matches (None: not decided yet)."""
    withdrawn: frozenset[int] = frozenset()

    @property
    def size(self) -> int:
        return len(self.lines)

    @property
    def rounds(self) -> int:
        return len(self.winners)

    @property
    def entrants(self) -> tuple[int, ...]:
        return tuple(player for player in self.lines if player is not None)

    def players(self, round: int, index: int) -> tuple[int | None, int | None]:
        """The two players of a match, as far as they are known."""
        if not 0 <= round < self.rounds or not 0 <= index < len(self.winners[round]):
            raise BracketError(f"no match {index + 1} in round {round + 1}")
        feeders = self.lines if round == 0 else self.winners[round - 1]
        return feeders[2 * index], feeders[2 * index + 1]

    def to_dict(self) -> dict[str, Any]:
        return {"lines": list(self.lines), "winners": [list(row) for row in self.winners],
                "withdrawn": sorted(self.withdrawn)}

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Bracket:
        return cls(tuple(document["lines"]), tuple(tuple(row) for row in document["winners"]),
                   frozenset(document.get("withdrawn", ())))


def bracket_size(entrants: int) -> int:
    """The smallest field size that holds ``entrants`` (byes fill the rest): never a bye against
    a bye."""
    if entrants < MIN_ENTRANTS:
        raise BracketError(f"a knockout needs at least {MIN_ENTRANTS} players, not {entrants}")
    for size in SIZES:
        if entrants <= size:
            return size
    raise BracketError(f"a knockout takes at most {SIZES[-1]} players, not {entrants}")


def seed_order(size: int) -> list[int]:
    """The seeds (1 = best) in bracket order: 1 meets ``size``, and the top two seeds are in
    different halves, the top four in different quarters, and so on."""
    order = [1]
    while len(order) < size:
        double = 2 * len(order)
        order = [seed for top in order for seed in (top, double + 1 - top)]
    return order


def new_bracket(ranked: Sequence[int]) -> Bracket:
    """The bracket of players ``ranked`` best first (ties already broken by the caller), with
    byes to the top seeds, won at once."""
    if len(set(ranked)) != len(ranked):
        raise BracketError("a player can enter a knockout only once")
    size = bracket_size(len(ranked))
    lines = tuple(ranked[seed - 1] if seed <= len(ranked) else None for seed in seed_order(size))
    rounds = size.bit_length() - 1
    bracket = Bracket(lines, tuple(tuple([None] * (size >> (round + 1))) for round in range(rounds)))
    return _walkovers(bracket)


def record_result(bracket: Bracket, round: int, index: int, winner: int) -> Bracket:
    """The bracket with ``winner`` through from match ``index`` of ``round`` (and any walkover
    that follows from it)."""
    if winner not in bracket.players(round, index):
        raise BracketError(f"player {winner} did not play match {index + 1} of round {round + 1}")
    decided = bracket.winners[round][index]
    if decided is not None:
        if decided == winner:
            return bracket
        raise BracketError(f"match {index + 1} of round {round + 1} was already won by another player")
    return _walkovers(_with_winner(bracket, round, index, winner))


def withdraw(bracket: Bracket, player: int) -> Bracket:
    """The bracket after ``player`` withdraws: each of their matches still to come is lost by
    walkover (one being played is ended by its result)."""
    if player not in bracket.entrants:
        raise BracketError(f"player {player} is not in this knockout")
    return _walkovers(replace(bracket, withdrawn=bracket.withdrawn | {player}))


def ready(bracket: Bracket) -> list[Pairing]:
    """The undecided matches whose two players are known, in order of round and index: the
    service starts each one not started yet."""
    found = []
    for round in range(bracket.rounds):
        for index, winner in enumerate(bracket.winners[round]):
            first, second = bracket.players(round, index)
            if winner is None and first is not None and second is not None:
                found.append(Pairing(round, index, (first, second)))
    return found


def champion(bracket: Bracket) -> int | None:
    return bracket.winners[-1][0]


def knocked_out(bracket: Bracket, player: int) -> bool:
    """Whether ``player`` has lost a match of the bracket (on the board, on time or by walkover):
    they are out, and a withdrawal has nothing left to give up."""
    return any(winner is not None and winner != player and player in bracket.players(round, index)
               for round, row in enumerate(bracket.winners) for index, winner in enumerate(row))


def reached(bracket: Bracket, player: int) -> int:
    """The last round (from 0) ``player`` is drawn in; -1 when they are not in the bracket."""
    return max((round for round in range(bracket.rounds) for index in range(len(bracket.winners[round]))
                if player in bracket.players(round, index)), default=-1)


def places(bracket: Bracket, player: int) -> tuple[int, int] | None:
    """The places ``player`` finishes in, shared by all who went out in the same round: (1, 1) for
    the champion, (2, 2) for the final's loser, (3, 4) for the semi-finals' …; None while they
    are still in (or not in the bracket)."""
    if champion(bracket) == player:
        return 1, 1
    if not knocked_out(bracket, player):
        return None
    out_in = bracket.rounds - 1 - reached(bracket, player)  # 0: the final
    return 2 ** out_in + 1, 2 ** (out_in + 1)


def next_match(bracket: Bracket, player: int) -> tuple[int, int | None] | None:
    """The round of ``player``'s next undecided match and their opponent in it (None: not known
    yet), for the round mails; None when no match is to come for them (out, or the champion)."""
    if knocked_out(bracket, player):
        return None
    for round, row in enumerate(bracket.winners):
        for index, winner in enumerate(row):
            pair = bracket.players(round, index)
            if winner is None and player in pair:
                return round, pair[1 - pair.index(player)]
    return None


def round_over(bracket: Bracket, round: int) -> bool:
    return all(winner is not None for winner in bracket.winners[round])


def current_round(bracket: Bracket) -> int:
    """The first round with a match still undecided (``rounds`` once the champion is known)."""
    return next((round for round in range(bracket.rounds) if not round_over(bracket, round)), bracket.rounds)


def _with_winner(bracket: Bracket, round: int, index: int, winner: int) -> Bracket:
    row = list(bracket.winners[round])
    row[index] = winner
    return replace(bracket, winners=(*bracket.winners[:round], tuple(row), *bracket.winners[round + 1:]))


def _walkovers(bracket: Bracket) -> Bracket:
    """Decide every match that needs no play: a player against a bye, or against a withdrawn
    player (of two withdrawn players the higher line goes on, to lose the next match)."""
    changed = True
    while changed:
        changed = False
        for round in range(bracket.rounds):
            for index, winner in enumerate(bracket.winners[round]):
                if winner is not None:
                    continue
                first, second = bracket.players(round, index)
                through = _walkover(bracket, round, first, second)
                if through is not None:
                    bracket = _with_winner(bracket, round, index, through)
                    changed = True
    return bracket


def _walkover(bracket: Bracket, round: int, first: int | None, second: int | None) -> int | None:
    if round == 0 and (first is None or second is None):
        return first if second is None else second  # a bye (never two: see bracket_size)
    if first is None or second is None:
        return None  # waits for the match before it
    if second in bracket.withdrawn:
        return first
    if first in bracket.withdrawn:
        return second
    return None


def bracket_rounds(bracket: Bracket, names: Mapping[int, str], bye: str = "bye",
                   withdrawn: str = "withdrawn") -> list[list[str]]:
    """The bracket as text: for each round a line per match, ``Anna – Ben: Anna`` once decided,
    ``Anna – ?`` while a player is not known yet, ``Anna – bye`` for a bye."""
    def name(player: int | None) -> str:
        if player is None:
            return "?"
        return names.get(player, "?") + (f" ({withdrawn})" if player in bracket.withdrawn else "")

    rounds = []
    for round in range(bracket.rounds):
        lines = []
        for index, winner in enumerate(bracket.winners[round]):
            first, second = bracket.players(round, index)
            if round == 0 and (first is None or second is None):
                lines.append(f"{name(first if second is None else second)} – {bye}")
            else:
                lines.append(f"{name(first)} – {name(second)}" + (f": {name(winner)}" if winner is not None else ""))
        rounds.append(lines)
    return rounds
