"""GNU Backgammon as an oracle for the tests: legal plays, random corpora and identifiers.

This one file plays two parts:

* imported by the tests (ordinary Python), its public functions start one non-interactive
  ``gnubg -t -q -r -p`` process per call and pass it a JSON request and reply file;
* run *by* gnubg as its Python script (``__main__`` inside the program, where ``import gnubg``
  works), it answers that request with the program's own move generator and ``gnubg.positionid``.

Legal plays come from ``gnubg.hint``, which lists every legal play (at any ply; 0 ply is merely
the fastest) and de-duplicates plays reaching the same board; each hint is applied to the board
to get the resulting Position ID.  A gnubg call costs about 10 ms whatever the position, so
callers batch their questions into one process.
Random corpora come from seeded random games played with gnubg's legal plays and a few crude
playing styles that produce many bar and bear-off positions.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

Query = tuple[str, int, int]
Answer = list[str]
Board = tuple[Sequence[int], Sequence[int]]
"""A board as gnubg.board() gives it: (side not on roll, side on roll), 25 slots each."""

START_ID = "4HPwATDgc/ABMA"

GNUBG_CANDIDATES = ("gnubg", "/usr/games/gnubg")
_REQUEST_ENV = "PBEM_ORACLE_REQUEST"
_REPLY_ENV = "PBEM_ORACLE_REPLY"
_SESSION = (
    "set player 0 human",
    "set player 1 human",
    "set automatic roll off",
    "set automatic game off",
    "set automatic bearoff off",
    "set automatic move off",
    "set display off",
    "set evaluation chequerplay evaluation plies 0",
    "set evaluation chequerplay evaluation cubeful off",
)


# --- the test side -----------------------------------------------------------------------------


def gnubg_executable() -> str:
    """Path of the gnubg program; a clear error when it is missing (tests must fail, not skip)."""
    for candidate in GNUBG_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    raise RuntimeError(
        "GNU Backgammon (gnubg) is not installed: these tests compare with it. "
        "Install it with `apt-get install gnubg` (Debian/Ubuntu); it is looked up as "
        + " and ".join(GNUBG_CANDIDATES)
    )


def legal_results(queries: Iterable[Query]) -> list[Answer]:
    """For each ``(position_id, die1, die2)``: gnubg's sorted resulting Position IDs."""
    return _ask({"kind": "legal", "queries": [list(query) for query in queries]})


def random_corpus(seed: int, count: int) -> list[tuple[str, int, int, Answer]]:
    """``count`` positions and rolls from seeded random games, each with gnubg's answer."""
    reply = _ask({"kind": "corpus", "seed": seed, "count": count})
    return [(pid, die1, die2, answer) for pid, die1, die2, answer in reply]


def position_ids(boards: Iterable[Board]) -> list[str]:
    """``gnubg.positionid`` of each board ``(side not on roll, side on roll)``."""
    return _ask({"kind": "position_ids", "boards": [[list(side) for side in board] for board in boards]})


