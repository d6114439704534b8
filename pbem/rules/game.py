"""One game of backgammon as an immutable state machine: rolls, plays, cube, resignation, draw.

Every transition is a function ``f(game, seat, ...) -> Game`` that validates and returns a new
:class:`Game`, or raises :class:`RuleError` (or :class:`pbem.rules.moves.IllegalPlay` for a
wrong move).  Nothing here rolls dice: the caller passes dice from a secure generator, so the
rules stay pure and every test is deterministic.

Seats are 0 (the player who invited, gnubg's player 0) and 1.  ``Game.seat`` is the dice owner
(gnubg's ``fMove``) and ``Game.board`` is always seen from that seat, also while a double it
made awaits an answer: exactly the position the Position ID is computed from (SPEC section 4).
``Game.to_act`` is the seat that must act next.

Phases::

    new_game --> TO_MOVE --play--> ROLL_OR_DOUBLE --double--> DOUBLE_OFFERED --take--> TO_ROLL
                    ^                   | or TO_ROLL            |  beaver: the doubler answers
                    +-------roll--------+                       +--drop--> OVER

``TO_ROLL`` means the player on turn cannot double: the service rolls for them at once.
A roll with no legal play is recorded as an empty play and passes the turn at once
(:attr:`Game.turn_was_passed`).  The game is ``OVER`` after the last checker is borne off,
a drop, a resignation, a timeout or a draw; ``Game.result`` tells how.

RuleError codes (the mails word them; ``details`` holds the values named):

``game_over``             the game has already ended.
``not_your_turn``         another player must act now (``details["to_act"]``).
``already_rolled``        a double or roll after the dice were rolled.
``roll_first``            a play before the dice were rolled.
``double_pending``        a roll or play while a double awaits an answer.
``no_double_pending``     take, drop or beaver with no double offered.
``cube_not_yours``        a double while the opponent owns the cube.
``crawford_game``         a double in the Crawford game.
``cube_at_cap``           a double or beaver above the cube cap (``details["cap"]``).
``dead_cube``             a double that cannot change anything: the doubler already wins the
                          match by winning this game (``details["cube"]``).
``beaver_not_allowed``    a beaver outside money play with beavers enabled, or of a beaver.
``invalid_dice``          dice that are not two numbers 1-6 (a caller bug, not a player's).
``draw_already_offered``  a second ``$remis`` by the same player before the answer.
``no_draw_offered``       declining a draw that the other player has not offered.
``no_resignation_offered`` accepting or rejecting a resignation the other player has not offered.
``nothing_to_answer``     ``accept``/``reject`` in a game while neither a double nor a
                          resignation waits for an answer (the service's word for both).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from pbem.rules import cube as cube_rules
from pbem.rules import moves
from pbem.rules.gnubg_ids import GameState, MatchIdState
from pbem.rules.position import CHECKERS, Position, Side
from pbem.rules.scoring import (
    Ending,
    Format,
    MatchRules,
    Result,
    Score,
    WinKind,
    is_crawford_game,
)

Dice = tuple[int, int]


class RuleError(Exception):
    """An action the rules do not allow now; ``code`` names it (see the module docstring)."""

    def __init__(self, code: str, **details: Any) -> None:
        super().__init__(code, details)
        self.code = code
        self.details = details

    def __str__(self) -> str:
        return f"{self.code} {self.details}" if self.details else self.code


class Phase(StrEnum):
    """Where the game stands; see the diagram in the module docstring."""

    TO_ROLL = "to_roll"
    ROLL_OR_DOUBLE = "roll_or_double"
    TO_MOVE = "to_move"
    DOUBLE_OFFERED = "double_offered"
    OVER = "over"


class ActionKind(StrEnum):
    """What an entry of the game record did."""

    ROLL = "roll"
    MOVE = "move"
    DOUBLE = "double"
    TAKE = "take"
    DROP = "drop"
    BEAVER = "beaver"
    RESIGN = "resign"
    TIMEOUT = "timeout"
    DRAW_OFFER = "draw_offer"
    DRAW = "draw"


@dataclass(frozen=True, slots=True)
class Action:
    """One entry of the game record.

    ``dice`` for a roll (the opening roll is recorded as the starter's roll, starter's die
    first), ``play`` for a move (the steps die by die, as the move generator plays them; empty
    when the roll could not be played), ``cube`` for a double or beaver (the value offered).
    """

    kind: ActionKind
    seat: int
    dice: Dice | None = None
    play: moves.Play | None = None
    cube: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind.value, "seat": self.seat}
        if self.dice is not None:
            data["dice"] = list(self.dice)
        if self.play is not None:
            data["play"] = [list(step) for step in self.play]
        if self.cube is not None:
            data["cube"] = self.cube
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Action:
        dice = data.get("dice")
        play = data.get("play")
        return cls(
            kind=ActionKind(data["kind"]),
            seat=data["seat"],
            dice=None if dice is None else (dice[0], dice[1]),
            play=None if play is None else tuple((step[0], step[1]) for step in play),
            cube=data.get("cube"),
        )


@dataclass(frozen=True, slots=True)
class Game:
    """The whole state of one game; see the module docstring for the meaning of the fields.

    ``score`` is the score before this game (for the Match ID and the dead cube), ``cube`` the
    value in force (a pending offer is twice that), ``beavered`` marks a pending offer that is a
    beaver, which the dice owner must answer.
    """

    rules: MatchRules
    score: tuple[int, int]
    crawford: bool
    board: Position
    seat: int
    phase: Phase
    dice: Dice | None = None
    cube: int = 1
    cube_owner: int | None = None
    beavered: bool = False
    draw_offer: int | None = None
    resign_offer: tuple[int, WinKind] | None = None
    """(the seat offering to resign, the result it offers), until answered or withdrawn."""
    result: Result | None = None
    record: tuple[Action, ...] = ()

    @property
    def turn(self) -> int:
        """Grows with every action, so a reply to an older mail can be recognised."""
        return len(self.record)

    @property
    def to_act(self) -> int | None:
        """The seat that must act next; None when the game is over."""
        if self.phase is Phase.OVER:
            return None
        if self.phase is Phase.DOUBLE_OFFERED and not self.beavered:
            return 1 - self.seat
        return self.seat

    @property
    def turn_was_passed(self) -> bool:
        """True when the last roll could not be played and the turn passed by itself."""
        return bool(self.record) and self.record[-1].kind is ActionKind.MOVE and not self.record[-1].play

    def to_dict(self) -> dict[str, Any]:
        """A plain JSON-able dict for the database."""
        return {
            "rules": self.rules.to_dict(),
            "score": list(self.score),
            "crawford": self.crawford,
            "board": {"mover": list(self.board.mover), "opponent": list(self.board.opponent)},
            "seat": self.seat,
            "phase": self.phase.value,
            "dice": None if self.dice is None else list(self.dice),
            "cube": self.cube,
            "cube_owner": self.cube_owner,
            "beavered": self.beavered,
            "draw_offer": self.draw_offer,
            "resign_offer": None if self.resign_offer is None else [self.resign_offer[0], int(self.resign_offer[1])],
            "result": None if self.result is None else self.result.to_dict(),
            "record": [action.to_dict() for action in self.record],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Game:
        board = data["board"]
        dice = data["dice"]
        result = data["result"]
        resign_offer = data.get("resign_offer")  # absent from games stored before resignation levels
        return cls(
            rules=MatchRules.from_dict(data["rules"]),
            score=(data["score"][0], data["score"][1]),
            crawford=data["crawford"],
            board=Position(tuple(board["mover"]), tuple(board["opponent"])),
            seat=data["seat"],
            phase=Phase(data["phase"]),
            dice=None if dice is None else (dice[0], dice[1]),
            cube=data["cube"],
            cube_owner=data["cube_owner"],
            beavered=data["beavered"],
            draw_offer=data["draw_offer"],
            resign_offer=None if resign_offer is None else (resign_offer[0], WinKind(resign_offer[1])),
            result=None if result is None else Result.from_dict(result),
            record=tuple(Action.from_dict(action) for action in data["record"]),
        )


def new_game(score: Score, opening: Dice) -> Game | None:
    """The game after the opening roll: ``opening`` is (seat 0's die, seat 1's die).

    Returns None on a tie: the caller rolls both dice again.  The higher die starts and plays
    both dice at once, so the game begins in ``TO_MOVE``.
    """
    _check_dice(opening)
    if opening[0] == opening[1]:
        return None
    starter = 0 if opening[0] > opening[1] else 1
    dice = (opening[starter], opening[1 - starter])
    return Game(
        rules=score.rules,
        score=score.points,
        crawford=is_crawford_game(score),
        board=Position.start(),
        seat=starter,
        phase=Phase.TO_MOVE,
        dice=dice,
        record=(Action(ActionKind.ROLL, starter, dice=dice),),
    )


def double_refusal(game: Game, seat: int) -> str | None:
    """Why ``seat`` may not double now (a RuleError code), or None when it may."""
    if game.phase is Phase.OVER:
        return "game_over"
    if game.to_act != seat:
        return "not_your_turn"
    if game.phase is Phase.DOUBLE_OFFERED:
        return "double_pending"
    if game.phase is Phase.TO_MOVE:
        return "already_rolled"
    return cube_rules.double_refusal(game.rules, game.score, game.cube, game.cube_owner, seat, game.crawford)


def can_double(game: Game) -> bool:
    """True when the player on turn may double now (the service then asks "roll or double")."""
    return game.to_act is not None and double_refusal(game, game.to_act) is None


def roll(game: Game, seat: int, dice: Dice) -> Game:
    """``seat`` rolls ``dice``; with no legal play the roll is recorded and the turn passes."""
    _check_dice(dice)
    _require_no_double(game)
    _require_turn(game, seat)
    if game.phase is Phase.TO_MOVE:
        raise RuleError("already_rolled")
    rolled = _act(game, Action(ActionKind.ROLL, seat, dice=dice), phase=Phase.TO_MOVE, dice=dice)
    if moves.legal_plays(game.board, dice):
        return rolled
    return _pass_turn(_act(rolled, Action(ActionKind.MOVE, seat, play=())), rolled.board)


def play(game: Game, seat: int, steps: moves.Play) -> Game:
    """``seat`` plays the rolled dice; raises ``IllegalPlay`` with the reason when it is wrong.

    The record keeps the generator's die-by-die play for the resulting position, whatever
    order or intermediate points the player wrote.
    """
    _require_no_double(game)
    _require_turn(game, seat)
    if game.phase is not Phase.TO_MOVE or game.dice is None:
        raise RuleError("roll_first")
    after = moves.check_play(game.board, game.dice, steps)
    canonical = moves.legal_plays(game.board, game.dice).get(after, tuple(steps))
    played = _act(game, Action(ActionKind.MOVE, seat, play=canonical), board=after)
    if after.mover_off == CHECKERS:
        kind = _win_kind(loser=after.opponent)
        return _finish(played, seat, kind, Ending.PLAYED)
    return _pass_turn(played, after)


def double(game: Game, seat: int) -> Game:
    """``seat`` offers the cube at twice its value, before rolling."""
    refusal = double_refusal(game, seat)
    if refusal is not None:
        raise RuleError(refusal, **_refusal_details(game, refusal))
    offered = game.cube * 2
    return _act(game, Action(ActionKind.DOUBLE, seat, cube=offered), phase=Phase.DOUBLE_OFFERED)


def take(game: Game, seat: int) -> Game:
    """``seat`` accepts the pending double (or beaver); the cube goes to the non-roller."""
    _require_answer(game, seat)
    return _act(
        game,
        Action(ActionKind.TAKE, seat),
        phase=Phase.TO_ROLL,
        cube=game.cube * 2,
        cube_owner=1 - game.seat,
        beavered=False,
    )


def drop(game: Game, seat: int) -> Game:
    """``seat`` refuses the pending double (or beaver) and loses the value in force."""
    _require_answer(game, seat)
    dropped = _act(game, Action(ActionKind.DROP, seat))
    return _finish(dropped, 1 - seat, WinKind.SINGLE, Ending.DROPPED)


def beaver(game: Game, seat: int) -> Game:
    """``seat`` takes the double and at once redoubles, keeping the cube; the doubler answers."""
    _require_answer(game, seat)
    if game.beavered:
        raise RuleError("beaver_not_allowed")
    offered = game.cube * 2
    refusal = cube_rules.beaver_refusal(game.rules, offered)
    if refusal is not None:
        raise RuleError(refusal, **_refusal_details(game, refusal))
    return _act(
        game,
        Action(ActionKind.BEAVER, seat, cube=offered * 2),
        cube=offered,
        cube_owner=seat,
        beavered=True,
    )


def resign(game: Game, seat: int) -> Game:
    """``seat`` resigns ($quit): the opponent wins the most the board still allows, times the cube."""
    return _concede(game, seat, ActionKind.RESIGN, Ending.RESIGNED)


def offer_resignation(game: Game, seat: int, kind: WinKind) -> Game:
    """``seat`` offers to resign, giving the opponent a win of ``kind`` (``resign gammon``, as on
    FIBS); the opponent accepts or rejects it, and any action withdraws it."""
    _require_playing(game)
    return replace(game, resign_offer=(seat, kind))


def accept_resignation(game: Game, seat: int) -> Game:
    """``seat`` accepts the resignation the other seat offered: it wins what was offered."""
    offer = _offered_resignation(game, seat)
    return _finish(_act(game, Action(ActionKind.RESIGN, offer[0])), seat, offer[1], Ending.RESIGNATION_ACCEPTED)


def reject_resignation(game: Game, seat: int) -> Game:
    """``seat`` rejects the resignation the other seat offered: play goes on."""
    _offered_resignation(game, seat)
    return replace(game, resign_offer=None)


def _offered_resignation(game: Game, seat: int) -> tuple[int, WinKind]:
    _require_playing(game)
    if game.resign_offer is None or game.resign_offer[0] != 1 - seat:
        raise RuleError("no_resignation_offered")
    return game.resign_offer


def timeout(game: Game, seat: int) -> Game:
    """``seat`` ran out of time: scored as a resignation."""
    return _concede(game, seat, ActionKind.TIMEOUT, Ending.TIMEOUT)


def settle(game: Game, seat: int, value: float) -> Game:
    """``seat`` ran out of time in a game invited with ``settle``: the game is scored by ``value``,
    what the position is worth to the player on roll (``game.seat``) in points (the engine's
    cubeful equity times the cube), rounded to the nearest whole point, halves away from zero.
    Less than half a point either way is a draw."""
    _require_playing(game)
    points = math.floor(abs(value) + 0.5)
    settled = _act(game, Action(ActionKind.TIMEOUT, seat))
    winner = None if points == 0 else (game.seat if value > 0 else 1 - game.seat)
    result = Result(winner=winner, kind=None if winner is None else WinKind.SINGLE, cube=game.cube,
                    ending=Ending.SETTLED, points=points)
    return replace(settled, phase=Phase.OVER, dice=None, beavered=False, draw_offer=None, result=result)


def offer_draw(game: Game, seat: int) -> Game:
    """``seat`` offers a draw ($remis); the game is drawn when the other seat has offered one too."""
    _require_playing(game)
    if game.draw_offer == seat:
        raise RuleError("draw_already_offered")
    if game.draw_offer == 1 - seat:
        drawn = _act(game, Action(ActionKind.DRAW, seat))
        return replace(
            drawn,
            phase=Phase.OVER,
            dice=None,
            draw_offer=None,
            result=Result(winner=None, kind=None, cube=game.cube, ending=Ending.DRAWN, points=0),
        )
    return replace(game, draw_offer=seat, record=(*game.record, Action(ActionKind.DRAW_OFFER, seat)))


def decline_draw(game: Game, seat: int) -> Game:
    """``seat`` declines the draw the other seat offered: the offer lapses, nothing else changes."""
    _require_playing(game)
    if game.draw_offer != 1 - seat:
        raise RuleError("no_draw_offered")
    return replace(game, draw_offer=None)


def highest_possible_win(winner: Side, loser: Side) -> WinKind:
    """The most the winner could still win against ``loser`` with the board as it stands.

    A gammon while the loser has borne off nothing; a backgammon if moreover a loser's checker
    is on the bar or in the winner's home board, or could still be hit and sent back there
    (a winner's checker is still behind one of the loser's).
    """
    if sum(loser) < CHECKERS:
        return WinKind.SINGLE
    loser_behind = any(loser[18:]) or _in_contact(winner, loser)
    return WinKind.BACKGAMMON if loser_behind else WinKind.GAMMON


def match_id_state(game: Game) -> MatchIdState:
    """The gnubg Match ID fields of ``game``; encode ``game.board`` for the Position ID with it."""
    if game.result is None:
        state = GameState.PLAYING
    elif game.result.ending is Ending.DROPPED:
        state = GameState.DROPPED
    elif game.result.ending in (Ending.RESIGNED, Ending.RESIGNATION_ACCEPTED, Ending.TIMEOUT):
        state = GameState.RESIGNED
    else:
        state = GameState.OVER
    on_turn = game.to_act
    resignation = 0
    if game.resign_offer is not None and game.result is None and game.phase is not Phase.DOUBLE_OFFERED:
        # as gnubg writes an offer to resign: its value, and the turn with the player who answers it
        offerer, kind = game.resign_offer
        on_turn, resignation = 1 - offerer, int(kind)
    return MatchIdState(
        cube_value=game.cube,
        cube_owner=game.cube_owner,
        player_on_roll=game.seat,
        crawford=game.crawford,
        game_state=state,
        turn=game.seat if on_turn is None else on_turn,
        double_offered=game.phase is Phase.DOUBLE_OFFERED,
        resignation_offered=resignation,
        dice=game.dice or (0, 0),
        match_length=game.rules.length if game.rules.format is Format.MATCH else 0,
        score=game.score,
        jacoby=game.rules.jacoby,
    )


def _win_kind(loser: Side) -> WinKind:
    """The result of a game just borne off, from the loser's checkers."""
    if sum(loser) < CHECKERS:
        return WinKind.SINGLE
    return WinKind.BACKGAMMON if any(loser[18:]) else WinKind.GAMMON


