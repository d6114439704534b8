"""Legal plays for a roll, and validation of a stated play with a reason a player understands.

Points are always in the mover's own numbering: ``1..24``, ``25`` = the bar, ``0`` = off.

* ``Step = tuple[int, int]``: one checker moved ``(from_point, to_point)``.
* ``Play = tuple[Step, ...]``: the steps of one turn, in an order in which they can be played.
* ``legal_plays(position, dice)``: every distinct resulting position (still seen from the
  mover, the turn is not passed) with one natural play that reaches it; ``{}`` when nothing
  can be played.
* ``apply_step(position, step)`` / ``apply_play(position, play)``: move checkers, hitting
  single opponent checkers on the way; they check physics only (a checker on the from-point,
  no opponent point on the landing point), not the rules of the turn.
* ``check_play(position, dice, steps)``: the resulting position when the stated steps reach a
  legal position, else ``IllegalPlay``.  Steps may be written in any order and may combine
  dice for one checker (``24/13`` with 6-5); where a combined step may or may not hit on its
  way, the play that hits less is taken, since the hit was not written.  When no order works,
  the reason is that of the step that failed after the most dice were played, the first in
  the player's order (a blocked entry beats "bar first" on another step); when all steps can
  be played but the play is not legal, it is ``larger_die_required`` or
  ``dice_not_fully_used``.

``IllegalPlay.code`` is a stable identifier; ``details`` carries the values a message needs
(points in the mover's numbering, ``25`` = bar, ``0`` = off; ``from``/``to`` are the step as
the player wrote it, so a combined step keeps its ends; ``dice`` as text like ``"6-5"``):

============================ ===================================================================
code                         meaning, details
============================ ===================================================================
``no_move_possible``         a play was stated, but the roll cannot be played at all
                             (``dice``)
``no_such_point``            a point outside 0..25 (``from``, ``to``)
``wrong_direction``          the step does not move towards home, e.g. ``8/13`` (``from``,
                             ``to``)
``too_many_steps``           more checker moves than the dice allow (``steps``: the number
                             stated, ``dice``)
``beyond_dice``              the stated steps go further than the dice reach, e.g. ``24/20 8/7``
                             with 3-1 (``dice``)
``bar_first``                a checker is on the bar and must enter before any other checker
                             moves (``from``, ``to``)
``no_checker``               no checker of the mover on that point; for the bar: none on the
                             bar (``from``, ``to``, ``point``)
``blocked``                  the landing point, or the intermediate point of a combined step,
                             holds two or more opponent checkers (``from``, ``to``, ``point``)
``bearing_off_not_allowed``  bearing off while checkers are still outside the home board or
                             on the bar (``from``, ``to``)
``wrong_die``                no unused die (or sum of unused dice) gives that distance; also a
                             bear-off with a larger die while a checker stands on a higher
                             point (``from``, ``to``, ``dice``: the unused dice,
                             ``distance``: how far the step goes)
``dice_not_fully_used``      the steps are fine, but a play using more dice exists (``used``,
                             ``possible``: numbers of dice)
``larger_die_required``      only one die can be played and either could be: it must be the
                             larger one (``die``: the larger, ``smaller``)
============================ ===================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pbem.rules.position import BAR, Position, unchecked_position

Step = tuple[int, int]
Play = tuple[Step, ...]

OFF = 0
BAR_POINT = BAR + 1
"""The bar as a point number in steps (25)."""

_WEIGHT = tuple(1 << (4 * index) for index in range(25))
"""Weight of one checker per index in an integer key of a side (4 bits per point, max 15)."""
_HITS_SHIFT = 100
"""Hit points are stored above the 25 × 4 bits of the mover's checkers in a search key."""

