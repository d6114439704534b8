"""Bounces through the whole service: the inviter is told, a game's page and ``pbem status``
show a game mail that failed, an address that keeps bouncing gets no more mail until its
owner writes, and a bounce is never answered (issue 21)."""

from __future__ import annotations

import io
import os
import time
import uuid
from email.message import EmailMessage

from functools import partial

import pytest
from bounce_samples import CORPUS, PERMANENT, bounce_sample
from post_office import Player, PostOffice, prose_of, recipient, text_of
from sqlmodel import Session, select

from pbem.mail.local_client import ensure_maildir
from pbem.service import handle_mail
from pbem.service.pages.reports import status_report
from pbem.service.pages.web_board import WebBoard
from pbem.store.game_records import MatchStatus, Player as PlayerRow
from pbem.store.mail_records import DeliveryFailure, InboundMail, OutboundMail

NOBODY = "bne@example.net"
"""A mistyped address: its server answers "user unknown"."""


def outbound_of(office: PostOffice, mail: EmailMessage) -> OutboundMail:
    with Session(office.engine) as session:
        row = session.exec(select(OutboundMail).where(OutboundMail.message_id == str(mail["Message-ID"]))).one()
        session.expunge(row)
        return row


def bounce(office: PostOffice, mail: EmailMessage, sample: str = "postfix", address: str | None = None,
           tag: str | None = None) -> list[EmailMessage]:
    """The bounce of ``mail`` in the shape ``sample``, delivered byte for byte; the mails the
    service sent in answer."""
    row = outbound_of(office, mail)
    assert row.bounce_tag is not None
    return deliver_raw(office, bounce_sample(sample, tag or row.bounce_tag, address or recipient(mail),
                                             str(mail["Message-ID"]), office.config.service.address))


def failures(office: PostOffice) -> list[DeliveryFailure]:
    with Session(office.engine) as session:
        return list(session.exec(select(DeliveryFailure).order_by(DeliveryFailure.id)).all())


def bounces_of(office: PostOffice, address: str) -> int:
    with Session(office.engine) as session:
        return session.exec(select(PlayerRow.bounces).where(PlayerRow.address == address)).one()


def invite_nobody(office: PostOffice, anna: Player, command: str = f"invite {NOBODY}") -> EmailMessage:
    """Anna invites an address that does not exist; the invitation mail to it."""
    sent = anna.write_confirmed(command)
    (invitation,) = [mail for mail in sent if recipient(mail) == NOBODY]
    return invitation


def test_every_mail_goes_out_with_an_envelope_sender_of_its_own(office, anna):
    invitation = invite_nobody(office, anna)
    with Session(office.engine) as session:
        rows = session.exec(select(OutboundMail)).all()
    assert len({row.bounce_tag for row in rows}) == len(rows) >= 3
    for row in rows:
        assert row.sender == f"backgammon+bounce-{row.bounce_tag}@localhost"
    assert outbound_of(office, invitation).bounce_tag not in text_of(invitation)


@pytest.mark.parametrize("sample", PERMANENT)
def test_a_bounced_invitation_is_withdrawn_and_its_inviter_told_which_address_failed_and_why(office, anna, sample):
    invitation = invite_nobody(office, anna)
    assert office.table().status is MatchStatus.INVITED
    sent = bounce(office, invitation, sample)
    (told,) = sent
    assert recipient(told) == anna.address
    prose = prose_of(told)
    assert f"Your invitation to {NOBODY} could not be delivered: the receiving mail server says this address does " \
           "not exist (the mail server answered" in prose, prose
    assert "5.1.1" in prose or "5.1.10" in prose
    assert "The invitation is withdrawn" in prose
    assert str(told["Subject"]) == f"[Backgammon] Your invitation to {NOBODY} did not arrive"
    assert told["In-Reply-To"] is not None and str(told["Auto-Submitted"]) == "auto-replied"
    assert office.table().status is MatchStatus.DECLINED
    assert bounces_of(office, NOBODY) == 1
    (failure,) = failures(office)
    assert failure.permanent and failure.address == NOBODY and failure.match_id == office.table().id


