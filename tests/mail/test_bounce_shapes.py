"""Bounces in shapes the first samples lack (review of issue 21): qmail and Yahoo's plain-text
bounces, a DSN with several recipients, one whose Original-Recipient differs from its
Final-Recipient (a forwarded address), one without Diagnostic-Code, one sent to the service's
own address that names our mail only by the Message-ID in its returned header; and (issue 35)
the corpus of every MTA family and reason, read in one table."""

from __future__ import annotations

import time

import pytest
from bounce_samples import CORPUS, bounce_sample

from pbem.mail.bounce_reasons import Reason, classify, readable
from pbem.mail.bounces import read_bounce
from pbem.mail.reading import read_mail

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
    mail = read_mail(raw, SERVICE)
    assert not mail.to_bounce_address and mail.automatic
    bounce = read_bounce(raw, SERVICE)
    assert bounce is not None and bounce.tags == () and bounce.original_message_ids == (MESSAGE_ID,)
    assert mail.bounce == bounce  # the one reading of the mail holds it


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_each_bounce_of_the_corpus_reads_as_what_it_is(name):
    """The corpus of every MTA family and reason (issue 35), classified in one table: the
    failure of the invitee with its reason, a complaint, or nothing at all."""
    sample = CORPUS[name]
    bounce = read_bounce(bounce_sample(name, TAG, BEN, MESSAGE_ID), SERVICE)
    reasons = [] if bounce is None else [failure.reason for failure in bounce.failures if failure.address == BEN]
    assert reasons == ([] if sample.reason is None else [sample.reason]), (sample.family, bounce)
    assert (bounce is not None and bounce.complaints == (BEN,)) is sample.complaint
    if bounce is not None:  # a failure is about the very recipient, never a stranger the text names
        assert {failure.address for failure in bounce.failures} <= {BEN, "carla@example.org", "dora@example.org"}
        assert all(failure.permanent is (failure.reason is not Reason.DELAYED) for failure in bounce.failures)


@pytest.mark.parametrize(("status", "diagnostic", "action", "reason"), [
    ("5.1.1", "550 5.1.1 <ben@example.net>: Recipient address rejected: User unknown in relay recipient table",
     "failed", Reason.USER_UNKNOWN),
    ("5.1.1", "552 5.2.2 Over quota", "failed", Reason.MAILBOX_FULL),  # the words, not the DSN's wrong status
    ("5.7.1", "554 5.7.1 Service unavailable; Client host [203.0.113.25] blocked using zen.spamhaus.org", "failed",
     Reason.BLOCKED),
    ("5.4.1", "550 5.4.1 Recipient address rejected: Access denied. AS(201806281)", "failed", Reason.USER_UNKNOWN),
    ("5.1.0", "550 5.1.0 <bounce@pbem.test> sender rejected. AUP#CDRBL", "failed", Reason.POLICY),
    ("", "550 Requested action not taken: mailbox unavailable", "", Reason.USER_UNKNOWN),
    ("", "550 Unroutable sender address", "", Reason.POLICY),
    ("", "421 4.7.0 [TSS04] Messages from 203.0.113.25 temporarily deferred", "failed", Reason.BLOCKED),
    ("4.1.1", "450 4.1.1 <ben@example.net>: Recipient address rejected: unverified address", "failed", Reason.EXPIRED),
    ("5.4.7", "", "failed", Reason.EXPIRED),
    ("5.0.0", "550 :", "failed", Reason.REJECTED),
    ("", "", "", Reason.REJECTED),
    ("4.4.1", "connect to mx.example.net: Connection timed out", "delayed", Reason.DELAYED),
    ("2.0.0", "250 2.0.0 OK", "delivered", Reason.NOT_A_FAILURE),
    ("", "smtp; 250 2.6.0 Message received", "relayed", Reason.NOT_A_FAILURE),
])
def test_a_failure_is_classified_by_its_words_then_its_status_then_its_reply_code(status, diagnostic, action, reason):
    assert classify(status, diagnostic, action) is reason


@pytest.mark.parametrize(("diagnostic", "quoted"), [
    ("550 5.1.1 <ben@example.net>: user unknown", True), ("Sorry, no mailbox here by that name. (#5.1.1)", True),
    ("550 :", False), ("77", False), ("smtp; 550 5.0.0", False), ("", False)])
