"""Ladders by mail: ``ladder new``, ``ladder join``, ``ladder challenge``, ``ladder leave`` and
``ladder NAME`` (SPEC: docs/players.md, "Ladders").

A challenge is an invitation (:func:`pbem.service.people.invitations.challenge`): a match row with the
ladder's id, the same proof, rate limits and ``stop`` as any invitation, accepted with the usual
``accept``.  What its end does to the standing is :mod:`pbem.service.games.ladder_standing`'s.
"""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import col, select

from pbem import commands
from pbem.mail.headers import new_token
from pbem.render.views import EventKind, Notice
from pbem.rules import ladder as ladder_rules
from pbem.rules.scoring import Format
from pbem.service.people import invitations
from pbem.service.table.conversation import Conversation
from pbem.service.table.letters import shown_name
from pbem.service.table.letters import undeliverable
from pbem.service.games.ladder_standing import (
    HowDecided, apply_result, ladder_link, ladder_named, locked_ladder, open_challenges, standing_event_data, standing_names,
)
from pbem.store.game_records import Ladder, Player, Seat

def show(talk: Conversation, command: commands.LadderShow) -> None:
    """``ladder NAME``: its standing; ``ladder`` alone: the sender's ladders."""
    if command.name is None:
        _list(talk)
    else:
        _show(talk, command.name)


def new(talk: Conversation, command: commands.LadderNew) -> None:
    _new(talk, command)


def join(talk: Conversation, command: commands.LadderJoin) -> None:
    _join(talk, command.name)


def challenge(talk: Conversation, command: commands.LadderChallenge) -> None:
    _challenge(talk, command)


def leave(talk: Conversation, command: commands.LadderLeave) -> None:
    _leave(talk, command.name)


def _me(talk: Conversation) -> int:
    assert talk.sender.id is not None
    return talk.sender.id


def _show(talk: Conversation, name: str) -> None:
    ladder = ladder_named(talk.session, name)
    if ladder is None:
        talk.say_template(Notice.LADDER_UNKNOWN, name=name)
        return
    _say_standing(talk, ladder, Notice.LADDER_STANDING)


def _say_standing(talk: Conversation, ladder: Ladder, notice: Notice) -> None:
    names = standing_names(talk.session, ladder, talk.language(talk.sender))
    talk.say_template(notice, name=ladder.name, standing=names, mine=ladder_rules.place(tuple(ladder.standing), _me(talk)),
                      match_length=ladder.match_length, reach=ladder.reach, days=ladder.answer_days,
                      running=len(open_challenges(talk.session, ladder)), link=ladder_link(ladder, talk.config))


def _list(talk: Conversation) -> None:
    ladders = talk.session.exec(select(Ladder).order_by(col(Ladder.name))).all()
    rows = [(ladder.name, len(ladder.standing), ladder_rules.place(tuple(ladder.standing), _me(talk)))
            for ladder in ladders]
    talk.say_template(Notice.LADDER_LIST, ladders=rows)


def _new(talk: Conversation, command: commands.LadderNew) -> None:
    if ladder_named(talk.session, command.name) is not None:
        talk.say_template(Notice.LADDER_EXISTS, name=command.name)
        return
    _create(talk, command)
    _join(talk, command.name)


def _create(talk: Conversation, terms: commands.LadderNew) -> Ladder:
    ladder = Ladder(name=terms.name, code=new_token(), match_length=terms.match_length, reach=terms.reach,
                    answer_days=terms.answer_days, created_by=_me(talk), created_at=talk.now)
    talk.session.add(ladder)
    talk.session.flush()
    return ladder


def _join(talk: Conversation, name: str) -> None:
    ladder = ladder_named(talk.session, name, lock=True) or _create(talk, commands.LadderNew(name))
    try:
        ladder.standing = list(ladder_rules.join(tuple(ladder.standing), _me(talk)))
    except ladder_rules.LadderError:
        _say_standing(talk, ladder, Notice.LADDER_ALREADY_ON)
        return
    talk.session.add(ladder)
    _say_standing(talk, ladder, Notice.LADDER_JOINED)


