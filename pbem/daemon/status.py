"""``pbem status``: what of the mail needs the operator — answers failing or given up, incoming
mails shunted or in the middle of being applied — and the schema version.

It reads the database ``pbem serve`` writes and changes nothing.  The exit status is 0 when
nothing needs the operator, 1 when a mail was given up or shunted, 2 for an unusable config.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from sqlmodel import Session, col, select

from pbem.config import ConfigError, load_config
from pbem.store.db import SchemaError, create_schema, current_schema_version, make_engine
from pbem.store.mail_records import InboundAttempt, InboundMail, InboundState, OutboundGivenUp, OutboundMail

EXIT_NEEDS_OPERATOR = 1
EXIT_CONFIG_ERROR = 2


def run_status(config_path: Path | None, out: TextIO = sys.stdout) -> int:
    try:
        config = load_config(config_path)
        engine = make_engine(config.database.url)
        create_schema(engine)
    except (ConfigError, SchemaError) as exc:
        print(f"pbem status: {exc}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    try:
        with Session(engine) as session:
            return _report(session, out)
    finally:
        engine.dispose()


def _report(session: Session, out: TextIO) -> int:
    print(f"schema version: {current_schema_version(session)}", file=out)
    given_up = session.exec(select(OutboundGivenUp, OutboundMail)
                            .join(OutboundMail, col(OutboundMail.id) == OutboundGivenUp.outbound_id)
                            .order_by(col(OutboundGivenUp.given_up_at))).all()
    given_up_ids = {row.outbound_id for row, _ in given_up}
    unsent = [mail for mail in session.exec(select(OutboundMail).where(col(OutboundMail.sent_at).is_(None))
                                            .order_by(col(OutboundMail.id))).all() if mail.id not in given_up_ids]
    failing = [mail for mail in unsent if mail.attempts]
    shunted = session.exec(select(InboundMail).where(InboundMail.state == InboundState.FAILED)
                           .order_by(col(InboundMail.id))).all()
    attempts = session.exec(select(InboundAttempt).order_by(col(InboundAttempt.started_at))).all()
    print(f"outbox: {len(unsent)} unsent ({len(failing)} failing), {len(given_up)} given up", file=out)
    for mail in failing:
        print(f"  failing {mail.message_id} to {', '.join(mail.recipients)}: {mail.attempts} attempts, "
              f"next at {mail.next_attempt_at:%Y-%m-%d %H:%M} UTC; {mail.last_error}", file=out)
    for row, mail in given_up:
        print(f"  given up {mail.message_id} to {', '.join(mail.recipients)} at {row.given_up_at:%Y-%m-%d %H:%M} "
              f"UTC: {row.reason}", file=out)
    print(f"inbox: {len(shunted)} shunted, {len(attempts)} being applied or interrupted", file=out)
    for inbound in shunted:
        print(f"  shunted {inbound.message_id} from {inbound.sender or '?'}: {inbound.reason}", file=out)
    for attempt in attempts:
        print(f"  interrupted {attempt.message_id}: started {attempt.attempts} time(s), last at "
              f"{attempt.started_at:%Y-%m-%d %H:%M} UTC", file=out)
    return EXIT_NEEDS_OPERATOR if given_up or shunted else 0
