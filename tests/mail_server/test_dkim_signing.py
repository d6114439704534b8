"""DKIM signatures on outgoing mail: a real game mail (text, HTML and the board picture) signed
with an RSA or Ed25519 key made by openssl, verified by dkimpy against the public key as openssl
prints it, both as signed and as a real SMTP server (aiosmtpd) received it after aiosmtplib
turned its LF line ends into CRLF; a changed body or subject fails; a key that cannot sign is
reported by ``pbem check`` and stops ``pbem serve``."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
from datetime import timedelta
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path

import dkim
import pytest
from mail_servers import SmtpServer
from sqlmodel import Session, col, select

from pbem.cli import main
from pbem.config import Config, SmtpConfig, load_config
from pbem.daemon.pipeline import MailPipeline
from pbem.mail.dkim import OVER_SIGNED, SIGNED_HEADERS, DkimKeyError, DkimSigner, load_signer, signer_of
from pbem.mail.sinks import DkimSigningSink
from pbem.mail.smtp import SmtpSink
from pbem.mail.sources import MaildirSource
from pbem.mail.transport import open_outbound_sink
from pbem.store.db import session_scope, utc_now
from pbem.store.mail_records import OutboundMail, queue_mail

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "service"))

from post_office import LoadedDice, Player, PostOffice, invite_and_accept  # noqa: E402

DOMAIN = "example.org"


def openssl(*arguments: str) -> bytes:
    return subprocess.run(["openssl", *arguments], check=True, capture_output=True, timeout=60).stdout


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """An RSA and an Ed25519 private key (PEM files), each with the DNS record of its public key,
    written from what openssl says (not from pbem's own reading of the key)."""
    folder = tmp_path_factory.mktemp("dkim-keys")
    found = {}
    rsa = ["-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:2048"]
    for name, options in (("rsa", rsa), ("another rsa", rsa), ("ed25519", ["-algorithm", "ed25519"])):
        kind = name.split()[-1]
        path = folder / f"{name}.pem"
        openssl("genpkey", *options, "-out", str(path))
        public = openssl("pkey", "-in", str(path), "-pubout", "-outform", "DER")
        if kind == "ed25519":
            public = public[-32:]  # RFC 8463: the bare 32-byte key, not its SubjectPublicKeyInfo
        found[name] = (path, f"v=DKIM1; k={kind}; p={base64.b64encode(public).decode()}")
    return found


def dns_of(selector: str, record: str):
    """dkimpy's DNS lookup, answering only ``SELECTOR._domainkey.example.org``."""
    def lookup(name: bytes, timeout: int = 5) -> bytes | None:
        return record.encode() if name == f"{selector}._domainkey.{DOMAIN}.".encode() else None
    return lookup


@pytest.fixture(scope="module")
def stored_mails(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """The mails the service stored (plain LF) while Anna invited Ben and Ben accepted, with the
    web board on (so the invitation to Ben, who has not played, carries one-click unsubscribe)."""
    data_dir = tmp_path_factory.mktemp("dkim-game") / "pbem-data"
    data_dir.mkdir()
    path = data_dir.parent / "pbem.toml"
    path.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{data_dir}"\n'
                    '[web]\nbase_url = "https://bg.example.org"\n', encoding="utf-8")
    office = PostOffice(load_config(path), LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    with Session(office.engine) as session:
        raws = list(session.exec(select(OutboundMail.raw).order_by(col(OutboundMail.id))).all())
    office.engine.dispose()
    assert raws and not any(b"\r\n" in raw for raw in raws)
    return raws


@pytest.fixture(scope="module")
def game_mail(stored_mails: list[bytes]) -> bytes:
    """Anna's turn after Ben accepted: the board as text, as HTML and as an inline picture."""
    raw = stored_mails[-1]
    for part in (b"Content-Type: text/html", b"Content-Type: image/png", b"In-Reply-To:", b"References:"):
        assert part in raw, part
    return raw


def signed_headers(signed: bytes) -> list[str]:
    signature = dkim.rfc822_parse(signed)[0][0]
    assert signature[0] == b"DKIM-Signature"
    tags = dict(tag.strip().split("=", 1) for tag in b"".join(signature[1].split()).decode().split(";") if tag)
    return tags["h"].split(":")


@pytest.mark.parametrize("kind", ["rsa", "ed25519"])
def test_a_signed_game_mail_verifies_against_the_public_key(keys, game_mail, kind):
    path, record = keys[kind]
    signer = load_signer(path, DOMAIN, "pbem2026")
    assert signer.dns_record == record  # what pbem check tells the operator to publish
    signed = signer.sign(game_mail)
    assert signed.endswith(game_mail) and b"\r\n" not in signed  # on top, in the mail's own line ends
    assert dkim.verify(signed, dnsfunc=dns_of("pbem2026", record))
    present = {name.decode().lower() for name, _ in dkim.rfc822_parse(game_mail)[0]}
    assert set(signed_headers(signed)) == ({name.lower() for name in SIGNED_HEADERS} & present
                                           | {name.lower() for name in OVER_SIGNED})
    assert "from" in signed_headers(signed) and "references" in signed_headers(signed)


def test_the_unsubscribe_headers_of_an_invitation_are_signed(keys, stored_mails):
    (invitation,) = [raw for raw in stored_mails if b": Invitation from Anna\n" in raw.split(b"\n\n")[0]]
    assert b"\nList-Unsubscribe-Post: " in invitation
    path, record = keys["rsa"]
    signed = load_signer(path, DOMAIN, "pbem2026").sign(invitation)
    assert {"list-unsubscribe", "list-unsubscribe-post", "from", "subject"} <= set(signed_headers(signed))
    lookup = dns_of("pbem2026", record)
    assert dkim.verify(signed, dnsfunc=lookup)
    assert not dkim.verify(signed.replace(b"\nList-Unsubscribe-Post: ", b"\nList-Unsubscribe-Post:  x", 1),
                           dnsfunc=lookup)


def test_a_changed_body_subject_or_key_fails_verification(keys, game_mail):
    path, record = keys["rsa"]
    signed = load_signer(path, DOMAIN, "pbem2026").sign(game_mail)
    lookup = dns_of("pbem2026", record)
    assert dkim.verify(signed, dnsfunc=lookup)
    body_at = signed.index(b"\n\n")
    tampered_body = signed[:body_at] + signed[body_at:].replace(b"Anna", b"Anne", 1)
    assert tampered_body != signed and not dkim.verify(tampered_body, dnsfunc=lookup)
    tampered_subject = signed.replace(b"\nSubject: ", b"\nSubject: Re: ", 1)
    assert not dkim.verify(tampered_subject, dnsfunc=lookup)
    assert not dkim.verify(signed, dnsfunc=dns_of("pbem2026", keys["another rsa"][1]))


def dkim_config(data_dir: Path, smtp: SmtpServer, extra: str) -> Config:
    path = data_dir.parent / "pbem.toml"
    path.write_text(f'[service]\naddress = "backgammon@{DOMAIN}"\ndata_dir = "{data_dir}"\n'
                    f'[smtp]\nhost = "127.0.0.1"\nport = {smtp.port}\nsecurity = "none"\n{extra}'
                    "[web]\nenabled = false\n", encoding="utf-8")
    return load_config(path)


def test_the_mail_a_real_smtp_server_receives_verifies(keys, game_mail, data_dir, smtp_server):
    """aiosmtplib turns the stored LF into CRLF and dot-stuffs: the signature made over the LF
    mail holds for the bytes the receiver got."""
    path, record = keys["rsa"]
    config = dkim_config(data_dir, smtp_server, f'dkim_selector = "pbem2026"\ndkim_key_file = "{path}"\n')
    sink = open_outbound_sink(config)
    assert isinstance(sink, DkimSigningSink) and "d=example.org s=pbem2026 (RSA 2048-bit key)" in repr(sink)

    async def send() -> None:
        await sink.send(game_mail, f"backgammon@{DOMAIN}", ["anna@example.org"])
        await sink.close()

    asyncio.run(send())
    (received,) = smtp_server.recorder.wait_for(1)
    assert b"\r\n" in received.raw and b"\n" not in received.raw.replace(b"\r\n", b"")
    assert received.raw.startswith(b"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.org;")
    assert dkim.verify(received.raw, dnsfunc=dns_of("pbem2026", record))
    assert not dkim.verify(received.raw.replace(b"Anna", b"Anne"), dnsfunc=dns_of("pbem2026", record))


def test_the_outbox_keeps_mail_unsigned_and_a_retry_is_signed_with_the_key_of_its_time(
        keys, game_mail, engine, config, smtp_server):
    """The first attempt is refused (451); the operator rotates the key; the retry carries a
    signature of the new key alone, and the stored mail never carried one."""
    with session_scope(engine) as session:
        queue_mail(session, BytesParser(policy=default_policy).parsebytes(game_mail))
    now = [utc_now()]

    def pipeline(kind: str, selector: str) -> MailPipeline:
        signer = load_signer(keys[kind][0], DOMAIN, selector)
        sink = DkimSigningSink(SmtpSink(SmtpConfig(host="127.0.0.1", port=smtp_server.port, security="none"),
                                        timeout=5), signer)
        return MailPipeline(engine, MaildirSource(config.inbox_dir), sink, lambda *args: None,
                            clock=lambda: now[0])

    smtp_server.recorder.refusing = True
    assert asyncio.run(pipeline("rsa", "old").flush_outbox()) == 0
    smtp_server.recorder.refusing = False
    now[0] += timedelta(hours=1)
    assert asyncio.run(pipeline("another rsa", "new").flush_outbox()) == 1
    (received,) = smtp_server.recorder.wait_for(1)
    assert received.raw.count(b"DKIM-Signature:") == 1 and b"s=new;" in received.raw
    assert dkim.verify(received.raw, dnsfunc=dns_of("new", keys["another rsa"][1]))
    with session_scope(engine) as session:
        (row,) = session.exec(select(OutboundMail)).all()
        assert row.sent_at is not None and row.attempts == 2 and b"DKIM-Signature" not in row.raw


def test_the_signing_domain_is_the_service_address_s_unless_given(keys, data_dir, smtp_server):
    path, _ = keys["ed25519"]
    given = f'dkim_selector = "s1"\ndkim_key_file = "{path}"\n'
    signer = signer_of(dkim_config(data_dir, smtp_server, given))
    assert isinstance(signer, DkimSigner) and signer.domain == DOMAIN and signer.dns_name == "s1._domainkey.example.org"
    signer = signer_of(dkim_config(data_dir, smtp_server, given + 'dkim_domain = "mail.example.org"\n'))
    assert signer is not None and signer.domain == "mail.example.org"
    assert signer_of(dkim_config(data_dir, smtp_server, "")) is None
    assert not isinstance(open_outbound_sink(dkim_config(data_dir, smtp_server, "")), DkimSigningSink)


def broken_keys(tmp_path: Path, keys) -> list[tuple[Path, str]]:
    """Key files that cannot sign, each with what the message must say."""
    public = tmp_path / "public.pem"
    public.write_bytes(openssl("pkey", "-in", str(keys["rsa"][0]), "-pubout"))
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("this is no key\n")
    short = tmp_path / "short.pem"
    openssl("genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:512", "-out", str(short))
    encrypted = tmp_path / "encrypted.pem"
    openssl("pkey", "-in", str(keys["rsa"][0]), "-aes256", "-passout", "pass:secret", "-out", str(encrypted))
    elliptic = tmp_path / "elliptic.pem"
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(elliptic))
    unreadable = tmp_path / "unreadable.pem"
    unreadable.mkdir()  # a directory: unreadable as a file, also for root
    return [(tmp_path / "missing.pem", "cannot read"), (unreadable, "cannot read"),
            (public, "holds a PUBLIC KEY, not a private key"), (garbage, "not a PEM private key"),
            (short, "512 bits is too short"), (encrypted, "the key is encrypted"),
            (elliptic, "a private key of a kind DKIM does not use")]


def test_a_key_that_cannot_sign_is_refused_with_what_is_wrong(tmp_path, keys):
    for path, words in broken_keys(tmp_path, keys):
        with pytest.raises(DkimKeyError, match=words):
            load_signer(path, DOMAIN, "s1")


def test_pbem_check_reports_the_key_and_its_dns_record(keys, data_dir, smtp_server, tmp_path, capsys, monkeypatch):
    path, record = keys["rsa"]
    published: dict[bytes, bytes] = {}
    monkeypatch.setattr("pbem.mail.dkim.dns_txt", lambda name, timeout: published.get(name))
    good = dkim_config(data_dir, smtp_server, f'dkim_selector = "s1"\ndkim_key_file = "{path}"\n')
    wanted = f'the TXT record s1._domainkey.example.org must read "{record}"'

    assert main(["check", "--config", good.source]) == 1  # not published yet
    out = capsys.readouterr().out
    assert "DKIM: FAILED: mail is signed as d=example.org s=s1 (RSA 2048-bit key); no TXT record at " \
           "s1._domainkey.example.org yet" in out and wanted in out, out

    published[b"s1._domainkey.example.org."] = record.replace("; p=", ";\tp=").encode()
    assert main(["check", "--config", good.source]) == 0
    out = capsys.readouterr().out
    assert "DKIM: OK: mail is signed as d=example.org s=s1 (RSA 2048-bit key); the TXT record at " \
           "s1._domainkey.example.org holds its public key" in out and wanted in out, out

    published[b"s1._domainkey.example.org."] = keys["another rsa"][1].encode()
    assert main(["check", "--config", good.source]) == 1
    assert "holds another public key than dkim_key_file's" in capsys.readouterr().out

    published[b"s1._domainkey.example.org."] = b"v=spf1 -all"
    assert main(["check", "--config", good.source]) == 1
    assert "s1._domainkey.example.org is not a DKIM key record: b'v=spf1 -all'" in capsys.readouterr().out

    def unreachable(name: bytes, timeout: int) -> bytes:
        raise dkim.DnsTimeoutError("dns.exception.Timeout: no answer")
    monkeypatch.setattr("pbem.mail.dkim.dns_txt", unreachable)
    assert main(["check", "--config", good.source]) == 0  # says nothing about the record
    assert "DKIM: OK: mail is signed as d=example.org s=s1 (RSA 2048-bit key); DNS could not be asked" \
           in capsys.readouterr().out

    for broken, words in broken_keys(tmp_path, keys):
        config = dkim_config(data_dir, smtp_server, f'dkim_selector = "s1"\ndkim_key_file = "{broken}"\n')
        assert main(["check", "--config", config.source]) == 1
        out = capsys.readouterr().out
        assert "SMTP 127.0.0.1" in out and ": OK: connected" in out  # the other checks still ran
        assert f"DKIM: FAILED: {config.source}: [smtp] dkim_key_file: " in out and words in out, out


def test_pbem_serve_refuses_to_start_with_a_key_that_cannot_sign(data_dir, smtp_server, tmp_path, capsys):
    config = dkim_config(data_dir, smtp_server, f'dkim_selector = "s1"\ndkim_key_file = "{tmp_path / "nope.pem"}"\n')
    assert main(["serve", "--config", config.source]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"pbem serve: {config.source}: [smtp] dkim_key_file: cannot read "), error
    assert not (data_dir / "pbem.db").exists()  # refused before anything was created