def _leave(talk: Conversation, name: str) -> None:
    ladder = ladder_named(talk.session, name, lock=True)
    if ladder is None:
        talk.say_template(Notice.LADDER_UNKNOWN, name=name)
        return
    try:
        ladder.standing = list(ladder_rules.leave(tuple(ladder.standing), _me(talk)))
    except ladder_rules.LadderError:
        talk.say_template(Notice.LADDER_NOT_ON, name=name)
        return
    talk.session.add(ladder)
    talk.say_template(Notice.LADDER_LEFT, name=name)


def _ladders_of(talk: Conversation) -> list[Ladder]:
    return [ladder for ladder in talk.session.exec(select(Ladder).order_by(col(Ladder.name))).all()
            if _me(talk) in ladder.standing]


def _challenge(talk: Conversation, command: commands.LadderChallenge) -> None:
    """Challenge someone at most ``reach`` places above: an invitation to a match of the
    ladder's length, on the ladder's row lock so that two challenges of one player at once
    cannot both pass the one-open-challenge check."""
    name = command.name
    if name is None:
        mine = _ladders_of(talk)
        if len(mine) != 1:
            talk.say_template(Notice.LADDER_WHICH, ladders=[ladder.name for ladder in mine])
            return
        name = mine[0].name
    found = ladder_named(talk.session, name)
    ladder = None if found is None or found.id is None else locked_ladder(talk.session, found.id)
    if ladder is None:
        talk.say_template(Notice.LADDER_UNKNOWN, name=name)
        return
    standing = tuple(ladder.standing)
    if _me(talk) not in standing:
        talk.say_template(Notice.LADDER_NOT_ON, name=name)
        return
    defender = _opponent(talk, standing, command.opponent)
    if defender is None or defender.id not in standing:
        talk.say_template(Notice.LADDER_NO_SUCH_PLAYER, name=name, opponent=command.opponent[:80])
        return
    assert defender.id is not None
    if not ladder_rules.can_challenge(standing, _me(talk), defender.id, ladder.reach):
        talk.say_template(Notice.LADDER_OUT_OF_REACH, name=name, reach=ladder.reach,
                          mine=ladder_rules.place(standing, _me(talk)), theirs=ladder_rules.place(standing, defender.id))
        return
    busy = _in_open_challenge(talk, ladder, (_me(talk), defender.id))
    if busy is not None:
        talk.say_template(Notice.LADDER_BUSY, name=name, me=busy == _me(talk))
        return
    if defender.refuses_invitations or undeliverable(defender, talk.config):
        # Nobody escapes challenges by refusing invitations: it counts as a declined challenge.
        after = apply_result(talk, ladder, _me(talk), defender.id, challenger_won=True, how=HowDecided.REFUSED)
        talk.say_template(Notice.LADDER_WON_UNCHALLENGEABLE, name=name, opponent=shown_name(defender, talk.language(talk.sender)),
                          mine=ladder_rules.place(after, _me(talk)), link=ladder_link(ladder, talk.config))
        return
    options = commands.GameOptions(kind=Format.MATCH, length=ladder.match_length)
    shown = None if "@" in command.opponent else shown_name(defender, talk.language(talk.sender))
    table = invitations.challenge(talk, defender.address, options, ladder, shown)
    if table is not None:
        talk.event(table, EventKind.LADDER_CHALLENGED, 0, places=[ladder_rules.place(standing, _me(talk)),
                                                                   ladder_rules.place(standing, defender.id)],
                   days=ladder.answer_days, deadline=(talk.now + timedelta(days=ladder.answer_days)).date().isoformat(),
                   **standing_event_data(talk.session, ladder, talk.config))


def _opponent(talk: Conversation, standing: ladder_rules.Standing, opponent: str) -> Player | None:
    """The player a challenge names: by place number, or by mail address."""
    if opponent.isdigit():
        place = int(opponent)
        return talk.session.get(Player, standing[place - 1]) if place <= len(standing) else None
    return talk.session.exec(select(Player).where(Player.address == opponent)).first()


def _in_open_challenge(talk: Conversation, ladder: Ladder, players: tuple[int, int]) -> int | None:
    """The first of ``players`` already in an open challenge of the ladder, or None."""
    for record in open_challenges(talk.session, ladder):
        seated = talk.session.exec(select(Seat.player_id).where(Seat.match_id == record.id)).all()
        for player_id in players:
            if player_id in seated:
                return player_id
    return None
