"""Outgoing mail over SMTP (aiosmtplib): the `OutboundSink` for a real mail server.

One connection is kept open between mails and opened again when the server dropped it. Any
refusal raises, so the pipeline retries the mail later with growing back-off, under the same
Message-ID. A mail accepted for some recipients and refused for others counts as sent (retrying
would send it twice to the first), and the refusal is logged.

aiosmtplib turns every line end of a mail into CRLF and dot-stuffs its lines with regular
expressions that Python's engine tries at every byte, three passes for each mail (the line ends
once more to announce its SIZE): 0.7 ms of the 15 a game letter of 43 kB may cost. The same
bytes come from ``bytes.replace`` in C in a tenth of that, so this module hands aiosmtplib those
two steps done that way (:func:`crlf_lines`, :class:`_DotStuffing`; the tests compare them with
aiosmtplib's own on any bytes, and what a real server receives).
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
from collections.abc import Callable

import aiosmtplib
import aiosmtplib.protocol
import aiosmtplib.smtp

from pbem.config import SmtpConfig
from pbem.mail.connecting import LoginRefused, MailServerError, PermanentRefusal

log = logging.getLogger(__name__)

TIMEOUT = 60.0
GOODBYE_TIMEOUT = 2.0  # QUIT must not hold up a stop (SIGTERM: exit within 15 s)


def crlf_lines(message: bytes) -> bytes:
    """Every line end (CRLF, a lone LF, a lone CR) as CRLF, and a CRLF at the end: what
    aiosmtplib's ``normalize_message_line_endings`` returns.  A mail with plain LF line ends (as
    the outbox keeps them) takes one pass."""
    if b"\r" not in message:
        message = message.replace(b"\n", b"\r\n")
    else:
        message = message.replace(b"\r\n", b"\n").replace(b"\r", b"\n").replace(b"\n", b"\r\n")
    return message if message.endswith(b"\r\n") else message + b"\r\n"


class _DotStuffing:
    """Stands in for aiosmtplib's ``PERIOD_REGEX`` (``(?m)^\\.``, of which DATA calls ``sub``): a
    dot that starts a line is replaced, the one that starts the mail and every one after a LF."""

    @staticmethod
    def sub(replacement: bytes, message: bytes) -> bytes:
        stuffed = message.replace(b"\n.", b"\n" + replacement)
        return replacement + stuffed[1:] if stuffed.startswith(b".") else stuffed


def _quicker_data() -> tuple[Callable[[bytes], bytes], re.Pattern[bytes]] | None:
    """Let aiosmtplib prepare DATA by :func:`crlf_lines` and :class:`_DotStuffing`; its own two
    (a release whose modules no longer have these names keeps them: None)."""
    protocol, smtp = aiosmtplib.protocol, aiosmtplib.smtp
    if not (all(hasattr(module, "normalize_message_line_endings") for module in (protocol, smtp))
            and isinstance(getattr(protocol, "PERIOD_REGEX", None), re.Pattern)):
        return None
    own = protocol.normalize_message_line_endings, protocol.PERIOD_REGEX
    protocol.normalize_message_line_endings = crlf_lines
    setattr(smtp, "normalize_message_line_endings", crlf_lines)  # SIZE: imported from the protocol module
    protocol.PERIOD_REGEX = _DotStuffing()  # type: ignore[assignment]
    return own


AIOSMTPLIB_OWN_DATA = _quicker_data()
"""aiosmtplib's own line ends and dot-stuffing, kept to compare against."""


class SmtpSink:
    """Sends each mail through the configured server (ssl, starttls or none; login when configured)."""

    def __init__(self, config: SmtpConfig, timeout: float = TIMEOUT) -> None:
        self.config = config
        self.timeout = timeout
        self._client: aiosmtplib.SMTP | None = None

    def __repr__(self) -> str:
        config = self.config
        login = f"{config.username}@" if config.username else ""
        return f"SmtpSink({login}{config.host}:{config.port} {config.security})"

    async def connect(self) -> aiosmtplib.SMTP:
        """A connected (and logged-in) client; MailServerError or an OSError/SSLError says what failed."""
        config = self.config
        context = ssl.create_default_context() if config.security != "none" else None
        client = aiosmtplib.SMTP(hostname=config.host, port=config.port, timeout=self.timeout,
                                 use_tls=config.security == "ssl", start_tls=config.security == "starttls",
                                 tls_context=context)
        try:
            await client.connect()
        except aiosmtplib.SMTPConnectError as exc:
            raise (exc.__cause__ if isinstance(exc.__cause__, OSError) else exc) from None
        except aiosmtplib.SMTPConnectTimeoutError as exc:
            raise TimeoutError(str(exc)) from None
        if config.username is not None and config.password is not None:
            try:
                await client.login(config.username, config.password.get_secret_value())
            except aiosmtplib.SMTPAuthenticationError as exc:
                client.close()
                raise LoginRefused(f"login as {config.username} refused ({exc.code} {exc.message}); "
                                   "check username and password") from None
            except aiosmtplib.SMTPException as exc:
                client.close()
                raise MailServerError(f"login as {config.username} not possible ({exc})") from None
        return client

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        if self._client is None or not self._client.is_connected:
            self._client = await self.connect()
        try:
            # Stored mails have plain LF; aiosmtplib's DATA turns every line end into the CRLF that
            # SMTP wants (RFC 5321 2.3.8) and dot-stuffs, in one pass over the mail.
            errors, _ = await self._client.sendmail(sender, recipients, raw)
        except aiosmtplib.SMTPServerDisconnected:
            self._client = None
            raise
        except aiosmtplib.SMTPRecipientsRefused as exc:
            await self._reset()
            if not all(refusal.code >= 500 for refusal in exc.recipients):
                raise
            raise PermanentRefusal("; ".join(f"{refusal.recipient}: {refusal.code} {refusal.message}"
                                             for refusal in exc.recipients)) from exc
        except aiosmtplib.SMTPResponseException:
            await self._reset()
            raise
        for recipient, (code, message) in errors.items():
            log.warning("SMTP: %s refused %s (%d %s); the others got the mail", self.config.host, recipient,
                        code, message)

    async def _reset(self) -> None:
        """After a refusal the session may be mid-transaction: start the next mail afresh."""
        try:
            if self._client is not None:
                await self._client.rset()
        except aiosmtplib.SMTPException:
            self.close_now()

    def close_now(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    async def close(self) -> None:
        if self._client is not None and self._client.is_connected:
            try:
                await asyncio.wait_for(self._client.quit(), GOODBYE_TIMEOUT)
            except (TimeoutError, aiosmtplib.SMTPException):
                pass  # leaving anyway
        self.close_now()