_MESSAGES: dict[str, str] = {
    "no_move_possible": "No move is possible with {dice}; there is nothing to play.",
    "no_such_point": "{step}: there is no such point.",
    "wrong_direction": "{step}: checkers move towards your home board (to lower points).",
    "too_many_steps": "{steps} checker moves are more than the dice {dice} allow.",
    "beyond_dice": "Your move goes further than the dice {dice} allow.",
    "bar_first": "{step}: you have a checker on the bar; it must enter first.",
    "no_checker": "{step}: you have no checker on {point}.",
    "blocked": "{step}: {point} is blocked by two or more opposing checkers.",
    "bearing_off_not_allowed": (
        "{step}: you may bear off only when all your checkers are in your home board."
    ),
    "wrong_die": "{step} is a move of {distance}, but you have {dice} left to play.",
    "dice_not_fully_used": "You must use more dice: {possible} can be played, you played {used}.",
    "larger_die_required": (
        "Only one die can be played, so it must be the larger one ({die}), not the {smaller}."
    ),
}


class IllegalPlay(ValueError):
    """A stated play the rules refuse; ``code`` and ``details`` let templates word the reason."""

    def __init__(self, code: str, details: dict[str, int | str]) -> None:
        self.code = code
        self.details = details
        super().__init__(_english(code, details))

    def __reduce__(self) -> tuple[type[IllegalPlay], tuple[str, dict[str, int | str]]]:
        return IllegalPlay, (self.code, self.details)


def _english(code: str, details: dict[str, int | str]) -> str:
    """A plain English reason, for logs and as a fallback text."""
    words = dict(details)
    if "from" in details and "to" in details:
        words["step"] = f"{_point_name(details['from'])}/{_point_name(details['to'])}"
    if "point" in details:
        words["point"] = "the bar" if details["point"] == BAR_POINT else f"point {details['point']}"
    return _MESSAGES[code].format(**words)


def _point_name(point: int | str) -> str:
    return "bar" if point == BAR_POINT else "off" if point == OFF else str(point)


def _dice_text(dice: Sequence[int]) -> str:
    return "-".join(str(die) for die in dice)


# --- applying steps ---------------------------------------------------------------------------


def apply_step(position: Position, step: Step) -> Position:
    """Move one checker; a single opponent checker on the landing point goes to their bar.

    Raises ValueError when the step is physically impossible: points out of range, a
    backwards step, no checker on the from-point, or two or more opponent checkers on the
    landing point.  The rules of the turn (dice, bar first, bearing off) are not checked here.
    """
    origin, target = step
    if not (OFF <= target < origin <= BAR_POINT):
        raise ValueError(f"not a forward step between points: {step!r}")
    mover, opponent = list(position.mover), list(position.opponent)
    if not mover[origin - 1]:
        raise ValueError(f"no checker on point {origin}")
    mover[origin - 1] -= 1
    if target != OFF:
        if opponent[24 - target] >= 2:
            raise ValueError(f"point {target} is held by the opponent")
        if opponent[24 - target] == 1:
            opponent[24 - target] = 0
            opponent[BAR] += 1
        mover[target - 1] += 1
    return unchecked_position(tuple(mover), tuple(opponent))


def apply_play(position: Position, play: Sequence[Step]) -> Position:
    """Apply steps in order (see ``apply_step``)."""
    for step in play:
        position = apply_step(position, step)
    return position


# --- legal plays ------------------------------------------------------------------------------


def _single_steps(mover: list[int], opponent: list[int], die: int, top: int) -> list[Step]:
    """Every legal step with one die, from points at or below ``top`` (highest first)."""
    if mover[BAR]:
        return [(BAR_POINT, BAR_POINT - die)] if opponent[die - 1] < 2 else []
    steps = []
    home = not any(mover[6:BAR])
    for origin in range(min(top, 24), 0, -1):
        if not mover[origin - 1]:
            continue
        target = origin - die
        if target > 0:
            if opponent[24 - target] < 2:
                steps.append((origin, target))
        elif home and (target == 0 or not any(mover[origin:6])):
            steps.append((origin, OFF))
    return steps


LEGAL_PLAYS_KEPT = 64
"""How many positions' legal plays are kept: a mail asks for the same ones several times (the
move checked and played, the roll's check, the automove's, the example in the letter)."""


def legal_plays(position: Position, dice: tuple[int, int]) -> dict[Position, Play]:
    """Every distinct position the roll can reach, each with one play that reaches it (a new
    dict each call, of kept plays)."""
    return dict(_legal_plays(position, (dice[0], dice[1])))


