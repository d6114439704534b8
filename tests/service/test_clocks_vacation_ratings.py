"""Clocks, vacations and ratings by mail, with a time source the test controls.

Every mail is handled at ``TimeSource.now`` and the clock job runs at a moment the test names,
so three days pass in an instant.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from post_office import (
    LoadedDice,
    Player,
    PostOffice,
    acts,
    attachment,
    invite_and_accept,
    recipient,
    prose_of,
    text_of,
)
from sqlmodel import Session, select

from pbem.cli import main
from pbem.service import periodic_jobs
from pbem.rules.scoring import MatchRules, Score
from pbem.service import handle_mail
from pbem.service.games import ratings
from pbem.service.jobs.clock_job import check_clocks, due_matches_query
from pbem.service.table.tables import Table
from pbem.store.db import make_engine
from pbem.store.game_records import MatchRecord, MatchStatus, Seat
from pbem.store.game_records import Player as PlayerRow

T0 = datetime(2030, 3, 1, 12, tzinfo=UTC)
DAY, HOUR = timedelta(days=1), timedelta(hours=1)


class TimeSource:
    def __init__(self) -> None:
        self.now = T0


@pytest.fixture
def time() -> TimeSource:
    return TimeSource()


@pytest.fixture
def office(config, time) -> PostOffice:
    office = PostOffice(config, LoadedDice(seed=1))
    office.pipeline.handler = lambda session, raw, inbound: handle_mail(
        session, raw, inbound, config, office.dice, now=time.now)
    return office


def run_clocks(office: PostOffice, at: datetime) -> list:
    """The clock job at ``at``; the mails it sent, filed with their recipients."""
    check_clocks(office.engine, office.config, at, office.dice)
    sent = office.run()
    office.file(sent)
    return sent


def player_row(office: PostOffice, address: str) -> PlayerRow:
    with Session(office.engine) as session:
        row = session.exec(select(PlayerRow).where(PlayerRow.address == address)).one()
        return row


def start(office: PostOffice, anna: Player, ben: Player, invitation: str) -> int:
    """Anna opens with 3-1 and plays it; Ben's clock starts (at T0 + 1 h)."""
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, invitation)
    acts(office, anna, "8/5 6/5")
    return match_id


def test_both_clocks_in_every_game_mail_and_overtime_comes_from_the_bank(office, anna, ben, time):
    start(office, anna, ben, "invite ben@example.org clock 2d/5d")
    assert "Your clock: 2 days left, then time bank 5 days. Anna's time bank: 5 days." in prose_of(ben.last)
    assert "Ben's clock" not in prose_of(anna.last)  # Anna gets no copy of her move (issue 20)
    time.now = T0 + 2 * DAY + 6 * HOUR
    office.dice.load((6, 4))
    acts(office, ben, "roll")  # 6 hours over his move clock; his next decision has a fresh clock
    assert "Your clock: 2 days left, then time bank 4 days 18 hours." in prose_of(ben.last)
    time.now += 3 * DAY
    acts(office, ben, "24/18 13/9")
    assert "You rolled 6-4" in prose_of(ben.last)  # his last mail; none for his own move
    assert "Your clock: 2 days left, then time bank 5 days. Ben's time bank: 3 days 18 hours." in prose_of(anna.last)


def test_clock_jobs_of_several_daemons_at_once_give_each_alarm_once(office, anna, ben):
    """Four clock jobs (as four daemons would run them, each on its own engine) check the same
    due clocks at the same moment: every reminder goes out once."""
    pairs = [(anna, ben)] + [(Player(office, f"anna{n}@example.org", f"Anna {n}"),
                              Player(office, f"ben{n}@example.org", f"Ben {n}")) for n in range(3)]
    for inviter, invited in pairs:
        office.dice.load((3, 1))
        invite_and_accept(office, inviter, invited, f"invite {invited.address} clock 2d/1d")
        acts(office, inviter, "8/5 6/5")
    engines = [make_engine(office.config.database.url) for _ in range(4)]
    with ThreadPoolExecutor(len(engines)) as jobs:
        list(jobs.map(lambda engine: check_clocks(engine, office.config, T0 + DAY, office.dice), engines))
    for engine in engines:
        engine.dispose()
    reminders = office.run()
    assert sorted(recipient(mail) for mail in reminders) == sorted(invited.address for _, invited in pairs)
    assert all("your move clock runs out in 1 day" in prose_of(mail) for mail in reminders)
    assert run_clocks(office, T0 + DAY + HOUR) == []


