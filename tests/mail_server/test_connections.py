"""Connecting to the mail servers: TLS both ways, logins, failures told in plain words, passwords
never logged, and `pbem check`."""

from __future__ import annotations

import asyncio
import logging
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import aiosmtplib.protocol
import aiosmtplib.smtp
import pytest
from conftest import SERVICE, write_config
from mail_servers import Dovecot, Recorder, SmtpServer, free_port

from pydantic import SecretStr

from pbem.config import ImapConfig, SmtpConfig
from pbem.mail.connecting import LoginRefused, MailServerError
from pbem.mail.imap import ImapSession, ImapSource
from pbem.mail.smtp import AIOSMTPLIB_OWN_DATA, SmtpSink

WRONG = "Tr0ub4dor&3-not-the-password"


@pytest.fixture
def tls_dovecot(monkeypatch) -> Iterator[Dovecot]:
    """Dovecot with SSL and STARTTLS; its self-signed certificate is trusted through SSL_CERT_FILE."""
    server = Dovecot(dict([SERVICE]), tls=True)
    server.start()
    monkeypatch.setenv("SSL_CERT_FILE", str(server.cert))
    yield server
    server.remove()


def imap_config(dovecot: Dovecot, **changes) -> ImapConfig:
    config = ImapConfig(host="127.0.0.1", port=dovecot.port, security="none", username=SERVICE[0],
                        password=SecretStr(SERVICE[1]))
    return config.model_copy(update=changes)


async def read_and_put_away(config: ImapConfig) -> bytes:
    source = ImapSource(config, timeout=5)
    try:
        (message,) = await source.fetch()
        await source.mark_done(message.key)
        assert await source.fetch() == []
        return message.raw
    finally:
        await source.close()


@pytest.mark.parametrize("security", ["ssl", "starttls"])
def test_imap_over_tls(tls_dovecot, security):
    tls_dovecot.deliver(SERVICE[0], b"Subject: over TLS\r\nMessage-ID: <tls@example.org>\r\n\r\nroll\r\n")
    port = tls_dovecot.ssl_port if security == "ssl" else tls_dovecot.port
    config = imap_config(tls_dovecot, host="localhost", port=port, security=security)
    assert b"over TLS" in asyncio.run(read_and_put_away(config))
    assert len(tls_dovecot.messages(SERVICE[0], "pbem.done")) == 1


@pytest.mark.parametrize("capabilities", ["IMAP4rev1 IDLE LITERAL+ UIDPLUS", "IMAP4rev1 IDLE LITERAL+"])
def test_servers_without_move_get_copy_delete_and_expunge(capabilities):
    """An older server: no MOVE (then COPY, \\Deleted, UID EXPUNGE), not even UIDPLUS (then EXPUNGE)."""
    server = Dovecot(dict([SERVICE]), capabilities=capabilities)
    server.start()
    try:
        for number in (1, 2):
            server.deliver(SERVICE[0], f"Subject: {number}\r\nMessage-ID: <{number}@example.org>\r\n\r\nx\r\n".encode())
        source = ImapSource(imap_config(server), timeout=5)

        async def put_away_the_first() -> list:
            try:
                first, _ = await source.fetch()
                await source.mark_done(first.key)
                return await source.fetch()
            finally:
                await source.close()

        (left,) = asyncio.run(put_away_the_first())
        assert b"Subject: 2" in left.raw
        (done,) = server.messages(SERVICE[0], "pbem.done")
        assert b"Subject: 1" in done
        assert server.pending(SERVICE[0]) == 1
    finally:
        server.remove()


def test_a_server_at_its_connection_limit_is_named_as_such_not_as_a_wrong_password():
    server = Dovecot(dict([SERVICE]), settings="mail_max_userip_connections = 1")
    server.start()
    try:
        async def two_sessions() -> str:
            first = await ImapSession.open(imap_config(server), timeout=5)
            try:
                await ImapSession.open(imap_config(server), timeout=5)
            except MailServerError as refused:
                assert not isinstance(refused, LoginRefused)
                return str(refused)
            finally:
                await first.close()
            raise AssertionError("a second session was allowed")

        said = asyncio.run(two_sessions())
        assert "allows no more connections" in said and "mail_max_userip_connections" in said, said
    finally:
        server.remove()


def test_smtp_with_starttls_and_login_sends_crlf_lines(tls_dovecot):
    server = SmtpServer(login=("pbem", "smtp-secret"), tls=(tls_dovecot.cert, tls_dovecot.cert.with_name("key.pem")))
    server.start()
    try:
        sink = SmtpSink(SmtpConfig(host="localhost", port=server.port, security="starttls", username="pbem",
                                   password=SecretStr("smtp-secret")), timeout=5)

        async def send() -> None:
            await sink.send(b"Subject: hi\nMessage-ID: <one@localhost>\n\nline 1\nline 2\n", "backgammon@localhost",
                            ["anna@example.org"])
            await sink.close()

        asyncio.run(send())
        (mail,) = server.recorder.received
        assert mail.recipients == ("anna@example.org",)
        assert b"line 1\r\nline 2\r\n" in mail.raw and b"Subject: hi\r\n" in mail.raw
    finally:
        server.stop()


