"""Issue 36, backups: ``pbem backup`` copies the database consistently while another connection
writes, ``pbem db upgrade`` takes one first, and ``pbem restore`` brings a backup back: the
restored service applies every mail that came after the backup once more, as docs/operators.md
says, and the games end where they were before the restore."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from post_office import Player, PostOffice, invite_and_accept  # noqa: E402

from pbem.cli import main  # noqa: E402
from pbem.config import load_config  # noqa: E402
from pbem.daemon.scheduler import sqlite_daemon_lock  # noqa: E402

from test_migrations import SCHEMA_1, _installation  # noqa: E402


def _steps(office: PostOffice, players: tuple[Player, Player], match_id: int, count: int) -> None:
    """The player who must act answers the last mail of the game, ``count`` times."""
    for _ in range(count):
        table = office.table(match_id)
        assert table.game is not None and table.game.to_act is not None
        seat = table.game.to_act
        last = players[seat].last_of(table.token(seat))
        assert last is not None
        command = players[seat].next_command(seat, last)
        assert command is not None
        players[seat].reply(command, to=last)


@pytest.mark.sqlite_only
def test_a_backup_taken_while_another_connection_writes_restores_and_the_later_mails_are_applied_again(
        config_file, config, capsys):
    office = PostOffice(config)  # the service's own dice: a mail applied again rolls what it rolled
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org match 3")
    _steps(office, (anna, ben), match_id, 3)
    database = config.data_dir / "pbem.db"
    writer = sqlite3.connect(database)
    writer.execute("BEGIN IMMEDIATE")  # the daemon, in the middle of applying a mail
    writer.execute("UPDATE players SET name = 'half applied'")
    backup = config.data_dir.parent / "backup.db"
    assert main(["backup", str(backup), "--config", str(config_file)]) == 0
    assert f"written to {backup}" in capsys.readouterr().out
    writer.rollback()
    writer.close()
    at_backup = office.snapshot()
    with sqlite3.connect(backup) as copy:
        assert copy.execute("SELECT count(*) FROM players WHERE name = 'half applied'").fetchone() == (0,)

    _steps(office, (anna, ben), match_id, 4)
    later = office.snapshot()
    assert later != at_backup
    with sqlite_daemon_lock(config):  # a daemon running: nothing is touched
        assert main(["restore", str(backup), "--config", str(config_file)]) == 2
        assert "stop it first" in capsys.readouterr().err
    office.engine.dispose()
    assert main(["restore", str(backup), "--config", str(config_file)]) == 0
    said = capsys.readouterr().out
    assert "4 mails applied since the backup put back into the inbox" in said
    assert "the database it replaced is kept at" in said

    restored = PostOffice(load_config(config_file))
    assert restored.snapshot() == at_backup
    restored.players.extend((anna, ben))
    restored.file(restored.run())
    assert restored.snapshot() == later  # the same moves and rolls, in the order they came
    _steps(restored, (anna, ben), match_id, 2)  # and play goes on from the newest mails
    restored.engine.dispose()


@pytest.mark.sqlite_only
def test_db_upgrade_backs_the_database_up_first_and_says_where(tmp_path, capsys):
    config_file = _installation(SCHEMA_1 / "pbem.db", tmp_path)
    assert main(["db", "upgrade", "--config", str(config_file)]) == 0
    said = capsys.readouterr().out
    (backup,) = (tmp_path / "data" / "backups").iterdir()
    assert backup.name.startswith("pbem-0001-") and f"backup of revision 0001 written to {backup}" in said
    assert (backup.read_bytes()[:16], sqlite3.connect(backup).execute("SELECT max(version) FROM schema_version")
            .fetchone()) == (b"SQLite format 3\x00", (1,))
    assert main(["db", "upgrade", "--config", str(config_file)]) == 0  # nothing to do: no second backup
    assert len(list((tmp_path / "data" / "backups").iterdir())) == 1


@pytest.mark.postgresql_only
def test_on_postgresql_backup_says_how_pg_dump_does_it_after_checking_the_connection(config_file, engine, capsys):
    assert main(["backup", "--config", str(config_file)]) == 1
    said = capsys.readouterr().out
    assert "pg_dump --format=custom --file=FILE --host=127.0.0.1" in said and "answers" in said


@pytest.mark.sqlite_only
def test_restore_refuses_a_file_that_is_no_pbem_backup_and_changes_nothing(config_file, config, engine, capsys):
    database = config.data_dir / "pbem.db"
    engine.dispose()
    before = database.read_bytes()
    for name, content in (("text.db", b"not a database at all, but long enough to be read as one" * 100),
                          ("other.db", None)):
        path = config.data_dir.parent / name
        if content is None:
            with sqlite3.connect(path) as other:
                other.execute("CREATE TABLE notes (text TEXT)")
        else:
            path.write_bytes(content)
        assert main(["restore", str(path), "--config", str(config_file)]) == 2
        assert "nothing was restored" in capsys.readouterr().err
    assert database.read_bytes() == before
    assert not [path for path in config.data_dir.iterdir() if "restor" in path.name]  # nothing moved aside
