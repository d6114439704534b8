"""The web board over HTTP (Starlette's TestClient on the real app, service and database): the
page, the no-JavaScript forms applied as a mail is, CSRF, stale pages, limits, headers, 404s
and a log without tokens.  The browser tests (drag and drop) are in test_web_browser.py."""

from __future__ import annotations

import json
import logging
import re
from html.parser import HTMLParser

import pytest
from post_office import LoadedDice, Player, PostOffice, invite_and_accept, prose_of, text_of, token_of
from starlette.testclient import TestClient

from pbem.config import WebConfig
from pbem.store.game_records import MatchStatus
from pbem.service.pages.web_board import WebBoard
from pbem.web.app import board_app, client_address
from pbem.web.security import RateLimiter, address_key

BASE = "http://127.0.0.1:8080"


def web_config(config, **web):
    return config.model_copy(update={"web": WebConfig(**web)})


@pytest.fixture
def game(config):
    """Anna invited Ben, Ben accepted; Anna opens with 3-1.  With the web board configured."""
    config = web_config(config)
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    return office, anna, ben


def client_of(office, **web) -> TestClient:
    config = web_config(office.config, **web) if web else office.config
    return TestClient(board_app(config.web, WebBoard(config, office.engine, dice=office.dice)), base_url=BASE,
                      client=("127.0.0.1", 50000))


def form_of(html: str, action: str) -> dict[str, str]:
    """The hidden fields of the page's form for ``action``."""
    for form in re.findall(r"<form method=\"post\".*?</form>", html, re.S):
        fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))
        if fields.get("action") == action:
            return fields
    raise AssertionError(f"no form for {action}")


