"""`pbem serve` as a real process: prompt answers, a clean SIGTERM, and a SIGKILL mid-batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path

import pytest
from sqlmodel import select

from pbem.daemon.pipeline import OWN_ANSWER_LEASE
from pbem.mail.local_client import deliver_to_maildir
from pbem.store.db import session_scope
from pbem.store.mail_records import InboundMail, InboundState, OutboundMail

HANDLERS_DIR = Path(__file__).parent
STOP_LIMIT_SECONDS = 15


def start_daemon(config_file: Path, handler: str, delay: float = 0.0) -> subprocess.Popen:
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HANDLERS_DIR), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", "import sys, echo_handlers; sys.exit(echo_handlers.serve_main(sys.argv[1:]))",
                             "--config", str(config_file), "--handler", handler, "--delay", str(delay)],
                            env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def player_mail(number: int) -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"player{number}@example.org"
    message["To"] = "backgammon@localhost"
    message["Subject"] = f"mail {number}"
    message["Message-ID"] = f"<mail-{number}@example.org>"
    message.set_content(f"move {number}")
    return message


def outbox_mails(outbox: Path) -> list[EmailMessage]:
    return [BytesParser(policy=default_policy).parsebytes(path.read_bytes())
            for sub in ("new", "cur") for path in (outbox / sub).iterdir()]


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def stop(process: subprocess.Popen) -> tuple[int, float, str]:
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=STOP_LIMIT_SECONDS + 5)
    return process.returncode, time.monotonic() - started, output


def test_serve_answers_within_a_second_and_stops_cleanly_on_sigterm(config, config_file):
    process = start_daemon(config_file, "echo")
    try:
        wait_until(lambda: (config.inbox_dir / "new").is_dir() and (config.outbox_dir / "new").is_dir(), 20,
                   "the daemon to create its folders")
        time.sleep(0.5)  # the start-up read of the empty inbox is over: the next mail tests the watcher
        delivered = time.monotonic()
        deliver_to_maildir(config.inbox_dir, player_mail(1))
        wait_until(lambda: outbox_mails(config.outbox_dir), 10, "the answer")
        assert time.monotonic() - delivered < 1.5
    finally:
        status, seconds, output = stop(process)
    assert status == 0, output
    assert seconds < STOP_LIMIT_SECONDS
    assert str(config.inbox_dir) in output and str(config.outbox_dir) in output and str(config.data_dir) in output
    assert "<mail-1@example.org>: applied" in output


def test_sigterm_while_busy_finishes_the_mail_in_hand(config, config_file, engine):
    for number in range(20):
        deliver_to_maildir(config.inbox_dir, player_mail(number))
    process = start_daemon(config_file, "slow_echo", delay=0.3)
    wait_until(lambda: _applied_ids(engine), 20, "the first mail to be applied")
    status, seconds, output = stop(process)
    assert status == 0, output
    assert seconds < STOP_LIMIT_SECONDS
    applied = _applied_ids(engine)
    assert 0 < len(applied) < 20
    done = len(list((config.inbox_dir / ".pbem.done" / "cur").iterdir()))
    assert done == len(applied)  # nothing half-applied: every committed mail was also marked done


def test_sigkill_mid_batch_then_restart_applies_and_answers_each_mail_once(config, config_file, engine):
    total = 30
    for number in range(total):
        deliver_to_maildir(config.inbox_dir, player_mail(number))
    process = start_daemon(config_file, "slow_echo", delay=0.1)
    wait_until(lambda: len(_applied_ids(engine)) >= 5, 30, "some mails to be applied")
    process.kill()
    process.communicate(timeout=10)
    assert len(_applied_ids(engine)) < total

    process = start_daemon(config_file, "slow_echo", delay=0.0)
    try:
        # On PostgreSQL the answers the killed daemon had queued for itself wait for their lease
        # (OWN_ANSWER_LEASE); on SQLite the new daemon takes them back as it starts.
        wait_until(lambda: len(outbox_mails(config.outbox_dir)) >= total and _all_sent(engine),
                   60 + OWN_ANSWER_LEASE.total_seconds(), "every answer")
    finally:
        status, _, output = stop(process)
    assert status == 0, output

    with session_scope(engine) as session:
        inbound = session.exec(select(InboundMail)).all()
        outbound = session.exec(select(OutboundMail)).all()
    assert sorted(row.message_id for row in inbound) == sorted(f"<mail-{n}@example.org>" for n in range(total))
    assert all(row.state == InboundState.APPLIED for row in inbound)
    answers = Counter(str(mail["In-Reply-To"]) for mail in outbox_mails(config.outbox_dir))
    assert answers == Counter({f"<mail-{n}@example.org>": 1 for n in range(total)})
    assert len(outbound) == total
    assert list((config.inbox_dir / "new").iterdir()) == [] and list((config.inbox_dir / "cur").iterdir()) == []


def _applied_ids(engine) -> list[str]:
    with session_scope(engine) as session:
        return list(session.exec(select(InboundMail.message_id)
                                 .where(InboundMail.state == InboundState.APPLIED)).all())


def _all_sent(engine) -> bool:
    with session_scope(engine) as session:
        return all(row.sent_at is not None for row in session.exec(select(OutboundMail)).all())


@pytest.mark.sqlite_only
def test_a_second_daemon_on_one_sqlite_database_refuses_to_start(config, config_file):
    process = start_daemon(config_file, "echo")
    try:
        wait_until(lambda: (config.inbox_dir / "new").is_dir(), 20, "the daemon to start")
        second = subprocess.run([sys.executable, "-m", "pbem.cli", "serve", "--config", str(config_file)],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert "another pbem serve is running" in second.stderr and "PostgreSQL" in second.stderr
    finally:
        status, _, output = stop(process)
    assert status == 0, output