def test_the_inviter_is_told_in_their_language(office):
    carla = Player(office, "carla@example.org", "Carla")
    (question,) = carla.write(f"einladen {NOBODY}\n\nViele Grüße\nCarla")
    sent = carla.reply("ja", to=question)
    (invitation,) = [mail for mail in sent if recipient(mail) == NOBODY]
    (told,) = bounce(office, invitation, "exim")
    prose = prose_of(told)
    assert f"Ihre Einladung an {NOBODY} konnte nicht zugestellt werden: Der empfangende Mailserver meldet, dass es " \
           "diese Adresse nicht gibt (der Mailserver antwortete „550 5.1.1" in prose
    assert "Die Einladung ist zurückgezogen" in prose
    assert str(told["Subject"]) == f"[Backgammon] Ihre Einladung an {NOBODY} kam nicht an"


@pytest.mark.parametrize(("sample", "status"), [("postfix-delayed", "4.4.1"), ("sendmail-warning", "")])
def test_a_delay_is_recorded_but_neither_counted_nor_told(office, anna, sample, status):
    invitation = invite_nobody(office, anna)
    assert bounce(office, invitation, sample) == []
    (failure,) = failures(office)
    assert not failure.permanent and failure.status == status and failure.reason == "delayed"
    assert bounces_of(office, NOBODY) == 0
    assert office.table().status is MatchStatus.INVITED


def test_a_bounce_reported_twice_counts_once(office, anna):
    invitation = invite_nobody(office, anna)
    assert len(bounce(office, invitation, "postfix")) == 1
    assert bounce(office, invitation, "gmail") == []
    assert bounces_of(office, NOBODY) == 1 and len(failures(office)) == 1


def deliver_raw(office: PostOffice, raw: bytes) -> list[EmailMessage]:
    inbox = office.config.inbox_dir
    ensure_maildir(inbox)
    name = f"{time.time_ns()}.{uuid.uuid4().hex}.bounce"
    (inbox / "tmp" / name).write_bytes(raw)
    os.rename(inbox / "tmp" / name, inbox / "new" / name)
    sent = office.run()
    office.file(sent)
    return sent


def test_a_bounce_of_no_mail_of_ours_or_of_another_recipient_changes_nothing(office, anna, ben):
    invitation = invite_nobody(office, anna)
    ben.write("help")
    before = office.snapshot()
    service = office.config.service.address
    made_up = bounce_sample("postfix", "a" * 26, NOBODY, "<made-up.1-1.00@localhost>", service)
    assert deliver_raw(office, made_up) == []  # neither tag nor Message-ID of a mail we sent
    # Ben saw no tag of Anna's mails: a bounce naming the invitation's Message-ID (no tag) names
    # only its own recipient, never him.
    forged = bounce_sample("exim", "a" * 26, ben.address, str(invitation["Message-ID"]), service)
    assert deliver_raw(office, forged) == []
    assert failures(office) == [] and bounces_of(office, ben.address) == 0
    assert office.snapshot() == before
    with Session(office.engine) as session:
        reasons = session.exec(select(InboundMail.reason).where(InboundMail.sender.like("mailer-daemon%"))).all()
    assert sorted(reasons) == [f"a bounce of {invitation['Message-ID']} already recorded, or of no recipient of it",
                               "a bounce of no mail of ours"]


def test_mail_stops_after_the_bounce_limit_and_starts_again_when_the_owner_writes(accepted_game):
    office, anna, ben = accepted_game
    ben.reply("board")
    ben.reply("board")
    mails = ben.inbox[-3:]
    assert len({str(mail["Message-ID"]) for mail in mails}) == 3
    for mail in mails:
        assert bounce(office, mail, "exchange") == []  # a game mail's bounce is told nobody by mail
    assert bounces_of(office, ben.address) == office.config.limits.bounce_limit == 3
    sent = anna.reply("8/5 6/5")  # Ben must roll now, but gets no mail
    assert ben.address not in [recipient(mail) for mail in sent]
    assert office.table().game.seat == 1
    sent = ben.reply("board", to=mails[-1])  # he writes: mail goes out to him again
    assert [recipient(mail) for mail in sent] == [ben.address]
    assert "8/5 6/5" in prose_of(sent[0])  # and it tells him what he missed
    assert bounces_of(office, ben.address) == 0


