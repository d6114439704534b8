"""The Assistant's levels, from beginner to world class: weaker by the engine's own means only.

The strongest level is the Assistant as configured (:class:`pbem.assistant.engine.Engine`,
unchanged).  Every weaker level decides with bgsage's raw network (1 ply); below expert it adds
noise to the equity of each candidate, as gnubg's weaker levels do: Gaussian noise of ``noise``
(per cube unit) on every legal play, and on the gain of doubling and of taking, and it then
chooses the best after the noise.  Candidates that lose more than ``max_loss`` at 1 ply are never
chosen, so a weak level plays a second- or third-best play where it costs little, never an
absurd one (it still drops a hopeless double and takes a clear take).  Plays come from
:func:`pbem.rules.moves.legal_plays` only.

The noise is reproducible: its generator is seeded by the game's own data (the caller passes the
game's dice seed), the level and the number of actions so far, so replaying a game gives the same
plays.  Which parameters give which strength was measured with GNU Backgammon
(``bench/assistant_bench.py --levels``; the table is in docs/development.md).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Final

from pbem.rules import cube as cube_rules
from pbem.rules import game as rules
from pbem.rules.moves import Play, legal_plays

from pbem.assistant.engine import Answer, CubeContext, Engine


@dataclass(frozen=True)
class Level:
    """One level: its key (its words are the templates' ``lines.txt`` ``assistant_level``) and its noise."""

    key: str
    noise: float = 0.0
    """Standard deviation of the noise on each equity, per cube unit (0: the 1-ply choice itself)."""
    max_loss: float = 0.0
    """No play or cube action losing more than this (per cube unit, at 1 ply) is ever chosen."""


LEVELS: Final[tuple[Level, ...]] = (
    Level("beginner", noise=0.10, max_loss=0.20),
    Level("intermediate", noise=0.055, max_loss=0.11),
    Level("advanced", noise=0.03, max_loss=0.06),
    Level("expert"),
    Level("world_class"),
)
"""Weakest first; the last is today's Assistant at the configured plies (its noise is unused).
Tuned by ``bench/assistant_bench.py --levels`` (docs/development.md has the table)."""
STRONGEST: Final = "world_class"
BY_KEY: Final[dict[str, Level]] = {level.key: level for level in LEVELS}

WORDS: Final[dict[str, str]] = {
    "beginner": "beginner", "anfänger": "beginner", "anfaenger": "beginner",
    "intermediate": "intermediate", "mittelstufe": "intermediate", "mittel": "intermediate",
    "advanced": "advanced", "fortgeschritten": "advanced", "fortgeschrittene": "advanced",
    "expert": "expert", "experte": "expert",
    "world_class": "world_class", "worldclass": "world_class", "world-class": "world_class",
    "weltklasse": "world_class",
}
"""The words a mail may name a level by, in either language (lower case); ``world class`` is two."""


def level_of(words: list[str]) -> tuple[str, int] | None:
    """The level the first words name and how many words that took (``world class`` is two),
    or None when they name none."""
    if words[:2] == ["world", "class"]:
        return STRONGEST, 2
    if words and words[0] in WORDS:
        return WORDS[words[0]], 1
    return None


class NoisyPlayer:
    """A weaker level's decisions: the 1-ply engine's equities with seeded noise added."""

    def __init__(self, engine: Engine, level: Level, seed: str) -> None:
        assert engine.plies == 1, "a weaker level plays with the raw network"
        self._engine, self._level, self._seed = engine, level, seed

    def _random(self, game: rules.Game, what: str) -> random.Random:
        """The generator for one decision: the game's seed, its number of actions, the decision's kind."""
        text = f"{self._seed}:{self._level.key}:{len(game.record)}:{what}"
        return random.Random(hashlib.sha256(text.encode()).digest())

    def _noise(self, rng: random.Random) -> float:
        return rng.gauss(0.0, self._level.noise)

    def choose_play(self, game: rules.Game) -> Play:
        """The best play after noise among those within ``max_loss`` of the best at 1 ply."""
        assert game.dice is not None
        allowed = legal_plays(game.board, game.dice)
        if len(allowed) < 2:
            return next(iter(allowed.values()), ())
        equities = self._engine.play_equities(game.board, game.dice, CubeContext.of(game, game.seat))
        best = max(equities.values())
        rng = self._random(game, "play")
        ranked = sorted(equities, key=lambda after: -equities[after])  # a fixed order for the generator
        noisy = {after: equities[after] + self._noise(rng) for after in ranked
                 if best - equities[after] <= self._level.max_loss}
        return allowed[max(noisy, key=lambda after: noisy[after])]

    def wants_to_double(self, game: rules.Game) -> bool:
        """Doubles where the gain of doubling plus noise is positive, a loss of at most ``max_loss``."""
        if not self._engine.would_think_of_doubling(game):
            return False
        analysis = self._engine.cube_analysis(game.board, CubeContext.of(game, game.seat))
        gain = min(float(analysis.equity_dt), float(analysis.equity_dp)) - float(analysis.equity_nd)
        return self._decide(gain, self._random(game, "double"))

    def answer_double(self, game: rules.Game) -> Answer:
        """Takes where taking gains (its equity against the drop's, seen by the taker) plus noise;
        beavers only where the engine itself would."""
        if game.beavered:
            return self._engine.answer_double(game)
        analysis = self._engine.cube_analysis(game.board, CubeContext.of(game, game.seat))
        gain = float(analysis.equity_dp) - float(analysis.equity_dt)  # the doubler's loss is the taker's gain
        if not self._decide(gain, self._random(game, "take")):
            return "drop"
        if analysis.is_beaver and analysis.should_take and cube_rules.beaver_refusal(game.rules, game.cube * 2) is None:
            return "beaver"
        return "take"

    def _decide(self, gain: float, rng: random.Random) -> bool:
        """Yes when ``gain`` plus noise is positive; never where that costs more than ``max_loss``."""
        if abs(gain) > self._level.max_loss:
            return gain > 0
        return gain + self._noise(rng) > 0

    def accepts_draw(self, game: rules.Game, seat: int) -> bool:
        return self._engine.accepts_draw(game, seat)

    def accepts_resignation(self, game: rules.Game, seat: int, points: int) -> bool:
        return self._engine.accepts_resignation(game, seat, points)


def player(level: str, strongest: Engine, seed: str) -> Engine | NoisyPlayer:
    """The decisions of ``level``: the configured engine itself at the strongest level, else the
    raw network (1 ply, loaded once per process) with the level's noise, seeded by ``seed``."""
    from pbem import assistant  # the package's shared engines (it does not import this module)

    chosen = BY_KEY.get(level, BY_KEY[STRONGEST])
    raw = strongest if strongest.plies == 1 else assistant.engine(1)
    if chosen.key == STRONGEST or raw is None:
        return strongest
    return NoisyPlayer(raw, chosen, seed)
