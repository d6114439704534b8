"""One handler per command type: what a mail's command does, found by the command's type
(as Mailman 3's command runner finds a command's ``process``); the registry of how commands are
written is :mod:`pbem.commands`, below the service.

Each handler is registered with its :class:`Scope`, which says what the mail room does with
the command before its handler runs: an older mail's game commands are refused, a watcher's
moves answered "watchers cannot act", a command needing proof held for confirmation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from sqlmodel import select

from pbem import commands
from pbem.render.views import Notice
from pbem.service.competitions import ladders, tournaments
from pbem.service.games import play
from pbem.service.people import account, invitations
from pbem.service.mailroom.senders import safe_note
from pbem.service.table.conversation import Conversation
from pbem.service.table.letters import seat_name
from pbem.service.table.tables import Table
from pbem.service.watching import watchers
from pbem.store.game_records import MatchStatus, Seat

Handler = Callable[[Conversation, Any, Table | None, int | None, bool], None]
"""(the conversation, the command, the table the mail answers and the sender's seat at it, or
None twice, whether the mail answers an older mail of that game)."""


class Scope(Enum):
    GAME = "game"
    """A move, the dice, the cube or resigning in the game the mail answers: not from an older
    mail of it; a watcher's is refused."""
    ANSWER = "answer"
    """``accept``/``decline``: an invitation or a double of the game the mail answers; a
    watcher's is refused."""
    TABLE = "table"
    """About the game the mail answers (``rematch``, ``watchers``)."""
    LINE = "line"
    """No command of its own: a note, an error, a ``yes``."""
    SENDER = "sender"
    """The sender's own (their account, invitations, competitions, what they watch): from an
    address that wrote ``stop``, held to be confirmed when the mail proves nothing."""


@dataclass(frozen=True)
class Handling:
    handle: Handler
    scope: Scope
    needs_proof: bool = False
    """Taken only from a mail that proves its sender reads their mailbox (it acts in their name)."""
    once_per_mail: bool = False
    """Answered once however often a mail asks (20,000 ``help`` lines get one help)."""


HANDLERS: dict[type, Handling] = {}
H = TypeVar("H", bound=Callable[..., None])


def handles(*types: type, scope: Scope = Scope.SENDER, needs_proof: bool = False,
            once_per_mail: bool = False) -> Callable[[H], H]:
    """Register the decorated function as the handler of these command types."""
    def register(handler: H) -> H:
        for command in types:
            assert command not in HANDLERS, f"two handlers for {command.__name__}"
            HANDLERS[command] = Handling(handler, scope, needs_proof, once_per_mail)
        return handler
    return register


def dispatch(talk: Conversation, command: commands.Command, table: Table | None, seat: int | None,
             stale: bool) -> None:
    """Carry out one command of a mail by its type's handler."""
    HANDLERS[type(command)].handle(talk, command, table, seat, stale)


def types(*scopes: Scope, needs_proof: bool = False, once_per_mail: bool = False) -> tuple[type, ...]:
    """The command types registered with one of ``scopes`` (all when none), and with
    ``needs_proof`` or ``once_per_mail`` when asked for."""
    return tuple(command for command, handling in HANDLERS.items()
                 if (not scopes or handling.scope in scopes) and (handling.needs_proof or not needs_proof)
                 and (handling.once_per_mail or not once_per_mail))


@handles(commands.Confirm, scope=Scope.LINE)
def _confirm(talk: Conversation, command: commands.Confirm, table: Table | None, seat: int | None,
             stale: bool) -> None:
    """``yes`` outside an answer to a confirmation mail is a note."""
    _note(talk, commands.Note(command.text), table, seat, stale)


@handles(commands.Note, scope=Scope.LINE)
def _note(talk: Conversation, command: commands.Note, table: Table | None, seat: int | None, stale: bool) -> None:
    text = safe_note(command.text, talk.config.service.address, _tokens_of(talk))
    if table is not None and seat is not None and text:
        table.leave_note(1 - seat, text)
        talk.say_template(Notice.NOTE_PASSED_ON, table,
                          opponent=seat_name(table, 1 - seat, talk.language(talk.sender)))


@handles(commands.CommandError, scope=Scope.LINE)
def _error(talk: Conversation, command: commands.CommandError, table: Table | None, seat: int | None,
           stale: bool) -> None:
    if commands.about_no_game(command.line):
        talk.invitation_apart = True  # about no existing game, whichever thread it was written in
        talk.error(command.code, command.details, None, line=command.line)
    else:
        talk.error(command.code, command.details, table, seat or 0, line=command.line)


