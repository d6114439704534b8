"""What one incoming mail makes the service say, and to whom.

While the commands of a mail run, they only record *news*: events of a match ("Ben played
13/7 8/7", "Anna doubles to 2"), answers meant for the sender alone (an error, a language
confirmation, the help text) and the seats that must hear about it.  At the end,
:meth:`Conversation.letters` turns the news into at most one letter per person and match,
each worded in its recipient's language and numbering and showing the current state, so that
several commands in one mail still give one tidy answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlmodel import Session, col, select

from pbem import commands
from pbem.config import Config
from pbem.mail.composing import Attachment, InlineImage, Letter, new_content_id
from pbem.mail.reading import new_token, reply_address
from pbem.render.board_image import board_alt, render_board_png
from pbem.render.templating import environment, explain, fix_example, render, wrap_prose
from pbem.render.views import EventKind, GameView, Notice
from pbem.render.text_board import BoardView, LastMove, Who
from pbem.render.text_board import Score as BoardScore
from pbem.render.text_board import render_text_board
from pbem.rules import cube as cube_rules
from pbem.rules import game as game_rules
from pbem.rules import prizes, scoring
from pbem.rules.gnubg_ids import match_id, position_id
from pbem.rules.moves import Play, apply_play, legal_plays
from pbem.rules.position import Position
from pbem.rules.notation import Colour, Numbering, example_play, format_play
from pbem.service import clocks
from pbem.service.assistant import NAMES as ASSISTANT_NAMES
from pbem.service.assistant import is_assistant
from pbem.service.dice import DiceRoller
from pbem.service.tables import Table
from pbem.store.game_records import MatchRecord, MatchStatus, Player, Seat


@dataclass(frozen=True)
class Event:
    """Something that happened in a match; ``seat`` did it (None: the service itself)."""

    kind: EventKind
    seat: int | None = None
    data: dict[str, Any] = field(default_factory=dict)
    automatic: bool = False
    """Done by the service for ``seat`` (a roll, a forced play), not by a command of theirs."""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "seat": self.seat, "data": self.data, "automatic": self.automatic}

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> Event:
        return cls(EventKind(document["kind"]), document["seat"], document["data"], document.get("automatic", False))


@dataclass
class News:
    """What happened in one match while this mail was applied."""

    table: Table
    events: list[Event] = field(default_factory=list)
    notify: set[int] = field(default_factory=set)
    """Seats (besides the sender) that get a letter."""
    for_sender: list[str] = field(default_factory=list)
    """Texts for the sender alone (errors, confirmations), already in their language."""
    attachments: list[Attachment] = field(default_factory=list)
    show_board: bool = True
    opened: bool = False
    """The match began with this mail (a tournament's pairing): its letters come after the
    letters about no match, which may announce it (the round that ended)."""


@dataclass(frozen=True)
class Answering:
    """Where the letters to the sender thread: under this Message-ID, after these References."""

    message_id: str | None
    references: tuple[str, ...] = ()


ERRORS_WITHOUT_HELP = frozenset((
    "game_over", "not_your_turn", "cube_not_yours", "crawford_game", "cube_at_cap", "dead_cube",
    "beaver_not_allowed", "draw_already_offered", "no_draw_offered", "invalid_dice", "nothing_to_answer",
    "no_resignation_offered",
    "prize", "prize-amount", "prize-only", "prize-repeated", "watchers-switch",
))
"""Codes of ``pbem.rules.game`` about the state of the game, not about how a command is written,
and those of a prize invitation and of ``watchers on|off``, whose reason already names every
accepted form: the short help (how to write moves, roll or double, take or drop) does not follow
them (nor any refused command about no game: :func:`pbem.commands.about_no_game`)."""


REFUSALS = frozenset((
    Notice.CANNOT_INVITE_YOURSELF, Notice.CANNOT_INVITE_SERVICE, Notice.INVITEE_REFUSES, Notice.INVITEE_UNDELIVERABLE,
    Notice.INVITATION_LIMIT, Notice.INVITEE_NOT_A_PERSON, Notice.INVITEE_LIMIT, Notice.NOT_CONFIRMED,
    Notice.TWO_GAMES_NAMED, Notice.TOO_LARGE, Notice.FOREIGN_TOKEN, Notice.NO_GAME_NAMED, Notice.NOT_INVITED,
    Notice.MATCH_NOT_OVER, Notice.MATCH_NOT_RUNNING, Notice.ASSISTANT_UNAVAILABLE, Notice.SETTLE_UNAVAILABLE,
    Notice.VACATION_REFUSED, Notice.PRIZE_NOT_ALLOWED, Notice.PRIZE_NOT_WITH_ASSISTANT, Notice.PRIZE_NOT_COVERED,
    Notice.TOURNAMENT_UNKNOWN, Notice.TOURNAMENT_NOT_OPEN, Notice.TOURNAMENT_ALREADY_IN, Notice.TOURNAMENT_NOT_IN,
    Notice.TOURNAMENT_NOT_ORGANISER, Notice.TOURNAMENT_TOO_FEW, Notice.TOURNAMENT_OVER_ALREADY,
    Notice.TOURNAMENT_OUT_ALREADY, Notice.LADDER_EXISTS, Notice.LADDER_UNKNOWN, Notice.LADDER_NOT_ON,
    Notice.LADDER_WHICH, Notice.LADDER_NO_SUCH_PLAYER, Notice.LADDER_OUT_OF_REACH, Notice.LADDER_BUSY,
    Notice.WATCHERS_NEED_GAME, Notice.WATCH_NOT_ALLOWED, Notice.WATCH_OWN_GAME, Notice.WATCH_LIMIT_GAME,
    Notice.WATCH_LIMIT_ADDRESS, Notice.WATCHER_CANNOT_ACT,
))
"""Notices that say something was not done: a general letter they begin is titled as a refusal."""
MAX_QUOTED_LINE = 60
"""Characters of a refused command line that its answer quotes, at most."""
MAX_SUBJECT_LINE = 38
"""Characters of a refused line that the subject quotes: the subject stays within one header
line of 78 characters (a longer one is folded, and read back with a leading space)."""


def _quoted_line(line: str, limit: int = MAX_QUOTED_LINE) -> str:
    """A refused line as its answer quotes it: on one line, cut after a word to ``limit`` characters
    (the mark of the cut is ASCII: a subject's non-ASCII word is encoded, and spaced oddly)."""
    line = " ".join(line.split())
    return line if len(line) <= limit else line[: limit - 3].rsplit(" ", 1)[0] + "..."


_TOLD_LATER = frozenset((EventKind.ROLLED, EventKind.CANNOT_MOVE, EventKind.MOVED, EventKind.AUTOMOVED))
"""What a player is not sent a mail for (unless ``copies on``): it is told in their next mail."""
_OWN_DECISIONS = frozenset((EventKind.DOUBLED, EventKind.BEAVERED, EventKind.TOOK, EventKind.RESIGN_REJECTED))
"""A player's own decisions, which need no mail to themselves (the opponent's answer brings one).
An offer to resign or of a draw is confirmed: the confirmation says how it stands and ends."""
_TO_ACT = frozenset(("move", "roll_or_double", "answer_double", "answer_resign", "answer_draw", "accept"))
"""The ``next`` steps of a letter that ask its reader to do something."""
MAX_WAITING_NEWS = 200
"""Events kept for a seat's next mail, at most (the newest): a day of automatic plays fits."""


@dataclass
class Conversation:
    session: Session
    config: Config
    sender: Player
    answering: Answering
    """The mail the sender's letters thread under."""
    dice: DiceRoller
    now: datetime
    news: dict[int, News] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)
    """Texts for the sender that belong to no match."""
    erred: set[int | None] = field(default_factory=set)
    """The matches (None: no match) whose letter to the sender explains an error: it ends with
    the short help."""
    reply_token: str | None = None
    """A confirmation token for the general letter's Reply-To (account commands held for proof)."""
    written_language: str | None = None
    """The language the sender's mail is written in: theirs until they have one saved."""
    answer_needed: bool = True
    """False: a mail that asked only for what the service declined to send (a confirmation
    request over its limit) gets no "nothing to do" answer either."""
    invitation_apart: bool = False
    """The mail holds an invitation (sent or refused): what the sender is told about it goes into
    a letter of its own, never into the thread of the game the mail answers."""
    on_page: bool = False
    """The commands came from the web board, which shows the sender the result at once: a
    letter that would only repeat it is left out, as with ``copies off``."""
    automatic: bool = False
    """Events recorded now are done by the service (:func:`pbem.service.play.advance`)."""
    general_subject: str | None = None
    """The subject of the sender's general letter: that of its first text that has one (a
    tournament opened, a ladder's standing, a refusal…); else "Your mail to …"."""
    bulletins: dict[int, tuple[Player, list[str], str | None, str | None]] = field(default_factory=dict)
    """Texts for players other than the sender, about no one match (a tournament's round), by
    player id, with the confirmation token of the letter's Reply-To if it asks for a ``yes``,
    and the letter's subject (of its first text that has one): each gets a letter of their own,
    in their own language."""

    # -- recording ------------------------------------------------------------------------

    def news_of(self, table: Table) -> News:
        if table.id not in self.news:
            self.news[table.id] = News(table)
        return self.news[table.id]

    def event(self, table: Table, kind: EventKind, seat: int | None = None, /, **data: Any) -> None:
        """Record an event both seats hear about (positional-only: the data may name a ``kind``)."""
        news = self.news_of(table)
        news.events.append(Event(kind, seat, data, self.automatic))
        news.notify.update((0, 1))

    def say(self, text: str, table: Table | None = None) -> None:
        """Tell the sender ``text`` (already worded), in the letter of ``table`` if given."""
        if table is None:
            self.general.append(text)
        else:
            self.news_of(table).for_sender.append(text)

    def say_template(self, macro: Notice, table: Table | None = None, **context: Any) -> None:
        """Tell the sender one of the ``notices.txt`` texts."""
        self.say(self.notice(macro, **context), table)
        if table is None:
            self.name_answer(macro, **context)

    def name_answer(self, macro: Notice, **context: Any) -> None:
        """Give the sender's general letter the subject of ``macro`` (its ``subject_…`` macro, or
        the refusals' one), unless an earlier text named it already; a request to confirm always
        names it, as the one thing its reader must answer."""
        if self.general_subject is not None and macro is not Notice.CONFIRM_ACCOUNT:
            return
        module = _module("notices.txt", self.language(self.sender), self.sender_context())
        named = getattr(module, f"subject_{macro}", None)
        if named is not None:
            self.general_subject = str(named(**context)).strip()
        elif macro in REFUSALS:
            self.general_subject = str(module.subject_refusal()).strip()

    def notice(self, macro: Notice, **context: Any) -> str:
        module = _module("notices.txt", self.language(self.sender), self.sender_context())
        return str(getattr(module, macro)(**context)).strip()

    def tell(self, player: Player, macro: Notice, reply_token: str | None = None, **context: Any) -> None:
        """Tell ``player`` (the sender or anyone else) one of the ``notices.txt`` texts, in a
        letter about no match; the sender's goes into their answer.  ``reply_token``: the
        letter asks for a ``yes`` (a held command, :class:`AccountConfirmation`)."""
        if player.id == self.sender.id and reply_token is None:
            self.say_template(macro, **context)
            return
        module = _module("notices.txt", self.language(player), self.context_of(player))
        text = str(getattr(module, macro)(**context)).strip()
        assert player.id is not None
        # Nobody asked for this letter: a text with a subject_… macro of its own names it, as
        # "Your mail to …" (the answer's subject) would mislead.
        subject_macro = getattr(module, f"subject_{macro}", None)
        subject = None if subject_macro is None else str(subject_macro(**context)).strip()
        held, texts, token, subject_held = self.bulletins.setdefault(player.id, (player, [], reply_token, subject))
        if subject_held is None and subject is not None:
            self.bulletins[player.id] = (held, texts, token, subject)
        texts.append(text)

    def error(self, code: str, details: dict[str, Any] | str, table: Table | None = None, seat: int = 0,
              line: str | None = None) -> None:
        """Tell the sender why something could not be done, in their words and numbering.  A
        command ``line`` that was refused is quoted first, so that the answer names what it refuses;
        the short help (how to write moves, roll, take) follows only an error about playing: not
        one about the game's state, which no help fixes, nor one of a command about no game
        (an invitation, a tournament, a ladder, watching), which its reason already shows how to write."""
        numbering = Numbering(self.sender.numbering)
        language = self.language(self.sender)
        reason = explain(code, details, language, numbering, Colour.of_seat(seat))
        if line is not None:
            reason = self.notice(Notice.REFUSED, line=_quoted_line(line), reason=reason,
                                 example=fix_example(code, language))
        self.say(reason, table)
        if table is None and self.general_subject is None:
            module = _module("notices.txt", self.language(self.sender), self.sender_context())
            self.general_subject = str(module.subject_refusal(line=_quoted_line(line or "", MAX_SUBJECT_LINE))).strip()
        if code not in ERRORS_WITHOUT_HELP and not (line is not None and commands.about_no_game(line)):
            self.erred.add(None if table is None else table.id)

    def help_text(self, table: Table | None, short: bool = False) -> str:
        """The help (or its short form) with move examples in the sender's numbering.

        In the fixed numbering White and Black write different numbers: a player in a game gets
        their side's examples, a player outside one gets both.
        """
        seat = None if table is None else table.seat_of(self.sender)
        if seat is not None:
            colours = [Colour.of_seat(seat).value]
        else:
            colours = ["white", "black"] if self.sender.numbering == Numbering.FIXED.value else ["white"]
        return self.notice(Notice.HELP_SHORT if short else Notice.HELP, colours=colours)

    # -- helpers --------------------------------------------------------------------------

    def language(self, player: Player) -> str:
        """The player's saved language; for a sender without one, that of their mail; else the
        service's."""
        written = self.written_language if player.id == self.sender.id else None
        return player.language or written or self.config.service.language

    def sender_context(self) -> dict[str, Any]:
        return self.context_of(self.sender)

    def context_of(self, player: Player) -> dict[str, Any]:
        return {"numbering": player.numbering, "colour": "white", "service": self.config.service,
                "games_link": games_link(self.session, player, self.config)}

    # -- letters --------------------------------------------------------------------------

    def letters(self) -> list[tuple[Player, Table | None, Letter]]:
        """One letter per match and recipient with news, and one general answer if needed.

        The sender always gets an answer: their general texts go into the letter of the match
        their mail was about when there is exactly one, else into a letter of their own.  The
        letters of matches that began with this mail come last (:attr:`News.opened`).
        """
        result: list[tuple[Player, Table | None, Letter]] = []
        opened: list[tuple[Player, Table | None, Letter]] = []
        sender_tables = [news for news in self.news.values() if news.table.seat_of(self.sender) is not None]
        general = list(self.general)
        if len(sender_tables) == 1 and general and self.reply_token is None and not self.invitation_apart:
            sender_tables[0].for_sender[:0] = general
            general = []
            if None in self.erred:
                self.erred.add(sender_tables[0].table.id)
        copy_left_out = False
        for news in self.news.values():
            table = news.table
            sender_seat = table.seat_of(self.sender)
            letters = opened if news.opened else result
            for seat in (0, 1):
                if seat == sender_seat and self._only_a_copy(news, seat):
                    copy_left_out = True
                    self._keep_for_next_mail(news, seat)
                elif seat == sender_seat and general and self.invitation_apart and self._nothing_new(news):
                    pass  # the answer is the invitation's own letter; this game has nothing new
                elif seat == sender_seat:
                    letters.append((self.sender, table, self._game_letter(news, seat, reply=True)))
                elif seat not in news.notify or is_assistant(table.players[seat]):
                    pass
                elif table.players[seat].copies or self._wanted(news, seat):
                    letters.append((table.players[seat], table, self._game_letter(news, seat, reply=False)))
                else:
                    self._keep_for_next_mail(news, seat)
        if general or (self.answer_needed
                       and not (copy_left_out or any(player.id == self.sender.id for player, _, _ in result + opened))):
            result.append((self.sender, None, self._general_letter(general)))
        for player, texts, token, subject in self.bulletins.values():
            if not is_assistant(player):
                result.append((player, None, self._bulletin(player, texts, token, subject)))
        return result + opened

    def _bulletin(self, player: Player, texts: list[str], token: str | None, subject: str | None) -> Letter:
        """A letter to someone other than the sender, about no match: a thread of its own."""
        language = self.language(player)
        context = self.context_of(player)
        subject = subject or str(_module("notices.txt", language, context).subject_general()).strip()
        return Letter(to_address=player.address, to_name=player.name, subject=subject,
                      text=render("notice.txt", language, texts=texts, **context),
                      html=render("notice.html", language, texts=texts, subject=subject, **context),
                      language=language, token=token,
                      unsubscribe=unsubscribe_links(self.session, player, self.config) if token else ())

    def _nothing_new(self, news: News) -> bool:
        return not (news.events or news.for_sender or news.attachments or news.table.id in self.erred)

    def _only_a_copy(self, news: News, seat: int) -> bool:
        """The sender's letter would only repeat what they did (unless ``copies on``; always on
        the web board): something was done, nothing for them alone, no error, nothing they must
        act on; it is left out.  A mail that did nothing (``board``) is always answered."""
        return ((not self.sender.copies or self.on_page) and bool(news.events) and not news.for_sender
                and news.table.id not in self.erred and not self._wanted(news, seat))

    def _wanted(self, news: News, seat: int) -> bool:
        """A mail to ``seat`` is wanted by a correspondence player: they must act, something is
        for them alone (a note, an answer to their offer), or a game begins or ends.  The
        opponent's move and roll alone, and their own decisions, wait for their next mail."""
        table, game = news.table, news.table.game
        if table.status is not MatchStatus.RUNNING or game is None or game.phase is game_rules.Phase.OVER:
            return True
        if _next_step(table, seat) in _TO_ACT or table.seats[seat].notes:
            return True
        return not all(event.kind in _TOLD_LATER or (event.seat == seat and event.kind in _OWN_DECISIONS)
                       for event in news.events)

    def _keep_for_next_mail(self, news: News, seat: int) -> None:
        """Keep what ``seat`` is not sent a mail about for its next mail: all of it, but what
        they did themselves by a command of this mail (they know it)."""
        sender_seat = news.table.seat_of(self.sender)
        kept = [event.to_dict() for event in news.events
                if not (seat == sender_seat and event.seat == seat and not event.automatic)]
        if kept:
            holder = news.table.seats[seat]
            holder.news = [*holder.news, *kept][-MAX_WAITING_NEWS:]

    def _general_letter(self, texts: list[str]) -> Letter:
        language = self.language(self.sender)
        if not texts:
            texts = [self.notice(Notice.NOTHING_TO_DO)]
        if None in self.erred:
            texts = [*texts, self.help_text(None, short=True)]
        context = self.sender_context()
        subject = self.general_subject or str(_module("notices.txt", language, context).subject_general()).strip()
        text = render("notice.txt", language, texts=texts, **context)
        return Letter(
            to_address=self.sender.address,
            to_name=self.sender.name,
            subject=subject,
            text=text,
            html=render("notice.html", language, texts=texts, subject=subject, **context),
            language=language,
            token=self.reply_token,
            in_reply_to=self.answering.message_id,
            references=self.answering.references,
            unsubscribe=unsubscribe_links(self.session, self.sender, self.config) if self.reply_token else (),
        )

    def _game_letter(self, news: News, seat: int, reply: bool) -> Letter:
        table = news.table
        player = table.players[seat]
        language = self.language(player)
        waiting = [Event.from_dict(document) for document in table.seats[seat].news]
        table.seats[seat].news = []
        view = game_view(table, seat, self.config, self.now, move_told=tells_move(1 - seat, [*waiting, *news.events]))
        events = [render_event(event, table, seat, language) for event in [*waiting, *news.events]]
        texts = news.for_sender if reply else []
        if reply and table.id in self.erred:
            texts = [*texts, self.help_text(table, short=True)]
        notes = table.take_notes(seat)
        context = {**view.template_context(), "events": events, "texts": texts, "notes": notes,
                   "games_link": games_link(self.session, player, self.config)}
        module = _module("game.txt", language, context)  # made by rendering the letter: its text is the module's
        subject = str(module.subject(news.events)).strip()
        text = wrap_prose(str(module))
        images: tuple[InlineImage, ...] = ()
        context |= {"board_cid": None, "board_alt": None}
        if view.board_view is not None:
            board = InlineImage(new_content_id("board", self.config.service.address), "board.png",
                                render_board_png(view.board_view, language))
            context |= {"board_cid": board.content_id, "board_alt": board_alt(view.board_view, language)}
            images = (board,)
        html = render("game.html", language, subject=subject, **context)
        in_reply_to: str | None
        if reply:
            in_reply_to, references = self.answering.message_id, self.answering.references
        else:
            thread = table.thread(seat)
            in_reply_to, references = (thread[-1] if thread else None), tuple(thread[:-1])
        return Letter(
            to_address=player.address,
            to_name=player.name,
            subject=subject,
            text=text,
            language=language,
            token=table.token(seat),
            stamp=table.stamp,
            in_reply_to=in_reply_to,
            references=references,
            attachments=tuple(news.attachments),
            html=html,
            images=images,
            unsubscribe=(unsubscribe_links(self.session, player, self.config)
                         if table.status is MatchStatus.INVITED and seat == 1 else ()),
        )


def shown_name(player: Player, language: str, level: str | None = None) -> str:
    """The name a letter shows: the Assistant's in the reader's language (with the ``level`` it
    plays at in this match, if any: "Assistant (beginner)"), else the display name."""
    if not is_assistant(player):
        return player.display_name
    name = ASSISTANT_NAMES.get(language, player.display_name)
    return f"{name} ({level_name(level, language)})" if level else name


def seat_name(table: Table, seat: int, language: str) -> str:
    """The name a letter about ``table`` shows for ``seat``: the Assistant's with its level."""
    return shown_name(table.players[seat], language, table.record.assistant_level)


@lru_cache(maxsize=32)
def level_name(level: str, language: str) -> str:
    """An Assistant level's name in ``language`` (``world_class`` → "world class", "Weltklasse")."""
    return str(_module("lines.txt", language, {}).assistant_level(level)).strip()


def last_mail_of(table: Table, seat: int) -> Answering:
    """The last mail of the seat's thread: a letter of the daemon's jobs (a clock's alarm, a
    review) threads under it, as an answer to the player's mail does under that mail."""
    thread = table.thread(seat)
    return Answering(thread[-1] if thread else None, tuple(thread[:-1]))


def page_token_of(session: Session, player: Player) -> str:
    """The secret of ``player``'s own page of all their games, made the first time it is needed."""
    if player.page_token is None:
        player.page_token = new_token()
        session.add(player)
    return player.page_token


def unsubscribe_links(session: Session, player: Player, config: Config) -> tuple[str, ...]:
    """The ``List-Unsubscribe`` URIs of an invitation or a confirmation request to ``player``:
    a mail to the service with the address's own unsubscribe token, and the one-click link on
    the web board; none for a player who has played here (who asked for the mail, so to speak)."""
    if has_played(session, player):
        return ()
    if player.unsubscribe_token is None:
        player.unsubscribe_token = new_token()
        session.add(player)
    mailto = f"mailto:{reply_address(config.service.address, player.unsubscribe_token)}?subject=stop"
    return (mailto,) if config.web is None else (mailto, config.web.unsubscribe_link(player.unsubscribe_token))


def has_played(session: Session, player: Player) -> bool:
    """Whether ``player`` has sat at a match that started (an invitation accepted)."""
    return session.exec(select(Seat.match_id).join(MatchRecord, col(MatchRecord.id) == Seat.match_id).where(
        Seat.player_id == player.id,
        col(MatchRecord.status).in_([MatchStatus.RUNNING.value, MatchStatus.FINISHED.value])).limit(1)).first() \
        is not None


def games_link(session: Session, player: Player, config: Config) -> str | None:
    """The link to ``player``'s page of all their games, for the footer of every mail to them
    (None: the web board is off, or the player is the Assistant, who gets no mail)."""
    if config.web is None or is_assistant(player):
        return None
    return config.web.games_link(page_token_of(session, player))


def clock_text(clock: dict[str, Any], opponent: str, language: str) -> str:
    """The clocks of one game as its mails word them (for a list of several games)."""
    context = {"opponent": opponent, "names": ["", ""], "me": 0, "numbering": "own", "colour": "white"}
    return str(_module("lines.txt", language, context).clock_line(clock)).strip()


def _module(template: str, language: str, context: dict[str, Any]) -> Any:
    """A template's macros (subjects, events, notices): the pieces a letter is made of."""
    return environment().get_template(f"{language}/{template}").make_module({"language": language, **context})


_MOVES_TOLD = frozenset((EventKind.MOVED, EventKind.AUTOMOVED, EventKind.CANNOT_MOVE))


def tells_move(mover: int, events: list[Event]) -> bool:
    """The events tell a move (or a roll that could not move) of ``mover``: what the board's last
    move line would say again."""
    return any(event.kind in _MOVES_TOLD and event.seat == mover for event in events)


def render_event(event: Event, table: Table, seat: int, language: str) -> str:
    """One event worded for ``seat``: "you" for their own actions, the opponent's name else."""
    numbering = table.numbering(seat)
    names = (seat_name(table, 0, language), seat_name(table, 1, language))
    # An offer to resign answered in the same mail (by the Assistant) no longer stands.
    offer_stands = table.game is not None and table.game.resign_offer is not None
    data = dict(event.data)
    if "plays" in data:
        data["play"] = data.pop("plays")[numbering.value]
    module = _event_module(language, numbering.value, Colour.of_seat(seat).value, seat, names, offer_stands)
    return str(getattr(module, event.kind)(event.seat, data)).strip()


EVENT_MODULES_KEPT = 512
"""How many ``events.txt`` modules are kept: one per seat of each match being played."""


@lru_cache(maxsize=EVENT_MODULES_KEPT)
def _event_module(language: str, numbering: str, colour: str, me: int, names: tuple[str, str],
                  offer_stands: bool) -> Any:
    """The event macros for one seat of one match, made once rather than for every event (making
    a module runs the whole template: a tenth of a move's work when every event made its own)."""
    context = {"numbering": numbering, "colour": colour, "me": me, "names": list(names), "offer_stands": offer_stands}
    return _module("events.txt", language, context)


def play_texts(before: Position, play: Play, mover: int) -> dict[str, str]:
    """A play in both numberings, written from the mover's side (as gnubg and FIBS do)."""
    colour = Colour.of_seat(mover)
    return {numbering.value: format_play(before, play, numbering, colour) for numbering in Numbering}


def game_view(table: Table, seat: int, config: Config, now: datetime, move_told: bool = False) -> GameView:
    """Everything a game letter shows, from ``seat``'s side: board, score, clocks, what to do next.
    ``move_told``: the letter tells the opponent's last move among its events, so the board does
    not say it again."""
    player = table.players[seat]
    opponent = table.players[1 - seat]
    numbering = table.numbering(seat)
    colour = Colour.of_seat(seat)
    language = player.language or config.service.language
    game = table.game
    rules = table.score.rules
    points = table.score.points
    view = GameView(
        numbering=numbering.value,
        colour=colour.value,
        me=seat_name(table, seat, language),
        opponent=seat_name(table, 1 - seat, language),
        names=[seat_name(table, 0, language), seat_name(table, 1, language)],
        seat=seat,
        status=table.status.value,
        rules=rules,
        score=scoring.seen_from(points, seat),
        game_number=table.record.game_number,
        next=_next_step(table, seat),
        winner=scoring.winner(table.score),
        service=config.service,
        reply_to=reply_address(config.service.address, table.token(seat)),
        clock=clocks.clock_view(table, seat, config, now),
        web_link=None if config.web is None else config.web.link(table.token(seat)),
        rematch=table.record.tournament_id is None,
    )
    prize = table.prize if table.status is MatchStatus.RUNNING else None
    if prize is not None:
        view = replace(view, prize=prize, at_stake=prizes.at_stake(prize, game.cube if game is not None else 1))
    if game is None:
        return view
    example = None
    if view.next == "move":
        plays = legal_plays(game.board, game.dice) if game.dice else {}
        if plays:
            example = format_play(game.board, example_play(plays.values()), numbering, colour)
    board = game.board if game.seat == seat else game.board.swap()
    crawford = game.crawford and table.status is not MatchStatus.FINISHED  # no Crawford game on a finished match
    # The score before this game, except after the last game, when the final score stands.
    points = table.score.points if table.status is MatchStatus.FINISHED else game.score
    score_points = scoring.seen_from(points, seat)
    board_view = BoardView(
        position=board,
        numbering=numbering,
        colour=colour,
        viewer_name=shown_name(player, language),
        opponent_name=shown_name(opponent, language),
        turn=None if game.to_act is None else Who.VIEWER if game.to_act == seat else Who.OPPONENT,
        dice=game.dice,
        cube_value=game.cube,
        cube_owner=None if game.cube_owner is None else (Who.VIEWER if game.cube_owner == seat else Who.OPPONENT),
        cube_offered=None if game.phase is not game_rules.Phase.DOUBLE_OFFERED or game.to_act is None
        else Who.OPPONENT if game.to_act == seat else Who.VIEWER,
        score=BoardScore(
            kind=rules.format,
            length=rules.length if rules.format in (scoring.Format.MATCH, scoring.Format.GAMES) else None,
            viewer=score_points[0],
            opponent=score_points[1],
            crawford=crawford,
        ),
        last_move=_last_move(game, seat),
        last_move_told=move_told,
    )
    return replace(
        view,
        example=example,
        dice=game.dice,
        cube=game.cube,
        offered=game.cube * 2,
        beavered=game.beavered,
        beaver_allowed=not game.beavered and cube_rules.beaver_refusal(rules, game.cube * 2) is None,
        crawford=crawford,
        ids={"position": position_id(game.board), "match": match_id(game_rules.match_id_state(game))},
        board=render_text_board(board_view, language),
        board_view=board_view,
    )


def _last_move(game: game_rules.Game, seat: int) -> LastMove | None:
    """The opponent's latest play, while it is still the last thing that happened on the board."""
    moves_made = [action for action in game.record if action.kind == game_rules.ActionKind.MOVE]
    if not moves_made or moves_made[-1].seat == seat or game.phase is game_rules.Phase.OVER:
        return None
    return LastMove(before=_board_before_last_move(game), play=moves_made[-1].play or ())


def _board_before_last_move(game: game_rules.Game) -> Position:
    """Replays the record from the start: the board the last play was made on, from its mover."""
    board, side, before = Position.start(), game.record[0].seat, Position.start()
    for action in game.record:
        if action.kind != game_rules.ActionKind.MOVE:
            continue
        before = board if side == action.seat else board.swap()
        board, side = apply_play(before, action.play or ()), action.seat
    return before


def _next_step(table: Table, seat: int) -> str:
    """What the letter asks of ``seat`` (a key of the ``next`` texts in ``game.txt``)."""
    status = table.status
    if status is MatchStatus.INVITED:
        return "accept" if seat == 1 else "wait_invitation"
    if status is MatchStatus.DECLINED:
        return "declined"
    if status is MatchStatus.FINISHED:
        return "finished"
    game = table.game
    assert game is not None
    if game.resign_offer is not None:
        # The offerer may still play on (which withdraws the offer), but is not told "your turn".
        return "answer_resign" if game.resign_offer[0] == 1 - seat else "wait_resign"
    if game.to_act != seat and game.draw_offer == 1 - seat:
        return "answer_draw"
    if game.to_act != seat:
        return "wait_answer" if game.phase is game_rules.Phase.DOUBLE_OFFERED else "wait"
    return {
        game_rules.Phase.ROLL_OR_DOUBLE: "roll_or_double",
        game_rules.Phase.TO_MOVE: "move",
        game_rules.Phase.DOUBLE_OFFERED: "answer_double",
        game_rules.Phase.TO_ROLL: "wait",
    }[game.phase]
