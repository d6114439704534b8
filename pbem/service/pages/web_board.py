"""The web board's side of the game service: the page of a game link, and its forms applied.

A game link ``BASE_URL/g/<token>`` carries the seat's token, the one in the Reply-To of its
mails: it finds the match and the seat exactly as a reply does (:func:`table_for_token`).  A
form is applied as a mail's game command is: in one transaction, with the match row locked
(:func:`~pbem.service.table.tables.locked_match`, so several daemons never apply two moves to one
game), through :func:`pbem.service.games.play.apply_game_command`, and the letters are queued by
:func:`pbem.service.mailroom.post.send_letters`, as for a mail: the opponent's mail, and the sender's
only where it says more than the page showed them (their turn again, an error, a note), as
with ``copies off``.

Every page shows the ``version`` of the state it was made from; a form made on another version
(the opponent has moved since, or the same move came by mail) changes nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, col, select

from pbem import commands
from pbem.addresses import ADDRESS_PATTERN
from pbem.config import Config
from pbem.render.board_svg import board_layout, checker_counts, render_board_svg
from pbem.render.web_page import web_text
from pbem.render.text_board import format_last_move
from pbem.render.charts import chart_svg
from pbem.render.review_chart import chart_caption, review_chart
from pbem.render.views import (EventKind, FrontView, LadderPageView, MoveLine, PageAction, PageOutcome, PageResult,
                               PageReview, PageView, PlayerPageView, ReviewView, TournamentPageView, UnsubscribeView,
                               WatchView)
from pbem.rules import game as rules
from pbem.rules.moves import apply_play, apply_step, legal_plays, play_graph
from pbem.rules.notation import Colour, Numbering, format_play
from pbem.rules.position import Position
from pbem.rules import prizes, scoring
from pbem.rules.scoring import WinKind
from pbem.service.games import play
from pbem.service.mailroom.bounces import failures_of_match
from pbem.service.mailroom.post import send_letters
from pbem.service.pages import tournament_page
from pbem.service.pages.ladder_page import ladder_page
from pbem.service.pages.player_page import PlayerPages
from pbem.service.pages.reports import match_file, match_filename
from pbem.service.people import invitations
from pbem.service.table import assistant
from pbem.service.table.conversation import Conversation
from pbem.service.table.dice import SEEDED_DICE, DiceRoller
from pbem.service.table.letters import game_view, play_texts, render_event, shown_name
from pbem.service.table.news import Event, last_mail_of
from pbem.service.table.tables import Table, table_for_token
from pbem.service.watching import watchers
from pbem.store.db import session_scope, utc_now
from pbem.store.game_records import MatchStatus, Player, ReviewJob

log = logging.getLogger(__name__)
_ADDRESS = re.compile(ADDRESS_PATTERN, re.IGNORECASE)


class WebBoard:
    """The service behind the web app (:class:`pbem.web.app.BoardService`)."""

    def __init__(self, config: Config, engine: Engine, dice: DiceRoller = SEEDED_DICE,
                 clock: Callable[[], datetime] = utc_now) -> None:
        self.config = config
        self.engine = engine
        self.dice = dice
        self.clock = clock

    def page(self, token: str) -> PageView | None:
        """The page of ``token``'s game; None for a token that names no seat."""
        with Session(self.engine, expire_on_commit=False) as session:
            found = table_for_token(session, token, lock=False)
            if found is None:
                return None
            return page_view(session, found[0], found[1], self.config, self.clock())

    def version(self, token: str) -> str | None:
        """The version of the state the page of ``token`` shows (for the page's polling)."""
        with Session(self.engine) as session:
            found = table_for_token(session, token, lock=False)
            return None if found is None else state_version(found[0], found[1], self.config)

    def language(self, token: str) -> str | None:
        """The language of the player ``token`` names (None: no seat)."""
        with Session(self.engine) as session:
            found = table_for_token(session, token, lock=False)
            return None if found is None else found[0].players[found[1]].language or self.config.service.language

    def player_page(self, page_token: str) -> PlayerPageView | None:
        """A player's own page of all their games (:mod:`pbem.service.pages.player_page`)."""
        return PlayerPages(self.config, self.engine, self.clock).page(page_token)

    def tournament_page(self, code: str, page_token: str | None) -> TournamentPageView | None:
        """A tournament's page (:func:`pbem.service.pages.tournament_page.page_view`)."""
        with Session(self.engine) as session:
            return tournament_page.page_view(session, self.config, code, page_token)
    def ladder_page(self, code: str) -> LadderPageView | None:
        """A ladder's read-only page (:mod:`pbem.service.pages.ladder_page`)."""
        return ladder_page(self.config, self.engine, code)

    def unsubscribe(self, unsubscribe_token: str, apply: bool) -> UnsubscribeView | None:
        """The page of an address's List-Unsubscribe link; with ``apply`` (its POST) the address
        gets no more invitations, as after ``stop``.  None for a token that names no address."""
        with session_scope(self.engine) as session:
            player = session.exec(select(Player).where(Player.unsubscribe_token == unsubscribe_token)).first()
            if player is None:
                return None
            if apply and not player.refuses_invitations:
                player.refuses_invitations = True
                session.add(player)
                log.info("player %s: no more invitations (List-Unsubscribe)", player.id)
            return UnsubscribeView(player.language or self.config.service.language, self.config.service, apply)

    def watch_page(self, code: str) -> WatchView:
        """The read-only page of the match with this watch code (:mod:`pbem.service.watching.watchers`)."""
        with Session(self.engine) as session:
            return watchers.watch_page(session, self.config, code, self.clock(),
                                       lambda table: moves_so_far(table, 0, Numbering.OWN))

    def match_file(self, token: str) -> tuple[str, str] | None:
        """The ``.mat`` of ``token``'s match so far (its file name, its text); None for no seat."""
        with Session(self.engine) as session:
            found = table_for_token(session, token, lock=False)
            if found is None:
                return None
            text = match_file(session, found[0].id)
            return None if text is None else (match_filename(found[0]), text)

    def front_page(self, language: str | None) -> FrontView:
        """The front page ``/``, in ``language`` (None: the service's)."""
        return FrontView(language or self.config.service.language, self.config.service, self._assistant)

    @functools.cached_property
    def _assistant(self) -> bool:
        """Whether ``play assistant`` works here (the engine loads; asked once)."""
        return assistant.available(self.config)

    def act(self, token: str, version: str, action: PageAction, argument: str = "") -> PageOutcome:
        """Apply one form of the page made on ``version``; see the module docstring."""
        try:
            with session_scope(self.engine) as session:
                return _act(session, self.config, self.dice, self.clock(), token, version, action, argument)
        except _Refused as refused:
            return PageOutcome(PageResult.REFUSED, refused.texts)
        except StaleDataError:  # another process changed the match between our read and write
            return self._stale(token)

    def _stale(self, token: str) -> PageOutcome:
        """A form that lost the race to another one: why, and the page as it stands now."""
        with Session(self.engine, expire_on_commit=False) as session:
            found = table_for_token(session, token, lock=False)
            if found is None:
                return PageOutcome(PageResult.GONE)
            table, seat = found
            language = table.players[seat].language or self.config.service.language
            return PageOutcome(PageResult.STALE, (_stale_reason(table, seat, language),),
                               page_view(session, table, seat, self.config, self.clock()))


