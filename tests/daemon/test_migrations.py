"""Migrations: a database written by pbem at schema 2, before migrations (tests/data/schema2,
made by make_schema2_db.py with that version's code), is refused by the daemon with a message
naming `pbem db upgrade`, upgrades in place keeping every row, and plays on."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from post_office import LoadedDice, Player, PostOffice, recipient, text_of  # noqa: E402

from pbem.cli import main  # noqa: E402
from pbem.config import load_config  # noqa: E402
from pbem.mail.local_client import compose_mail  # noqa: E402
from alembic.script import ScriptDirectory  # noqa: E402

from pbem.store.db import MIGRATIONS, head_revision, import_model_modules, make_engine  # noqa: E402

SCHEMA_2 = Path(__file__).resolve().parents[1] / "data" / "schema2" / "pbem.db"
KEPT = {
    "players": "SELECT address, name, language, numbering, rating_casual, experience_casual, rating_match "
               "FROM players ORDER BY id",
    "matches": "SELECT id, status, score, game, game_number, deadline_at FROM matches ORDER BY id",
    "finished_games": "SELECT match_id, number, game FROM finished_games ORDER BY id",
    "inbound_mail": "SELECT message_id, sender, state, raw FROM inbound_mail ORDER BY id",
    "outbound_mail": "SELECT message_id, recipients, raw, sent_at FROM outbound_mail ORDER BY id",
}
SEATS_BEFORE = " UNION ALL ".join(
    f"SELECT id, {n}, player{n}_id, token{n}, thread{n}, notes{n}, bank{n} FROM matches" for n in (0, 1)
) + " ORDER BY 1, 2"
SEATS_AFTER = "SELECT match_id, number, player_id, token, thread, notes, bank FROM seats ORDER BY 1, 2"


def _rows(path: Path, seats: str) -> dict[str, list[tuple]]:
    with sqlite3.connect(path) as database:
        rows = {table: database.execute(query).fetchall() for table, query in KEPT.items()}
        rows["seats"] = database.execute(seats).fetchall()
        return rows


def _differences_from_the_models(path: Path) -> list:
    """What Alembic's autogenerate finds between the database and the models (legacy table aside)."""
    import_model_modules()
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return [difference for difference in compare_metadata(context, SQLModel.metadata)
                    if not (difference[0] == "remove_table" and difference[1].name == "schema_version")]
    finally:
        engine.dispose()


@pytest.fixture
def old_database(tmp_path):
    path = tmp_path / "data" / "pbem.db"
    path.parent.mkdir()
    shutil.copyfile(SCHEMA_2, path)
    config_file = tmp_path / "pbem.toml"
    config_file.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{tmp_path / "data"}"\n',
                           "utf-8")
    return path, config_file


@pytest.mark.sqlite_only
def test_a_schema_2_database_is_refused_then_upgraded_keeping_every_row_and_plays_on(old_database, capsys):
    path, config_file = old_database
    before = _rows(path, SEATS_BEFORE)
    assert all(before.values()), "the data file holds rows of every kind"
    for command in (["games"], ["serve"]):
        assert main([*command, "--config", str(config_file)]) == 2
        assert "run `pbem db upgrade`" in capsys.readouterr().err
    assert main(["db", "status", "--config", str(config_file)]) == 1
    assert main(["db", "upgrade", "--config", str(config_file)]) == 0
    assert f"from revision 0002 to {head_revision()}" in capsys.readouterr().out
    assert _rows(path, SEATS_AFTER) == before
    assert main(["db", "status", "--config", str(config_file)]) == 0
    assert main(["db", "upgrade", "--config", str(config_file)]) == 0  # again: nothing to do
    assert _differences_from_the_models(path) == []
    with sqlite3.connect(path) as connection:  # issue 20: mails only when a player must act, forced plays played
        settings = connection.execute("SELECT DISTINCT copies, automove, greedy FROM players").fetchall()
        news = connection.execute("SELECT DISTINCT news FROM seats").fetchall()
    assert settings == [(0, 1, 0)] and news == [("[]",)]
    with sqlite3.connect(path) as connection:  # revision 0020: Anna's 1490 and Ben's 1510 counted
        counts = connection.execute("SELECT kind, band, players FROM rating_counts ORDER BY band").fetchall()
    assert counts == [("casual", 186, 1), ("casual", 188, 1)]

    config = load_config(config_file)
    office = PostOffice(config, LoadedDice(seed=3))
    ben = Player(office, "ben@example.org", "Ben")
    running_token = next(token for match_id, number, _, token, *_ in before["seats"] if (match_id, number) == (2, 1))
    (answer,) = ben.post(compose_mail(ben.sender, f"backgammon+{running_token}@localhost", "Re: game", "board\n"))
    assert "Position ID:" in text_of(answer) and "Anna" in text_of(answer)
    old_mail = before["inbound_mail"][0]
    (config.inbox_dir / "new" / "again").write_bytes(old_mail[3])
    assert office.run() == []  # a mail applied before the upgrade is not applied again


