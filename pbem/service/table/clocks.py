"""The clocks of a match as stored in its row: started for every new turn, paused by vacations,
shown in every game mail.  The arithmetic is :mod:`pbem.rules.clock`'s; the job that reminds
and ends games on time is :mod:`pbem.service.jobs.clock_job`.

Only the seat that must act has a running clock.  Its row keeps when that clock started, what
was left of each seat's time bank when its clock last started, how many alarms were given, and
``deadline_at``, the time of the next alarm: the clock job looks for rows whose deadline has
come, with an index, and ``deadline_at`` is None whenever no clock runs (finished matches).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pbem.config import Config
from pbem.rules.clock import Clock, next_alarm_at, time_left
from pbem.service.table.tables import Table
from pbem.store.game_records import MatchRecord, MatchStatus


def move_clock_of(record: MatchRecord, config: Config) -> timedelta:
    """The invitation's move clock (``clock 3d/14d``), else the server's."""
    seconds = record.options.get("move_clock")
    return config.game.move_clock if seconds is None else timedelta(seconds=seconds)


def bank_of(table: Table, seat: int, config: Config) -> timedelta:
    """What is left of ``seat``'s time bank as of its clock's last start (the full bank before)."""
    seconds = table.seats[seat].bank
    if seconds is None:
        seconds = table.record.options.get("time_bank")
    return config.game.time_bank if seconds is None else timedelta(seconds=seconds)


def running_clock(table: Table, config: Config) -> Clock | None:
    """The clock of the seat that must act, or None when no clock runs."""
    record = table.record
    if record.clock_seat is None or record.clock_started_at is None:
        return None
    return Clock(record.clock_started_at, move_clock_of(record, config), bank_of(table, record.clock_seat, config))


def sync(table: Table, config: Config, now: datetime) -> None:
    """Make the stored clock match the game after a mail or a job changed it.

    A new turn (another stamp or another seat to act) stops the clock that ran, charging its
    overtime to that seat's bank, and starts the move clock of the seat to act now, at once or
    when their vacation ends.  No seat to act (an invitation, a finished match): no clock.
    """
    record = table.record
    game = table.game
    acting = game.to_act if table.status is MatchStatus.RUNNING and game is not None else None
    stamp = list(table.stamp)
    if acting is not None and record.clock_seat == acting and record.clock_stamp == stamp:
        return
    running = running_clock(table, config)
    if running is not None and record.clock_seat is not None:
        table.seats[record.clock_seat].bank = time_left(running, now)[1].total_seconds()
    record.clock_seat, record.clock_stamp, record.alarms_given = acting, stamp, 0
    if acting is None:
        record.clock_started_at = record.deadline_at = None
        return
    vacation = table.players[acting].vacation_until
    record.clock_started_at = max(now, vacation) if vacation is not None else now
    _set_deadline(table, config)


def pause(table: Table, seat: int, days: timedelta, config: Config) -> None:
    """``seat`` takes ``days`` of vacation: if their clock runs, it starts that much later.

    A clock that starts during the vacation starts at its end (:func:`sync`), so together the
    vacation is never counted against the player.
    """
    record = table.record
    if record.clock_seat != seat or record.clock_started_at is None:
        return
    record.clock_started_at += days
    _set_deadline(table, config)


def clock_view(table: Table, seat: int, config: Config, now: datetime) -> dict[str, Any] | None:
    """Both clocks as ``seat`` sees them, for the game mail; None when no clock runs."""
    record = table.record
    running = running_clock(table, config)
    if running is None or record.clock_seat is None:
        return None
    move_left, bank_left = time_left(running, now)
    banks = [bank_of(table, each, config) for each in (0, 1)]
    banks[record.clock_seat] = bank_left
    paused = table.players[record.clock_seat].vacation_until
    return {
        "mine": record.clock_seat == seat,
        "move_left": move_left,
        "bank_left": bank_left,
        "my_bank": banks[seat],
        "their_bank": banks[1 - seat],
        "move_clock": running.move_clock,
        "paused_until": moment(paused) if paused is not None and paused > now else None,
    }


def moment(when: datetime) -> str:
    """A time as both languages can show it."""
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _set_deadline(table: Table, config: Config) -> None:
    running = running_clock(table, config)
    assert running is not None
    table.record.deadline_at = next_alarm_at(running, table.record.alarms_given)
