"""Bounces in shapes the first samples lack (review of issue 21): qmail and Yahoo's plain-text
bounces, a DSN with several recipients, one whose Original-Recipient differs from its
Final-Recipient (a forwarded address), one without Diagnostic-Code, one sent to the service's
own address that names our mail only by the Message-ID in its returned header."""

from __future__ import annotations

import pytest
from bounce_samples import bounce_sample

from pbem.mail.bounces import read_bounce, sent_to_bounce_address

TAG = "abcdefghijklmnopqrstuvwxyz"
MESSAGE_ID = "<qwertyuiopasdfghjklzxcvbnm.1-4.0123456789abcdef@pbem.test>"
SERVICE = "games@pbem.test"
BEN = "ben@example.net"


@pytest.mark.parametrize(("name", "diagnostic"), [
    # qmail writes its reason on the line under the address, its status code in "(#5.1.1)"
    ("qmail", "Sorry, no mailbox here by that name. (#5.1.1)"),
    # Yahoo writes "554:" with a colon
    ("yahoo", f"554: delivery error: dd This user doesn't have a yahoo.com account ({BEN}) [0] - "
              "mta1.mail.yahoo.com"),
])
def test_plain_text_bounces_give_the_servers_whole_reason(name, diagnostic):
    bounce = read_bounce(bounce_sample(name, TAG, BEN, MESSAGE_ID), SERVICE)
    assert bounce is not None and bounce.tags == (TAG,) and MESSAGE_ID in bounce.original_message_ids
    (failure,) = bounce.failures
    assert (failure.address, failure.permanent, failure.diagnostic) == (BEN, True, diagnostic)


def test_a_dsn_with_several_recipients_reports_each_with_its_own_reason():
    bounce = read_bounce(bounce_sample("dsn-several", TAG, BEN, MESSAGE_ID), SERVICE)
    assert bounce is not None
    found = {failure.address: (failure.permanent, failure.status, failure.diagnostic) for failure in bounce.failures}
    assert found == {
        "carla@example.org": (True, "5.2.2", "552 5.2.2 <carla@example.org>: mailbox full"),
        BEN: (True, "5.1.1", f"550 5.1.1 <{BEN}>: user unknown"),
        "dora@example.org": (False, "4.4.1", "connect to mx.example.org: Connection timed out"),
    }


def test_a_forwarded_address_keeps_the_reason_its_final_recipient_was_refused_with():
    bounce = read_bounce(bounce_sample("dsn-forwarded", TAG, BEN, MESSAGE_ID), SERVICE)
    assert bounce is not None
    (failure,) = bounce.failures
    assert failure.address == BEN  # the address we sent to (Original-Recipient), not where it went on
    assert (failure.status, failure.diagnostic) == ("5.1.1", "550 5.1.1 mailbox disabled")


def test_a_dsn_without_diagnostic_code_still_reports_a_permanent_failure():
    bounce = read_bounce(bounce_sample("dsn-no-diagnostic", TAG, BEN, MESSAGE_ID), SERVICE)
    assert bounce is not None
    (failure,) = bounce.failures
    assert (failure.address, failure.permanent, failure.status, failure.diagnostic) == (BEN, True, "5.1.1", "")


def test_a_bounce_to_the_service_address_names_our_mail_by_its_returned_header_alone():
    raw = bounce_sample("dsn-to-service", TAG, BEN, MESSAGE_ID)
    assert not sent_to_bounce_address(raw, SERVICE)
    bounce = read_bounce(raw, SERVICE)
    assert bounce is not None and bounce.tags == () and bounce.original_message_ids == (MESSAGE_ID,)