def _apart(handle: Callable[[Conversation, Any], None]) -> Handler:
    """A command about no game of the mail's thread (an invitation, a tournament, a watched
    game): its answer is a letter apart."""
    def handler(talk: Conversation, command: Any, table: Table | None, seat: int | None, stale: bool) -> None:
        talk.invitation_apart = True
        handle(talk, command)
    return handler


handles(commands.Invite, needs_proof=True)(_apart(invitations.invite))
handles(commands.TournamentNew, needs_proof=True)(_apart(tournaments.open_tournament))
handles(commands.TournamentAction, needs_proof=True)(_apart(tournaments.act))
handles(commands.TournamentInvite, needs_proof=True)(_apart(tournaments.invite))
handles(commands.TournamentShow)(_apart(tournaments.show))
handles(commands.Watch, needs_proof=True)(_apart(watchers.watch))


@handles(commands.Accept, commands.Decline, scope=Scope.ANSWER)
def _answer(talk: Conversation, command: commands.Accept | commands.Decline, table: Table | None,
            seat: int | None, stale: bool) -> None:
    """An invitation's answer while the match is invited; else the answer to a double."""
    if table is not None and seat is not None and table.status is MatchStatus.INVITED:
        (invitations.accept if isinstance(command, commands.Accept) else invitations.decline)(talk, table, seat)
    else:
        _game(talk, command, table, seat, stale)


@handles(commands.Move, commands.Roll, commands.Double, commands.Take, commands.Drop, commands.Beaver,
         commands.Resign, commands.OfferResignation, commands.Remis, scope=Scope.GAME)
def _game(talk: Conversation, command: play.GameCommand, table: Table | None, seat: int | None,
          stale: bool) -> None:
    if table is None or seat is None:
        talk.say_template(Notice.NO_GAME_NAMED)
        account.list_games(talk)
    elif not stale:
        play.apply_game_command(talk, table, seat, command)


@handles(commands.Rematch, scope=Scope.TABLE)
def _rematch(talk: Conversation, command: commands.Rematch, table: Table | None, seat: int | None,
             stale: bool) -> None:
    if table is None or seat is None:
        talk.say_template(Notice.NO_GAME_NAMED)
    else:
        invitations.rematch(talk, table, seat)


@handles(commands.Watchers, scope=Scope.TABLE)
def _watchers(talk: Conversation, command: commands.Watchers, table: Table | None, seat: int | None,
              stale: bool) -> None:
    watchers.set_watchers(talk, table, seat, command.on)


handles(commands.LadderShow)(_apart(ladders.show))
handles(commands.LadderNew, needs_proof=True)(_apart(ladders.new))
handles(commands.LadderJoin, needs_proof=True)(_apart(ladders.join))
handles(commands.LadderChallenge, needs_proof=True)(_apart(ladders.challenge))
handles(commands.LadderLeave, needs_proof=True)(_apart(ladders.leave))


def _own(handle: Callable[[Conversation, Any, Table | None], None]) -> Handler:
    """A command about the sender themselves, answered in the thread the mail came in."""
    def handler(talk: Conversation, command: Any, table: Table | None, seat: int | None, stale: bool) -> None:
        handle(talk, command, table)
    return handler


handles(commands.Language, needs_proof=True)(_own(account.set_language))
handles(commands.SetNumbering, needs_proof=True)(_own(account.set_numbering))
handles(commands.Autoroll, needs_proof=True)(_own(account.autoroll))
handles(commands.Copies, needs_proof=True)(_own(account.copies))
handles(commands.Automove, needs_proof=True)(_own(account.automove))
handles(commands.Greedy, needs_proof=True)(_own(account.greedy))
handles(commands.Vacation, needs_proof=True)(_own(account.vacation))
handles(commands.Stop, needs_proof=True)(_own(account.stop))
handles(commands.PlayAssistant, needs_proof=True)(_own(account.play_assistant))
handles(commands.Help, once_per_mail=True)(_own(account.send_help))
handles(commands.Board, once_per_mail=True)(_own(account.board))
handles(commands.Games, once_per_mail=True)(_own(account.games))
handles(commands.Ratings, once_per_mail=True)(_own(account.list_ratings))
handles(commands.Credits, once_per_mail=True)(_own(account.credit_statement))


def _tokens_of(talk: Conversation) -> list[str]:
    """Every game token ever given to the sender."""
    return list(talk.session.exec(select(Seat.token).where(Seat.player_id == talk.sender.id)).all())
