"""``pbem serve``: the mail daemon with the game service, until SIGTERM or SIGINT (exit 0)."""

from __future__ import annotations

import argparse
import asyncio
from functools import partial

from pbem.cli.loading import UsageError, config_of, database_of
from pbem.daemon.scheduler import AlreadyServing, configure_logging, serve as run_daemon
from pbem.service import handle_mail, periodic_jobs
from pbem.store.db import SchemaError


def serve(args: argparse.Namespace) -> int:
    configure_logging()
    config = config_of(args.config)
    database_of(config).dispose()  # a database that cannot be used ends the start with one line
    try:
        asyncio.run(run_daemon(config, partial(handle_mail, config=config), periodic_jobs(config)))
    except (SchemaError, AlreadyServing) as exc:
        raise UsageError(str(exc)) from None
    return 0