@lru_cache(maxsize=LEGAL_PLAYS_KEPT)
def _legal_plays(position: Position, dice: tuple[int, int]) -> dict[Position, Play]:
    """Every distinct position the roll can reach, each with one play that reaches it.

    The search plays the dice in both orders (doubles: four times, each step from a point no
    higher than the previous one, which reaches every position once), keeps the plays that use
    the most dice and, when only one die of a non-double can be used, those with the larger die.
    Plays are keyed during the search by integers, so duplicates cost no tuple building.
    """
    high, low = max(dice), min(dice)
    orders = [(high,) * 4] if high == low else [(high, low), (low, high)]
    doubles = high == low
    mover, opponent = list(position.mover), list(position.opponent)
    # key -> [dice used, first die, steps, mover, opponent]
    found: dict[int, list[Any]] = {}
    steps: list[Step] = []
    best = 0

    def record(key: int, used: int, first_die: int) -> None:
        nonlocal best
        if used < best:
            return
        best = used
        seen = found.get(key)
        if seen is None or seen[0] < used:
            found[key] = [used, first_die, tuple(steps), tuple(mover), tuple(opponent)]

    def extend(order: tuple[int, ...], index: int, top: int, key: int, hits: int) -> None:
        die = order[index]
        candidates = _single_steps(mover, opponent, die, top)
        if not candidates:
            record(key | hits << _HITS_SHIFT, index, order[0])
            return
        last = index + 1 == len(order)
        for origin, target in candidates:
            next_key = key - _WEIGHT[origin - 1]
            next_hits = hits
            hit = target != OFF and opponent[24 - target] == 1
            if target != OFF:
                next_key += _WEIGHT[target - 1]
                if hit:
                    next_hits |= 1 << target
            if last:
                full_key = next_key | next_hits << _HITS_SHIFT
                seen = found.get(full_key)
                if seen is not None and seen[0] > index:
                    continue
            _make(mover, opponent, origin, target, hit)
            steps.append((origin, target))
            if last:
                record(full_key, index + 1, order[0])
            else:
                extend(order, index + 1, origin if doubles else BAR_POINT, next_key, next_hits)
            steps.pop()
            _unmake(mover, opponent, origin, target, hit)

    start_key = sum(count * weight for count, weight in zip(mover, _WEIGHT))
    for order in orders:
        extend(order, 0, BAR_POINT, start_key, 0)
    if best == 0:
        return {}
    kept = [entry for entry in found.values() if entry[0] == best]
    if best == 1 and not doubles and any(entry[1] == high for entry in kept):
        kept = [entry for entry in kept if entry[1] == high]
    return {unchecked_position(entry[3], entry[4]): _natural_order(entry[2]) for entry in kept}


@dataclass(frozen=True, slots=True)
class PlayNode:
    """A board reached by the first steps of a legal play: the steps that can follow, each as
    (step, whether it hits, the index of the node it leads to); ``complete`` when the steps so
    far are a whole legal play."""

    complete: bool
    steps: tuple[tuple[Step, bool, int], ...]


