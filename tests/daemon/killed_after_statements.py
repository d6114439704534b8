"""Runs ``pbem`` with its arguments and kills it (SIGKILL, as a power cut or the OOM killer would)
right after its Nth SQL statement, N from the environment's ``PBEM_KILL_AFTER``, or with
``PBEM_FAIL_INSTEAD=1`` makes the first statement from there on that changes the schema or the
rows fail instead (a migration's error); with 0 it runs to the end and prints how many
statements it sent (``statements: N``) to stderr."""

import os
import signal
import sys

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from pbem.cli import main

LIMIT = int(os.environ.get("PBEM_KILL_AFTER", "0"))
FAIL = os.environ.get("PBEM_FAIL_INSTEAD") == "1"
sent = 0


CHANGES = ("CREATE", "ALTER", "DROP", "INSERT", "UPDATE", "DELETE")


@event.listens_for(Engine, "after_cursor_execute")
def _counted(_connection: object, _cursor: object, statement: str, *_: object) -> None:
    global sent
    sent += 1
    if FAIL and LIMIT and sent >= LIMIT and statement.lstrip().upper().startswith(CHANGES):
        raise OperationalError(statement[:60], None, Exception("made to fail by the test"))
    if sent == LIMIT and not FAIL:
        os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    print(f"statements: {sent}", file=sys.stderr)
    sys.exit(code)
