"""The game commands of a mail (moves, cube, resignation, draw) applied to a match.

Each command goes through the rules core (:mod:`pbem.rules.game`), records what happened as
events for both players, and then :func:`advance` carries the match on as far as it goes
without a player: it rolls for a player who cannot double, passes a turn that cannot be
played, plays a roll that has only one play (``automove``, and ``greedy`` bear-offs), ends the
game, scores it, and starts the next game of a match, series or session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pbem import assistant as pbem_assistant
from pbem import commands
from pbem.config import Config
from pbem.mail.composing import Attachment
from pbem.render.views import EventKind, Notice
from pbem.rules import game as rules
from pbem.rules import cube as cube_rules
from pbem.rules import dice as fair_dice
from pbem.rules import matfile, prizes, scoring
from pbem.rules.moves import IllegalPlay, Play, legal_plays
from pbem.rules.position import BAR, Position
from pbem.rules.notation import Colour, NotationError, parse_play
from pbem.rules.scoring import WinKind
from pbem.service.games import credits
from pbem.service.games import ladder_standing
from pbem.service.games import ratings
from pbem.service.table import assistant
from pbem.service.table.conversation import Conversation
from pbem.service.table.dice import new_seed
from pbem.service.table.letters import play_texts
from pbem.service.table.tables import Table
from pbem.store.db import utc_now
from pbem.store.game_records import FinishedGame, MatchStatus, ReviewJob

GameCommand = (
    commands.Move | commands.Roll | commands.Double | commands.Take | commands.Drop | commands.Beaver
    | commands.Accept | commands.Decline | commands.Resign | commands.OfferResignation | commands.Remis
)


def apply_game_command(talk: Conversation, table: Table, seat: int, command: GameCommand) -> None:
    """Apply one game command of ``seat``; a refused one is explained to the sender only."""
    game = table.game
    if table.status is not MatchStatus.RUNNING or game is None:
        talk.say_template(Notice.MATCH_NOT_RUNNING, table)
        return
    try:
        table.game = _apply(talk, table, seat, game, command)
    except (rules.RuleError, IllegalPlay, NotationError) as refusal:
        talk.error(refusal.code, refusal.details, table, seat)
        return
    advance(talk, table)


def _apply(talk: Conversation, table: Table, seat: int, game: rules.Game, command: GameCommand) -> rules.Game:
    """The game after ``seat``'s command, by its type's action (a refusal raises)."""
    return _ACTIONS[type(command)](talk, table, seat, game, command)


def _move(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Move) -> rules.Game:
    steps = parse_play(command.text, table.numbering(seat), Colour.of_seat(seat))
    after = rules.play(game, seat, steps)
    played = after.record[len(game.record)].play or ()
    talk.event(table, EventKind.MOVED, seat, plays=play_texts(game.board, played, seat))
    return after


def _roll_command(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Roll) -> rules.Game:
    return _roll(talk, table, game, seat)


def _double(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Double) -> rules.Game:
    after = rules.double(game, seat)
    talk.event(table, EventKind.DOUBLED, seat, cube=game.cube * 2)
    return after


def _take(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Take) -> rules.Game:
    after = rules.take(game, seat)
    talk.event(table, EventKind.TOOK, seat, cube=after.cube)
    return after


def _drop(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Drop) -> rules.Game:
    after = rules.drop(game, seat)
    talk.event(table, EventKind.DROPPED, seat, cube=game.cube)
    return after


def _offered_to(game: rules.Game, seat: int) -> bool:
    """The opponent of ``seat`` offers to resign: ``accept``/``decline`` answer that offer."""
    return game.resign_offer is not None and game.resign_offer[0] == 1 - seat


def _accept(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Accept) -> rules.Game:
    """``accept``: takes a pending double, else accepts the opponent's offer to resign."""
    if game.phase is rules.Phase.DOUBLE_OFFERED:
        return _take(talk, table, seat, game, commands.Take())
    if _offered_to(game, seat):
        return rules.accept_resignation(game, seat)  # the game-over mail tells the result
    raise rules.RuleError("nothing_to_answer")


