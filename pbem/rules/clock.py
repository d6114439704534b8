"""The move clock and the time bank (SPEC §2), as arithmetic on times the caller passes in.

The player who must act has a *move clock* (3 days by default) that starts afresh with every
turn; when it has run out, their *time bank* (14 days for the whole game or match by default)
runs; when that is empty too, they lose on time.  Along the way they get two reminders: one
before the move clock runs out and one before the time bank does.  Nothing here reads the
time of day, so every rule can be tested by passing the moment in question.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

REMINDER_LEAD = timedelta(hours=24)
"""How long before a clock runs out its reminder goes (half the clock when that is shorter)."""

_ZERO = timedelta(0)


class Alarm(StrEnum):
    MOVE_REMINDER = "move_reminder"
    BANK_REMINDER = "bank_reminder"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class Clock:
    """The running clock of the player who must act.

    ``started_at`` is when their move clock started (pushed back past a vacation), ``bank``
    what was left of their time bank at that moment.
    """

    started_at: datetime
    move_clock: timedelta
    bank: timedelta

    @property
    def move_ends_at(self) -> datetime:
        return self.started_at + self.move_clock

    @property
    def timeout_at(self) -> datetime:
        return self.move_ends_at + self.bank


def time_left(clock: Clock, now: datetime) -> tuple[timedelta, timedelta]:
    """(move clock left, time bank left) at ``now``: the bank only shrinks once the move clock is out."""
    elapsed = max(now - clock.started_at, _ZERO)
    overtime = max(elapsed - clock.move_clock, _ZERO)
    return max(clock.move_clock - elapsed, _ZERO), max(clock.bank - overtime, _ZERO)


def alarms(clock: Clock) -> list[tuple[datetime, Alarm]]:
    """When this clock must remind or end the game, in order; no bank reminder for an empty bank."""
    result = [(clock.move_ends_at - min(REMINDER_LEAD, clock.move_clock / 2), Alarm.MOVE_REMINDER)]
    if clock.bank > _ZERO:
        result.append((clock.timeout_at - min(REMINDER_LEAD, clock.bank / 2), Alarm.BANK_REMINDER))
    result.append((clock.timeout_at, Alarm.TIMEOUT))
    return result


def next_alarm_at(clock: Clock, done: int) -> datetime:
    """The time of the first alarm after the ``done`` ones already given."""
    return alarms(clock)[done][0]


def due_alarm(clock: Clock, done: int, now: datetime) -> tuple[int, Alarm] | None:
    """The latest alarm due at ``now`` that was not given yet, with its index.

    Only the latest: after a daemon outage a player gets the reminder that still matters (or
    the timeout), not every reminder they missed.
    """
    due = [(index, alarm) for index, (at, alarm) in enumerate(alarms(clock)) if index >= done and at <= now]
    return due[-1] if due else None