class _SizeRecorder(Recorder):
    """Keeps each mail's MAIL FROM options too (the SIZE it was announced with)."""

    def __init__(self) -> None:
        super().__init__()
        self.options: list[list[str]] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        self.options.append(list(envelope.mail_options))
        return await super().handle_DATA(server, session, envelope)


def test_smtp_data_reaches_a_real_server_as_aiosmtplib_itself_sends_it(monkeypatch):
    """pbem.mail.smtp prepares DATA by bytes.replace where aiosmtplib uses regular expressions:
    a real server (aiosmtpd) receives the same mail, announced with the same SIZE, either way."""
    assert AIOSMTPLIB_OWN_DATA is not None
    mails = [b"Subject: dots\n\n.starts\n..two\n.\nlone CR\rmixed\r\n\r\n. dot space\n\xc3\xa4 end",
             b"Subject: x\r\n\r\n.\r\n", b".\n", b"Subject: crlf\r\n\r\nline\r\n" * 50]

    def received_by_a_server() -> tuple[list[bytes], list[list[str]]]:
        server = SmtpServer()
        server.recorder = server.controller.handler = _SizeRecorder()
        server.start()
        try:
            sink = SmtpSink(SmtpConfig(host="127.0.0.1", port=server.port, security="none"), timeout=5)

            async def send() -> None:
                for raw in mails:
                    await sink.send(raw, "backgammon@localhost", ["anna@example.org"])
                await sink.close()

            asyncio.run(send())
            return [mail.raw for mail in server.recorder.received], server.recorder.options
        finally:
            server.stop()

    quicker = received_by_a_server()
    own_line_ends, own_dots = AIOSMTPLIB_OWN_DATA
    monkeypatch.setattr(aiosmtplib.protocol, "normalize_message_line_endings", own_line_ends)
    monkeypatch.setattr(aiosmtplib.smtp, "normalize_message_line_endings", own_line_ends)
    monkeypatch.setattr(aiosmtplib.protocol, "PERIOD_REGEX", own_dots)
    assert quicker == received_by_a_server()
    assert quicker[0][0].startswith(b"Subject: dots\r\n\r\n.starts\r\n..two\r\n.\r\nlone CR\r\nmixed\r\n")
    assert all(any(option.upper().startswith("SIZE=") for option in options) for options in quicker[1])


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_wrong_smtp_password_raises_in_plain_words_without_the_password(caplog):
    caplog.set_level(logging.DEBUG)
    server = SmtpServer(login=("pbem", "smtp-secret"))
    server.start()
    try:
        sink = SmtpSink(SmtpConfig(host="127.0.0.1", port=server.port, security="none", username="pbem",
                                   password=SecretStr(WRONG)), timeout=5)
        with pytest.raises(LoginRefused, match="login as pbem refused .*check username and password") as caught:
            asyncio.run(sink.send(b"Subject: x\n\nx\n", "backgammon@localhost", ["anna@example.org"]))
        assert WRONG not in str(caught.value) and WRONG not in caplog.text
        assert server.recorder.received == []
    finally:
        server.stop()


def test_wrong_imap_password_one_clear_line_then_retries_until_it_works(dovecot, caplog):
    """The daemon's source keeps trying with back-off; the log says it once and never shows the password."""
    caplog.set_level(logging.DEBUG)
    dovecot.deliver(SERVICE[0], b"Subject: waiting\r\nMessage-ID: <w@example.org>\r\n\r\nroll\r\n")
    source = ImapSource(imap_config(dovecot, password=SecretStr(WRONG)), timeout=5)

    async def keep_reading() -> list:
        deadline = time.monotonic() + 10
        attempts = 0
        try:
            while time.monotonic() < deadline:
                if messages := await source.fetch():
                    return messages
                attempts += 1
                if attempts == 2:  # the operator gives the account this password and restarts the server
                    dovecot.users[SERVICE[0]] = WRONG
                    (dovecot.root / "passwd").write_text(f"{SERVICE[0]}:{{PLAIN}}{WRONG}\n")
                    dovecot.restart()
                await source.wait_for_mail(1)
            return []
        finally:
            await source.close()

    messages = asyncio.run(keep_reading())
    assert [message.raw.split(b"\r\n")[0] for message in messages] == [b"Subject: waiting"]
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert len(errors) == 1, [record.getMessage() for record in errors]
    assert f"login as {SERVICE[0]} refused" in errors[0].getMessage()
    assert "check username and password" in errors[0].getMessage()
    assert any("connected again" in record.getMessage() for record in caplog.records)
    assert WRONG not in caplog.text


def pbem_check(config_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pbem.cli", "check", "--config", str(config_path)],
                          capture_output=True, text=True, timeout=60, check=False)


