"""A private Dovecot IMAP server and an aiosmtpd SMTP server on loopback, for tests and the bench.

Dovecot runs from a config written into its own directory (`dovecot -c FILE -F`), so it never
reads the system's configuration: plain logins from a passwd-file of test users, Maildir
mailboxes under the directory, and, when asked, SSL and STARTTLS with a self-signed certificate
made by the `openssl` command (which the Dovecot package depends on). Mail is delivered with
IMAP APPEND, as a mail server's delivery agent would put it there.

The SMTP server records what it receives; it can refuse mail for a while (`451`, as a greylisting
server does) or demand a login.
"""

from __future__ import annotations

import imaplib
import os
import pwd
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from email.policy import SMTP as SMTP_POLICY
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"
START_SECONDS = 10.0

_CONFIG = """\
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
first_valid_uid = {uid}
default_login_user = {login_user}
default_internal_user = {internal_user}
mail_location = maildir:{root}/mail/%u
mail_uid = {uid}
mail_gid = {gid}
{settings}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%u
}}
service imap-login {{
  inet_listener imap {{
    port = {port}
  }}
  inet_listener imaps {{
    port = {ssl_port}
  }}
  chroot =
}}
service anvil {{
  chroot =
}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _alive_in_group(group: int) -> bool:
    """Whether a process of the process group still runs (zombies, which hold no socket, aside)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            return True
    return False


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for `localhost` and 127.0.0.1: (certificate, key)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True)
    return cert, key


def crlf(raw: bytes) -> bytes:
    return re.sub(rb"\r?\n", b"\r\n", raw)


