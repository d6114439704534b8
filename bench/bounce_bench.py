"""How the service reads bounces: of each kind, the share it acts on as it must.

    python bench/bounce_bench.py [--repeat 3] [--small]

Through the real pipeline (the tests' post office: Maildir in and out, the mail service,
SQLite): for each mail of the tests' bounce corpus (``tests/bounce_samples.py``: every MTA
family and reason), a fresh inviter invites a fresh address, and the bounce is rewritten onto
that very invitation (its VERP tag, its invitee, its Message-ID) and dropped into the inbox.
Printed, per kind of mail (as the corpus says it is):

- hard failures (user or host unknown): the share told to the inviter (withdrawn) and counted;
- other failures returned for good (refusals of the service, soft, rejected): the share told,
  and the share wrongly counted against the invitee;
- delays and mails that are no bounce: the share wrongly told or counted;
- mails answered (must be 0), and the milliseconds of the daemon's work per bounce.

Goal (issue 35): every hard failure told and counted; no delay, soft failure, refusal of the
service or non-bounce counted; none answered.  ``--small``: one round of a few mails, for CI.
"""

from __future__ import annotations

import argparse
import logging
from collections import Counter

from rig import Player, PostOffice, cpu_seconds, scratch, scratch_office
from sqlmodel import Session, col, select

from bounce_samples import CORPUS, bounce_sample  # (tests and tests/service: the rig puts them on the path)
from post_office import recipient
from test_bounced_mail import deliver_raw
from pbem.mail.bounce_reasons import HARD, SERVICE_SIDE, SOFT, Reason
from pbem.store.game_records import MatchRecord, MatchStatus, Player as PlayerRow
from pbem.store.mail_records import OutboundMail

SMALL = ("postfix", "sendmail-v5", "postfix-spamhaus", "exim-mailbox-full", "postfix-delayed", "amazonses-json")


def kind_of(reason: Reason | None) -> str:
    if reason in HARD:
        return "hard"
    if reason in SERVICE_SIDE:
        return "service refused"
    if reason in SOFT:
        return "soft"
    if reason is Reason.DELAYED:
        return "delay"
    return "rejected" if reason is Reason.REJECTED else "no bounce"


def one(office: PostOffice, number: int, name: str) -> tuple[bool, bool, bool]:
    """Invite a fresh address and bounce the invitation as ``name``: (told, counted, answered)."""
    inviter = Player(office, f"inviter{number}@example.org", f"Inviter {number}")
    invitee = f"invitee{number}@example.net"
    sent = inviter.write_confirmed(f"invite {invitee}")
    invitation = next(mail for mail in sent if recipient(mail) == invitee)
    with Session(office.engine) as session:
        tag = session.exec(select(OutboundMail.bounce_tag)
                           .where(OutboundMail.message_id == str(invitation["Message-ID"]))).one()
    assert tag is not None
    answers = deliver_raw(office, bounce_sample(name, tag, invitee, str(invitation["Message-ID"]),
                                                office.config.service.address))
    with Session(office.engine) as session:
        counted = session.exec(select(PlayerRow.bounces).where(PlayerRow.address == invitee)).one() > 0
        status = session.exec(select(MatchRecord.status).order_by(col(MatchRecord.id).desc())).first()
    told = any(recipient(mail) == inviter.address for mail in answers) and status == MatchStatus.DECLINED
    answered = any(recipient(mail) != inviter.address for mail in answers)
    return told, counted, answered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the whole corpus")
    parser.add_argument("--small", action="store_true", help="one round of a few mails, for CI")
    options = parser.parse_args()
    logging.getLogger("pbem").setLevel(logging.ERROR)  # the operator's alerts would fill the screen
    names = list(SMALL) if options.small else sorted(CORPUS) * options.repeat
    seen: Counter[str] = Counter()
    told: Counter[str] = Counter()
    counted: Counter[str] = Counter()
    answered = 0
    with scratch() as directory:
        office = scratch_office(directory, 1)
        cpu = 0.0
        for number, name in enumerate(names):
            kind = kind_of(CORPUS[name].reason)
            before = cpu_seconds()
            was_told, was_counted, was_answered = one(office, number, name)
            cpu += cpu_seconds() - before
            seen[kind] += 1
            told[kind] += was_told
            counted[kind] += was_counted
            answered += was_answered
    print(f"{len(names)} bounces of {len(set(names))} shapes through the service")
    for kind in ("hard", "service refused", "soft", "rejected", "delay", "no bounce"):
        if seen[kind]:
            print(f"  {kind:16} {seen[kind]:4}: told {told[kind] / seen[kind]:6.1%}, "
                  f"counted {counted[kind] / seen[kind]:6.1%}")
    wrong = sum(counted[kind] for kind in ("service refused", "soft", "rejected", "delay", "no bounce"))
    print(f"hard failures told: {told['hard']}/{seen['hard']}; wrongly counted: {wrong}; "
          f"delays or non-bounces told: {told['delay'] + told['no bounce']}; answered: {answered}")
    print(f"work per bounce, with its invitation: {1000 * cpu / len(names):.0f} ms CPU")


if __name__ == "__main__":
    main()
