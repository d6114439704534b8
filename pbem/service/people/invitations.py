"""Invitations: inviting a friend, accepting or declining, and the rematch after the end.

An invitation is a match row in the state ``invited`` with a fresh token for each seat; the
invited player's token is in the Reply-To of the invitation and in its one-click ``mailto:``
links, so that ``accept`` and ``decline`` find it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, bindparam
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from pbem import commands
from pbem.addresses import is_person_address
from pbem.assistant import levels
from pbem.config import Config
from pbem.mail.headers import new_token
from pbem.render.views import EventKind, Notice
from pbem.rules import scoring
from pbem.rules.prizes import Prize
from pbem.service.games import credits
from pbem.service.games import ladder_standing
from pbem.service.games.play import advance, start_game
from pbem.service.table import assistant
from pbem.service.table.conversation import Conversation
from pbem.service.table.letters import undeliverable
from pbem.service.table.tables import Table
from pbem.store.db import utc_now
from pbem.store.game_records import AccountConfirmation, Ladder, MatchRecord, MatchStatus, Player, Seat


_PLAYER_BY_ADDRESS = select(Player).where(Player.address == bindparam("address"))
"""Built once (as the pipeline's statements of every mail: its cache key is kept)."""


def player_for(session: Session, address: str) -> Player:
    """The player with this address, created on first contact (their name is taken later, from a
    mail that proves it comes from them)."""
    address = address.lower()
    player = session.exec(_PLAYER_BY_ADDRESS, params={"address": address}).first()
    if player is None:
        player = Player(address=address)
        session.add(player)
        session.flush()
    return player


def is_service_address(address: str, service_address: str) -> bool:
    """True for the service's own address, with or without a ``+tag``: never a player."""
    local, _, domain = address.lower().rpartition("@")
    service_local, _, service_domain = service_address.lower().rpartition("@")
    return domain == service_domain and local.split("+", 1)[0] == service_local


def match_rules(options: commands.GameOptions, cube_cap: int) -> scoring.MatchRules:
    """The rules core's view of an invitation's format."""
    if options.prize is not None:
        return options.prize.match_rules(cube_cap)
    kind = options.kind
    length = {scoring.Format.SINGLE: 1, scoring.Format.MONEY: 0}.get(kind, options.length or 1)
    return scoring.MatchRules(
        format=kind, length=length, stake=options.stake, cube_cap=cube_cap,
        beaver=options.beaver, jacoby=options.jacoby,
    )


def _options_document(options: commands.GameOptions) -> dict[str, object]:
    def seconds(duration: timedelta | None) -> float | None:
        return None if duration is None else duration.total_seconds()

    return {
        "rated": options.rated,
        "language": options.language,
        "move_clock": seconds(options.move_clock),
        "time_bank": seconds(options.time_bank),
        "settle": options.settle,
        "prize": None if options.prize is None else options.prize.to_dict(),
    }


def _invitation_options(rules: scoring.MatchRules, document: dict[str, object]) -> commands.GameOptions:
    """The options a match was started with (the inverse of ``_options_document``), for a rematch."""

    def duration(seconds: object) -> timedelta | None:
        return None if seconds is None else timedelta(seconds=float(seconds))  # type: ignore[arg-type]  # stored as a number

    return commands.GameOptions(
        kind=rules.format,
        length=rules.length if rules.format in (scoring.Format.MATCH, scoring.Format.GAMES) else None,
        stake=rules.stake,
        beaver=rules.beaver,
        jacoby=rules.jacoby,
        rated=bool(document.get("rated", True)),
        language=document.get("language"),  # type: ignore[arg-type]  # stored as "de", "en" or None
        move_clock=duration(document.get("move_clock")),
        time_bank=duration(document.get("time_bank")),
        settle=bool(document.get("settle", False)),
        prize=_prize(document.get("prize")),
    )


def _prize(document: object) -> Prize | None:
    """The prize of a match's options (``Prize.to_dict``), or None."""
    return Prize.from_dict(document) if isinstance(document, dict) else None


def _settle_refused(talk: Conversation, options: commands.GameOptions, table: Table | None = None) -> bool:
    """``settle`` needs bgsage for the settlement: without it, the invitation is refused now,
    not a game lost on time later."""
    if options.settle and not assistant.available(talk.config):
        talk.say_template(Notice.SETTLE_UNAVAILABLE, table)
        return True
    return False


def invite(talk: Conversation, command: commands.Invite) -> None:
    """``invite ADDRESS [format] [options]``: a new match waiting for the friend's answer."""
    invitee = _invitee(talk, command.address, command.options)
    if invitee is not None:
        open_match(talk, (talk.sender, invitee), command.options)


def challenge(talk: Conversation, address: str, options: commands.GameOptions, ladder: Ladder,
              shown: str | None = None) -> Table | None:
    """A ladder challenge (:mod:`pbem.service.competitions.ladders`): an invitation like any other, under the
    same rules (limits, ``stop``, bounces), whose match belongs to the ladder; None when refused.
    ``shown``: how a refusal names the one challenged (their name, when challenged by place:
    the challenger is never told an address they did not write)."""
    invitee = _invitee(talk, address, options, shown)
    return None if invitee is None else open_match(talk, (talk.sender, invitee), options, ladder_id=ladder.id)


def _invitee(talk: Conversation, address: str, options: commands.GameOptions,
             shown: str | None = None) -> Player | None:
    """The player an invitation from the sender may go to, or None when it may not (the sender
    is told why)."""
    address = address.lower()
    if address == talk.sender.address:
        talk.say_template(Notice.CANNOT_INVITE_YOURSELF)
        return None
    if is_service_address(address, talk.config.service.address):
        talk.say_template(Notice.CANNOT_INVITE_SERVICE)
        return None
    if not is_person_address(address):
        talk.say_template(Notice.INVITEE_NOT_A_PERSON, address=address[:80])
        return None
    limit = talk.config.limits.invitations_per_day
    if limit and invitations_sent_in_a_day(talk, talk.sender) >= limit:
        talk.say_template(Notice.INVITATION_LIMIT, limit=limit, address=shown or address)
        return None
    invitee = player_for(talk.session, address)
    received = talk.config.limits.invitations_received_per_day
    if received and invitations_received_in_a_day(talk, invitee) >= received:
        talk.say_template(Notice.INVITEE_LIMIT, limit=received, address=shown or address)
        return None
    if invitee.refuses_invitations:
        talk.say_template(Notice.INVITEE_REFUSES, address=shown or address)
        return None
    if undeliverable(invitee, talk.config):
        talk.say_template(Notice.INVITEE_UNDELIVERABLE, address=shown or address)
        return None
    if _settle_refused(talk, options):
        return None
    if options.prize is not None and credits.refuse_invitation(talk, options.prize, invitee):
        return None
    if invitee.language is None:  # the invitation's language, else the inviter's
        invitee.language = options.language or talk.language(talk.sender)
        talk.session.add(invitee)
    return invitee


def play_assistant(talk: Conversation, options: commands.GameOptions, level: str | None = None) -> None:
    """``play assistant [level]``: a match against the Assistant that starts at once (and changes
    no rating), at the ``level`` asked for, else at that of the sender's last match against it,
    else at its strongest."""
    if _settle_refused(talk, options):
        return
    if options.prize is not None:
        talk.say_template(Notice.PRIZE_NOT_WITH_ASSISTANT)
        return
    players = (talk.sender, assistant.assistant_player(talk.session))
    table = open_match(talk, players, replace(options, rated=False))
    table.record.assistant_level = level or last_assistant_level(talk.session, talk.sender) or levels.STRONGEST
    accept(talk, table, 1)


def last_assistant_level(session: Session, player: Player) -> str | None:
    """The level of ``player``'s newest match against the Assistant (None: none has one)."""
    query = (select(MatchRecord.assistant_level).join(Seat, col(Seat.match_id) == MatchRecord.id)
             .where(Seat.player_id == player.id, col(MatchRecord.assistant_level).is_not(None))
             .order_by(col(MatchRecord.id).desc()).limit(1))
    return session.exec(query).first()


def invitations_sent_in_a_day(talk: Conversation, player: Player) -> int:
    """Invitations of every kind ``player`` sent in the 24 hours before this mail: to games,
    rematches, ladder challenges and tournaments; ``[limits] invitations_per_day`` holds for all."""
    return _matches_opened_in_a_day(talk, 0, player) + _tournament_invitations(talk, AccountConfirmation.invited_by, player)


def invitations_received_in_a_day(talk: Conversation, player: Player) -> int:
    """Invitations of every kind ``player`` received in the 24 hours before this mail, from all
    senders together (``[limits] invitations_received_per_day``)."""
    return _matches_opened_in_a_day(talk, 1, player) + _tournament_invitations(talk, AccountConfirmation.player_id, player)


def _tournament_invitations(talk: Conversation, column: Any, player: Player) -> int:
    """Organisers' tournament invitations (held ``tournament join`` lines with an ``invited_by``)
    in 24 hours whose ``column`` (the organiser, or the one invited) is ``player``."""
    return len(talk.session.exec(select(AccountConfirmation.token).where(
        column == player.id, col(AccountConfirmation.invited_by).is_not(None),
        col(AccountConfirmation.created_at) > talk.now - timedelta(days=1))).all())


def _matches_opened_in_a_day(talk: Conversation, seat: int, player: Player) -> int:
    """Invitations and rematches to people (not the Assistant) in the 24 hours before this mail
    in which ``player`` holds ``seat`` (0: sent, 1: received): the rate limits that keep the
    service from mailing strangers in bulk, whoever forges the senders.  A tournament's pairings
    are no invitations (joining was the consent) and do not count."""
    since = talk.now - timedelta(days=1)
    holder, invited = aliased(Seat), aliased(Seat)
    query = (select(MatchRecord.id)
             .join(holder, and_(col(holder.match_id) == MatchRecord.id, col(holder.number) == seat))
             .join(invited, and_(col(invited.match_id) == MatchRecord.id, col(invited.number) == 1))
             .join(Player, col(Player.id) == invited.player_id)
             .where(holder.player_id == player.id, MatchRecord.created_at > since,
                    Player.address != assistant.ADDRESS, col(MatchRecord.tournament_id).is_(None)))
    return len(talk.session.exec(query).all())


def open_match(
    talk: Conversation, players: tuple[Player, Player], options: commands.GameOptions,
    rematch_of: int | None = None, ladder_id: int | None = None, announced: EventKind = EventKind.INVITED,
    **about: Any,
) -> Table:
    """A new match of ``players`` (seat 0 first), its terms told to both as ``announced``
    (an invitation; a tournament's pairing names its tournament and round in ``about``)."""
    rules = match_rules(options, talk.config.game.cube_cap)
    if options.prize is not None:  # the fee is fixed now: the game pays what this invitation promises
        options = replace(options, prize=options.prize.with_fee(talk.config.credits.fee_percent))
    assert players[0].id is not None and players[1].id is not None
    record = MatchRecord(options=_options_document(options), score=scoring.Score(rules).to_dict(),
                         rematch_of=rematch_of, ladder_id=ladder_id)
    talk.session.add(record)
    talk.session.flush()
    assert record.id is not None
    for number, player in enumerate(players):
        assert player.id is not None
        talk.session.add(Seat(match_id=record.id, number=number, player_id=player.id, token=new_token()))
    talk.session.flush()
    table = Table.load(talk.session, record)
    game_config = talk.config.game
    # The inviter's address stands beside their name: a name the inviter chose proves nothing.
    talk.event(table, announced, 0, inviter=players[0].address, rules=rules.to_dict(), settle=options.settle,
               rated=options.rated, **credits.invitation_terms(options.prize, talk.config),
               move_clock=options.move_clock or game_config.move_clock,
               time_bank=game_config.time_bank if options.time_bank is None else options.time_bank, **about)
    return table


def invitation_terms(table: Table, config: Config) -> dict[str, object]:
    """The data of an open invitation's ``invited`` event, from the stored match: the terms its
    mail stated, for the invitee's page on the web."""
    options = _invitation_options(table.score.rules, table.record.options)
    return {"inviter": table.players[0].address, "rules": table.score.rules.to_dict(), "settle": options.settle,
            "rated": options.rated,
            **credits.invitation_terms(table.prize, config),
            "move_clock": options.move_clock or config.game.move_clock,
            "time_bank": config.game.time_bank if options.time_bank is None else options.time_bank}


def accept(talk: Conversation, table: Table, seat: int) -> None:
    """The invited player accepts: a prize game's deposits go into escrow (or, when either
    player cannot cover theirs, nothing happens), and the first game starts with the opening roll."""
    if seat != 1:
        talk.say_template(Notice.NOT_INVITED, table)
        return
    prize = table.prize
    balances = None if prize is None else credits.escrow(talk, table, prize)
    if prize is not None and balances is None:
        return
    table.record.status = MatchStatus.RUNNING
    talk.event(table, EventKind.ACCEPTED, seat)
    if prize is not None:
        talk.event(table, EventKind.PRIZE_ESCROWED, seat, deposit=prize.deposit, balances=balances)
    start_game(talk, table)
    advance(talk, table)


def decline(talk: Conversation, table: Table, seat: int) -> None:
    if seat != 1:
        talk.say_template(Notice.NOT_INVITED, table)
        return
    table.record.status = MatchStatus.DECLINED
    table.record.finished_at = utc_now()
    talk.event(table, EventKind.DECLINED, seat)
    if table.record.ladder_id is not None:  # a declined challenge is won by the challenger
        ladder_standing.record_result(talk, table, challenger_won=True, how=ladder_standing.HowDecided.DECLINED)


def rematch(talk: Conversation, table: Table, seat: int) -> None:
    """The same again with the same opponent, as a new invitation from the one who asks."""
    if table.status is not MatchStatus.FINISHED:
        talk.say_template(Notice.MATCH_NOT_OVER, table)
        return
    opponent = table.players[1 - seat]
    if opponent.refuses_invitations:
        talk.say_template(Notice.INVITEE_REFUSES, table, address=opponent.address)
        return
    if undeliverable(opponent, talk.config):
        talk.say_template(Notice.INVITEE_UNDELIVERABLE, table, address=opponent.address)
        return
    options = _invitation_options(table.score.rules, table.record.options)
    if assistant.is_assistant(opponent) and not assistant.available(talk.config):
        talk.say_template(Notice.ASSISTANT_UNAVAILABLE, table)
        return
    if _settle_refused(talk, options, table):
        return
    if options.prize is not None and credits.refuse_invitation(talk, options.prize, opponent, table):
        return
    new_table = open_match(talk, (talk.sender, opponent), options, rematch_of=table.id)
    if assistant.is_assistant(opponent):
        new_table.record.assistant_level = table.record.assistant_level
        accept(talk, new_table, 1)
        return
    talk.say_template(Notice.REMATCH_SENT, table, opponent=opponent.display_name)
    talk.news_of(new_table)
