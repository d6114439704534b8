"""Which game a mail answers: the match its reply token names, whether that token is the
sender's, and whether the mail answers an older state of the game than the newest it was sent.

All of it is read from the mail's value (:class:`pbem.mail.reading.IncomingMail`: its reply
tokens and the game stamps of In-Reply-To and References, parsed once by mail/).
"""

from __future__ import annotations

import logging

from sqlmodel import Session

from pbem.mail.composing import GameStamp, parse_game_message_id
from pbem.mail.reading import IncomingMail
from pbem.render.views import Notice
from pbem.service.table.conversation import Conversation
from pbem.service.table.tables import Table, table_for_token
from pbem.store.game_records import Player

log = logging.getLogger(__name__)


def named_table(session: Session, mail: IncomingMail) -> tuple[Table, int] | None:
    """The match of the first of the mail's reply tokens that names one (locked, as
    :func:`table_for_token` locks it) and the seat that token was given to; whose it is, is
    :func:`find_table`'s to judge."""
    for token in mail.reply_tokens:
        found = table_for_token(session, token)
        if found is not None:
            return found
    return None


def seated_sender(named: tuple[Table, int] | None, address: str) -> Player | None:
    """The player of the seat the mail's token names, when the mail comes from their address:
    the sender's row is then read with the match, not by a statement of its own."""
    if named is None:
        return None
    player = named[0].players[named[1]]
    return player if player.address == address.lower() else None


def find_table(talk: Conversation, mail: IncomingMail, named: tuple[Table, int] | None) -> tuple[Table, int] | None:
    """The game the mail answers (``named``: see :func:`named_table`), if its token was given
    to the sender.

    A token that belongs to somebody else (a forwarded mail, a forged sender, a guess) finds
    nothing: the mail is answered as if it named no game, and nothing of that game changes.
    """
    if named is None:
        return None
    table, seat = named
    token = table.token(seat)
    if table.players[seat].id == talk.sender.id:
        for answered in _answered_game_mails(mail):
            if answered.token != token:
                other = table_for_token(talk.session, answered.token)
                if other is not None and other[0].players[other[1]].id == talk.sender.id:
                    talk.say_template(Notice.TWO_GAMES_NAMED)  # answers one game, addressed to another
                    return None
        return table, seat
    log.warning("token of match %s used by %s, who does not hold it", table.id, talk.sender.address)
    talk.say_template(Notice.FOREIGN_TOKEN)
    return None


def _answered_game_mails(mail: IncomingMail) -> list[GameStamp]:
    """The game mails the mail says it answers: In-Reply-To, and the last game mail References
    names (its parent, when a client sends References without In-Reply-To)."""
    named = [mail.answered_stamp, mail.referenced_stamps[-1] if mail.referenced_stamps else None]
    return [stamp for stamp in named if stamp is not None]


def answers_older_mail(mail: IncomingMail, table: Table, seat: int) -> bool:
    """True when the mail replies to one of our game mails that showed an earlier state than the
    newest this seat was sent.

    The mail answered is In-Reply-To when that names one of this seat's game mails; when it is
    missing or damaged, the newest of the game mails that References names stands for it.  A
    player gets no mail for their own move or the opponent's roll (issue 20): their newest mail
    still counts as current while the game goes on without them.
    """
    token = table.token(seat)
    current = {table.stamp, *_newest_sent(table, seat)}
    parent = mail.answered_stamp
    if parent is not None and parent.token == token:
        return (parent.game_number, parent.turn) not in current
    stamps = [(stamp.game_number, stamp.turn) for stamp in mail.referenced_stamps if stamp.token == token]
    return bool(stamps) and max(stamps) not in current


def _newest_sent(table: Table, seat: int) -> list[tuple[int, int]]:
    """The stamp of the newest game mail the seat was sent (its thread also holds its own mails;
    these are the Message-IDs the service stored, not the mail's)."""
    token = table.token(seat)
    for message_id in reversed(table.thread(seat)):
        stamp = parse_game_message_id(message_id)
        if stamp is not None and stamp.token == token:
            return [(stamp.game_number, stamp.turn)]
    return []
