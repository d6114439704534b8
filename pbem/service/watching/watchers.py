"""Friends who watch a game (issue 22, item 4): ``watchers on``/``off``, ``watch CODE``, the
read-only mail a watcher gets after each move, and what the watch page ``/w/CODE`` shows.

Watching is allowed while both players have it on.  A watcher is known by the match's watch code
only, a secret of its own: nothing a watcher is sent holds a game token, a player's page token,
reply address or mail address, a note between the players or their clocks, and their mails carry
no token in Reply-To or Message-ID, so a watcher's reply is a new mail that names no game and
cannot act in one.
"""

from __future__ import annotations

import base64
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, func, select

from pbem import commands
from pbem.config import Config
from pbem.mail.composing import InlineImage, Letter, compose, new_content_id
from pbem.render.board_image import board_alt, render_board_png
from pbem.render.templating import environment, render
from pbem.render.text_board import render_text_board
from pbem.render.views import EventKind, MoveLine, Notice, WatchView
from pbem.rules import game as game_rules
from pbem.rules.notation import Numbering
from pbem.rules.scoring import MatchRules
from pbem.service.table.assistant import is_assistant
from pbem.service.table.conversation import MAX_WAITING_NEWS, Conversation
from pbem.service.table.letters import game_view, seat_name, tells_move
from pbem.service.table.letters import undeliverable
from pbem.service.table.news import Event
from pbem.service.table.tables import Table, locked_match
from pbem.store.game_records import MatchRecord, MatchStatus, Player, Seat
from pbem.store.mail_records import queue_mail
from pbem.store.watching import MatchWatch, Watcher

log = logging.getLogger(__name__)

MAX_WATCHERS_PER_GAME = 20
"""Watchers of one match, at most: a game is a conversation of two, not a broadcast."""
MAX_GAMES_WATCHED = 10
"""Running matches one address may watch at a time."""
_SHOWN = frozenset((
    EventKind.ACCEPTED, EventKind.GAME_STARTED, EventKind.ROLLED, EventKind.CANNOT_MOVE, EventKind.MOVED,
    EventKind.AUTOMOVED, EventKind.DOUBLED, EventKind.TOOK, EventKind.DROPPED, EventKind.BEAVERED,
    EventKind.RESIGNED, EventKind.RESIGN_OFFERED, EventKind.RESIGN_REJECTED, EventKind.DRAW_OFFERED,
    EventKind.DRAW_AGREED, EventKind.DRAW_DECLINED, EventKind.GAME_DRAWN, EventKind.GAME_WON, EventKind.TIMED_OUT,
    EventKind.MATCH_OVER,
))
"""What a watcher is told: the play, not the players' own matters (ratings, credits, reviews,
dice seeds, the invitation's terms)."""
_TOLD_WITH_THE_MOVE = frozenset((EventKind.ROLLED,))
"""A roll alone brings a watcher no mail: it is told with the move played with it."""
_ENDS_A_GAME = frozenset((EventKind.GAME_WON, EventKind.GAME_DRAWN, EventKind.MATCH_OVER))
_TOLD_AT_THE_END = frozenset((*_ENDS_A_GAME, EventKind.DROPPED, EventKind.RESIGNED, EventKind.TIMED_OUT,
                              EventKind.DRAW_AGREED, EventKind.GAME_STARTED))
"""What the mail at the end of a game tells a watcher who does not watch every move: how it
ended, and the next game's start."""
_WATCHING = (MatchStatus.INVITED.value, MatchStatus.RUNNING.value)


def new_code(session: Session) -> str:
    """A fresh watch code: 50 random bits as ten characters of lower-case base32."""
    while True:
        code = base64.b32encode(secrets.token_bytes(7)).decode("ascii").lower()[:10]
        if session.exec(select(MatchWatch.match_id).where(MatchWatch.code == code)).first() is None:
            return code


def page_link(config: Config, code: str) -> str | None:
    """The watch page of a match (None: the web board is off)."""
    return None if config.web is None else f"{config.web.public_url}/w/{code}"