def play_data(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="play-data">(.*?)</script>', html, re.S)
    assert found
    return json.loads(found.group(1))


def test_every_game_mail_links_to_the_page(game) -> None:
    office, anna, ben = game
    for player in (anna, ben):
        token = token_of(player.last)
        link = f"{BASE}/g/{token}"
        assert link in prose_of(player.last)
        html = player.last.get_body(preferencelist=("html",)).get_content()
        assert f'href="{link}"' in html


def test_the_page_shows_board_facts_and_the_legal_steps(game) -> None:
    office, anna, ben = game
    answer = client_of(office).get(f"/g/{token_of(anna.last)}")
    assert answer.status_code == 200
    html = answer.text
    assert "<svg" in html and 'id="board"' in html and "Your turn (3-1)" in html
    assert "Pips" in html and "you 167, Ben 167" in html and "Match to" not in html  # a single game
    data = play_data(html)
    first_steps = {(origin, target) for origin, target, _, _ in data["graph"][0]["steps"]}
    assert (8, 5) in first_steps and (24, 21) in first_steps and (6, 5) in first_steps
    moves = {node["move"] for node in data["graph"] if "move" in node}
    assert "8/5 6/5" in moves and len(moves) == 16
    assert "<script>" not in html and "style=" not in html, "no inline script or style"
    for name, value in {"Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"}.items():
        assert answer.headers[name] == value
    assert "script-src 'self'" in answer.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in answer.headers["Content-Security-Policy"]
    ben_page = client_of(office).get(f"/g/{token_of(ben.last)}").text
    assert "Waiting for Anna" in ben_page and 'id="play-data"' in ben_page and '"graph"' not in ben_page


def test_the_page_in_german_and_fixed_numbering(game) -> None:
    office, anna, ben = game
    anna.write_confirmed("sprache de")
    ben.write_confirmed("numbering fixed")
    html = client_of(office).get(f"/g/{office.table().token(0)}").text
    assert '<html lang="de">' in html and "Sie sind am Zug (3-1)" in html and "Augen" in html
    ben_page = client_of(office).get(f"/g/{office.table().token(1)}").text
    labels = re.findall(r'class="label"[^>]*>(\d+)<', ben_page)
    assert labels[:3] == ["1", "2", "3"] and "Waiting for Anna" in ben_page, "Ben: English, fixed numbering"


def test_a_wrong_token_gets_a_404_that_says_nothing(game) -> None:
    office, anna, ben = game
    client = client_of(office)
    paths = ("/g/" + "a" * 26, "/g/short", "/g/" + "a" * 26 + "/state", "/nothing", "/g/" + "a" * 26 + "/",
             f"/g/{token_of(anna.last)}/", "/static", "/static/", "/g/")
    answers = [client.get(path, follow_redirects=False) for path in paths]
    assert {answer.status_code for answer in answers} == {404}
    assert {answer.text for answer in answers} == {"Not Found"}
    assert client.post("/g/" + "a" * 26, data={"action": "roll"}).status_code == 404
    assert answers[0].headers["Referrer-Policy"] == "no-referrer"


def test_a_typed_move_is_applied_as_a_mail_and_the_opponent_gets_the_mail(game) -> None:
    office, anna, ben = game
    client = client_of(office)
    token = token_of(anna.last)
    page = client.get(f"/g/{token}").text
    answer = client.post(f"/g/{token}", data={**form_of(page, "move"), "move": "8/5 6/5"})
    assert answer.status_code == 200 and "Done." in answer.text and "Waiting for Ben" in answer.text
    sent = office.run()
    office.file(sent)
    assert ["ben@example.org" in str(mail["To"]) for mail in sent] == [True], "Anna saw it on the page: no copy"
    assert "Anna played 8/5 6/5" in prose_of(ben.last)
    assert office.table().game.record[-1].play == ((8, 5), (6, 5))
    # The same form again (a second click, a reload): the page is stale, nothing happens.
    again = client.post(f"/g/{token}", data={**form_of(page, "move"), "move": "8/5 6/5"})
    assert again.status_code == 409 and "your own answer has arrived meanwhile" in again.text
    assert office.run() == []


def test_an_illegal_move_is_refused_with_the_reason_and_changes_nothing(game) -> None:
    office, anna, ben = game
    client = client_of(office)
    token = token_of(anna.last)
    before = office.snapshot()
    page = client.get(f"/g/{token}").text
    answer = client.post(f"/g/{token}", data={**form_of(page, "move"), "move": "24/18"})
    assert answer.status_code == 422 and "Your turn (3-1)" in answer.text
    assert "24/18 is a move of 6" in " ".join(answer.text.split())
    not_a_move = client.post(f"/g/{token}", data={**form_of(page, "move"), "move": "hello"})
    assert not_a_move.status_code == 422 and "That is not a move" in not_a_move.text
    example = re.search(r"not a suggestion\):\n  (.+)\n", text_of(anna.last)).group(1)
    assert f"for example {example}, or drag" in not_a_move.text, "the mail's example, in her numbering"
    for action in ("", "fly", "__class__"):
        unknown = client.post(f"/g/{token}", data={**form_of(page, "move"), "action": action})
        assert unknown.status_code == 400 and "no such button" in unknown.text
    assert office.run() == [] and office.snapshot() == before


def test_the_example_follows_the_numbering_of_the_player(game) -> None:
    """Ben plays Black in the fixed numbering, where Black moves from 1 towards 24: the example
    of a refusal is his, as his mails show it, not a fixed text."""
    office, anna, ben = game
    anna.reply("8/5 6/5")
    ben.reply("numbering fixed")
    ben.reply("roll")
    client = client_of(office)
    token = office.table().token(1)
    page = client.get(f"/g/{token}").text
    example = re.search(r'placeholder="([^"]+)"', page).group(1)
    assert f"not a suggestion):\n  {example}\n" in text_of(ben.last)
    origin, target = (int(point) for point in re.match(r"(\d+)/(\d+)", example).groups())
    assert origin < target, f"Black moves upwards in the fixed numbering: {example}"
    answer = client.post(f"/g/{token}", data={**form_of(page, "move"), "move": "hello"})
    assert f"for example {example}, or drag" in answer.text and "24/18 13/9" not in answer.text


def test_a_page_made_before_the_opponent_moved_applies_nothing(game) -> None:
    office, anna, ben = game
    client = client_of(office)
    ben_token = token_of(ben.last)
    stale = client.get(f"/g/{ben_token}").text  # Ben looks while Anna is to move
    version = client.get(f"/g/{ben_token}/state").json()["version"]
    anna.reply("8/5 6/5")  # Anna moves by mail; now Ben may roll or double
    assert client.get(f"/g/{ben_token}/state").json()["version"] != version
    fields = form_of(client.get(f"/g/{ben_token}").text, "roll")
    answer = client.post(f"/g/{ben_token}", data={**fields, "version": form_of(stale, "draw")["version"],
                                                  "csrf": form_of(stale, "draw")["csrf"]})
    assert answer.status_code == 409 and "your opponent has acted meanwhile" in answer.text
    assert office.table().game.phase == "roll_or_double"
    rolled = client.post(f"/g/{ben_token}", data=fields)
    assert rolled.status_code == 200 and office.table().game.phase == "to_move"


def test_every_post_needs_the_pages_csrf_token(game) -> None:
    office, anna, ben = game
    client = client_of(office)
    token = token_of(anna.last)
    fields = form_of(client.get(f"/g/{token}").text, "move")
    before = office.snapshot()
    for csrf in ("", "0" * 32, "é" * 32, form_of(client.get(f"/g/{token_of(ben.last)}").text, "draw")["csrf"]):
        answer = client.post(f"/g/{token}", data={**fields, "csrf": csrf, "move": "8/5 6/5"})
        assert answer.status_code == 403 and "This form has expired" in answer.text
    foreign = client.post(f"/g/{token}", data={**fields, "move": "8/5 6/5"}, headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    fetched = client.post(f"/g/{token}", data={**fields, "move": "8/5 6/5"}, headers={"Sec-Fetch-Site": "cross-site"})
    assert fetched.status_code == 403
    assert office.snapshot() == before


def test_requests_are_limited_per_link_and_per_address(game) -> None:
    office, anna, ben = game
    client = client_of(office, requests_per_minute=3, address_requests_per_minute=6)
    anna_link, ben_link = f"/g/{token_of(anna.last)}", f"/g/{token_of(ben.last)}"
    assert [client.get(anna_link).status_code for _ in range(4)] == [200, 200, 200, 429]
    assert [client.get(ben_link).status_code for _ in range(2)] == [200, 200]
    refused = client.get(ben_link)
    assert refused.status_code == 429, "the address has made its 6 requests (a refused one counts)"
    assert refused.text == "Too many requests from this link or address. Please wait a minute."
    assert refused.headers["Retry-After"] == "60"
    assert client.get("/g/" + "a" * 26).text == "Too Many Requests", "no seat: bare"


def test_a_429_speaks_the_players_language(game) -> None:
    office, anna, ben = game
    anna.write_confirmed("sprache de")
    client = client_of(office, requests_per_minute=1, polls_per_minute=1)
    link = f"/g/{office.table().token(0)}"
    assert [client.get(link).status_code, client.get(f"{link}/state").status_code] == [200, 200]
    for path in (link, f"{link}/state"):
        answer = client.get(path)
        assert answer.status_code == 429 and answer.text.startswith("Zu viele Anfragen"), answer.text


def test_five_open_tabs_polling_never_starve_a_move(game) -> None:
    """Five tabs of one game poll every five seconds (60 polls a minute, the whole default
    budget of pages and forms): the polls have their own budget, the move still goes through."""
    office, anna, ben = game
    client = client_of(office)
    token = token_of(anna.last)
    pages = [client.get(f"/g/{token}").text for _ in range(5)]
    assert all(client.get(f"/g/{token}/state").status_code == 200 for _ in range(5 * 12))
    answer = client.post(f"/g/{token}", data={**form_of(pages[0], "move"), "move": "8/5 6/5"})
    assert answer.status_code == 200 and "Done." in answer.text


def test_a_move_sent_over_the_limit_is_kept_on_the_page(game) -> None:
    office, anna, ben = game
    client = client_of(office, requests_per_minute=2)
    token = token_of(anna.last)
    before = office.snapshot()
    page = client.get(f"/g/{token}").text
    client.get(f"/g/{token}")
    answer = client.post(f"/g/{token}", data={**form_of(page, "move"), "move": "8/5 6/5"})
    assert answer.status_code == 429 and answer.headers["Retry-After"] == "60"
    assert "Too many requests from this link or address" in answer.text
    assert 'id="move" name="move"' in answer.text and 'value="8/5 6/5"' in answer.text, "the move is still there"
    assert office.snapshot() == before and office.run() == []


def test_the_client_address_behind_a_trusted_proxy() -> None:
    scope = {"client": ("10.0.0.1", 1), "headers": [(b"x-forwarded-for", b"203.0.113.9, 10.0.0.2")]}
    trusting = lambda *proxies: WebConfig(trusted_proxies=list(proxies))  # noqa: E731
    assert client_address(scope, trusting()) == "10.0.0.1", "X-Forwarded-For is ignored unless configured"
    assert client_address(scope, trusting("10.0.0.1")) == "10.0.0.2"
    assert client_address(scope, trusting("10.0.0.1", "10.0.0.2")) == "203.0.113.9"
    assert client_address(scope, trusting("10.0.0.0/24")) == "203.0.113.9", "a network of proxies"


def test_buttons_and_the_log_without_tokens(game, caplog) -> None:
    office, anna, ben = game
    caplog.set_level(logging.DEBUG)
    client = client_of(office)
    anna_token, ben_token = token_of(anna.last), token_of(ben.last)
    page = client.get(f"/g/{anna_token}").text
    client.post(f"/g/{anna_token}", data={**form_of(page, "move"), "move": "8/5 6/5"})
    page = client.get(f"/g/{ben_token}").text
    assert all(f'value="{action}"' in page for action in ("roll", "double", "resign", "draw"))
    assert 'value="take"' not in page
    client.post(f"/g/{ben_token}", data=form_of(page, "double"))
    page = client.get(f"/g/{anna_token}").text
    assert all(f'value="{action}"' in page for action in ("take", "drop")) and 'value="roll"' not in page
    client.post(f"/g/{anna_token}", data=form_of(page, "take"))
    assert office.table().game.cube == 2
    logged = "\n".join(record.getMessage() for record in caplog.records
                        if record.name.startswith(("pbem", "uvicorn", "starlette")))  # not the test's client
    assert "web POST /g/… 200" in logged and "web GET /g/… 200" in logged
    assert anna_token not in logged and ben_token not in logged
    assert form_of(page, "take")["csrf"] not in logged
    # The moves so far, two players' turns to a numbered line as gnubg lists them, read right for
    # "You" and a name alike, in both languages.
    def moves_of(token: str) -> tuple[list[str], list[tuple[str, str, str]]]:
        page = client.get(f"/g/{token}").text
        heads = re.findall(r"<thead><tr><th></th><th>(.*?)</th><th>(.*?)</th></tr></thead>", page)
        return list(heads[-1]), re.findall(r"<tr><td>(\d+)\)</td><td>(.*?)</td><td>(.*?)</td></tr>", page)
    heads, rows = moves_of(anna_token)
    assert heads == ["You", "Ben"] and rows[0][0] == "1" and rows[0][1] == "3-1: 8/5 6/5"
    assert rows[0][2] == "doubles to 2" and rows[1][:2] == ("2", "takes")
    heads, rows = moves_of(ben_token)
    assert heads == ["Anna", "You"] and rows[0][2] == "doubles to 2" and rows[1][1] == "takes"
    office.file(office.run())
    anna.write_confirmed("sprache de")
    heads, rows = moves_of(anna_token)
    assert heads == ["Sie", "Ben"] and rows[0][2] == "doppelt auf 2" and rows[1][1] == "nimmt an"


def test_two_daemons_given_the_same_form_at_once_apply_it_once(game) -> None:
    """Two web boards (as two daemons on one database) get the same form at the same moment:
    the match row is locked as for a mail, so one applies it and the other finds it stale."""
    from concurrent.futures import ThreadPoolExecutor

    from pbem.render.views import PageAction, PageResult
    from pbem.store.db import make_engine

    office, anna, ben = game
    token = token_of(anna.last)
    engines = [make_engine(office.config.database.url) for _ in range(2)]
    boards = [WebBoard(office.config, engine, dice=office.dice) for engine in engines]
    version = boards[0].version(token)
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda board: board.act(token, version, PageAction.MOVE, "8/5 6/5"), boards))
    for engine in engines:
        engine.dispose()
    assert sorted(outcome.result for outcome in outcomes) == [PageResult.DONE, PageResult.STALE]
    (stale,) = [outcome for outcome in outcomes if outcome.result is PageResult.STALE]
    assert "your own answer has arrived meanwhile" in " ".join(stale.texts), "the loser is told why"
    assert stale.page is not None and stale.page.version != version
    assert office.table().game.record[-1].play == ((8, 5), (6, 5))
    sent = office.run()
    assert len([mail for mail in sent if "ben@example.org" in str(mail["To"])]) == 1


