"""Incoming mail from an IMAP mailbox (aioimaplib): the `InboundSource` for a real mail server.

Two sessions: one for the commands (search, fetch, move) and one that waits in IDLE, so that
waiting for mail never holds up the work and a new mail wakes the daemon at once. Done mail moves
to `pbem/done`, unreadable mail to `pbem/failed` (created when missing; the hierarchy delimiter is
the server's). Where mail cannot be moved, it is flagged with `$PbemDone` / `$PbemFailed` and
skipped from then on. A key is `UIDVALIDITY:UID`, so a mailbox that was rebuilt is never mistaken
for the old one.

A server that is down, restarting, slow or refusing the login never stops the daemon: the source
logs one line when the trouble starts, answers "no mail" meanwhile, and tries again with growing
back-off; a mail in hand when the connection dropped stays in the mailbox and is read again
(the pipeline applies it once).
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from aioimaplib import aioimaplib

from pbem.config import ImapConfig
from pbem.mail.connecting import LoginRefused, MailServerError, explain
from pbem.mail.sources import SourceMessage

log = logging.getLogger(__name__)

T = TypeVar("T")

COMMAND_TIMEOUT = 30.0
GOODBYE_TIMEOUT = 2.0  # ending IDLE or logging out must not hold up a stop (SIGTERM: exit within 15 s)
IDLE_MAX_SECONDS = 25 * 60  # servers end IDLE after 30 minutes (RFC 2177)
FETCH_BATCH = 100
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 300.0
DONE_FOLDER = ("pbem", "done")
FAILED_FOLDER = ("pbem", "failed")
DONE_KEYWORD = "$PbemDone"
FAILED_KEYWORD = "$PbemFailed"

_LIST_DELIMITER = re.compile(rb'\) (?:"((?:[^"\\]|\\.)*)"|NIL) ')
_UIDVALIDITY = re.compile(rb"\[UIDVALIDITY (\d+)\]")
_UID = re.compile(rb"UID (\d+)")


def _already_gone(response: aioimaplib.Response) -> bool:
    """The server says the mail was expunged meanwhile (RFC 5530 EXPUNGEISSUED): another daemon
    on the same mailbox has put it away already."""
    return response.result == "NO" and b"EXPUNGEISSUED" in b" ".join(bytes(line) for line in response.lines)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ImapSession:
    """One logged-in IMAP session with its mailbox selected; IMAP's details stay in here."""

    def __init__(self, config: ImapConfig, timeout: float) -> None:
        self.config = config
        self.timeout = timeout
        self.delimiter = "/"
        self.uidvalidity = 0
        self.exists = 0
        self._lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._client: aioimaplib.IMAP4 | None = None
        self._folders: set[str] = set()

    @classmethod
    async def open(cls, config: ImapConfig, timeout: float = COMMAND_TIMEOUT) -> ImapSession:
        """Connect, secure, log in and select the mailbox; MailServerError says what failed."""
        session = cls(config, timeout)
        try:
            await session._open()
        except BaseException:
            session.abandon()
            raise
        return session

    async def _open(self) -> None:
        config = self.config
        context = ssl.create_default_context() if config.security != "none" else None
        self._client = aioimaplib.IMAP4(
            host=config.host, port=config.port, timeout=self.timeout, conn_lost_cb=self._connection_lost,
            ssl_context=context if config.security == "ssl" else None)
        await self._client.wait_hello_from_server()
        if config.security == "starttls":
            await self._starttls(context)
        response = await self._call(self._client.login(config.username, config.password.get_secret_value()))
        if response.result != "OK" and "[LIMIT]" in _text(response):  # RFC 5530: too many connections
            raise MailServerError(f"login as {config.username} refused ({_text(response)}): the server allows "
                                  "no more connections for this user; run fewer daemons (each holds two) "
                                  "or raise the server's limit (Dovecot: mail_max_userip_connections)")
        if response.result != "OK":
            raise LoginRefused(f"login as {config.username} refused ({_text(response)}); "
                               "check username and password")
        await self._find_delimiter()
        response = await self._call(self._client.select(_quote(config.mailbox)))
        if response.result != "OK":
            raise MailServerError(f"mailbox {config.mailbox!r} cannot be opened ({_text(response)}); "
                                  "check mailbox")
        for line in response.lines:
            if found := _UIDVALIDITY.search(bytes(line)):
                self.uidvalidity = int(found.group(1))
            elif bytes(line).endswith(b" EXISTS"):
                self.exists = int(bytes(line).split()[0])

    async def _starttls(self, context: ssl.SSLContext | None) -> None:
        """STARTTLS (RFC 3501 6.2.1), which aioimaplib lacks: upgrade the socket, then ask again."""
        assert self._client is not None and context is not None
        protocol = self._client.protocol
        if "STARTTLS" not in protocol.capabilities:
            raise MailServerError("the server does not offer STARTTLS; check security and port")
        command = aioimaplib.Command("STARTTLS", protocol.new_tag(), loop=protocol.loop)
        response = await self._call(protocol.execute(command))
        if response.result != "OK":
            raise MailServerError(f"STARTTLS refused ({_text(response)})")
        protocol.transport = await asyncio.wait_for(asyncio.get_running_loop().start_tls(
            protocol.transport, protocol, context, server_hostname=self.config.host), self.timeout)
        await self._call(protocol.capability())

    async def _find_delimiter(self) -> None:
        assert self._client is not None
        response = await self._call(self._client.list('""', '""'))
        for line in response.lines:
            if (found := _LIST_DELIMITER.search(bytes(line))) and found.group(1):
                self.delimiter = found.group(1).decode().replace("\\\\", "\\")

    @property
    def alive(self) -> bool:
        return not self._lost.done()

    @property
    def can_idle(self) -> bool:
        return self._client is not None and self._client.has_capability("IDLE")

    def _connection_lost(self, error: Exception | None) -> None:
        if not self._lost.done():
            self._lost.set_result(None)

    async def _call(self, command: Awaitable[T]) -> T:
        """Run one command, failing at once (not at the timeout) when the connection drops."""
        task = asyncio.ensure_future(command)
        waiting: set[asyncio.Future[Any]] = {task, self._lost}
        await asyncio.wait(waiting, timeout=self.timeout + 1, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            task.cancel()
            raise ConnectionResetError("the connection to the server was lost")
        return task.result()

    async def pending_uids(self) -> list[int]:
        """UIDs of the mails not yet marked done or failed, oldest first."""
        assert self._client is not None
        await self._call(self._client.noop())  # servers announce new mail at a command's end: sync first
        return await self._search("UNDELETED", "UNKEYWORD", DONE_KEYWORD, "UNKEYWORD", FAILED_KEYWORD)

    async def _search(self, *criteria: str) -> list[int]:
        assert self._client is not None
        response = await self._call(self._client.uid_search(*criteria, charset=None))
        self._check(response, "search")
        return sorted(int(word) for line in response.lines[:-1] for word in bytes(line).split() if word.isdigit())

    async def requeue(self, message_id: str | None) -> int:
        """``pbem requeue``: put shunted mails back into the mailbox (from the failed folder, or by
        taking off the keyword of those that could only be flagged); `message_id` None: all of
        them.  Returns how many were put back."""
        assert self._client is not None
        header = ("HEADER", "Message-ID", _quote(message_id)) if message_id else ()
        requeued = 0
        if (await self._call(self._client.select(_quote(self.folder(FAILED_FOLDER))))).result == "OK":
            for uid in await self._search("UNDELETED", *header):
                await self.move(uid, self.config.mailbox)
                requeued += 1
        response = await self._call(self._client.select(_quote(self.config.mailbox)))
        self._check(response, "select")
        for uid in await self._search("KEYWORD", FAILED_KEYWORD, *header):
            self._check(await self._call(self._client.uid("store", str(uid), "-FLAGS.SILENT", f"({FAILED_KEYWORD})")),
                        "store")
            requeued += 1
        return requeued

    async def fetch(self, uid: int) -> bytes | None:
        """The whole mail, without setting \\Seen; None when it is gone."""
        assert self._client is not None
        response = await self._call(self._client.uid("fetch", str(uid), "(BODY.PEEK[])"))
        self._check(response, "fetch")
        for index, line in enumerate(response.lines):
            if isinstance(line, bytearray) and index > 0 and (found := _UID.search(bytes(response.lines[index - 1]))) \
                    and int(found.group(1)) == uid:
                return bytes(line)
        return None

    def folder(self, parts: tuple[str, ...]) -> str:
        return self.delimiter.join(parts)

    async def move(self, uid: int, folder: str) -> None:
        """Move one mail to `folder`, creating it first if need be; a mail already gone is fine."""
        assert self._client is not None
        await self._ensure_folder(folder)
        if self._client.has_capability("MOVE"):
            response = await self._call(self._client.uid("move", str(uid), _quote(folder)))
            if not _already_gone(response):
                self._check(response, "move")
            return
        response = await self._call(self._client.uid("copy", str(uid), _quote(folder)))
        if _already_gone(response):
            return
        self._check(response, "copy")
        self._check(await self._call(self._client.uid("store", str(uid), "+FLAGS.SILENT", r"(\Deleted)")), "store")
        if self._client.has_capability("UIDPLUS"):
            self._check(await self._call(self._client.uid("expunge", str(uid))), "expunge")
        else:
            self._check(await self._call(self._client.expunge()), "expunge")

    async def flag(self, uid: int, keyword: str) -> None:
        assert self._client is not None
        self._check(await self._call(self._client.uid("store", str(uid), "+FLAGS.SILENT", f"({keyword})")), "store")

    async def _ensure_folder(self, folder: str) -> None:
        assert self._client is not None
        if folder in self._folders:
            return
        response = await self._call(self._client.create(_quote(folder)))
        if response.result != "OK" and b"ALREADYEXISTS" not in b" ".join(bytes(line) for line in response.lines):
            listed = await self._call(self._client.list('""', _quote(folder)))
            if not any(bytes(line).startswith(b"(") for line in listed.lines):
                raise MailServerError(f"cannot create the folder {folder!r} ({_text(response)})")
        self._folders.add(folder)

    async def idle(self, timeout: float, missed: Callable[[], Awaitable[bool]] | None = None) -> bool:
        """Wait in IDLE up to `timeout` seconds; True as soon as the server reports new mail, or
        at once when ``missed``, asked once IDLE has begun, finds mail that no push will announce
        (it came before IDLE began, or was announced before and left unread)."""
        assert self._client is not None
        queue = self._client.protocol.idle_queue
        while not queue.empty():  # pushes of an earlier IDLE; the fetch after it has seen their mail
            queue.get_nowait()
        idle = await self._call(self._client.idle_start(timeout=min(timeout, IDLE_MAX_SECONDS)))
        try:
            if missed is not None and await missed():
                return True
            deadline = time.monotonic() + timeout
            while (remaining := deadline - time.monotonic()) > 0:
                push = asyncio.ensure_future(queue.get())
                await asyncio.wait({push, self._lost}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
                if not push.done():
                    push.cancel()
                    if not self.alive:
                        raise ConnectionResetError("the connection to the server was lost")
                    return False
                lines = push.result()
                if lines == aioimaplib.STOP_WAIT_SERVER_PUSH:
                    return False
                if any(bytes(line).endswith((b" EXISTS", b" RECENT")) for line in lines):
                    return True
            return False
        finally:
            if self.alive and self._client.has_pending_idle():
                self._client.idle_done()
                await asyncio.wait({idle, self._lost}, timeout=GOODBYE_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)

    def _check(self, response: aioimaplib.Response, what: str) -> None:
        if response.result != "OK":
            raise MailServerError(f"{what} refused by the server ({_text(response)})")

    async def close(self) -> None:
        """Log out politely when possible; never raises."""
        if self._client is not None and self.alive:
            try:
                await asyncio.wait_for(self._client.logout(), GOODBYE_TIMEOUT)
            except Exception:  # the server went away first: nothing to tidy up
                pass
        self.abandon()

    def abandon(self) -> None:
        """Drop the connection without a word (after an error, or when a wait was cancelled)."""
        if self._client is not None and self._client.protocol.transport is not None:
            self._client.protocol.transport.close()
        self._connection_lost(None)


def _text(response: aioimaplib.Response) -> str:
    text = bytes(response.lines[-1]).decode(errors="replace") if response.lines else ""
    return " ".join(text.split())[:200] or response.result


@dataclass
class _Backoff:
    """When to try the server again: 1 s after the first failure, doubling up to 5 minutes."""

    failures: int = 0
    next_attempt: float = 0.0
    last_problem: str = ""

    def failed(self) -> float:
        self.failures += 1
        delay = min(BACKOFF_FIRST * 2.0 ** (self.failures - 1), BACKOFF_MAX)
        self.next_attempt = time.monotonic() + delay
        return delay

    def wait_seconds(self) -> float:
        return max(0.0, self.next_attempt - time.monotonic())


class ImapSource:
    """The daemon's `InboundSource` on an IMAP mailbox (see the module docstring)."""

    def __init__(self, config: ImapConfig, timeout: float = COMMAND_TIMEOUT) -> None:
        self.config = config
        self.timeout = timeout
        self._commands: ImapSession | None = None
        self._watcher: ImapSession | None = None
        self._lock = asyncio.Lock()
        self._backoff = _Backoff()
        self._unmovable: set[str] = set()
        """Folders that could not be created or moved to: mail for them is flagged instead."""
        self._fetched_up_to: tuple[int, int] | None = None
        """(UIDVALIDITY, the highest UID) of the mails the last fetch returned: a pending mail above
        it has not been read yet."""

    def __repr__(self) -> str:
        config = self.config
        return f"ImapSource({config.username}@{config.host}:{config.port} {config.security} {config.mailbox!r})"

    async def fetch(self) -> list[SourceMessage]:
        async with self._lock:
            session = await self._session("_commands")
            if session is None:
                return []
            messages = []
            try:
                batch = (await session.pending_uids())[:FETCH_BATCH]
                for uid in batch:
                    raw = await session.fetch(uid)
                    if raw is not None:
                        messages.append(SourceMessage(f"{session.uidvalidity}:{uid}", raw))
                self._fetched_up_to = (session.uidvalidity, max(batch, default=0))
            except Exception as exc:
                self._trouble("_commands", exc)
            return messages

    async def _unread(self) -> bool:
        """Whether a mail waits that the last fetch did not return: one that came between that
        fetch and the watcher's IDLE, which the server may announce in no IDLE push, or one
        beyond the fetch's batch, announced already (issue 36: a burst waited for the poll)."""
        async with self._lock:
            session = await self._session("_commands")
            if session is None:
                return False
            try:
                pending = await session.pending_uids()
            except Exception as exc:
                self._trouble("_commands", exc)
                return False
            if self._fetched_up_to is None or self._fetched_up_to[0] != session.uidvalidity:
                return bool(pending)
            return any(uid > self._fetched_up_to[1] for uid in pending)

    async def mark_done(self, key: str) -> None:
        await self._put_away(key, DONE_FOLDER, DONE_KEYWORD)

    async def mark_failed(self, key: str, reason: str) -> None:
        log.warning("inbox: %s: %s", key, reason)
        await self._put_away(key, FAILED_FOLDER, FAILED_KEYWORD)

    async def _put_away(self, key: str, parts: tuple[str, ...], keyword: str) -> None:
        """Move the mail to its folder, or flag it if it cannot be moved; if the server is gone, the
        mail stays and is read (and put away) again later."""
        uidvalidity, _, uid_text = key.partition(":")
        async with self._lock:
            session = await self._session("_commands")
            if session is None or str(session.uidvalidity) != uidvalidity:
                return
            uid, folder = int(uid_text), session.folder(parts)
            try:
                if folder not in self._unmovable:
                    try:
                        await session.move(uid, folder)
                        return
                    except MailServerError as exc:
                        self._unmovable.add(folder)
                        log.error("IMAP: cannot move mail to %s (%s); flagging it %s instead", folder, exc, keyword)
                await session.flag(uid, keyword)
            except Exception as exc:
                self._trouble("_commands", exc)

    async def wait_for_mail(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        if not self.config.idle:
            await asyncio.sleep(timeout)
            return
        if self._backoff.failures:
            await asyncio.sleep(min(self._backoff.wait_seconds(), timeout))
            if time.monotonic() >= deadline:
                return
        fresh = self._watcher is None or not self._watcher.alive
        watcher = await self._session("_watcher")
        if watcher is None or (fresh and watcher.exists):
            return  # mail that came while nobody watched announces itself in no IDLE: read it now
        if not watcher.can_idle:
            await asyncio.sleep(max(0.0, deadline - time.monotonic()))
            return
        try:
            await watcher.idle(max(0.0, deadline - time.monotonic()), self._unread)
        except asyncio.CancelledError:
            self._drop("_watcher")
            raise
        except Exception as exc:
            self._trouble("_watcher", exc)

    async def requeue(self, message_id: str | None) -> int:
        session = await ImapSession.open(self.config, self.timeout)
        try:
            return await session.requeue(message_id)
        finally:
            await session.close()

    async def close(self) -> None:
        for name in ("_commands", "_watcher"):
            session = getattr(self, name)
            setattr(self, name, None)
            if session is not None:
                await session.close()

    async def _session(self, name: str) -> ImapSession | None:
        """The named session, (re)connected if need be; None while the server is in back-off."""
        session: ImapSession | None = getattr(self, name)
        if session is not None and session.alive:
            return session
        self._drop(name)
        if self._backoff.wait_seconds() > 0:
            return None
        try:
            session = await ImapSession.open(self.config, self.timeout)
        except Exception as exc:
            self._failed(exc)
            return None
        if self._backoff.failures:
            log.info("IMAP %s:%d: connected again", self.config.host, self.config.port)
            self._backoff = _Backoff()
        setattr(self, name, session)
        return session

    def _trouble(self, name: str, error: Exception) -> None:
        """A command failed: drop that session; it reconnects at the next use."""
        self._drop(name)
        self._failed(error)

    def _drop(self, name: str) -> None:
        session: ImapSession | None = getattr(self, name)
        if session is not None:
            session.abandon()
        setattr(self, name, None)

    def _failed(self, error: Exception) -> None:
        """Log the first failure of a spell (and any change of cause) in one clear line."""
        problem = explain(error, "IMAP", self.config.host, self.config.port, self.config.security)
        delay = self._backoff.failed()
        if problem != self._backoff.last_problem:
            level = logging.ERROR if isinstance(error, LoginRefused) else logging.WARNING
            log.log(level, "%s; trying again in %.0f s, then less and less often", problem, delay)
            self._backoff.last_problem = problem
        else:
            log.debug("%s; trying again in %.0f s", problem, delay)
