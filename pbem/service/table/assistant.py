"""The Assistant as a seat at the table: who it is, and what it answers when it must act.

The Assistant is a :class:`Player` row with a reserved address that no mail can come from
(``.invalid``), so no letter is ever sent to it.  It answers within the same transaction as
the mail it answers: :func:`pbem.service.games.play.advance` asks :func:`decide` whenever the game
waits for the Assistant, and applies the command it returns like a player's command, so both
sides hear of it in the same words.
"""

from __future__ import annotations

from sqlmodel import Session, select

from pbem import assistant, commands
from pbem.assistant import levels
from pbem.config import Config
from pbem.rules import cube as cube_rules
from pbem.rules import game as rules
from pbem.rules.notation import Colour, format_play
from pbem.service.table.tables import Table
from pbem.store.game_records import Player

ADDRESS = "assistant@pbem.invalid"
NAMES = {"en": "Assistant", "de": "Assistent"}

DECLINE_DRAW = None
"""What :func:`decide` returns for "no" to a draw offer: there is no player command for it."""


def is_assistant(player: Player) -> bool:
    return player.address == ADDRESS


def assistant_player(session: Session) -> Player:
    """The Assistant's row, created on first use (named "Assistant", as in .mat files)."""
    player = session.exec(select(Player).where(Player.address == ADDRESS)).first()
    if player is None:
        player = Player(address=ADDRESS, name=NAMES["en"])
        session.add(player)
        session.flush()
    return player


def available(config: Config) -> bool:
    """True when bgsage loads on this server, so that ``play assistant`` can be offered."""
    return assistant.engine(config.assistant.plies) is not None


def noise_seed(table: Table) -> str:
    """What a weaker level's noise is seeded by: the game's own dice seed (secret until the game
    is over, like the noise), or for a game without one its match and number; replaying the
    game's mails replays its plays."""
    return table.record.dice_seed or f"{table.id}:{table.record.game_number}"


def decide(table: Table, config: Config) -> tuple[int, commands.Command | None] | None:
    """The Assistant's seat and its next command, ``(seat, DECLINE_DRAW)`` to refuse a draw,
    or None when the game is not waiting for it."""
    game = table.game
    seat = next((seat for seat, player in enumerate(table.players) if is_assistant(player)), None)
    if seat is None or game is None or game.phase is rules.Phase.OVER:
        return None
    strongest = assistant.engine(config.assistant.plies)
    if strongest is None:
        return None
    engine = levels.player(table.record.assistant_level or levels.STRONGEST, strongest, noise_seed(table))
    if game.draw_offer == 1 - seat:
        return seat, commands.Remis() if engine.accepts_draw(game, seat) else DECLINE_DRAW
    if game.resign_offer is not None and game.resign_offer[0] == 1 - seat:
        points = cube_rules.points_won(game.rules, game.resign_offer[1], game.cube)
        return seat, commands.Accept() if engine.accepts_resignation(game, seat, points) else commands.Decline()
    if game.to_act != seat:
        return None
    match game.phase:
        case rules.Phase.ROLL_OR_DOUBLE:
            return seat, commands.Double() if engine.wants_to_double(game) else commands.Roll()
        case rules.Phase.TO_MOVE:
            play = engine.choose_play(game)
            return seat, commands.Move(format_play(game.board, play, table.numbering(seat), Colour.of_seat(seat)))
        case rules.Phase.DOUBLE_OFFERED:
            answers: dict[str, commands.Command] = {"take": commands.Take(), "drop": commands.Drop(),
                                                    "beaver": commands.Beaver()}
            return seat, answers[engine.answer_double(game)]
    return None
