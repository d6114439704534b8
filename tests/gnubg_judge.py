"""GNU Backgammon as the independent judge of the Assistant and of the review.

Like ``gnubg_oracle.py``, this one file plays two parts: imported by the tests and the bench, its
functions start one ``gnubg -t -q -r -p`` process per call and pass it a JSON request file;
run *by* gnubg as its Python script, it answers with the program's own analysis.

* :func:`analyse` imports ``.mat`` texts and runs ``analyse match`` at ``plies`` (gnubg's plies:
  2 here is the "2-ply" of gnubg's menus, bgsage's "3ply"), and returns gnubg's statistics per
  match and per game for each seat (seat 0 is the .mat's left column, gnubg's player "X").
* :func:`cube_decisions` has gnubg evaluate the cube (``cfevaluate``) in given positions, seen
  by the player on roll, and returns its equities and its recommendation in its own words.

gnubg's error rate in mEMG is the error (normalised to EMG, "EMG (MWC)" in its tables) per
unforced move or close cube decision, times 1000: :func:`rates` computes it from the totals.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path


_REQUEST_ENV = "PBEM_JUDGE_REQUEST"
_REPLY_ENV = "PBEM_JUDGE_REPLY"
SEAT_KEYS = ("X", "O")
"""gnubg's names for the .mat's left (seat 0) and right (seat 1) player in ``gnubg.match()``."""
CUBE_ERROR_KINDS = ("missed-double-below-cp", "missed-double-above-cp", "wrong-double-below-dp",
                    "wrong-double-above-tg", "wrong-take", "wrong-drop")
"""gnubg's counts of wrong cube actions (its statistics' "Missed doubles", "Wrong doubles", ...)."""


# --- the caller's side -------------------------------------------------------------------------


def analyse(mats: Sequence[str], plies: int = 2, jacoby: bool = False, beaver: bool = False,
            timeout: float = 3600) -> list[dict]:
    """gnubg's analysis of each ``.mat`` text: ``{"seats": [s0, s1], "games": [{"seats": ...}]}``
    where each ``s`` holds ``unforced``, ``checker_error``, ``close_cube``, ``cube_error`` (EMG),
    ``very_bad``, ``bad``, ``cube_errors`` (wrong cube actions), ``moves`` and ``luck`` (EMG) for that
    seat.  A .mat cannot say whether money play used the Jacoby rule or beavers: gnubg takes them
    from its settings (Jacoby on by default), so they are set from ``jacoby`` and ``beaver``
    before the import."""
    return _ask({"kind": "analyse", "mats": list(mats), "plies": plies, "jacoby": jacoby, "beaver": beaver},
                timeout)


def cube_decisions(positions: Sequence[dict], plies: int = 2, timeout: float = 600) -> list[dict]:
    """gnubg's cube analysis of each ``{"position_id", "cube", "owner", "length", "score",
    "crawford", "jacoby", "beaver"}`` for the player on roll: ``owner`` is None (centred), 0 (the
    player on roll) or 1; ``score`` is (on roll, opponent); ``length`` 0 is money play.
    Returns ``{"nd", "dt", "dp", "text"}``: gnubg's cubeful equities for no double,
    double/take, double/pass, and its recommendation (e.g. "Double, take",
    "Too good to double, pass", "No double, beaver")."""
    return _ask({"kind": "cube", "positions": list(positions), "plies": plies}, timeout)


def proper_action(text: str) -> tuple[bool | None, str]:
    """gnubg's recommendation as (the roller should double, None where gnubg calls the double
    optional; the opponent's answer: take, drop or beaver)."""
    first, _, second = text.lower().partition(", ")
    doubles = None if first.startswith("optional") else first in ("double", "redouble")
    answer = {"take": "take", "pass": "drop", "beaver": "beaver"}[second.strip()]
    return doubles, answer


def rates(seats: Sequence[dict]) -> dict[str, float]:
    """Error rates in mEMG (checker, cube, overall), very bad moves and cube errors over the given seat stats."""
    unforced = sum(seat["unforced"] for seat in seats)
    close = sum(seat["close_cube"] for seat in seats)
    checker = sum(seat["checker_error"] for seat in seats)
    cube = sum(seat["cube_error"] for seat in seats)
    return {
        "checker": 1000 * checker / max(unforced, 1),
        "cube": 1000 * cube / max(close, 1),
        "overall": 1000 * (checker + cube) / max(unforced + close, 1),
        "very_bad": sum(seat["very_bad"] for seat in seats),
        "cube_errors": sum(seat.get("cube_errors", 0) for seat in seats),
        "decisions": unforced + close,
    }


