"""Runs ``pbem`` with its arguments and kills it (SIGKILL, as a power cut or the OOM killer would)
right after its Nth SQL statement, N from the environment's ``PBEM_KILL_AFTER``; with 0 it runs
to the end and prints how many statements it sent (``statements: N``) to stderr."""

import os
import signal
import sys

from sqlalchemy import event
from sqlalchemy.engine import Engine

from pbem.cli import main

LIMIT = int(os.environ.get("PBEM_KILL_AFTER", "0"))
sent = 0


@event.listens_for(Engine, "after_cursor_execute")
def _counted(*_: object) -> None:
    global sent
    sent += 1
    if sent == LIMIT:
        os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    print(f"statements: {sent}", file=sys.stderr)
    sys.exit(code)