def set_watchers(talk: Conversation, table: Table | None, seat: int | None, on: bool) -> None:
    """``watchers on``/``off`` in a reply to a mail of ``table``: the sender's seat allows watching
    or no longer does.  Off drops every watcher at once (they must write ``watch CODE`` again once
    both allow it again); on answers with the code and the line a friend writes."""
    if table is None or seat is None:
        talk.say_template(Notice.WATCHERS_NEED_GAME)
        return
    session = talk.session
    settings = session.get(MatchWatch, table.id)
    if settings is None:
        if not on:
            talk.say_template(Notice.WATCHERS_SET, table, on=False, both=False, code=None, link=None, dropped=0,
                              opponent=seat_name(table, 1 - seat, talk.language(talk.sender)))
            return
        settings = MatchWatch(match_id=table.id, code=new_code(session))
        table.unwatched = False
    was_open, changed = settings.allowed(), settings.allows(seat) != on
    settings.allow(seat, on)
    assistant_plays = is_assistant(table.players[1 - seat])
    if assistant_plays:
        settings.allow(1 - seat, True)  # the Assistant has nothing to hide: the player decides alone
    dropped = 0
    if not on:
        for watcher in session.exec(select(Watcher).where(Watcher.match_id == table.id)).all():
            session.delete(watcher)
            dropped += 1
        settings.waiting = []
    session.add(settings)
    if changed and not assistant_plays:
        _tell_opponent(table, seat, {"on": on, "both": settings.allowed(), "code": settings.code, "was_open": was_open})
    _drop_told(table, seat)
    talk.say_template(Notice.WATCHERS_SET, table, on=on, both=settings.allowed(), code=settings.code,
                      link=page_link(talk.config, settings.code), dropped=dropped,
                      opponent=seat_name(table, 1 - seat, talk.language(talk.sender)))


def _drop_told(table: Table, seat: int) -> None:
    """The answer to ``watchers on``/``off`` says where both players stand now: news held for this
    seat that the opponent allowed watching or stopped it would contradict it in the same mail."""
    held = table.seats[seat]
    held.news = [document for document in held.news
                 if Event.from_dict(document).kind is not EventKind.WATCHERS_ALLOWED]


def _tell_opponent(table: Table, seat: int, data: dict[str, Any]) -> None:
    """The opponent hears of the change in their next mail (none is sent for it alone)."""
    opponent = table.seats[1 - seat]
    event = Event(EventKind.WATCHERS_ALLOWED, seat, data)
    opponent.news = [*opponent.news, event.to_dict()][-MAX_WAITING_NEWS:]


def watch(talk: Conversation, command: commands.Watch) -> None:
    """``watch CODE`` (``on``) or ``unwatch CODE``: the sender watches the match, or no longer.

    An unknown code and a match whose players do not both allow watching get the same answer,
    so that codes cannot be probed; stopping is answered alike whether or not the sender watched.
    """
    session, sender = talk.session, talk.sender
    settings = session.exec(select(MatchWatch).where(MatchWatch.code == command.code)).first()
    record = None if settings is None else locked_match(session, settings.match_id)
    if not command.on:
        if settings is not None:
            held = session.get(Watcher, (settings.match_id, sender.id))
            if held is not None:
                session.delete(held)
        talk.say_template(Notice.WATCH_STOPPED, code=command.code)
        return
    if settings is None or record is None or not settings.allowed() or record.status not in _WATCHING:
        talk.say_template(Notice.WATCH_NOT_ALLOWED, code=command.code)
        return
    table = Table.load(session, record)
    language = talk.language(sender)
    names = [seat_name(table, seat, language) for seat in (0, 1)]
    if table.seat_of(sender) is not None:
        talk.say_template(Notice.WATCH_OWN_GAME)
        return
    if session.get(Watcher, (table.id, sender.id)) is None:
        watching = session.exec(select(func.count()).select_from(Watcher).where(Watcher.match_id == table.id)).one()
        if watching >= MAX_WATCHERS_PER_GAME:
            talk.say_template(Notice.WATCH_LIMIT_GAME, limit=MAX_WATCHERS_PER_GAME, names=names)
            return
        watched = session.exec(
            select(func.count()).select_from(Watcher).join(MatchRecord, col(MatchRecord.id) == Watcher.match_id)
            .where(Watcher.player_id == sender.id, col(MatchRecord.status).in_(_WATCHING))).one()
        if watched >= MAX_GAMES_WATCHED:
            talk.say_template(Notice.WATCH_LIMIT_ADDRESS, limit=MAX_GAMES_WATCHED)
            return
        assert sender.id is not None
        session.add(Watcher(match_id=table.id, player_id=sender.id, since=talk.now, every_move=command.every_move))
    else:
        watcher = session.get(Watcher, (table.id, sender.id))
        assert watcher is not None
        watcher.every_move = command.every_move  # watch CODE again: the choice of mails changes
        session.add(watcher)
    talk.say_template(Notice.WATCH_STARTED, names=names, code=command.code, link=page_link(talk.config, command.code),
                      every_move=command.every_move)


