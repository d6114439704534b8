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
