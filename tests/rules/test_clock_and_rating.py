"""The clock arithmetic and the rating formula, against values worked out by hand."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from pbem.rules.clock import Alarm, Clock, alarms, due_alarm, next_alarm_at, time_left
from pbem.rules.rating import (
    Rating,
    RatingKind,
    k_factor,
    kind_of,
    rate,
    underdog_wins,
    weight,
)
from pbem.rules.scoring import Format, MatchRules

T0 = datetime(2030, 1, 1, 12, tzinfo=UTC)
DAY, HOUR = timedelta(days=1), timedelta(hours=1)


def test_the_bank_runs_only_after_the_move_clock():
    clock = Clock(T0, 3 * DAY, 14 * DAY)
    assert time_left(clock, T0 - HOUR) == (3 * DAY, 14 * DAY)
    assert time_left(clock, T0 + 2 * DAY) == (DAY, 14 * DAY)
    assert time_left(clock, T0 + 3 * DAY + 5 * HOUR) == (timedelta(0), 14 * DAY - 5 * HOUR)
    assert time_left(clock, T0 + 30 * DAY) == (timedelta(0), timedelta(0))
    assert clock.timeout_at == T0 + 17 * DAY


def test_alarms_come_a_day_before_each_clock_runs_out_then_the_timeout():
    clock = Clock(T0, 3 * DAY, 14 * DAY)
    assert alarms(clock) == [(T0 + 2 * DAY, Alarm.MOVE_REMINDER), (T0 + 16 * DAY, Alarm.BANK_REMINDER),
                             (T0 + 17 * DAY, Alarm.TIMEOUT)]
    assert next_alarm_at(clock, 1) == T0 + 16 * DAY
    assert due_alarm(clock, 0, T0 + 2 * DAY - timedelta(seconds=1)) is None
    assert due_alarm(clock, 0, T0 + 2 * DAY) == (0, Alarm.MOVE_REMINDER)
    assert due_alarm(clock, 1, T0 + 3 * DAY) is None
    # a daemon that was down gives only the alarm that still matters
    assert due_alarm(clock, 0, T0 + 16 * DAY + HOUR) == (1, Alarm.BANK_REMINDER)
    assert due_alarm(clock, 0, T0 + 20 * DAY) == (2, Alarm.TIMEOUT)


def test_short_clocks_remind_at_half_time_and_an_empty_bank_has_no_reminder():
    clock = Clock(T0, 4 * HOUR, timedelta(0))
    assert alarms(clock) == [(T0 + 2 * HOUR, Alarm.MOVE_REMINDER), (T0 + 4 * HOUR, Alarm.TIMEOUT)]


def test_n_is_the_match_length_a_single_game_one_and_a_series_of_n_games_n_plus_one():
    assert weight(MatchRules(format=Format.MATCH, length=7)) == 7
    assert weight(MatchRules(format=Format.SINGLE, length=1)) == 1
    assert weight(MatchRules(format=Format.GAMES, length=3)) == 4
    assert weight(MatchRules(format=Format.GAMES, length=1)) == 1
    assert weight(MatchRules(format=Format.MONEY, length=0)) == 1
    assert kind_of(MatchRules(format=Format.MATCH, length=7)) is RatingKind.MATCH
    assert {kind_of(MatchRules(format=f, length=3 if f is Format.GAMES else (0 if f is Format.MONEY else 1)))
            for f in (Format.SINGLE, Format.GAMES, Format.MONEY)} == {RatingKind.CASUAL}


def test_k_is_five_for_newcomers_and_falls_to_one():
    assert k_factor(0) == 5
    assert k_factor(250) == 2.5
    assert k_factor(400) == 1
    assert k_factor(5000) == 1


def test_two_newcomers():
    # D = 0: P_u = 1/2 and P = 1/2 whoever wins; K = 5; the change is 4*5*sqrt(n)/2 = 10*sqrt(n).
    won, lost = rate(Rating(), Rating(), 1)
    assert (won, lost) == (Rating(1510.0, 1), Rating(1490.0, 1))
    won, lost = rate(Rating(), Rating(), 5)  # a match to 5
    assert won.rating == pytest.approx(1500 + 10 * math.sqrt(5)) == pytest.approx(1522.3607)
    assert lost.rating == pytest.approx(1477.6393) and won.experience == lost.experience == 5
    won, lost = rate(Rating(), Rating(), weight(MatchRules(format=Format.GAMES, length=3)))  # n = 4
    assert (won.rating, lost.rating) == (1520.0, 1480.0)


def test_each_player_has_their_own_k():
    strong, weak = Rating(1600, 250), Rating(1400, 1000)  # K 2.5 and 1; D = 200
    p_underdog = underdog_wins(200, 1)
    assert p_underdog == pytest.approx(1 / (10 ** 0.1 + 1)) == pytest.approx(0.442688)
    # the favourite wins: P = P_u
    won, lost = rate(strong, weak, 1)
    assert won == Rating(pytest.approx(1600 + 4 * 2.5 * 0.442688, abs=1e-5), 251)
    assert lost == Rating(pytest.approx(1400 - 4 * 1 * 0.442688, abs=1e-5), 1001)
    # the underdog wins: P = 1 - P_u = 0.557312
    won, lost = rate(weak, strong, 1)
    assert won.rating == pytest.approx(1402.229248, abs=1e-5)
    assert lost.rating == pytest.approx(1594.42688, abs=1e-5)
    # in a match to 9 (sqrt n = 3): D*sqrt(n)/2000 = 0.3
    won, lost = rate(weak, strong, 9)
    p = 1 - 1 / (10 ** 0.3 + 1)
    assert won.rating == pytest.approx(1400 + 4 * 1 * 3 * p)
    assert lost.rating == pytest.approx(1600 - 4 * 2.5 * 3 * p)