def identifiers_after(scripts: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    """For each list of gnubg commands, run from a fresh session: ``(position ID, match ID)``."""
    return [tuple(ids) for ids in _ask({"kind": "commands", "scripts": [list(s) for s in scripts]})]


def _ask(request: dict, timeout: float = 300) -> list:
    """Run this file inside one gnubg process on ``request`` and return its JSON reply."""
    with tempfile.TemporaryDirectory(prefix="pbem-gnubg-") as folder:
        request_path, reply_path = Path(folder, "request.json"), Path(folder, "reply.json")
        request_path.write_text(json.dumps(request))
        env = {**os.environ, _REQUEST_ENV: str(request_path), _REPLY_ENV: str(reply_path)}
        done = subprocess.run(
            [gnubg_executable(), "-t", "-q", "-r", "-p", str(Path(__file__).resolve())],
            env=env,
            check=False,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=folder,
        )
        if not reply_path.exists():
            raise RuntimeError(f"gnubg gave no answer (exit {done.returncode}):\n{done.stderr[-3000:]}")
        return json.loads(reply_path.read_text())


# --- the gnubg side (runs inside the gnubg program) ---------------------------------------------


def _serve() -> None:
    """Answer the request file named in the environment; called when gnubg runs this file."""
    request = json.loads(Path(os.environ[_REQUEST_ENV]).read_text())
    if request["kind"] == "legal":
        _start_session()
        reply = [_gnubg_legal(pid, die1, die2) for pid, die1, die2 in request["queries"]]
    elif request["kind"] == "corpus":
        _start_session()
        reply = random_queries(
            random.Random(request["seed"]), request["count"], _gnubg_legal, _gnubg_board, _gnubg_id
        )
    elif request["kind"] == "position_ids":
        reply = [_gnubg_id(tuple(map(tuple, board))) for board in request["boards"]]
    else:
        reply = [_gnubg_identifiers(script) for script in request["scripts"]]
    Path(os.environ[_REPLY_ENV]).write_text(json.dumps(reply))


def _start_session() -> None:
    import gnubg

    for command in _SESSION:
        gnubg.command(command)
    gnubg.command("new game")


def _gnubg_identifiers(script: Sequence[str]) -> tuple[str, str]:
    import gnubg

    _start_session()
    for command in script:
        gnubg.command(command)
    return gnubg.positionid(), gnubg.matchid()


def _gnubg_legal(pid: str, die1: int, die2: int) -> Answer:
    """gnubg's resulting Position IDs for one position and roll, sorted."""
    import gnubg

    gnubg.command(f"set board {pid}")
    gnubg.command(f"set dice {die1} {die2}")
    board = gnubg.board()
    hints = gnubg.hint(100_000)["hint"]
    results = {gnubg.positionid(_apply(board, gnubg.parsemove(hint["move"]))) for hint in hints}
    if len(results) != len(hints):
        raise AssertionError(f"hints for {pid} {die1}{die2} do not give distinct boards: {hints}")
    return sorted(results)


def _gnubg_board(pid: str) -> Board:
    import gnubg

    return gnubg.positionfromid(pid)


def _gnubg_id(board: Board) -> str:
    import gnubg

    return gnubg.positionid(board)


def _apply(board: tuple, steps: Iterable[tuple[int, int]]) -> tuple:
    """The board (not on roll, on roll) after the player on roll makes ``steps`` (25 bar, 0 off)."""
    opponent, mover = list(board[0]), list(board[1])
    for source, target in steps:
        mover[source - 1] -= 1
        if target > 0:
            mover[target - 1] += 1
            if opponent[24 - target] == 1:
                opponent[24 - target] = 0
                opponent[24] += 1
    return tuple(opponent), tuple(mover)


_STYLES = ("random", "hitter", "blitzer", "anchor", "runner", "runner", "runner")


def random_queries(
    rng: random.Random,
    count: int,
    legal: Callable[[str, int, int], Answer],
    board_of: Callable[[str], Board],
    id_of: Callable[[Board], str],
) -> list[tuple[str, int, int, Answer]]:
    """Positions and rolls from seeded random games, each with the answer of ``legal``.

    Each player of a game picks among the legal plays with a crude style (random, hitter,
    blitzer, anchor-keeper or runner) so that several checkers on the bar, closed boards and
    bearing off against an anchor are frequent; bar and bear-off positions are kept more often,
    and some positions are asked again with a random double.  One in ten positions is instead a
    random bear-off against blots in the home board, as games rarely reach a hit while bearing
    off.  ``legal`` answers as ``pbem rules legal`` does; boards are ``(side not on roll, side on
    roll)``.
    """
    corpus: list[tuple[str, int, int, Answer]] = []
    for _ in range(count // 10):
        pid = id_of(_bear_off_against_blots(rng))
        die1, die2 = rng.randint(1, 6), rng.randint(1, 6)
        corpus.append((pid, die1, die2, legal(pid, die1, die2)))
    while len(corpus) < count:
        styles = (rng.choice(_STYLES), rng.choice(_STYLES))
        board = board_of(START_ID)
        player = 0
        while any(board[0]) and any(board[1]):
            pid = id_of(board)
            die1, die2 = rng.randint(1, 6), rng.randint(1, 6)
            answer = legal(pid, die1, die2)
            if rng.random() < _keep_probability(board):
                corpus.append((pid, die1, die2, answer))
                if rng.random() < 0.2:
                    double = rng.randint(1, 6)
                    corpus.append((pid, double, double, legal(pid, double, double)))
            if answer:
                scored = [(_style_score(styles[player], board_of(result)), result) for result in answer]
                best = max(score for score, _ in scored)
                board = board_of(rng.choice([result for score, result in scored if score == best]))
            board = (board[1], board[0])
            player = 1 - player
    return corpus[:count]


def _bear_off_against_blots(rng: random.Random) -> Board:
    """A random position where the mover bears off and the opponent has blots in that home."""
    mover, opponent = [0] * 25, [0] * 25
    occupied = rng.sample(range(6), rng.randint(2, 5))
    for _ in range(rng.randint(2, 15)):
        mover[rng.choice(occupied)] += 1
    free = [point for point in range(6) if point not in occupied]
    for point in rng.sample(free, rng.randint(1, len(free))):
        opponent[23 - point] = rng.choice((1, 1, 2))
    for _ in range(rng.randint(0, 15 - sum(opponent))):
        opponent[rng.choice((*range(18), 24))] += 1
    return tuple(opponent), tuple(mover)


def _style_score(style: str, board: Board) -> int:
    """How much a playing style likes ``board`` (seen from the player who just moved)."""
    opponent, mover = board
    if style == "hitter":
        return opponent[24]
    if style == "blitzer":
        return 3 * opponent[24] + sum(n >= 2 for n in mover[:6])
    if style == "anchor":
        return sum(mover[18:24])
    if style == "runner":
        return 15 - sum(mover[6:])
    return 0


def _keep_probability(board: Board) -> float:
    """Keep every bear-off position and several checkers on the bar, fewer of the rest."""
    mover = board[1]
    if mover[24] >= 2 or not any(mover[6:]):
        return 1.0
    return 0.3 if mover[24] else 0.12


if __name__ == "__main__" and _REQUEST_ENV in os.environ:
    try:
        _serve()
    except BaseException:
        import traceback

        traceback.print_exc(file=sys.stderr)
        raise