def test_the_page_before_and_after_the_game(config) -> None:
    """An invitation not yet answered, and a game resigned: the page shows the state, no board
    to play on and no buttons."""
    config = web_config(config)
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    anna.write_confirmed("invite ben@example.org")
    client = client_of(office)
    invited = client.get(f"/g/{token_of(ben.last)}")
    assert invited.status_code == 200 and "Invitation from Anna" in invited.text
    assert "Anna &lt;anna@example.org&gt; invites you to backgammon by mail: a single game." in invited.text, "the terms"
    assert "reply <b>accept</b> or <b>decline</b> to the invitation mail" in invited.text
    assert {form_of(invited.text, "join")["action"], form_of(invited.text, "decline")["action"]} == {"join", "decline"}
    sent_to_anna = client.get(f"/g/{office.table().token(0)}").text
    assert "<form" not in sent_to_anna and "Anna invites you" not in sent_to_anna and "You invited ben" in sent_to_anna
    ben.reply("accept")
    anna.reply("$quit")
    over = client.get(f"/g/{token_of(anna.last)}").text
    assert "<svg" in over and "<form" not in over and "Finished" in over
    assert "Ben wins a backgammon (resignation): 3 points." in over, "who won, how many points ($quit)"
    assert "You win a backgammon (resignation): 3 points." in client.get(f"/g/{token_of(ben.last)}").text


