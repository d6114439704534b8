"""`pbem rules legal` as an operator runs it: a subprocess fed the gnubg data file (SPEC section 5)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pbem.cli.rules import parse_legal_query

DATA = Path(__file__).resolve().parent / "data" / "legal_plays.txt"
COMMAND = [sys.executable, "-m", "pbem.cli", "rules", "legal"]
START = "4HPwATDgc/ABMA"


def data_cases() -> list[tuple[str, str]]:
    """(input line, expected output line) pairs from the gnubg-written data file."""
    pairs = []
    for line in DATA.read_text().splitlines():
        if not line.startswith("#"):
            query, _, answer = line.partition(" ->")
            pairs.append((query, answer.strip()))
    return pairs


def run(stdin: str, command: list[str] = COMMAND) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, check=False, input=stdin, capture_output=True, text=True, timeout=120)


def test_answers_the_whole_data_file_exactly() -> None:
    pairs = data_cases()
    done = run("".join(query + "\n" for query, _ in pairs))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == "".join(answer + "\n" for _, answer in pairs)
    assert any(answer == "" for _, answer in pairs), "the data should include rolls with no move"


def test_the_installed_pbem_script_runs_it() -> None:
    script = Path(sys.executable).parent / "pbem"
    done = run(f"{START} 3 1\n", [str(script), "rules", "legal"])
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.split()) == 16


def test_streams_one_answer_per_line_before_reading_more() -> None:
    """A co-process gets each answer while its next question is not yet written."""
    pairs = data_cases()[:20]
    with subprocess.Popen(COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdin and process.stdout
        for query, answer in pairs:
            process.stdin.write(query + "\n")
            process.stdin.flush()
            assert process.stdout.readline() == answer + "\n"
        process.stdin.close()
        assert process.wait(timeout=30) == 0


def test_extra_spaces_and_blank_lines_are_tolerated() -> None:
    done = run(f"\n  {START}   6 6  \n\n")
    assert done.returncode == 0
    assert done.stdout.count("\n") == 1 and len(done.stdout.split()) == 11


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        (f"{START} 7 1", "dice"),
        (f"{START} 0 3", "dice"),
        (f"{START} 3", "POSITION_ID D1 D2"),
        (f"{START} 3 1 extra", "POSITION_ID D1 D2"),
        ("4HPwATDgc/AB 3 1", "Position ID"),
        ("////////////// 3 1", "Position ID"),
    ],
)
def test_a_malformed_line_stops_with_status_2_after_the_earlier_answers(bad_line: str, message: str) -> None:
    good = data_cases()[:2]
    done = run("".join(query + "\n" for query, _ in good) + bad_line + "\n" + f"{START} 3 1\n")
    assert done.returncode == 2
    assert done.stdout == "".join(answer + "\n" for _, answer in good)
    assert "line 3" in done.stderr and message in done.stderr


def test_help_explains_the_format_and_the_error_policy() -> None:
    done = subprocess.run([*COMMAND, "--help"], check=False, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    assert "POSITION_ID D1 D2" in done.stdout and "exit status is 2" in done.stdout


def test_parse_legal_query() -> None:
    assert parse_legal_query(f"{START} 5 2\n") == (START, (5, 2))
    with pytest.raises(ValueError):
        parse_legal_query(f"{START} 5 ２")