def _decline(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Decline) -> rules.Game:
    """``decline``: drops a pending double, else rejects the opponent's offer to resign."""
    if game.phase is rules.Phase.DOUBLE_OFFERED:
        return _drop(talk, table, seat, game, commands.Drop())
    if _offered_to(game, seat):
        talk.event(table, EventKind.RESIGN_REJECTED, seat)
        return rules.reject_resignation(game, seat)
    raise rules.RuleError("nothing_to_answer")


def _beaver(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Beaver) -> rules.Game:
    after = rules.beaver(game, seat)
    talk.event(table, EventKind.BEAVERED, seat, cube=after.cube * 2)
    return after


def _resign(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Resign) -> rules.Game:
    after = rules.resign(game, seat)
    talk.event(table, EventKind.RESIGNED, seat)
    return after


def _offer_resignation(talk: Conversation, table: Table, seat: int, game: rules.Game,
                       command: commands.OfferResignation) -> rules.Game:
    after = rules.offer_resignation(game, seat, WinKind(command.kind))
    talk.event(table, EventKind.RESIGN_OFFERED, seat, kind=command.kind,
               points=cube_rules.points_won(game.rules, WinKind(command.kind), game.cube))
    return after


def _remis(talk: Conversation, table: Table, seat: int, game: rules.Game, command: commands.Remis) -> rules.Game:
    after = rules.offer_draw(game, seat)
    talk.event(table, EventKind.DRAW_AGREED if after.phase is rules.Phase.OVER else EventKind.DRAW_OFFERED, seat)
    return after


_ACTIONS: dict[type, Callable[[Conversation, Table, int, rules.Game, Any], rules.Game]] = {
    commands.Move: _move, commands.Roll: _roll_command, commands.Double: _double, commands.Take: _take,
    commands.Drop: _drop, commands.Accept: _accept, commands.Decline: _decline, commands.Beaver: _beaver,
    commands.Resign: _resign, commands.OfferResignation: _offer_resignation, commands.Remis: _remis,
}
"""Each game command's action on the game, by the command's type."""


def _roll(talk: Conversation, table: Table, game: rules.Game, seat: int) -> rules.Game:
    dice = _next_dice(talk, table)
    after = rules.roll(game, seat, dice)
    table.record.dice_rolls += 1  # only a roll the rules took counts: a refused one is no roll
    talk.event(table, EventKind.CANNOT_MOVE if after.turn_was_passed else EventKind.ROLLED, seat, dice=list(dice))
    return after


def _next_dice(talk: Conversation, table: Table) -> rules.Dice:
    """The game's next roll, number ``dice_rolls`` of its seed; the caller counts it once the
    rules have taken it (in this transaction, under the match's lock, so that every daemon and
    every restart goes on with the next number)."""
    return talk.dice.roll(table.dice_seed, table.record.dice_rolls)


def advance(talk: Conversation, table: Table) -> None:
    """Carry the match on until a player must decide: automatic rolls (where the player on turn
    cannot double, or has ``autoroll on``), forced plays, game ends, next games.  Everything it
    does is the service's, not a command of the sender: their next mail tells them."""
    was_automatic, talk.automatic = talk.automatic, True
    try:
        _advance(talk, table)
    finally:
        talk.automatic = was_automatic


def _advance(talk: Conversation, table: Table) -> None:
    while table.game is not None:
        game = table.game
        if game.phase is rules.Phase.TO_ROLL or (
                game.phase is rules.Phase.ROLL_OR_DOUBLE and table.players[game.seat].autoroll):
            table.game = _roll(talk, table, game, game.seat)
            continue
        if game.phase is rules.Phase.OVER:
            if _finish_game(talk, table):
                continue
            return
        if _play_for_player(talk, table, game):
            continue
        if not _assistant_answers(talk, table):
            return


