"""The game service's entry point: one stored incoming mail → state changes and answers.

:func:`handle_mail` is the pipeline's handler (``pbem.daemon.pipeline.Handler``).  It runs
inside the transaction the pipeline commits, so the state change and the answers it queues
are stored together or not at all.  The order of the work:

1. read the mail (sender, game token, new text); never answer automatic mail;
2. find the game by the reply token, and make sure the token belongs to the sender;
3. recognise a reply to an older mail of the game: it may not change the game;
4. run the commands in the order written;
5. word the news into letters, queue them, and remember them in each player's thread.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlmodel import Session

from pbem import commands
from pbem.config import Config
from pbem.daemon.pipeline import queue_mail
from pbem.mail.composing import compose, parse_game_message_id
from pbem.mail.reading import IncomingMail, read_mail, subject_text
from pbem.service import account, clocks, invitations, play
from pbem.service.conversation import Conversation
from pbem.service.dice import SECURE_DICE, DiceRoller
from pbem.service.tables import Table, table_for_token
from pbem.store.db import utc_now
from pbem.store.game_records import MatchStatus
from pbem.store.mail_records import InboundMail, InboundState

log = logging.getLogger(__name__)

_GAME_COMMANDS = (
    commands.Move, commands.Roll, commands.Double, commands.Take, commands.Drop, commands.Beaver,
    commands.Resign, commands.Remis,
)


def handle_mail(
    session: Session, raw: bytes, inbound: InboundMail, config: Config,
    dice: DiceRoller = SECURE_DICE, now: datetime | None = None,
) -> None:
    """Apply one mail; see the module docstring.  An unreadable mail raises (and is shunted)."""
    mail = read_mail(raw, config.service.address)
    if mail.automatic:
        inbound.state, inbound.reason = InboundState.IGNORED, f"automatic mail: {mail.automatic}"
        return
    if invitations.is_service_address(mail.sender, config.service.address):
        inbound.state, inbound.reason = InboundState.IGNORED, "mail from the service itself"
        return
    sender = invitations.player_for(session, mail.sender, mail.sender_name)
    talk = Conversation(session, config, sender, mail, dice, now or utc_now())
    if mail.size > config.limits.max_mail_bytes:
        talk.say_template("too_large", limit=config.limits.max_mail_bytes // 1000)
    else:
        _run(talk, mail)
    send_letters(talk)


def _run(talk: Conversation, mail: IncomingMail) -> None:
    found = _find_table(talk, mail)
    table, seat = found if found else (None, None)
    stale = table is not None and _answers_older_mail(mail, table, seat)
    parsed = commands.parse_commands(mail.new_text, subject_text(mail.subject))
    if table is not None:
        talk.news_of(table)
        table.add_to_thread(seat, mail.message_id)
        if stale and any(isinstance(command, _GAME_COMMANDS) for command in parsed):
            talk.say_template("older_mail", table)
    for command in parsed:
        _dispatch(talk, command, table, seat, stale)
    if not parsed:
        talk.say_template("nothing_to_do_game" if table is not None else "nothing_to_do", table)


def _find_table(talk: Conversation, mail: IncomingMail) -> tuple[Table, int] | None:
    """The game the mail answers, if its token is known and was given to the sender.

    A token that belongs to somebody else (a forwarded mail, a forged sender, a guess) finds
    nothing: the mail is answered as if it named no game, and nothing of that game changes.
    """
    for token in mail.reply_tokens:
        found = table_for_token(talk.session, token)
        if found is None:
            continue
        table, seat = found
        if table.players[seat].id == talk.sender.id:
            return table, seat
        log.warning("token of match %s used by %s, who does not hold it", table.id, talk.sender.address)
        talk.say_template("foreign_token")
        return None
    return None


def _answers_older_mail(mail: IncomingMail, table: Table, seat: int) -> bool:
    """True when the mail replies to one of our game mails that showed an earlier state."""
    stamp = parse_game_message_id(mail.in_reply_to)
    if stamp is None or stamp.token != table.token(seat):
        return False
    return (stamp.game_number, stamp.turn) != table.stamp


def _dispatch(
    talk: Conversation, command: commands.Command, table: Table | None, seat: int | None, stale: bool,
) -> None:
    match command:
        case commands.Note(text=text):
            if table is not None and seat is not None:
                table.leave_note(1 - seat, text)
                talk.say_template("note_passed_on", table, opponent=table.players[1 - seat].display_name)
        case commands.CommandError(code=code, details=details):
            talk.error(code, details, table, seat or 0)
        case commands.Invite():
            invitations.invite(talk, command)
        case commands.Accept() | commands.Decline() if table is not None and table.status is MatchStatus.INVITED:
            (invitations.accept if isinstance(command, commands.Accept) else invitations.decline)(talk, table, seat)
        case commands.Rematch():
            if table is None:
                talk.say_template("no_game_named")
            else:
                invitations.rematch(talk, table, seat)
        case commands.Accept() | commands.Decline() | commands.Move() | commands.Roll() | commands.Double() \
                | commands.Take() | commands.Drop() | commands.Beaver() | commands.Resign() | commands.Remis():
            if table is None or seat is None:
                talk.say_template("no_game_named")
                account.list_games(talk)
            elif not stale:
                play.apply_game_command(talk, table, seat, command)
        case _:
            account.apply_account_command(talk, command, table)


def send_letters(talk: Conversation) -> None:
    """Start the clocks of the turns this mail (or the clock job) began, then queue every letter
    in this transaction and thread it into its recipient's thread."""
    config = talk.config
    for news in talk.news.values():
        clocks.sync(news.table, config, talk.now)
    for player, table, letter in talk.letters():
        message = compose(letter, config.service.address, config.service.name, talk.now)
        queue_mail(talk.session, message)
        if table is not None:
            table.add_to_thread(table.seat_of(player), str(message["Message-ID"]))
    for news in talk.news.values():
        news.table.save(talk.session)
