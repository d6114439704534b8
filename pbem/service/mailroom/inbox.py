"""The game service's entry point: one stored incoming mail → state changes and answers.

:func:`handle_mail` is the pipeline's handler (``pbem.daemon.pipeline.Handler``).  It runs
inside the transaction the pipeline commits, so the state change and the answers it queues
are stored together or not at all.  The order of the work:

1. read the mail within bounded work (sender, game token, new text); never answer automatic
   or unreadable mail, and read nothing but the header of a mail over ``max_mail_bytes``;
2. find the game by the reply token (the match locked, its seats and players read with it:
   the token holder's mail needs no statement of its own for its sender), and make sure the
   token belongs to the sender;
3. recognise a reply to an older mail of the game (by In-Reply-To, else by the newest of the
   game's mails its References name): it may not change the game;
4. run the commands in the order written: help, board, games and ratings once per mail;
   account commands and games against the Assistant only with proof that the sender reads
   their mailbox (a token of theirs, else a confirmation mail they answer) or that the
   operator's own mail server vouches for the From address (``[imap] trusted_authserv_id``);
   notes only without service addresses or tokens;
5. word the news into letters, queue them, and remember them in each player's thread; a mail
   that proves nothing is answered within the same daily limit as confirmation requests
   (:func:`_may_answer_unproven`), so forged mails cannot make the service mail anyone.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from functools import partial

from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from pbem import commands, names
from pbem.config import LANGUAGES, Config
from pbem.mail.composing import GameStamp, compose, parse_game_message_id
from pbem.mail.reading import (MAX_HTML_CHARS, IncomingMail, ReadingContext, UnreadableMail,
                               html_to_text, new_token, read_mail, recorded_sender_and_subject, refused_copy,
                               subject_text)
from pbem.render.views import Notice
from pbem.mail.bounces import read_bounce, sent_to_bounce_address
from pbem.service.competitions import tournaments
from pbem.service.mailroom import bounces, handlers
from pbem.service.mailroom.handlers import Scope
from pbem.service.people import invitations
from pbem.service.table import clocks
from pbem.service.table.assistant import NAMES as ASSISTANT_NAMES
from pbem.service.table.conversation import Conversation
from pbem.service.table.dice import SEEDED_DICE, DiceRoller
from pbem.service.table.letters import undeliverable
from pbem.service.table.news import Answering
from pbem.service.table.tables import Table, table_for_token
from pbem.service.watching import watchers
from pbem.store.db import utc_now
from pbem.store.game_records import AccountConfirmation, MatchStatus, Player, Seat
from pbem.store.mail_records import InboundMail, InboundState, OutboundMail, queue_mail

log = logging.getLogger(__name__)

_GAME_COMMANDS = handlers.types(Scope.GAME)
_ONCE_PER_MAIL = handlers.types(once_per_mail=True)
_NEEDS_PROOF = handlers.types(needs_proof=True)
"""Account commands, invitations (which start rated games on a clock in the sender's name),
``watch`` (the service then mails that address after each move) and ``play assistant`` (a game
whose mails go to that address): taken only from a mail that proves the sender reads their
mailbox."""
CONFIRMATION_VALID = timedelta(days=7)
_QUOTED_LOOKUPS = 5
TEXTS_KEPT = 2048
"""How many texts (and HTML parts) of our own recent mails are kept, to spare parsing them again
when a reply quotes one (about 5 kB each)."""


class _SentTexts:
    """The text and HTML parts of the mails this process queued lately, by Message-ID (a reply
    quotes the last one; another daemon's, or an older one, is read from its stored mail)."""

    def __init__(self, size: int) -> None:
        self._texts: OrderedDict[str, tuple[str, str | None]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def keep(self, message_id: str, text: str, html: str | None) -> None:
        with self._lock:
            # the text as set_content stores it
            self._texts[message_id] = ("".join(line + "\n" for line in text.splitlines()), html)
            while len(self._texts) > self._size:
                self._texts.popitem(last=False)

    def get(self, message_id: str) -> str | None:
        with self._lock:
            kept = self._texts.get(message_id)
        return None if kept is None else _quotable(*kept)


def _quotable(text: str, html: str | None) -> str:
    """What a reply may quote of one of our mails: its text part, then the text its HTML part
    shows (laid out as an HTML reply is read), so that either, quoted without markers, is known
    by its run of lines (:class:`pbem.mail.reading.OwnText`)."""
    return text if html is None else f"{text}\n\n{html_to_text(html[:MAX_HTML_CHARS])}\n"


_SENT_TEXTS = _SentTexts(TEXTS_KEPT)


def handle_mail(
    session: Session, raw: bytes, inbound: InboundMail, config: Config,
    dice: DiceRoller = SEEDED_DICE, now: datetime | None = None,
) -> None:
    """Apply one mail; see the module docstring."""
    try:
        mail = read_mail(raw, _reading_context(session, config))
    except UnreadableMail as unreadable:
        inbound.state, inbound.reason = InboundState.IGNORED, f"unreadable mail: {unreadable.reason}"
        inbound.raw = refused_copy(raw)
        return
    inbound.sender, inbound.subject = recorded_sender_and_subject(mail)
    if mail.automatic or sent_to_bounce_address(raw, config.service.address):
        _automatic(session, raw[:config.limits.max_mail_bytes], inbound, mail, config, now or utc_now())
        inbound.raw = refused_copy(raw)
        return
    if invitations.is_service_address(mail.sender, config.service.address):
        inbound.state, inbound.reason = InboundState.IGNORED, "mail from the service itself"
        return
    named = None if mail.too_large else _named_table(session, mail)
    sender = _seated_sender(named, mail.sender) or invitations.player_for(session, mail.sender)
    talk = Conversation(session, config, sender, Answering(mail.message_id, tuple(mail.references)), dice,
                        now or utc_now(), written_language=_language_of(mail))
    if mail.too_large:
        inbound.raw = refused_copy(raw)
        talk.say_template(Notice.TOO_LARGE, limit=config.limits.max_mail_bytes // 1000)
        proven = mail.sender_authenticated
    else:
        proven = _run(talk, mail, named)
    if not proven and not _may_answer_unproven(talk):
        inbound.reason = "no answer: a mail without proof of its sender, over the daily limit of such answers"
        log.info("inbox %s: answer to %s dropped (%s)", mail.message_id, talk.sender.address, inbound.reason)
        return
    if len(talk.news) == 1:  # the mail was about one match: its text is kept while that match runs
        inbound.match_id = next(iter(talk.news))
    send_letters(talk)


def _automatic(session: Session, raw: bytes, inbound: InboundMail, mail: IncomingMail, config: Config,
               now: datetime) -> None:
    """A mail no person wrote is never answered; a bounce of one of ours is recorded, and a
    request to its sender's own List-Unsubscribe address carried out."""
    if _unsubscribes_automatically(session, mail):
        inbound.state = InboundState.APPLIED
        inbound.reason = (f"automatic mail ({mail.automatic or 'to a bounce address'}) to its sender's "
                          "List-Unsubscribe address: no invitations")
        log.info("inbox %s: %s", mail.message_id, inbound.reason)
        return
    bounce = read_bounce(raw, config.service.address)
    if bounce is None:
        inbound.state = InboundState.IGNORED
        inbound.reason = f"automatic mail: {mail.automatic or 'sent to a bounce address, but no bounce'}"
        return
    inbound.reason, told = bounces.apply_bounce(session, bounce, config, now)
    log.info("inbox %s: %s", mail.message_id, inbound.reason)
    for talk in told:
        send_letters(talk)


def _unsubscribes_automatically(session: Session, mail: IncomingMail) -> bool:
    """A mail marked as a machine's (a mail provider may send the ``mailto:`` request of
    List-Unsubscribe itself) to its sender's own unsubscribe address: the token proves the
    owner as in :func:`_unsubscribes`, and stopping invitations harms nobody, so it is done,
    unanswered."""
    if not mail.reply_tokens:
        return False
    player = session.exec(select(Player).where(Player.address == mail.sender)).first()
    if player is None or player.unsubscribe_token is None or player.unsubscribe_token not in mail.reply_tokens:
        return False
    player.refuses_invitations = True
    session.add(player)
    return True


def _language_of(mail: IncomingMail) -> str | None:
    """The mail's language: its Content-Language when that is one of ours, else its words."""
    if mail.language_hint in LANGUAGES:
        return mail.language_hint
    return commands.written_in(mail.new_text, subject_text(mail.subject))


def _reading_context(session: Session, config: Config) -> ReadingContext:
    return ReadingContext(
        service_address=config.service.address,
        service_name=config.service.name,
        max_bytes=config.limits.max_mail_bytes,
        is_command=commands.is_command_line,
        quoted_text=partial(_our_text, session, config.service.address),
        trusted_authserv_id=config.imap.trusted_authserv_id if config.imap is not None else None,
    )


def _our_text(session: Session, service_address: str, message_ids: Sequence[str]) -> str | None:
    """The text (see :func:`_quotable`) of the newest of our own mails among ``message_ids``
    (newest first)."""
    domain = "@" + service_address.rpartition("@")[2].lower() + ">"
    ours = [message_id for message_id in message_ids if message_id.lower().endswith(domain)][:_QUOTED_LOOKUPS]
    for message_id in ours:
        kept = _SENT_TEXTS.get(message_id)
        if kept is not None:
            return kept
        raw = session.exec(select(OutboundMail.raw).where(OutboundMail.message_id == message_id)).first()
        if raw is not None:
            message = BytesParser(policy=default_policy).parsebytes(raw)
            assert isinstance(message, EmailMessage)
            body, html = message.get_body(preferencelist=("plain",)), message.get_body(preferencelist=("html",))
            if body is None:
                return None
            return _quotable(str(body.get_content()), None if html is None else str(html.get_content()))
    return None


def _run(talk: Conversation, mail: IncomingMail, named: tuple[Table, int] | None) -> bool:
    """Carry out the mail's commands; returns whether the mail proves its sender."""
    found = _find_table(talk, mail, named)
    table, seat = found if found else (None, None)
    confirmation = _confirmation(talk, mail) if found is None else None
    stale = found is not None and _answers_older_mail(mail, *found)
    parsed = _once_each(commands.parse_commands(mail.new_text, subject_text(mail.subject)))
    unsubscribing = _unsubscribes(talk, mail)  # also when threaded under the invitation (its token)
    if unsubscribing and not any(isinstance(command, commands.Stop) for command in parsed):
        parsed.insert(0, commands.Stop())
    # A mail proves its sender by a game token of theirs, by answering a confirmation, by an
    # unsubscribe token, or by the operator's own server vouching for its From address
    # ([imap] trusted_authserv_id).
    proven = table is not None or confirmation is not None or unsubscribing or mail.sender_authenticated
    if proven and talk.sender.bounces:  # its owner writes (a forger cannot prove it): mail goes out again
        talk.sender.bounces = 0
        talk.session.add(talk.sender)
    if mail.sender_authenticated and found is None and confirmation is None:
        log.info("inbox %s: %s is vouched for by the trusted Authentication-Results", mail.message_id,
                 talk.sender.address)
    if proven and mail.sender_name and mail.sender_name != talk.sender.name:
        # A name is taken only from a mail that proves its sender, and only an honest one.
        if honest_name(talk.session, talk.sender, mail.sender_name, talk.config):
            talk.sender.name = mail.sender_name
            talk.session.add(talk.sender)
    if proven and talk.sender.language is None and talk.written_language is not None:
        talk.sender.language = talk.written_language  # so is the language they write in
        talk.session.add(talk.sender)
    if found is not None:
        talk.news_of(found[0])
        found[0].add_to_thread(found[1], mail.message_id)
        if stale and any(isinstance(command, _GAME_COMMANDS) for command in parsed):
            talk.say_template(Notice.OLDER_MAIL, table)
    if confirmation is not None:
        parsed = _confirm(talk, confirmation, parsed, mail)
    watched: list[tuple[str, str]] = []
    if found is None and any(isinstance(command, (*_GAME_COMMANDS, commands.Accept, commands.Decline))
                             for command in parsed):
        watched = watchers.games_replied_to_as_watcher(talk, mail.in_reply_to, mail.references)
        if watched:  # a watcher answered a watcher's mail with a move: no game of theirs is meant
            talk.say_template(Notice.WATCHER_CANNOT_ACT, games=watched)
            parsed = [command for command in parsed
                      if not isinstance(command, (*_GAME_COMMANDS, commands.Accept, commands.Decline))]
    # An address that wrote ``stop`` wants no mail: without proof, nothing is done or answered
    # in its name but a (bounded) request to confirm what the mail asked for.
    stopped = not proven and talk.sender.refuses_invitations
    needs_proof = _HELD_WHEN_STOPPED if stopped else _NEEDS_PROOF
    unproven = [command for command in parsed if isinstance(command, needs_proof) and not proven]
    for command in parsed:
        if command not in unproven and not stopped:
            handlers.dispatch(talk, command, table, seat, stale)
    if unproven:
        _ask_for_confirmation(talk, _lines_needing_proof(mail, needs_proof))
    if stopped:
        talk.answer_needed = False
    elif not parsed and confirmation is None and not watched:  # a watcher was told why nothing was done
        talk.say_template(Notice.NOTHING_TO_DO_GAME if table is not None else Notice.NOTHING_TO_DO, table)
    return proven


def _confirm(talk: Conversation, confirmation: AccountConfirmation, parsed: list[commands.Command],
             mail: IncomingMail) -> list[commands.Command]:
    """An answer to a confirmation mail: an empty reply or ``yes`` carries out what it held, any
    other answer ("No, I did not ask for that") changes nothing.  Returns the commands to run."""
    confirmation.confirmed_at = talk.now
    talk.session.add(confirmation)
    if mail.new_text.strip() and not any(isinstance(command, commands.Confirm) for command in parsed):
        talk.say_template(Notice.NOT_CONFIRMED, commands=confirmation.commands)
        return [command for command in parsed if not isinstance(command, commands.Note)]
    held = [command for line in confirmation.commands for command in commands.parse_commands(line)]
    return _once_each([*held, *(command for command in parsed if not isinstance(command, commands.Confirm))])


_HELD_WHEN_STOPPED = handlers.types(Scope.SENDER)
"""What a mail without proof from an address that wrote ``stop`` may ask for, to be confirmed:
every command that does something without a game (a game command, a note or an error, which
would only be told that no game is named, gets no answer)."""


def _lines_needing_proof(mail: IncomingMail, needs_proof: tuple[type, ...]) -> list[str]:
    """The lines of the mail (or its subject) that hold a command needing proof, as written."""
    lines = mail.new_text.splitlines() if mail.new_text.strip() else [subject_text(mail.subject)]
    return [line.strip() for line in lines
            if line.strip() and isinstance(next(iter(commands.parse_commands(line)), None), needs_proof)]


def _once_each(parsed: list[commands.Command]) -> list[commands.Command]:
    """The commands with every repeat of an answer-only command (help, board, …) left out."""
    seen: set[type] = set()
    kept = []
    for command in parsed:
        if isinstance(command, _ONCE_PER_MAIL):
            if type(command) in seen:
                continue
            seen.add(type(command))
        kept.append(command)
    return kept


def _unsubscribes(talk: Conversation, mail: IncomingMail) -> bool:
    """The mail was sent to the sender's own ``List-Unsubscribe`` address (a mail client's
    "unsubscribe" button): it does what ``stop`` does, and the token proves the sender, as a
    confirmation's does (only the address's owner got a mail with it)."""
    token = talk.sender.unsubscribe_token
    return token is not None and token in mail.reply_tokens


def _confirmation(talk: Conversation, mail: IncomingMail) -> AccountConfirmation | None:
    """The sender's open confirmation that this mail answers, if any."""
    for token in mail.reply_tokens:
        found = talk.session.get(AccountConfirmation, token)
        if (found is not None and found.player_id == talk.sender.id and found.confirmed_at is None
                and found.created_at > talk.now - CONFIRMATION_VALID):
            return found
    return None


def _ask_for_confirmation(talk: Conversation, lines: list[str]) -> None:
    """Hold account commands and invitations of a mail without a token until the sender answers
    a mail to their own address: whoever forged the From never sees it.

    Whoever forges mails in a stranger's name must not make the service flood them: an address
    gets at most ``[limits] confirmations_per_day`` unanswered requests in 24 hours (0: no limit;
    one answered proves the address is its owner's and counts no more), and none while one asking
    for the same lines is open; a further one is dropped, logged, and not answered
    (:func:`_unanswered_today` counts them)."""
    assert talk.sender.id is not None
    unanswered = _unanswered_today(talk)
    open_same = any(held.commands == lines for held in unanswered)
    limit = talk.config.limits.confirmations_per_day
    if open_same or (limit and len(unanswered) >= limit):
        log.info("confirmation for %s dropped: %s", talk.sender.address,
                 "the same request is open" if open_same else f"{len(unanswered)} unanswered in 24 hours")
        talk.answer_needed = False
        return
    token = new_token()
    talk.session.add(AccountConfirmation(token=token, player_id=talk.sender.id, commands=lines, created_at=talk.now))
    talk.reply_token = token
    talk.say_template(Notice.CONFIRM_ACCOUNT, commands=lines)


def _unanswered_today(talk: Conversation) -> list[AccountConfirmation]:
    """The sender's requests to confirm, and answers to mails that proved nothing, of the last
    24 hours that no mail of theirs answered.  The player's row is locked first, so that two
    daemons count the same."""
    assert talk.sender.id is not None
    session = talk.session
    session.exec(select(Player.id).where(Player.id == talk.sender.id).with_for_update()).all()
    recent = session.exec(select(AccountConfirmation).where(
        AccountConfirmation.player_id == talk.sender.id,
        col(AccountConfirmation.created_at) > talk.now - timedelta(days=1))).all()
    # An organiser's tournament invitation is held for the address too, but it is no request of
    # the address's own: it counts in the invitation limits, not here.
    return [held for held in recent if held.confirmed_at is None and held.invited_by is None]


def _may_answer_unproven(talk: Conversation) -> bool:
    """Whether the answer to a mail that proves nothing of its sender (``help``, ``games``, an
    error, a request to confirm) may go to its From address.

    Anyone can forge that address, so such answers share the limit of confirmation requests:
    at most ``[limits] confirmations_per_day`` in 24 hours (0: no limit).  An answer other
    than a confirmation request is remembered as a confirmation that holds nothing and whose
    token is never sent: it counts like an unanswered request and can confirm nothing."""
    if talk.reply_token is not None:  # a confirmation request, counted when it was made
        return True
    if not (talk.general or talk.news or talk.bulletins or talk.answer_needed):
        return True  # nothing is sent
    if talk.sender.refuses_invitations:
        return False  # after ``stop``, nothing but a request to confirm (see _run)
    limit = talk.config.limits.confirmations_per_day
    if limit and len(_unanswered_today(talk)) >= limit:
        return False
    assert talk.sender.id is not None
    talk.session.add(AccountConfirmation(token=new_token(), player_id=talk.sender.id, commands=[],
                                         created_at=talk.now))
    return True


def _named_table(session: Session, mail: IncomingMail) -> tuple[Table, int] | None:
    """The match of the first of the mail's reply tokens that names one (locked, as
    :func:`table_for_token` locks it) and the seat that token was given to; whose it is, is
    :func:`_find_table`'s to judge."""
    for token in mail.reply_tokens:
        found = table_for_token(session, token)
        if found is not None:
            return found
    return None


def _seated_sender(named: tuple[Table, int] | None, address: str) -> Player | None:
    """The player of the seat the mail's token names, when the mail comes from their address:
    the sender's row is then read with the match, not by a statement of its own."""
    if named is None:
        return None
    player = named[0].players[named[1]]
    return player if player.address == address.lower() else None


def _find_table(talk: Conversation, mail: IncomingMail, named: tuple[Table, int] | None) -> tuple[Table, int] | None:
    """The game the mail answers (``named``: see :func:`_named_table`), if its token was given
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


def honest_name(session: Session, player: Player, name: str, config: Config) -> bool:
    """Whether ``player`` may show ``name``: not when it passes for the service, the Assistant,
    or a player (name or address) of any of ``player``'s games, so that nobody's mails read as
    if someone else wrote them (:mod:`pbem.names`).  A name refused is ignored: the player keeps
    the name they had, or, without one, their address's local part is shown."""
    service_local = config.service.address.split("@", 1)[0]
    taken = {names.skeleton(text) for text in (config.service.name, config.service.address, service_local,
                                               *ASSISTANT_NAMES.values())}
    opponent_seat, own_seat = aliased(Seat), aliased(Seat)
    opponents = session.exec(
        select(Player.name, Player.address).distinct()
        .join(opponent_seat, col(opponent_seat.player_id) == Player.id)
        .join(own_seat, col(own_seat.match_id) == col(opponent_seat.match_id))
        .where(col(own_seat.player_id) == player.id, col(Player.id) != player.id)).all()
    for other_name, other_address in opponents:
        taken |= {names.skeleton(text) for text in (other_name, other_address, other_address.split("@", 1)[0]) if text}
    return not names.passes_for(name, taken)


def _answered_game_mails(mail: IncomingMail) -> list[GameStamp]:
    """The game mails the mail says it answers: In-Reply-To, and the last game mail References
    names (its parent, when a client sends References without In-Reply-To)."""
    named = [parse_game_message_id(mail.in_reply_to),
             next((stamp for message_id in reversed(mail.references)
                   if (stamp := parse_game_message_id(message_id)) is not None), None)]
    return [stamp for stamp in named if stamp is not None]


def _answers_older_mail(mail: IncomingMail, table: Table, seat: int) -> bool:
    """True when the mail replies to one of our game mails that showed an earlier state than the
    newest this seat was sent.

    The mail answered is In-Reply-To when that names one of this seat's game mails; when it is
    missing or damaged, the newest of the game mails that References names stands for it.  A
    player gets no mail for their own move or the opponent's roll (issue 20): their newest mail
    still counts as current while the game goes on without them.
    """
    token = table.token(seat)
    current = {table.stamp, *_newest_sent(table, seat)}
    parent = parse_game_message_id(mail.in_reply_to)
    if parent is not None and parent.token == token:
        return (parent.game_number, parent.turn) not in current
    stamps = [(stamp.game_number, stamp.turn) for message_id in mail.references
              if (stamp := parse_game_message_id(message_id)) is not None and stamp.token == token]
    return bool(stamps) and max(stamps) not in current


def _newest_sent(table: Table, seat: int) -> list[tuple[int, int]]:
    """The stamp of the newest game mail the seat was sent (its thread also holds its own mails)."""
    token = table.token(seat)
    for message_id in reversed(table.thread(seat)):
        stamp = parse_game_message_id(message_id)
        if stamp is not None and stamp.token == token:
            return [(stamp.game_number, stamp.turn)]
    return []


def send_letters(talk: Conversation) -> None:
    """Start the clocks of the turns this mail (or the clock job) began, then queue every letter
    in this transaction and thread it into its recipient's thread."""
    config = talk.config
    for news in list(talk.news.values()):  # a tournament's next pairings add news of their own
        if news.table.record.tournament_id is not None and news.table.status is MatchStatus.FINISHED:
            tournaments.match_finished(talk, news.table)
    for news in talk.news.values():
        clocks.sync(news.table, config, talk.now)
    for player, table, letter in talk.letters():
        asks_proof = player.id == talk.sender.id and talk.reply_token is not None and letter.token == talk.reply_token
        if undeliverable(player, config) and not asks_proof:
            # A "please confirm" still goes: it is how the address's owner, writing a new mail,
            # proves it reads it again (at most [limits] confirmations_per_day of them).
            log.info("no mail to %s: it bounced %d times since its owner last wrote", player.address, player.bounces)
            continue
        message = compose(letter, config.service.address, config.service.name, talk.now)
        queue_mail(talk.session, message, None if table is None else table.id)
        _SENT_TEXTS.keep(str(message["Message-ID"]), letter.text, letter.html)
        seat = None if table is None else table.seat_of(player)
        if table is not None and seat is not None:
            table.add_to_thread(seat, str(message["Message-ID"]))
    watchers.send_watch_letters(talk)
    for news in talk.news.values():
        news.table.save(talk.session)
