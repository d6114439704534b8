"""Move notation: reading what players write, and writing plays as GNU Backgammon does.

Players write moves in many spellings; the reader is forgiving, the writer is strict.

Reading (:func:`parse_play`) accepts, case-insensitively and with any spaces, commas or
semicolons between moves:

* the standard spelling ``24/18 13/9``, ``bar/22``, ``6/off``, ``8/5*``, ``13/7(2)``,
  ``24/18/13`` (one checker through 18) and ``24/18*/13``;
* the dash spelling ``24-18 13-9``, ``-22`` (enter from the bar on 22), ``6-`` (bear off from 6),
  FIBS' ``bar-22`` and ``6-off``, and pairs of bare points ``24 18 13 9``;
* ``*`` anywhere (hits are facts of the board, so the mark is ignored), typographic dashes that
  mail programs put in place of ``-``, a trailing ``.`` or ``!``, and one leading keyword such
  as ``move:``, ``Zug:`` or ``ich ziehe`` (see :data:`KEYWORDS`).

Point numbers are read in the writer's :class:`Numbering`; the result is always in the mover's
own numbering (24 → 1, ``25`` = bar, ``0`` = off), which is what the moves module checks.

Writing (:func:`format_play`) follows GNU Backgammon's ``FormatMove`` exactly in the own
numbering: moves ordered from the highest starting point down, the moves of one checker joined
(``24/13``) unless it hits on the way (``24/18*/13``), a hit marked once with ``*`` after the
point, identical moves counted (``13/7(2)``).  The fixed numbering uses the same order and
spelling with fixed point numbers.

A mail line counts as a move (:func:`looks_like_play`) when, after an optional keyword, it
consists only of points, ``bar``, ``off`` and the marks above, and says where a checker goes
(a ``/`` or ``-`` or two points).  Any other text, even with a move inside it ("I'd have played
24/18"), is a personal note for the opponent.  Numbers of three or more digits (phone numbers,
years) make a line prose.

Every :class:`NotationError` carries one of these ``code`` values and its ``details``:

``empty``
    nothing but a keyword; details: none.
``unreadable``
    a part that is not a point, ``bar``, ``off`` or a mark; details: ``text`` (that part).
``bad_point``
    a number that is not a point 1-24; details: ``point`` (the number as written).
``bad_repeat``
    a repeat that is not ``(1)``…``(4)`` after a move; details: ``text`` (the part).
``misplaced_bar``
    ``bar`` not at the start of a move; details: ``text`` (the move as written).
``misplaced_off``
    ``off`` not at the end of a move; details: ``text`` (the move as written).
``wrong_direction``
    a move that goes backwards or nowhere in the writer's numbering; details: ``text`` (the
    move as written), ``numbering`` (``own``/``fixed``), ``colour`` (``white``/``black``),
    ``toward`` (the point the writer's checkers move towards: 1 or 24).
``unpaired``
    a bare point with no partner, as in ``24 18 13``; details: ``point`` (as written).
``too_many_steps``
    more than four checker moves; details: ``count``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from enum import StrEnum

from pbem.rules.moves import BAR_POINT as BAR
from pbem.rules.moves import OFF, Play, Step
from pbem.rules.position import Position

MAX_STEPS = 4

KEYWORDS = (
    "move", "my move", "m", "play", "i play",
    "zug", "mein zug", "ziehe", "ich ziehe", "spiele", "ich spiele",
)
"""Words a player may put before a move on its line; they carry no meaning."""


class Numbering(StrEnum):
    """How a player numbers the points."""

    OWN = "own"
    """Each player counts from their own side and moves 24 → 1 (GNU Backgammon, FIBS)."""
    FIXED = "fixed"
    """One numbering for both (Tele-Backgammon): White moves 24 → 1, Black 1 → 24."""


class Colour(StrEnum):
    """The side a player plays, which matters only in the fixed numbering."""

    WHITE = "white"
    BLACK = "black"

    @classmethod
    def of_seat(cls, seat: int) -> Colour:
        """Seat 0 (who invited, gnubg's player 0) plays White, seat 1 plays Black."""
        if seat not in (0, 1):
            raise ValueError(f"no seat {seat}: seats are 0 and 1")
        return (cls.WHITE, cls.BLACK)[seat]


_MESSAGES = {
    "empty": "There is no move in this line.",
    "unreadable": "Cannot read {text!r} as a move; write it like 24/18 13/9.",
    "bad_point": "There is no point {point}: points are 1 to 24, bar and off.",
    "bad_repeat": "Cannot read the repeat in {text!r}; write it like 13/7(2).",
    "misplaced_bar": "In {text!r} the bar is not where the checker starts; write bar/22.",
    "misplaced_off": "In {text!r} off is not where the checker ends; write 6/off.",
    "wrong_direction": "{text!r} goes the wrong way: your checkers move towards point {toward}.",
    "unpaired": "The point {point} has no partner; write each move as from/to.",
    "too_many_steps": "A turn has at most four checker moves, this has {count}.",
}


class NotationError(ValueError):
    """Text that cannot be read as a play; ``code`` and ``details`` as in the module docstring."""

    def __init__(self, code: str, **details: str | int) -> None:
        self.code = code
        self.details = details
        super().__init__(_MESSAGES[code].format(**details))


def point_label(own_point: int, numbering: Numbering, colour: Colour) -> int:
    """The number a player of ``colour`` using ``numbering`` gives the mover's point 1-24."""
    if not 1 <= own_point <= 24:
        raise ValueError(f"no point {own_point}: points are 1 to 24")
    if numbering is Numbering.FIXED and colour is Colour.BLACK:
        return 25 - own_point
    return own_point


def own_point(label: int, numbering: Numbering, colour: Colour) -> int:
    """The mover's own point for a point number written in ``numbering`` by ``colour``."""
    return point_label(label, numbering, colour)  # the mapping is its own inverse


# --- reading -------------------------------------------------------------------------------

_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2212"})
_KEYWORD = re.compile(r"(?:%s)\s*:?\s+|(?:%s)\s*:\s*" % (("|".join(KEYWORDS),) * 2))
_POINT = r"(?:(?<!\d)\d{1,2}(?!\d)|bar|off)"
_PLAY_SHAPED = re.compile(rf"(?:{_POINT}|[/\-*,;\s]|\(\d\))+")
_SAYS_WHERE = re.compile(rf"{_POINT}\s*[/-]|[/-]\s*{_POINT}|{_POINT}[\s,;*]+{_POINT}")
_GROUP = re.compile(r"(?P<body>[^()]*)(?:\((?P<repeat>[^()]*)\))?")


def _normalise(text: str) -> str:
    """Lower case, one kind of dash, no keyword, no hit marks, no trailing full stop."""
    text = text.translate(_DASHES).lower().replace("\u00a0", " ").strip()
    text = _KEYWORD.sub("", text, count=1) if _KEYWORD.match(text) else text
    return text.rstrip(".! ").replace("*", "")


def looks_like_play(text: str) -> bool:
    """True when a mail line is meant as a move (perhaps a wrong one), not as a note."""
    body = _normalise(text)
    return bool(_PLAY_SHAPED.fullmatch(body)) and bool(_SAYS_WHERE.search(body))


def parse_play(
    text: str, numbering: Numbering = Numbering.OWN, colour: Colour = Colour.WHITE
) -> Play:
    """The steps written in ``text``, in the mover's own numbering, in the order written.

    Only the spelling is checked here (and that each move goes the writer's way round);
    whether the play is legal for the dice is for the moves module to say.
    """
    body = _normalise(text)
    body = re.sub(r"\s*/\s*", "/", body)
    body = re.sub(r"\s+-\s+", "-", body)
    body = re.sub(r"\s+\(", "(", body)
    groups = [group for group in re.split(r"[\s,;]+", body) if group]
    if not groups:
        raise NotationError("empty")
    steps: list[Step] = []
    pending: list[str] = []  # a bare point waiting for its partner: "24 18"
    for group in groups:
        chain, repeat = _read_group(group)
        if len(chain) == 1 and not pending:
            if repeat != 1:
                raise NotationError("bad_repeat", text=group)
            pending = chain
            continue
        if pending:
            if len(chain) != 1:
                raise NotationError("unpaired", point=pending[0])
            chain, pending = pending + chain, []
        steps += _chain_steps(chain, group, numbering, colour) * repeat
    if pending:
        raise NotationError("unpaired", point=pending[0])
    if len(steps) > MAX_STEPS:
        raise NotationError("too_many_steps", count=len(steps))
    return tuple(steps)


def _read_group(group: str) -> tuple[list[str], int]:
    """The points of one written move (``bar``/``off`` filled in for dashes) and its repeat."""
    match = _GROUP.fullmatch(group)
    if not match:
        raise NotationError("unreadable", text=group)
    body, repeat = match["body"], match["repeat"]
    if repeat is not None and (not body or not re.fullmatch(r"[1-4]", repeat.strip())):
        raise NotationError("bad_repeat", text=group)
    if body in ("", "-"):
        raise NotationError("unreadable", text=group)
    if body.startswith("-"):
        body = "bar" + body
    if body.endswith("-"):
        body += "off"
    chain = re.split(r"[/-]", body)
    for point in chain:
        if point.isdecimal() and not 1 <= int(point) <= 24:
            raise NotationError("bad_point", point=point)
        if not (point.isdecimal() or point in ("bar", "off")):
            raise NotationError("unreadable", text=group)
    return chain, int(repeat or 1)


def _chain_steps(chain: list[str], text: str, numbering: Numbering, colour: Colour) -> list[Step]:
    """The steps of one checker's journey, checked for bar first, off last and direction."""
    if "bar" in chain[1:]:
        raise NotationError("misplaced_bar", text=text)
    if "off" in chain[:-1]:
        raise NotationError("misplaced_off", text=text)
    points = [_own(point, numbering, colour) for point in chain]
    for start, end in zip(points, points[1:]):
        if end >= start:
            toward = point_label(1, numbering, colour)
            raise NotationError(
                "wrong_direction", text=text, numbering=numbering.value,
                colour=colour.value, toward=toward,
            )
    return list(zip(points, points[1:]))


def _own(point: str, numbering: Numbering, colour: Colour) -> int:
    """A written point as the mover's own point, bar and off included."""
    if point == "bar":
        return BAR
    if point == "off":
        return OFF
    return own_point(int(point), numbering, colour)


# --- writing -------------------------------------------------------------------------------


def example_play(plays: Collection[Play]) -> Play:
    """The play a mail shows as an example of how a move is written.

    Neither chosen for its quality nor against it, so it is no advice: the middle one of the
    plays in the order of their steps.  Where checkers can be borne off, it is one that bears off
    as many as any play does, so that the example shows how ``/off`` is written then.
    """
    def borne_off(play: Play) -> int:
        return sum(1 for _, to in play if to == OFF)

    most = max(map(borne_off, plays))
    ordered = sorted(play for play in plays if borne_off(play) == most)
    return ordered[len(ordered) // 2]


def format_play(
    position: Position,
    play: Play,
    numbering: Numbering = Numbering.OWN,
    colour: Colour = Colour.WHITE,
) -> str:
    """``play`` from ``position`` written as GNU Backgammon writes it ("" for no move)."""
    hit = {point for point in range(1, 25) if position.opponent[24 - point]}
    chains = _join_checker_moves(sorted(play, reverse=True), hit)
    written: list[str] = []
    marked: set[int] = set()
    for chain, count in _count_duplicates(chains):
        start, *through, end = chain
        parts = [point_name(start, numbering, colour)]
        parts += [point_name(point, numbering, colour) + "*" for point in through]
        marked.update(through)
        parts.append(point_name(end, numbering, colour) + ("*" if end in hit - marked else ""))
        if end in hit:
            marked.add(end)
        written.append("/".join(parts) + (f"({count})" if count > 1 else ""))
    return " ".join(written)


def _join_checker_moves(steps: list[Step], hit: set[int]) -> list[list[int]]:
    """Chains of points, one per checker as gnubg sees it: a hit point stays in the chain."""
    chains: list[list[int]] = []
    joined = [False] * len(steps)
    for i, (start, end) in enumerate(steps):
        if joined[i]:
            continue
        chain = [start, end]
        for j in range(i + 1, len(steps)):
            if not joined[j] and steps[j][0] == chain[-1]:
                if chain[-1] in hit:
                    chain.append(steps[j][1])
                else:
                    chain[-1] = steps[j][1]
                joined[j] = True
        chains.append(chain)
    return chains


def _count_duplicates(chains: list[list[int]]) -> list[tuple[list[int], int]]:
    """Identical chains once each, in first-seen order, with how often they occur."""
    counted: list[tuple[list[int], int]] = []
    for chain in chains:
        if chain not in (seen for seen, _ in counted):
            counted.append((chain, chains.count(chain)))
    return counted


def point_name(point: int, numbering: Numbering, colour: Colour) -> str:
    """A mover's own point 0-25 as the reader writes it: a number, ``bar`` or ``off``."""
    if point == BAR:
        return "bar"
    if point == OFF:
        return "off"
    return str(point_label(point, numbering, colour))
