"""DKIM signatures attacked (review of issue 21): a recipient who re-sends one of our signed
mails (a DKIM replay) with a header added on top must break the signature, or a phisher can
send "our" mail with his own Reply-To, To or Cc and a good signature of the service's domain."""

from __future__ import annotations

import subprocess
from pathlib import Path

import dkim
import pytest

from pbem.mail.dkim import load_signer

MAIL = (b"From: Backgammon by Mail <games@example.org>\nTo: Ben <ben@example.net>\n"
        b"Reply-To: games+abcdefghijklmnopqrstuvwxyz@example.org\nSubject: [Backgammon] Anna - Ben: Your turn\n"
        b"Date: Wed, 25 Nov 2026 10:00:00 +0000\nMessage-ID: <1@example.org>\nMIME-Version: 1.0\n"
        b"Content-Type: text/plain; charset=utf-8\n\nroll  or  double\n")


@pytest.fixture(scope="module")
def signer_and_lookup(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("dkim") / "key.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:2048", "-out",
                    str(path)], check=True, capture_output=True, timeout=60)
    signer = load_signer(Path(path), "example.org", "s1")
    record = signer.dns_record.encode()
    return signer, (lambda name, timeout=5: record if name == b"s1._domainkey.example.org." else None)


def test_a_signed_mail_verifies_and_a_second_from_breaks_it(signer_and_lookup):
    signer, lookup = signer_and_lookup
    signed = signer.sign(MAIL)
    assert dkim.verify(signed, dnsfunc=lookup)
    signature, rest = signed.split(b"\nFrom:", 1)
    assert not dkim.verify(signature + b"\nFrom: Bank <games@example.org>\nFrom:" + rest, dnsfunc=lookup)


@pytest.mark.parametrize("added", [b"Reply-To: evil@evil.example", b"To: victim@example.net",
                                   b"Cc: victim@example.net", b"Subject: Please pay your entry fee here"])
def test_a_header_added_on_top_breaks_the_signature(signer_and_lookup, added):
    signer, lookup = signer_and_lookup
    signature, rest = signer.sign(MAIL).split(b"\nFrom:", 1)
    assert not dkim.verify(signature + b"\n" + added + b"\nFrom:" + rest, dnsfunc=lookup)