def _ask(request: dict, timeout: float) -> list:
    from gnubg_oracle import gnubg_executable  # next to this file; not importable inside gnubg

    with tempfile.TemporaryDirectory(prefix="pbem-judge-") as folder:
        request_path, reply_path = Path(folder, "request.json"), Path(folder, "reply.json")
        request_path.write_text(json.dumps(request))
        env = {**os.environ, _REQUEST_ENV: str(request_path), _REPLY_ENV: str(reply_path)}
        done = subprocess.run(
            ["nice", "-n", "10", gnubg_executable(), "-t", "-q", "-r", "-p", str(Path(__file__).resolve())],
            env=env, check=False, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=timeout, cwd=folder,
        )
        if not reply_path.exists():
            raise RuntimeError(f"gnubg gave no answer (exit {done.returncode}):\n{done.stderr[-3000:]}")
        return json.loads(reply_path.read_text())


# --- the gnubg side (runs inside the gnubg program) ---------------------------------------------


def _serve() -> None:
    import gnubg

    request = json.loads(Path(os.environ[_REQUEST_ENV]).read_text())
    plies = int(request["plies"])
    for kind in ("chequerplay", "cubedecision"):
        gnubg.command(f"set analysis {kind} evaluation plies {plies}")
        gnubg.command(f"set analysis {kind} evaluation cubeful on")
    gnubg.command(f"set evaluation cubedecision evaluation plies {plies}")
    gnubg.command(f"set evaluation chequerplay evaluation plies {plies}")
    if request["kind"] == "analyse":
        gnubg.command(f"set jacoby {'on' if request['jacoby'] else 'off'}")
        gnubg.command(f"set beavers {'on' if request['beaver'] else 'off'}")
        reply = [_analyse(gnubg, text, index) for index, text in enumerate(request["mats"])]
    else:
        reply = [_cube(gnubg, position, plies) for position in request["positions"]]
    Path(os.environ[_REPLY_ENV]).write_text(json.dumps(reply))


def _analyse(gnubg, text: str, index: int) -> dict:  # noqa: ANN001 - the gnubg module
    path = Path(os.environ[_REPLY_ENV]).with_name(f"match{index}.mat")
    path.write_text(text)
    gnubg.command(f"import mat {path}")
    gnubg.command("analyse match")
    match = gnubg.match(analysis=1, boards=0, statistics=1, verbose=0)
    return {"seats": _seats(match["stats"]), "games": [{"seats": _seats(game["stats"])} for game in match["games"]]}


def _seats(stats: dict) -> list[dict]:
    seats = []
    for key in SEAT_KEYS:
        each = stats.get(key) or {}
        moves, cube, dice = each.get("moves", {}), each.get("cube", {}), each.get("dice", {})
        marked = moves.get("marked", {})
        seats.append({
            "moves": moves.get("total-moves", 0),
            "unforced": moves.get("unforced-moves", 0),
            "checker_error": moves.get("error-skill", 0.0),
            "close_cube": cube.get("close-cube", 0),
            # the dict's cube "error-skill" is already divided by the close decisions: add up the parts
            "cube_error": sum(value for name, value in cube.items() if name.startswith("err-") and name.endswith("-skill")),
            "cube_errors": sum(cube.get(name, 0) for name in CUBE_ERROR_KINDS),
            "very_bad": marked.get("very bad", 0),
            "bad": marked.get("bad", 0),
            "luck": dice.get("luck", 0.0),
        })
    return seats


def _cube(gnubg, position: dict, plies: int) -> dict:  # noqa: ANN001 - the gnubg module
    owner = {None: -1, 0: 0, 1: 1}[position.get("owner")]
    info = gnubg.cubeinfo(position.get("cube", 1), owner, 0, position.get("length", 0),
                          tuple(position.get("score", (0, 0))), int(position.get("crawford", False)), 0)
    info["jacoby"] = int(position.get("jacoby", False))
    info["beavers"] = int(position.get("beaver", False))
    context = {"cubeful": 1, "plies": plies, "deterministic": 1, "prune": 1, "noise": 0.0}
    board = gnubg.positionfromid(position["position_id"])
    _, nd, dt, dp, _, text = gnubg.cfevaluate(board, info, context)
    return {"nd": nd, "dt": dt, "dp": dp, "text": text}


if __name__ == "__main__" and _REQUEST_ENV in os.environ:
    try:
        _serve()
    except BaseException:
        import traceback

        traceback.print_exc(file=sys.stderr)
        raise
