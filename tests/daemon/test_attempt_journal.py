"""The attempt journal: a start is written down before a mail is applied, and outlives the process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import datetime, timezone

from pbem.store.attempts import FileJournal, MemoryJournal


def test_starts_are_counted_per_mail_until_the_mail_ends(tmp_path):
    for journal in (FileJournal(tmp_path / "applying"), MemoryJournal()):
        assert journal.start("<a@example.org>") == 0
        assert journal.start("<a@example.org>") == 1
        assert journal.start("<b@example.org>") == 0
        assert [(entry.message_id, entry.starts) for entry in journal.interrupted()] == [
            ("<a@example.org>", 2), ("<b@example.org>", 1)]
        journal.end("<a@example.org>")
        journal.end("<never started@example.org>")
        assert journal.start("<a@example.org>") == 0
        assert all(entry.last_start <= datetime.now(timezone.utc) for entry in journal.interrupted())


def test_a_start_outlives_a_killed_process(tmp_path):
    """SIGKILL in the middle of a mail: the next process finds the start (as ``pbem serve`` does)."""
    script = ("import os, signal, sys; from pathlib import Path; from pbem.store.attempts import FileJournal; "
              "FileJournal(Path(sys.argv[1])).start(sys.argv[2]); os.kill(os.getpid(), signal.SIGKILL)")
    odd = "<\udcff odd/../id@example.org>"  # any bytes a Message-ID may carry, a path's among them
    for _ in range(2):
        process = subprocess.run([sys.executable, "-c", script, str(tmp_path / "applying"), odd],
                                 env={**os.environ, "PYTHONIOENCODING": "utf-8:surrogateescape"}, check=False)
        assert process.returncode == -signal.SIGKILL
    journal = FileJournal(tmp_path / "applying")
    assert [(entry.message_id, entry.starts) for entry in journal.interrupted()] == [(odd, 2)]
    assert journal.start(odd) == 2
    assert [path.parent for path in (tmp_path / "applying").iterdir()] == [tmp_path / "applying"]


def test_a_start_taken_back_is_no_death(tmp_path):
    """The database failed in the mail, not the process (pbem.daemon.pipeline takes the start back)."""
    for journal in (FileJournal(tmp_path / "applying"), MemoryJournal()):
        journal.start("<a@example.org>")
        journal.start("<a@example.org>")
        journal.take_back("<a@example.org>")
        assert [(entry.message_id, entry.starts) for entry in journal.interrupted()] == [("<a@example.org>", 1)]
        journal.take_back("<a@example.org>")
        journal.take_back("<never started@example.org>")
        assert journal.interrupted() == []


def test_a_journal_that_cannot_be_written_does_not_stop_the_mail(tmp_path, monkeypatch, caplog):
    """A full disk: the mail is applied without its count, and the operator is told."""
    journal = FileJournal(tmp_path / "applying")

    def full(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pathlib.Path.write_text", full)
    assert journal.start("<a@example.org>") == 0
    assert "cannot be written" in caplog.text and "No space left" in caplog.text
    assert list((tmp_path / "applying").iterdir()) == []