def play_graph(position: Position, dice: tuple[int, int]) -> list[PlayNode]:
    """Every order in which the legal plays of ``dice`` can be made one die at a time, as a graph
    of the boards on the way (node 0: ``position``), for a board a player moves checker by
    checker; ``[]`` when nothing can be played.

    Only steps that still lead to a legal play are offered, so that a player can never end up
    on a board that is not one of ``legal_plays``.  Where one step could be made with either
    die (a bear-off), the smaller die that still leads to a legal play is used.
    """
    legal = legal_plays(position, dice)
    if not legal:
        return []
    length = len(next(iter(legal.values())))
    all_dice = (dice[0],) * 4 if dice[0] == dice[1] else tuple(sorted(dice))
    nodes: list[PlayNode] = []
    index_of: dict[tuple[Position, tuple[int, ...]], int | None] = {}

    def visit(board: Position, left: tuple[int, ...]) -> int | None:
        key = (board, left)
        if key in index_of:
            return index_of[key]
        index_of[key] = None  # a board is never reached again on its own path (checkers only move on)
        if len(all_dice) - len(left) == length:
            complete = board in legal
            edges: list[tuple[Step, bool, int]] = []
        else:
            complete, edges = False, []
            seen: set[Step] = set()
            mover, opponent = list(board.mover), list(board.opponent)
            for die in sorted(set(left)):
                rest = list(left)
                rest.remove(die)
                for step in _single_steps(mover, opponent, die, BAR_POINT):
                    if step in seen:
                        continue
                    child = visit(apply_step(board, step), tuple(rest))
                    if child is not None:
                        seen.add(step)
                        edges.append((step, step[1] != OFF and opponent[24 - step[1]] == 1, child))
        if not complete and not edges:
            return None
        nodes.append(PlayNode(complete, tuple(edges)))
        index_of[key] = len(nodes) - 1
        return index_of[key]

    start = visit(position, all_dice)
    assert start is not None, "a legal play exists, so its first step leads to it"
    order = _breadth_first(nodes, start)
    return [PlayNode(nodes[old].complete, tuple((step, hit, order[child]) for step, hit, child in nodes[old].steps))
            for old in sorted(order, key=order.__getitem__)]


def _breadth_first(nodes: list[PlayNode], start: int) -> dict[int, int]:
    """New indices for the nodes, the start first and each node after the one leading to it."""
    order = {start: 0}
    queue = [start]
    for current in queue:
        for _, _, child in nodes[current].steps:
            if child not in order:
                order[child] = len(order)
                queue.append(child)
    return order


def _make(mover: list[int], opponent: list[int], origin: int, target: int, hit: bool) -> None:
    mover[origin - 1] -= 1
    if target != OFF:
        mover[target - 1] += 1
        if hit:
            opponent[24 - target] = 0
            opponent[BAR] += 1


def _unmake(mover: list[int], opponent: list[int], origin: int, target: int, hit: bool) -> None:
    mover[origin - 1] += 1
    if target != OFF:
        mover[target - 1] -= 1
        if hit:
            opponent[24 - target] = 1
            opponent[BAR] -= 1


def _natural_order(play: Play) -> Play:
    """Steps from the back first, as players write them; the play stays playable in that order.

    Doubles come out of the search in that order already; of two steps the higher goes first
    (bar entries before other steps, moves outside the home board before bear-offs, a checker's
    first step before its second).
    """
    if len(play) == 2 and play[0] < play[1]:
        return (play[1], play[0])
    return play


# --- validating a stated play -----------------------------------------------------------------


def check_play(position: Position, dice: tuple[int, int], steps: Sequence[Step]) -> Position:
    """The position the stated play reaches, when it is a legal play of ``dice``.

    Steps may come in any order and may combine several dice for one checker (``24/13`` for a
    6-5: either intermediate point is tried).  When a combined step can pass over an opponent
    blot or not, the play that hits fewer checkers is chosen, as the hit was not written.
    Raises IllegalPlay with the most specific reason otherwise (see the module docstring).
    """
    plays = legal_plays(position, dice)
    stated = tuple(steps)
    if not plays:
        if stated:
            raise IllegalPlay("no_move_possible", {"dice": _dice_text(dice)})
        return position
    possible = len(next(iter(plays.values())))
    if not stated:
        raise IllegalPlay("dice_not_fully_used", {"used": 0, "possible": possible})
    pool = (dice[0],) * 4 if dice[0] == dice[1] else tuple(sorted(dice, reverse=True))
    if len(stated) > len(pool):
        raise IllegalPlay("too_many_steps", {"steps": len(stated), "dice": _dice_text(dice)})
    for origin, target in stated:
        if not (0 <= target <= BAR_POINT and 0 <= origin <= BAR_POINT):
            raise IllegalPlay("no_such_point", {"from": origin, "to": target})
        if target >= origin:
            raise IllegalPlay("wrong_direction", {"from": origin, "to": target})

    search = _StatedPlaySearch(dice, len(stated))
    search.run(position, tuple((origin, origin, target) for origin, target in stated), pool, 0)
    legal = [reached for reached in search.reached if reached in plays]
    if legal:
        return min(legal, key=lambda reached: reached.opponent[BAR])
    if search.reached:
        used = max(search.reached.values())
        if used == possible == 1 and dice[0] != dice[1]:
            raise IllegalPlay("larger_die_required", {"die": max(dice), "smaller": min(dice)})
        raise IllegalPlay("dice_not_fully_used", {"used": used, "possible": possible})
    assert search.failure is not None
    raise search.failure