def test_the_head_revision_the_program_names_is_the_newest_migration():
    assert head_revision() == ScriptDirectory(str(MIGRATIONS)).get_current_head()


RAW_STORAGE = ("SELECT attrelid::regclass::text, attcompression, attstorage FROM pg_attribute "
               "WHERE attname = 'raw' AND attrelid IN ('inbound_mail'::regclass, 'outbound_mail'::regclass) ORDER BY 1")


@pytest.mark.postgresql_only
def test_raw_mails_are_stored_with_lz4_on_postgresql_new_and_upgraded(postgres):
    """pglz spent 2 ms of the server on every answer with a picture (issue 12, throughput)."""
    from sqlalchemy import text

    from pbem.store.db import create_schema, upgrade_schema

    fast = [("inbound_mail", "l", "x"), ("outbound_mail", "l", "x")]
    engine = make_engine(postgres.new_database())
    create_schema(engine)
    with engine.connect() as connection:
        assert [tuple(row) for row in connection.execute(text(RAW_STORAGE))] == fast
    with engine.begin() as connection:
        before = back_to_before_0011(connection)
    assert upgrade_schema(engine) == (before, head_revision())
    with engine.connect() as connection:
        assert [tuple(row) for row in connection.execute(text(RAW_STORAGE))] == fast
    engine.dispose()


def back_to_before_0011(connection) -> str:
    """Turn a PostgreSQL database of the newest revision back into one of the revision before
    0011 (which it returns): what 0011 to the newest add is taken away again."""
    from sqlalchemy import text

    before = ScriptDirectory(str(MIGRATIONS)).get_revision("0011").down_revision
    assert isinstance(before, str)
    for table in ("inbound_mail", "outbound_mail"):  # as the revision before 0011 left it: the server's default, pglz
        connection.execute(text(f"ALTER TABLE {table} ALTER COLUMN raw SET COMPRESSION pglz"))
    for added_later in ("players DROP COLUMN automove", "players DROP COLUMN greedy", "seats DROP COLUMN news",
                        "players DROP COLUMN page_token", "players DROP COLUMN bounces",
                        "players DROP COLUMN unsubscribe_token",
                        "outbound_mail DROP COLUMN bounce_tag", "matches DROP COLUMN tournament_id",
                        "matches DROP COLUMN tournament_round", "matches DROP COLUMN tournament_index",
                        "matches DROP COLUMN ladder_id", "account_confirmations DROP COLUMN invited_by",
                        "matches DROP COLUMN assistant_level"):
        connection.execute(text(f"ALTER TABLE {added_later}"))  # what 0012 (fewer mails) to 0018, and 0024, add
    for table in ("delivery_failures", "tournament_entries", "tournaments", "ladders", "watchers", "match_watch",
                  "rating_counts", "rating_history"):
        connection.execute(text(f"DROP TABLE {table}"))
    _indexes_before_0020(connection)
    connection.execute(text("DROP INDEX ix_outbound_mail_unsent"))  # 0021
    connection.execute(text(f"UPDATE alembic_version SET version_num = '{before}'"))
    return before


def _indexes_before_0020(connection) -> None:
    """The indexes revision 0020 replaces, in place of its own."""
    from sqlalchemy import text

    connection.execute(text("DROP INDEX ix_inbound_mail_unpruned"))
    connection.execute(text("CREATE INDEX ix_inbound_mail_pruned_at ON inbound_mail (pruned_at)"))
    for kind in ("match", "casual", "prize"):
        connection.execute(text(f"DROP INDEX ix_players_rated_{kind}"))
        connection.execute(text(f"CREATE INDEX ix_players_rating_{kind} ON players (rating_{kind}, experience_{kind})"))