class _Refused(Exception):
    """A form the rules refuse: the transaction is rolled back, nothing is sent."""

    def __init__(self, texts: tuple[str, ...]) -> None:
        super().__init__(*texts)
        self.texts = texts


def _act(session: Session, config: Config, dice: DiceRoller, now: datetime, token: str, version: str,
         action: PageAction, argument: str) -> PageOutcome:
    found = table_for_token(session, token)  # locks the match, as a mail's reply token does
    if found is None:
        return PageOutcome(PageResult.GONE)
    table, seat = found
    player = table.players[seat]
    language = player.language or config.service.language
    if state_version(table, seat, config) != version:
        return PageOutcome(PageResult.STALE, (_stale_reason(table, seat, language),),
                           page_view(session, table, seat, config, now))
    if action in (PageAction.JOIN, PageAction.DECLINE):
        return _answer_invitation(session, config, dice, now, table, seat, action)
    command = _command(action, argument)
    if command is None:
        raise _Refused((_not_a_move(table, seat, config, now),))
    talk = Conversation(session, config, player, last_mail_of(table, seat), dice, now, on_page=True)
    before = (table.status, table.game)
    play.apply_game_command(talk, table, seat, command)  # the function a mail's game command runs through
    news = talk.news_of(table)
    if (table.status, table.game) == before:
        raise _Refused(tuple(news.for_sender) or (_not_a_move(table, seat, config, now),))
    send_letters(talk)
    return PageOutcome(PageResult.DONE, tuple(news.for_sender), page_view(session, table, seat, config, now))


