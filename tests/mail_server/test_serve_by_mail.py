"""`pbem serve` as a real process on a config with [imap] and [smtp]: the operator's view."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from email.parser import BytesParser
from email.policy import default as default_policy

from conftest import SERVICE, write_config

from pbem.mail.local_client import compose_mail, compose_reply

STOP_LIMIT_SECONDS = 15


def test_pbem_serve_answers_by_smtp_what_arrives_by_imap_and_stops_cleanly(data_dir, dovecot, smtp_server, database_table):
    config = write_config(data_dir, dovecot, smtp_server, database_table)
    process = subprocess.Popen([sys.executable, "-m", "pbem.cli", "serve", "--config", str(config)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        dovecot.deliver(SERVICE[0], compose_mail("Anna <anna@example.org>", SERVICE[0], "game?",
                                                 "invite ben@example.org\n"))
        (question,) = smtp_server.recorder.wait_for(1, timeout=20)
        assert question.recipients == ("anna@example.org",) and b"Please confirm" in question.raw
        confirm = compose_reply("Anna <anna@example.org>",
                                BytesParser(policy=default_policy).parsebytes(question.raw), "yes")
        dovecot.deliver(SERVICE[0], confirm)
        received = smtp_server.recorder.wait_for(3, timeout=20)[1:]
        assert {mail.recipients for mail in received} == {("anna@example.org",), ("ben@example.org",)}
        assert dovecot.pending(SERVICE[0]) == 0 and len(dovecot.messages(SERVICE[0], "pbem.done")) == 2
    finally:
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=STOP_LIMIT_SECONDS + 5)
    assert process.returncode == 0, output
    assert time.monotonic() - started < STOP_LIMIT_SECONDS
    assert f"ImapSource({SERVICE[0]}@127.0.0.1:{dovecot.port} none 'INBOX')" in output
    assert SERVICE[1] not in output
