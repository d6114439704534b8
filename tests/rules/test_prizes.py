"""The payout arithmetic of prize games against seed 004's own figures (EdenCity: "4,50 ℂ bzw.
9 ℂ an den Gewinner", ties "abzüglich von 10% wieder zurückgebucht", Preis Einzel paid per point
up to the limit), and that no payout ever creates or loses a cent."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.rules.prizes import Prize, PrizeKind, amount, at_stake, fee, from_cents, payout, prize_winner, to_cents
from pbem.rules.scoring import Ending, Format, MatchRules, Result, Score, WinKind

TEN = Decimal(10)
D = Decimal


def _score(kind: PrizeKind, points: tuple[int, int], games: int) -> Score:
    return Score(Prize(kind).match_rules(64), points=points, games=games)


def _won(winner: int | None, points: int = 1, ending: Ending = Ending.PLAYED) -> Result:
    kind = None if winner is None else WinKind.SINGLE
    return Result(winner, kind, 1, Ending.DRAWN if winner is None else ending, points)


@pytest.mark.parametrize(("stake", "winner_gets"), [("2.50", "4.50"), ("5", "9.00")])
@pytest.mark.parametrize("kind", [PrizeKind.SERIES, PrizeKind.MATCH])
def test_the_winner_of_a_series_or_match_gets_the_seeds_amounts(kind: PrizeKind, stake: str, winner_gets: str) -> None:
    prize = Prize(kind, stake=D(stake))
    score = _score(kind, (2, 1) if kind is PrizeKind.SERIES else (5, 3), 3)
    paid = payout(prize, score, _won(0), TEN)
    assert paid.to_seats == (D(winner_gets), D(0)) and paid.winner == 0
    assert paid.fee == D(stake) * 2 - D(winner_gets)


@pytest.mark.parametrize(("stake", "back"), [("2.50", "2.25"), ("5", "4.50")])
def test_a_tied_series_gives_each_stake_back_less_ten_percent(stake: str, back: str) -> None:
    paid = payout(Prize(PrizeKind.SERIES, stake=D(stake)), _score(PrizeKind.SERIES, (2, 2), 3), _won(1), TEN)
    assert paid.to_seats == (D(back), D(back)) and paid.winner is None
    assert paid.fee == (D(stake) - D(back)) * 2


def test_leaving_the_table_loses_the_series_whatever_the_points() -> None:
    prize = Prize(PrizeKind.SERIES, stake=D("5"))
    score = _score(PrizeKind.SERIES, (4, 1), 2)  # seat 0 leads, then leaves: seat 1 wins 1 point
    last = Result(1, WinKind.SINGLE, 1, Ending.RESIGNED, 1)
    assert prize_winner(score, last) == 1
    assert payout(prize, score, last, TEN).to_seats == (D(0), D("9.00"))
    timeout = Result(0, WinKind.GAMMON, 1, Ending.TIMEOUT, 2)
    assert prize_winner(score, timeout) == 0


@pytest.mark.parametrize(("points", "to_winner", "to_loser", "house"), [
    (1, "10.90", "9.00", "0.10"),   # a single game: 1 won, less 0.10, plus the deposit of 10
    (4, "13.60", "6.00", "0.40"),   # a gammon at cube 2
    (24, "19.00", "0.00", "1.00"),  # a backgammon at cube 8: at most the limit
])
def test_a_single_prize_game_pays_points_times_rate_up_to_the_limit(points: int, to_winner: str, to_loser: str,
                                                                    house: str) -> None:
    prize = Prize(PrizeKind.SINGLE, rate=D(1), limit=TEN)
    paid = payout(prize, _score(PrizeKind.SINGLE, (0, points), 1), _won(1, points), TEN)
    assert paid.to_seats == (D(to_loser), D(to_winner)) and paid.fee == D(house) and paid.winner == 1
    assert at_stake(prize, 4) == D(4) and at_stake(prize, 16) == TEN


def test_a_drawn_single_prize_game_gives_both_deposits_back() -> None:
    prize = Prize(PrizeKind.SINGLE, rate=D(2), limit=D(20))
    assert payout(prize, _score(PrizeKind.SINGLE, (0, 0), 1), _won(None, 0), TEN).to_seats == (D(20), D(20))


def test_the_formats_are_the_seeds() -> None:
    assert Prize(PrizeKind.SERIES).match_rules(64) == MatchRules(Format.GAMES, 3, cube_cap=1)
    assert Prize(PrizeKind.MATCH).match_rules(64) == MatchRules(Format.MATCH, 5, cube_cap=64)
    assert [Prize(kind).rating_weight() for kind in PrizeKind] == [4, 5, 2]


def test_amounts_are_exact_decimals_with_two_places() -> None:
    assert amount("2,50") == amount(2.5) == amount("2.5") == D("2.50")
    assert to_cents(D("2.50")) == 250 and from_cents(450) == D("4.50")
    for wrong in ("2.505", "-1", "x", "nan", "inf"):
        with pytest.raises(ValueError):
            amount(wrong)
    assert fee(D("0.05"), TEN) == D("0.01"), "half a cent rounds up"


cents = st.integers(min_value=1, max_value=100_000).map(from_cents)


@given(kind=st.sampled_from(PrizeKind), stake=cents, rate=cents, limit=cents,
       percent=st.integers(min_value=0, max_value=10_000).map(from_cents),
       points=st.tuples(st.integers(0, 200), st.integers(0, 200)),
       winner=st.sampled_from([0, 1, None]), ending=st.sampled_from(Ending))
def test_every_payout_pays_out_exactly_the_two_deposits(kind, stake, rate, limit, percent, points, winner,
                                                        ending) -> None:
    percent = min(percent, D(100))
    prize = Prize(kind, stake=stake, rate=rate, limit=max(limit, rate))
    last = Result(winner, None if winner is None else WinKind.SINGLE, 1,
                  Ending.DRAWN if winner is None else ending, 0 if winner is None else max(points))
    paid = payout(prize, _score(kind, points, 3), last, percent)
    assert paid.total == prize.deposit * 2
    assert all(value >= 0 and value == value.quantize(D("0.01")) for value in (*paid.to_seats, paid.fee))
