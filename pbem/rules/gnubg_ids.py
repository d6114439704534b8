"""GNU Backgammon's Position ID and Match ID, bit for bit as the gnubg program writes them.

Both identifiers are little-endian bit strings written as base64 without padding:

* **Position ID** (80 bits, 14 characters): for each side in turn, for each of its 25 slots
  (points 1-24 and the bar, as in :class:`~pbem.rules.position.Position`), as many 1-bits as
  checkers there, then a 0-bit.  The program writes the side *not* on roll first
  (``anBoard[0]``), then the side on roll (``anBoard[1]``) - this is what ``gnubg.positionid()``
  returns, whatever the manual's wording suggests.
* **Match ID** (72 bits, 12 characters): fixed-width fields, see :data:`_MATCH_FIELDS`.

Players paste these strings into gnubg to analyse a game, so they must match the program exactly.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from enum import IntEnum

from pbem.rules.moves import legal_plays
from pbem.rules.position import CHECKERS, Position

POSITION_ID_LENGTH = 14
MATCH_ID_LENGTH = 12
_POSITION_BITS = 80
_SLOTS = 25
_BASE64 = re.compile(r"[A-Za-z0-9+/]*")


def position_id(position: Position) -> str:
    """The Position ID of ``position``, seen from its mover (the player on roll)."""
    key = 0
    bit = 0
    for side in (position.opponent, position.mover):
        for checkers in side:
            key |= ((1 << checkers) - 1) << bit
            bit += checkers + 1
    return _encode(key, _POSITION_BITS // 8)


def position_from_id(pid: str) -> Position:
    """The position a Position ID describes; ``ValueError`` if ``pid`` is not a valid one."""
    key = _decode(pid, POSITION_ID_LENGTH, _POSITION_BITS // 8, "Position ID")
    slots: list[int] = []
    checkers = 0
    while len(slots) < 2 * _SLOTS:
        if key & 1:
            checkers += 1
            if checkers > CHECKERS:
                raise ValueError(f"invalid Position ID {pid!r}: more than {CHECKERS} checkers")
        else:
            slots.append(checkers)
            checkers = 0
        key >>= 1
    if key:
        raise ValueError(f"invalid Position ID {pid!r}: too many checkers")
    opponent, mover = tuple(slots[:_SLOTS]), tuple(slots[_SLOTS:])
    if max(sum(opponent), sum(mover)) > CHECKERS:
        raise ValueError(f"invalid Position ID {pid!r}: a player has more than {CHECKERS} checkers")
    try:
        return Position(mover=mover, opponent=opponent)
    except ValueError as error:
        raise ValueError(f"invalid Position ID {pid!r}: {error}") from None


def legal_position_ids(pid: str, dice: tuple[int, int]) -> list[str]:
    """Position IDs of every distinct board the mover can reach with ``dice``, in byte order.

    This is the answer ``pbem rules legal`` gives for one input line (SPEC section 5): the
    results stay seen from the mover, the turn is not passed.
    """
    if len(dice) != 2 or not all(isinstance(die, int) and 1 <= die <= 6 for die in dice):
        raise ValueError(f"dice must be two numbers from 1 to 6, not {dice!r}")
    resulting = legal_plays(position_from_id(pid), dice)
    return sorted(position_id(position) for position in resulting)


class GameState(IntEnum):
    """gnubg's ``gamestate``: where the current game stands."""

    NONE = 0
    PLAYING = 1
    OVER = 2
    RESIGNED = 3
    DROPPED = 4


@dataclass(frozen=True, slots=True)
class MatchIdState:
    """Everything a Match ID says, with gnubg's meanings.

    ``player_on_roll`` is gnubg's *dice owner* (``fMove``) and ``turn`` the player who must act
    now (``fTurn``; they differ while a double or a resignation awaits an answer).  A centred
    cube has ``cube_owner=None``.  ``dice`` is ``(0, 0)`` before the roll and is kept higher die
    first, as gnubg stores it.  ``match_length`` is 0 for money play.
    """

    cube_value: int = 1
    cube_owner: int | None = None
    player_on_roll: int = 0
    crawford: bool = False
    game_state: GameState = GameState.PLAYING
    turn: int = 0
    double_offered: bool = False
    resignation_offered: int = 0
    dice: tuple[int, int] = (0, 0)
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool = False

    def __post_init__(self) -> None:
        if self.cube_value < 1 or self.cube_value > 1 << 15 or self.cube_value & (self.cube_value - 1):
            raise ValueError(f"cube value must be a power of two up to 32768, not {self.cube_value}")
        if self.cube_owner not in (0, 1, None):
            raise ValueError(f"cube owner must be 0, 1 or None (centred), not {self.cube_owner!r}")
        for name in ("player_on_roll", "turn"):
            if getattr(self, name) not in (0, 1):
                raise ValueError(f"{name} must be 0 or 1, not {getattr(self, name)!r}")
        if not 0 <= self.resignation_offered <= 3:
            raise ValueError(f"resignation offered must be 0-3, not {self.resignation_offered}")
        if (
            len(self.dice) != 2
            or (0 in self.dice and self.dice != (0, 0))
            or not all(0 <= die <= 6 for die in self.dice)
        ):
            raise ValueError(f"dice must be two numbers 1-6, or (0, 0) before the roll: {self.dice!r}")
        if not 0 <= self.match_length < 1 << 15 or not all(0 <= s < 1 << 15 for s in self.score):
            raise ValueError(f"match length and scores must be 0-32767: {self.match_length}, {self.score}")
        object.__setattr__(self, "game_state", GameState(self.game_state))
        object.__setattr__(self, "dice", tuple(sorted(self.dice, reverse=True)))
        object.__setattr__(self, "score", tuple(self.score))


