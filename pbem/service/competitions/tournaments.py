"""Knockout tournaments by mail: opening, joining, seeding, the pairings, the round mails.

Joining is consent: when the field is full (or the organiser starts it with at least four),
players are seeded by their match rating (ties by who joined first) into a bracket of
:mod:`pbem.rules.brackets`, and every pairing whose two players are known starts at once as an
ordinary rated match by mail (unless the tournament is ``unrated``), without an invitation.
Each later pairing starts as soon as both its matches before it have ended, without waiting for
the rest of the round.  A match lost on time is lost as any other; ``withdraw`` resigns the
match being played and loses the rest by walkover.

The tournament's row is locked while its bracket changes, and a match's place in the bracket
is unique: of two daemons that finish two matches at once, the second waits for the first and
sees its result, and no pairing is ever started twice.  Every player gets a short mail at the
end of each round (what they play next, and whether it has begun), and at the end (the
champion, the final); it comes before the first mail of a match that round's end started, as
the answer to the join that filled the tournament comes in the joiner's first game mail.
"""

from __future__ import annotations

import base64
import logging
import secrets
from datetime import timedelta
from typing import Any

from sqlmodel import Session, col, select

from pbem import commands
from pbem.addresses import is_person_address
from pbem.render.views import EventKind, Notice
from pbem.rules import brackets, scoring
from pbem.rules import game as game_rules
from pbem.rules.brackets import Bracket
from pbem.service.games.play import advance, start_game
from pbem.service.people import invitations
from pbem.service.table.conversation import Conversation
from pbem.service.table.letters import page_token_of
from pbem.service.table.letters import undeliverable
from pbem.service.table.tables import Table
from pbem.store.game_records import (AccountConfirmation, MatchRecord, MatchStatus, Player, TournamentEntry,
                                     TournamentRecord, TournamentStatus)
from pbem.mail.headers import new_token, reply_address

log = logging.getLogger(__name__)

CODE_LENGTH = 6


def open_tournament(talk: Conversation, command: commands.TournamentNew) -> None:
    """``tournament new …``: a tournament taking entries, with the organiser entered."""
    assert talk.sender.id is not None
    record = TournamentRecord(
        code=_new_code(talk.session), name=command.name, size=command.size, match_length=command.length,
        rated=command.rated, organiser_id=talk.sender.id,
        move_clock=None if command.move_clock is None else command.move_clock.total_seconds(),
        time_bank=None if command.time_bank is None else command.time_bank.total_seconds())
    talk.session.add(record)
    talk.session.flush()
    assert record.id is not None
    talk.session.add(TournamentEntry(tournament_id=record.id, player_id=talk.sender.id, joined_at=talk.now))
    log.info("tournament %s (%s) opened by %s", record.code, record.name, talk.sender.address)
    _say(talk, Notice.TOURNAMENT_OPENED, record, size=record.size, length=record.match_length)


def act(talk: Conversation, command: commands.TournamentAction) -> None:
    """``tournament join|leave|start|withdraw CODE``."""
    record = _locked(talk.session, command.code)
    if record is None:
        talk.say_template(Notice.TOURNAMENT_UNKNOWN, code=command.code)
        return
    entered = _entry(talk.session, record, talk.sender) is not None
    if record.status == TournamentStatus.FINISHED and command.action != "start":
        _say(talk, Notice.TOURNAMENT_OVER_ALREADY, record)
    elif command.action == "withdraw" and record.status == TournamentStatus.RUNNING and entered:
        _withdraw(talk, record)
    elif command.action == "withdraw" and record.status == TournamentStatus.RUNNING:
        _say(talk, Notice.TOURNAMENT_NOT_IN, record)
    elif command.action in ("join", "leave", "withdraw") and record.status != TournamentStatus.OPEN:
        _say(talk, Notice.TOURNAMENT_NOT_OPEN, record)
    elif command.action == "join":
        _join(talk, record, entered)
    elif command.action in ("leave", "withdraw"):
        _leave(talk, record, entered)
    else:
        _start_by_organiser(talk, record)


