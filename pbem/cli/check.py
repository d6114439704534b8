"""``pbem check``: try the configured IMAP and SMTP servers the way the daemon will use them,
open the database and say its schema revision, and report the web board's settings."""

from __future__ import annotations

import argparse
import asyncio
import sys

from pbem.cli.db import schema_report
from pbem.cli.loading import config_of
from pbem.daemon.web import web_report
from pbem.mail.check import check_all

EXIT_PROBLEM = 1


def check(args: argparse.Namespace) -> int:
    """0 when the configured servers work and the database is at this program's revision (or not
    created yet), 1 when not; 2 for an unusable config file or a database that cannot be reached,
    said in one line.  Then the web board's settings, reported (a port in use is no failure: the
    daemon may hold it)."""
    config = config_of(args.config)
    lines, database_fine = schema_report(config)
    fine = asyncio.run(check_all(config, sys.stdout))
    for line in lines:
        print(f"database: {line}")
    print(web_report(config.web))
    return 0 if fine and database_fine else EXIT_PROBLEM