Pending = tuple[tuple[int, int, int], ...]
"""Stated steps not yet finished: (stated from-point, current point of the checker, to-point)."""


class _StatedPlaySearch:
    """Tries every order of the stated steps and every die assignment (splitting combined steps).

    Collects the positions reached with all steps played (with the number of dice used), and
    keeps as the reason the failure that came furthest, first in the order the player wrote.
    """

    def __init__(self, dice: tuple[int, int], stated: int) -> None:
        self.reached: dict[Position, int] = {}
        self.failure: IllegalPlay | None = None
        self._failure_weight = -1
        self._dice = dice
        self._stated = stated
        self._visited: set[tuple[Position, Pending, tuple[int, ...]]] = set()

    def run(self, position: Position, pending: Pending, dice: tuple[int, ...], used: int) -> None:
        state = (position, pending, dice)
        if state in self._visited:
            return
        self._visited.add(state)
        if not pending:
            self.reached[position] = max(used, self.reached.get(position, 0))
        elif not dice:
            self._fail(used, "beyond_dice", {"dice": _dice_text(self._dice)})
        else:
            for index, item in enumerate(pending):
                if pending.index(item) != index:
                    continue  # the same step written twice: trying the first is enough
                for step, rest, rest_pending in self._first_legs(position, pending, index, dice, used):
                    self.run(apply_step(position, step), rest_pending, rest, used + 1)

    def _fail(self, depth: int, code: str, details: dict[str, int | str]) -> None:
        # At equal depth a step's own fault beats "bar first" on another step: the entry the
        # player wrote is what went wrong.
        weight = 2 * depth + (code != "bar_first")
        if weight > self._failure_weight:
            self._failure_weight = weight
            self.failure = IllegalPlay(code, details)

    def _first_legs(
        self, position: Position, pending: Pending, index: int, dice: tuple[int, ...], used: int
    ) -> list[tuple[Step, tuple[int, ...], Pending]]:
        """(step, unused dice, pending steps) for each die that can start pending step ``index``."""
        stated_from, origin, target = pending[index]
        mover, opponent = position.mover, position.opponent

        def fail(code: str, **extra: int | str) -> None:
            self._fail(used, code, {"from": stated_from, "to": target, **extra})

        if mover[BAR] and origin != BAR_POINT:
            fail("bar_first")
            return []
        if not mover[origin - 1]:
            fail("no_checker", point=origin)
            return []
        if not _reachable(origin - target, target == OFF, dice):
            fail("wrong_die", dice=_dice_text(dice), distance=origin - target)
            return []
        legs = []
        for die in sorted(set(dice), reverse=True):
            rest = list(dice)
            rest.remove(die)
            landing = origin - die
            finished = landing == target or (target == OFF and landing < 0)
            if not finished and (landing < 1 or not _reachable(landing - target, target == OFF, rest)):
                continue
            if landing > 0 and opponent[24 - landing] >= 2:
                fail("blocked", point=landing)
            elif landing <= 0 and any(mover[6:]):
                fail("bearing_off_not_allowed")
            elif landing < 0 and any(mover[origin:6]):
                fail("wrong_die", dice=_dice_text(dice), distance=origin - target)
            else:
                rest_pending = (
                    pending[:index] + pending[index + 1 :]
                    if finished
                    else pending[:index] + ((stated_from, landing, target),) + pending[index + 1 :]
                )
                legs.append(((origin, max(landing, OFF)), tuple(rest), rest_pending))
        return legs


def _reachable(distance: int, bearing_off: bool, dice: Sequence[int]) -> bool:
    """Whether some of the dice move a checker exactly ``distance`` (bearing off: at least)."""
    if bearing_off:
        return sum(dice) >= distance
    sums = {0}
    for die in dice:
        sums |= {total + die for total in sums}
    return distance in sums
