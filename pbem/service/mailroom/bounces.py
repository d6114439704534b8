"""What a bounce means: which of our mails failed, for whom, and what follows.

A bounce names its mail by the VERP tag of its envelope sender, or, failing that, by the
Message-ID of the mail it returns; a bounce that names no mail of ours changes nothing (anyone
can write a mail that looks like a bounce, but only the mail's recipient and their servers
saw its tag).  Only the recipients of that very mail can be reported as failed.

Each failure is blamed on the right party (:mod:`pbem.mail.bounce_reasons`).  Only a hard
failure of the address itself (user or host unknown, mailbox disabled) counts against it: at
``[limits] bounce_limit`` of them it gets no more mail until its owner writes again (then the
count starts afresh).  A refusal of the service (a block list, reputation, SPF/DKIM, policy,
spam) never counts against the invitee: the operator is alerted (the log says it once per
receiving domain and day; ``pbem status`` names the domain).  A soft failure (mailbox full,
expired, 4.x.x returned) counts against nobody.  Whatever the reason, a mail returned for
good withdraws the invitation it was, and its inviter (or a tournament's organiser) is told
why, in their language; a delay changes nothing a player sees.  An abuse report (ARF) stops
invitations to the complaining address, as its owner's ``stop`` would.  Every failure, delays
too, is kept in ``delivery_failures``: the game's page and ``pbem status`` show them.  A
bounce is never answered.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, time

from sqlmodel import Session, col, select

from pbem.addresses import ADDRESS_PATTERN
from pbem.config import Config
from pbem.mail.bounce_reasons import HARD, SERVICE_SIDE, readable
from pbem.mail.bounces import Bounce, Failure
from pbem.mail.composing import reply_token_of
from pbem.render.views import Notice
from pbem.service.table.conversation import Conversation
from pbem.service.table.dice import SEEDED_DICE
from pbem.service.table.letters import undeliverable
from pbem.service.table.news import Answering, last_mail_of
from pbem.service.table.tables import Table, locked_match
from pbem.store.game_records import AccountConfirmation, MatchStatus, Player, TournamentRecord
from pbem.store.mail_records import DeliveryFailure, OutboundMail

log = logging.getLogger(__name__)

_ADDRESS = re.compile(ADDRESS_PATTERN, re.IGNORECASE)


def apply_bounce(session: Session, bounce: Bounce, config: Config, now: datetime) -> tuple[str, list[Conversation]]:
    """Record the failures ``bounce`` reports; returns what was done (for the log and the
    inbound row) and the conversations whose letters tell inviters of failed invitations."""
    outbound, by_tag = _bounced_mail(session, bounce)
    if outbound is None or outbound.id is None:
        return "a bounce of no mail of ours", []
    recipients = [recipient.lower() for recipient in outbound.recipients]
    told: list[Conversation] = []
    done = [_complaint(session, outbound, address) for address in bounce.complaints if address in recipients]
    # A bounce that names no recipient of ours is of a forward (ben@ sent on to elsewhere): by
    # the tag, ours failed with it, if the bounce names ours somewhere (its Original-Recipient,
    # its text).  One that names ours is about ours alone: the other addresses of a DSN of
    # several are somebody else's; one that names none of ours is about no mail of ours.
    forwarded = by_tag and len(recipients) == 1 and recipients[0] in bounce.named and not any(
        failure.address in recipients for failure in bounce.failures)
    for failure in bounce.failures:
        address = failure.address if failure.address in recipients else (recipients[0] if forwarded else None)
        if address is None or _known(session, outbound.id, address, failure.permanent):
            continue
        session.add(DeliveryFailure(address=address, permanent=failure.permanent, status=failure.status,
                                    diagnostic=failure.diagnostic, reason=failure.reason.value,
                                    outbound_id=outbound.id, match_id=outbound.match_id, reported_at=now))
        done.append(f"{failure.reason.value if failure.permanent else 'delayed'}: {address} {failure.status}".strip())
        if failure.reason in SERVICE_SIDE:
            _alert_operator(session, address, failure, now)
        if failure.permanent:
            told.extend(_failed_for_good(session, outbound, address, failure, config, now))
    if not done:
        return f"a bounce of {outbound.message_id} already recorded, or of no recipient of it", []
    return f"bounce of {outbound.message_id}: {'; '.join(done)}", told


def _complaint(session: Session, outbound: OutboundMail, address: str) -> str:
    """An abuse report by the recipient of our mail: no more invitations to them, as ``stop``."""
    player = session.exec(select(Player).where(Player.address == address)).first()
    if player is not None:
        player.refuses_invitations = True
        session.add(player)
    log.warning("abuse report: %s reported %s as abuse; no more invitations to it", address, outbound.message_id)
    return f"abuse report by {address}: no more invitations"


def _alert_operator(session: Session, address: str, failure: Failure, now: datetime) -> None:
    """Log a refusal of the service by a receiving domain, once per domain and day (the
    failure just added is in the session, so the first of the day finds only itself)."""
    domain = address.rpartition("@")[2]
    since = datetime.combine(now.date(), time(), tzinfo=now.tzinfo)
    earlier = session.exec(select(DeliveryFailure.id).where(
        col(DeliveryFailure.address).endswith(f"@{domain}"), col(DeliveryFailure.reason).in_(sorted(SERVICE_SIDE)),
        col(DeliveryFailure.reported_at) >= since).limit(2)).all()
    if len(earlier) <= 1:
        log.warning("mail to %s refused on the service's side (%s): %s %s; see pbem status", domain,
                    failure.reason.value, failure.status, failure.diagnostic)


def _bounced_mail(session: Session, bounce: Bounce) -> tuple[OutboundMail | None, bool]:
    """The mail of ours the bounce is about, and whether its tag (not only its Message-ID) said so."""
    for tag in bounce.tags:
        found = session.exec(select(OutboundMail).where(OutboundMail.bounce_tag == tag)).first()
        if found is not None:
            return found, True
    for message_id in bounce.original_message_ids:
        found = session.exec(select(OutboundMail).where(OutboundMail.message_id == message_id)).first()
        if found is not None:
            return found, False
    return None, False


def _known(session: Session, outbound_id: int, address: str, permanent: bool) -> bool:
    """The same failure of the same mail came before (a server that reports it twice)."""
    return session.exec(select(DeliveryFailure.id).where(
        DeliveryFailure.outbound_id == outbound_id, DeliveryFailure.address == address,
        DeliveryFailure.permanent == permanent)).first() is not None


def _failed_for_good(session: Session, outbound: OutboundMail, address: str, failure: Failure, config: Config,
                     now: datetime) -> list[Conversation]:
    """Count a hard failure against the address; withdraw an invitation it was, and tell the inviter why."""
    player = session.exec(select(Player).where(Player.address == address)).first()
    if player is None:
        return []
    if failure.reason in HARD:
        player.bounces += 1
        session.add(player)
        if undeliverable(player, config):
            log.warning("%s bounced %d times for good: no more mail to it until its owner writes", address,
                        player.bounces)
    if outbound.match_id is None:
        return _tournament_invitation_failed(session, outbound, player, address, failure, config, now)
    record = locked_match(session, outbound.match_id)
    if record is None or record.status != MatchStatus.INVITED:
        return []
    table = Table.load(session, record)
    if table.players[1].id != player.id:
        return []
    record.status, record.finished_at = MatchStatus.DECLINED, now
    session.add(record)
    inviter = table.players[0]
    talk = Conversation(session, config, inviter, last_mail_of(table, 0), SEEDED_DICE, now)
    talk.say_template(Notice.INVITATION_UNDELIVERABLE, address=address, reason=failure.reason.value,
                      diagnostic=_reason(failure, address))
    log.info("match %s: the invitation to %s bounced (%s); withdrawn, %s told", record.id, address,
             failure.diagnostic or failure.status, inviter.address)
    return [talk]


def _reason(failure: Failure, address: str) -> str:
    """The reason as the server gave it, when it is a readable sentence, but for any other
    address in it (where a forward led: the invitee's business, not the inviter's)."""
    if not readable(failure.diagnostic):
        return ""
    return _ADDRESS.sub(lambda found: found.group(0) if found.group(0).lower() == address else "…",
                        failure.diagnostic)


def _tournament_invitation_failed(session: Session, outbound: OutboundMail, player: Player, address: str,
                                  failure: Failure, config: Config, now: datetime) -> list[Conversation]:
    """A tournament invitation (a mail of no match, whose Reply-To holds the invitee's held
    ``tournament join CODE``) that bounced: its organiser is told, as an inviter is."""
    token = reply_token_of(outbound.raw)
    held = None if token is None else session.get(AccountConfirmation, token)
    if held is None or held.player_id != player.id or held.confirmed_at is not None:
        return []
    codes = [line.removeprefix("tournament join ") for line in held.commands if line.startswith("tournament join ")]
    tournament = None if not codes else session.exec(
        select(TournamentRecord).where(TournamentRecord.code == codes[0])).first()
    organiser = None if tournament is None else session.get(Player, tournament.organiser_id)
    if tournament is None or organiser is None:
        return []
    held.confirmed_at = now  # withdrawn: a late reply to it joins nothing
    session.add(held)
    talk = Conversation(session, config, organiser, Answering(None), SEEDED_DICE, now)
    talk.say_template(Notice.INVITATION_UNDELIVERABLE, address=address, reason=failure.reason.value,
                      diagnostic=_reason(failure, address))
    log.info("tournament %s: the invitation to %s bounced; %s told", tournament.code, address, organiser.address)
    return [talk]


def failures_of_match(session: Session, match_id: int) -> list[DeliveryFailure]:
    """The permanent failures of a match's mails, newest first (for its page)."""
    return list(session.exec(select(DeliveryFailure).where(
        DeliveryFailure.match_id == match_id, col(DeliveryFailure.permanent).is_(True))
        .order_by(col(DeliveryFailure.reported_at).desc())).all())
