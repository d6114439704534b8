"""``pbem backup`` and ``pbem restore``: a consistent copy of the database while the daemon runs,
and putting one back (SQLite; on PostgreSQL they say how ``pg_dump`` does it)."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from pbem.cli.loading import UsageError, config_of, engine_of, missing_database, unusable_database
from pbem.config import Config
from pbem.store.backup import BackupError, backup_sqlite, default_backup_path, restore_sqlite
from pbem.store.db import head_revision, utc_now

EXIT_NOT_MADE = 1


def backup(args: argparse.Namespace) -> int:
    """Copy the database into FILE (default: a new file in the data directory's backups)."""
    config = config_of(args.config, mail_secrets=False)
    if not _is_sqlite(config):
        return _postgresql_advice(config, "pg_dump --format=custom --file=FILE {connection} {database}", "backup")
    path = take_backup(config, args.file)
    print(f"backup of {_sqlite_path(config)} written to {path}")
    return 0


def take_backup(config: Config, file: Path | None, revision: str | None = None) -> Path:
    """Write the backup (to ``file``, or the default path named after ``revision``); its path."""
    database = _sqlite_path(config)
    if missing_database(config) is not None:
        raise UsageError(f"no database at {database}: nothing to back up")
    target = file or default_backup_path(config.data_dir, revision or _revision_of(database), utc_now())
    try:
        backup_sqlite(database, target)
    except (BackupError, OSError) as exc:
        raise UsageError(str(exc)) from None
    return target


def restore(args: argparse.Namespace) -> int:
    """Put the backup FILE in place of the database (the daemon stopped), keeping the one it
    replaces; mails of the local inbox applied since the backup are put back to be applied again."""
    config = config_of(args.config, mail_secrets=False)
    if not _is_sqlite(config):
        return _postgresql_advice(config, "pg_restore --clean --if-exists {connection} --dbname={database} FILE",
                                  "restore")
    from pbem.daemon.scheduler import AlreadyServing, sqlite_daemon_lock

    database = _sqlite_path(config)
    try:
        with sqlite_daemon_lock(config):
            revision, kept = restore_sqlite(database, args.file, utc_now())
    except AlreadyServing:
        raise UsageError(f"pbem serve is running on {database}: stop it first, then restore") from None
    except (BackupError, OSError, sqlite3.Error) as exc:
        raise UsageError(f"nothing was restored: {exc}") from None
    print(f"{database} restored from {args.file} (schema revision {revision})")
    if kept is not None:
        print(f"the database it replaced is kept at {kept}")
    if config.imap is None:
        from pbem.mail.sources import MaildirSource

        with sqlite3.connect(database) as restored:
            known = {message_id for (message_id,) in restored.execute("SELECT message_id FROM inbound_mail")}
        replayed = MaildirSource(config.inbox_dir).replay(known)
        print(f"{replayed} mail{'s' if replayed != 1 else ''} applied since the backup put back into the inbox, "
              "to be applied again in the order they came")
    else:
        print("mails applied since the backup: move them from the mailbox's pbem/done folder back into "
              f"{config.imap.mailbox} to have them applied again (docs/operators.md, Backups)")
    if revision != head_revision():
        print(f"the backup has schema revision {revision}: run `pbem db upgrade` before `pbem serve`")
    return 0


def _is_sqlite(config: Config) -> bool:
    return make_url(config.database.url).get_backend_name() == "sqlite"


def _sqlite_path(config: Config) -> Path:
    return Path(str(make_url(config.database.url).database))


def _revision_of(database: Path) -> str | None:
    from pbem.store.backup import check_backup

    try:
        return check_backup(database)
    except BackupError:
        return None


def _postgresql_advice(config: Config, command: str, what: str) -> int:
    """PostgreSQL's own tools copy a running database consistently: say which, after checking
    the configured database answers; exit 1 (pbem made no copy)."""
    engine = engine_of(config)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        raise UsageError(unusable_database(config, exc)) from None
    finally:
        engine.dispose()
    url = make_url(config.database.url)
    server = f"--host={url.host or 'localhost'} --port={url.port or 5432} --username={url.username or ''}"
    print(f"the database is PostgreSQL ({url.render_as_string(hide_password=True)}) and answers; pbem makes no "
          f"{what} of it: use {command.format(connection=server, database=url.database)} "
          "(docs/operators.md, Backups)")
    return EXIT_NOT_MADE
