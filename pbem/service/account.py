"""Commands about the player rather than one game: language, numbering, games list, help, stop.

Features of later issues (the Assistant, ratings, vacations) answer plainly that they are not
offered yet, so that a player never waits for an answer that will not come.
"""

from __future__ import annotations

from pbem import commands
from pbem.service.conversation import Conversation
from pbem.service.tables import Table, tables_of
from pbem.store.game_records import MatchStatus

_NOT_OFFERED_YET = {
    commands.PlayAssistant: "assistant_unavailable",
    commands.Ratings: "ratings_unavailable",
    commands.Vacation: "vacation_unavailable",
}


def apply_account_command(talk: Conversation, command: commands.Command, table: Table | None) -> None:
    sender = talk.sender
    match command:
        case commands.Language(code=code):
            sender.language = code
            talk.session.add(sender)
            talk.say_template("language_set", table)
        case commands.SetNumbering(kind=kind):
            sender.numbering = kind.value
            talk.session.add(sender)
            talk.say_template("numbering_set", table, numbering=kind.value)
        case commands.Games():
            list_games(talk, table)
        case commands.Board():
            if table is not None:
                talk.news_of(table)
            else:
                _boards_without_token(talk)
        case commands.Help():
            talk.say(talk.notice("help"), table)
        case commands.Stop():
            sender.refuses_invitations = True
            talk.session.add(sender)
            talk.say_template("stop_confirmed", table)
        case _ if type(command) in _NOT_OFFERED_YET:
            talk.say_template(_NOT_OFFERED_YET[type(command)], table)
        case _:
            raise AssertionError(f"not an account command: {command!r}")


def list_games(talk: Conversation, table: Table | None = None) -> None:
    """The sender's invitations and running matches, with whose turn it is."""
    running = tables_of(talk.session, talk.sender, (MatchStatus.INVITED, MatchStatus.RUNNING))
    rows = []
    for each in running:
        seat = each.seat_of(talk.sender)
        assert seat is not None
        game = each.game
        rows.append({
            "opponent": each.players[1 - seat].display_name,
            "rules": each.score.rules,
            "score": each.score.points if seat == 0 else each.score.points[::-1],
            "status": each.status.value,
            "my_turn": (each.status is MatchStatus.INVITED and seat == 1)
            or (game is not None and game.to_act == seat),
        })
    talk.say_template("games_list", table, rows=rows)


def _boards_without_token(talk: Conversation) -> None:
    """``board`` in a new mail: the board of the only running match, else the list of games."""
    running = tables_of(talk.session, talk.sender, (MatchStatus.RUNNING,))
    if len(running) == 1:
        talk.news_of(running[0])
    else:
        list_games(talk)
