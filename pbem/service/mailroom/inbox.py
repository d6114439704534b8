"""The game service's entry point: one stored incoming mail → state changes and answers.

:func:`handle_mail` is the pipeline's handler (``pbem.daemon.pipeline.Handler``).  It runs
inside the transaction the pipeline commits, so the state change and the answers it queues
are stored together or not at all.  The order of the work:

1. read the mail once, within bounded work (:mod:`.incoming`: one
   :class:`~pbem.mail.reading.IncomingMail`, its commands parsed once); never answer automatic
   or unreadable mail (a bounce among them is recorded), and read nothing but the header of a
   mail over ``max_mail_bytes``;
2. find the game by the reply token (:mod:`.threads`; the match locked, its seats and players
   read with it: the token holder's mail needs no statement of its own for its sender), and
   make sure the token belongs to the sender;
3. recognise a reply to an older mail of the game (by In-Reply-To, else by the newest of the
   game's mails its References name): it may not change the game;
4. run the commands in the order written: help, board, games and ratings once per mail;
   account commands and games against the Assistant only with proof that the sender reads
   their mailbox (a token of theirs, else a confirmation mail they answer) or that the
   operator's own mail server vouches for the From address (``[imap] trusted_authserv_id``);
   notes only without service addresses or tokens;
5. word the news into letters, queue them (:mod:`.post`), and remember them in each player's
   thread; a mail that proves nothing is answered within the same daily limit as confirmation requests
   (:func:`_may_answer_unproven`), so forged mails cannot make the service mail anyone.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlmodel import Session, col, select

from pbem import commands
from pbem.config import Config
from pbem.mail.headers import UnreadableMail, new_token, refused_copy
from pbem.mail.reading import IncomingMail, recorded_sender_and_subject
from pbem.render.views import Notice
from pbem.service.mailroom import bounces, handlers
from pbem.service.mailroom.handlers import Scope
from pbem.service.mailroom.incoming import Incoming, read_incoming
from pbem.service.mailroom.post import send_letters
from pbem.service.mailroom.senders import honest_name
from pbem.service.mailroom.threads import answers_older_mail, find_table, named_table, seated_sender
from pbem.service.people import invitations
from pbem.service.table.conversation import Conversation
from pbem.service.table.dice import SEEDED_DICE, DiceRoller
from pbem.service.table.news import Answering
from pbem.service.table.tables import Table
from pbem.service.watching import watchers
from pbem.store.db import utc_now
from pbem.store.game_records import AccountConfirmation, Player
from pbem.store.mail_records import InboundMail, InboundState

log = logging.getLogger(__name__)

_GAME_COMMANDS = handlers.types(Scope.GAME)
_ONCE_PER_MAIL = handlers.types(once_per_mail=True)
_NEEDS_PROOF = handlers.types(needs_proof=True)
"""Account commands, invitations (which start rated games on a clock in the sender's name),
``watch`` (the service then mails that address after each move) and ``play assistant`` (a game
whose mails go to that address): taken only from a mail that proves the sender reads their
mailbox."""
CONFIRMATION_VALID = timedelta(days=7)


def handle_mail(
    session: Session, raw: bytes, inbound: InboundMail, config: Config,
    dice: DiceRoller = SEEDED_DICE, now: datetime | None = None,
) -> None:
    """Apply one mail; see the module docstring."""
    try:
        mail = read_incoming(session, raw, config)
    except UnreadableMail as unreadable:
        inbound.state, inbound.reason = InboundState.IGNORED, f"unreadable mail: {unreadable.reason}"
        inbound.raw = refused_copy(raw)
        return
    inbound.sender, inbound.subject = recorded_sender_and_subject(mail)
    if mail.automatic or mail.to_bounce_address:
        _automatic(session, inbound, mail, config, now or utc_now())
        inbound.raw = refused_copy(raw)
        return
    if invitations.is_service_address(mail.sender, config.service.address):
        inbound.state, inbound.reason = InboundState.IGNORED, "mail from the service itself"
        return
    named = None if mail.too_large else named_table(session, mail)
    sender = seated_sender(named, mail.sender) or invitations.player_for(session, mail.sender)
    talk = Conversation(session, config, sender, Answering(mail.message_id, mail.references), dice,
                        now or utc_now(), written_language=mail.language)
    if mail.too_large:
        inbound.raw = refused_copy(raw)
        talk.say_template(Notice.TOO_LARGE, limit=config.limits.max_mail_bytes // 1000)
        proven = mail.sender_authenticated
    else:
        proven = _run(talk, Incoming.of(mail), named)
    if not proven and not _may_answer_unproven(talk):
        inbound.reason = "no answer: a mail without proof of its sender, over the daily limit of such answers"
        log.info("inbox %s: answer to %s dropped (%s)", mail.message_id, talk.sender.address, inbound.reason)
        return
    if len(talk.news) == 1:  # the mail was about one match: its text is kept while that match runs
        inbound.match_id = next(iter(talk.news))
    send_letters(talk)


def _automatic(session: Session, inbound: InboundMail, mail: IncomingMail, config: Config, now: datetime) -> None:
    """A mail no person wrote is never answered; a bounce of one of ours is recorded, and a
    request to its sender's own List-Unsubscribe address carried out."""
    if _unsubscribes_automatically(session, mail):
        inbound.state = InboundState.APPLIED
        inbound.reason = (f"automatic mail ({mail.automatic or 'to a bounce address'}) to its sender's "
                          "List-Unsubscribe address: no invitations")
        log.info("inbox %s: %s", mail.message_id, inbound.reason)
        return
    bounce = mail.bounce
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


def _run(talk: Conversation, incoming: Incoming, named: tuple[Table, int] | None) -> bool:
    """Carry out the mail's commands; returns whether the mail proves its sender."""
    mail = incoming.mail
    found = find_table(talk, mail, named)
    table, seat = found if found else (None, None)
    confirmation = _confirmation(talk, mail) if found is None else None
    stale = found is not None and answers_older_mail(mail, *found)
    parsed = _once_each(list(incoming.commands))
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
        _ask_for_confirmation(talk, incoming.lines_holding(needs_proof))
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