class Dovecot:
    """One private Dovecot; `users` maps each login to its password.

    Run as root, Dovecot refuses to keep mail as root, so the mail then belongs to `nobody` and
    the directory is made theirs; run as anyone else, everything runs as that user.
    """

    def __init__(self, users: dict[str, str], tls: bool = False, capabilities: str | None = None,
                 settings: str = "") -> None:
        """`capabilities` replaces the IMAP capabilities Dovecot announces after the login (to play
        an older server without MOVE, say); `settings` are more lines of its config."""
        self.users = dict(users)
        self.root = Path(tempfile.mkdtemp(prefix="pbem-dovecot-"))
        self.port = free_port()
        self.ssl_port = free_port() if tls else 0
        self.cert: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        for sub in ("run", "state", "mail", "home"):
            (self.root / sub).mkdir()
        (self.root / "passwd").write_text(
            "".join(f"{user}:{{PLAIN}}{password}\n" for user, password in self.users.items()))
        extra, settings = settings, "ssl = no"
        if tls:
            self.cert, key = make_certificate(self.root)
            settings = f"ssl = yes\nssl_cert = <{self.cert}\nssl_key = <{key}"
        settings += f"\n{extra}"
        if os.getuid() == 0:
            mail_user = pwd.getpwnam("nobody")
            login_user, internal_user = "dovenull", "dovecot"
            self.root.chmod(0o755)
            for path in (self.root / "mail", self.root / "home"):
                os.chown(path, mail_user.pw_uid, mail_user.pw_gid)
        else:
            mail_user = pwd.getpwuid(os.getuid())
            login_user = internal_user = mail_user.pw_name
        self.config = self.root / "dovecot.conf"
        if capabilities is not None:
            settings += f"\nimap_capability = {capabilities}"
        self.config.write_text(_CONFIG.format(
            root=self.root, uid=mail_user.pw_uid, gid=mail_user.pw_gid, login_user=login_user,
            internal_user=internal_user, port=self.port, ssl_port=self.ssl_port, settings=settings))

    def start(self) -> None:
        """Start it and wait until it greets: a listening port alone could still be the socket of
        a session process of the instance killed just before, which greets nobody."""
        self.process = subprocess.Popen([DOVECOT, "-c", str(self.config), "-F"], start_new_session=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_SECONDS
        while not self._greets():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"dovecot did not start: {self.log()}")
            time.sleep(0.02)

    def _greets(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                return connection.recv(64).startswith(b"* OK")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the server and every session process it started, as a crash or a reboot would;
        returns once none of them is left (so a new instance gets the port)."""
        if self.process is not None:
            group = self.process.pid
            os.killpg(group, signal.SIGKILL)
            self.process.wait(timeout=START_SECONDS)
            self.process = None
            deadline = time.monotonic() + START_SECONDS
            while _alive_in_group(group) and time.monotonic() < deadline:
                time.sleep(0.02)

    def restart(self) -> None:
        self.stop()
        self.start()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def log(self) -> str:
        path = self.root / "dovecot.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def client(self, user: str) -> imaplib.IMAP4:
        """A bare, logged-in IMAP client (Python's imaplib)."""
        client = imaplib.IMAP4("127.0.0.1", self.port)
        client.login(user, self.users[user])
        return client

    def deliver(self, user: str, message: EmailMessage | bytes, mailbox: str = "INBOX") -> None:
        """Put a mail into `user`'s mailbox, as a delivery agent would."""
        raw = message if isinstance(message, bytes) else message.as_bytes(policy=SMTP_POLICY)
        client = self.client(user)
        try:
            status, answer = client.append(mailbox, None, None, crlf(raw))
            assert status == "OK", answer
        finally:
            client.logout()

    def deliver_all(self, user: str, raws: list[bytes], mailbox: str = "INBOX",
                    delivered: Callable[[int], None] = lambda index: None) -> None:
        """Put mails into `user`'s mailbox one after another over one connection, as a delivery
        agent that keeps its connection (LMTP) would; `delivered(index)` is called just before
        each.  A login per mail (:meth:`deliver`) costs Dovecot some 17 ms of CPU, which a
        benchmark would take from what it measures."""
        client = self.client(user)
        try:
            for index, raw in enumerate(raws):
                delivered(index)
                status, answer = client.append(mailbox, None, None, crlf(raw))
                assert status == "OK", answer
        finally:
            client.logout()

    def messages(self, user: str, mailbox: str = "INBOX") -> list[bytes]:
        """Every mail in `user`'s `mailbox` (empty when the mailbox does not exist)."""
        client = self.client(user)
        try:
            status, _ = client.select(_quote(mailbox), readonly=True)
            if status != "OK":
                return []
            _, data = client.uid("SEARCH", "ALL")
            raws = []
            for uid in data[0].split():
                _, parts = client.uid("FETCH", uid, "(BODY.PEEK[])")
                raws.append(next(part[1] for part in parts if isinstance(part, tuple)))
            return raws
        finally:
            client.logout()

    def pending(self, user: str) -> int:
        """How many mails wait in `user`'s INBOX, read from the Maildir itself (no IMAP session)."""
        inbox = self.root / "mail" / user
        return sum(1 for sub in ("new", "cur") if (inbox / sub).is_dir() for _ in (inbox / sub).iterdir())

    def client_context(self) -> ssl.SSLContext:
        """A TLS context that trusts this server's self-signed certificate."""
        assert self.cert is not None
        return ssl.create_default_context(cafile=str(self.cert))


def _quote(mailbox: str) -> str:
    return '"' + mailbox.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Received:
    sender: str
    recipients: tuple[str, ...]
    raw: bytes
    at: float
    """time.monotonic() when the mail was accepted."""


class Recorder:
    """The SMTP server's handler: keeps every mail; refuses all while `refusing` is set."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.refusing = False
        self.refused = 0
        self.unknown_users: set[str] = set()
        """Recipients refused for good (550), as a server refuses a mailbox that does not exist."""
        self._arrived = threading.Condition()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options) -> str:
        if address.lower() in self.unknown_users:
            self.refused += 1
            return "550 5.1.1 No such user here"
        if self.refusing:
            self.refused += 1
            return "451 4.3.0 Mailbox temporarily unavailable, try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:
        with self._arrived:
            self.received.append(Received(envelope.mail_from, tuple(envelope.rcpt_tos), envelope.content,
                                          time.monotonic()))
            self._arrived.notify_all()
        return "250 OK: queued"

    def refuse_for(self, seconds: float) -> None:
        """Refuse every mail (451) for `seconds`, from now on."""
        self.refusing = True
        timer = threading.Timer(seconds, setattr, (self, "refusing", False))
        timer.daemon = True
        timer.start()

    def wait_until(self, done: Callable[[list[Received]], bool], timeout: float) -> bool:
        """Block until ``done(every mail received)`` holds (checked as each mail arrives), or
        `timeout` seconds passed; returns whether it holds."""
        with self._arrived:
            return self._arrived.wait_for(lambda: done(self.received), timeout)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Block until at least `count` mails arrived in all; returns them all."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self.received) >= count, timeout):
                raise TimeoutError(f"{len(self.received)} mails arrived, {count} expected")
            return list(self.received)


class SmtpServer:
    """aiosmtpd on a free loopback port, in its own thread; `login` makes it demand AUTH."""

    def __init__(self, login: tuple[str, str] | None = None, tls: tuple[Path, Path] | None = None) -> None:
        self.recorder = Recorder()
        self.port = free_port()
        options: dict[str, object] = {}
        if login is not None:
            options.update(auth_required=True, auth_require_tls=tls is not None,
                           authenticator=_Authenticator(*login))
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            options.update(tls_context=context, require_starttls=True)
        self.controller = Controller(self.recorder, hostname="127.0.0.1", port=self.port, **options)

    def start(self) -> None:
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()


class _Authenticator:
    def __init__(self, user: str, password: str) -> None:
        self.user, self.password = user.encode(), password.encode()

    def __call__(self, server, session, envelope, mechanism, data) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (self.user, self.password)
        return AuthResult(success=ok, handled=False)
