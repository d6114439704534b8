"""``pbem games``: a page of matches at a time, newest first, filtered by state and player, with
the command for the next page; found by indexed queries, never a scan of every match."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from pbem.cli import main
from pbem.rules.scoring import Format, MatchRules, Score
from pbem.service.pages.reports import GamesWanted, games_query
from pbem.store.game_records import MatchRecord, MatchStatus, Player, Seat

STATES = [MatchStatus.FINISHED, MatchStatus.RUNNING, MatchStatus.INVITED, MatchStatus.DECLINED]


@pytest.fixture
def matches(engine) -> list[tuple[int, str, str, MatchStatus]]:
    """Twelve matches among Anna, Ben and Cleo in every state: (id, seat 0, seat 1, status)."""
    made = []
    with Session(engine) as session:
        players = [Player(address=f"{name}@example.org") for name in ("anna", "ben", "cleo")]
        session.add_all(players)
        session.flush()
        for number in range(12):
            first, second = players[number % 3], players[(number + 1) % 3]
            status = STATES[number % 4]
            record = MatchRecord(status=status, score=Score(MatchRules(Format.MATCH, 3)).to_dict())
            session.add(record)
            session.flush()
            for seat, player in enumerate((first, second)):
                session.add(Seat(match_id=record.id, number=seat, player_id=player.id, token=f"t{number}x{seat}"))
            made.append((record.id, first.address, second.address, status))
        session.commit()
    return made


def listed(capsys, config_file, *options: str) -> tuple[list[int], str | None]:
    """The ids ``pbem games`` lists, and its line naming the next page (None: none)."""
    assert main(["games", "--config", str(config_file), *options]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["id", "players", "format", "score", "status"]
    more = lines.pop() if lines[-1].startswith("more: ") else None
    return [int(line.split()[0]) for line in lines[1:]], more


def test_pages_newest_first_with_the_command_for_the_next(matches, capsys, config_file):
    ids = sorted((match_id for match_id, *_ in matches), reverse=True)
    assert listed(capsys, config_file) == (ids, None)
    first, more = listed(capsys, config_file, "--limit", "5")
    assert first == ids[:5] and more == f"more: pbem games --before {ids[4]} --limit 5"
    second, more = listed(capsys, config_file, *more.split()[3:])
    assert second == ids[5:10] and more == f"more: pbem games --before {ids[9]} --limit 5"
    assert listed(capsys, config_file, *more.split()[3:]) == (ids[10:], None)


def test_filters_by_state_and_player_and_pages_them(matches, capsys, config_file):
    running = [match_id for match_id, _, _, status in reversed(matches) if status is MatchStatus.RUNNING]
    assert listed(capsys, config_file, "--status", "running") == (running, None)
    cleo = [match_id for match_id, first, second, _ in reversed(matches) if "cleo@example.org" in (first, second)]
    assert len(cleo) == 8
    page, more = listed(capsys, config_file, "--player", "Cleo@Example.org", "--limit", "3")
    assert page == cleo[:3] and more == f"more: pbem games --before {cleo[2]} --player Cleo@Example.org --limit 3"
    assert listed(capsys, config_file, *more.split()[3:])[0] == cleo[3:6]
    both = [match_id for match_id, first, second, status in reversed(matches)
            if "cleo@example.org" in (first, second) and status is MatchStatus.FINISHED]
    assert listed(capsys, config_file, "--player", "cleo@example.org", "--status", "finished") == (both, None)
    assert listed(capsys, config_file, "--player", "nobody@example.org") == ([], None)
    with pytest.raises(SystemExit, match="2"):
        main(["games", "--config", str(config_file), "--status", "lost"])
    assert "invalid choice: 'lost'" in capsys.readouterr().err


def test_a_row_shows_players_format_score_and_state(matches, capsys, config_file):
    assert main(["games", "--config", str(config_file), "--limit", "1"]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    match_id, first, second, status = matches[-1]
    assert row == [str(match_id), first, "–", second, "match", "3", "0-0", status.value, "-", "-"]


@pytest.mark.sqlite_only
@pytest.mark.parametrize("wanted", [GamesWanted(), GamesWanted(status=MatchStatus.RUNNING, before=100),
                                    GamesWanted(player="anna@example.org")])
def test_the_page_is_found_by_an_index(engine, wanted: GamesWanted):
    """The plan SQLite makes for the statement as it is sent, with its parameters unknown."""
    compiled = games_query(wanted, 1 if wanted.player else None).compile(engine)
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}",
                                          tuple(compiled.construct_params()[name] for name in compiled.positiontup or ()))
        plan = " | ".join(row[3] for row in rows)
    assert "TEMP B-TREE" not in plan and "SCAN seats" not in plan, plan  # in order: the LIMIT ends the search
    if wanted.status or wanted.player:
        assert "SCAN matches" not in plan, plan  # found by ix_matches_status or ix_seats_player_id
