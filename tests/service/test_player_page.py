"""A personal page of all my games (issue 20, item 7): every mail's footer links to the player's
own page (a token of its own, never a game's), which lists their games with whose turn it is, the
clocks, the score and the link of their own seat, plus their ratings and credits; the ``games``
mail gives the same links; the same rules as the game pages (headers, limits, no token in logs).
"""

from __future__ import annotations

import logging
import re
from email.message import EmailMessage

import pytest
from post_office import LoadedDice, Player, PostOffice, invite_and_accept, text_of, token_of
from test_web_board import client_of, web_config

from pbem.store.db import session_scope, utc_now
from pbem.store.game_records import ReviewJob

PAGE_LINK = re.compile(r"^(?:All your games|Alle Ihre Spiele): http://127\.0\.0\.1:8080/p/([a-z2-7]{26})$", re.M)


def page_token(mail: EmailMessage) -> str:
    found = PAGE_LINK.search(text_of(mail))
    assert found, text_of(mail)
    return found.group(1)


@pytest.fixture
def games(config):
    """Anna plays Ben (her turn) and has invited Carol (her answer awaited)."""
    office = PostOffice(web_config(config), LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    carol = Player(office, "carol@example.org", "Carol")
    invite_and_accept(office, anna, ben, "invite ben@example.org match 3")
    anna.reply("invite carol@example.org")
    return office, anna, ben, carol


def test_the_page_lists_my_games_with_my_own_links_ratings_and_credits(games) -> None:
    office, anna, ben, carol = games
    client = client_of(office)
    token = page_token(anna.last)
    page = client.get(f"/p/{token}")
    assert page.status_code == 200
    html = page.text
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>",
                      html)
    assert [row[0] for row in rows] == ["Ben", "carol"]  # Carol has not written yet
    ben_row, carol_row = rows
    assert ben_row[1] == "a match to 3 points" and ben_row[2] == "0-0" and ben_row[3] == "<b>your turn</b>"
    assert "Your clock:" in ben_row[4] and "Ben&#39;s time bank" in ben_row[4]
    table = office.table(office.matches()[0].id)  # the match with Ben
    assert f'href="http://127.0.0.1:8080/g/{table.token(0)}"' in ben_row[5]
    assert table.token(1) not in html, "never the opponent's token"
    assert carol_row[3] == "invitation: waiting for the answer"
    assert "Matches</dt><dd>1500.0 (not rated yet)" in html and 'id="credits">100.00\u00a0ℂ (play money only)' in html
    assert page.headers["Content-Security-Policy"] and page.headers["Referrer-Policy"] == "no-referrer"
    assert "<script" not in html and "<form" not in html
    # Ben's page is his own: his seat's link, not Anna's.
    ben_html = client.get(f"/p/{page_token(ben.last)}").text
    assert table.token(1) in ben_html and table.token(0) not in ben_html and token not in ben_html


def test_the_games_mail_gives_the_same_links(games) -> None:
    office, anna, ben, carol = games
    anna.reply("games")
    listing = text_of(anna.last)
    assert f"your game on the web: http://127.0.0.1:8080/g/{office.table(office.matches()[0].id).token(0)}" in listing
    assert page_token(anna.last) == page_token(anna.inbox[0]), "one page per player, in every mail"


def test_the_page_in_german(games) -> None:
    office, anna, ben, carol = games
    anna.reply("sprache de")
    html = client_of(office).get(f"/p/{page_token(anna.last)}").text
    assert "<h1>Ihre Spiele, Anna</h1>" in html and "<b>Sie sind am Zug</b>" in html and "Ihre Uhr:" in html
    assert 'lang="de"' in html and "Öffnen" in html


def test_a_wrong_or_a_game_token_gets_404_and_the_log_shows_no_token(games, caplog) -> None:
    office, anna, ben, carol = games
    client = client_of(office)
    token = page_token(anna.last)
    game_token = office.table().token(0)
    caplog.set_level(logging.INFO)
    assert client.get(f"/p/{'a' * 26}").status_code == 404
    assert client.get(f"/p/{game_token}").status_code == 404, "a game's token opens no player's page"
    assert client.get(f"/g/{token}").status_code == 404, "a page token opens no game"
    assert client.get(f"/p/{token}").status_code == 200
    logged = "\n".join(record.getMessage() for record in caplog.records if record.name.startswith("pbem"))
    assert "web GET /p/… 200" in logged and token not in logged and game_token not in logged


