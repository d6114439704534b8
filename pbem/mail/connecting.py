"""What went wrong with a mail server, in the plain words an operator needs to fix it.

Shared by the IMAP source, the SMTP sink and `pbem check`, so that the daemon's log line and the
check command name the same cause. No message ever contains a password.
"""

from __future__ import annotations

import asyncio
import socket
import ssl


class MailServerError(Exception):
    """A mail server could not be used; the message says why and what to check."""


class PermanentRefusal(MailServerError):
    """The server refused every recipient of a mail for good (5xx): sending it again cannot help."""


class LoginRefused(MailServerError):
    """The server refused the user name or password: retrying soon will not help."""


def explain(error: BaseException, service: str, host: str, port: int, security: str) -> str:
    """One line naming the server and the likely cause of `error`."""
    where = f"{service} {host}:{port} ({security})"
    if isinstance(error, MailServerError):
        return f"{where}: {error}"
    if isinstance(error, socket.gaierror):
        return f"{where}: the host name {host!r} cannot be resolved; check host"
    if isinstance(error, ConnectionRefusedError):
        return f"{where}: connection refused, nothing listens there; check host and port"
    if isinstance(error, ssl.SSLCertVerificationError):
        return (f"{where}: the server's TLS certificate is not trusted ({error.verify_message}); "
                "check host, or give a CA file in SSL_CERT_FILE")
    if isinstance(error, ssl.SSLError):
        return (f"{where}: TLS handshake failed ({error.reason or error}); check that security matches "
                "the port (ssl: usually 993/465, starttls: 143/587)")
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        return (f"{where}: no answer in time; check host, port and firewall, and that security matches the "
                "port (a TLS port waits silently for a TLS handshake)")
    if isinstance(error, (ConnectionError, EOFError)):
        return f"{where}: the connection was closed by the server ({type(error).__name__})"
    if isinstance(error, OSError):
        return f"{where}: {error.strerror or error}"
    return f"{where}: {type(error).__name__}: {error}"