def _answer_invitation(session: Session, config: Config, dice: DiceRoller, now: datetime, table: Table, seat: int,
                       action: PageAction) -> PageOutcome:
    """The invitee's ``accept`` or ``decline``, applied as the reply to the invitation mail is."""
    player = table.players[seat]
    language = player.language or config.service.language
    if table.status is not MatchStatus.INVITED or seat != 1:
        raise _Refused((web_text(language, "not_now"),))
    talk = Conversation(session, config, player, last_mail_of(table, seat), dice, now, on_page=True)
    (invitations.accept if action is PageAction.JOIN else invitations.decline)(talk, table, seat)
    news = talk.news_of(table)
    if table.status is MatchStatus.INVITED:  # a prize game whose deposits are not covered
        raise _Refused(tuple(news.for_sender) or (web_text(language, "not_now"),))
    send_letters(talk)
    return PageOutcome(PageResult.DONE, tuple(news.for_sender), page_view(session, table, seat, config, now))


def _not_a_move(table: Table, seat: int, config: Config, now: datetime) -> str:
    """The refusal of a text that is no move, with the example its mail shows (a legal play,
    in the player's numbering and from their side)."""
    language = table.players[seat].language or config.service.language
    return web_text(language, "not_a_move", game_view(table, seat, config, now).example)


def _command(action: PageAction, argument: str) -> play.GameCommand | None:
    """The game command of a button, or of the move typed or dragged (None: not a move)."""
    match action:
        case PageAction.MOVE:
            parsed = commands.parse_commands(argument[:200])
            if len(parsed) == 1 and isinstance(parsed[0], play.GameCommand):
                return parsed[0]
            return None
        case PageAction.RESIGN:
            kinds = {"single": WinKind.SINGLE, "gammon": WinKind.GAMMON, "backgammon": WinKind.BACKGAMMON}
            return commands.OfferResignation(int(kinds[argument])) if argument in kinds else None
    simple: dict[PageAction, play.GameCommand] = {
        PageAction.ROLL: commands.Roll(), PageAction.DOUBLE: commands.Double(), PageAction.TAKE: commands.Take(),
        PageAction.DROP: commands.Drop(), PageAction.BEAVER: commands.Beaver(), PageAction.ACCEPT: commands.Accept(),
        PageAction.REJECT: commands.Decline(), PageAction.DRAW: commands.Remis(),
    }
    return simple[action]


def state_version(table: Table, seat: int, config: Config) -> str:
    """A short fingerprint of what the page of ``seat`` shows (the match's state, game and
    score, and the viewer's numbering and language; not its mail threads or notes): equal
    versions, equal pages.  A page made in another numbering is stale: its moves are written
    in the other one."""
    player = table.players[seat]
    shown = [table.record.status, table.record.game_number, table.record.score, table.record.game,
             table.numbering(seat).value, player.language or config.service.language]
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()[:20]


def _stale_reason(table: Table, seat: int, language: str) -> str:
    """Why a form came too late: the opponent acted meanwhile, or the player themself (by mail)."""
    game = table.game
    last = game.record[-1].seat if game is not None and game.record else None
    return web_text(language, "stale_own" if last == seat else "stale_opponent")


