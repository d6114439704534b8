"""Legal plays agree with GNU Backgammon: a committed perft-style file, then the live program.

tests/data/legal_plays.txt was written by gnubg (tests/data/make_legal_plays.py); the live test
plays fresh seeded random games and asks one gnubg process about all of their positions.
"""

from __future__ import annotations

import random
from pathlib import Path

import gnubg_oracle
import pytest

from pbem.rules.gnubg_ids import legal_position_ids, position_from_id, position_id
from pbem.rules.moves import apply_play, legal_plays
from pbem.rules.position import Position

DATA = Path(__file__).resolve().parents[1] / "data" / "legal_plays.txt"
LIVE_SEED = 1_000_003
LIVE_COUNT = 2_000

Case = tuple[str, int, int, list[str]]


def read_cases(path: Path) -> list[Case]:
    """``POSITION_ID D1 D2 -> IDS`` lines; ``#`` starts a comment line."""
    cases = []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            continue
        query, arrow, answer = line.partition(" ->")
        pid, die1, die2 = query.split()
        assert arrow, f"no '->' in {line!r}"
        cases.append((pid, int(die1), int(die2), answer.split()))
    return cases


def disagreements(cases: list[Case]) -> list[str]:
    """A readable line for every case where our legal positions differ from the expected ones."""
    report = []
    for pid, die1, die2, expected in cases:
        ours = legal_position_ids(pid, (die1, die2))
        if ours != expected:
            missing, extra = sorted(set(expected) - set(ours)), sorted(set(ours) - set(expected))
            report.append(f"{pid} {die1}{die2}: missing {missing}, not legal {extra}")
    return report


def test_the_data_file_covers_the_hard_cases() -> None:
    cases = read_cases(DATA)
    movers = [position_from_id(pid) for pid, *_ in cases]
    assert len(cases) >= 2_000
    assert sum(position.mover[24] >= 2 for position in movers) >= 300
    assert sum(position.mover_can_bear_off() for position in movers) >= 300
    assert sum(die1 == die2 for _, die1, die2, _ in cases) >= 300
    assert sum(not answer for *_, answer in cases) >= 50


def test_legal_plays_agree_with_the_gnubg_data_file() -> None:
    problems = disagreements(read_cases(DATA))
    assert not problems, f"{len(problems)} disagreements with gnubg, e.g.:\n" + "\n".join(problems[:10])


def test_a_wrong_expectation_is_reported() -> None:
    """The comparison itself can fail: one dropped and one foreign ID are both named."""
    pid, die1, die2, answer = read_cases(DATA)[0]
    wrong = [*answer[1:], "4HPwATDgc/ABMA"]
    (problem,) = disagreements([(pid, die1, die2, sorted(wrong))])
    assert answer[0] in problem and "4HPwATDgc/ABMA" in problem


def test_a_missing_gnubg_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gnubg_oracle, "GNUBG_CANDIDATES", ("/nonexistent/gnubg",))
    with pytest.raises(RuntimeError, match="apt-get install gnubg"):
        gnubg_oracle.legal_results([("4HPwATDgc/ABMA", 3, 1)])


def test_each_play_reaches_its_position() -> None:
    for pid, die1, die2, _ in read_cases(DATA)[:500]:
        position = position_from_id(pid)
        for result, play in legal_plays(position, (die1, die2)).items():
            assert apply_play(position, play) == result, f"{pid} {die1}{die2}: {play}"


@pytest.mark.gnubg
def test_legal_plays_agree_with_gnubg_on_fresh_random_games() -> None:
    """A new corpus each seed; one gnubg process answers all of it (fails if gnubg is missing)."""
    corpus = gnubg_oracle.random_queries(
        random.Random(LIVE_SEED),
        LIVE_COUNT,
        lambda pid, die1, die2: legal_position_ids(pid, (die1, die2)),
        _board,
        _board_id,
    )
    expected = gnubg_oracle.legal_results((pid, die1, die2) for pid, die1, die2, _ in corpus)
    cases = [(pid, die1, die2, answer) for (pid, die1, die2, _), answer in zip(corpus, expected, strict=True)]
    assert len(cases) >= 2_000
    problems = disagreements(cases)
    assert not problems, f"{len(problems)} disagreements with gnubg, e.g.:\n" + "\n".join(problems[:10])


def _board(pid: str) -> gnubg_oracle.Board:
    position = position_from_id(pid)
    return position.opponent, position.mover


def _board_id(board: gnubg_oracle.Board) -> str:
    opponent, mover = board
    return position_id(Position(mover=tuple(mover), opponent=tuple(opponent)))
