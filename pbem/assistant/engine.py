"""The Assistant's judgement: the ``bgsage`` engine behind a small interface in our own terms.

Everything here takes and returns rules-core objects (:class:`Position`, plays, :class:`Game`);
only this module knows bgsage's board layout.  Plays are always chosen among the plays that
:func:`pbem.rules.moves.legal_plays` allows, ranked by bgsage's cubeful equity of the resulting
positions: bgsage's own move generator may, in rare bear-offs, take the last checker off with
one die where our rules require both dice (a hit on the way), so its list is a source of
equities, never of plays.  A resulting position bgsage does not list is evaluated on its own.

bgsage's board (seen from the player on roll): index ``p`` (1-24) is the player's point ``p``,
positive for the player's checkers and negative for the opponent's; 25 is the player's bar and
0 the opponent's bar, both as positive counts (bgsage's own boards after a hit show +1 at 0).
Post-move boards stay seen from the player who moved.
"""

from __future__ import annotations

import importlib
import os
import threading
from dataclasses import dataclass, replace
from typing import Any, Literal

from pbem.rules import cube as cube_rules
from pbem.rules import game as rules
from pbem.rules.moves import Play, legal_plays
from pbem.rules.position import BAR, CHECKERS, Position
from pbem.rules.scoring import Format

Board = list[int]
Answer = Literal["take", "drop", "beaver"]

ALL_ROLLS: tuple[tuple[int, int], ...] = tuple((a, b) for a in range(1, 7) for b in range(a, 7))
DOUBLING_WINDOW = 0.55
"""Below this chance of winning the Assistant does not ask bgsage whether to double: no
sensible double exists there except post-Crawford, and a cube analysis costs 20 checker plays."""
DOUBLING_EQUITY = 0.2
"""...unless its cubeless equity (1 ply) reaches this: gammons can make a double right at 55%
(gnubg doubles o82MAwibbSIBSA at 1-0 in a 5-point match with 56% and 37% gammons)."""
DEEPER = {2: 3}
"""The depth of the Assistant's close decisions, by the configured plies: the default 2 searches
them at 3 (gnubg's 2-ply, 0.1 to 0.3 s).  1 stays the raw network, the operator's choice for
speed; 3 and 4 are as deep as a decision may go already (a fourth ply costs seconds)."""
CLOSE_PLAY = 0.04
"""Plays within this equity (per cube unit) of the best at the engine's plies are close: the
best two of them are searched again one ply deeper.  Half of all plays have a close second
(measured over 973 plays of self-play at 2 plies); the other half cost nothing more."""
CLOSE_PLAYS_SEARCHED = 2
"""At most this many close plays, the best first, are searched deeper: each costs 30 to 150 ms
of CPU at 3 plies, and a third one gains a fifth as much again (see docs/development.md)."""
DECIDED = 0.001
"""A game whose best play leaves a chance to win (1 ply) below this, or above 1 minus it, is
decided: only gammons and backgammons are at stake, where 2 plies misjudges most (it ranked
gnubg's best backgammon-saving play ninth, 0.5 behind, at JwAAwGwXgCQDAA with 6-2)."""
DECIDED_PLAYS_SEARCHED = 10
"""In a decided game this many plays, the best first, are searched deeper, however far apart:
such endings have little contact, and a 3-ply evaluation costs about 12 ms there."""


_THEIR_OWNER = {"centered": "centered", "player": "opponent", "opponent": "player"}


def close_plays(equities: dict[Position, float], decided: bool = False) -> list[Position]:
    """The plays worth a deeper search, best first: those within :data:`CLOSE_PLAY` of the best,
    at most :data:`CLOSE_PLAYS_SEARCHED` (in a ``decided`` game the best
    :data:`DECIDED_PLAYS_SEARCHED`, however far apart).  The best alone where no other is close,
    where they are all worth exactly the same (a cubeful equity pinned at a cash or a pass:
    deeper they are still equal) and where one of them ends the game (its equity is exact)."""
    ranked = sorted(equities, key=lambda after: -equities[after])
    best = equities[ranked[0]]
    if decided:
        close = ranked[:DECIDED_PLAYS_SEARCHED]
    else:
        close = [after for after in ranked if best - equities[after] < CLOSE_PLAY][:CLOSE_PLAYS_SEARCHED]
    if best == equities[close[-1]] or any(after.mover_off == CHECKERS for after in close):
        return close[:1]
    return close


