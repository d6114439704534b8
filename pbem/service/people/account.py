"""Commands about the player rather than one game: language, numbering, games list, help, stop,
vacation, ratings, and starting a game against the Assistant; one function per command, each
the handler the mail room registers for its type (:mod:`pbem.service.mailroom.handlers`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session

from pbem import commands
from pbem.config import Config
from pbem.render.views import Notice
from pbem.rules import scoring
from pbem.service.games import credits
from pbem.service.games import play
from pbem.service.games import ratings
from pbem.service.people import invitations
from pbem.service.table import assistant
from pbem.service.table import clocks
from pbem.service.table.conversation import Conversation
from pbem.service.table.letters import clock_text, seat_name
from pbem.service.table.tables import Table, tables_of
from pbem.store.game_records import MatchStatus, Player


def set_language(talk: Conversation, command: commands.Language, table: Table | None) -> None:
    talk.sender.language = command.code
    talk.session.add(talk.sender)
    talk.say_template(Notice.LANGUAGE_SET, table)


def set_numbering(talk: Conversation, command: commands.SetNumbering, table: Table | None) -> None:
    talk.sender.numbering = command.kind.value
    talk.session.add(talk.sender)
    talk.say_template(Notice.NUMBERING_SET, table, numbering=command.kind.value)


def autoroll(talk: Conversation, command: commands.Autoroll, table: Table | None) -> None:
    _switch(talk, table, "autoroll", command.on, Notice.AUTOROLL_SET, acts_now=True)


def copies(talk: Conversation, command: commands.Copies, table: Table | None) -> None:
    _switch(talk, table, "copies", command.on, Notice.COPIES_SET)


def automove(talk: Conversation, command: commands.Automove, table: Table | None) -> None:
    _switch(talk, table, "automove", command.on, Notice.AUTOMOVE_SET, acts_now=True)


def greedy(talk: Conversation, command: commands.Greedy, table: Table | None) -> None:
    _switch(talk, table, "greedy", command.on, Notice.GREEDY_SET, acts_now=True)


def games(talk: Conversation, command: commands.Games, table: Table | None) -> None:
    list_games(talk, table)


def board(talk: Conversation, command: commands.Board, table: Table | None) -> None:
    """The board of the game the mail answers; without one, of every running game."""
    if table is not None:
        talk.news_of(table)
    else:
        _boards_without_token(talk)


def send_help(talk: Conversation, command: commands.Help, table: Table | None) -> None:
    talk.say(talk.help_text(table), table)
    if table is None:
        talk.name_answer(Notice.HELP)


def vacation(talk: Conversation, command: commands.Vacation, table: Table | None) -> None:
    take_vacation(talk, command.days, table)


def list_ratings(talk: Conversation, command: commands.Ratings, table: Table | None) -> None:
    ratings.list_ratings(talk, table)


def credit_statement(talk: Conversation, command: commands.Credits, table: Table | None) -> None:
    credits.statement(talk, table)


def stop(talk: Conversation, command: commands.Stop, table: Table | None) -> None:
    talk.sender.refuses_invitations = True
    talk.session.add(talk.sender)
    talk.say_template(Notice.STOP_CONFIRMED, table)


def play_assistant(talk: Conversation, command: commands.PlayAssistant, table: Table | None) -> None:
    if assistant.available(talk.config):
        invitations.play_assistant(talk, command.options, command.level)
    else:
        talk.say_template(Notice.ASSISTANT_UNAVAILABLE, table)


def _switch(talk: Conversation, table: Table | None, setting: str, on: bool, notice: Notice,
            acts_now: bool = False) -> None:
    """One of the sender's on/off settings.  One that ``acts_now``, turned on in a running game,
    acts at once: asked to roll or double right now, they roll (autoroll); a forced play waiting
    for them is played (automove, greedy)."""
    setattr(talk.sender, setting, on)
    talk.session.add(talk.sender)
    talk.say_template(notice, table, on=on)
    if on and acts_now and table is not None and table.game is not None and table.status is MatchStatus.RUNNING:
        play.advance(talk, table)


def list_games(talk: Conversation, table: Table | None = None) -> None:
    """The sender's invitations and running matches, with whose turn it is and each one's link."""
    rows = game_rows(talk.session, talk.sender, talk.config, talk.now, talk.language(talk.sender))
    talk.say_template(Notice.GAMES_LIST, table, rows=rows)


def game_rows(session: Session, player: Player, config: Config, now: datetime, language: str) -> list[dict[str, Any]]:
    """``player``'s invitations and running matches as the ``games`` mail and their own page list
    them: opponent, format, score, whose turn, the clocks and the link to the game's page (only
    ``player``'s own seat's link: a page never shows another player's token)."""
    rows = []
    for each in tables_of(session, player, (MatchStatus.INVITED, MatchStatus.RUNNING), lock=False):
        seat = each.seat_of(player)
        assert seat is not None
        game = each.game
        clock = clocks.clock_view(each, seat, config, now) if each.status is MatchStatus.RUNNING else None
        rows.append({
            "opponent": seat_name(each, 1 - seat, language),
            "rules": each.score.rules,
            "prize": each.prize,
            "score": scoring.seen_from(each.score.points, seat),
            "status": each.status.value,
            "my_turn": (each.status is MatchStatus.INVITED and seat == 1)
            or (game is not None and game.to_act == seat),
            "clock": None if clock is None else clock_text(clock, seat_name(each, 1 - seat, language), language),
            "link": None if config.web is None else config.web.link(each.token(seat)),
        })
    return rows


def take_vacation(talk: Conversation, days: int, table: Table | None) -> None:
    """``vacation N``: the sender's clocks in all games stand still for N more days, if the year's
    allowance has them (a vacation taken during one starts when that one ends)."""
    sender, now = talk.sender, talk.now
    year = str(now.year)
    used = sender.vacation_days.get(year, 0)
    allowance = talk.config.game.vacation_days_per_year
    if used + days > allowance:
        talk.say_template(Notice.VACATION_REFUSED, table, days=days, left=allowance - used, allowance=allowance)
        return
    pause = timedelta(days=days)
    start = max(now, sender.vacation_until) if sender.vacation_until is not None else now
    sender.vacation_until = start + pause
    sender.vacation_days = {**sender.vacation_days, year: used + days}
    talk.session.add(sender)
    for running in tables_of(talk.session, sender, (MatchStatus.RUNNING,)):
        seat = running.seat_of(sender)
        assert seat is not None
        clocks.pause(running, seat, pause, talk.config)
        talk.session.add(running.record)
    talk.say_template(Notice.VACATION_CONFIRMED, table, days=days, until=clocks.moment(sender.vacation_until),
                      left=allowance - used - days)


def _boards_without_token(talk: Conversation) -> None:
    """``board`` in a new mail: the board of the only running match, else the list of games."""
    running = tables_of(talk.session, talk.sender, (MatchStatus.RUNNING,))
    if len(running) == 1:
        talk.news_of(running[0])
    else:
        list_games(talk)
