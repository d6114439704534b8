"""What one incoming mail makes the service say, and to whom.

While the commands of a mail run, they only record *news*: events of a match ("Ben played
13/7 8/7", "Anna doubles to 2"), answers meant for the sender alone (an error, a language
confirmation, the help text) and the seats that must hear about it.  At the end,
:meth:`Conversation.letters` turns the news into at most one letter per person and match,
each worded in its recipient's language and numbering and showing the current state, so that
several commands in one mail still give one tidy answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session

from pbem import commands
from pbem.config import Config
from pbem.mail.composing import InlineImage, Letter, new_content_id
from pbem.render.board_image import board_alt, render_board_png
from pbem.render.templating import explain, fix_example, render, wrap_prose
from pbem.render.views import EventKind, Notice
from pbem.rules import game as game_rules
from pbem.rules.notation import Colour, Numbering
from pbem.service.table.assistant import is_assistant
from pbem.service.table.dice import DiceRoller
from pbem.service.table.letters import (game_view, games_link, next_step, render_event, tells_move,
                                        template_module, unsubscribe_links)
from pbem.service.table.news import Answering, Event, News
from pbem.service.table.tables import Table
from pbem.store.game_records import MatchStatus, Player




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
    """Events recorded now are done by the service (:func:`pbem.service.games.play.advance`)."""
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
        module = template_module("notices.txt", self.language(self.sender), self.sender_context())
        named = getattr(module, f"subject_{macro}", None)
        if named is not None:
            self.general_subject = str(named(**context)).strip()
        elif macro in REFUSALS:
            self.general_subject = str(module.subject_refusal()).strip()

    def notice(self, macro: Notice, **context: Any) -> str:
        module = template_module("notices.txt", self.language(self.sender), self.sender_context())
        return str(getattr(module, macro)(**context)).strip()

    def tell(self, player: Player, macro: Notice, reply_token: str | None = None, **context: Any) -> None:
        """Tell ``player`` (the sender or anyone else) one of the ``notices.txt`` texts, in a
        letter about no match; the sender's goes into their answer.  ``reply_token``: the
        letter asks for a ``yes`` (a held command, :class:`AccountConfirmation`)."""
        if player.id == self.sender.id and reply_token is None:
            self.say_template(macro, **context)
            return
        module = template_module("notices.txt", self.language(player), self.context_of(player))
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
            module = template_module("notices.txt", self.language(self.sender), self.sender_context())
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
        subject = subject or str(template_module("notices.txt", language, context).subject_general()).strip()
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
        if next_step(table, seat) in _TO_ACT or table.seats[seat].notes:
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
        subject = self.general_subject or str(template_module("notices.txt", language, context).subject_general()).strip()
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
        module = template_module("game.txt", language, context)  # made by rendering the letter: its text is the module's
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