def test_revision_0020_counts_the_rated_players_and_slims_the_pruned_mails(engine):
    """Issue 23, growth: the ``ratings`` answer's kept counts made from the players, its indexes
    of everybody's ratings and the index of every pruned mail replaced by partial ones, and the
    pruned mails' sender, subject and reason emptied, as the retention job now leaves them."""
    from sqlalchemy import inspect, text

    from pbem.store.db import upgrade_schema

    with engine.begin() as connection:  # back to revision 0019, with rated players and mails
        connection.execute(text("DROP TABLE rating_counts"))
        connection.execute(text("ALTER TABLE watchers DROP COLUMN every_move"))  # what 0022 adds
        _indexes_before_0020(connection)
        connection.execute(text("DROP INDEX ix_outbound_mail_unsent"))  # 0021
        connection.execute(text("ALTER TABLE delivery_failures DROP COLUMN reason"))  # 0023
        connection.execute(text("ALTER TABLE matches DROP COLUMN assistant_level"))  # 0024
        connection.execute(text("DROP TABLE rating_history"))  # 0025
        connection.execute(text("UPDATE alembic_version SET version_num = '0019'"))
        for number, (casual, match) in enumerate(((1490.0, 0), (1510.0, 3), (1511.5, 5), (1500.0, 0))):
            connection.execute(text("INSERT INTO players (address, name, numbering, refuses_invitations, autoroll, "
                                    "copies, automove, greedy, bounces, created_at, rating_match, experience_match, "
                                    "rating_casual, experience_casual, rating_prize, experience_prize, "
                                    "vacation_days) VALUES (:address, '', 'own', false, false, false, true, false, 0, "
                                    "'2030-01-01', 1500, :match, :casual, :experience, 1500, 0, '{}')"),
                               {"address": f"p{number}@example.org", "casual": casual, "match": match,
                                "experience": 0 if casual == 1500.0 else 1})
        for number, pruned in enumerate((None, "2030-02-01")):
            connection.execute(text("INSERT INTO inbound_mail (message_id, sender, subject, raw, received_at, state, "
                                    "reason, processed_at, pruned_at) VALUES (:id, 'anna@example.org', 'Re: game', "
                                    ":raw, '2030-01-01', 'applied', 'why', '2030-01-01', :pruned)"),
                               {"id": f"<{number}@example.org>", "raw": b"" if pruned else b"mail", "pruned": pruned})
    assert upgrade_schema(engine) == ("0019", head_revision())
    with engine.connect() as connection:
        counts = connection.execute(text("SELECT kind, band, players FROM rating_counts ORDER BY kind, band")).all()
        mails = connection.execute(text("SELECT sender, subject, reason FROM inbound_mail ORDER BY message_id")).all()
    assert [tuple(row) for row in counts] == [("casual", 186, 1), ("casual", 188, 2), ("match", 187, 2)]
    assert [tuple(row) for row in mails] == [("anna@example.org", "Re: game", "why"), ("", "", "")]
    indexes = {index["name"] for table in ("players", "inbound_mail") for index in inspect(engine).get_indexes(table)}
    assert {"ix_players_rated_prize", "ix_inbound_mail_unpruned"} <= indexes
    assert not {"ix_players_rating_prize", "ix_inbound_mail_pruned_at"} & indexes


def test_revision_0021_indexes_the_unsent_mails_by_match(engine):
    """Issue 33: an answer about a match waits for the earlier unsent mails of its conversation,
    found by a partial index of the unsent mails, not by reading every mail of the match."""
    from sqlalchemy import inspect, text

    from pbem.store.db import upgrade_schema

    with engine.begin() as connection:
        connection.execute(text("DROP INDEX ix_outbound_mail_unsent"))
        connection.execute(text("ALTER TABLE watchers DROP COLUMN every_move"))  # what 0022 adds
        connection.execute(text("ALTER TABLE delivery_failures DROP COLUMN reason"))  # 0023
        connection.execute(text("ALTER TABLE matches DROP COLUMN assistant_level"))  # 0024
        connection.execute(text("DROP TABLE rating_history"))  # 0025
        connection.execute(text("UPDATE alembic_version SET version_num = '0020'"))
    assert upgrade_schema(engine) == ("0020", head_revision())
    (index,) = [index for index in inspect(engine).get_indexes("outbound_mail")
                if index["name"] == "ix_outbound_mail_unsent"]
    assert index["column_names"] == ["match_id"]


