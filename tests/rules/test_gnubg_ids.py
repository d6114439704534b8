"""Position IDs and Match IDs: known values, round trips, bad input, and the gnubg program itself."""

from __future__ import annotations

import base64
import random
from pathlib import Path

import gnubg_oracle
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.rules.gnubg_ids import (
    GameState,
    MatchIdState,
    match_id,
    match_id_state,
    position_from_id,
    position_id,
)
from pbem.rules.position import Position

DATA = Path(__file__).resolve().parents[1] / "data" / "legal_plays.txt"

# (gnubg commands after `new game`, the state gnubg shows, its Match ID as gnubg 1.07 wrote it)
MATCH_CASES = [
    (["new session", "set turn 0"], MatchIdState(player_on_roll=0, turn=0, jacoby=True), "MAEAAAAAAAAA"),
    (["new session", "set turn 1"], MatchIdState(player_on_roll=1, turn=1, jacoby=True), "cAkAAAAAAAAA"),
    (["set jacoby off", "new session", "set turn 1"], MatchIdState(player_on_roll=1, turn=1), "cAkAAAAAAAAE"),
    (
        ["new match 5", "set turn 1", "set dice 3 1"],
        MatchIdState(player_on_roll=1, turn=1, dice=(3, 1), match_length=5),
        "cImlAAAAAAAE",
    ),
    (
        ["new match 7", "set score 2 5", "set turn 1"],
        MatchIdState(player_on_roll=1, turn=1, match_length=7, score=(2, 5)),
        "cAngACAAKAAE",
    ),
    (
        ["new match 7", "set score 6 3", "set crawford on", "set turn 0"],
        MatchIdState(crawford=True, match_length=7, score=(6, 3)),
        "sAHgAGAAGAAE",
    ),
    (
        ["new match 7", "set score 6 3", "set postcrawford on", "set turn 0"],
        MatchIdState(match_length=7, score=(6, 3)),
        "MAHgAGAAGAAE",
    ),
    (
        ["new match 5", "set turn 0", "set cube value 4", "set cube owner 1"],
        MatchIdState(cube_value=4, cube_owner=1, match_length=5),
        "EgGgAAAAAAAE",
    ),
    (
        ["new match 5", "set turn 1", "set cube value 2", "set cube owner 0", "set dice 6 6"],
        MatchIdState(cube_value=2, cube_owner=0, player_on_roll=1, turn=1, dice=(6, 6), match_length=5),
        "QQm7AAAAAAAE",
    ),
    (
        ["new match 5", "set turn 1", "double"],
        MatchIdState(player_on_roll=1, turn=0, double_offered=True, match_length=5),
        "cBGgAAAAAAAE",
    ),
    (
        ["new match 5", "set turn 0", "double", "take"],
        MatchIdState(cube_value=2, cube_owner=1, match_length=5),
        "EQGgAAAAAAAE",
    ),
    (
        ["new match 5", "set turn 0", "set dice 5 2", "resign g"],
        MatchIdState(turn=1, resignation_offered=2, dice=(5, 2), match_length=5),
        "MMmqAAAAAAAE",
    ),
    (
        ["new match 3", "set turn 0", "double", "drop"],
        MatchIdState(game_state=GameState.DROPPED, turn=1, match_length=3, score=(1, 0)),
        "MAxgABAAAAAE",
    ),
    (
        [
            "new match 9",
            "set score 4 8",
            "set turn 1",
            "set cube value 16",
            "set cube owner 0",
            "set dice 2 4",
        ],
        MatchIdState(
            cube_value=16, cube_owner=0, player_on_roll=1, turn=1, dice=(4, 2), match_length=9, score=(4, 8)
        ),
        "RAkqAUAAQAAE",
    ),
]


def test_start_position_id() -> None:
    assert position_id(Position.start()) == "4HPwATDgc/ABMA"
    assert position_from_id("4HPwATDgc/ABMA") == Position.start()


def test_position_id_writes_the_side_not_on_roll_first() -> None:
    """Values gnubg.positionid() gave for (not on roll, on roll) boards, whatever the manual says."""
    on_bar = Position(mover=(0,) * 24 + (1,), opponent=(0,) * 25)
    assert position_id(on_bar) == "AAAAAAAAAgAAAA"
    assert position_id(Position(mover=(15,) + (0,) * 24, opponent=(2,) + (0,) * 24)) == "AwAA+P8DAAAAAA"
    assert position_from_id("AAAAAAAAAgAAAA") == on_bar


def test_known_match_id_from_the_spec() -> None:
    state = match_id_state("cAkAAAAAAAAA")
    assert state == MatchIdState(player_on_roll=1, turn=1, jacoby=True)
    assert match_id(state) == "cAkAAAAAAAAA"


@pytest.mark.parametrize(("commands", "state", "mid"), MATCH_CASES)
def test_match_ids_as_gnubg_wrote_them(commands: list[str], state: MatchIdState, mid: str) -> None:
    assert match_id(state) == mid
    assert match_id_state(mid) == state


def test_dice_are_kept_higher_first() -> None:
    assert MatchIdState(dice=(2, 5)).dice == (5, 2)
    assert match_id(MatchIdState(dice=(2, 5))) == match_id(MatchIdState(dice=(5, 2)))


def test_every_id_in_the_gnubg_data_file_round_trips() -> None:
    """The data file holds thousands of Position IDs that gnubg wrote; we must read and rewrite them."""
    ids = {
        word for line in DATA.read_text().splitlines() if not line.startswith("#") for word in line.split()
    }
    ids -= {"->", *"123456"}
    assert len(ids) > 10_000
    for pid in ids:
        assert position_id(position_from_id(pid)) == pid


