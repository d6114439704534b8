"""`pbem serve` as a real process against Dovecot and aiosmtpd: a mail that kills the daemon
is shunted after its second death, and an answer the server refuses for good is given up,
while every other mail is answered; `pbem status` tells the operator both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import SERVICE, write_config

from pbem.mail.local_client import compose_mail

POISON_DIR = Path(__file__).parent / "poison"
STOP_LIMIT_SECONDS = 15


def _serve(config: Path, poison: bool = False) -> subprocess.Popen:
    environment = dict(os.environ)
    if poison:
        environment["PYTHONPATH"] = os.pathsep.join([str(POISON_DIR), environment.get("PYTHONPATH", "")])
    return subprocess.Popen([sys.executable, "-m", "pbem.cli", "serve", "--config", str(config)], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _stop(process: subprocess.Popen) -> str:
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=STOP_LIMIT_SECONDS + 5)
    assert process.returncode == 0, output
    return output


def _pbem(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pbem.cli", *args, "--config", str(config)],
                          capture_output=True, text=True, timeout=60)


def _status(config: Path) -> subprocess.CompletedProcess[str]:
    return _pbem("status", config=config)


def test_a_mail_that_killed_the_daemon_twice_is_shunted_and_the_next_mail_is_answered(data_dir, dovecot, smtp_server, database_table):
    config = write_config(data_dir, dovecot, smtp_server, database_table)
    poison = compose_mail("Eve <eve@example.org>", SERVICE[0], "POISON", "help\n")
    dovecot.deliver(SERVICE[0], poison)
    dovecot.deliver(SERVICE[0], compose_mail("Anna <anna@example.org>", SERVICE[0], "hello", "help\n"))
    for death in (1, 2):
        process = _serve(config, poison=True)
        output, _ = process.communicate(timeout=60)
        assert process.returncode == -signal.SIGKILL, f"death {death}:\n{output}"
        assert not smtp_server.recorder.received
        assert f"interrupted {poison['Message-ID']}: started {death} time(s)" in _status(config).stdout
    process = _serve(config, poison=True)
    try:
        try:
            (answer,) = smtp_server.recorder.wait_for(1, timeout=30)
        except TimeoutError:
            process.send_signal(signal.SIGTERM)
            raise AssertionError(process.communicate(timeout=20)[0]) from None
        assert answer.recipients == ("anna@example.org",)
        deadline = time.monotonic() + 10
        while dovecot.pending(SERVICE[0]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(dovecot.messages(SERVICE[0], "pbem.failed")) == 1
        assert len(dovecot.messages(SERVICE[0], "pbem.done")) == 1
    finally:
        output = _stop(process)
    assert f"{poison['Message-ID']}: the process died 2 times while applying this mail; shunted" in output
    status = _status(config)
    assert status.returncode == 1, status.stdout + status.stderr
    assert f"shunted {poison['Message-ID']} from eve@example.org" in status.stdout
    assert "0 being applied or interrupted" in status.stdout

    # The cause is fixed (the daemon runs without the poison): the operator puts the mail back.
    assert _pbem("requeue", "<nobody@example.org>", config=config).returncode == 1
    requeued = _pbem("requeue", str(poison["Message-ID"]).strip("<>"), config=config)
    assert requeued.returncode == 0 and "1 mail put back" in requeued.stdout, requeued
    assert dovecot.pending(SERVICE[0]) == 1 and dovecot.messages(SERVICE[0], "pbem.failed") == []
    process = _serve(config)
    try:
        (_, again) = smtp_server.recorder.wait_for(2, timeout=30)
        assert again.recipients == ("eve@example.org",)
    finally:
        _stop(process)
    assert _status(config).returncode == 0
    assert "no shunted mail" in _pbem("requeue", "--all", config=config).stdout


def test_an_answer_refused_for_good_is_given_up_and_the_others_are_sent(data_dir, dovecot, smtp_server, database_table):
    config = write_config(data_dir, dovecot, smtp_server, database_table)
    smtp_server.recorder.unknown_users.add("ghost@example.org")
    dovecot.deliver(SERVICE[0], compose_mail("Ghost <ghost@example.org>", SERVICE[0], "hello", "help\n"))
    dovecot.deliver(SERVICE[0], compose_mail("Anna <anna@example.org>", SERVICE[0], "hello", "help\n"))
    process = _serve(config)
    try:
        (answer,) = smtp_server.recorder.wait_for(1, timeout=30)
        assert answer.recipients == ("anna@example.org",)
        deadline = time.monotonic() + 20
        while _status(config).returncode != 1:
            assert time.monotonic() < deadline, "the refused answer was not given up"
            time.sleep(0.2)
        dovecot.deliver(SERVICE[0], compose_mail("Ben <ben@example.org>", SERVICE[0], "hello", "help\n"))
        received = smtp_server.recorder.wait_for(2, timeout=30)
        assert received[1].recipients == ("ben@example.org",)
    finally:
        output = _stop(process)
    assert "given up after 1 attempts" in output and "ghost@example.org" in output
    status = _status(config)
    assert status.returncode == 1
    assert "1 given up" in status.stdout and "to ghost@example.org" in status.stdout and "550" in status.stdout
    assert smtp_server.recorder.refused == 1, "a mail refused for good is not tried again"