def test_revision_0022_keeps_the_watchers_of_before_on_every_move(engine):
    """Issue 33: a watcher chooses one mail per game (the default) or one after each move; who
    watched before the choice existed signed up for a mail after each move and keeps it."""
    from sqlalchemy import text
    from sqlmodel import Session, select

    from pbem.store.db import upgrade_schema
    from pbem.store.game_records import MatchRecord
    from pbem.store.game_records import Player as PlayerRow
    from pbem.store.watching import Watcher

    with Session(engine) as session:
        carol, dave, match = PlayerRow(address="carol@example.org"), PlayerRow(address="dave@example.org"), \
            MatchRecord(score={})
        session.add_all((carol, dave, match))
        session.commit()
        ids = {"carol": carol.id, "dave": dave.id, "match": match.id}
    with engine.begin() as connection:  # back to revision 0021, with a watcher
        connection.execute(text("ALTER TABLE watchers DROP COLUMN every_move"))
        connection.execute(text("ALTER TABLE delivery_failures DROP COLUMN reason"))  # 0023
        connection.execute(text("ALTER TABLE matches DROP COLUMN assistant_level"))  # 0024
        connection.execute(text("DROP TABLE rating_history"))  # 0025
        connection.execute(text("UPDATE alembic_version SET version_num = '0021'"))
        connection.execute(text("INSERT INTO watchers (match_id, player_id, since) VALUES (:match, :carol, "
                                "'2030-01-01')"), ids)
    assert upgrade_schema(engine) == ("0021", head_revision())
    with Session(engine) as session:
        session.add(Watcher(match_id=ids["match"], player_id=ids["dave"]))
        session.commit()
        watching = {watcher.player_id: watcher.every_move for watcher in session.exec(select(Watcher)).all()}
    assert watching == {ids["carol"]: True, ids["dave"]: False}


def test_revision_0023_keeps_each_delivery_failures_reason(engine):
    """Issue 35: each delivery failure keeps its reason class; one recorded before has none."""
    from sqlalchemy import text

    from pbem.store.db import upgrade_schema

    with engine.begin() as connection:
        connection.execute(text("ALTER TABLE delivery_failures DROP COLUMN reason"))
        connection.execute(text("ALTER TABLE matches DROP COLUMN assistant_level"))  # 0024
        connection.execute(text("DROP TABLE rating_history"))  # 0025
        connection.execute(text("UPDATE alembic_version SET version_num = '0022'"))
        connection.execute(text("INSERT INTO delivery_failures (address, permanent, status, diagnostic, reported_at) "
                                "VALUES ('ben@example.net', true, '5.1.1', 'user unknown', '2030-01-01')"))
    assert upgrade_schema(engine) == ("0022", head_revision())
    with engine.connect() as connection:
        assert connection.execute(text("SELECT address, reason FROM delivery_failures")).all() == [
            ("ben@example.net", "")]


def test_revision_0024_leaves_the_older_matches_against_the_assistant_at_its_strongest(engine):
    """Issue 38: a match keeps the Assistant's level; one begun before has none, which the
    Assistant plays at its strongest, as it did."""
    from sqlalchemy import text

    from pbem.store.db import upgrade_schema

    with engine.begin() as connection:
        connection.execute(text("ALTER TABLE matches DROP COLUMN assistant_level"))
        connection.execute(text("DROP TABLE rating_history"))  # 0025
        connection.execute(text("UPDATE alembic_version SET version_num = '0023'"))
        connection.execute(text("INSERT INTO matches (version, status, options, score, game_number, created_at, "
                                "updated_at, alarms_given, dice_rolls) VALUES (1, 'playing', '{}', '{}', 1, "
                                "'2030-01-01', '2030-01-01', 0, 0)"))
    assert upgrade_schema(engine) == ("0023", head_revision())
    with engine.connect() as connection:
        assert connection.execute(text("SELECT assistant_level FROM matches")).all() == [(None,)]


def test_revision_0025_adds_the_rating_history_and_takes_it_away_again(engine):
    """Issue 38: the personal page's rating history, a table of its own read by player and kind;
    Alembic's downgrade takes it away, the upgrade brings it back empty (no backfill: the history
    starts with the upgrade) and the schema equals the models'."""
    from alembic import command
    from sqlalchemy import inspect, text

    from pbem.store.db import _alembic, upgrade_schema

    with engine.begin() as connection:
        command.downgrade(_alembic(connection), "0024")
    assert not inspect(engine).has_table("rating_history")
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO players (address, name, numbering, refuses_invitations, autoroll, "
                                "copies, automove, greedy, bounces, created_at, rating_match, experience_match, "
                                "rating_casual, experience_casual, rating_prize, experience_prize, vacation_days) "
                                "VALUES ('p@example.org', '', 'own', false, false, false, true, false, 0, "
                                "'2030-01-01', 1520, 5, 1500, 0, 1500, 0, '{}')"))
    assert upgrade_schema(engine) == ("0024", head_revision())
    engine.dispose()  # SQLite's PRAGMA index_list on a pooled connection may answer from the schema before
    (index,) = inspect(engine).get_indexes("rating_history")
    assert index["name"] == "ix_rating_history_player" and index["column_names"] == ["player_id", "kind", "id"]
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM rating_history")).scalar() == 0
        assert connection.execute(text("SELECT rating_match FROM players")).scalar() == 1520
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert [difference for difference in compare_metadata(context, SQLModel.metadata)
                if "rating_history" in repr(difference)] == []


