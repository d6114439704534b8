"""The Assistant's cube decisions on textbook positions, each answer confirmed by GNU Backgammon.

The positions are chosen for answers a player can check by hand or knows from the books:

* last-roll positions (the roller bears off now or loses): the roller's chance is a count of
  rolls, the cubeful equities are exact (double/take is worth 2 x (2p - 1)); double when p is
  above 50%, take when the taker keeps at least 25%;
* the opening position: no double, and a double there is a beaver in money play;
* a blitz with a closed board and checkers on the bar: too good to double (play on for the
  gammon) in money play, but a double and a pass under the Jacoby rule, where an undoubled
  gammon counts single;
* post-Crawford, the trailer 2-away doubles at once and the leader has a free drop (4-2 in a
  5-point match either way); 3-away the double is optional and the leader takes; in the
  Crawford game nobody may double (our rules refuse it, so the Assistant is never asked);
* match play at a score, from the Assistant's own 5-point matches, where bgsage at the
  Assistant's 2 plies gets the cube wrong and the Assistant's cube search (one ply deeper)
  right: early doubles of the leader and the trailer, a redouble that gives the cube away at
  1-0, a double too good to make, a trailer's double at 0-2 that 2 plies misses, and a take at
  2-1 that 2 plies drops; and a double at 55% that only the gammons make right.

:func:`test_gnubg_agrees_with_the_textbook_answers` has gnubg (``cfevaluate`` at 2 plies) confirm
each expected answer; the other tests hold the Assistant to the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from gnubg_judge import cube_decisions, proper_action
from pbem.assistant import engine
from pbem.config import AssistantConfig
from pbem.rules import game as rules
from pbem.rules.gnubg_ids import position_id
from pbem.rules.position import Position
from pbem.rules.scoring import Format, MatchRules


def _side(points: dict) -> tuple[int, ...]:
    side = [0] * 25
    for point, count in points.items():
        side[(25 if point == "bar" else point) - 1] += count
    return tuple(side)


@dataclass(frozen=True)
class Case:
    name: str
    mover: dict
    opponent: dict
    double: bool | None
    """Should the player on roll double? None: optional (doubling and not doubling are equal)."""
    answer: str
    """What the opponent should answer to a double: take, drop or beaver."""
    rules: MatchRules = field(default_factory=MatchRules)
    score: tuple[int, int] = (0, 0)
    """(on roll, opponent) before this game, in a match."""
    cube: int = 1
    owner: int | None = None
    """None: centred; 0: the player on roll owns it."""

    @property
    def position(self) -> Position:
        return Position(_side(self.mover), _side(self.opponent))

    def game(self) -> rules.Game:
        return rules.Game(rules=self.rules, score=self.score, crawford=False, board=self.position, seat=0,
                          phase=rules.Phase.ROLL_OR_DOUBLE, cube=self.cube, cube_owner=self.owner)

    def for_gnubg(self) -> dict:
        match = self.rules.format is Format.MATCH
        return {"position_id": position_id(self.position), "cube": self.cube, "owner": self.owner,
                "length": self.rules.length if match else 0, "score": list(self.score),
                "jacoby": self.rules.jacoby, "beaver": self.rules.beaver}


MONEY = MatchRules(format=Format.MONEY, length=0)
BEAVER = MatchRules(format=Format.MONEY, length=0, beaver=True)
JACOBY = MatchRules(format=Format.MONEY, length=0, jacoby=True)
FIVE = MatchRules(format=Format.MATCH, length=5)
START = {6: 5, 8: 3, 13: 5, 24: 2}
SURE_TO_FINISH = {1: 1}
CLOSED_BOARD = {6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 8: 2}
ON_THE_BAR = {"bar": 3, 13: 5, 8: 4, 6: 3}

CASES = (
    # 29 of 36 rolls bear off checkers on the 4 and 1 points (all but 1-1, 1-2, 1-3, 2-3): 81%.
    Case("last roll 81%: double, pass", {4: 1, 1: 1}, SURE_TO_FINISH, True, "drop", MONEY),
    # 23 of 36 from the 5 and 1 points (any 5 or 6, or 2-2, 3-3, 4-4): 64%.
    Case("last roll 64%: double, take", {5: 1, 1: 1}, SURE_TO_FINISH, True, "take", MONEY),
    Case("last roll 64%, cube owned: redouble, take", {5: 1, 1: 1}, SURE_TO_FINISH, True, "take", MONEY,
         cube=2, owner=0),
    Case("last roll 81%, 5-point match: double, pass", {4: 1, 1: 1}, SURE_TO_FINISH, True, "drop", FIVE),
    # 6 of 36 from the 6 and 5 points (6-5, 6-6, 5-5, 4-4, 3-3): 17%.
    Case("last roll 17%: no double", {6: 1, 5: 1}, SURE_TO_FINISH, False, "take", MONEY),
    Case("last roll 17% with beavers: no double, beaver", {6: 1, 5: 1}, SURE_TO_FINISH, False, "beaver", BEAVER),
    Case("opening position: no double, take", START, START, False, "take", MONEY),
    Case("opening position with beavers: no double, beaver", START, START, False, "beaver", BEAVER),
    Case("blitz: too good to double", CLOSED_BOARD, ON_THE_BAR, False, "drop", MONEY),
    Case("blitz under Jacoby: double, pass", CLOSED_BOARD, ON_THE_BAR, True, "drop", JACOBY),
    Case("post-Crawford trailer 2-away: double, free drop", START, START, True, "drop", FIVE, score=(3, 4)),
    Case("post-Crawford trailer 3-away: optional double, take", START, START, None, "take", FIVE, score=(2, 4)),
    Case("1-0: too good to double, pass", {5: 2, 6: 3, 7: 2, 8: 3, 13: 2, 15: 1, 16: 2},
         {4: 3, 6: 3, 8: 2, 11: 2, 21: 3, 22: 1, 23: 1}, False, "drop", FIVE, score=(1, 0)),
    Case("1-0, cube owned at 2: no redouble, take", {1: 2, 2: 2, 3: 2, 4: 3, 5: 3, 6: 2, 19: 1},
         {1: 3, 3: 5, "bar": 1}, False, "take", FIVE, score=(1, 0), cube=2, owner=0),
    Case("0-2: no double, take", {2: 2, 3: 1, 4: 3, 6: 4, 8: 2, 9: 3},
         {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 1, 9: 1, 11: 1, 20: 2}, False, "take", FIVE, score=(0, 2)),
    Case("0-2: double, pass", {2: 4, 3: 4, 4: 3, 6: 3, 19: 1},
         {1: 2, 2: 2, 3: 2, 4: 2, 5: 3, 9: 1, 17: 1, 20: 1, 24: 1}, True, "drop", FIVE, score=(0, 2)),
    Case("2-1: double, take", {1: 2, 3: 2, 4: 1, 5: 2, 6: 2, 8: 2, 11: 1, 13: 2, 20: 1},
         {2: 2, 3: 2, 4: 1, 6: 4, 8: 1, 10: 2, 13: 2, 23: 1}, True, "take", FIVE, score=(2, 1)),
    Case("1-0: no double, take", {5: 2, 6: 4, 7: 1, 8: 3, 13: 3, 21: 2},
         {5: 2, 6: 3, 8: 2, 13: 3, 15: 1, 22: 2, 24: 2}, False, "take", FIVE, score=(1, 0)),
    # 55% to win at 1 ply, below the doubling window, but 37% of gammons make it a double.
    Case("1-0: double, take, on the gammons", {1: 2, 2: 2, 4: 2, 5: 2, 6: 2, 8: 1, 11: 1, 13: 1, 23: 1, "bar": 1},
         {1: 2, 4: 1, 5: 2, 6: 2, 8: 2, 10: 2, 13: 3, 22: 1}, True, "take", FIVE, score=(1, 0)),
    Case("2-0: no double, take", {2: 2, 5: 3, 6: 3, 8: 2, 11: 5},
         {2: 2, 3: 2, 4: 2, 5: 2, 6: 1, 7: 1, 9: 1, 11: 1, 21: 2, 24: 1}, False, "take", FIVE, score=(2, 0)),
)


@pytest.mark.gnubg
def test_gnubg_agrees_with_the_textbook_answers() -> None:
    answers = cube_decisions([case.for_gnubg() for case in CASES], plies=2)
    wrong = [(case.name, answer["text"]) for case, answer in zip(CASES, answers)
             if proper_action(answer["text"]) != (case.double, case.answer)]
    assert not wrong


def _assistant():
    loaded = engine(AssistantConfig().plies)
    assert loaded is not None, "bgsage must load in the test environment"
    return loaded


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_assistant_makes_no_cube_error_on_textbook_positions(case: Case) -> None:
    bot, game = _assistant(), case.game()
    assert rules.can_double(game)
    if case.double is not None:
        assert bot.wants_to_double(game) is case.double
    assert bot.answer_double(rules.double(game, 0)) == case.answer


def test_nobody_is_asked_to_double_in_the_crawford_game() -> None:
    case = next(case for case in CASES if case.name.startswith("post-Crawford trailer 2-away"))
    crawford = rules.Game(rules=FIVE, score=(4, 2), crawford=True, board=case.position, seat=0,
                          phase=rules.Phase.TO_ROLL)
    assert not rules.can_double(crawford)
    assert rules.double_refusal(crawford, 0) == "crawford_game"
