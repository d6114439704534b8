"""``pbem export``, ``games``, ``players`` and ``status``: what the database holds, for the operator.

They read the same database as ``pbem serve`` (SQLite allows that while it runs) and change
nothing.
"""

from __future__ import annotations

import argparse
import sys

from sqlmodel import Session

from pbem.cli import GAMES_PAGE
from pbem.cli.loading import config_of, database_of
from pbem.service.pages.reports import tournament_rows
from pbem.service.pages.reports import (GamesWanted, games_rows, match_file, players_rows, status_report, write_table)
from pbem.store.db import utc_now
from pbem.store.game_records import MatchStatus

EXIT_NOT_FOUND = 1


def more_command(wanted: GamesWanted, before: int) -> str:
    """The ``pbem games`` command that lists the next page: the same filters, older matches."""
    words = ["pbem", "games", "--before", str(before)]
    if wanted.status is not None:
        words += ["--status", wanted.status.value]
    if wanted.player is not None:
        words += ["--player", wanted.player]
    if wanted.limit != GAMES_PAGE:
        words += ["--limit", str(wanted.limit)]
    return " ".join(words)


def report(args: argparse.Namespace) -> int:
    """0; 1 for an unknown game (export) or a mail that needs the operator (status)."""
    config = config_of(args.config, mail_secrets=False)
    engine = database_of(config, create=False)
    out = sys.stdout
    try:
        with Session(engine) as session:
            if args.report == "status":
                return status_report(session, out, config)
            if args.report == "games":
                status = MatchStatus(args.status) if args.status is not None else None
                wanted = GamesWanted(status, args.player, args.before, args.limit)
                rows, more = games_rows(session, config, wanted)
                write_table(rows, out)
                if more is not None:
                    print(f"more: {more_command(wanted, more)}", file=out)
            elif args.report == "players":
                write_table(players_rows(session, utc_now()), out)
            elif args.report == "tournaments":
                write_table(tournament_rows(session), out)
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
