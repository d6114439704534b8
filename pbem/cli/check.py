"""``pbem check``: try the configured IMAP and SMTP servers the way the daemon will use them."""

from __future__ import annotations

import argparse
import asyncio
import sys

from pbem.cli.loading import config_of
from pbem.mail.check import check_all

EXIT_PROBLEM = 1


def check(args: argparse.Namespace) -> int:
    """0 when the configured servers work, 1 when one does not (2 for an unusable config file)."""
    return 0 if asyncio.run(check_all(config_of(args.config), sys.stdout)) else EXIT_PROBLEM