def show(talk: Conversation, command: commands.TournamentShow) -> None:
    """``tournament CODE``: the bracket, or before the start who has entered."""
    record = talk.session.exec(select(TournamentRecord).where(TournamentRecord.code == command.code)).first()
    if record is None:
        talk.say_template(Notice.TOURNAMENT_UNKNOWN, code=command.code)
        return
    bracket = None if record.bracket is None else Bracket.from_dict(record.bracket)
    players = players_of(talk.session, record)
    _say(talk, Notice.TOURNAMENT_BRACKET, record, status=str(record.status),
         entrants=[player.display_name for player in players.values()], size=record.size,
         length=record.match_length,
         bracket=_rounds_text(bracket, players, talk.language(talk.sender)) if bracket else None,
         rounds=bracket.rounds if bracket else 0)


def invite(talk: Conversation, command: commands.TournamentInvite) -> None:
    """``tournament invite CODE ADDRESS…``: each address is asked to join, under the rules of an
    invitation (a person's address, never one that said ``stop`` or keeps bouncing, at most
    ``[limits] invitations_received_per_day`` a day); answering the mail with ``yes`` joins."""
    record = _locked(talk.session, command.code)
    if record is None:
        talk.say_template(Notice.TOURNAMENT_UNKNOWN, code=command.code)
        return
    if record.organiser_id != talk.sender.id:
        _say(talk, Notice.TOURNAMENT_NOT_ORGANISER, record)
        return
    if record.status != TournamentStatus.OPEN:
        _say(talk, Notice.TOURNAMENT_NOT_OPEN, record)
        return
    invited: list[str] = []
    limit, sent = talk.config.limits.invitations_per_day, invitations.invitations_sent_in_a_day(talk, talk.sender)
    for address in command.addresses:
        if limit and sent + len(invited) >= limit:
            talk.say_template(Notice.INVITATION_LIMIT, limit=limit, address=address)
            continue
        invitee = _invitee(talk, address)
        if invitee is None:
            continue
        assert invitee.id is not None
        token = new_token()
        talk.session.add(AccountConfirmation(token=token, player_id=invitee.id, created_at=talk.now,
                                             commands=[f"tournament join {record.code}"], invited_by=talk.sender.id))
        talk.session.flush()  # the same address again in the line counts it
        talk.tell(invitee, Notice.TOURNAMENT_INVITATION, reply_token=token, organiser=talk.sender.display_name,
                  organiser_address=talk.sender.address,  # a name alone proves nothing
                  name=record.name, code=record.code, size=record.size, length=record.match_length,
                  join_link=f"mailto:{reply_address(talk.config.service.address, token)}?subject=yes")
        invited.append(address)
    if invited:
        _say(talk, Notice.TOURNAMENT_INVITED, record, addresses=invited)


def _invitee(talk: Conversation, address: str) -> Player | None:
    """The player an address to invite belongs to, or None (and the organiser told why)."""
    config = talk.config
    if address == talk.sender.address:
        talk.say_template(Notice.CANNOT_INVITE_YOURSELF)
        return None
    if invitations.is_service_address(address, config.service.address):
        talk.say_template(Notice.CANNOT_INVITE_SERVICE)
        return None
    if not is_person_address(address):
        talk.say_template(Notice.INVITEE_NOT_A_PERSON, address=address[:80])
        return None
    invitee = invitations.player_for(talk.session, address)
    limit = config.limits.invitations_received_per_day
    if limit and invitations.invitations_received_in_a_day(talk, invitee) >= limit:
        talk.say_template(Notice.INVITEE_LIMIT, limit=limit, address=address)
        return None
    if invitee.refuses_invitations:
        talk.say_template(Notice.INVITEE_REFUSES, address=address)
        return None
    if undeliverable(invitee, config):
        talk.say_template(Notice.INVITEE_UNDELIVERABLE, address=address)
        return None
    return invitee