def test_the_page_is_rate_limited_like_a_game_page(games) -> None:
    office, anna, ben, carol = games
    client = client_of(office, requests_per_minute=3)
    token = page_token(anna.last)
    statuses = [client.get(f"/p/{token}").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


def test_no_player_ever_sees_another_players_page_token(games) -> None:
    """As the token-leak tests do for game tokens: every mail and page Ben and Carol can see."""
    office, anna, ben, carol = games
    anna.reply("8/5 6/5")
    ben.reply("roll")
    carol.reply("accept")
    anna_token = page_token(anna.last)
    client = client_of(office)
    seen_by_others = [text_of(mail) for player in (ben, carol) for mail in player.inbox]
    seen_by_others += [str(mail) for player in (ben, carol) for mail in player.inbox]
    for player in (ben, carol):
        seen_by_others.append(client.get(f"/p/{page_token(player.last)}").text)
        seen_by_others += [client.get(f"/g/{token_of(mail)}").text for mail in player.inbox if token_of(mail)]
    assert all(anna_token not in seen for seen in seen_by_others)


@pytest.fixture
def after_a_tournament(config):
    """A knockout of four to its champion (matches to 1 point, each lost by $quit), Anna out in the
    final; Anna and Ben also on the ladder ``club``; a review done for Anna's semi-final."""
    from test_tournaments import code_in, finish, matches, people

    office = PostOffice(web_config(config), LoadedDice(seed=7))
    players = people(office, 4)
    anna, ben = players[0], players[1]
    by_address = {player.address: player for player in players}
    (answer,) = anna.write_confirmed("tournament new Summer knockout 4 match 1")
    code = code_in(answer)
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code}")
    anna.write_confirmed(f"tournament start {code}")
    semis = matches(office)
    for semi in semis:  # Anna goes through, and whoever is first seated in the other semi-final
        addresses = [p.address for p in office.table(semi.id).players]
        finish(office, by_address, semi, "anna@example.org" if "anna@example.org" in addresses else addresses[0])
    final = matches(office)[-1]
    champion = next(p.address for p in office.table(final.id).players if p.address != "anna@example.org")
    finish(office, by_address, final, champion)
    anna.write_confirmed("ladder new club match 1")
    ben.write_confirmed("ladder join club")
    anna_semi = next(m for m in semis if "anna@example.org" in [p.address for p in office.table(m.id).players])
    with session_scope(office.engine) as session:
        review = {"players": [{"decisions": 10, "error_rate": 12, "lost": 120, "luck": 0},
                              {"decisions": 10, "error_rate": 30, "lost": 300, "luck": 0}]}
        session.add(ReviewJob(match_id=anna_semi.id, game_number=1, game={}, result=review, done_at=utc_now()))
    return office, anna, code, by_address[champion], anna_semi


def test_after_a_tournament_the_page_lists_the_finished_matches_the_tournament_and_the_ladder(after_a_tournament):
    office, anna, code, champion, anna_semi = after_a_tournament
    client = client_of(office)
    html = client.get(f"/p/{page_token(anna.last)}").text
    assert "You have no running games" in html  # and yet everything finished is there:
    finished = re.search(r'<table class="games" id="finished">(.*?)</table>', html, re.S).group(1)
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>",
                      finished)
    semi_table = office.table(anna_semi.id)
    seat = 0 if semi_table.players[0].address == anna.address else 1
    assert [row[0] for row in rows] == [champion.name, semi_table.players[1 - seat].name]  # the newest first
    final_row, semi_row = rows
    assert final_row[2].startswith("lost 0-") and semi_row[2].startswith("<b>won</b> ")
    assert f'href="http://127.0.0.1:8080/g/{semi_table.token(seat)}"' in semi_row[5]
    assert f'href="http://127.0.0.1:8080/g/{semi_table.token(seat)}/match.mat" download' in semi_row[5]
    assert semi_row[4] == f'<a href="http://127.0.0.1:8080/g/{semi_table.token(seat)}">your PR 6.0</a> (advanced), ' \
        f"{semi_table.players[1 - seat].name}&#39;s 15.0" and final_row[4] == ""  # 120 and 300 lost in 10 decisions
    assert semi_table.token(1 - seat) not in html, "never the opponent's token"
    tournaments = re.search(r'<ul id="tournaments">(.*?)</ul>', html, re.S).group(1)
    assert f'<a href="http://127.0.0.1:8080/t/{code}/{page_token(anna.last)}">Summer</a>' in tournaments
    assert "knockout for 4: place 2, out in the final (tournament over)" in tournaments
    assert re.search(r'<ul id="ladders">\s*<li><a href="http://127.0.0.1:8080/l/[a-z0-9]+">club</a>: place 1 of 2</li>',
                     html), html
    # The champion's own page says so; the .mat of the semi-final downloads as its mail attached it.
    assert "<b>you are the champion</b>" in client.get(f"/p/{page_token(champion.last)}").text
    mat = client.get(f"/g/{semi_table.token(seat)}/match.mat")
    assert mat.status_code == 200 and mat.text.startswith(" 1 point match") and "Game 1" in mat.text
    assert mat.headers["content-disposition"] == f'attachment; filename="pbem-{anna_semi.id}-' \
        f'{semi_table.players[0].name}-{semi_table.players[1].name}.mat"'
    assert client.get(f"/g/{'a' * 26}/match.mat").status_code == 404


