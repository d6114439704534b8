"""Where incoming mail comes from: a small async interface and its local Maildir implementation.

The daemon only ever talks to `InboundSource`; IMAP (`pbem.mail.imap`) plugs in behind the same five methods
(`pbem.mail.transport` picks one by the configuration). A
message is marked done only after the transaction that applied it has committed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pbem.mail.headers import message_id_of


log = logging.getLogger(__name__)

DONE_FOLDER = ".pbem.done"
FAILED_FOLDER = ".pbem.failed"
MAILDIR_POLL_SECONDS = 0.2


@dataclass(frozen=True)
class SourceMessage:
    """One message as the source holds it: `key` is what mark_done/mark_failed need back."""

    key: str
    raw: bytes


class InboundSource(Protocol):
    async def fetch(self) -> list[SourceMessage]:
        """Messages not yet marked done or failed, oldest first."""

    async def mark_done(self, key: str) -> None:
        """Take the message out of the inbox for good; harmless when already done."""

    async def mark_failed(self, key: str, reason: str) -> None:
        """Put the message aside where an operator can look at it and re-queue it."""

    async def wait_for_mail(self, timeout: float) -> None:
        """Return when mail may have arrived, or after `timeout` seconds at the latest."""

    async def requeue(self, message_id: str | None) -> int:
        """Put the shunted mail with this Message-ID (None: every shunted mail) back into the
        inbox; returns how many were put back (``pbem requeue``)."""

    async def close(self) -> None: ...


def ensure_maildir(path: Path) -> None:
    for sub in ("tmp", "new", "cur"):
        (path / sub).mkdir(parents=True, exist_ok=True)


class MaildirSource:
    """Reads `DIR/new` and `DIR/cur`; done mail moves to `DIR/.pbem.done`, failed to `DIR/.pbem.failed`.

    Keys are `new/NAME` or `cur/NAME`. Moving is a rename, so a message is never in two places.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        for folder in (path, path / DONE_FOLDER, path / FAILED_FOLDER):
            ensure_maildir(folder)

    def __repr__(self) -> str:
        return f"MaildirSource({str(self.path)!r})"

    async def fetch(self) -> list[SourceMessage]:
        messages = []
        for key in self._pending_keys():
            try:
                messages.append(SourceMessage(key, (self.path / key).read_bytes()))
            except FileNotFoundError:  # taken away (or marked done) since the listing
                continue
        return messages

    async def mark_done(self, key: str) -> None:
        self._move(key, DONE_FOLDER)

    async def mark_failed(self, key: str, reason: str) -> None:
        self._move(key, FAILED_FOLDER)
        log.warning("inbox: %s moved to %s: %s", key, FAILED_FOLDER, reason)

    async def wait_for_mail(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._pending_keys():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            await asyncio.sleep(min(MAILDIR_POLL_SECONDS, remaining))

    async def requeue(self, message_id: str | None) -> int:
        requeued = 0
        for sub in ("new", "cur"):
            for path in sorted((self.path / FAILED_FOLDER / sub).iterdir()):
                if path.name.startswith(".") or (message_id is not None and message_id_of(path.read_bytes()) != message_id):
                    continue
                os.rename(path, self.path / "new" / path.name)
                requeued += 1
        return requeued

    def replay(self, known: set[str]) -> int:
        """Put every done mail whose Message-ID is not in ``known`` back into the inbox, in the
        order it came (a rename keeps its time): after a restore, the mails applied since the
        backup was taken, which the restored database has never seen."""
        replayed = 0
        for sub in ("new", "cur"):
            for path in sorted((self.path / DONE_FOLDER / sub).iterdir()):
                if not path.name.startswith(".") and message_id_of(path.read_bytes()) not in known:
                    os.rename(path, self.path / "new" / path.name)
                    replayed += 1
        return replayed

    async def close(self) -> None:
        return None

    def _pending_keys(self) -> list[str]:
        """Keys in delivery order (modification time, then name)."""
        entries = []
        for sub in ("new", "cur"):
            with os.scandir(self.path / sub) as listing:
                for entry in listing:
                    if entry.is_file() and not entry.name.startswith("."):
                        try:
                            entries.append((entry.stat().st_mtime_ns, entry.name, f"{sub}/{entry.name}"))
                        except FileNotFoundError:
                            continue
        return [key for _, _, key in sorted(entries)]

    def _move(self, key: str, folder: str) -> None:
        name = Path(key).name
        try:
            os.rename(self.path / key, self.path / folder / "cur" / name)
        except FileNotFoundError:
            if not (self.path / folder / "cur" / name).exists():
                raise