def test_the_page_of_a_finished_match_shows_the_result_and_the_final_score(config) -> None:
    config = web_config(config)
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org match 3")
    anna.reply("$quit")
    office.file(office.run())
    outcome = lambda seat: re.search(  # noqa: E731
        r'<p class="outcome" id="outcome">(.*?)</p>', client_of(office).get(f"/g/{office.table().token(seat)}").text)
    assert outcome(0) and "Ben wins" in outcome(0).group(1) and re.search(r"Ben wins, 3 to 0\.", outcome(0).group(1))
    assert outcome(1) and re.search(r"You win, 3 to 0\.", outcome(1).group(1)), outcome(1).group(1)


HOSTILE = ('"<img src=x onerror=alert(1)>"', r'"\"><meta http-equiv=refresh content=0;url=http://127.0.0.1:9/>"')
"""Display names (quoted in the From line) that would be markup if a page printed them raw."""
PAGE_TAGS = {"html", "head", "meta", "title", "link", "script", "body", "main", "h1", "h2", "p", "a", "div", "dl",
             "dt", "dd", "section", "b", "button", "form", "input", "label", "select", "option", "ol", "li", "svg",
             "g", "rect", "polygon", "circle", "text", "path", "line", "desc", "defs", "use", "span", "table", "thead",
             "tbody", "tr", "th", "td", "details", "summary", "figure", "figcaption", "pre", "polyline"}