def test_no_invitation_goes_to_an_address_that_keeps_bouncing(config, anna):
    office = anna.office
    office.config = config.model_copy(update={"limits": config.limits.model_copy(update={
        "invitations_received_per_day": 10})})
    office.pipeline.handler = partial(handle_mail, config=office.config, dice=office.dice)
    for _ in range(office.config.limits.bounce_limit):
        invitation = invite_nobody(office, anna)
        bounce(office, invitation, "postfix")
    (answer,) = anna.write_confirmed(f"invite {NOBODY}")
    assert recipient(answer) == anna.address
    assert f"Mail to {NOBODY} has come back undelivered too often, so no invitation was sent" in prose_of(answer)


def test_the_games_page_and_pbem_status_show_a_game_mail_that_bounced(accepted_game):
    office, anna, ben = accepted_game
    table = office.table()
    bounce(office, ben.last, "postfix")
    board = WebBoard(office.config, office.engine)
    for seat, own in ((0, False), (1, True)):
        page = board.page(table.token(seat))
        assert page is not None
        (line,) = page.undelivered
        assert ben.address not in line and "550 5.1.1 <…>: Recipient address rejected" in line
        assert ("Your mail of" if own else "Ben's mail of") in line
    out = io.StringIO()
    with Session(office.engine) as session:
        status_report(session, out, office.config)
    report = out.getvalue()
    assert "bounces in 7 days: 1 permanent, 0 delayed; 0 address(es) get no mail" in report
    assert f"user_unknown {ben.address} (match {table.id})" in report and "5.1.1" in report


def test_a_bounce_is_never_answered(office, anna):
    invitation = invite_nobody(office, anna)
    count = office.outbound_count()
    sent = bounce(office, invitation, "gmail")
    assert [recipient(mail) for mail in sent] == [anna.address]  # the inviter, never the mailer-daemon
    assert office.outbound_count() == count + 1
    with Session(office.engine) as session:
        (row,) = session.exec(select(InboundMail).where(InboundMail.sender.like("mailer-daemon%"))).all()
    assert row.reason.startswith("bounce of ")


@pytest.mark.parametrize("sender", ["", "<>", "MAILER-DAEMON", "Mail Delivery Subsystem <MAILER-DAEMON>",
                                    "MAILER-DAEMON <>"])
def test_a_mail_to_a_bounce_address_is_read_as_a_bounce_whatever_its_from(office, anna, sender):
    """Issue 35: DragonFly, Barracuda and plain Sendmail write a From with no address in it; a
    mail to a bounce address is a bounce candidate all the same, never refused as unreadable."""
    invitation = invite_nobody(office, anna)
    row = outbound_of(office, invitation)
    raw = bounce_sample("dragonfly", row.bounce_tag, NOBODY, str(invitation["Message-ID"]),
                        office.config.service.address)
    raw = raw.replace(b"From: MAILER-DAEMON\n", f"From: {sender}\n".encode() if sender else b"")
    (told,) = deliver_raw(office, raw)
    assert recipient(told) == anna.address and "The invitation is withdrawn" in prose_of(told)
    assert office.table().status is MatchStatus.DECLINED and bounces_of(office, NOBODY) == 1
    with Session(office.engine) as session:
        (inbound,) = session.exec(select(InboundMail).where(InboundMail.reason.like("bounce of %"))).all()
    assert inbound.sender == ""


def status_of(office: PostOffice) -> tuple[int, str]:
    out = io.StringIO()
    with Session(office.engine) as session:
        code = status_report(session, out, office.config)
    return code, out.getvalue()


