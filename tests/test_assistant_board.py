"""The board we hand to bgsage is the board bgsage means, and the Assistant plays bgsage's choice.

The positions come from seeded games walked on *bgsage's own boards*: each play is chosen among
``bgsage.possible_moves`` (crude styles: random, hitter, blitzer, runner, so that hits, checkers
on both bars and bear-offs against blots are frequent), and the next board is bgsage's own
``flip_board`` of it.  Our :class:`Position` is carried alongside with :func:`_from_bgsage`, a
decoding written here from bgsage's documented layout (index 0: the opponent's bar, a positive
count; 25: the mover's bar; 1-24 the mover's points, opponent's checkers negative).  So neither
the boards nor the play chosen depend on :func:`pbem.assistant.engine.to_board`, which is what
these tests judge.  Bear-offs with contact are added as random home boards against blots, built
in both layouts from the same random choices.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, replace

import bgsage

from pbem.assistant import engine
from pbem.assistant.engine import CubeContext, to_board
from pbem.rules import game as rules
from pbem.rules.moves import apply_play, legal_plays
from pbem.rules.position import BAR, Position
from pbem.rules.scoring import Format, MatchRules

Board = tuple[int, ...]
CORPUS_SIZE = 2400
STYLES = ("random", "hitter", "hitter", "blitzer", "runner")


@dataclass(frozen=True)
class Case:
    position: Position
    board: Board
    """bgsage's board for ``position``, as bgsage itself produced it (never ``to_board``)."""
    dice: tuple[int, int]


def _from_bgsage(board: Board) -> Position:
    """Our position for a bgsage board (the layout in the module docstring)."""
    mover, opponent = [0] * 25, [0] * 25
    for point in range(1, 25):
        if board[point] > 0:
            mover[point - 1] = board[point]
        elif board[point] < 0:
            opponent[24 - point] = -board[point]
    mover[BAR], opponent[BAR] = board[25], board[0]
    return Position(tuple(mover), tuple(opponent))


def _style_score(style: str, board: Board) -> int:
    """How much a crude playing style likes a post-move bgsage board."""
    if style == "hitter":
        return board[0]
    if style == "blitzer":
        return 3 * board[0] + sum(count >= 2 for count in board[1:7])
    if style == "runner":
        return -sum(point * count for point, count in enumerate(board) if count > 0 and point < 25)
    return 0


def _interesting(position: Position, dice: tuple[int, int]) -> bool:
    """A hit is possible, a checker is on either bar, or the mover bears off with contact."""
    if position.mover[BAR] or position.opponent[BAR]:
        return True
    if any(after.opponent[BAR] for after in legal_plays(position, dice)):
        return True
    return position.mover_can_bear_off() and any(position.opponent[18:24])


@functools.cache
def corpus(seed: int = 20261122, count: int = CORPUS_SIZE) -> tuple[Case, ...]:
    """Seeded positions and rolls; about four in five are interesting (see above)."""
    rng, cases = random.Random(seed), []
    while len(cases) < count // 10:
        cases.append(_bear_off_against_blots(rng))
    while len(cases) < count:
        styles = (rng.choice(STYLES), rng.choice(STYLES))
        board: Board = tuple(bgsage.STARTING_BOARD)
        for turn in range(400):
            position = _from_bgsage(board)
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            if rng.random() < (0.9 if _interesting(position, dice) else 0.1):
                cases.append(Case(position, board, dice))
            theirs = [tuple(after) for after in bgsage.possible_moves(list(board), *dice)]
            if theirs and theirs != [board]:  # bgsage answers a dance with the board itself
                scores = [_style_score(styles[turn % 2], after) for after in theirs]
                board = rng.choice([after for after, score in zip(theirs, scores) if score == max(scores)])
                if bgsage.check_game_over(list(board)):
                    break
            board = tuple(bgsage.flip_board(list(board)))
    return tuple(cases[:count])


def _bear_off_against_blots(rng: random.Random) -> Case:
    """The mover bears off; the opponent has blots in that home board and maybe a checker on the bar."""
    board = [0] * 26
    occupied = rng.sample(range(1, 7), rng.randint(2, 5))
    for _ in range(rng.randint(2, 15)):
        board[rng.choice(occupied)] += 1
    free = [point for point in range(1, 7) if point not in occupied]
    placed = 0
    for point in rng.sample(free, rng.randint(1, len(free))):
        count = rng.choice((1, 1, 2))
        board[point] -= count
        placed += count
    for _ in range(rng.randint(0, 15 - placed)):
        point = rng.choice((*range(7, 25), 0))
        if point == 0:
            board[0] += 1
        elif board[point] <= 0:
            board[point] -= 1
    board_tuple = tuple(board)
    return Case(_from_bgsage(board_tuple), board_tuple, (rng.randint(1, 6), rng.randint(1, 6)))