_CENTRED_BITS = 3

_MATCH_FIELDS = (
    # (bit offset, width) of each field in gnubg's 72-bit match key (matchid.c: MatchID).
    ("cube_log2", 0, 4),
    ("cube_owner", 4, 2),
    ("player_on_roll", 6, 1),
    ("crawford", 7, 1),
    ("game_state", 8, 3),
    ("turn", 11, 1),
    ("double_offered", 12, 1),
    ("resignation_offered", 13, 2),
    ("die_high", 15, 3),
    ("die_low", 18, 3),
    ("match_length", 21, 15),
    ("score_0", 36, 15),
    ("score_1", 51, 15),
    ("no_jacoby", 66, 1),
)


def match_id(state: MatchIdState) -> str:
    """The Match ID gnubg shows for ``state``."""
    values = {
        "cube_log2": state.cube_value.bit_length() - 1,
        "cube_owner": _CENTRED_BITS if state.cube_owner is None else state.cube_owner,
        "player_on_roll": state.player_on_roll,
        "crawford": int(state.crawford),
        "game_state": int(state.game_state),
        "turn": state.turn,
        "double_offered": int(state.double_offered),
        "resignation_offered": state.resignation_offered,
        "die_high": state.dice[0],
        "die_low": state.dice[1],
        "match_length": state.match_length,
        "score_0": state.score[0],
        "score_1": state.score[1],
        "no_jacoby": int(not state.jacoby),
    }
    key = 0
    for name, offset, _width in _MATCH_FIELDS:
        key |= values[name] << offset
    return _encode(key, 9)


def match_id_state(mid: str) -> MatchIdState:
    """The state a Match ID describes; ``ValueError`` if ``mid`` is not one gnubg would accept."""
    key = _decode(mid, MATCH_ID_LENGTH, 9, "Match ID")
    if key >> 67:
        raise ValueError(f"invalid Match ID {mid!r}: unused bits are set")
    fields = {name: key >> offset & (1 << width) - 1 for name, offset, width in _MATCH_FIELDS}
    if fields["cube_owner"] == 2:
        raise ValueError(f"invalid Match ID {mid!r}: no such cube owner")
    if fields["game_state"] > max(GameState):
        raise ValueError(f"invalid Match ID {mid!r}: no such game state")
    length = fields["match_length"]
    if length and max(fields["score_0"], fields["score_1"]) > length:
        raise ValueError(f"invalid Match ID {mid!r}: a score exceeds the match length")
    if not length and fields["crawford"]:
        raise ValueError(f"invalid Match ID {mid!r}: a Crawford game in money play")
    try:
        return MatchIdState(
            cube_value=1 << fields["cube_log2"],
            cube_owner=None if fields["cube_owner"] == _CENTRED_BITS else fields["cube_owner"],
            player_on_roll=fields["player_on_roll"],
            crawford=bool(fields["crawford"]),
            game_state=GameState(fields["game_state"]),
            turn=fields["turn"],
            double_offered=bool(fields["double_offered"]),
            resignation_offered=fields["resignation_offered"],
            dice=(fields["die_high"], fields["die_low"]),
            match_length=length,
            score=(fields["score_0"], fields["score_1"]),
            jacoby=not fields["no_jacoby"],
        )
    except ValueError as error:
        raise ValueError(f"invalid Match ID {mid!r}: {error}") from None


def _encode(key: int, size: int) -> str:
    """``key`` as ``size`` little-endian bytes in unpadded base64, as gnubg writes its IDs."""
    return base64.b64encode(key.to_bytes(size, "little")).decode("ascii").rstrip("=")


def _decode(text: str, length: int, size: int, kind: str) -> int:
    """The key an ID encodes; strict, so that every accepted ID has exactly one spelling."""
    if not isinstance(text, str) or len(text) != length or not _BASE64.fullmatch(text):
        raise ValueError(f"invalid {kind} {text!r}: expected {length} base64 characters")
    padding = "=" * (-length % 4)
    try:
        raw = base64.b64decode(text + padding, validate=True)
    except binascii.Error as error:
        raise ValueError(f"invalid {kind} {text!r}: {error}") from None
    if base64.b64encode(raw).decode("ascii").rstrip("=") != text:
        raise ValueError(f"invalid {kind} {text!r}: its last character has stray bits")
    if len(raw) != size:
        raise ValueError(f"invalid {kind} {text!r}: expected {size} bytes")
    return int.from_bytes(raw, "little")