class _Markup(HTMLParser):
    """Every tag and attribute name of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def assert_no_markup_from_names(html: str) -> None:
    parser = _Markup()
    parser.feed(html)
    for tag, attributes in parser.tags:
        assert tag in PAGE_TAGS, f"<{tag}> on the page"
        assert not any(name.startswith("on") or name == "http-equiv" for name in attributes), (tag, attributes)
    assert "<img" not in html and "<meta http-equiv" not in html


@pytest.mark.parametrize("language", ["en", "de"])
def test_hostile_display_names_never_become_markup(config, language) -> None:
    """Both players' display names are markup; the page of every state, in both languages, for
    both players, shows them as text only (the state line and the title come from the letter's
    text macros, which are not escaped by themselves)."""
    config = web_config(config)
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1), (5, 2), (6, 4)]))
    anna, ben = Player(office, "anna@example.org", HOSTILE[0]), Player(office, "ben@example.org", HOSTILE[1])
    board = WebBoard(config, office.engine, dice=office.dice)
    client = client_of(office)
    states: set[str] = set()

    def look() -> None:
        for token in (office.table().token(0), office.table().token(1)):
            page = board.page(token)
            assert page is not None and page.language == language
            states.add(page.game.next)
            answer = client.get(f"/g/{token}")
            assert answer.status_code == 200
            assert_no_markup_from_names(answer.text)

    def press(seat: int, action: str, **extra: str) -> None:
        token = office.table().token(seat)
        answer = client.post(f"/g/{token}", data={**form_of(client.get(f"/g/{token}").text, action), **extra})
        assert answer.status_code == 200, answer.text
        assert_no_markup_from_names(answer.text)
        office.file(office.run())
        look()

    if language == "de":
        for player in (anna, ben):
            player.write_confirmed("sprache de")
    anna.write_confirmed("invite ben@example.org")
    look()  # accept, wait_invitation
    ben.reply("accept")
    look()  # move, wait
    press(0, "move", move="8/5 6/5")
    press(1, "draw")  # answer_draw
    press(1, "double")  # answer_double, wait_answer
    press(0, "take")
    # After the take, Ben's dice are rolled for him: he is to move.
    press(1, "resign", argument="single")  # answer_resign, and wait_resign for the offerer
    offerer = client.get(f"/g/{office.table().token(1)}").text
    assert ("Your turn" not in offerer and "Sie sind am Zug" not in offerer
            and any(text in offerer for text in ("answer to your offer to resign", "Ihr Angebot aufzugeben")))
    press(0, "accept")  # finished
    ben.write_confirmed("invite anna@example.org")
    anna.reply("decline")
    look()  # declined
    assert {"accept", "wait_invitation", "move", "wait", "roll_or_double", "answer_draw", "answer_double",
            "wait_answer", "answer_resign", "wait_resign", "finished", "declined"} <= states, states


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_finished_game_whose_review_is_done_shows_it_with_its_chart_on_the_page(config, language) -> None:
    """Issue 38: once the review of a finished game is mailed, its page shows the same review:
    the text with each player's PR, and the chart of the reader's winning chances as SVG, its
    rings exactly the worst decisions listed; hostile names stay text, the headers stay."""
    from post_office import play_to_end
    from sqlmodel import Session, select

    from pbem.render.views import ReviewView
    from pbem.store.game_records import Player as PlayerRow

    from test_review_jobs import _jobs, _set_language

    office = PostOffice(web_config(config), LoadedDice(seed=5))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    play_to_end(office, (anna, ben), match_id)
    with Session(office.engine) as session:  # markup for names, from here on
        for row, name in zip(session.exec(select(PlayerRow).order_by(PlayerRow.id)).all(), HOSTILE):
            row.name = name.strip('"')
            session.add(row)
        session.commit()
    client = client_of(office)
    token = office.table(match_id).token(1)
    assert 'id="review"' not in client.get(f"/g/{token}").text, "no review before it is done"
    _set_language(office, language)
    office.review()
    answer = client.get(f"/g/{token}")
    assert answer.headers["Content-Security-Policy"].startswith("default-src 'none'")
    html = answer.text
    assert_no_markup_from_names(html)
    section = re.search(r'<section class="review" id="review">(.*?)</section>', html, re.S)
    assert section, html
    assert section.group(1).count("&lt;img src=x onerror=alert(1)&gt;") >= 2, "Anna's name, as text"
    (job,) = _jobs(office)
    view = ReviewView.of(job.result)
    text = re.search(r'<pre class="review-text">(.*?)</pre>', section.group(1), re.S).group(1)
    assert text.count("PR ") == 2 and str(view.players[1].error_rate) in text
    listed = [int(number) for number in re.findall(r"\d\. (?:Move|Zug) (\d+)", text)]
    assert listed and [mark.number for mark in view.winning_chances(1).marks] == listed
    svg = re.search(r"<svg.*?</svg>", section.group(1), re.S).group(0)
    assert svg.count('<g class="marker">') == len(listed) and "<script" not in svg
    assert ("Your winning chances in game 1" if language == "en" else "Ihre Gewinnchancen in Spiel 1") in svg


def test_every_text_macro_in_an_html_template_is_escaped() -> None:
    """A macro of a .txt template returns its text marked safe (text templates are not
    autoescaped), so an HTML template must ``|forceescape`` every call of one: the names and
    notes inside would otherwise be markup.  Covers the page and the mails' HTML alike."""
    from pbem.render.templating import TEMPLATE_DIR

    checked = 0
    for template in sorted(TEMPLATE_DIR.rglob("*.html")):
        source = template.read_text()
        for alias in re.findall(r'{%-?\s*import\s+"[^"]+\.txt"\s+as\s+(\w+)', source):
            for call in re.finditer(rf"\b{alias}\.\w+\((?:[^()]|\([^()]*\))*\)(\|\w+)?", source):
                checked += 1
                assert call.group(1) == "|forceescape", f"{template.name}: {call.group(0)}"
    assert checked >= 6


