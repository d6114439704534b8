"""Which mails the daemon was applying when its process died: a journal outside the database.

A mail that kills the process (an unknown bug, the kernel's out-of-memory killer) must not be
applied again and again: after MAX_DEATHS starts that never ended it is shunted.  To know that,
the start of every mail must be written down *before* the mail is applied, where the crash
cannot take it back.  In the database that cost a transaction of its own for every mail; here
it is one small file per mail being applied (as Mailman's switchboard keeps a ``.bck`` file
beside a message in hand), removed once the mail's transaction committed.  A process killed
with SIGKILL leaves its file behind, since the kernel writes the page cache out for a dead
process as for a live one; only a power loss may forget the count, which then starts again.

The journal is the data directory's (``applying/``): daemons on one host share it, and each
host counts its own deaths (daemons on several hosts on one database shunt a poison mail after
MAX_DEATHS deaths on any one of them).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Interrupted:
    """A mail whose application started ``starts`` times without ending, the last at ``last_start``."""

    message_id: str
    starts: int
    last_start: datetime


class AttemptJournal(Protocol):
    def start(self, message_id: str) -> int:
        """Record that applying the mail starts; how often it started before and never ended."""

    def end(self, message_id: str) -> None:
        """The mail is applied, shunted or found done: forget its starts."""

    def take_back(self, message_id: str) -> None:
        """The last start ended in a failure of the database, not of the mail: it is no death."""

    def interrupted(self) -> list[Interrupted]:
        """The mails that started and did not end (being applied now, or the process died)."""


class FileJournal:
    """One file per mail in hand, named by a hash of its Message-ID, holding the count of starts
    and the Message-ID; its modification time is the last start."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def _path(self, message_id: str) -> Path:
        return self.directory / hashlib.sha256(message_id.encode("utf-8", "surrogateescape")).hexdigest()

    def start(self, message_id: str) -> int:
        """A journal that cannot be written (a full disk) does not stop the mail: it is applied
        without the count, and the error logged."""
        path = self._path(message_id)
        before = _read(path)
        starts = before.starts if before is not None and before.message_id == message_id else 0
        try:
            self._write(path, starts + 1, message_id)
        except OSError as error:
            log.error("the attempt journal %s cannot be written (%s): mails are applied without counting "
                      "the deaths of the process in them", self.directory, error)
        return starts

    def end(self, message_id: str) -> None:
        self._path(message_id).unlink(missing_ok=True)

    def take_back(self, message_id: str) -> None:
        path = self._path(message_id)
        entry = _read(path)
        if entry is None or entry.starts <= 1:
            path.unlink(missing_ok=True)
        else:
            try:
                self._write(path, entry.starts - 1, message_id)
            except OSError as error:
                log.error("the attempt journal %s cannot be written (%s)", self.directory, error)

    @staticmethod
    def _write(path: Path, starts: int, message_id: str) -> None:
        temporary = path.with_name(path.name + f".{os.getpid()}.{threading.get_ident()}")
        try:
            temporary.write_text(f"{starts}\n{message_id}\n", encoding="utf-8", errors="surrogateescape")
            os.replace(temporary, path)  # a crash in the write never leaves a half-written count
        finally:
            temporary.unlink(missing_ok=True)

    def interrupted(self) -> list[Interrupted]:
        found = (_read(path) for path in self.directory.iterdir() if "." not in path.name)
        return sorted((entry for entry in found if entry is not None), key=lambda entry: entry.last_start)


def _read(path: Path) -> Interrupted | None:
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        last_start = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    except FileNotFoundError:
        return None
    count, _, message_id = text.partition("\n")
    try:
        return Interrupted(message_id.removesuffix("\n"), int(count), last_start)
    except ValueError:  # written by hand or cut short: counts as one start
        return Interrupted(message_id.removesuffix("\n"), 1, last_start)


class MemoryJournal:
    """The journal of a pipeline without a data directory (tests): it forgets with the process."""

    def __init__(self) -> None:
        self._starts: dict[str, Interrupted] = {}
        self._lock = threading.Lock()

    def start(self, message_id: str) -> int:
        with self._lock:
            before = self._starts.get(message_id)
            starts = before.starts if before is not None else 0
            self._starts[message_id] = Interrupted(message_id, starts + 1, datetime.now(timezone.utc))
            return starts

    def end(self, message_id: str) -> None:
        with self._lock:
            self._starts.pop(message_id, None)

    def take_back(self, message_id: str) -> None:
        with self._lock:
            entry = self._starts.pop(message_id, None)
            if entry is not None and entry.starts > 1:
                self._starts[message_id] = Interrupted(message_id, entry.starts - 1, entry.last_start)

    def interrupted(self) -> list[Interrupted]:
        with self._lock:
            return sorted(self._starts.values(), key=lambda entry: entry.last_start)