sides = st.lists(st.integers(0, 24), max_size=15).map(lambda slots: tuple(slots.count(i) for i in range(25)))


@st.composite
def positions(draw: st.DrawFn) -> Position:
    mover = draw(sides)
    opponent = list(draw(sides))
    for point in range(24):
        if mover[point]:
            opponent[23 - point] = 0
    return Position(mover=mover, opponent=tuple(opponent))


@given(positions())
def test_position_id_round_trips(position: Position) -> None:
    pid = position_id(position)
    assert len(pid) == 14
    assert position_from_id(pid) == position


@st.composite
def match_states(draw: st.DrawFn) -> MatchIdState:
    length = draw(st.integers(0, 64))
    die = st.integers(1, 6)
    return MatchIdState(
        cube_value=2 ** draw(st.integers(0, 15)),
        cube_owner=draw(st.sampled_from([0, 1, None])),
        player_on_roll=draw(st.integers(0, 1)),
        crawford=bool(length) and draw(st.booleans()),
        game_state=draw(st.sampled_from(GameState)),
        turn=draw(st.integers(0, 1)),
        double_offered=draw(st.booleans()),
        resignation_offered=draw(st.integers(0, 3)),
        dice=draw(st.one_of(st.just((0, 0)), st.tuples(die, die))),
        match_length=length,
        score=draw(st.tuples(st.integers(0, length or 5000), st.integers(0, length or 5000))),
        jacoby=draw(st.booleans()),
    )


@given(match_states())
def test_match_id_round_trips(state: MatchIdState) -> None:
    mid = match_id(state)
    assert len(mid) == 12
    assert match_id_state(mid) == state


@pytest.mark.parametrize(
    "pid",
    [
        "",
        "4HPwATDgc/ABM",
        "4HPwATDgc/ABMAA",
        "4HPwATDgc/AB*A",
        "4HPwATDgc/ABMB",  # stray bits beyond the 80
        "/////////////w",  # all 80 bits set: far too many checkers
        "//////////////",  # stray bits beyond the 80
        "AAAA//8AAAAAAA",  # 16 checkers on one point
        "4HPwATDgc/ABMg",  # a 16th checker for the player on roll
        "AAAAAAAAAAAAAA=",
    ],
)
def test_bad_position_ids_are_refused(pid: str) -> None:
    with pytest.raises(ValueError, match="Position ID"):
        position_from_id(pid)


def test_a_point_held_by_both_players_is_refused() -> None:
    clash = _raw_position_id(opponent=(0,) * 23 + (1, 0), mover=(1,) + (0,) * 24)
    with pytest.raises(ValueError, match="both players"):
        position_from_id(clash)


def test_raw_encoding_agrees_with_position_id() -> None:
    """Keeps the independent bit-string encoder of these tests honest."""
    start = Position.start()
    assert _raw_position_id(start.opponent, start.mover) == position_id(start)


@pytest.mark.parametrize(
    "key",
    [
        1 << 8 | 1 << 70,  # a bit beyond the 67 used
        1 << 8 | 2 << 4,  # cube owner 2
        5 << 8,  # game state 5
        1 << 8 | 7 << 15 | 1 << 18,  # a die of 7
        1 << 8 | 1 << 7,  # Crawford game in money play
        1 << 8 | 3 << 21 | 4 << 36,  # a score above the match length
    ],
)
def test_bad_match_ids_are_refused(key: int) -> None:
    with pytest.raises(ValueError, match="Match ID"):
        match_id_state(base64.b64encode(key.to_bytes(9, "little")).decode())


@pytest.mark.parametrize("mid", ["cAkAAAAAAAA", "cAkAAAAAAAA!", "cAkAAAAAAAAAA", "cAkAAAAAAA=="])
def test_malformed_match_ids_are_refused(mid: str) -> None:
    with pytest.raises(ValueError, match="Match ID"):
        match_id_state(mid)


@pytest.mark.gnubg
def test_position_ids_equal_gnubgs() -> None:
    rng = random.Random(4711)
    boards = [_random_board(rng) for _ in range(500)]
    expected = gnubg_oracle.position_ids(boards)
    ours = [position_id(Position(mover=mover, opponent=opponent)) for opponent, mover in boards]
    assert ours == expected


@pytest.mark.gnubg
def test_match_ids_equal_gnubgs() -> None:
    """gnubg builds each state from commands; its IDs must be those we compute for the state."""
    shown = gnubg_oracle.identifiers_after([commands for commands, _, _ in MATCH_CASES])
    assert [mid for _, mid in shown] == [match_id(state) for _, state, _ in MATCH_CASES]


def _random_board(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(not on roll, on roll) with random checkers anywhere, bars included, points not shared."""
    opponent, mover = [0] * 25, [0] * 25
    for _ in range(rng.randint(0, 15)):
        mover[rng.randrange(25)] += 1
    for _ in range(rng.randint(0, 15)):
        slot = rng.randrange(25)
        if slot == 24 or not mover[23 - slot]:
            opponent[slot] += 1
    return tuple(opponent), tuple(mover)


def _raw_position_id(opponent: tuple[int, ...], mover: tuple[int, ...]) -> str:
    """gnubg's encoding written out plainly (ones per checker, a zero per slot), unvalidated."""
    bits = "".join("1" * n + "0" for n in opponent + mover)
    return base64.b64encode(int(bits[::-1], 2).to_bytes(10, "little")).decode().rstrip("=")