def test_the_server_defaults_and_german_mails(office, anna, ben):
    start(office, anna, ben, "invite ben@example.org")
    ben.reply("sprache de")
    assert "Ihre Uhr: noch 3 Tage, danach Zeitkonto 14 Tage. Zeitkonto von Anna: 14 Tage." in prose_of(ben.last)


def test_reminders_then_the_time_bank_then_the_match_is_lost_on_time(office, anna, ben):
    match_id = start(office, anna, ben, "invite ben@example.org match 3 clock 2d/1d")
    ben_clock = T0  # Ben's clock started when Anna moved
    assert run_clocks(office, ben_clock + DAY - timedelta(seconds=1)) == []

    (reminder,) = run_clocks(office, ben_clock + DAY)
    assert recipient(reminder) == ben.address
    assert reminder["In-Reply-To"] == ben.inbox[-2]["Message-ID"]
    assert "your move clock runs out in 1 day. Then your time bank of 1 day starts to run." in prose_of(reminder)
    assert "Your clock: 1 day left, then time bank 1 day." in prose_of(reminder)
    assert run_clocks(office, ben_clock + 2 * DAY) == []  # the reminder is given once

    (reminder,) = run_clocks(office, ben_clock + 2 * DAY + 12 * HOUR)
    assert "your time bank runs out in 12 hours. If you do not answer by then, you lose on time." in prose_of(reminder)
    assert "Your clock: 0" not in prose_of(reminder)
    assert "Your clock: less than a minute left, then time bank 12 hours." in prose_of(reminder)

    sent = run_clocks(office, ben_clock + 3 * DAY)
    assert {recipient(mail) for mail in sent} == {anna.address, ben.address}
    table = office.table(match_id)
    record = table.record
    assert table.status is MatchStatus.FINISHED and table.score.points == (3, 0)
    assert record.deadline_at is None and record.clock_seat is None
    assert "Your time ran out: move clock and time bank are empty." in prose_of(ben.last)
    assert "Anna wins a backgammon (on time)" in prose_of(ben.last)
    assert "Anna wins, 3 to 0." in prose_of(ben.last)
    assert "Ben's time ran out" in prose_of(anna.last)
    assert "New match ratings: you 1500.0 → 1517.3, Ben 1500.0 → 1482.7." in prose_of(anna.last)
    assert "Wins 3 points and the match" in (attachment(anna.last, ".mat") or "")
    assert run_clocks(office, ben_clock + 30 * DAY) == []


def test_a_timeout_in_a_single_game_is_scored_like_quit(office, anna, ben):
    """At the start the loser still has checkers in the winner's home: the most, a backgammon."""
    match_id = start(office, anna, ben, "invite ben@example.org clock 1d/0d")
    run_clocks(office, T0 + DAY)
    table = office.table(match_id)
    assert table.status is MatchStatus.FINISHED and table.score.points == (3, 0)
    assert table.game is not None and table.game.result is not None
    assert table.game.result.ending.value == "timeout"
    for player in (anna, ben):  # a game lost on time reveals its dice seed too
        assert f"Dice seed: {table.record.dice_seed}" in text_of(player.last)


def test_a_rematch_keeps_the_clocks_and_rating_of_the_invitation(office, anna, ben):
    first = start(office, anna, ben, "invite ben@example.org clock 1d/0d unrated")
    run_clocks(office, T0 + DAY)
    assert office.table(first).status is MatchStatus.FINISHED
    ben.reply("rematch", to=ben.last)
    rematch = office.table()
    assert rematch.record.rematch_of == first
    assert rematch.record.options == office.table(first).record.options