def to_board(position: Position) -> Board:
    """bgsage's 26 numbers for ``position`` (see the module docstring)."""
    board = [0] * 26
    for index in range(24):
        board[index + 1] += position.mover[index]
        board[24 - index] -= position.opponent[index]
    board[25] = position.mover[BAR]
    board[0] = position.opponent[BAR]
    return board


@dataclass(frozen=True)
class CubeContext:
    """The cube and score as bgsage wants them, seen from one seat."""

    cube_value: int = 1
    cube_owner: str = "centered"
    away1: int = 0
    away2: int = 0
    is_crawford: bool = False
    jacoby: bool = False
    beaver: bool = False

    @classmethod
    def of(cls, game: rules.Game, seat: int) -> CubeContext:
        owner = "centered" if game.cube_owner is None else ("player" if game.cube_owner == seat else "opponent")
        if game.rules.format is Format.MATCH:
            length = game.rules.length
            return cls(game.cube, owner, length - game.score[seat], length - game.score[1 - seat], game.crawford)
        return cls(game.cube, owner, jacoby=game.rules.jacoby, beaver=game.rules.beaver)

    def checker_args(self) -> dict[str, Any]:
        return {"cube_value": self.cube_value, "cube_owner": self.cube_owner, "away1": self.away1,
                "away2": self.away2, "is_crawford": self.is_crawford, "jacoby": self.jacoby,
                "beaver": self.beaver}

    def post_move_args(self) -> dict[str, Any]:
        args = self.checker_args()
        del args["beaver"]
        return args


class _PlaySearch:
    """The cubeful equity of one play at ``plies``, exactly as bgsage's own checker play at that
    depth values each candidate (its cube-aware search from the opponent's side, before their
    roll, with their best cube action), but for the given plays only: bgsage's ``checker_play``
    at 3 plies values every legal play so, up to 7 s for a double with many plays."""

    def __init__(self, bgsage: Any, plies: int) -> None:
        self._core = importlib.import_module("bgbot_cpp")  # bgsage's C++ core, installed with it
        weights = bgsage.default_weights()
        network = self._core.create_strategy(weights.strategy_type, weights.weight_paths_list,
                                             weights.hidden_sizes_list)
        self._bearoff = self._core.BearoffDB()
        if self._bearoff.load(bgsage.weights.bearoff_db_path()):
            network = self._core.BearoffStrategy(network, self._bearoff)
        else:
            self._bearoff = None
        self._network, self._plies, self._threads = network, plies, max(2, os.cpu_count() or 2)

    def equity(self, before: Position, after: Position, context: CubeContext) -> float:
        """Cubeful equity (per cube unit) of playing ``before`` → ``after``, for the player who plays it."""
        theirs = getattr(self._core.CubeOwner, _THEIR_OWNER[context.cube_owner].upper())
        result = self._core.cubeful_probs_and_equity_nply(
            to_board(after.swap()), theirs, self._network, self._plies, n_threads=self._threads,
            cube_value=context.cube_value, away1=context.away2, away2=context.away1,
            is_crawford=context.is_crawford, jacoby=context.jacoby, beaver=context.beaver,
            bearoff_db=self._bearoff, root_board=to_board(before))
        return -float(result["equity"])


class _Batches:
    """bgsage's batch checker play (its move lists, ranked, over the cores) with the networks made
    once: ``bgsage.batch_checker_play`` builds them from their files at every call (25 to 35 ms of
    CPU each, two or three per review) and wraps every move of every answer in Python objects,
    where the review reads the equities alone.  The same C++ call with the same arguments as
    bgsage's, so the same equities; the deeper search's position cache is cleared after every
    batch, as bgsage's own analyzers clear theirs, and one batch runs at a time."""

    FILTER_MAX_MOVES = 5
    FILTER_THRESHOLD = 0.08
    """bgsage's batch defaults: at 2 plies the best 5 plays within 0.08 of the best at 1 ply are
    searched again, the others keep their 1-ply equity."""

    def __init__(self, bgsage: Any) -> None:
        self._core = importlib.import_module("bgbot_cpp")
        weights = bgsage.default_weights()
        self._network_args = (weights.strategy_type, weights.weight_paths_list, weights.hidden_sizes_list)
        self._network = self._core.create_strategy(*self._network_args)
        self._searches: dict[int, Any] = {}
        self._lock = threading.Lock()

    def moves(self, items: list[tuple[Position, tuple[int, int], CubeContext]], plies: int) -> list[list[Any]]:
        """For each ``(position, dice, cube)`` its plays as bgsage lists them, best first: dicts with
        the ``board`` after the play and its cubeful ``equity`` (per cube unit)."""
        owners = self._core.CubeOwner
        inputs = []
        for position, dice, context in items:
            entry: dict[str, Any] = {"board": to_board(position), "die1": dice[0], "die2": dice[1],
                                     "cube_value": context.cube_value,
                                     "cube_owner": getattr(owners, context.cube_owner.upper())}
            if context.away1 > 0 or context.away2 > 0:
                entry.update(away1=context.away1, away2=context.away2, is_crawford=context.is_crawford)
            inputs.append(entry)
        match = any(context.away1 > 0 or context.away2 > 0 for _, _, context in items)
        jacoby = any(context.jacoby for _, _, context in items) and not match
        filters = (self.FILTER_MAX_MOVES, self.FILTER_THRESHOLD, 0)
        with self._lock:
            if plies == 1:
                results = self._core.batch_checker_play(inputs, self._network, *filters, jacoby=jacoby)
            else:
                search = self._search(plies)
                try:
                    results = self._core.batch_checker_play(inputs, self._network, search, *filters, jacoby=jacoby)
                finally:
                    search.clear_cache()
        return [result["moves"] for result in results]

    def _search(self, plies: int) -> Any:
        if plies not in self._searches:
            self._searches[plies] = self._core.create_multipy(
                *self._network_args, n_plies=plies, filter_max_moves=self.FILTER_MAX_MOVES,
                filter_threshold=self.FILTER_THRESHOLD, parallel_evaluate=False, parallel_threads=0)
        return self._searches[plies]