def page_view(session: Session, table: Table, seat: int, config: Config, now: datetime) -> PageView:
    """What the page of ``seat`` shows, built from the view its mails show, and the mails of the
    match that bounced (a player whose mails do not arrive cannot know it is their turn)."""
    player = table.players[seat]
    language = player.language or config.service.language
    view = game_view(table, seat, config, now)
    game = table.game
    board = view.board_view
    svg = None if board is None else render_board_svg(board, language)
    play_data: dict[str, Any] | None = None
    actions: tuple[PageAction, ...] = ()
    moves: tuple[MoveLine, ...] = ()
    last_move = None
    pips = None
    if game is not None and board is not None:
        actions = allowed_actions(table, seat)
        moves = moves_so_far(table, seat)
        pips = (board.position.mover_pips, board.position.opponent_pips)
        if board.last_move is not None:
            last_move = format_last_move(board)
        play_data = {"layout": board_layout(board), "counts": checker_counts(board)}
        if PageAction.MOVE in actions and game.dice is not None:
            assert play_data is not None
            play_data["graph"] = _graph(table, seat, game.board, game.dice)
    terms = None
    if table.status is MatchStatus.INVITED:
        terms = render_event(Event(EventKind.INVITED, 0, invitations.invitation_terms(table, config)), table, seat,
                             language)
        if seat == 1:
            actions = (PageAction.JOIN, PageAction.DECLINE)
    return PageView(token=table.token(seat), language=language, version=state_version(table, seat, config), game=view,
                    board_svg=svg, actions=actions, moves=moves, last_move=last_move, pips=pips, play_data=play_data,
                    outcome=outcome_lines(table, seat, language), terms=terms,
                    undelivered=undelivered_lines(session, table, seat, language),
                    review=page_review(session, table, seat, language))


def page_review(session: Session, table: Table, seat: int, language: str) -> PageReview | None:
    """The review of the match's newest game whose review is done and has a chart, worded and
    drawn for ``seat`` as its review mail was (the stored result, no analysis of its own)."""
    done = session.exec(select(ReviewJob).where(ReviewJob.match_id == table.id)
                        .where(col(ReviewJob.done_at).is_not(None)).order_by(col(ReviewJob.game_number).desc())).all()
    job = next((job for job in done if job.result is not None), None)  # a review given up has none
    if job is None or job.result is None:
        return None
    review = ReviewView.of(job.result)
    chances = review.winning_chances(seat)
    if chances is None or not chances.points:
        return None
    names = (shown_name(table.players[0], language), shown_name(table.players[1], language))
    text = render_event(Event(EventKind.GAME_REVIEW, None, {"number": job.game_number, **review.event_data()}),
                        table, seat, language)
    return PageReview(job.game_number, text, chart_svg(review_chart(chances, job.game_number, names, language)),
                      chart_caption(chances, names, language))


def undelivered_lines(session: Session, table: Table, seat: int, language: str) -> tuple[str, ...]:
    """One line per player of the match whose mail bounced for good: the newest failure, with
    the server's reason (any address in it left out: the page is also the opponent's)."""
    lines = []
    failures = failures_of_match(session, table.id)
    for number, player in enumerate(table.players):
        failure = next((failure for failure in failures if failure.address == player.address), None)
        if failure is not None:
            reason = _ADDRESS.sub("…", failure.diagnostic)
            lines.append(web_text(language, "undelivered", number == seat, player.display_name,
                                  f"{failure.reported_at:%Y-%m-%d}", reason))
    return tuple(lines)