def test_only_a_readable_answer_is_quoted(diagnostic, quoted):
    assert readable(diagnostic) is quoted


@pytest.mark.parametrize("body", [
    b"a." * 1_000_000,  # a search for addresses from every position took 16 s
    b"ben@example.net " + b"a" * 30_000 + b" bb\n",  # a reason beside the address that is no label
    b"ben@example.net\n" + b"x@example.net 550 5.1.1 " * 20_000,
    b"Final-Recipient: rfc822; a@b.example\nAction: failed\n" * 20_000,
], ids=["dots", "long-word", "addresses", "dsn-fields"])
def test_a_hostile_mail_to_the_bounce_address_is_read_in_bounded_time(body):
    raw = (b"From: MAILER-DAEMON\nTo: games+bounce-" + TAG.encode() + b"@pbem.test\nSubject: Undelivered\n\n" + body)
    started = time.perf_counter()
    read_bounce(raw, SERVICE)
    assert time.perf_counter() - started < 3  # well under a second here; generous for a busy machine


def test_the_detectors_read_only_the_top_of_a_large_bounce(monkeypatch):
    """A bounce's failures stand at its top; ``flufl.bounce`` is given only that much of a large
    one (it took seconds on 2 MB of short lines), and the failure is still found."""
    import pbem.mail.bounces as bounces

    given: list[int] = []
    detect = bounces.all_failures
    monkeypatch.setattr(bounces, "all_failures", lambda message: given.append(len(message.as_bytes())) or detect(message))
    raw = bounce_sample("postfix", TAG, BEN, MESSAGE_ID) + b"\n" + b"a@b.c\n" * 300_000
    bounce = read_bounce(raw, SERVICE)
    assert bounce is not None and [failure.address for failure in bounce.failures] == [BEN]
    assert len(given) == 1 and given[0] <= bounces.DETECTOR_BYTES + 1024 < len(raw)


def test_a_plain_bounce_quoting_our_header_inline_blames_the_recipient_not_our_own_addresses():
    """A bounce of no known shape whose text goes on into our mail's header (review of issue 35):
    a detector takes the service's addresses and our Message-ID there for failed recipients; the
    failure is the invitee's, with the server's line as its reason (here a block of the service)."""
    raw = (f"From: <>\nTo: games+bounce-{TAG}@pbem.test\nSubject: Undelivered Mail\n"
           "Content-Type: text/plain\n\nThe following address failed:\n\n"
           f"  {BEN}\n    550 Your IP 192.0.2.1 is listed in RBL; see https://x\n\n"
           f"------ original message ------\nReturn-Path: <games+bounce-{TAG}@pbem.test>\n"
           f"From: Backgammon by Mail <{SERVICE}>\nTo: {BEN}\n"
           "Reply-To: Backgammon by Mail <games+qwertyuiopasdfghjklzxcvbnm@pbem.test>\n"
           f"Message-ID: {MESSAGE_ID}\nAuto-Submitted: auto-replied\n\n").encode()
    bounce = read_bounce(raw, SERVICE)
    assert bounce is not None
    (failure,) = bounce.failures
    assert (failure.address, failure.reason, failure.diagnostic) == (
        BEN, Reason.BLOCKED, "550 Your IP 192.0.2.1 is listed in RBL; see https://x")


def test_sendmails_bracketed_reason_is_quoted_without_its_closing_bracket():
    """Plain Sendmail writes ``(reason: 550 …)`` under the address: the notice quotes the server's
    answer, not the bracket around it (review of issue 35)."""
    raw = (f"From: Mail Delivery Subsystem <MAILER-DAEMON>\nTo: games+bounce-{TAG}@pbem.test\n"
           "Subject: Returned mail: see transcript for details\n\n"
           "   ----- The following addresses had permanent fatal errors -----\n"
           f"<{BEN}>\n    (reason: 550 5.7.1 Rejected: SPF check failed for 192.0.2.1)\n\n"
           f"   ----- Original message follows -----\nMessage-ID: {MESSAGE_ID}\nTo: {BEN}\n\n").encode()
    bounce = read_bounce(raw, SERVICE)
    assert bounce is not None
    (failure,) = bounce.failures
    assert (failure.address, failure.reason, failure.diagnostic) == (
        BEN, Reason.AUTHENTICATION, "550 5.7.1 Rejected: SPF check failed for 192.0.2.1")