class Engine:
    """bgsage at ``plies`` (1 = its raw network, as XG counts plies; each ply is ~20× slower).

    The Assistant's own cube decisions, its close plays and its plays in a decided game are
    searched at ``deep_plies``, one ply deeper at the default 2 (:data:`DEEPER`): that is where a
    shallow search loses equity, and only they pay for it.  The review and the settlement stay
    at ``plies``."""

    def __init__(self, bgsage: Any, plies: int = 1) -> None:
        self.plies = plies
        self.deep_plies = DEEPER.get(plies, plies)
        self._bgsage = bgsage
        self._analyzer = bgsage.BgBotAnalyzer(eval_level=f"{plies}ply")
        self._quick = self._analyzer if plies == 1 else bgsage.BgBotAnalyzer(eval_level="1ply")
        self._deep = (self._analyzer if self.deep_plies == plies
                      else bgsage.BgBotAnalyzer(eval_level=f"{self.deep_plies}ply"))
        self._deep_plays = _PlaySearch(bgsage, self.deep_plies) if self.deep_plies > plies else None
        self._batches: _Batches | None = None

    def _batch(self, items: list[tuple[Position, tuple[int, int], CubeContext]], plies: int) -> list[list[Any]]:
        if self._batches is None:  # made at the first review: the Assistant's own plays never batch
            self._batches = _Batches(self._bgsage)
        return self._batches.moves(items, plies)

    # -- evaluation ----------------------------------------------------------------------

    def play_equities(self, position: Position, dice: tuple[int, int], context: CubeContext,
                      quick: bool = False) -> dict[Position, float]:
        """Cubeful equity (mover's view, per cube unit) of every position our rules allow after ``dice``."""
        return self._equities(position, dice, legal_plays(position, dice), context, quick)

    def _equities(self, position: Position, dice: tuple[int, int], allowed: dict[Position, Play],
                  context: CubeContext, quick: bool = False) -> dict[Position, float]:
        if not allowed:
            return {}
        analyzer = self._quick if quick else self._analyzer
        by_board = {tuple(to_board(after)): after for after in allowed}
        result = analyzer.checker_play(to_board(position), dice[0], dice[1], **context.checker_args())
        equities = {by_board[key]: move.equity for move in result.moves
                    if (key := tuple(move.board)) in by_board}
        for key, after in by_board.items():
            if after not in equities:
                equities[after] = self.after_move_equity(after, context, quick)
        return equities

    def many_play_equities(self, items: list[tuple[Position, tuple[int, int], CubeContext]]
                           ) -> list[dict[Position, float]]:
        """:meth:`play_equities` for many positions at once: one bgsage batch at this engine's
        plies, spread over the cores (its move list, without the bear-off database, as the
        source of equities; a resulting position it does not list is evaluated on its own)."""
        if not items:
            return []
        answers = []
        for (position, dice, context), moves in zip(items, self._batch(items, self.plies)):
            allowed = legal_plays(position, dice)
            by_board = {tuple(to_board(after)): after for after in allowed}
            equities = {by_board[key]: move["equity"] for move in moves if (key := tuple(move["board"])) in by_board}
            for after in allowed:
                if after not in equities:
                    equities[after] = self.after_move_equity(after, context)
            answers.append(equities)
        return answers

    def after_move_equity(self, after: Position, context: CubeContext, quick: bool = False) -> float:
        """Cubeful equity of a position just played to, for the player who played it."""
        analyzer = self._quick if quick else self._analyzer
        return float(analyzer.post_move_analytics(to_board(after), **context.post_move_args()).cubeful_equity)

    def settlement(self, game: rules.Game) -> float:
        """What the running ``game`` is worth to its player on roll (``game.seat``), in points:
        the cubeful equity times the cube, as the game stands.

        Before the roll, the equity with the right cube action (no double where the cube is not
        theirs); with the dice rolled, that of the best play our rules allow; with a double
        offered, the doubler's equity after the taker's best answer (take, drop or beaver); with a
        beaver to answer, the better of dropping it and taking it.
        """
        context = CubeContext.of(game, game.seat)
        if game.phase is rules.Phase.TO_MOVE and game.dice is not None:
            equities = self.play_equities(game.board, game.dice, context)
            if equities:
                return max(equities.values()) * game.cube
        if game.phase is rules.Phase.DOUBLE_OFFERED and game.beavered:
            taken = self.cube_analysis(game.board, replace(context, cube_value=2 * game.cube, cube_owner="player"))
            return max(-1.0, 2 * float(taken.equity_nd)) * game.cube
        cube = self.cube_analysis(game.board, context)
        if game.phase is rules.Phase.DOUBLE_OFFERED:
            return min(float(cube.equity_dt), float(cube.equity_dp)) * game.cube
        return float(cube.optimal_equity) * game.cube

    def winning_chance(self, position: Position) -> float:
        """The chance that the player on roll in ``position`` (before rolling) wins the game."""
        theirs = self._quick.post_move_analytics(to_board(position.swap()))
        return 1.0 - float(theirs.probs.win)

    def cube_analysis(self, position: Position, context: CubeContext) -> Any:
        """bgsage's CubeActionResult for the player on roll (equities per cube unit)."""
        return self._analyzer.cube_action(to_board(position), **context.checker_args())

    def luck(self, rolls: list[tuple[Position, CubeContext, tuple[int, int], bool]]) -> list[float]:
        """The luck of each roll ``(position before it, cube, dice, opening?)``: the equity of its
        best play minus the average over every roll (15 for an opening roll, which has no doubles)."""
        return [luck for luck, _ in self.luck_and_chances(rolls, [None] * len(rolls))]

    def luck_and_chances(self, rolls: list[tuple[Position, CubeContext, tuple[int, int], bool]],
                         played: list[Position | None]) -> list[tuple[float, float | None]]:
        """For each roll its luck (see :meth:`luck`) and the mover's chance to win the game after
        playing it to ``played`` (None where not asked, or where bgsage does not list that play).

        One bgsage batch at 1 ply for all of them, whatever the strength: this is 21 checker plays
        per roll, and at 1 ply they cost a third of a millisecond each in a batch.  The chances
        come from the same batch (the list of the dice rolled holds every play, with its
        probabilities), so the review's chart costs no evaluation of its own.
        """
        items = [(position, (a, b), context)
                 for position, context, _, opening in rolls for a, b in ALL_ROLLS if not (opening and a == b)]
        results = iter(self._batch(items, 1))
        answers: list[tuple[float, float | None]] = []
        for (position, context, dice, opening), after in zip(rolls, played, strict=True):
            equities, chance = {}, None
            for a, b in ALL_ROLLS:
                if opening and a == b:
                    continue
                moves = next(results)
                rolled = (a, b) == (min(dice), max(dice))
                if moves:
                    equities[(a, b)] = moves[0]["equity"]
                    if rolled and after is not None:
                        board = to_board(after)
                        chance = next((float(move["probs"][0]) for move in moves if list(move["board"]) == board),
                                      None)
                else:  # no play: the position stays as it is, with the opponent on roll
                    analytics = self._quick.post_move_analytics(to_board(position), **context.post_move_args())
                    equities[(a, b)] = float(analytics.cubeful_equity)
                    if rolled and after is not None:
                        chance = float(analytics.probs.win)
            weights = {roll: 1 if roll[0] == roll[1] else 2 for roll in equities}
            average = sum(equities[roll] * weights[roll] for roll in equities) / sum(weights.values())
            answers.append((equities[(min(dice), max(dice))] - average, chance))
        return answers

    # -- the Assistant's decisions -------------------------------------------------------

    def choose_play(self, game: rules.Game) -> Play:
        """The best play the rules allow for the rolled dice (empty when none is possible)."""
        assert game.dice is not None
        allowed = legal_plays(game.board, game.dice)
        if len(allowed) < 2:
            return next(iter(allowed.values()), ())
        context = CubeContext.of(game, game.seat)
        equities = self._equities(game.board, game.dice, allowed, context)
        best = max(equities, key=lambda after: equities[after])
        if self._deep_plays is None:
            return allowed[best]
        close = close_plays(equities, self._decided(best))
        if len(close) > 1:
            deeper = {after: self._deep_plays.equity(game.board, after, context) for after in close}
            return allowed[max(deeper, key=lambda after: deeper[after])]
        return allowed[close[0]]

    def wants_to_double(self, game: rules.Game) -> bool:
        """Should the player on roll double now (the caller has checked that they may)?"""
        if not self.would_think_of_doubling(game):
            return False
        analysis = self._cube_decision(game.board, CubeContext.of(game, game.seat))
        # Where a pass cashes as much as playing on is worth, cash: at 3 plies bgsage's no-double
        # equity of a crushing position can reach the cash exactly (a blitz under Jacoby), a tie
        # it leaves undoubled, while any bad roll of the opponent's could still turn it.
        cash = not analysis.should_take and analysis.equity_dp >= analysis.equity_nd
        return bool(analysis.should_double or cash)

    def would_think_of_doubling(self, game: rules.Game) -> bool:
        """Is a double worth a cube analysis now: post-Crawford, or see :meth:`_double_thinkable`?"""
        return rules.is_post_crawford(game) or self._double_thinkable(game.board)

    def _decided(self, after: Position) -> bool:
        """Is the game decided once ``after`` is played, only gammons and backgammons at stake (1 ply)?"""
        win = float(self._quick.post_move_analytics(to_board(after)).probs.win)
        return win < DECIDED or win > 1.0 - DECIDED

    def _double_thinkable(self, position: Position) -> bool:
        """Is a double worth a cube analysis (1 ply: a winning chance or an equity high enough)?"""
        theirs = self._quick.post_move_analytics(to_board(position.swap()))
        return 1.0 - float(theirs.probs.win) >= DOUBLING_WINDOW or -float(theirs.cubeless_equity) >= DOUBLING_EQUITY

    def _cube_decision(self, position: Position, context: CubeContext) -> Any:
        """bgsage's CubeActionResult at ``deep_plies``, for the Assistant's own cube decisions."""
        return self._deep.cube_action(to_board(position), **context.checker_args())

    def answer_double(self, game: rules.Game) -> Answer:
        """Take, drop or beaver the double the player on roll (``game.seat``) has offered."""
        if game.beavered:
            # The doubler was beavered: taking plays on for twice the cube they now face.
            context = CubeContext.of(game, game.seat)
            keep = CubeContext(context.cube_value * 2, "opponent", context.away1, context.away2,
                               context.is_crawford, context.jacoby, context.beaver)
            return "take" if self._cube_decision(game.board, keep).equity_nd > -0.5 else "drop"
        analysis = self._cube_decision(game.board, CubeContext.of(game, game.seat))
        if not analysis.should_take:
            return "drop"
        if analysis.is_beaver and cube_rules.beaver_refusal(game.rules, game.cube * 2) is None:
            return "beaver"
        return "take"

    def accepts_draw(self, game: rules.Game, seat: int) -> bool:
        """``seat`` agrees to a draw only when it is behind: below even chances to win."""
        return self.game_winning_chance(game, seat) < 0.5

    def accepts_resignation(self, game: rules.Game, seat: int, points: int) -> bool:
        """``seat`` accepts a resignation worth ``points`` when playing on is worth no more to it
        (:meth:`settlement`, seen from ``seat``)."""
        value = self.settlement(game)
        return points >= (value if seat == game.seat else -value)

    def game_winning_chance(self, game: rules.Game, seat: int) -> float:
        """``seat``'s chance to win the game as it stands (after the best play if dice are rolled)."""
        if game.phase is rules.Phase.TO_MOVE and game.dice is not None:
            equities = self.play_equities(game.board, game.dice, CubeContext.of(game, game.seat))
            after = max(equities, key=lambda each: equities[each]) if equities else game.board
            mover = 1.0 if after.mover_off == CHECKERS else 1.0 - self.winning_chance(after.swap())
        else:
            mover = self.winning_chance(game.board)
        return mover if seat == game.seat else 1.0 - mover