def games_replied_to_as_watcher(talk: Conversation, in_reply_to: str | None,
                                references: Sequence[str]) -> list[tuple[str, str]]:
    """The matches ("Anna – Ben") the sender watches, with their watch codes (to stop watching
    them), when their mail that names no game is a watcher's: it answers one of their watch mails,
    or they play no running game of their own that it could be meant for.  Empty when the sender
    watches nothing."""
    session, sender = talk.session, talk.sender
    watching = session.exec(select(Watcher).where(Watcher.player_id == sender.id)).all()
    if not watching:
        return []
    answered = {in_reply_to, *references} - {None}
    replied = [watcher for watcher in watching if watcher.last_message_id in answered]
    if not replied:
        plays = session.exec(select(func.count()).select_from(Seat).join(MatchRecord, col(MatchRecord.id) == Seat.match_id)
                             .where(Seat.player_id == sender.id, col(MatchRecord.status).in_(_WATCHING))).one()
        if plays:
            return []
        replied = list(watching)
    language = talk.language(sender)
    games = []
    for watcher in replied:
        record = session.get(MatchRecord, watcher.match_id)
        settings = session.get(MatchWatch, watcher.match_id)
        if record is not None and settings is not None:
            table = Table.load(session, record)
            games.append((" – ".join(seat_name(table, seat, language) for seat in (0, 1)), settings.code))
    return games


def send_watch_letters(talk: Conversation) -> None:
    """Queue a read-only mail to each watcher of every match this conversation moved on: to one
    who watches every move once something a watcher is told happened in it (a roll alone waits for
    its move); to the others once a game ends, with its result."""
    config = talk.config
    for news in talk.news.values():
        table = news.table
        shown = [event for event in news.events if event.kind in _SHOWN]
        if not shown or table.unwatched:
            continue
        with talk.session.no_autoflush:  # the mail's changes are written at its end, in one go
            settings = talk.session.get(MatchWatch, table.id)
        if settings is None or not settings.allowed():
            continue
        watchers = talk.session.exec(select(Watcher).where(Watcher.match_id == table.id)).all()
        if not watchers:
            continue
        if all(event.kind in _TOLD_WITH_THE_MOVE for event in shown):
            settings.waiting = [*settings.waiting, *(event.to_dict() for event in shown)]
            talk.session.add(settings)
            continue
        events = [*(Event.from_dict(document) for document in settings.waiting), *shown]
        settings.waiting = []
        talk.session.add(settings)
        game_over = [event for event in shown if event.kind in _TOLD_AT_THE_END]
        for watcher in watchers:
            if not (watcher.every_move or any(event.kind in _ENDS_A_GAME for event in game_over)):
                continue
            player = talk.session.get(Player, watcher.player_id)
            if player is None or undeliverable(player, config):
                continue
            letter = watch_letter(table, settings.code, player, watcher, events if watcher.every_move else game_over,
                                  config, talk.now)
            message = compose(letter, config.service.address, config.service.name, talk.now)
            queue_mail(talk.session, message, table.id)
            watcher.last_message_id = str(message["Message-ID"])
            talk.session.add(watcher)


