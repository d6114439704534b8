"""``pbem check``: try the configured IMAP and SMTP servers the way the daemon will use them,
and report the web board's settings."""

from __future__ import annotations

import argparse
import asyncio
import sys

from pbem.cli.loading import config_of
from pbem.daemon.web import web_report
from pbem.mail.check import check_all

EXIT_PROBLEM = 1


def check(args: argparse.Namespace) -> int:
    """0 when the configured servers work, 1 when one does not (2 for an unusable config file);
    then the web board's settings, reported (a port in use is no failure: the daemon may hold it)."""
    config = config_of(args.config)
    fine = asyncio.run(check_all(config, sys.stdout))
    print(web_report(config.web))
    return 0 if fine else EXIT_PROBLEM
