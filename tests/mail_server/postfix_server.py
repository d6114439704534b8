"""A private Postfix, started as Dovecot is: its own configuration, queue and log in a fresh
directory, listening on a free loopback port, and gone again after the test.

It plays the operator's outgoing mail server: it relays every domain to a loopback SMTP server
(``routes``), and, like any real MTA, it returns a mail the next server refused for good to its
envelope sender as a DSN that Postfix itself writes.  Starting it needs root (Postfix's master
runs its daemons as the ``postfix`` user), as Debian's package is installed.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from mail_servers import free_port

POSTFIX = shutil.which("postfix") or "/usr/sbin/postfix"
MASTER_SERVICES = """\
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
"""


def available() -> str | None:
    """Why a private Postfix cannot run here, or None when it can."""
    if not Path(POSTFIX).exists():
        return "Postfix is not installed (Debian package postfix)"
    if os.geteuid() != 0:
        return "a private Postfix needs root"
    return None


class Postfix:
    def __init__(self, routes: dict[str, int]) -> None:
        """``routes``: domain → the loopback SMTP port Postfix hands its mail to."""
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="pbem-postfix-"))
        self.directory.chmod(0o755)  # the postfix user works in it
        self.config = self.directory / "etc"
        for sub in ("etc", "queue", "data"):
            (self.directory / sub).mkdir()
        shutil.chown(self.directory / "data", "postfix")
        (self.config / "transport").write_text(
            "".join(f"{domain} smtp:[127.0.0.1]:{port}\n" for domain, port in routes.items()), encoding="ascii")
        (self.config / "main.cf").write_text(f"""\
compatibility_level = 3.6
queue_directory = {self.directory}/queue
data_directory = {self.directory}/data
maillog_file = {self.directory}/maillog
maillog_file_prefixes = {self.directory}
mail_owner = postfix
setgid_group = postdrop
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
myhostname = mx.pbem.test
mydomain = pbem.test
myorigin = pbem.test
mydestination =
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks reject
alias_maps =
alias_database =
smtp_dns_support_level = disabled
smtp_host_lookup = native
transport_maps = texthash:{self.config}/transport
""", encoding="ascii")
        (self.config / "master.cf").write_text(
            f"127.0.0.1:{self.port} inet n - n - - smtpd\n" + MASTER_SERVICES, encoding="ascii")

    def start(self, timeout: float = 30.0) -> None:
        subprocess.run([POSTFIX, "-c", str(self.config), "start"], check=False, capture_output=True, timeout=timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"Postfix did not start:\n{self.log()}")

    def log(self) -> str:
        path = self.directory / "maillog"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else "(no log)"

    def remove(self) -> None:
        subprocess.run([POSTFIX, "-c", str(self.config), "abort"], check=False, capture_output=True, timeout=30)
        shutil.rmtree(self.directory, ignore_errors=True)
