"""Bounces as real mail servers write them: which mail of ours, which recipient, and why."""

from __future__ import annotations

import pytest
from bounce_samples import PERMANENT, bounce_sample

from pbem.addresses import bounce_address
from pbem.mail.bounces import read_bounce
from pbem.mail.local_client import compose_mail
from pbem.mail.reading import read_mail

TAG = "abcdefghijklmnopqrstuvwxyz"
MESSAGE_ID = "<qwertyuiopasdfghjklzxcvbnm.1-4.0123456789abcdef@pbem.test>"
SERVICE = "games@pbem.test"

REASONS = {
    "postfix": ("5.1.1", "550 5.1.1 <ben@example.net>: Recipient address rejected: User unknown in virtual "
                         "mailbox table"),
    "exim": ("5.1.1", "550 5.1.1 <ben@example.net>: mailbox unavailable"),  # the status read from the answer
    "exchange": ("5.1.10", "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup"),
    "gmail": ("5.1.1", "550-5.1.1 The email account that you tried to reach does not exist. Please try "
                       "double-checking the recipient's email address for typos or unnecessary spaces. "
                       "https://support.google.com/mail/?p=NoSuchUser"),
}


@pytest.mark.parametrize("name", PERMANENT)
def test_a_permanent_failure_names_our_mail_the_recipient_and_the_servers_reason(name):
    bounce = read_bounce(bounce_sample(name, TAG, "ben@example.net", MESSAGE_ID), SERVICE)
    assert bounce is not None
    assert bounce.tags == (TAG,)
    assert MESSAGE_ID in bounce.original_message_ids
    (failure,) = bounce.failures
    assert failure.address == "ben@example.net" and failure.permanent
    assert (failure.status, failure.diagnostic) == REASONS[name]


def test_a_delay_warning_is_a_temporary_failure():
    bounce = read_bounce(bounce_sample("postfix-delayed", TAG, "ben@example.net", MESSAGE_ID), SERVICE)
    assert bounce is not None
    (failure,) = bounce.failures
    assert not failure.permanent and failure.status == "4.4.1"
    assert failure.diagnostic == "connect to mx.example.net[198.51.100.7]:25: Connection refused"


def test_the_tag_is_read_whatever_the_case_and_only_for_our_own_address():
    raw = bounce_sample("postfix", TAG, "ben@example.net", MESSAGE_ID).replace(
        b"games+bounce-", b"Games+Bounce-")
    assert read_bounce(raw, SERVICE).tags == (TAG,)
    assert read_bounce(raw, "other@pbem.test").tags == ()
    assert read_bounce(raw, "games@elsewhere.test").tags == ()


@pytest.mark.parametrize("text", [
    "I am on holiday until Monday and will answer your mail then.",  # a vacation notice to the envelope sender
    "Your message was read on Wednesday.",
    "accept\n\nBen",
])
def test_a_mail_that_is_no_bounce_is_none(text):
    mail = compose_mail("Ben <ben@example.net>", bounce_address(SERVICE, TAG), "Re: your mail", text)
    mail["Auto-Submitted"] = "auto-replied"
    assert read_bounce(mail.as_bytes(), SERVICE) is None
    read = read_mail(mail.as_bytes(), SERVICE)
    assert read.to_bounce_address and read.automatic and read.bounce is None
    assert not read_mail(mail.as_bytes(), "other@pbem.test").to_bounce_address


@pytest.mark.parametrize("damage", [
    lambda raw: raw[: len(raw) // 2],  # cut off mid-part
    lambda raw: raw.replace(b"boundary=", b"boundary=x"),  # parts that never start
    lambda raw: raw.replace(b"Final-Recipient: rfc822; ben@example.net", b"Final-Recipient: \xff\xfe"),
    lambda raw: raw.replace(b"Action: failed", b"Action: failed\nStatus: " + b"5" * 100_000),
])
def test_a_damaged_bounce_never_raises(damage):
    raw = damage(bounce_sample("postfix", TAG, "ben@example.net", MESSAGE_ID))
    bounce = read_bounce(raw, SERVICE)
    assert bounce is None or all(len(failure.diagnostic) <= 300 and len(failure.status) <= 20
                                 for failure in bounce.failures)
