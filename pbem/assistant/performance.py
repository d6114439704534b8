"""The performance rating (PR): one figure for how well a player decided, as XG and DailyGammon
show it.

PR is the equity lost per non-forced decision, in EMG, times 500: a review's ``error_rate`` (the
millipoints lost per decision, gnubg's "error rate mEMG") divided by two.  Its bands are the
ones players of XG know; the words for them are in the templates (``lines.txt``, ``pr_band``), so this
module only says which band a figure falls in.
"""

from __future__ import annotations

from typing import Final

BANDS: Final[tuple[tuple[float, str], ...]] = (
    (2.5, "world_class"),
    (5.0, "expert"),
    (7.5, "advanced"),
    (12.5, "intermediate"),
    (17.5, "casual"),
    (22.5, "beginner"),
)
"""Upper bounds (exclusive) of each band, the best first; anything above the last is ``novice``."""
WORST_BAND: Final = "novice"


def performance_rating(lost_millipoints: float, decisions: int) -> float | None:
    """The PR of ``decisions`` non-forced decisions that lost ``lost_millipoints`` in all, or
    None when there was nothing to decide (every play forced)."""
    if decisions <= 0:
        return None
    return round(lost_millipoints / decisions / 2, 1)


def band(rating: float) -> str:
    """The key of the band ``rating`` lies in: ``world_class`` … ``novice``."""
    for bound, key in BANDS:
        if rating < bound:
            return key
    return WORST_BAND
