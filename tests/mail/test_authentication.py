"""Authentication-Results of the operator's own server (``[imap] trusted_authserv_id``): which
headers prove the From address, and which prove nothing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.mail.authentication import sender_authenticated
from pbem.mail.reading import read_mail
from pbem.mail.replies import ReadingContext

TRUSTED = "mx.pbem.example"
ANNA = "anna@example.org"


@pytest.mark.parametrize(("headers", "sender"), [
    ([f"{TRUSTED}; dmarc=pass (p=reject) header.from=example.org"], ANNA),
    ([f"{TRUSTED}; spf=pass smtp.mailfrom=example.org; dkim=pass header.d=example.org header.s=s1; "
      "dmarc=pass header.from=example.org"], ANNA),
    ([f"MX.PBEM.Example; DMARC=Pass header.from=Example.ORG"], "anna@example.org"),  # case does not matter
    ([f"(checked by OpenDMARC) {TRUSTED} 1; dmarc=pass header.from=example.org"], ANNA),  # comment, version
    ([f"{TRUSTED};\r\n\tdmarc=pass\r\n header.from=example.org"], ANNA),  # folded
    ([f"{TRUSTED}; dkim=pass header.d=example.org header.i=@example.org"], ANNA),  # aligned DKIM
    ([f"{TRUSTED}; dkim=pass header.i=anna@example.org"], ANNA),  # header.i alone
    ([f"{TRUSTED}; dkim=pass header.d=example.org"], "anna@mail.example.org"),  # the parent signs
    ([f"{TRUSTED}; dkim=fail header.d=other.org; dkim=pass header.d=example.org"], ANNA),  # one good signature
    (["other.example; dmarc=fail header.from=example.org", f"{TRUSTED}; dmarc=pass header.from=example.org"],
     ANNA),  # another server's header on top is no concern of ours
    ([f"{TRUSTED}; dmarc=pass header.from=example.org", f"{TRUSTED}; dmarc=fail header.from=example.org"],
     ANNA),  # the topmost of ours counts
])
def test_what_proves_the_sender(headers, sender):
    assert sender_authenticated(headers, sender, TRUSTED)


@pytest.mark.parametrize(("headers", "sender"), [
    ([], ANNA),
    ([f"{TRUSTED}; none"], ANNA),
    ([f"{TRUSTED}; dmarc=fail (p=none) header.from=example.org"], ANNA),
    ([f"{TRUSTED}; dmarc=none header.from=example.org"], ANNA),
    ([f"{TRUSTED}; dmarc=pass header.from=other.org"], ANNA),  # a pass for another domain
    ([f"{TRUSTED}; dmarc=pass header.from=example.org"], "anna@mail.example.org"),  # DMARC names the exact domain
    ([f"{TRUSTED}; spf=pass smtp.mailfrom=anna@example.org"], ANNA),  # SPF says nothing of the From
    ([f"{TRUSTED}; dkim=pass header.d=other.org"], ANNA),  # unaligned signature
    ([f"{TRUSTED}; dkim=pass header.d=mail.example.org"], ANNA),  # a child does not sign for its parent
    ([f"{TRUSTED}; dkim=pass header.d=org"], ANNA),  # nor a top-level domain for all below it
    ([f"{TRUSTED}; dkim=pass header.d=notexample.org"], ANNA),  # a mere suffix is no parent
    ([f"{TRUSTED}; dkim=fail header.d=example.org"], ANNA),
    ([f"{TRUSTED}; dkim=pass"], ANNA),  # no signing domain named
    (["other.example; dmarc=pass header.from=example.org"], ANNA),  # another authserv-id is not believed
    (["mx.pbem.example.evil.org; dmarc=pass header.from=example.org"], ANNA),  # nor one that merely begins alike
    ([f"{TRUSTED}; dmarc=fail header.from=example.org", f"{TRUSTED}; dmarc=pass header.from=example.org"],
     ANNA),  # the topmost of ours fails: a pass below it was forged
    ([f"{TRUSTED}; dmarc=pass header.from=", f"{TRUSTED}; dmarc=pass header.from=example.org"], ANNA),
    ([f"{TRUSTED}; dmarc=pass header.from=example.org junk; ;", f"{TRUSTED}; dmarc=pass header.from=example.org"],
     ANNA),  # the topmost of ours does not parse: no proof, whatever follows
    ([f"{TRUSTED}"], ANNA),  # malformed: no result at all
    ([f"{TRUSTED}; dmarc=pass header.from=example.org"], "nobody"),  # no domain to compare
])
def test_what_proves_nothing(headers, sender):
    assert not sender_authenticated(headers, sender, TRUSTED)


def test_deeply_nested_comments_prove_nothing_and_cost_nothing():
    nested = f"{TRUSTED}; dmarc=pass (" + "(" * 5000 + ")" * 5000 + ") header.from=example.org"
    assert not sender_authenticated([nested], ANNA, TRUSTED)
    shallow = f"{TRUSTED}; dmarc=pass (checked (by (mx))) header.from=example.org"
    assert sender_authenticated([shallow], ANNA, TRUSTED)


@given(st.text(alphabet=st.sampled_from(list("();=.@ \"\\\r\nadhimpsx-1")), max_size=300))
def test_any_header_after_the_trusted_id_is_read_without_failing(rest):
    assert sender_authenticated([f"{TRUSTED}; {rest}"], ANNA, TRUSTED) in (True, False)


def raw_mail(*authentication_results: str) -> bytes:
    fields = "".join(f"Authentication-Results: {value}\n" for value in authentication_results)
    return (f"Return-Path: <anna@example.org>\n{fields}From: Anna <anna@example.org>\nTo: backgammon@localhost\n"
            "Subject: pbem\nMessage-ID: <1@example.org>\n\ninvite ben@example.org\n").encode()


def test_read_mail_reports_the_proof_only_for_the_trusted_id():
    raw = raw_mail(f"{TRUSTED};\n dmarc=pass header.from=example.org")
    assert read_mail(raw, ReadingContext("backgammon@localhost", trusted_authserv_id=TRUSTED)).sender_authenticated
    assert not read_mail(raw, ReadingContext("backgammon@localhost")).sender_authenticated  # none configured
    assert not read_mail(raw, ReadingContext("backgammon@localhost",
                                             trusted_authserv_id="mx.other.example")).sender_authenticated
    forged_below = raw_mail(f"{TRUSTED}; dmarc=fail header.from=example.org",
                            f"{TRUSTED}; dmarc=pass header.from=example.org")
    assert not read_mail(forged_below, ReadingContext("backgammon@localhost",
                                                      trusted_authserv_id=TRUSTED)).sender_authenticated
