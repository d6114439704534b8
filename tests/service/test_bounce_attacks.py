"""Bounces the first tests lack, through the whole service (review of issue 21): shapes of
qmail, Yahoo and odd DSNs, auto-replies to the bounce address, and forged bounces.  A bounce
counts only for the recipient of the very mail it names, so a player who forges one with a
Message-ID or a tag he saw (his own mails') can stop mail to nobody but himself, and can
withdraw no other person's invitation; no bounce is ever answered."""

from __future__ import annotations


import pytest
from bounce_samples import bounce_sample
from post_office import Player, is_confirmation, prose_of, recipient
from sqlmodel import Session, select
from test_bounced_mail import NOBODY, bounce, bounces_of, deliver_raw, failures, invite_nobody, outbound_of

from pbem.addresses import bounce_address
from pbem.mail.local_client import compose_mail
from pbem.store.game_records import MatchStatus
from pbem.store.mail_records import InboundMail


UNKNOWN = "the receiving mail server says this address does not exist"


@pytest.mark.parametrize(("sample", "reason"), [
    ("qmail", f"{UNKNOWN} (the mail server answered \"Sorry, no mailbox here by that name. (#5.1.1)\")"),
    ("yahoo", f"{UNKNOWN} (the mail server answered \"554: delivery error: dd This user doesn't have a yahoo.com "
              "account"),
    ("dsn-forwarded", f"{UNKNOWN} (the mail server answered \"550 5.1.1 mailbox disabled\")"),
    ("dsn-to-service", f"{UNKNOWN} (the mail server answered \"550 5.1.1 <{NOBODY}>: user unknown\")"),
    ("dsn-no-diagnostic", f"{UNKNOWN}. The invitation is withdrawn"),
])
def test_the_inviter_is_told_the_reason_whatever_shape_the_bounce_has(office, anna, sample, reason):
    invitation = invite_nobody(office, anna)
    (told,) = bounce(office, invitation, sample)
    assert recipient(told) == anna.address
    prose = " ".join(prose_of(told).split())
    assert f"Your invitation to {NOBODY} could not be delivered: {reason}" in prose, prose
    assert office.table().status is MatchStatus.DECLINED
    assert [failure.address for failure in failures(office)] == [NOBODY]


def test_a_dsn_of_several_recipients_counts_only_the_failure_of_ours(office, anna):
    """Carla's "mailbox full" and Dora's delay in the same DSN are no failure of the invitee's,
    whatever order the addresses sort in: the tag's fallback (a forward) is only for a bounce
    that names no recipient of ours at all."""
    zoe = "zoe@example.net"  # sorts after carla@ and dora@
    (invitation,) = [mail for mail in anna.write_confirmed(f"invite {zoe}") if recipient(mail) == zoe]
    (told,) = bounce(office, invitation, "dsn-several")
    prose = " ".join(prose_of(told).split())
    assert f"the mail server answered \"550 5.1.1 <{zoe}>: user unknown\"" in prose, prose
    assert [(failure.address, failure.permanent, failure.status) for failure in failures(office)] == [
        (zoe, True, "5.1.1")]


def test_an_out_of_office_reply_to_the_bounce_address_is_neither_answered_nor_counted(accepted_game):
    office, anna, ben = accepted_game
    mail = ben.last
    row = outbound_of(office, mail)
    assert row.bounce_tag is not None
    # A vacation responder that answers the envelope sender and marks nothing as automatic.
    away = compose_mail(ben.sender, bounce_address(office.config.service.address, row.bounce_tag),
                        f"Out of office: {mail['Subject']}",
                        "I am away until Monday.\n\nYour message could not be read by me before then.\n\n"
                        "> 550 5.1.1 roll\n> double\n")
    away["In-Reply-To"] = str(mail["Message-ID"])
    before = office.snapshot()
    assert deliver_raw(office, away.as_bytes()) == []
    assert failures(office) == [] and office.snapshot() == before


def test_a_forged_bounce_of_a_mail_he_received_stops_no_mail_to_anyone_else(accepted_game):
    """Ben has the Message-ID and (from its Return-Path) the tag of every mail sent to him; a
    bounce he forges with them can name Anna as failed, yet it counts against nobody but him."""
    office, anna, ben = accepted_game
    ben.reply("board")
    seen = ben.last
    tag = outbound_of(office, seen).bounce_tag
    assert tag is not None
    service = office.config.service.address
    for sample in ("postfix", "exim", "dsn-several", "dsn-to-service"):
        # by Message-ID alone (a tag of nobody's mail): Anna is no recipient of that mail
        deliver_raw(office, bounce_sample(sample, "b" * 26, anna.address, str(seen["Message-ID"]), service))
    assert bounces_of(office, anna.address) == 0 and failures(office) == []
    for sample in ("postfix", "exim", "gmail"):
        # by his own tag: a bounce that names no recipient of that mail (Ben) is about no mail of
        # ours (issue 35; before, it was taken for a forward of Ben's and counted against him)
        deliver_raw(office, bounce_sample(sample, tag, anna.address, str(seen["Message-ID"]), service))
    assert bounces_of(office, anna.address) == 0 and bounces_of(office, ben.address) == 0
    assert failures(office) == []
    sent = ben.reply("board")  # Anna still gets every mail
    assert sent and office.table().status is MatchStatus.RUNNING


