"""The graph of the web board's one-die steps (``play_graph``) against ``legal_plays`` and
``check_play``: every path ends on a legal play, and every legal play is reached."""

from __future__ import annotations

import random

from pbem.rules.moves import apply_step, check_play, legal_plays, play_graph
from pbem.rules.position import Position


def _positions(count: int, seed: int = 7) -> list[tuple[Position, tuple[int, int]]]:
    """Boards of random games (both sides playing random legal plays), each with a roll."""
    rng = random.Random(seed)
    found, board = [], Position.start()
    while len(found) < count:
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        found.append((board, dice))
        plays = legal_plays(board, dice)
        if plays:
            board = rng.choice(sorted(plays, key=lambda position: (position.mover, position.opponent)))
        if not any(board.mover) or not any(board.opponent):
            board = Position.start()
            continue
        board = board.swap()
    return found


def _paths(graph, index=0, board=None, steps=()):
    node = graph[index]
    if node.complete:
        yield board, steps
    for step, hit, child in node.steps:
        after = apply_step(board, step)
        assert hit == (sum(after.opponent) == sum(board.opponent) and after.opponent != board.opponent), step
        yield from _paths(graph, child, after, (*steps, step))


def test_every_path_is_a_legal_play_and_every_legal_play_is_a_path() -> None:
    for board, dice in _positions(60):
        legal = legal_plays(board, dice)
        graph = play_graph(board, dice)
        if not legal:
            assert graph == []
            continue
        reached = set()
        for end, steps in _paths(graph, 0, board):
            assert end in legal and check_play(board, dice, steps) == end
            reached.add(end)
        assert reached == set(legal), (board, dice)
        assert all(node.complete or node.steps for node in graph), "no dead end"


def test_a_checker_on_the_bar_enters_first() -> None:
    start = Position.start()
    mover = list(start.mover)
    mover[23] -= 1
    mover[24] += 1  # one checker from the 24-point on the bar
    graph = play_graph(Position(tuple(mover), start.opponent), (6, 5))
    assert sorted(step for step, _, _ in graph[0].steps) == [(25, 20)], "the 6 is blocked, the 5 enters"