def test_vacation_pauses_the_clocks_within_the_yearly_allowance(office, anna, ben, time):
    match_id = start(office, anna, ben, "invite ben@example.org clock 2d/1d")
    timeout_before = office.table(match_id).record.clock_started_at + 3 * DAY

    time.now = T0 + DAY
    sent = ben.write_confirmed("urlaub 5")
    assert "your clocks in all your games stand still for 5 days, until 2030-03-07 12:00 UTC" in prose_of(sent[0])
    assert "You have 25 vacation days left this year." in prose_of(sent[0])
    assert run_clocks(office, timeout_before) == []
    assert office.table(match_id).record.deadline_at == T0 + 6 * DAY  # the move reminder, 5 days later
    (reminder,) = run_clocks(office, T0 + 6 * DAY)
    assert "your move clock runs out in 1 day" in prose_of(reminder)

    time.now = T0 + 2 * DAY
    sent = ben.write_confirmed("vacation 26")
    assert "You cannot take 26 days of vacation: the allowance is 30 days a year, and you have 25 days left" \
        in prose_of(sent[0])
    assert player_row(office, ben.address).vacation_days == {"2030": 5}
    ben.write_confirmed("vacation 25")
    assert player_row(office, ben.address).vacation_days == {"2030": 30}
    sent = ben.write_confirmed("vacation 1")
    assert "you have 0 days left" in prose_of(sent[0])


def test_a_turn_that_comes_during_a_vacation_starts_its_clock_when_the_vacation_ends(office, anna, ben, time):
    match_id = start(office, anna, ben, "invite ben@example.org clock 2d/1d")
    anna.write_confirmed("vacation 3")  # at T0: her clock does not run now
    assert office.table(match_id).record.clock_started_at == T0
    time.now = T0 + HOUR
    office.dice.load((6, 4))
    acts(office, ben, "roll")
    acts(office, ben, "24/18 13/9")
    record = office.table(match_id).record
    assert record.clock_seat == 0 and record.clock_started_at == T0 + 3 * DAY
    assert "Your clock: 2 days left, then time bank 1 day (paused for your vacation until 2030-03-04 12:00 UTC)." \
        in prose_of(anna.last)


