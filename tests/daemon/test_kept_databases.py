"""Issue 36: no migration may strand an old installation.  ``tests/data/`` keeps a database made
by the code of every schema revision (``schema1/``: 0001, the first releases; ``revisionNNNN/``: 0003
to today's head, 0010 never existed), each with live games: one with the cube turned, a match in its
second game, a game against the Assistant, an open invitation, a player who writes German, one on
vacation, a finished game (``schema1/`` has no Assistant game and no vacation); and the last mail the
old version sent each waiting player.  Each is upgraded to the newest revision, and every waiting
player answers that old mail.  A directory ``tests/data/revisionNNNN/`` is found by its name: a
database kept for a new revision needs no edit here."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from post_office import LoadedDice, Player, PostOffice, text_of  # noqa: E402

from pbem.cli import main  # noqa: E402
from pbem.config import load_config  # noqa: E402
from pbem.store.db import head_revision  # noqa: E402

from test_migrations import _differences_from_the_models, _installation, _kept_mail  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
KEPT = {"0001": DATA / "schema1"} | {kept.name.removeprefix("revision"): kept
                                     for kept in DATA.glob("revision[0-9][0-9][0-9][0-9]")}


@pytest.mark.sqlite_only
@pytest.mark.parametrize("revision", sorted(KEPT))
def test_a_kept_database_is_upgraded_and_every_waiting_player_answers_the_old_versions_last_mail(
        revision, tmp_path, capsys):
    kept = KEPT[revision]
    config_file = _installation(kept / "pbem.db", tmp_path)
    database = tmp_path / "data" / "pbem.db"
    with sqlite3.connect(database) as connection:
        vacations = connection.execute("SELECT address FROM players WHERE vacation_until IS NOT NULL").fetchall() \
            if revision != "0001" else []
    assert main(["db", "upgrade", "--config", str(config_file)]) == 0
    assert (f"from revision {revision} to {head_revision()}" if revision != head_revision()
            else f"at revision {revision}") in capsys.readouterr().out
    assert _differences_from_the_models(database) == []

    office = PostOffice(load_config(config_file), LoadedDice(seed=3))
    players: dict[str, Player] = {}
    for waiting in json.loads((kept / "waiting.json").read_text("utf-8")):
        player = players.setdefault(waiting["address"], Player(office, waiting["address"], waiting["name"]))
        mail = _kept_mail(kept, waiting["mail"])
        command = waiting["command"] or player.next_command(waiting["seat"], mail)
        assert command is not None, text_of(mail)
        before = office.snapshot()
        sent = player.reply(command, to=mail)
        answers = [text_of(answer) for answer in sent]
        assert office.snapshot() != before, answers
        assert any("Position ID:" in answer for answer in answers), answers

    (answer,) = Player(office, "dora@example.org", "Dora").write("games")  # her language kept
    assert "Sie" in text_of(answer) and "Backgammon by Mail: antworten Sie" in text_of(answer)
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT count(*) FROM finished_games").fetchone() >= (1,)
        assert connection.execute("SELECT address FROM players WHERE vacation_until IS NOT NULL").fetchall() \
            == vacations
    assert revision == "0001" or vacations == [("ben@example.org",)]
