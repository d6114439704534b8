"""The end-of-game review: each player's error rate, biggest mistakes and luck, judged by bgsage.

The game's record is replayed through the rules core, so every decision is judged on exactly
the position, dice and cube the player faced:

* a checker play with a choice loses the equity between the best play our rules allow and the
  one played;
* a cube decision (double or not, take, drop, beaver) loses the equity between bgsage's best
  action and the one taken; rolling without doubling counts as a decision only where it is
  close (doubling would cost less than :data:`CLOSE_CUBE`), as GNU Backgammon counts "close
  or actual cube decisions", and is looked at only where a double is thinkable (a winning
  chance of at least :data:`DOUBLING_WINDOW`, or post-Crawford), to keep the review quick;
* the luck of a roll is the equity of its best play minus the average over all 21 rolls
  (15 for the opening roll), so summed luck separates the dice from the decisions.

Equities are cubeful and per cube unit, from the deciding player's side; the figures are
millipoints (thousandths of a point), as GNU Backgammon and XG show them.  The error rate is
the equity lost per decision, the very figure gnubg calls "error rate mEMG" (the README states
how closely the two agree, and ``tests/test_assistant_review.py`` holds the review to it).  Everything in the
result is plain JSON, so it can travel in an event to the mail templates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pbem.assistant.engine import DOUBLING_WINDOW, CubeContext, Engine
from pbem.rules import game as rules
from pbem.rules.moves import Play, apply_play, legal_plays
from pbem.rules.notation import Colour, Numbering, format_play
from pbem.rules.position import Position

MISTAKES_SHOWN = 3
CLOSE_CUBE = 0.16
"""A roll without doubling counts as a cube decision where doubling would cost less than this
(GNU Backgammon's "close or actual cube decisions": less than a very bad error, 0.16)."""


@dataclass
class _Seat:
    decisions: int = 0
    lost: float = 0.0
    luck: float = 0.0
    mistakes: list[dict[str, Any]] = field(default_factory=list)


def review_game(engine: Engine, game: rules.Game) -> dict[str, Any]:
    """The review of a finished game: per seat ``decisions``, ``error_rate`` and ``luck``
    (millipoints; the rate per decision), and its biggest ``mistakes``, largest first.

    It costs seconds at 2 plies: the service leaves it to the daemon's review job
    (``pbem.service.jobs.review_job``), which stores it, and a match's totals are :func:`combine`
    of its games' stored reviews."""
    return _review(engine, game)


def _review(engine: Engine, game: rules.Game) -> dict[str, Any]:
    seats = (_Seat(), _Seat())
    state = _opening(game)
    assert state.dice is not None
    rolls = [(Position.start(), CubeContext.of(state, state.seat), state.dice, True)]
    rollers = [state.seat]
    numbers = [1]
    played: list[Position | None] = []
    plays: list[tuple[rules.Game, int, int, Play]] = []
    number = 1
    for action in game.record[1:]:
        kind, seat = action.kind, action.seat
        if kind is rules.ActionKind.ROLL:
            assert action.dice is not None
            if state.phase is rules.Phase.ROLL_OR_DOUBLE:
                _judge_cube(engine, state, seats[seat], number, "no_double")
            rolls.append((state.board, CubeContext.of(state, seat), action.dice, False))
            rollers.append(seat)
            numbers.append(number)
            state = rules.roll(state, seat, action.dice)
        elif kind is rules.ActionKind.MOVE:
            # a roll without a play has passed the turn already: the board stays as it was rolled on
            played.append(apply_play(state.board, action.play) if action.play else rolls[-1][0])
            if action.play:
                assert state.dice is not None
                if len(legal_plays(state.board, state.dice)) > 1:
                    plays.append((state, seat, number, action.play))
                state = rules.play(state, seat, action.play)
            number += 1
        elif kind is rules.ActionKind.DOUBLE:
            _judge_cube(engine, state, seats[seat], number, "double")
            state = rules.double(state, seat)
        elif kind in (rules.ActionKind.TAKE, rules.ActionKind.DROP, rules.ActionKind.BEAVER):
            if not state.beavered:
                _judge_cube(engine, state, seats[seat], number, kind.value)
            state = getattr(rules, kind.value)(state, seat)
    equities = engine.many_play_equities([(state.board, _rolled(state), CubeContext.of(state, state.seat))
                                          for state, _, _, _ in plays])
    for (state, seat, number, play), each in zip(plays, equities):
        _judge_play(state, each, seats[seat], number, play)
    played += [None] * (len(rolls) - len(played))  # the last roll, when the game ended before its play
    chances = []
    for seat, roll_number, (luck, chance) in zip(rollers, numbers, engine.luck_and_chances(rolls, played)):
        seats[seat].luck += luck
        if chance is not None:
            chances.append([roll_number, round(1000 * (chance if seat == 0 else 1 - chance))])
    return {
        "players": [
            {"decisions": each.decisions, "error_rate": round(1000 * each.lost / max(each.decisions, 1)),
             "lost": round(1000 * each.lost), "luck": round(1000 * each.luck)}
            for each in seats
        ],
        "mistakes": [
            sorted(each.mistakes, key=lambda mistake: -mistake["loss"])[:MISTAKES_SHOWN] for each in seats
        ],
        "chances": chances,
    }


def combine(reviews: list[dict[str, Any]]) -> dict[str, Any]:
    """The review of a whole match from those of its games: totals and the overall rate."""
    players = []
    for seat in (0, 1):
        decisions = sum(review["players"][seat]["decisions"] for review in reviews)
        lost = sum(review["players"][seat]["lost"] for review in reviews)
        players.append({"decisions": decisions, "error_rate": round(lost / max(decisions, 1)), "lost": lost,
                        "luck": sum(review["players"][seat]["luck"] for review in reviews)})
    return {"players": players, "games": len(reviews)}


def _opening(game: rules.Game) -> rules.Game:
    """The game right after its opening roll, before the starter's play."""
    first = game.record[0]
    return rules.Game(rules=game.rules, score=game.score, crawford=game.crawford, board=Position.start(),
                      seat=first.seat, phase=rules.Phase.TO_MOVE, dice=first.dice, record=(first,))


def _judge_play(state: rules.Game, equities: dict[Position, float], seat: _Seat, number: int, play: Play) -> None:
    """Judge a checker play with a choice, given the equity of every play our rules allow."""
    assert state.dice is not None
    best = max(equities, key=lambda after: equities[after])
    played = apply_play(state.board, play)
    loss = equities[best] - equities[played]
    seat.decisions += 1
    seat.lost += loss
    if loss >= 0.0005:
        seat.mistakes.append({
            "number": number, "dice": list(state.dice), "kind": "play", "loss": round(1000 * loss),
            "played": _texts(state.board, play, state.seat),
            "best": _texts(state.board, legal_plays(state.board, state.dice)[best], state.seat),
        })


def _judge_cube(engine: Engine, state: rules.Game, seat: _Seat, number: int, action: str) -> None:
    """Judge a cube action; the analysis is always from the doubler's side (``state.seat``).

    As GNU Backgammon counts them, a double, take, drop or beaver is always a decision, while
    rolling without doubling is one only where it is close: where doubling would have cost
    less than :data:`CLOSE_CUBE` (else the decision was too clear to count in the error rate).
    """
    if action == "no_double" and not _double_thinkable(engine, state):
        return
    cube = engine.cube_analysis(state.board, CubeContext.of(state, state.seat))
    doubled = min(cube.equity_dt, cube.equity_dp)
    if action in ("double", "no_double"):
        choices = {"double": doubled, "no_double": cube.equity_nd}
    else:  # the taker's side: what the doubler gets, negated
        take = -cube.equity_dt
        choices = {"take": take, "beaver": take, "drop": -cube.equity_dp}
    best = max(choices, key=lambda choice: choices[choice])
    loss = choices[best] - choices[action]
    if action == "no_double" and max(cube.equity_nd, doubled) - doubled >= CLOSE_CUBE:
        return
    seat.decisions += 1
    seat.lost += loss
    if loss >= 0.0005:
        seat.mistakes.append({"number": number, "kind": "cube", "loss": round(1000 * loss),
                              "played": action, "best": best})


def _double_thinkable(engine: Engine, state: rules.Game) -> bool:
    return rules.is_post_crawford(state) or engine.winning_chance(state.board) >= DOUBLING_WINDOW


def _texts(board: Position, play: Play, seat: int) -> dict[str, str]:
    colour = Colour.of_seat(seat)
    return {numbering.value: format_play(board, play, numbering, colour) for numbering in Numbering}


def _rolled(state: rules.Game) -> tuple[int, int]:
    """The dice of a game waiting for a play (it has rolled)."""
    assert state.dice is not None
    return state.dice