def watch_letter(table: Table, code: str, player: Player, watcher: Watcher, events: list[Event], config: Config,
                 now: datetime) -> Letter:
    """The mail a watcher gets: what happened, the board (picture and text), the score and the
    position's IDs; no token anywhere, so a reply to it names no game."""
    language = player.language or config.service.language
    view = watch_view(table, code, config, language, now, events)
    context = view.template_context()
    won = next(((event.seat, int(event.data.get("kind", 1))) for event in events
                if event.kind is EventKind.GAME_WON and event.seat is not None), None)
    subject = str(_macros(language, context).subject(won)).strip()
    images: tuple[InlineImage, ...] = ()
    board_cid = alt = None
    if view.board_view is not None:
        alt = board_alt(view.board_view, language)
        board = InlineImage(new_content_id("board", config.service.address), "board.png",
                            render_board_png(view.board_view, language))
        board_cid, images = board.content_id, (board,)
    earlier = watcher.last_message_id
    return Letter(
        to_address=player.address,
        to_name=player.name,
        subject=subject,
        text=render("watch.txt", language, every_move=watcher.every_move, **context),
        language=language,
        html=render("watch.html", language, subject=subject, board_cid=board_cid, board_alt=alt,
                    every_move=watcher.every_move, **context),
        images=images,
        in_reply_to=earlier,
        references=() if earlier is None else (earlier,),
    )


def watch_view(table: Table, code: str, config: Config, language: str, now: datetime,
               events: Sequence[Event] = (), moves: tuple[MoveLine, ...] = ()) -> WatchView:
    """What a watcher sees of ``table``: the board from the inviter's side, in the own numbering,
    with both players named (never "you")."""
    names = (seat_name(table, 0, language), seat_name(table, 1, language))
    game = table.game
    seen = game_view(table, 0, config, now, move_told=tells_move(1, list(events)))
    board_view = None if seen.board_view is None else replace(
        seen.board_view, numbering=Numbering.OWN, viewer_name=names[0], opponent_name=names[1], spectator=True)
    running = table.status is MatchStatus.RUNNING and game is not None and game.phase is not game_rules.Phase.OVER
    return WatchView(
        language=language,
        code=code,
        names=names,
        rules=table.score.rules,
        score=(table.score.points[0], table.score.points[1]),
        status=table.status.value,
        service=config.service,
        page_link=page_link(config, code),
        to_act=game.to_act if running and game is not None else None,
        board=None if board_view is None else render_text_board(board_view, language),
        board_view=board_view,
        ids=seen.ids,
        events=tuple(watch_event(event, names, language) for event in events),
        moves=moves,
    )


def watch_event(event: Event, names: tuple[str, str], language: str) -> str:
    """One event worded for an onlooker: both players by name, plays in the mover's numbering."""
    context = {"language": language, "names": list(names), "me": -1, "numbering": Numbering.OWN.value,
               "colour": "white", "offer_stands": False}
    data = dict(event.data)
    if "plays" in data:
        data["play"] = data.pop("plays")[Numbering.OWN.value]
    return str(_macros(language, context).event(event.kind.value, event.seat, data)).strip()


def _macros(language: str, context: dict[str, Any]) -> Any:
    """The macros of ``watching.txt`` (events, state, subject) in ``context``."""
    return environment().get_template(f"{language}/watching.txt").make_module({**context, "language": language})


def watch_page(session: Session, config: Config, code: str, now: datetime,
               moves: Callable[[Table], tuple[MoveLine, ...]]) -> WatchView:
    """What ``/w/CODE`` shows: the game, while its players allow watching; else (no such code,
    or they stopped it) only that, the same for both, so that codes cannot be probed."""
    language = config.service.language
    settings = session.exec(select(MatchWatch).where(MatchWatch.code == code)).first()
    record = None if settings is None else session.get(MatchRecord, settings.match_id)
    if settings is None or record is None or not settings.allowed() or record.status == MatchStatus.DECLINED.value:
        return WatchView(language=language, code=code, names=("", ""), rules=MatchRules(), score=(0, 0),
                         status="", service=config.service, allowed=False)
    table = Table.load(session, record)
    return watch_view(table, code, config, language, now, moves=moves(table) if table.game is not None else ())
