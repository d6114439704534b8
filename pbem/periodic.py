"""Periodic work, as the service offers it and the daemon runs it (the clocks, the reviews)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True)
class PeriodicJob:
    """Work the daemon runs every `interval` (the clocks, for instance)."""

    name: str
    run: Callable[[], Awaitable[None]]
    interval: timedelta
    stop: Callable[[], None] | None = None
    """Called when the daemon is asked to stop: finish the work in hand, start no more."""
    close: Callable[[], None] | None = None
    """Called once the daemon has stopped and the job's last run has ended (a worker process to end)."""