def test_a_forged_bounce_cannot_withdraw_anothers_invitation(office, anna, ben):
    """Ben saw the mails to him, never the invitation to Dora: a bounce naming Dora with his
    own mail's Message-ID or tag withdraws nothing and tells Anna nothing."""
    dora = "dora@example.org"
    anna.write_confirmed(f"invite {dora}")
    (seen,) = ben.write("help")
    tag = outbound_of(office, seen).bounce_tag
    service = office.config.service.address
    for forged in (bounce_sample("postfix", tag, dora, str(seen["Message-ID"]), service),
                   bounce_sample("dsn-to-service", "c" * 26, dora, str(seen["Message-ID"]), service),
                   bounce_sample("qmail", "c" * 26, dora, "<made-up@localhost>", service)):
        assert deliver_raw(office, forged) == []  # never answered
    assert office.table().status is MatchStatus.INVITED
    assert bounces_of(office, dora) == 0
    assert failures(office) == []  # naming no recipient of the mail his tag names: nobody's


@pytest.mark.parametrize("sample", ["qmail", "yahoo", "dsn-several", "dsn-to-service", "dsn-no-diagnostic"])
def test_no_bounce_is_ever_answered_to_its_sender(office, anna, sample):
    invitation = invite_nobody(office, anna)
    for _ in range(2):  # the second a repeat: recorded already, still unanswered
        sent = bounce(office, invitation, sample)
        assert all(recipient(mail) == anna.address for mail in sent)
    with Session(office.engine) as session:
        reasons = session.exec(select(InboundMail.reason).where(InboundMail.sender.like("mailer-daemon%"))).all()
    assert len(reasons) == 2 and reasons[0].startswith("bounce of ")


def test_the_inviter_is_not_told_where_the_invitee_forwards_his_mail(office, anna):
    """A forward's bounce names the address the invitee's mail went on to: that address is his
    private business, and the inviter's mail shows the reason without it (as the game page does)."""
    invitation = invite_nobody(office, anna)
    raw = bounce_sample("dsn-forwarded", outbound_of(office, invitation).bounce_tag, NOBODY,
                        str(invitation["Message-ID"]), office.config.service.address)
    raw = raw.replace(b"550 5.1.1 mailbox disabled", b"550 5.1.1 <bne.private@elsewhere.example>: mailbox disabled")
    (told,) = deliver_raw(office, raw)
    prose = " ".join(prose_of(told).split())
    assert "bne.private@elsewhere.example" not in told.as_string()
    assert f"Your invitation to {NOBODY} could not be delivered: {UNKNOWN} (the mail server answered " \
           "\"550 5.1.1 <…>: mailbox disabled\")" in prose, prose


def test_the_organiser_is_told_when_a_tournament_invitation_bounces(office, anna):
    from test_tournaments import code_in  # noqa: PLC0415

    (answer,) = anna.write_confirmed("tournament new Winter knockout 4 match 1")
    sent = anna.write_confirmed(f"tournament invite {code_in(answer)} {NOBODY}")
    invitation = next(mail for mail in sent if recipient(mail) == NOBODY)
    told = bounce(office, invitation, "postfix")
    assert bounces_of(office, NOBODY) == 1
    assert [recipient(mail) for mail in told] == [anna.address]



def test_a_forged_mail_in_the_name_of_a_bouncing_address_does_not_start_its_mail_again(accepted_game):
    office, anna, ben = accepted_game
    for _ in range(office.config.limits.bounce_limit):
        ben.reply("board")
    for mail in ben.inbox[-office.config.limits.bounce_limit:]:
        bounce(office, mail, "exchange")
    assert bounces_of(office, ben.address) == office.config.limits.bounce_limit
    forger = Player(office, ben.address, "Ben")
    (asked,) = forger.write("lang de")  # a new mail, no token: anybody can write it in Ben's name
    assert is_confirmation(asked)  # only the "please confirm", which the owner answers to come back
    assert bounces_of(office, ben.address) == office.config.limits.bounce_limit
    assert forger.write("board") == []  # and nothing else goes to the dead address
    (back,) = ben.reply("yes", to=asked)  # the owner answers it: mail flows again
    assert bounces_of(office, ben.address) == 0 and recipient(back) == ben.address