@pytest.mark.parametrize(("sample", "why"), [
    ("postfix-spamhaus", "the receiving mail server refuses mail from this service's mail server"),
    ("gmail-dmarc", "the receiving mail server could not verify that it came from this service"),
    ("gmail-spam", "the receiving mail server took it for unwanted mail"),
])
def test_a_refusal_of_the_service_is_not_charged_to_the_invitee_and_alerts_the_operator(office, anna, sample, why,
                                                                                      caplog):
    assert status_of(office)[0] == 0
    invitation = invite_nobody(office, anna)
    with caplog.at_level("WARNING", logger="pbem.service.mailroom.bounces"):
        (told,) = bounce(office, invitation, sample)
        second = anna.write_confirmed("invite bne2@example.net")
        bounce(office, next(mail for mail in second if recipient(mail) == "bne2@example.net"), sample,
               address="bne2@example.net")
    prose = prose_of(told)
    assert f"Your invitation to {NOBODY} could not be delivered: {why}" in prose, prose
    assert "this is a problem on the service's side, not of the address, and its operator has been told" in prose
    assert "check the address" not in prose
    assert office.table().status is MatchStatus.DECLINED  # it did not arrive: withdrawn all the same
    assert bounces_of(office, NOBODY) == 0 and bounces_of(office, "bne2@example.net") == 0
    alerts = [record.getMessage() for record in caplog.records if "refused on the service's side" in record.message]
    assert len(alerts) == 1 and alerts[0].startswith("mail to example.net refused")  # once per domain and day
    code, report = status_of(office)
    assert code == 1
    assert "refused by receiving servers in 3 days: 1 domain(s)" in report
    (line,) = [line for line in report.splitlines() if "refuses the service's mail" in line]
    assert line.startswith(f"  example.net refuses the service's mail ({CORPUS[sample].reason}), 2 time(s)"), line


@pytest.mark.parametrize("sample", ["exim-mailbox-full", "gmail-over-quota", "exim-expired", "postfix-expired-4xx",
                                    "kddi", "yahoo-deferred"])
def test_a_soft_failure_tells_the_inviter_to_try_later_and_counts_against_nobody(office, anna, sample):
    invitation = invite_nobody(office, anna)
    (told,) = bounce(office, invitation, sample)
    prose = prose_of(told)
    assert "The invitation is withdrawn" in prose and "You may invite again later" in prose.replace("you may", "You may")
    assert "check the address" not in prose
    assert bounces_of(office, NOBODY) == 0
    (failure,) = failures(office)
    assert failure.permanent and failure.reason == CORPUS[sample].reason


@pytest.mark.parametrize("sample", ["postfix-relayed", "amazonses-json", "auto-reply", "vacation-plain"])
def test_what_is_no_bounce_changes_nothing(office, anna, sample):
    invitation = invite_nobody(office, anna)
    before = office.snapshot()
    assert bounce(office, invitation, sample) == []
    assert failures(office) == [] and bounces_of(office, NOBODY) == 0 and office.snapshot() == before
    assert office.table().status is MatchStatus.INVITED


def test_an_abuse_report_stops_invitations_to_the_complaining_address(office, anna, caplog):
    """An ARF report (RFC 5965) about the invitation: as if its recipient had written ``stop``."""
    invitation = invite_nobody(office, anna)
    with caplog.at_level("WARNING", logger="pbem.service.mailroom.bounces"):
        assert bounce(office, invitation, "arf") == []  # sent to the service's address, never answered
    with Session(office.engine) as session:
        row = session.exec(select(PlayerRow).where(PlayerRow.address == NOBODY)).one()
    assert row.refuses_invitations and row.bounces == 0
    assert any(f"abuse report: {NOBODY} reported" in record.getMessage() for record in caplog.records)
    (answer,) = anna.write_confirmed(f"invite {NOBODY}")
    assert f"{NOBODY} does not wish to receive invitations, so none was sent." in prose_of(answer)


def test_a_server_answer_that_is_no_sentence_is_not_quoted(office, anna):
    invitation = invite_nobody(office, anna)
    (told,) = bounce(office, invitation, "postfix-unreadable-answer")
    prose = prose_of(told)
    assert f"{NOBODY} could not be delivered: the receiving mail server refused it. The invitation is withdrawn; " \
           "please check the address; if it is right, you may invite again later." in prose, prose
    assert "550 :" not in prose and bounces_of(office, NOBODY) == 0