def _play_for_player(talk: Conversation, table: Table, game: rules.Game) -> bool:
    """Play the roll for the person on turn when there is nothing to decide: only one play
    (``automove``, on by default), or with ``greedy on`` a bear-off of a checker with every die
    when all their checkers are home and out of contact.  The Assistant decides for itself."""
    if (game.phase is not rules.Phase.TO_MOVE or game.dice is None or game.resign_offer is not None
            or game.draw_offer is not None):
        return False  # an offer waits for its answer first
    player = table.players[game.seat]
    if assistant.is_assistant(player):
        return False
    plays = legal_plays(game.board, game.dice)
    chosen, greedy = None, False
    if player.automove and len(plays) == 1:
        chosen = next(iter(plays.values()))
    elif player.greedy:
        chosen = greedy_play(game.board, game.dice, plays)
        greedy = chosen is not None
    if chosen is None:
        return False
    seat = game.seat
    table.game = rules.play(game, seat, chosen)
    talk.event(table, EventKind.AUTOMOVED, seat, plays=play_texts(game.board, chosen, seat), dice=list(game.dice),
               greedy=greedy)
    return True


def greedy_play(board: Position, dice: tuple[int, int], plays: dict[Position, Play]) -> Play | None:
    """pbmserv's ``greedy``: the play that bears off a checker with every die, when all the
    mover's checkers are home and no opponent checker is left to pass or hit (nothing else
    matters then); None when there is contact or the roll cannot bear off with every die."""
    if any(board.mover[6:]) or board.opponent[BAR]:
        return None
    highest = max(point for point in range(6) if board.mover[point])
    if any(board.opponent[23 - point] for point in range(highest + 1)):
        return None  # an opponent checker on a point of theirs the mover still has to pass
    dice_count = 4 if dice[0] == dice[1] else 2
    full = [play for after, play in sorted(plays.items(), key=lambda item: item[1])
            if len(play) == dice_count and after.mover_off - board.mover_off == dice_count]
    return full[0] if full else None


def _assistant_answers(talk: Conversation, table: Table) -> bool:
    """The Assistant's move when the game waits for it (or for its answer to a draw offer)."""
    decision = assistant.decide(table, talk.config)
    if decision is None:
        return False
    seat, command = decision
    game = table.game
    assert game is not None
    if command is assistant.DECLINE_DRAW:
        table.game = rules.decline_draw(game, seat)
        talk.event(table, EventKind.DRAW_DECLINED, seat)
    else:
        assert isinstance(command, GameCommand)
        table.game = _apply(talk, table, seat, game, command)
    return True


def _finish_game(talk: Conversation, table: Table) -> bool:
    """Score the game that just ended; True when a next game has begun."""
    game = table.game
    assert game is not None and game.result is not None
    result = game.result
    if result.winner is None:
        talk.event(table, EventKind.GAME_DRAWN, None)
    else:
        talk.event(table, EventKind.GAME_WON, result.winner, kind=int(result.kind or 1), points=result.points,
                   ending=result.ending.value)
    revealed = None
    if table.record.dice_seed is not None:
        talk.event(table, EventKind.DICE_REVEALED, None, number=table.record.game_number,
                   seed=table.record.dice_seed, verify=verify_link(talk.config), attached=False)
        revealed = talk.news_of(table).events[-1]
    talk.session.add(FinishedGame(match_id=table.id, number=table.record.game_number, game=game.to_dict(),
                                  dice_seed=table.record.dice_seed))
    talk.session.flush()
    table.score = scoring.add_result(table.score, result)
    prize = table.prize
    session_over = scoring.is_over(table.score) or (
        table.score.rules.format is scoring.Format.MONEY
        and result.ending in (scoring.Ending.RESIGNED, scoring.Ending.TIMEOUT, scoring.Ending.SETTLED)
    ) or (prize is not None and prizes.ends_the_prize(result))
    if session_over:
        _finish_match(talk, table, result)
        if revealed is not None:
            revealed.data["attached"] = True  # the match's .mat is attached to this same mail
    ratings.record_result(talk, table, result, session_over)
    if session_over and table.record.ladder_id is not None:
        ladder_standing.match_over(talk, table)
    prize = table.prize
    if session_over and prize is not None:
        # The last rows this transaction locks: the accounts, the house's last of all, which no
        # other transaction then waits for while holding something this one needs.
        credits.settle(talk, table, prize, result)
    _queue_review(talk, table, game, totals=session_over and table.score.games > 1)
    if session_over:
        return False
    start_game(talk, table)
    return True