def _in_contact(first: Side, second: Side) -> bool:
    """True while a checker of ``first`` has yet to pass one of ``second`` (hits still possible)."""
    rearmost_first = max((index for index, count in enumerate(first) if count), default=-1)
    rearmost_second = max((index for index, count in enumerate(second) if count), default=-1)
    # first's point i + 1 is second's point 24 - i: first's checker at index i is still behind
    # second's checker at index j while i + j >= 24 (the bar, index 24, is behind everything).
    return rearmost_first >= 0 and rearmost_second >= 0 and rearmost_first + rearmost_second >= 24


def _concede(game: Game, seat: int, kind: ActionKind, ending: Ending) -> Game:
    _require_playing(game)
    winner, loser = _sides_of(game, 1 - seat), _sides_of(game, seat)
    conceded = _act(game, Action(kind, seat))
    return _finish(conceded, 1 - seat, highest_possible_win(winner, loser), ending)


def _sides_of(game: Game, seat: int) -> Side:
    return game.board.mover if seat == game.seat else game.board.opponent


def _finish(game: Game, winner: int, kind: WinKind, ending: Ending) -> Game:
    points = game.cube if ending is Ending.DROPPED else cube_rules.points_won(game.rules, kind, game.cube)
    result = Result(winner=winner, kind=kind, cube=game.cube, ending=ending, points=points)
    return replace(game, phase=Phase.OVER, dice=None, beavered=False, draw_offer=None, resign_offer=None,
                   result=result)