def test_the_limiter_bounds_its_memory_without_forgetting_the_busy_keys() -> None:
    now = [0.0]
    limiter = RateLimiter(2, window=60, clock=lambda: now[0], max_keys=3)
    for key in ("a", "b", "c"):
        assert limiter.allow(key) and limiter.allow(key) and not limiter.allow(key)
        now[0] += 1
    assert limiter.allow("d"), "a new key pushes out only the one idle longest"
    assert not limiter.allow("b") and not limiter.allow("c"), "the other counters are kept"
    assert limiter.allow("a") and len(limiter._seen) == 3
    now[0] += 61
    assert limiter.allow("e") and len(limiter._seen) == 1, "keys idle a whole window are dropped"


def test_ipv6_clients_are_counted_per_64(game) -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::7") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("203.0.113.9") == "203.0.113.9" == address_key("::ffff:203.0.113.9")
    assert address_key("unknown") == "unknown"
    office, anna, ben = game
    client = client_of(office, address_requests_per_minute=2, trusted_proxies=["127.0.0.1"])
    link = f"/g/{token_of(anna.last)}"
    answers = [client.get(link, headers={"X-Forwarded-For": f"2001:db8::{n}"}).status_code for n in range(1, 4)]
    assert answers == [200, 200, 429], "a new address in the same /64 is the same client"
    assert client.get(link, headers={"X-Forwarded-For": "2001:db8:0:1::1"}).status_code == 200