def match_finished(talk: Conversation, table: Table) -> None:
    """A match of a tournament has ended: its winner goes through, the pairings that are now
    complete start, and the end of a round (and of the tournament) is told to every player.
    Safe to run again for the same match (a later mail about it): nothing happens twice."""
    record = talk.session.get(TournamentRecord, table.record.tournament_id, with_for_update=True,
                              populate_existing=True)
    if record is None or record.bracket is None or table.record.tournament_round is None \
            or table.record.tournament_index is None:
        return
    winner_seat = scoring.winner(table.score)
    if winner_seat is None:
        return
    winner = table.players[winner_seat].id
    assert winner is not None
    bracket = brackets.record_result(Bracket.from_dict(record.bracket), table.record.tournament_round,
                                     table.record.tournament_index, winner)
    _advance(talk, record, bracket)


def _join(talk: Conversation, record: TournamentRecord, entered: bool) -> None:
    assert record.id is not None and talk.sender.id is not None
    if entered:
        _say(talk, Notice.TOURNAMENT_ALREADY_IN, record)
        return
    talk.session.add(TournamentEntry(tournament_id=record.id, player_id=talk.sender.id, joined_at=talk.now))
    talk.session.flush()
    count = len(players_of(talk.session, record))
    if count < record.size:
        _say(talk, Notice.TOURNAMENT_JOINED, record, count=count, size=record.size)
    else:
        _start(talk, record, filled_by=talk.sender)


def _leave(talk: Conversation, record: TournamentRecord, entered: bool) -> None:
    entry = _entry(talk.session, record, talk.sender)
    if not entered or entry is None:
        _say(talk, Notice.TOURNAMENT_NOT_IN, record)
        return
    talk.session.delete(entry)
    _say(talk, Notice.TOURNAMENT_LEFT, record)


def _start_by_organiser(talk: Conversation, record: TournamentRecord) -> None:
    if record.organiser_id != talk.sender.id:
        _say(talk, Notice.TOURNAMENT_NOT_ORGANISER, record)
    elif record.status != TournamentStatus.OPEN:
        _say(talk, Notice.TOURNAMENT_NOT_OPEN, record)
    elif (count := len(players_of(talk.session, record))) < brackets.MIN_ENTRANTS:
        _say(talk, Notice.TOURNAMENT_TOO_FEW, record, count=count)
    else:
        _start(talk, record)


def _start(talk: Conversation, record: TournamentRecord, filled_by: Player | None = None) -> None:
    """Seed the entrants by match rating (ties: who joined first), start the first pairings,
    and tell each player waiting on a bye that the tournament has begun.

    ``filled_by``, the sender whose join filled it, is told so in the letter of their first
    match (a full field has no byes), never in a letter after it."""
    entries = talk.session.exec(select(TournamentEntry, Player).join(Player, col(Player.id) == TournamentEntry.player_id)
                                .where(TournamentEntry.tournament_id == record.id)).all()
    ranked = sorted(entries, key=lambda pair: (-pair[1].rating_match, pair[0].joined_at, pair[1].id or 0))
    bracket = brackets.new_bracket([player.id for _, player in ranked if player.id is not None])
    record.status, record.started_at = TournamentStatus.RUNNING, talk.now
    log.info("tournament %s: started with %d players", record.code, len(ranked))
    playing = {player for pairing in brackets.ready(bracket) for player in pairing.players}
    for _, player in ranked:
        if player.id not in playing:
            talk.tell(player, Notice.TOURNAMENT_STARTED, name=record.name, code=record.code, count=len(ranked),
                      rounds=bracket.rounds, waiting=True)
            if (link := page_link(talk, record, player)) is not None:
                talk.tell(player, Notice.TOURNAMENT_PAGE, link=link)
    _advance(talk, record, bracket)
    if filled_by is not None:
        first = next(news.table for news in talk.news.values() if news.opened
                     and news.table.record.tournament_id == record.id and news.table.seat_of(filled_by) is not None)
        talk.say_template(Notice.TOURNAMENT_JOINED_LAST, first, name=record.name, code=record.code, count=len(ranked),
                          rounds=bracket.rounds)
        if (link := page_link(talk, record, filled_by)) is not None:
            talk.say_template(Notice.TOURNAMENT_PAGE, first, link=link)