def _pass_turn(game: Game, board: Position) -> Game:
    """The turn goes to the other seat, who may double or must roll."""
    seat = 1 - game.seat
    refusal = cube_rules.double_refusal(
        game.rules, game.score, game.cube, game.cube_owner, seat, game.crawford
    )
    phase = Phase.TO_ROLL if refusal else Phase.ROLL_OR_DOUBLE
    return replace(game, board=board.swap(), seat=seat, phase=phase, dice=None)


def _act(game: Game, action: Action, **changes: Any) -> Game:
    """Record ``action``; an action by the player who was offered a draw withdraws the offer,
    and any action withdraws an offer to resign."""
    if game.draw_offer is not None and game.draw_offer != action.seat:
        changes["draw_offer"] = None
    return replace(game, record=(*game.record, action), resign_offer=None, **changes)


def _require_playing(game: Game) -> None:
    if game.phase is Phase.OVER:
        raise RuleError("game_over")


def _require_no_double(game: Game) -> None:
    """Either player rolling or moving while a double awaits its answer hears about the double."""
    _require_playing(game)
    if game.phase is Phase.DOUBLE_OFFERED:
        raise RuleError("double_pending")


def _require_turn(game: Game, seat: int) -> None:
    _require_playing(game)
    if game.to_act != seat:
        raise RuleError("not_your_turn", to_act=game.to_act)


def _require_answer(game: Game, seat: int) -> None:
    _require_turn(game, seat)
    if game.phase is not Phase.DOUBLE_OFFERED:
        raise RuleError("no_double_pending")


def _refusal_details(game: Game, code: str) -> dict[str, Any]:
    if code == "cube_at_cap":
        return {"cap": game.rules.cube_cap}
    if code == "dead_cube":
        return {"cube": game.cube}
    if code == "not_your_turn":
        return {"to_act": game.to_act}
    return {}


def _check_dice(dice: Dice) -> None:
    if len(dice) != 2 or not all(isinstance(die, int) and 1 <= die <= 6 for die in dice):
        raise RuleError("invalid_dice", dice=dice)


def is_post_crawford(game: Game) -> bool:
    """A match game after the Crawford game with a player one point from the match (the trailer
    doubles at once: it cannot cost them the match)."""
    return game.rules.format is Format.MATCH and not game.crawford and game.rules.length - 1 in game.score