def test_check_says_ok_for_working_servers(data_dir, dovecot, smtp_server, database_table):
    result = pbem_check(write_config(data_dir, dovecot, smtp_server, database_table))
    assert result.returncode == 0, result.stdout + result.stderr
    imap_line, smtp_line, web_line = (next(line for line in result.stdout.splitlines() if line.startswith(prefix))
                                      for prefix in ("IMAP", "SMTP", "Web board"))
    assert any(line.startswith("database: ") for line in result.stdout.splitlines()), result.stdout
    assert web_line.startswith("Web board: off")
    assert imap_line.startswith(f"IMAP 127.0.0.1:{dovecot.port} (none): OK: logged in as {SERVICE[0]}")
    assert "IDLE offered" in imap_line and "pbem.done" in imap_line
    assert smtp_line.startswith(f"SMTP 127.0.0.1:{smtp_server.port} (none): OK: connected")
    assert smtp_server.recorder.received == []


@pytest.mark.parametrize("imap, says", [
    ({"port": "closed"}, "connection refused, nothing listens there; check host and port"),
    ({"host": "no-such-host.invalid"}, "the host name 'no-such-host.invalid' cannot be resolved; check host"),
    ({"password": WRONG}, "login as backgammon@localhost refused"),
    ({"mailbox": "Nowhere"}, "mailbox 'Nowhere' cannot be opened"),
    ({"security": "ssl"}, "TLS handshake failed"),
])
def test_check_says_what_is_wrong(data_dir, dovecot, smtp_server, database_table, imap, says):
    if imap.get("port") == "closed":
        imap = {"port": free_port()}
    result = pbem_check(write_config(data_dir, dovecot, smtp_server, database_table, imap=imap))
    assert result.returncode == 1
    imap_line, smtp_line = (next(line for line in result.stdout.splitlines() if line.startswith(prefix))
                            for prefix in ("IMAP", "SMTP"))
    assert imap_line.startswith("IMAP ") and says in imap_line, imap_line
    assert smtp_line.startswith("SMTP ") and ": OK: " in smtp_line
    assert WRONG not in result.stdout + result.stderr


def test_check_names_a_refused_smtp_server_and_a_bad_config(data_dir, dovecot, smtp_server, database_table):
    path = write_config(data_dir, dovecot, smtp_server, database_table)
    with socket.socket() as refusing:  # bound, never listening: refused, and no other server can take the port meanwhile
        refusing.bind(("127.0.0.1", 0))
        path.write_text(path.read_text().replace(f"port = {smtp_server.port}", f"port = {refusing.getsockname()[1]}"))
        result = pbem_check(path)
    assert result.returncode == 1 and "SMTP 127.0.0.1:" in result.stdout and "connection refused" in result.stdout
    before, smtp_security, after = path.read_text().rpartition('security = "none"')  # the [smtp] table's
    path.write_text(before + 'security = "tls"' + after)
    result = pbem_check(path)
    assert result.returncode == 2 and "[smtp] security: must be ssl | starttls | none" in result.stderr


def test_where_mail_cannot_be_moved_it_is_flagged_and_skipped(dovecot, caplog):
    """A file where the folder should be makes CREATE fail; the mails stay, flagged, and are not read again."""
    for number in (1, 2):
        dovecot.deliver(SERVICE[0], f"Subject: {number}\r\nMessage-ID: <{number}@example.org>\r\n\r\nroll\r\n".encode())
    (dovecot.root / "mail" / SERVICE[0] / ".pbem.done").write_text("in the way")
    source = ImapSource(imap_config(dovecot), timeout=5)

    async def put_away() -> list:
        try:
            for message in await source.fetch():
                await source.mark_done(message.key)
            return await source.fetch()
        finally:
            await source.close()

    assert asyncio.run(put_away()) == []
    assert len(dovecot.messages(SERVICE[0])) == 2
    client = dovecot.client(SERVICE[0])
    client.select("INBOX")
    assert client.uid("SEARCH", "KEYWORD", "$PbemDone")[1][0].split() == [b"1", b"2"]
    client.logout()
    errors = [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]
    assert len(errors) == 1 and "cannot move mail to pbem.done" in errors[0] and "flagging it $PbemDone" in errors[0]


def test_failed_mail_goes_to_pbem_failed_with_the_reason_logged(dovecot, caplog):
    dovecot.deliver(SERVICE[0], b"Subject: garbled\r\nMessage-ID: <bad@example.org>\r\n\r\n\xff\xfe\r\n")
    dovecot.deliver(SERVICE[0], b"Subject: fine\r\nMessage-ID: <good@example.org>\r\n\r\nroll\r\n")
    source = ImapSource(imap_config(dovecot), timeout=5)

    async def shunt_the_first() -> list:
        try:
            bad, _ = await source.fetch()
            await source.mark_failed(bad.key, "UnicodeDecodeError: cannot read the body")
            return await source.fetch()
        finally:
            await source.close()

    (left,) = asyncio.run(shunt_the_first())
    assert b"<good@example.org>" in left.raw
    (failed,) = dovecot.messages(SERVICE[0], "pbem.failed")
    assert b"<bad@example.org>" in failed
    assert any("cannot read the body" in record.getMessage() for record in caplog.records)