def _withdraw(talk: Conversation, record: TournamentRecord) -> None:
    """Leave a running tournament: the match being played is resigned (lost), the rest by walkover."""
    assert record.bracket is not None and talk.sender.id is not None
    bracket = Bracket.from_dict(record.bracket)
    if talk.sender.id in bracket.withdrawn or talk.sender.id not in bracket.entrants:
        talk.say_template(Notice.TOURNAMENT_NOT_IN, name=record.name, code=record.code)
        return
    if brackets.knocked_out(bracket, talk.sender.id):
        talk.say_template(Notice.TOURNAMENT_OUT_ALREADY, name=record.name, code=record.code)
        return
    bracket = brackets.withdraw(bracket, talk.sender.id)
    talk.say_template(Notice.TOURNAMENT_WITHDRAWN, name=record.name, code=record.code)
    log.info("tournament %s: %s withdrew", record.code, talk.sender.address)
    for match in talk.session.exec(select(MatchRecord).where(MatchRecord.tournament_id == record.id,
                                                             MatchRecord.status == MatchStatus.RUNNING)).all():
        table = Table.load(talk.session, match)
        seat = table.seat_of(talk.sender)
        if seat is not None and table.game is not None and table.game.phase is not game_rules.Phase.OVER:
            talk.event(table, EventKind.RESIGNED, seat)
            table.game = game_rules.resign(table.game, seat)
            advance(talk, table)  # the match is lost: its result comes back through match_finished
    _advance(talk, record, bracket)


def _advance(talk: Conversation, record: TournamentRecord, bracket: Bracket) -> None:
    """Store ``bracket``, start each pairing that is ready and not started, and tell every
    player of each round that is newly over (and of the end)."""
    started = {(round, index) for round, index in talk.session.exec(
        select(MatchRecord.tournament_round, MatchRecord.tournament_index)
        .where(MatchRecord.tournament_id == record.id)).all()}
    for pairing in brackets.ready(bracket):
        if (pairing.round, pairing.index) not in started:
            _start_pairing(talk, record, bracket, pairing)
    record.bracket = bracket.to_dict()
    players = players_of(talk.session, record)
    while record.rounds_told < bracket.rounds and brackets.round_over(bracket, record.rounds_told):
        _tell_round(talk, record, bracket, record.rounds_told, players)
        record.rounds_told += 1
    champion = brackets.champion(bracket)
    if champion is not None and record.status != TournamentStatus.FINISHED:
        record.status, record.finished_at = TournamentStatus.FINISHED, talk.now
        log.info("tournament %s: %s is the champion", record.code, players[champion].address)
    talk.session.add(record)


def _start_pairing(talk: Conversation, record: TournamentRecord, bracket: Bracket,
                   pairing: brackets.Pairing) -> None:
    """The pairing's match, started at once: joining the tournament was the consent."""
    players = tuple(talk.session.get(Player, player) for player in pairing.players)
    assert players[0] is not None and players[1] is not None
    options = commands.GameOptions(
        kind=scoring.Format.MATCH, length=record.match_length, rated=record.rated,
        move_clock=None if record.move_clock is None else timedelta(seconds=record.move_clock),
        time_bank=None if record.time_bank is None else timedelta(seconds=record.time_bank))
    table = invitations.open_match(talk, (players[0], players[1]), options, announced=EventKind.TOURNAMENT_MATCH,
                                   name=record.name, code=record.code, round=pairing.round + 1, rounds=bracket.rounds)
    table.record.tournament_id = record.id
    table.record.tournament_round, table.record.tournament_index = pairing.round, pairing.index
    table.record.status = MatchStatus.RUNNING
    talk.news_of(table).opened = True  # its letters come after those of the round that ended
    log.info("tournament %s: round %d, match %d started (match %s)", record.code, pairing.round + 1,
             pairing.index + 1, table.id)
    start_game(talk, table)
    advance(talk, table)


