"""The invitation option ``settle``: a game lost on time is scored by the engine's equity (issue 10, item 6)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from post_office import prose_of, LoadedDice, Player, PostOffice, acts, invite_and_accept, recipient, set_game, side

import pbem.assistant
from pbem import commands
from pbem.rules.game import Game, Phase
from pbem.rules.position import Position
from pbem.rules.scoring import Ending, Format
from pbem.service import handle_mail
from pbem.service.jobs.clock_job import check_clocks
from pbem.store.game_records import MatchStatus

T0 = datetime(2030, 3, 1, 12, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.fixture
def office(config) -> PostOffice:
    office = PostOffice(config, LoadedDice(seed=1))
    office.pipeline.handler = lambda session, raw, inbound: handle_mail(
        session, raw, inbound, config, office.dice, now=T0)
    return office


def _start(office: PostOffice, invitation: str) -> tuple[Player, Player, int]:
    """Anna opens with 3-1 and plays 8/5 6/5; then Ben must roll, and his clock runs from T0."""
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, invitation)
    acts(office, anna, "8/5 6/5")
    return anna, ben, match_id


def _time_out(office: PostOffice, match_id: int) -> tuple[Game, Game]:
    """The clock job after Ben's clock (1 day, no bank) ran out: the game before and after."""
    before = office.table(match_id).game
    assert before is not None and before.to_act == 1
    check_clocks(office.engine, office.config, T0 + DAY, office.dice)
    office.file(office.run())
    after = office.table(match_id).game
    assert after is not None and after.result is not None
    return before, after


@pytest.mark.parametrize(("line", "kind"), [
    ("invite ben@example.org settle", Format.SINGLE),
    ("invite ben@example.org single settle", Format.SINGLE),
    ("einladen ben@example.org geld abrechnen", Format.MONEY),
    ("invite ben@example.org settle money stake 5", Format.MONEY),
])
def test_settle_is_an_option_of_money_and_single_games(line: str, kind: Format) -> None:
    (invite,) = commands.parse_commands(line)
    assert isinstance(invite, commands.Invite)
    assert invite.options.settle and invite.options.kind is kind


@pytest.mark.parametrize("line", ["invite ben@example.org match 5 settle", "einladen ben@example.org abrechnen spiele 3"])
def test_settle_is_refused_for_matches_and_series(office, line: str) -> None:
    (error,) = commands.parse_commands(line)
    assert isinstance(error, commands.CommandError) and error.code == "settle-format"
    anna = Player(office, "anna@example.org", "Anna")
    (answer,) = anna.write(line)
    assert "is only for money play and single games" in prose_of(answer) or "gibt es nur im Geldspiel" in prose_of(answer)
    assert office.matches() == []


def test_without_bgsage_settle_is_refused_at_invitation_time(office, monkeypatch) -> None:
    def broken() -> None:
        raise ImportError("No module named 'bgbot_cpp'")

    monkeypatch.setattr(pbem.assistant, "load_bgsage", broken)
    monkeypatch.setattr(pbem.assistant, "_engines", {})
    anna = Player(office, "anna@example.org", "Anna")
    (answer,) = anna.write_confirmed("invite ben@example.org money settle")
    assert "The option settle is not available on this server" in prose_of(answer)
    assert office.matches() == []
    anna.write_confirmed("invite ben@example.org money")  # without the option all is as before
    assert len(office.matches()) == 1


def test_a_timeout_near_the_start_is_settled_by_the_equity_as_a_draw(office) -> None:
    anna, ben, match_id = _start(office, "invite ben@example.org clock 1d/0d settle")
    assert "A game lost on time is settled by the bgsage engine's equity" in prose_of(ben.inbox[0])
    anna.reply("sprache de", to=anna.last)
    before, after = _time_out(office, match_id)
    engine = pbem.assistant.engine(office.config.assistant.plies)
    assert engine is not None
    value = engine.settlement(before)
    assert -0.5 < value < 0  # Ben on roll, a little behind after Anna's 3-1: less than half a point
    result = after.result
    assert result is not None and result.ending is Ending.SETTLED and result.winner is None and result.points == 0
    table = office.table(match_id)
    assert table.status is MatchStatus.FINISHED and table.score.points == (0, 0)
    text = prose_of(ben.last)
    assert "Your time ran out" in text
    assert (f"game is scored by the bgsage engine's cubeful equity of the position as it stands (you on roll): "
            f"{value:+.3f} per cube for you, times the cube of 1, is {value:+.3f} points, rounded to the nearest "
            f"whole point: a draw.") in text
    assert "The game ends in a draw." in text
    assert "lost on time" not in text
    german = prose_of(anna.last)
    assert recipient(anna.last) == anna.address and "Die Zeit von Ben ist abgelaufen" in german
    comma = f"{value:+.3f}".replace(".", ",")
    assert (f"(Ben ist am Zug): {comma} je Würfelstufe für Ben, mal Doppler 1, sind {comma} Punkte, "
            f"gerundet auf ganze Punkte: remis.") in german


def test_a_hopeless_timeout_in_money_play_is_settled_to_the_nearest_point_times_the_cube(office) -> None:
    anna, ben, match_id = _start(office, "invite ben@example.org money clock 1d/0d settle")
    # Ben (on roll) has all fifteen checkers on his six point; Anna bears off her last two next turn.
    set_game(office, match_id, board=Position(side({6: 15}), side({1: 2})), cube=2, cube_owner=1)
    before, after = _time_out(office, match_id)
    assert before.phase is Phase.ROLL_OR_DOUBLE and before.cube_owner == 1  # his cube, but no double: far behind
    engine = pbem.assistant.engine(office.config.assistant.plies)
    assert engine is not None
    value = engine.settlement(before)
    assert value < -2  # a gammon is likely: more than one point per cube
    result = after.result
    assert result is not None and result.ending is Ending.SETTLED and result.winner == 0
    assert result.points == math.floor(-value + 0.5) and result.cube == 2
    table = office.table(match_id)
    assert table.status is MatchStatus.FINISHED and table.score.points == (result.points, 0)
    text = prose_of(anna.last)
    assert recipient(anna.last) == anna.address
    assert f"(Ben on roll): {value / 2:+.3f} per cube for Ben, times the cube of 2, is {value:+.3f} points" in text
    assert f"rounded to the nearest whole point: {result.points} points for you." in text
    assert f"You win the settlement: {result.points} points." in text
