"""How the service words what it says: a game letter's view of the board, score, clocks and next
step, one event in its reader's words, the links every letter carries, and whether a letter can
reach its reader at all.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlmodel import Session, col, select

from pbem.config import Config
from pbem.mail.headers import new_token, reply_address
from pbem.render.templating import environment
from pbem.render.views import EventKind, GameView
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
from pbem.service.table import clocks
from pbem.service.table.assistant import NAMES as ASSISTANT_NAMES
from pbem.service.table.assistant import is_assistant
from pbem.service.table.news import Event
from pbem.service.table.tables import Table
from pbem.store.game_records import MatchRecord, MatchStatus, Player, Seat




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
    return str(template_module("lines.txt", language, {}).assistant_level(level)).strip()



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


def undeliverable(player: Player, config: Config) -> bool:
    """Mail to ``player`` bounced ``[limits] bounce_limit`` times for good since they last wrote: no
    letter goes to them (the bounce handling in :mod:`pbem.service.mailroom.bounces` counts)."""
    limit = config.limits.bounce_limit
    return bool(limit) and player.bounces >= limit


def games_link(session: Session, player: Player, config: Config) -> str | None:
    """The link to ``player``'s page of all their games, for the footer of every mail to them
    (None: the web board is off, or the player is the Assistant, who gets no mail)."""
    if config.web is None or is_assistant(player):
        return None
    return config.web.games_link(page_token_of(session, player))


def clock_text(clock: dict[str, Any], opponent: str, language: str) -> str:
    """The clocks of one game as its mails word them (for a list of several games)."""
    context = {"opponent": opponent, "names": ["", ""], "me": 0, "numbering": "own", "colour": "white"}
    return str(template_module("lines.txt", language, context).clock_line(clock)).strip()


def template_module(template: str, language: str, context: dict[str, Any]) -> Any:
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
    return template_module("events.txt", language, context)


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
        next=next_step(table, seat),
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


def next_step(table: Table, seat: int) -> str:
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