def _tell_round(talk: Conversation, record: TournamentRecord, bracket: Bracket, round: int,
                players: dict[int, Player]) -> None:
    """The end of ``round`` (or of the tournament), told to every player in their language,
    with what each plays next and whether it has begun (the pairings that are ready have been
    started by now), and the bracket, which lists the results once."""
    champion = brackets.champion(bracket)
    for player in players.values():
        rounds_text = _rounds_text(bracket, players, talk.language(player))
        link = page_link(talk, record, player)
        if champion is not None and round == bracket.rounds - 1:
            final = rounds_text[-1][0]
            talk.tell(player, Notice.TOURNAMENT_OVER, name=record.name, code=record.code,
                      champion=players[champion].display_name, final=final, bracket=rounds_text, rounds=bracket.rounds,
                      yours=player.id == champion)
        else:
            assert player.id is not None
            coming = brackets.next_match(bracket, player.id)
            talk.tell(player, Notice.TOURNAMENT_ROUND_OVER, name=record.name, code=record.code, number=round + 1,
                      rounds=bracket.rounds, bracket=rounds_text,
                      next=None if coming is None else {"round": coming[0] + 1, "opponent": None if coming[1] is None
                                                        else players[coming[1]].display_name})
        if link is not None:
            talk.tell(player, Notice.TOURNAMENT_PAGE, link=link)


def _rounds_text(bracket: Bracket, players: dict[int, Player], language: str) -> list[list[str]]:
    """The bracket as text, in ``language`` (the words for a bye and a withdrawal)."""
    names = {player_id: player.display_name for player_id, player in players.items()}
    german = language == "de"
    return brackets.bracket_rounds(bracket, names, bye="Freilos" if german else "bye",
                                   withdrawn="zurückgezogen" if german else "withdrawn")


_WITH_PAGE = (Notice.TOURNAMENT_OPENED, Notice.TOURNAMENT_JOINED, Notice.TOURNAMENT_BRACKET,
              Notice.TOURNAMENT_STARTED, Notice.TOURNAMENT_ROUND_OVER, Notice.TOURNAMENT_OVER)
"""The texts followed by the link to the recipient's own page of the tournament's bracket."""


def _say(talk: Conversation, notice: Notice, record: TournamentRecord, **more: Any) -> None:
    """Tell the sender one of the tournament texts, which all name the tournament and its code."""
    talk.say_template(notice, name=record.name, code=record.code, **more)
    if notice in _WITH_PAGE and (link := page_link(talk, record, talk.sender)) is not None:
        talk.say_template(Notice.TOURNAMENT_PAGE, link=link)


def page_link(talk: Conversation, record: TournamentRecord, player: Player) -> str | None:
    """``player``'s own link to the tournament's page (their matches link to their games)."""
    if talk.config.web is None:
        return None
    return talk.config.web.tournament_link(record.code, page_token_of(talk.session, player))


def players_of(session: Session, record: TournamentRecord) -> dict[int, Player]:
    """The tournament's players by id, in the order they joined."""
    rows = session.exec(select(Player).join(TournamentEntry, col(TournamentEntry.player_id) == Player.id)
                        .where(TournamentEntry.tournament_id == record.id)
                        .order_by(col(TournamentEntry.joined_at), col(Player.id))).all()
    return {player.id: player for player in rows if player.id is not None}


def _entry(session: Session, record: TournamentRecord, player: Player) -> TournamentEntry | None:
    return session.get(TournamentEntry, (record.id, player.id))


def _locked(session: Session, code: str) -> TournamentRecord | None:
    """The tournament, locked until the transaction ends (as a match is)."""
    return session.exec(select(TournamentRecord).where(TournamentRecord.code == code)
                        .with_for_update().execution_options(populate_existing=True)).first()


def _new_code(session: Session) -> str:
    """A short code nobody else's tournament has."""
    while True:
        code = base64.b32encode(secrets.token_bytes(5)).decode("ascii").lower()[:CODE_LENGTH]
        if session.exec(select(TournamentRecord.id).where(TournamentRecord.code == code)).first() is None:
            return code

