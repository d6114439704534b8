"""The player over time on their own page (issue 38, point 3): every rated result keeps each
player's new rating of its list (none for a game against the Assistant, which is unrated), each
reviewed match has its performance rating (PR) from the stored reviews of all its games, and
every finished match counts in the wins and losses of its format."""

from __future__ import annotations

import re
from xml.etree import ElementTree

import pytest
from post_office import LoadedDice, Player, PostOffice, acts, invite_and_accept
from sqlmodel import Session, col, select

from test_web_board import client_of, web_config

from pbem.assistant.performance import band, performance_rating
from pbem.render.views import FormatRecord, MatchPR, RatingHistory
from pbem.service.pages import player_history
from pbem.service.pages.player_page import PlayerPages
from pbem.store.db import session_scope, utc_now
from pbem.web.security import HEADERS
from pbem.store.game_records import MatchStatus, RatingChange, ReviewJob
from pbem.store.game_records import Player as PlayerRow


@pytest.fixture
def office(config) -> PostOffice:
    """With the web board (the players' pages); Ben may be invited more than three times a day:
    the season below invites him four times."""
    limits = config.limits.model_copy(update={"invitations_received_per_day": 10})
    return PostOffice(web_config(config.model_copy(update={"limits": limits})), LoadedDice(seed=1))


def start(office: PostOffice, anna: Player, ben: Player, invitation: str) -> int:
    """Anna opens with 3-1 and plays it; then it is Ben's turn."""
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, invitation)
    acts(office, anna, "8/5 6/5")
    return match_id


def play_season(office: PostOffice, anna: Player, ben: Player) -> dict[str, int]:
    """Anna beats Ben, who leaves each table ($quit): a single game, a match to 3, a series of 3
    games and a money session; the ids of the four."""
    played = {}
    for name, invitation, games in (("single", "invite ben@example.org", 1),
                                    ("match", "invite ben@example.org match 3", 1),
                                    ("series", "invite ben@example.org games 3", 3),
                                    ("money", "invite ben@example.org money", 1)):
        played[name] = start(office, anna, ben, invitation)
        for _ in range(games):
            ben.reply("$quit")
        assert office.table(played[name]).status is MatchStatus.FINISHED
    return played


@pytest.fixture
def season(office, anna, ben) -> dict[str, int]:
    return play_season(office, anna, ben)


def history(office: PostOffice, address: str) -> list[tuple[str, int, float, float, int]]:
    with Session(office.engine) as session:
        player = session.exec(select(PlayerRow).where(PlayerRow.address == address)).one()
        return [(change.kind, change.match_id, change.before, change.rating, change.experience)
                for change in session.exec(select(RatingChange).where(RatingChange.player_id == player.id)
                                           .order_by(col(RatingChange.id))).all()]


def page_of(office: PostOffice, address: str):
    with Session(office.engine) as session:
        token = session.exec(select(PlayerRow).where(PlayerRow.address == address)).one().page_token
    assert token is not None
    page = PlayerPages(office.config, office.engine).page(token)
    assert page is not None
    return page


def test_every_rated_result_keeps_each_players_new_rating_of_its_list(office, anna, ben, season):
    anna_row = [row for row in history(office, anna.address)]
    assert [(kind, match) for kind, match, *_ in anna_row] == [
        ("casual", season["single"]), ("match", season["match"]), ("casual", season["series"]),
        ("casual", season["money"])]
    assert anna_row[0][2:] == (1500.0, 1510.0, 1) and anna_row[1][2:] == (1500.0, pytest.approx(1517.32), 3)
    casual = [row for row in anna_row if row[0] == "casual"]
    assert [row[2] for row in casual[1:]] == [row[3] for row in casual[:-1]], "each starts where the last ended"
    assert [row[4] for row in casual] == [1, 5, 6]  # a series of 3 counts 4, a money game 1
    ben_casual = [row for row in history(office, ben.address) if row[0] == "casual"]
    assert [row[3] for row in ben_casual] == [3000.0 - row[3] for row in casual]  # equal K: what one wins, one loses
    with Session(office.engine) as session:
        for address, rows in ((anna.address, anna_row), (ben.address, history(office, ben.address))):
            now = session.exec(select(PlayerRow).where(PlayerRow.address == address)).one()
            assert (now.rating_casual, now.rating_match) == ([r for r in rows if r[0] == "casual"][-1][3],
                                                             [r for r in rows if r[0] == "match"][-1][3])
    (match_list, casual_list) = page_of(office, anna.address).history
    assert match_list == RatingHistory("match", 1500.0, (match_list.steps[0],))
    assert match_list.steps[0].rating == anna_row[1][3]
    assert casual_list.kind == "casual" and casual_list.start == 1500.0
    assert [step.rating for step in casual_list.steps] == [row[3] for row in casual]
    assert casual_list.steps[0].day == utc_now().date().isoformat()


