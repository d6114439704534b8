"""``pbem serve`` writes no game token to its log: not in a message, not in its arguments, not
in an exception's text or traceback (a real SQLAlchemy error prints its parameters)."""

from __future__ import annotations

import io
import logging

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from pbem.daemon.scheduler import LOG_FORMAT, WithoutTokens

TOKEN = "abcdefghijklmnopqrstuvwxyz"


def test_tokens_are_cut_from_messages_arguments_exceptions_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(WithoutTokens(LOG_FORMAT))
    log = logging.getLogger("pbem.test_log_redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("mail <%s@example.org> for %s", TOKEN, TOKEN)
        engine = create_engine("sqlite://")
        with pytest.raises(OperationalError) as raised, engine.connect() as connection:
            connection.execute(text("SELECT * FROM nowhere WHERE token = :token"), {"token": TOKEN})
        assert TOKEN in str(raised.value), "the database error itself carries the token"
        try:
            raise raised.value
        except OperationalError:
            log.exception("cannot apply the mail")
        try:
            raise RuntimeError(f"no seat for {TOKEN}")
        except RuntimeError:
            log.error("failed", exc_info=True, stack_info=True)
    finally:
        log.removeHandler(handler)
    written = stream.getvalue()
    assert "[parameters: ('…',)]" in written and "Traceback" in written and "no seat for …" in written
    assert "mail <…@example.org> for …" in written
    assert TOKEN not in written
