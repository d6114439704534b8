"""The doubling cube: who may turn it, how high, and what a win is worth.

Kept apart from the game's state machine so that each rule is one small function that the
service can also ask directly (for example to offer "roll or double" only when a double is
possible).  Each refusal is a machine-readable code, documented in :mod:`pbem.rules.game`.

Rules (SPEC section 2):

* A player may double only before rolling, with the cube centred or their own.
* Not above the cap (64 unless configured), and not in the Crawford game.
* Dead cube (match play): no double when the player on roll already wins the match by winning
  the game at the current cube value; doubling could not gain anything there.  The opponent's
  score does not matter: the trailer at post-Crawford scores may always double.
* Beaver (money play, when enabled): the doubled player takes and at once redoubles, keeping
  the cube; the original doubler then takes or drops that redouble.  One beaver per double,
  no raccoons.
* Jacoby (money play, when enabled): gammons and backgammons count single unless the cube has
  been turned.
"""

from __future__ import annotations

from pbem.rules.scoring import Format, MatchRules, WinKind


def double_refusal(
    rules: MatchRules,
    score: tuple[int, int],
    cube: int,
    owner: int | None,
    seat: int,
    crawford: bool,
) -> str | None:
    """Why ``seat`` may not offer a double now (a code), or None when it may.

    The caller checks the phase (before rolling, on turn); this checks the cube itself.
    """
    if owner is not None and owner != seat:
        return "cube_not_yours"
    if crawford:
        return "crawford_game"
    if cube * 2 > rules.cube_cap:
        return "cube_at_cap"
    if is_dead_cube(rules, score, cube, seat):
        return "dead_cube"
    return None


def is_dead_cube(rules: MatchRules, score: tuple[int, int], cube: int, seat: int) -> bool:
    """True when ``seat`` already wins the match by winning this game at the current cube."""
    return rules.format is Format.MATCH and score[seat] + cube >= rules.length


def beaver_refusal(rules: MatchRules, offered: int) -> str | None:
    """Why the doubled player may not beaver a double to ``offered`` (a code), or None."""
    if not rules.beaver:
        return "beaver_not_allowed"
    if offered * 2 > rules.cube_cap:
        return "cube_at_cap"
    return None


def points_won(rules: MatchRules, kind: WinKind, cube: int) -> int:
    """What a win of ``kind`` scores at ``cube``, with the Jacoby rule where it applies."""
    if rules.jacoby and cube == 1:
        return cube
    return int(kind) * cube