def _assistant():
    loaded = engine(1)
    assert loaded is not None, "bgsage must load in the test environment"
    return loaded


def test_the_corpus_is_rich_in_hits_bars_and_bear_offs_with_contact() -> None:
    cases = corpus()
    assert len(cases) >= 2000
    assert sum(bool(case.position.mover[BAR]) for case in cases) >= 800
    assert sum(bool(case.position.opponent[BAR]) for case in cases) >= 150
    assert sum(any(after.opponent[BAR] > case.position.opponent[BAR]
                   for after in legal_plays(case.position, case.dice)) for case in cases) >= 1000
    assert sum(case.position.mover_can_bear_off() and any(case.position.opponent[18:24])
               for case in cases) >= 200


def test_our_board_is_the_board_bgsage_itself_reaches_in_its_own_games() -> None:
    """Every position of bgsage's own games (after its own hits and flips) converts back exactly."""
    wrong = [(case.position, case.board) for case in corpus() if tuple(to_board(case.position)) != case.board]
    assert not wrong, f"{len(wrong)} boards differ, e.g. {wrong[0]}"


def test_bgsage_post_move_boards_after_hits_round_trip_through_our_rules() -> None:
    """bgsage's boards after each play (a hit shows a positive count at 0) are exactly ours."""
    post_hit, disagreements = 0, []
    for case in corpus():
        allowed = legal_plays(case.position, case.dice)
        theirs = [tuple(after) for after in bgsage.possible_moves(list(case.board), *case.dice)]
        if not allowed:
            assert theirs in ([], [case.board])  # a dance: bgsage answers with the board itself
            continue
        ours = {tuple(to_board(after)) for after in allowed}
        for after in theirs:
            if after[0] > case.board[0]:
                post_hit += 1
                assert _from_bgsage(after).opponent[BAR] == after[0] > 0
        if set(theirs) != ours:
            disagreements.append((case, set(theirs) ^ ours))
    assert post_hit >= 3000
    assert not disagreements, f"{len(disagreements)} positions differ, e.g. {disagreements[0]}"


def _context(index: int) -> tuple[MatchRules, dict]:
    """A few cube situations in turn: a single game, a 7-point match, money with an owned cube."""
    match index % 3:
        case 0:
            return MatchRules(), {}
        case 1:
            return MatchRules(format=Format.MATCH, length=7), {}
        case _:
            return MatchRules(format=Format.MONEY, length=0), {"cube": 2, "cube_owner": 0}


def test_the_assistant_plays_bgsage_first_choice_wherever_our_rules_allow_it() -> None:
    """The Assistant's play (its real path, ``choose_play``) against one bgsage batch at 1 ply."""
    bot, games, inputs = _assistant(), [], []
    for index, case in enumerate(corpus()):
        if len(legal_plays(case.position, case.dice)) < 2:
            continue
        match_rules, cube = _context(index)
        score = (index % 5, index % 4) if match_rules.format is Format.MATCH else (0, 0)
        game = replace(rules.Game(rules=match_rules, score=score, crawford=False, board=case.position,
                                  seat=0, phase=rules.Phase.TO_MOVE, dice=case.dice), **cube)
        games.append(game)
        inputs.append({"board": list(case.board), "die1": case.dice[0], "die2": case.dice[1],
                       **CubeContext.of(game, 0).post_move_args()})
    firsts = [result.moves[0] for result in bgsage.batch_checker_play(inputs, eval_level="1ply", jacoby=False)]
    compared, unlike = 0, []
    for game, first in zip(games, firsts):
        if _from_bgsage(tuple(first.board)) not in legal_plays(game.board, game.dice):
            continue
        compared += 1
        played = tuple(to_board(apply_play(game.board, bot.choose_play(game))))
        if played != tuple(first.board):
            unlike.append((game.board, game.dice, played, first.board))
    assert compared >= 2000
    assert not unlike, f"{len(unlike)} plays differ, e.g. {unlike[0]}"


def test_the_missed_hit_of_the_issue_is_now_played() -> None:
    """Issue 10: at xGfwASLgc+EBKA with 5-2 the Assistant played 23/21 13/8 instead of 9/4* 6/4."""
    from pbem.rules.gnubg_ids import position_from_id
    from pbem.rules.notation import Colour, Numbering, format_play

    game = rules.Game(rules=MatchRules(), score=(0, 0), crawford=False, board=position_from_id("xGfwASLgc+EBKA"),
                      seat=0, phase=rules.Phase.TO_MOVE, dice=(5, 2))
    play = _assistant().choose_play(game)
    assert format_play(game.board, play, Numbering.OWN, Colour.of_seat(0)) == "9/4* 6/4"
