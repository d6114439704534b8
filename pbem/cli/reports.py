"""``pbem export``, ``games``, ``players`` and ``status``: what the database holds, for the operator.

They read the same database as ``pbem serve`` (SQLite allows that while it runs) and change
nothing.
"""

from __future__ import annotations

import argparse
import sys

from sqlmodel import Session

from pbem.cli.loading import config_of, database_of
from pbem.service.reports import (games_rows, match_file, players_rows, status_report, write_table)
from pbem.store.db import utc_now

EXIT_NOT_FOUND = 1


def report(args: argparse.Namespace) -> int:
    """0; 1 for an unknown game (export) or a mail that needs the operator (status)."""
    config = config_of(args.config, mail_secrets=False)
    engine = database_of(config)
    out = sys.stdout
    try:
        with Session(engine) as session:
            if args.report == "status":
                return status_report(session, out)
            if args.report == "games":
                write_table(games_rows(session, config), out)
            elif args.report == "players":
                write_table(players_rows(session, utc_now()), out)
            else:
                text = match_file(session, args.game)
                if text is None:
                    print(f"pbem export: no game or match with id {args.game}", file=sys.stderr)
                    return EXIT_NOT_FOUND
                if args.output is None:
                    out.write(text)
                else:
                    args.output.write_text(text, encoding="utf-8")
    finally:
        engine.dispose()
    return 0