SCHEMA_1 = Path(__file__).resolve().parents[1] / "data" / "schema1"


def _installation(database: Path, tmp_path: Path) -> Path:
    """A data directory holding a copy of ``database``, and its config file."""
    (tmp_path / "data").mkdir(parents=True)
    shutil.copyfile(database, tmp_path / "data" / "pbem.db")
    config_file = tmp_path / "pbem.toml"
    config_file.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{tmp_path / "data"}"\n',
                           "utf-8")
    return config_file


def _kept_mail(directory: Path, name: str) -> EmailMessage:
    return message_from_bytes((directory / f"{name}.eml").read_bytes(), policy=policy.default)  # type: ignore[return-value]


def _plays_on(office: PostOffice, player: Player, seat: int, mail: EmailMessage) -> list[EmailMessage]:
    """``player`` answers the last mail the old version sent them as a player reading it would
    (roll, take or the first legal move): the game goes on and the opponent is sent the board."""
    command = player.next_command(seat, mail)
    assert command is not None, text_of(mail)
    before = office.snapshot()
    sent = player.reply(command, to=mail)
    assert office.snapshot() != before, [text_of(answer) for answer in sent]
    to_opponent = [answer for answer in sent if recipient(answer) != player.address]
    assert to_opponent and f"{player.name} " in text_of(to_opponent[0]), [text_of(answer) for answer in sent]
    assert "Position ID:" in text_of(to_opponent[0])
    return sent


@pytest.mark.sqlite_only
def test_a_database_of_the_first_releases_is_upgraded_and_every_game_plays_on(tmp_path, capsys):
    """Issue 36: schema version 1 (the releases before revision 0002) was named "newer"."""
    config_file = _installation(SCHEMA_1 / "pbem.db", tmp_path)
    assert main(["db", "status", "--config", str(config_file)]) == 1
    assert "database at revision 0001" in capsys.readouterr().out
    assert main(["games", "--config", str(config_file)]) == 2
    assert "run `pbem db upgrade`" in capsys.readouterr().err
    assert main(["db", "upgrade", "--config", str(config_file)]) == 0
    assert f"from revision 0001 to {head_revision()}" in capsys.readouterr().out
    assert _differences_from_the_models(tmp_path / "data" / "pbem.db") == []

    office = PostOffice(load_config(config_file), LoadedDice(seed=3))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    dora = Player(office, "dora@example.org", "Dora")
    _plays_on(office, ben, 1, _kept_mail(SCHEMA_1, "ben-single"))  # cube at 2, Ben's move
    _plays_on(office, anna, 0, _kept_mail(SCHEMA_1, "anna-match"))  # game 2 of the match
    sent = anna.reply("accept", to=_kept_mail(SCHEMA_1, "anna-invitation"))
    assert {recipient(mail) for mail in sent} == {"anna@example.org", "erik@example.org"}
    assert "Position ID:" in text_of(anna.answers(sent)[0])
    (answer,) = dora.write("games")  # her language kept
    assert "Sie haben keine laufenden Spiele" in text_of(answer)
    with sqlite3.connect(tmp_path / "data" / "pbem.db") as connection:  # Dora's won game kept for its .mat
        assert connection.execute("SELECT status, score FROM matches WHERE id = 3").fetchone()[0] == "finished"
        assert connection.execute("SELECT count(*) FROM finished_games WHERE match_id = 3").fetchone() == (1,)


@pytest.mark.sqlite_only
def test_a_revision_the_program_does_not_know_is_named_unknown_and_left_alone(old_database, capsys):
    path, config_file = old_database
    assert main(["db", "upgrade", "--config", str(config_file)]) == 0
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '0999'")
    for command, code in ((["db", "status"], 1), (["db", "upgrade"], 2), (["games"], 2)):
        assert main([*command, "--config", str(config_file)]) == code
        said = capsys.readouterr()
        assert "revision 0999, which this program does not know" in said.out + said.err
        assert "newer than" not in said.out + said.err
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [("0999",)]