def test_a_list_of_many_changes_draws_the_newest_and_counts_the_others(office, anna, ben, season, monkeypatch):
    monkeypatch.setattr(player_history, "HISTORY_SHOWN", 2)
    casual = [row for row in history(office, anna.address) if row[0] == "casual"]
    (_, shown) = page_of(office, anna.address).history
    assert shown.more == 1 and shown.start == casual[1][2]
    assert [step.rating for step in shown.steps] == [casual[1][3], casual[2][3]]


def test_a_game_against_the_assistant_keeps_no_rating(office, anna):
    anna.write_confirmed("play assistant")
    anna.reply("$quit")
    assert office.table().status is MatchStatus.FINISHED
    assert history(office, anna.address) == []
    assert page_of(office, anna.address).history == ()


def test_each_reviewed_match_has_the_pr_of_its_games_stored_reviews(office, anna, ben, season):
    office.review()  # the daemon's review job, as it runs: every game of the four matches
    with Session(office.engine) as session:
        jobs = session.exec(select(ReviewJob).where(ReviewJob.match_id == season["series"])).all()
    assert len(jobs) == 2 and all(job.result for job in jobs)  # game 2 had no play: no review
    seat = 0 if office.table(season["series"]).players[0].address == anna.address else 1
    lost = sum(job.result["players"][seat]["lost"] for job in jobs)
    decisions = sum(job.result["players"][seat]["decisions"] for job in jobs)
    assert decisions > 0
    page = page_of(office, anna.address)
    (series,) = [row for row in page.finished if row.rules.format == "games"]
    expected = performance_rating(lost, decisions)
    assert series.pr is not None and series.pr.pr == expected and series.pr.band == band(expected)
    # The chart's points: the same figures, the oldest first, with the moving average.
    assert [point.pr for point in page.prs] == [row.pr.pr for row in reversed(page.finished) if row.pr]
    assert page.prs[-1].average == round(sum(point.pr for point in page.prs) / len(page.prs), 1)


def test_the_pr_combines_a_matchs_games_and_none_while_a_game_is_pending(office, anna, ben, season):
    series = season["series"]
    seat = 0 if office.table(series).players[0].address == anna.address else 1
    figures = [(10, 120, 4, 300), (30, 360, 0, 0), (0, 0, 6, 90)]  # (her decisions, lost, his decisions, lost)
    with session_scope(office.engine) as session:
        for queued in session.exec(select(ReviewJob).where(ReviewJob.match_id == series)).all():
            session.delete(queued)  # in their place, reviews of known figures
        session.flush()
        for number, (mine, my_loss, theirs, their_loss) in enumerate(figures, start=1):
            players = [{}, {}]
            players[seat] = {"decisions": mine, "error_rate": 0, "lost": my_loss, "luck": 0}
            players[1 - seat] = {"decisions": theirs, "error_rate": 0, "lost": their_loss, "luck": 0}
            session.add(ReviewJob(match_id=series, game_number=number, game={}, result={"players": players},
                                  done_at=utc_now()))
    (row,) = [row for row in page_of(office, anna.address).finished if row.rules.format == "games"]
    assert row.pr == MatchPR(pr=6.0, band="advanced", opponent_pr=19.5)  # 480/40/2; 390/10/2
    (his,) = [row for row in page_of(office, ben.address).finished if row.rules.format == "games"]
    assert his.pr == MatchPR(pr=19.5, band="beginner", opponent_pr=6.0)
    with session_scope(office.engine) as session:
        session.add(ReviewJob(match_id=series, game_number=4, game={}))
    (row,) = [row for row in page_of(office, anna.address).finished if row.rules.format == "games"]
    assert row.pr is None and row.review_pending


