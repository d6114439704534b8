"""The .mat text: its layout, and a round trip through GNU Backgammon's own importer."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_game import random_game

from pbem.rules import game as g
from pbem.rules.game import ActionKind, Game
from pbem.rules.matfile import game_text, match_text
from pbem.rules.scoring import Ending, Format, MatchRules, Score, add_result, is_over

GNUBG = shutil.which("gnubg", path="/usr/games:/usr/bin:/usr/local/bin")
NAMES = ("Alice Smith", "Assistant")

_IMPORT_SCRIPT = """
import gnubg, json
gnubg.command("set jacoby {jacoby}")
gnubg.command("import mat {path}")
match = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)
with open("{out}", "w") as out:
    json.dump({{"length": match["match-info"]["match-length"],
               "names": [match["match-info"]["X"]["name"], match["match-info"]["O"]["name"]],
               "games": [{{"info": game["info"], "actions": game["game"]}} for game in match["games"]]}}, out)
"""


def session(seed: int, rules: MatchRules, max_games: int = 4, **chances: float) -> list[Game]:
    """Random games under ``rules`` until the match or series is over (or ``max_games``)."""
    rng = random.Random(seed)
    score, games = Score(rules), []
    while not is_over(score) and len(games) < max_games:
        game = random_game(rng.randrange(10**9), score, **chances)
        games.append(game)
        assert game.result is not None
        score = add_result(score, game.result)
    return games


def gnubg_import(text: str, tmp_path: Path, jacoby: bool = False) -> dict[str, Any]:
    """The match as gnubg reads ``text``; gnubg takes the Jacoby rule from its own setting."""
    assert GNUBG is not None, "GNU Backgammon (/usr/games/gnubg) is needed for the .mat round trip"
    mat, out, script = tmp_path / "match.mat", tmp_path / "imported.json", tmp_path / "import.py"
    mat.write_text(text, encoding="utf-8")
    script.write_text(
        _IMPORT_SCRIPT.format(path=mat, out=out, jacoby="on" if jacoby else "off"), encoding="utf-8"
    )
    subprocess.run([GNUBG, "-t", "-q", "-r", "-p", str(script)], check=True, capture_output=True, timeout=60)
    return json.loads(out.read_text(encoding="utf-8"))


def expected_actions(game: Game) -> list[tuple[Any, ...]]:
    """The record as gnubg lists it: a beaver is a double."""
    actions: list[tuple[Any, ...]] = []
    dice: tuple[int, int] | None = None
    for action in game.record:
        if action.kind is ActionKind.ROLL:
            dice = action.dice
        elif action.kind is ActionKind.MOVE:
            assert dice is not None and action.play is not None
            actions.append(("move", action.seat, tuple(sorted(dice)), tuple(sorted(action.play))))
        elif action.kind in (ActionKind.DOUBLE, ActionKind.BEAVER):
            actions.append(("double", action.seat))
        elif action.kind in (ActionKind.TAKE, ActionKind.DROP):
            actions.append((action.kind.value, action.seat))
        elif action.kind in (ActionKind.RESIGN, ActionKind.TIMEOUT):
            actions.append(("resign", action.seat))
    return actions


def imported_actions(actions: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    seats = {"X": 0, "O": 1}
    listed: list[tuple[Any, ...]] = []
    for action in actions:
        seat = seats[action["player"]]
        if action["action"] == "move":
            steps = tuple(sorted((step[0], step[1]) for step in action["move"]))
            listed.append(("move", seat, tuple(sorted(action["dice"])), steps))
        elif action["action"] in ("double", "take", "drop", "resign"):
            listed.append((action["action"], seat))
    return listed


def assert_same_match(games: list[Game], imported: dict[str, Any]) -> None:
    assert imported["names"] == ["Alice_Smith", "Assistant"]
    rules = games[0].rules
    assert imported["length"] == (rules.length if rules.format is Format.MATCH else 0)
    assert len(imported["games"]) == len(games)
    for game, gnubg_game in zip(games, imported["games"], strict=True):
        info = gnubg_game["info"]
        assert (info["score-X"], info["score-O"]) == game.score
        assert imported_actions(gnubg_game["actions"]) == expected_actions(game)
        result = game.result
        assert result is not None
        if result.winner is None:
            assert info["winner"] is None
            continue
        assert info["winner"] == "XO"[result.winner]
        assert info["points-won"] == result.points
        assert info["resigned"] == (result.ending in (Ending.RESIGNED, Ending.TIMEOUT))


@pytest.mark.gnubg
@pytest.mark.parametrize(
    ("seed", "rules", "chances"),
    [
        (1, MatchRules(Format.MATCH, length=7), {}),
        (2, MatchRules(Format.MATCH, length=5), {"resign": 0.02}),
        (3, MatchRules(Format.MATCH, length=3), {"resign": 0.0}),
        (4, MatchRules(Format.MONEY, length=0, beaver=True), {"resign": 0.01}),
        (5, MatchRules(Format.GAMES, length=3), {"resign": 0.01}),
        (6, MatchRules(), {}),
        (7, MatchRules(Format.MONEY, length=0, jacoby=True), {"resign": 0.01}),
        (8, MatchRules(Format.GAMES, length=3), {"resign": 0.0}),
    ],
)
def test_gnubg_imports_the_same_moves_cube_actions_and_results(
    seed: int, rules: MatchRules, chances: dict[str, float], tmp_path: Path
) -> None:
    games = session(seed, rules, **chances)
    assert_same_match(games, gnubg_import(match_text(games, NAMES), tmp_path, rules.jacoby))


@pytest.mark.gnubg
def test_gnubg_imports_a_drawn_game_as_an_unfinished_one_and_goes_on(tmp_path: Path) -> None:
    rules = MatchRules(Format.GAMES, length=2)
    started = g.new_game(Score(rules), (5, 2))
    assert started is not None
    played = g.play(
        g.roll(g.play(started, 0, ((13, 8), (13, 11))), 1, (4, 4)), 1, ((24, 20), (24, 20), (13, 9), (13, 9))
    )
    drawn = g.offer_draw(g.offer_draw(played, 1), 0)
    assert drawn.result is not None and drawn.result.ending is Ending.DRAWN
    games = [drawn, random_game(8, add_result(Score(rules), drawn.result))]
    imported = gnubg_import(match_text(games, NAMES), tmp_path)
    assert len(imported["games"]) == 2
    assert imported_actions(imported["games"][0]["actions"]) == expected_actions(drawn)
    assert imported["games"][0]["info"]["winner"] is None
    assert imported_actions(imported["games"][1]["actions"]) == expected_actions(games[1])


@pytest.mark.gnubg
def test_gnubg_reads_beavers_taken_dropped_and_resigned_after(tmp_path: Path) -> None:
    rules = MatchRules(Format.MONEY, length=0, beaver=True)
    score, games = Score(rules), []
    for answer, roll_after_take in ((g.drop, False), (g.take, False), (g.take, True)):
        game = g.new_game(score, (3, 1))
        assert game is not None
        game = g.play(g.roll(g.play(game, 0, ((8, 5), (6, 5))), 1, (2, 1)), 1, ((13, 11), (6, 5)))
        game = answer(g.beaver(g.double(game, 0), 1), 0)
        if roll_after_take:
            game = g.play(g.roll(game, 0, (6, 4)), 0, ((24, 18), (13, 9)))
        if game.result is None:
            game = g.resign(game, 0)
        assert game.result is not None
        games.append(game)
        score = add_result(score, game.result)
    assert [game.result.points for game in games if game.result] == [2, 12, 12]
    assert_same_match(games, gnubg_import(match_text(games, NAMES), tmp_path))


def opening_game() -> Game:
    game = g.new_game(Score(MatchRules(Format.MATCH, length=5)), (1, 3))
    assert game is not None
    return game


def test_layout_follows_gnubg_export() -> None:
    game = g.play(opening_game(), 1, ((8, 5), (6, 5)))
    game = g.play(g.roll(game, 0, (6, 2)), 0, ((24, 18), (13, 11)))
    game = g.take(g.double(game, 1), 0)
    game = g.play(g.roll(game, 1, (4, 3)), 1, ((24, 20), (13, 10)))
    over = g.drop(g.double(game, 0), 1)
    assert match_text([over], NAMES) == (
        " 5 point match\n"
        "\n"
        " Game 1\n"
        " Alice_Smith : 0                Assistant : 0\n"
        "  1)                             31: 8/5 6/5\n"
        "  2) 62: 24/18 13/11              Doubles => 2\n"
        "  3)  Takes                      43: 24/20 13/10\n"
        "  4)  Doubles => 4                Drops\n"
        "      Wins 2 points\n"
    )


def test_a_drop_puts_the_win_in_the_winners_column_as_gnubg_does() -> None:
    game = g.play(opening_game(), 1, ((8, 5), (6, 5)))
    seat_1_drops = g.drop(g.double(game, 0), 1)
    assert game_text(seat_1_drops, NAMES).splitlines()[-2:] == [
        "  2)  Doubles => 2                Drops",
        "      Wins 1 point",
    ]
    seat_0_drops = g.drop(g.double(g.play(g.roll(game, 0, (6, 2)), 0, ((24, 18), (13, 11))), 1), 0)
    assert game_text(seat_0_drops, NAMES).splitlines()[-1] == "  3)  Drops                       Wins 1 point"


def test_hits_are_marked_with_a_star() -> None:
    game = g.new_game(Score(MatchRules()), (6, 2))
    assert game is not None
    game = g.play(
        g.roll(g.play(game, 0, ((24, 18), (13, 11))), 1, (6, 6)), 1, ((13, 7), (13, 7), (24, 18), (24, 18))
    )
    line = game_text(game, NAMES).splitlines()[-1]
    assert line.startswith("  1) 62: 24/18 13/11") and "66: " in line
    assert line.count("*") == 1 and "13/7*" in line


def test_resignation_is_a_wins_line_in_the_winners_column() -> None:
    over = g.resign(opening_game(), 1)
    assert over.result is not None
    assert game_text(over, NAMES).splitlines()[-1] == "      Wins 3 points and the match"
    over = g.resign(opening_game(), 0)
    assert game_text(over, NAMES).splitlines()[-1] == " " * 34 + "Wins 3 points and the match"