def outcome_lines(table: Table, seat: int, language: str) -> tuple[str, ...]:
    """Once the match is over: who won the last game and how many points, and (for a match, a
    series or a money session) who won it and the final score, worded as the last mails were."""
    game = table.game
    if table.status is not MatchStatus.FINISHED or game is None or game.result is None:
        return ()
    result = game.result
    if result.winner is None:
        events = [Event(EventKind.GAME_DRAWN, None, {})]
    else:
        events = [Event(EventKind.GAME_WON, result.winner, {"kind": int(result.kind or 1), "points": result.points,
                                                            "ending": result.ending.value})]
    prize = table.prize
    if table.score.rules.format is not scoring.Format.SINGLE:
        winner = scoring.winner(table.score) if prize is None else prizes.prize_winner(table.score, result)
        left = None if prize is None else prizes.left_the_table(result)
        events.append(Event(EventKind.MATCH_OVER, winner, {"points": list(table.score.points), "left": left,
                                                          "won_with": play.won_with(table, winner, result)}))
    return tuple(render_event(event, table, seat, language) for event in events)


def _graph(table: Table, seat: int, board: Position, dice: tuple[int, int]) -> list[dict[str, object]]:
    """The steps of the legal plays for the page's script; a complete node carries the play as
    the player writes it (the one :func:`legal_plays` names for that board)."""
    numbering, colour = table.numbering(seat), Colour.of_seat(seat)
    legal = legal_plays(board, dice)
    graph = play_graph(board, dice)
    nodes: list[dict[str, object]] = []
    boards = [board] * len(graph)
    for index, node in enumerate(graph):
        for step, _, child in node.steps:
            boards[child] = apply_step(boards[index], step)
    for index, node in enumerate(graph):
        entry: dict[str, object] = {"steps": [[step[0], step[1], int(hit), child] for step, hit, child in node.steps]}
        if node.complete:
            entry["move"] = format_play(board, legal[boards[index]], numbering, colour)
        nodes.append(entry)
    return nodes


def allowed_actions(table: Table, seat: int) -> tuple[PageAction, ...]:
    """The buttons ``seat`` may press now: each one the rules core would accept."""
    game = table.game
    if table.status is not MatchStatus.RUNNING or game is None or game.phase is rules.Phase.OVER:
        return ()
    trials: list[tuple[PageAction, Callable[[], object]]] = [
        (PageAction.ROLL, lambda: rules.roll(game, seat, (1, 2))),
        (PageAction.DOUBLE, lambda: rules.double(game, seat)),
        (PageAction.TAKE, lambda: rules.take(game, seat)),
        (PageAction.DROP, lambda: rules.drop(game, seat)),
        (PageAction.BEAVER, lambda: rules.beaver(game, seat)),
        (PageAction.ACCEPT, lambda: rules.accept_resignation(game, seat)),
        (PageAction.REJECT, lambda: rules.reject_resignation(game, seat)),
        (PageAction.RESIGN, lambda: rules.offer_resignation(game, seat, WinKind.SINGLE)),
        (PageAction.DRAW, lambda: rules.offer_draw(game, seat)),
    ]
    allowed = [action for action, trial in trials if _accepted(trial)]
    if game.phase is rules.Phase.TO_MOVE and game.to_act == seat and game.dice is not None:
        allowed.insert(0, PageAction.MOVE)
    return tuple(allowed)


def _accepted(trial: Callable[[], object]) -> bool:
    try:
        trial()
    except rules.RuleError:
        return False
    return True


def moves_so_far(table: Table, seat: int, numbering_of_page: Numbering | None = None) -> tuple[MoveLine, ...]:
    """The game's record, each play in ``seat``'s numbering (or ``numbering_of_page``) written
    from its mover's side."""
    game = table.game
    assert game is not None
    numbering = (numbering_of_page or table.numbering(seat)).value
    lines = []
    board, side = Position.start(), game.record[0].seat if game.record else 0
    for action in game.record:
        text = None
        if action.kind is rules.ActionKind.MOVE:
            before = board if side == action.seat else board.swap()
            text = play_texts(before, action.play or (), action.seat)[numbering] if action.play else ""
            board, side = apply_play(before, action.play or ()), action.seat
        lines.append(MoveLine(seat=action.seat, kind=action.kind.value, dice=action.dice, play=text, cube=action.cube))
    return tuple(lines)