def test_a_match_of_forced_plays_only_has_no_pr():
    zero = {"decisions": 0, "lost": 0}
    assert player_history.match_pr([zero, {"decisions": 4, "lost": 80}], 0) is None
    assert player_history.match_pr([zero, {"decisions": 4, "lost": 80}], 1) == MatchPR(10.0, "intermediate", None)


def test_wins_and_losses_by_format_count_every_finished_match(office, anna, ben, season):
    assert page_of(office, anna.address).records == (
        FormatRecord("match", 3, 1, 0, 0), FormatRecord("games", 3, 1, 0, 0), FormatRecord("single", 1, 1, 0, 0),
        FormatRecord("money", 0, 1, 0, 0))
    start(office, anna, ben, "invite ben@example.org match 3")
    anna.reply("$quit")  # a running match does not count until it ends
    assert page_of(office, ben.address).records[0] == FormatRecord("match", 3, 1, 1, 0)


HOSTILE = '</svg><script>alert(1)</script>&"x'


def test_the_pages_charts_are_svg_with_every_name_escaped_and_the_headers_of_every_page(office):
    """Each chart parses as XML on its own (no name can end it early), names a hostile player
    only as text, and the page keeps the headers of every page: the CSP allows no inline script."""
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    season = play_season(office, anna, ben)
    with session_scope(office.engine) as session:  # names as a From header could not bring them
        for row in session.exec(select(PlayerRow)).all():
            row.name += HOSTILE
            session.add(row)
        for queued in session.exec(select(ReviewJob).where(ReviewJob.match_id == season["match"])).all():
            session.delete(queued)
        session.add(ReviewJob(match_id=season["match"], game_number=1, game={}, done_at=utc_now(), result={
            "players": [{"decisions": 8, "error_rate": 0, "lost": 64, "luck": 0}] * 2}))
    client = client_of(office)
    with Session(office.engine) as session:
        token = session.exec(select(PlayerRow).where(PlayerRow.address == anna.address)).one().page_token
    answer = client.get(f"/p/{token}")
    assert answer.status_code == 200
    html = answer.text
    assert "<script" not in html and "alert(1)</script>" not in html
    assert "Ben&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;&#34;x" in html  # the tables' own escaping
    svgs = re.findall(r"<svg .*?</svg>", html, re.S)
    assert len(svgs) == 4  # the match and casual ratings, the PR, the wins and losses
    descriptions = []
    for svg in svgs:
        root = ElementTree.fromstring(svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert not root.findall(".//{http://www.w3.org/2000/svg}script")
        descriptions.append(root.findtext("{http://www.w3.org/2000/svg}desc"))
    assert all(f"Anna{HOSTILE}" in text for text in descriptions), descriptions
    assert descriptions[0] == f"The PR of Anna{HOSTILE} in 1 reviewed match: 4.0 in the last one, 4.0 on average over the last 1."
    for header, value in HEADERS.items():
        assert answer.headers[header] == value
    assert "script-src 'self'" in answer.headers["Content-Security-Policy"]


def test_the_charts_and_their_tables_in_german(office, anna, ben, season):
    anna.reply("sprache de")
    with Session(office.engine) as session:
        token = session.exec(select(PlayerRow).where(PlayerRow.address == anna.address)).one().page_token
    html = client_of(office).get(f"/p/{token}").text
    assert "<h2>Siege und Niederlagen nach Format</h2>" in html
    assert "<tr><td>Matches auf 3 Punkte</td><td>1</td><td>0</td><td>0</td></tr>" in html
    rating = re.search(r"<desc>(Match-Wertung von Anna: .*?)</desc>", html).group(1)
    assert rating == "Match-Wertung von Anna: von 1500,0 auf 1517,3 in 1 gewertetem Ergebnis."
    assert "<title>Wertung freier Spiele</title>" in html and "grün: gewonnen, rot: verloren" in html
