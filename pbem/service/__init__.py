"""The game service: turns a stored incoming mail into state changes and answers."""

from pbem.config import Config
from pbem.periodic import PeriodicJob
from pbem.service.clock_job import clock_job
from pbem.service.inbox import handle_mail
from pbem.service.review_job import review_job


def periodic_jobs(config: Config) -> list[PeriodicJob]:
    """The game service's periodic work for the daemon: the clocks and the reviews."""
    return [clock_job(config), review_job(config)]


__all__ = ["handle_mail", "periodic_jobs"]
