"""Reading the ladder commands (pbem.commands): English and German, and what stays a note."""

from __future__ import annotations

import pytest

from pbem.commands import (CommandError, LadderChallenge, LadderJoin, LadderLeave, LadderNew, LadderShow, Note,
                           parse_commands, written_in)


@pytest.mark.parametrize(("line", "command"), [
    ("ladder", LadderShow()),
    ("Leiter", LadderShow()),
    ("ladder Club", LadderShow("club")),
    ("ladder join club", LadderJoin("club")),
    ("Leiter beitreten Sommer-2026", LadderJoin("sommer-2026")),
    ("ladder new club", LadderNew("club")),
    ("ladder new club match 7 reach 2 days 3", LadderNew("club", 7, 2, 3)),
    ("leiter neu club tage 2 partie 3 reichweite 4", LadderNew("club", 3, 4, 2)),
    ("ladder challenge ben@example.org", LadderChallenge(None, "ben@example.org")),
    ("ladder challenge club 2", LadderChallenge("club", "2")),
    ("ladder challenge club #2", LadderChallenge("club", "2")),
    ("leiter fordern club <Ben@Example.org>", LadderChallenge("club", "ben@example.org")),
    ("ladder leave club", LadderLeave("club")),
    ("leiter verlassen club.", LadderLeave("club")),
    ("ladder join Thursday Club", LadderJoin("thursday-club")),
    ("Leiter beitreten Donnerstag  Club", LadderJoin("donnerstag-club")),
    ("ladder new Thursday Club match 3", LadderNew("thursday-club", 3)),
    ("ladder challenge Thursday Club 2", LadderChallenge("thursday-club", "2")),
    ("leiter fordern Donnerstag Club ben@example.org", LadderChallenge("donnerstag-club", "ben@example.org")),
    ("ladder leave Thursday Club", LadderLeave("thursday-club")),
])
def test_ladder_commands(line: str, command: object) -> None:
    assert parse_commands(line) == [command]


@pytest.mark.parametrize(("line", "code", "details"), [
    ("ladder join", "ladder-name", ""),
    ("ladder join new", "ladder-name", "new"),
    ("ladder join a_b", "ladder-name", "a_b"),
    ("ladder join " + "x" * 31, "ladder-name", "x" * 31),
    ("ladder new club match 99", "ladder-option", "match 99"),
    ("ladder new club reach", "ladder-option", "reach"),
    ("ladder new club clock 3d", "ladder-option", "clock 3d"),
    ("ladder join Thursday Club " + "x" * 20, "ladder-name", "Thursday Club ".lower() + "x" * 20),
    ("ladder challenge Thursday C_ub 2", "ladder-name", "thursday c_ub 2"),
    ("ladder challenge club xyz", "ladder-opponent", "xyz"),
    ("ladder challenge club 0", "ladder-opponent", "0"),
    ("ladder challenge", "ladder-opponent", ""),
])
def test_ladder_errors(line: str, code: str, details: str) -> None:
    (error,) = parse_commands(line)
    assert isinstance(error, CommandError) and (error.code, error.details) == (code, details)


def test_a_sentence_beginning_with_the_word_stays_a_note() -> None:
    assert parse_commands("Leiter der Gruppe ist Karl") == [Note("Leiter der Gruppe ist Karl")]
    assert parse_commands("Ladder matches are fun") == [Note("Ladder matches are fun")]


def test_the_keyword_tells_the_language() -> None:
    assert written_in("leiter club") == "de" and written_in("ladder club") == "en"
