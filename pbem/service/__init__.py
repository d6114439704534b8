"""The game service: turns a stored incoming mail into state changes and answers.

``handle_mail`` and the jobs load the whole service (templates, mail, the Assistant) when first
used, not when a module of this package is imported: ``pbem games`` and the other reports need
only the tables and the clocks, and start in a fraction of the time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pbem.config import Config
from pbem.periodic import PeriodicJob

if TYPE_CHECKING:
    from pbem.service.mailroom.inbox import handle_mail


def periodic_jobs(config: Config) -> list[PeriodicJob]:
    """The game service's periodic work for the daemon: the clocks, the reviews, retention and
    the ladders' unanswered challenges."""
    from pbem.service.jobs.clock_job import clock_job
    from pbem.service.jobs.ladder_job import ladder_job
    from pbem.service.jobs.retention import retention_job
    from pbem.service.jobs.review_job import review_job

    return [clock_job(config), review_job(config), retention_job(config), ladder_job(config)]


def __getattr__(name: str) -> Any:
    if name == "handle_mail":
        from pbem.service.mailroom.inbox import handle_mail

        return handle_mail
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["handle_mail", "periodic_jobs"]
