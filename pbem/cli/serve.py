"""``pbem serve``: the mail daemon, until SIGTERM or SIGINT (exit 0), or 2 for an unusable config."""

from __future__ import annotations

import argparse

from pbem.daemon.scheduler import run_serve


def serve(args: argparse.Namespace) -> int:
    return run_serve(args.config)
