"""``pbem serve``: the mail daemon with the game service, until SIGTERM or SIGINT (exit 0)."""

from __future__ import annotations

import argparse
import asyncio
from functools import partial

from sqlalchemy.engine import Engine
from starlette.types import ASGIApp

from pbem.cli.loading import UsageError, config_of, database_of
from pbem.config import Config
from pbem.daemon.scheduler import AlreadyServing, configure_logging, serve as run_daemon
from pbem.daemon.web import WebServerError
from pbem.mail.dkim import DkimKeyError, signer_of
from pbem.service import handle_mail, periodic_jobs
from pbem.store.db import SchemaError


def serve(args: argparse.Namespace) -> int:
    configure_logging(verbose=args.verbose)
    config = config_of(args.config)
    try:
        signer_of(config)  # a DKIM key that cannot sign ends the start, rather than every mail later
    except DkimKeyError as exc:
        raise UsageError(str(exc)) from None
    database_of(config).dispose()  # a database that cannot be used ends the start with one line
    try:
        asyncio.run(run_daemon(config, partial(handle_mail, config=config), periodic_jobs(config),
                               web_app=partial(web_board_app, config)))
    except (SchemaError, AlreadyServing, WebServerError, DkimKeyError) as exc:
        raise UsageError(str(exc)) from None
    return 0


def web_board_app(config: Config, engine: Engine) -> ASGIApp:
    """The web board on the game service (``[web]``), on the daemon's database engine."""
    from pbem.service.pages.web_board import WebBoard
    from pbem.web.app import board_app

    assert config.web is not None
    return board_app(config.web, WebBoard(config, engine))