@pytest.mark.parametrize("answer", ["join", "decline"])
def test_the_invitee_answers_the_invitation_on_the_page(config, answer) -> None:
    config = web_config(config)
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    anna.write_confirmed("invite ben@example.org match 3")
    client = client_of(office)
    token = token_of(ben.last)
    page = client.get(f"/g/{token}").text
    assert "a match to 3 points" in page
    refused = client.post(f"/g/{token_of(anna.last)}", data=form_of(page, answer))
    assert refused.status_code == 403, "Anna has no such form: Ben's does not fit her link"
    done = client.post(f"/g/{token}", data=form_of(page, answer))
    assert done.status_code == 200, done.text
    office.file(office.run())
    if answer == "join":
        assert office.table().status is MatchStatus.RUNNING and "ben accepted the invitation" in prose_of(anna.last)
    else:
        assert office.table().status is MatchStatus.DECLINED and "declined" in prose_of(anna.last)
        assert "Invitation declined" in done.text
    again = client.post(f"/g/{token}", data=form_of(page, answer))
    assert again.status_code == 409, "the page is stale now"


def test_a_page_made_in_another_numbering_or_language_is_stale(game) -> None:
    office, anna, ben = game
    client = client_of(office)
    token = token_of(anna.last)
    page = client.get(f"/g/{token}").text
    version = client.get(f"/g/{token}/state").json()["version"]
    office.file(office.run())
    anna.reply("numbering fixed")
    fixed = client.get(f"/g/{token}/state").json()["version"]
    assert fixed != version, "the page's moves would be in the other numbering"
    answer = client.post(f"/g/{token}", data={**form_of(page, "move"), "move": "8/5 6/5"})
    assert answer.status_code == 409 and office.table().game.phase == "to_move"
    office.file(office.run())
    anna.write_confirmed("sprache de")
    assert client.get(f"/g/{token}/state").json()["version"] not in (version, fixed)


def test_the_page_of_a_game_against_the_assistant_names_its_level(config) -> None:
    """Issue 38: the level shows on the game's page as in its mails."""
    office = PostOffice(web_config(config), LoadedDice(seed=3))
    anna = Player(office, "anna@example.org", "Anna")
    anna.write_confirmed("play assistant intermediate")
    html = client_of(office).get(f"/g/{token_of(anna.last)}").text
    assert "<h1>Anna – Assistant (intermediate)</h1>" in html