def test_the_clock_job_finds_due_matches_by_the_deadline_index(office):
    dialect = office.engine.dialect
    sql = str(due_matches_query(T0).compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
    with office.engine.connect() as connection:
        if dialect.name == "postgresql":  # an empty table is read whole unless the planner may not
            connection.exec_driver_sql("SET enable_seqscan = off")
            plan = " ".join(str(row[0]) for row in connection.exec_driver_sql(f"EXPLAIN {sql}"))
            assert "ix_matches_deadline_at" in plan, plan
            return
        plan = " ".join(str(row[-1]) for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
    assert "USING COVERING INDEX ix_matches_deadline_at (deadline_at<?)" in plan or \
        "USING INDEX ix_matches_deadline_at (deadline_at<?)" in plan, plan


def test_a_rated_single_game_changes_the_casual_ratings_and_ratings_lists_them(office, anna, ben):
    start(office, anna, ben, "invite ben@example.org")
    acts(office, ben, "$quit")
    assert "New casual ratings: you 1500.0 → 1510.0, Ben 1500.0 → 1490.0." in prose_of(anna.last)
    assert "New casual ratings: you 1500.0 → 1490.0, Anna 1500.0 → 1510.0." in prose_of(ben.last)
    (answer,) = ben.write("rangliste")
    text = text_of(answer)
    assert "Match ratings:\n  nobody has played a rated match yet\nYou have no rated matches yet" in text
    assert "    1. Anna  1510.0  (experience 1)\n    2. Ben  1490.0  (experience 1)\n" in text
    assert "You are in place 2 of 2 with 1490.0 (experience 1)." in text


def test_a_series_of_three_games_counts_four(office, anna, ben):
    start(office, anna, ben, "invite ben@example.org games 3")
    for _ in range(3):
        ben.reply("$quit")
    assert office.table().status is MatchStatus.FINISHED
    assert "New casual ratings: you 1500.0 → 1520.0, Ben 1500.0 → 1480.0." in prose_of(anna.last)
    assert player_row(office, ben.address).experience_casual == 4


def test_money_play_is_rated_game_by_game(office, anna, ben):
    start(office, anna, ben, "invite ben@example.org money")
    acts(office, ben, "$quit")
    ben_row = player_row(office, ben.address)
    assert (ben_row.rating_casual, ben_row.experience_casual, ben_row.rating_match) == (1490.0, 1, 1500.0)


def test_unrated_games_change_no_rating(office, anna, ben):
    start(office, anna, ben, "invite ben@example.org match 3 unrated")
    acts(office, ben, "$quit")
    assert office.table().status is MatchStatus.FINISHED
    assert "ratings" not in prose_of(anna.last)
    for address in (anna.address, ben.address):
        row = player_row(office, address)
        assert (row.rating_match, row.experience_match, row.rating_casual) == (1500.0, 0, 1500.0)


def test_games_against_the_assistant_are_not_rated():
    def table(address: str, rated: bool = True) -> Table:
        record = MatchRecord(options={"rated": rated}, score={})
        seats = (Seat(match_id=1, number=0, player_id=1, token="a"), Seat(match_id=1, number=1, player_id=2, token="b"))
        return Table(record, seats, (PlayerRow(address="anna@example.org"), PlayerRow(address=address)),
                     Score(MatchRules()), None)

    assert ratings.is_rated(table("ben@example.org"))
    assert not ratings.is_rated(table("ben@example.org", rated=False))
    assert not ratings.is_rated(table("assistant@pbem.invalid"))


def test_pbem_serve_runs_the_clock_job_the_review_job_and_retention(config):
    clock, review, retention, ladders = periodic_jobs(config)
    assert ladders.name == "expire-challenges" and ladders.interval == timedelta(minutes=10)
    assert clock.name == "check-clocks" and clock.interval == timedelta(minutes=1)
    assert retention.name == "retention" and retention.interval == timedelta(hours=1)
    assert review.name == "review-games" and review.interval == timedelta(seconds=5)
    assert review.stop is not None and review.close is not None
    review.close()


def test_operator_commands_export_games_players(office, anna, ben, config_file, capsys, tmp_path):
    start(office, anna, ben, "invite ben@example.org match 3")
    assert main(["games", "--config", str(config_file)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0].split() == ["id", "players", "format", "score", "status", "to", "act", "clock", "runs", "out"]
    assert listing[1].split() == ["1", "anna@example.org", "–", "ben@example.org", "match", "3", "0-0", "running",
                                  "ben@example.org", "2030-03-18", "12:00", "UTC"]
    assert main(["status", "--config", str(config_file)]) == 0
    status = capsys.readouterr().out
    assert "next clock alarms: 1" in status and "match 1: seat 1's clock at 2030-03-" in status
    assert main(["export", "1", "--config", str(config_file)]) == 0
    running = capsys.readouterr().out
    assert running.startswith(" 3 point match\n") and "31: 8/5 6/5" in running

    run_clocks(office, T0 + 17 * DAY)
    assert main(["export", "1", "--config", str(config_file), "-o", str(tmp_path / "m.mat")]) == 0
    assert "Wins 3 points and the match" in (tmp_path / "m.mat").read_text(encoding="utf-8")
    assert main(["export", "7", "--config", str(config_file)]) == 1
    assert "no game or match with id 7" in capsys.readouterr().err

    assert main(["players", "--config", str(config_file)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert rows[1][:10] == ["1", "anna@example.org", "Anna", "1517.3", "3", "1500.0", "0", "1500.0", "0", "0"]
    assert rows[2][:10] == ["2", "ben@example.org", "Ben", "1482.7", "3", "1500.0", "0", "1500.0", "0", "0"]