def verify_link(config: Config) -> str | None:
    """The service's page that checks a game's dice from its ``.mat`` and seed (None: no web board)."""
    return None if config.web is None else f"{config.web.public_url}/verify"


def won_with(table: Table, winner: int | None, last: scoring.Result) -> dict[str, Any] | None:
    """How a match was won when its last game won more points than the match needed (a gammon
    at 4-2 in a match to 5, any gammon in a match to 1): that game's kind, its points and the
    score before it, so that "wins 3-0" in a match to 1 is told as a win with a backgammon."""
    rules, points = table.score.rules, table.score.points
    if (rules.format is not scoring.Format.MATCH or winner is None or last.winner != winner
            or points[winner] <= (rules.length or 0)):
        return None
    before = [points[0], points[1]]
    before[winner] -= last.points
    return {"kind": int(last.kind or 1), "points": last.points, "before": before}


def _finish_match(talk: Conversation, table: Table, last: scoring.Result) -> None:
    """The end of the match, series or session (a prize game's escrow is paid out by the caller,
    in this same transaction).  Whoever left a prize table (``$quit``, a timeout) loses it."""
    table.record.status = MatchStatus.FINISHED
    table.record.finished_at = utc_now()
    prize = table.prize
    winner = scoring.winner(table.score) if prize is None else prizes.prize_winner(table.score, last)
    left = None if prize is None else prizes.left_the_table(last)
    talk.event(table, EventKind.MATCH_OVER, winner, points=list(table.score.points), left=left,
               won_with=won_with(table, winner, last))
    games = table.finished_games(talk.session)
    names = (table.players[0].display_name, table.players[1].display_name)
    text = matfile.match_text(games, names)
    filename = f"pbem-{table.id}-{names[0]}-{names[1]}.mat".replace(" ", "_")
    talk.news_of(table).attachments.append(Attachment(filename, "text/plain", text.encode("utf-8"), charset="utf-8"))


_CUBE_DECISIONS = (rules.ActionKind.DOUBLE, rules.ActionKind.TAKE, rules.ActionKind.DROP, rules.ActionKind.BEAVER)


def _queue_review(talk: Conversation, table: Table, game: rules.Game, totals: bool) -> None:
    """Leave the bgsage review of the game (and with ``totals`` of the whole match) to the daemon's
    review job, where bgsage loads: it costs seconds, and this mail's answer goes out at once."""
    if pbem_assistant.engine(talk.config.assistant.plies) is None:
        return
    if not totals and not any(action.play or action.kind in _CUBE_DECISIONS for action in game.record):
        return  # nothing was decided (a draw agreed, a resignation before the first move): no review
    talk.session.add(ReviewJob(match_id=table.id, game_number=table.record.game_number, game=game.to_dict(),
                               totals=totals, created_at=talk.now))
    talk.event(table, EventKind.REVIEW_FOLLOWS, None, totals=totals)


def start_game(talk: Conversation, table: Table) -> None:
    """The next game: its dice seed, drawn now and committed to in the mails this starts, and
    its opening roll (ties are rolled again, each re-roll a roll of its own)."""
    table.record.game_number += 1
    seed = new_seed()
    table.record.dice_seed, table.record.dice_rolls = seed.hex(), 0
    while True:
        opening = _next_dice(talk, table)
        table.record.dice_rolls += 1
        game = rules.new_game(table.score, opening)
        if game is not None:
            break
    table.game = game
    talk.event(table, EventKind.GAME_STARTED, game.seat, number=table.record.game_number, opening=list(opening),
               crawford=game.crawford)
    talk.event(table, EventKind.DICE_COMMITTED, None, number=table.record.game_number,
               commitment=fair_dice.commitment(seed))