def test_the_finished_matches_and_the_tournament_in_german(after_a_tournament):
    office, anna, code, champion, anna_semi = after_a_tournament
    anna.write_confirmed("sprache de")
    html = client_of(office).get(f"/p/{page_token(anna.last)}").text
    assert "<h2>Beendete Matches</h2>" in html and "verloren 0-" in html and "Ihr PR 6,0</a> (Fortgeschritten)" in html
    assert "K.-o.-Turnier für 4: Platz 2, ausgeschieden im Finale (Turnier beendet)" in html
    assert "<h2>Ihre Leitern</h2>" in html and "Platz 1 von 2" in html


def test_my_copy_of_the_bracket_links_my_matches_as_links_and_every_match_shows_its_points(after_a_tournament):
    office, anna, code, champion, anna_semi = after_a_tournament
    client = client_of(office)
    own = client.get(f"/t/{code}/{page_token(anna.last)}").text
    links = re.findall(r'<a href="http://127\.0\.0\.1:8080/g/([a-z2-7]{26})" class="own"><g class="match">(.*?)</g></a>',
                       own)
    assert len(links) == 2 and own.count("/g/") == 2, own  # the semi-final and the final: hers only
    semi = office.table(anna_semi.id)
    seat = 0 if semi.players[0].address == anna.address else 1
    assert semi.token(seat) in {token for token, _ in links} and semi.token(1 - seat) not in own
    assert 'id="legend"' in own and "framed in green" in own
    public = client.get(f"/t/{code}").text
    assert 'class="own"' not in public and 'id="legend"' not in public and "/g/" not in public
    # Each match's points beside the names, in both copies: every match here was won 3-0 ($quit).
    scores = re.findall(r'text-anchor="end" class="score"[^>]*>(\d+)</text>', public)
    assert sorted(scores) == ["0", "0", "0", "3", "3", "3"], public
    css = client.get("/static/board.css").text
    assert ".bracket a.own text { fill: #1a4fa0; text-decoration: underline; }" in css


def test_only_the_newest_finished_matches_are_listed_and_the_page_says_how_many_are_left_out(
        after_a_tournament, monkeypatch):
    office, anna, code, champion, anna_semi = after_a_tournament
    monkeypatch.setattr("pbem.service.pages.player_page.FINISHED_SHOWN", 1)
    html = client_of(office).get(f"/p/{page_token(anna.last)}").text
    finished = re.search(r'<table class="games" id="finished">(.*?)</table>', html, re.S).group(1)
    assert finished.count("<tr><td>") == 1 and f"<tr><td>{champion.name}</td>" in finished  # the final, newest
    assert "<p>… and 1 older match.</p>" in html


def test_a_finished_matchs_own_page_offers_its_mat_and_the_dice_check(after_a_tournament):
    office, anna, code, champion, anna_semi = after_a_tournament
    semi = office.table(anna_semi.id)
    token = semi.token(0)
    client = client_of(office)
    html = client.get(f"/g/{token}").text
    assert f'<a href="{token}/match.mat" download>The match as a .mat file</a>' in html  # from /g/: /g/TOKEN/…
    assert '<a href="../verify">check its dice</a>' in html
    assert client.get(f"/g/{token}/match.mat").text == client.get(f"/g/{semi.token(1)}/match.mat").text


def test_a_running_games_page_offers_no_mat_yet(games):
    office, anna, ben, carol = games
    assert 'id="match-file"' not in client_of(office).get(f"/g/{office.table(office.matches()[0].id).token(0)}").text
