"""The web board in a real headless Chromium, served by the real uvicorn server (in a thread of
its own here, as ``pbem serve`` runs it in its loop): a checker dragged with the mouse (desktop)
and with touch (phone width, mobile emulation) and sent, the opponent's mail; an illegal drop
refused on the page; a stale page; a wrong token; a page that reloads itself when the opponent
has moved.  The screenshots go to ``docs/web/`` with
``PBEM_UPDATE_DOCS=1``."""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from pathlib import Path

import pytest
from chromium import headless_chromium
from post_office import LoadedDice, Player, PostOffice, invite_and_accept, prose_of, token_of
from test_player_page import after_a_tournament  # noqa: F401  (a fixture)
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.interaction import POINTER_TOUCH
from selenium.webdriver.common.actions.pointer_input import PointerInput
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from pbem.config import WebConfig
from pbem.daemon.web import WebServer
from pbem.service.pages.web_board import WebBoard
from pbem.web.app import board_app

pytestmark = pytest.mark.browser

DOCS = Path(__file__).resolve().parents[2] / "docs" / "web"
DESKTOP, PHONE = (1000, 1300), (390, 1500)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with headless_chromium(tmp_path_factory.mktemp("chromium")) as browser:
        yield browser


class ServedBoard:
    """The web board of ``office`` on a free port, served by uvicorn in a thread's event loop."""

    def __init__(self, office: PostOffice, **limits: int) -> None:
        web = WebConfig(bind="127.0.0.1", port=_free_port(), **limits)
        config = office.config.model_copy(update={"web": web})
        self.server = WebServer(web, board_app(web, WebBoard(config, office.engine, dice=office.dice)))
        self.url = f"http://127.0.0.1:{self.server.port}"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)

    async def _start(self) -> None:
        self.server.start()
        while not self.server.server.started:
            await asyncio.sleep(0.01)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def game(config):
    """Anna invited Ben, Ben accepted; Anna opens with 3-1; the board served on the web."""
    config = config.model_copy(update={"web": WebConfig()})
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    served = ServedBoard(office)
    try:
        yield office, anna, ben, served
    finally:
        served.close()


def open_page(browser, url: str, size: tuple[int, int], mobile: bool = False) -> None:
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": mobile})
    browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": mobile, "maxTouchPoints": 5})
    browser.get(url)
    WebDriverWait(browser, 10).until(lambda driver: driver.execute_script("return document.readyState") == "complete")


def checker_on(browser, point: int):
    return browser.find_elements(By.CSS_SELECTOR, f'#checkers g.checker.me[data-point="{point}"]')[-1]


def zone_of(browser, point: int):
    return browser.find_element(By.CSS_SELECTOR, f'rect.zone[data-point="{point}"]')


def drag_with_mouse(browser, origin: int, target: int) -> None:
    ActionChains(browser).click_and_hold(checker_on(browser, origin)).move_by_offset(3, 3) \
        .move_to_element(zone_of(browser, target)).release().perform()


def drag_with_finger(browser, origin: int, target: int) -> None:
    """A touch drag (a pointer of type touch: pointerdown, moves, pointerup), as a finger does."""
    finger = PointerInput(POINTER_TOUCH, "finger")
    actions = ActionBuilder(browser, mouse=finger)
    actions.pointer_action.move_to(checker_on(browser, origin)).pointer_down().move_by(4, 4) \
        .move_to(zone_of(browser, target)).pointer_up()
    actions.perform()


def shown(browser, selector: str) -> str:
    return browser.find_element(By.CSS_SELECTOR, selector).text


def save_shot(browser, name: str) -> None:
    if os.environ.get("PBEM_UPDATE_DOCS"):
        DOCS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(DOCS / f"{name}.png"))


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_drag_checkers_and_send_and_the_opponent_gets_the_mail(browser, game, width) -> None:
    office, anna, ben, served = game
    phone = width == "phone"
    drag = drag_with_finger if phone else drag_with_mouse
    open_page(browser, f"{served.url}/g/{token_of(anna.last)}", PHONE if phone else DESKTOP, mobile=phone)
    assert browser.execute_script("return window.pbemBoard !== null")
    assert not browser.find_element(By.ID, "send").is_displayed(), "no send button before the play is complete"
    save_shot(browser, f"1-your-turn-{width}")
    drag(browser, 8, 5)
    assert shown(browser, "#chosen-move") == "8/5"
    assert browser.find_element(By.ID, "undo").is_displayed()
    browser.find_element(By.ID, "undo").click()
    assert not browser.find_element(By.ID, "chosen").is_displayed(), "undone"
    drag(browser, 8, 5)
    drag(browser, 6, 5)
    assert shown(browser, "#chosen-move") == "8/5 6/5"
    assert len(browser.find_elements(By.CSS_SELECTOR, '#checkers g.checker.me[data-point="5"]')) == 2
    save_shot(browser, f"2-move-complete-{width}")
    browser.find_element(By.ID, "send").click()
    # The old page may go away between finding #state and reading it (the answer is loading).
    WebDriverWait(browser, 10, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda driver: "Waiting for Ben" in driver.find_element(By.ID, "state").text)
    assert "Done." in shown(browser, "#message")
    save_shot(browser, f"3-sent-{width}")
    office.file(office.run())
    assert "Anna played 8/5 6/5" in prose_of(ben.last)
    assert office.table().game.record[-1].play == ((8, 5), (6, 5))


def test_an_illegal_drop_is_refused_on_the_page(browser, game) -> None:
    office, anna, ben, served = game
    open_page(browser, f"{served.url}/g/{token_of(anna.last)}", DESKTOP)
    ActionChains(browser).click_and_hold(checker_on(browser, 8)).move_by_offset(5, 5).perform()
    lit = {int(element.get_attribute("data-point")) for element in browser.find_elements(By.CSS_SELECTOR, ".target")}
    assert lit == {5, 7}, "while a checker of the 8-point is held, 8/5 and 8/7 light up"
    ActionChains(browser).release().perform()
    assert not browser.find_elements(By.CSS_SELECTOR, ".target")
    drag_with_mouse(browser, 13, 7)  # a 6 with 3-1
    assert "Not allowed: 13/7" in shown(browser, "#hint")
    assert len(browser.find_elements(By.CSS_SELECTOR, '#checkers g.checker.me[data-point="13"]')) == 5
    assert not browser.find_element(By.ID, "chosen").is_displayed()
    assert office.run() == []


def test_a_stale_page_applies_nothing_and_a_wrong_token_gets_404(browser, game) -> None:
    office, anna, ben, served = game
    open_page(browser, f"{served.url}/g/{token_of(anna.last)}", DESKTOP)
    drag_with_mouse(browser, 8, 5)
    drag_with_mouse(browser, 6, 5)
    anna.reply("24/21 24/23")  # meanwhile the move came by mail
    browser.find_element(By.ID, "send").click()
    WebDriverWait(browser, 10).until(lambda driver: driver.find_elements(By.ID, "message"))
    assert "your own answer has arrived meanwhile" in shown(browser, "#message")
    assert "Waiting for Ben" in shown(browser, "#state")
    assert set(office.table().game.record[-1].play) == {(24, 21), (24, 23)}, "the mail's move stands"
    save_shot(browser, "4-stale")
    browser.get(f"{served.url}/g/{'a' * 26}")
    assert browser.find_element(By.TAG_NAME, "body").text == "Not Found"


def test_the_page_updates_itself_when_the_opponent_moves(browser, game) -> None:
    office, anna, ben, served = game
    open_page(browser, f"{served.url}/g/{token_of(ben.last)}", DESKTOP)
    assert "Waiting for Anna" in shown(browser, "#state")
    anna.reply("8/5 6/5")  # by mail
    WebDriverWait(browser, 12).until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "button.roll"))
    assert "Anna played 8/5 6/5" in shown(browser, ".facts"), "reloaded by itself, with the opponent's move"


_SET_VISIBILITY = """Object.defineProperty(document, "visibilityState", {configurable: true, get: () => arguments[0]});
document.dispatchEvent(new Event("visibilitychange"));"""
_POLLS = """return performance.getEntriesByType("resource").filter(e => e.name.endsWith("/state"))
.map(e => e.responseStatus);"""


def test_polling_pauses_while_hidden_and_backs_off_when_limited(browser, game) -> None:
    """A hidden tab does not poll (it looks at once when shown again); a poll answered 429
    makes the page wait at least the Retry-After (60 s) before the next."""
    office, anna, ben, _ = game
    served = ServedBoard(office, polls_per_minute=1)
    try:
        open_page(browser, f"{served.url}/g/{token_of(ben.last)}", DESKTOP)
        browser.execute_script(_SET_VISIBILITY, "hidden")
        time.sleep(5.5)
        assert browser.execute_script(_POLLS) == [], "no poll while hidden"
        browser.execute_script(_SET_VISIBILITY, "visible")
        WebDriverWait(browser, 2).until(lambda driver: driver.execute_script(_POLLS) == [200])
        WebDriverWait(browser, 8).until(lambda driver: driver.execute_script(_POLLS) == [200, 429])
        time.sleep(6)
        assert browser.execute_script(_POLLS) == [200, 429], "backs off after a 429"
    finally:
        served.close()


def test_the_page_says_why_a_checker_does_not_move_and_what_the_hint_offers(browser, game) -> None:
    """Issue 20, item 6: with the script the hint tells how to drag (the typed field is hidden);
    a checker that cannot move, a checker of the opponent and a drop outside the board each say why."""
    office, anna, ben, served = game
    open_page(browser, f"{served.url}/g/{token_of(anna.last)}", DESKTOP)
    assert "Drag a checker" in shown(browser, "#hint") and "Type your move" not in shown(browser, "#hint")
    assert not browser.find_element(By.ID, "move").is_displayed()
    ActionChains(browser).click(browser.find_elements(By.CSS_SELECTOR, "#checkers g.checker.them")[0]).perform()
    assert shown(browser, "#hint") == "That is a checker of Ben."
    # A drop outside the board: the checker goes back, and the hint names where it may go.
    ActionChains(browser).click_and_hold(checker_on(browser, 8)).move_by_offset(3, 3) \
        .move_to_element(browser.find_element(By.ID, "state")).release().perform()
    assert shown(browser, "#hint") == "Dropped outside the board: the checker went back. Allowed from there: 7, 5."
    assert len(browser.find_elements(By.CSS_SELECTOR, '#checkers g.checker.me[data-point="8"]')) == 3
    drag_with_mouse(browser, 8, 5)
    drag_with_mouse(browser, 6, 5)
    ActionChains(browser).click(checker_on(browser, 13)).perform()
    assert shown(browser, "#hint") == "Your move is complete: send it, or undo a step."
    assert office.run() == []


def test_without_the_script_the_page_asks_for_a_typed_move(browser, game) -> None:
    office, anna, ben, served = game
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        open_page(browser, f"{served.url}/g/{token_of(anna.last)}", DESKTOP)
        hint = shown(browser, "#hint")
        assert hint.startswith("Type your move in the field below") and "drag" not in hint.lower()
        assert browser.find_element(By.ID, "move").is_displayed()
        browser.find_element(By.ID, "move").send_keys("8/5 6/5")
        browser.find_element(By.ID, "send").click()
        WebDriverWait(browser, 10, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda driver: "Waiting for Ben" in driver.find_element(By.ID, "state").text)
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
    assert office.table().game.record[-1].play == ((8, 5), (6, 5))


def test_the_cube_line_and_a_long_game_stay_short(browser, game) -> None:
    """The cube as offered (value and who offered it), then owned; the moves of a long game two
    turns to a line, the older lines folded away."""
    office, anna, ben, served = game
    anna.reply("8/5 6/5")
    ben.reply("double")
    open_page(browser, f"{served.url}/g/{token_of(anna.last)}", DESKTOP)
    assert shown(browser, "#cube") == "2 offered by Ben, waiting for your answer"
    save_shot(browser, "6-double-offered")
    anna.reply("take")
    open_page(browser, f"{served.url}/g/{token_of(anna.last)}", DESKTOP)
    assert shown(browser, "#cube") == "2, yours"
    open_page(browser, f"{served.url}/g/{token_of(ben.last)}", DESKTOP)
    assert shown(browser, "#cube") == "2, owned by Anna"
    for _ in range(80):  # both play on until the list is long
        table = office.table()
        if table.game is None or table.game.to_act is None:
            break
        player = (anna, ben)[table.game.to_act]
        command = player.next_command(table.game.to_act, player.last_of(table.token(table.game.to_act)))
        if command is None:
            break
        player.reply(command, to=player.last_of(table.token(table.game.to_act)))
    open_page(browser, f"{served.url}/g/{token_of(anna.last)}", DESKTOP)
    rows = browser.find_elements(By.CSS_SELECTOR, "section.moves tr")
    assert browser.find_element(By.ID, "earlier-moves").get_attribute("open") is None, "older lines folded"
    visible = [row for row in rows if row.is_displayed()]
    assert len(visible) == 7, "a heading and the last six lines"
    height = browser.execute_script("return document.documentElement.scrollHeight")
    assert height < 1800, height
    save_shot(browser, "5-long-game")


def test_the_players_own_page_of_all_games(browser, game) -> None:
    """Issue 20, item 7: the page every mail's footer links to, in a real browser (its style sheet
    allowed by the CSP, no script), and from it the game's own page."""
    import re

    office, anna, ben, served = game
    page_token = re.search(r"^All your games: \S+/p/([a-z2-7]{26})$", prose_of(anna.last).replace(" All", "\nAll"),
                           re.MULTILINE)
    assert page_token, prose_of(anna.last)
    open_page(browser, f"{served.url}/p/{page_token.group(1)}", DESKTOP)
    assert browser.find_element(By.TAG_NAME, "h1").text == "Your games, Anna"
    cells = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#games tbody td")]
    assert cells[:4] == ["Ben", "a single game", "0-0", "your turn"] and cells[4].startswith("Your clock:")
    assert browser.find_element(By.CSS_SELECTOR, "table.games").value_of_css_property("border-collapse") == "collapse"
    save_shot(browser, "7-my-games")
    browser.find_element(By.LINK_TEXT, "Open").click()
    WebDriverWait(browser, 10).until(lambda driver: driver.find_elements(By.ID, "board-frame"))
    assert f"/g/{token_of(anna.last)}" in browser.current_url


def test_the_tournament_page_draws_the_bracket(browser, config) -> None:
    """Issue 22, item 3: a knockout's page in a real browser: the bracket drawn as SVG (allowed by
    the CSP), the winners in bold, and on a player's own copy a link from their match to their game."""
    import re

    from sqlmodel import Session, select

    from pbem.store.game_records import MatchRecord, Player as PlayerRow

    office = PostOffice(config, LoadedDice(seed=3))
    names = ["Anna", "Ben", "Carla", "Dora", "Erik"]
    players = [Player(office, f"{name.lower()}@example.org", name) for name in names]
    (answer,) = players[0].write_confirmed("tournament new Autumn knockout 8 match 1")
    code = re.search(r"tournament join ([a-z2-7]{6})", prose_of(answer)).group(1)
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code}")
    players[0].write_confirmed(f"tournament start {code}")
    served = ServedBoard(office)
    try:
        with Session(office.engine) as session:
            first = session.exec(select(MatchRecord).where(MatchRecord.tournament_round == 0)).first()
        table = office.table(first.id)
        loser = next(p for p in players if p.address == table.players[1].address)
        loser.reply("$quit", to=loser.last_of(table.token(1)))
        open_page(browser, f"{served.url}/t/{code}", DESKTOP)
        assert browser.find_element(By.TAG_NAME, "h1").text == "Tournament Autumn"
        svg = browser.find_element(By.CSS_SELECTOR, "#bracket svg")
        assert svg.size["width"] > 400 and svg.size["height"] > 150
        texts = [element.text for element in browser.find_elements(By.CSS_SELECTOR, "#bracket svg text")]
        assert {"Round 1", "Semi-finals", "Final"} <= set(texts) and texts.count("bye") == 3
        bold = [element.text for element in browser.find_elements(By.CSS_SELECTOR, "#bracket text[font-weight=bold]")]
        assert table.players[0].display_name in bold
        assert browser.find_elements(By.CSS_SELECTOR, "#bracket a") == []  # the public page links no game
        save_shot(browser, "8-tournament")
        with Session(office.engine) as session:  # the mails link to it with the web board on (test_tournaments)
            anna = session.exec(select(PlayerRow).where(PlayerRow.address == "anna@example.org")).one()
            anna.page_token = "a" * 26
            session.add(anna)
            session.commit()
        open_page(browser, f"{served.url}/t/{code}/{'a' * 26}", DESKTOP)
        links = browser.find_elements(By.CSS_SELECTOR, "#bracket a")
        assert len(links) == 1
        links[0].click()
        WebDriverWait(browser, 10).until(lambda driver: driver.find_elements(By.ID, "board-frame"))
        assert "/g/" in browser.current_url
    finally:
        served.close()


def test_after_a_tournament_my_page_lists_what_is_finished_and_my_bracket_links_look_like_links(
        browser, after_a_tournament) -> None:
    """Issue 33, item 6: the personal page after a knockout (no running game left) lists the
    finished matches with their .mat and review, the tournament with its place and the ladder;
    its link opens the player's own bracket, whose matches are drawn as links, with the points."""
    from test_player_page import page_token

    office, anna, code, champion, anna_semi = after_a_tournament
    served = ServedBoard(office)
    try:
        open_page(browser, f"{served.url}/p/{page_token(anna.last)}", DESKTOP)
        rows = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
                for row in browser.find_elements(By.CSS_SELECTOR, "#finished tbody tr")]
        assert rows[0][0] == champion.name and rows[0][2].startswith("lost 0-")
        assert rows[1][2] == "won 3-0" and rows[1][4].startswith("your PR 6.0 (advanced)") and rows[1][5] == "Open .mat"
        mat = browser.find_elements(By.LINK_TEXT, ".mat")[1]
        assert mat.get_attribute("href").endswith("/match.mat") and mat.get_attribute("download") is not None
        assert shown(browser, "#tournaments") == "Summer, knockout for 4: place 2, out in the final (tournament over)"
        assert shown(browser, "#ladders") == "club: place 1 of 2"
        save_shot(browser, "9-my-finished-games")
        browser.find_element(By.LINK_TEXT, "Summer").click()
        WebDriverWait(browser, 10).until(lambda driver: driver.find_elements(By.ID, "bracket"))
        own = browser.find_elements(By.CSS_SELECTOR, "#bracket a.own")
        assert len(own) == 2
        name = own[0].find_element(By.CSS_SELECTOR, "text:not(.score)")
        assert name.value_of_css_property("text-decoration-line") == "underline"
        assert name.value_of_css_property("fill") == "rgb(26, 79, 160)"
        assert own[0].find_element(By.TAG_NAME, "rect").value_of_css_property("stroke") == "rgb(46, 107, 79)"
        others = [text for text in browser.find_elements(By.CSS_SELECTOR, "#bracket g.match text:not(.score)")
                  if not text.find_elements(By.XPATH, "ancestor::*[local-name()='a']")]
        assert others and all(text.value_of_css_property("text-decoration-line") == "none" for text in others)
        scores = [text.text for text in browser.find_elements(By.CSS_SELECTOR, "#bracket text.score")]
        assert sorted(scores) == ["0", "0", "0", "3", "3", "3"]
        save_shot(browser, "10-my-bracket")
        own[0].click()
        WebDriverWait(browser, 10).until(lambda driver: driver.find_elements(By.ID, "board-frame"))
        assert "/g/" in browser.current_url
    finally:
        served.close()


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_finished_games_page_shows_its_review_with_the_chart(browser, config, width) -> None:
    """Issue 38: once its review is done, a finished game's page shows it: each player's PR and
    the chart of the reader's winning chances as SVG (allowed by the CSP: no script, no style
    attribute), its rings at the worst decisions listed, whole at a phone's width."""
    from post_office import play_to_end

    office = PostOffice(config.model_copy(update={"web": WebConfig()}), LoadedDice(seed=5))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    play_to_end(office, (anna, ben), match_id)
    office.review()
    served = ServedBoard(office)
    try:
        size = DESKTOP if width == "desktop" else PHONE
        open_page(browser, f"{served.url}/g/{office.table(match_id).token(0)}", size, mobile=width == "phone")
        review = browser.find_element(By.ID, "review")
        assert review.find_element(By.TAG_NAME, "h2").text == "Review of game 1"
        assert shown(browser, "pre.review-text").count("PR ") == 2
        chart = browser.find_element(By.CSS_SELECTOR, "#review-chart svg.chart")
        frame = browser.find_element(By.TAG_NAME, "main").size["width"]
        assert 0.9 * frame <= chart.size["width"] <= frame and chart.size["height"] > 0.4 * chart.size["width"]
        assert browser.execute_script("return arguments[0].querySelector('title').textContent", chart) == \
            "Your winning chances in game 1"
        line = browser.find_element(By.CSS_SELECTOR, "#review-chart polyline.series")
        assert line.value_of_css_property("stroke") == "rgb(31, 96, 170)" and line.size["width"] > 0.8 * chart.size["width"]
        listed = [int(number) for number in re.findall(r"\d\. Move (\d+)", shown(browser, "pre.review-text"))]
        markers = browser.find_elements(By.CSS_SELECTOR, "#review-chart g.marker")
        assert listed and len(markers) == len(listed)
        assert [marker.find_element(By.TAG_NAME, "text").text for marker in markers][0] == "1"
        browser.execute_script("arguments[0].scrollIntoView()", review)
        save_shot(browser, f"13-review-chart-{width}")
    finally:
        served.close()


def test_the_front_page_speaks_the_browsers_language(browser, game) -> None:
    """Issue 33, item 6: ``/`` says what the service is and what to write first, in English or
    German as the browser asks (Accept-Language), styled (the CSP allows the style sheet)."""
    office, anna, ben, served = game
    agent = browser.execute_script("return navigator.userAgent")
    try:
        for accept, heading, first in (("en-GB,en", "How to start", "invite friend@example.org"),
                                       ("de-DE,de;q=0.9,en;q=0.5", "So fangen Sie an", "einladen freund@example.org")):
            browser.execute_cdp_cmd("Emulation.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": accept})
            open_page(browser, f"{served.url}/", PHONE, mobile=True)
            assert browser.find_element(By.TAG_NAME, "h2").text == heading
            assert first in shown(browser, "#start") and "backgammon@localhost" in shown(browser, "#address")
            assert browser.find_element(By.TAG_NAME, "main").value_of_css_property("max-width") == "660px"
            if accept.startswith("en"):
                save_shot(browser, "11-front-page")
        browser.find_element(By.CSS_SELECTOR, '#links a[href="help"]').click()
        WebDriverWait(browser, 10).until(lambda driver: driver.find_elements(By.ID, "help"))
        assert browser.find_element(By.TAG_NAME, "h1").text == "Alle Befehle"
        assert browser.find_element(By.ID, "help").value_of_css_property("white-space") == "pre-wrap"
        browser.back()
        WebDriverWait(browser, 10).until(lambda driver: driver.find_elements(By.ID, "links"))
        browser.find_element(By.CSS_SELECTOR, '#links a[href="verify"]').click()
        WebDriverWait(browser, 10).until(lambda driver: driver.find_elements(By.ID, "verify"))
        assert browser.find_element(By.TAG_NAME, "h1").text == "Die Würfel eines Spiels prüfen"
    finally:
        browser.execute_cdp_cmd("Emulation.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": "en-US,en"})


def test_verify_checks_an_uploaded_mat_against_its_seed(browser, config, tmp_path) -> None:
    """Issue 33, item 6: the page the game-over mail links to, used as a player would: the .mat
    chosen as a file, the ``Dice seed:`` line pasted, the verdict in plain words."""
    from test_front_and_verify import ended_game

    office, mat, seed = ended_game(config)
    path = tmp_path / "match.mat"
    path.write_text(mat, encoding="utf-8")
    served = ServedBoard(office)
    try:
        for pasted, verdict in ((f"Dice seed: {seed}", ".verdict.ok"), ("Dice seed: " + "0f" * 32, ".verdict.wrong")):
            open_page(browser, f"{served.url}/verify", DESKTOP)
            browser.find_element(By.ID, "mat").send_keys(str(path))
            browser.find_element(By.ID, "seed").send_keys(pasted)
            browser.find_element(By.ID, "check").click()
            WebDriverWait(browser, 10).until(lambda driver: driver.find_elements(By.ID, "verdicts"))
            text = shown(browser, verdict)
            assert ("is the roll this seed gives" in text) == (verdict == ".verdict.ok"), text
            if verdict == ".verdict.ok":
                save_shot(browser, "12-verify")
    finally:
        served.close()


@pytest.fixture
def long_season(config):
    """Anna and Ben play nine matches of four formats, each ended by the loser's $quit, Anna
    getting better (her PR in each match's review from 12.5 down to 4.8); the board served."""
    from sqlmodel import select
    from test_player_history import start

    from pbem.store.db import session_scope, utc_now
    from pbem.store.game_records import ReviewJob

    limits = config.limits.model_copy(update={"invitations_received_per_day": 20, "invitations_per_day": 20})
    office = PostOffice(config.model_copy(update={"limits": limits, "web": WebConfig()}), LoadedDice(seed=1))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    plan = [("match 3", ben), ("match 5", anna), ("", ben), ("games 3", ben), ("match 3", anna), ("money", ben),
            ("match 5", ben), ("match 3", ben), ("", anna)]
    prs = [12.5, 9.0, 10.2, 7.4, 8.1, 6.3, 5.5, 7.0, 4.8]
    for (invitation, loser), pr in zip(plan, prs):
        match_id = start(office, anna, ben, f"invite ben@example.org {invitation}".strip())
        for _ in range(3 if invitation == "games 3" else 1):
            loser.reply("$quit")
        seat = 0 if office.table(match_id).players[0].address == anna.address else 1
        with session_scope(office.engine) as session:
            for queued in session.exec(select(ReviewJob).where(ReviewJob.match_id == match_id)).all():
                session.delete(queued)
            players = [{}, {}]
            players[seat] = {"decisions": 20, "error_rate": 0, "lost": round(pr * 40), "luck": 0}
            players[1 - seat] = {"decisions": 20, "error_rate": 0, "lost": 400, "luck": 0}
            session.add(ReviewJob(match_id=match_id, game_number=1, game={}, result={"players": players},
                                  done_at=utc_now()))
    served = ServedBoard(office)
    try:
        yield office, anna, served, prs
    finally:
        served.close()


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_my_page_shows_me_over_time_in_charts_with_their_figures(browser, long_season, width) -> None:
    """Issue 38, point 3: the rating of each list over time, the PR of every match with its moving
    average and the wins and losses by format, drawn as SVG without a script (the page has
    none) and as wide as the screen, each with its figures in a table a screen reader reads."""
    from test_player_page import page_token

    office, anna, served, prs = long_season
    phone = width == "phone"
    open_page(browser, f"{served.url}/p/{page_token(anna.last)}", PHONE if phone else (1000, 1300), mobile=phone)
    assert not browser.find_elements(By.TAG_NAME, "script")
    charts = browser.find_elements(By.CSS_SELECTOR, "figure.chart svg")
    assert [chart.find_element(By.TAG_NAME, "title").get_attribute("textContent") for chart in charts] == [
        "Performance rating (PR) per match", "Wins and losses by format", "Match rating", "Casual rating"]
    for chart in charts:  # drawn, scaled to the page and never wider than the screen
        assert 0 < chart.size["width"] <= (PHONE[0] if phone else 640) and chart.size["height"] > 0
    beyond = browser.execute_script(  # the charts and their tables fit the screen (the finished matches' table
        "return [...document.querySelectorAll('figure.chart, #pr, #records, table[id^=rating-]')]"  # scrolls)
        ".filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth).map(e => e.id)")
    assert beyond == []
    pr_chart = browser.find_element(By.ID, "pr-chart")
    assert len(pr_chart.find_elements(By.CSS_SELECTOR, "g.points circle")) == len(prs)
    assert pr_chart.find_element(By.CSS_SELECTOR, "polyline.moving-average").get_attribute("stroke-dasharray") == "4 3"
    if phone:  # the pictures, before a table is opened
        browser.execute_script("document.getElementById('pr-chart').scrollIntoView()")
        save_shot(browser, "14-my-page-over-time-phone")
    else:
        height = browser.execute_script("return document.documentElement.scrollHeight")
        open_page(browser, browser.current_url, (1000, height))  # the whole page
        save_shot(browser, "13-my-page-over-time")
    # The figures behind each picture: folded away, opened without a script.
    table = browser.find_element(By.ID, "pr")
    assert not table.is_displayed()
    summary = browser.find_element(By.CSS_SELECTOR, "#pr-chart + details summary")
    summary.send_keys(Keys.ENTER)  # from the keyboard, as with a screen reader
    WebDriverWait(browser, 5).until(lambda driver: table.is_displayed())
    assert browser.execute_script("return arguments[0].getBoundingClientRect().right "
                                  "<= document.documentElement.clientWidth", table)
    rows = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
            for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert [row[2].split(" ")[0] for row in rows] == [f"{pr:.1f}" for pr in prs]
    assert rows[-1][3] == f"{sum(prs[-5:]) / 5:.1f}" and rows[-1][2] == "4.8 (expert)"
    records = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
               for row in browser.find_elements(By.CSS_SELECTOR, "#records tbody tr")]
    assert records == [["Matches to 3 points", "2", "1", "0"], ["Matches to 5 points", "1", "1", "0"],
                       ["Series of 3 games", "1", "0", "0"], ["Single games", "1", "1", "0"],
                       ["Money sessions", "1", "0", "0"]]
    bars = browser.find_elements(By.CSS_SELECTOR, "#records-chart rect.bar")
    assert len(bars) == 10


def test_a_long_name_without_a_break_keeps_the_pages_within_a_phones_width(browser, config) -> None:
    """A display name of one long word (or a hostile one) in the title, the facts and the moves'
    heading of the game's page, and in the title of one's own page, wraps instead of widening
    the page past a phone's screen (the game's page was 873 px wide at 390)."""
    from sqlmodel import Session, select

    from pbem.store.game_records import Player as PlayerRow

    office = PostOffice(config.model_copy(update={"web": WebConfig()}), LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    anna.reply("8/5 6/5")
    ben.reply("$quit")
    with Session(office.engine) as session:
        row = session.exec(select(PlayerRow).where(PlayerRow.address == ben.address)).one()
        row.name = '"<i>x</i>" Wolfeschlegelsteinhausenbergerdorffwelchevoralternwarengewissenhaft'
        session.add(row)
        anna_page = session.exec(select(PlayerRow).where(PlayerRow.address == anna.address)).one().page_token
        session.commit()
    served = ServedBoard(office)
    try:
        for path in (f"/g/{office.table(match_id).token(0)}", f"/p/{anna_page}"):
            open_page(browser, served.url + path, PHONE, mobile=True)
            assert "Wolfeschlegelsteinhausenbergerdorff" in browser.page_source
            if path.startswith("/g/"):
                widths = browser.execute_script(
                    "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
                assert widths[0] <= widths[1], (path, widths)
            else:  # the finished matches' table is wider than a phone anyway; the rest fits
                beyond = browser.execute_script(
                    "return [...document.querySelectorAll('h1, p, figure.chart, dl')]"
                    ".filter(e => e.scrollWidth > e.clientWidth || e.getBoundingClientRect().right >"
                    " document.documentElement.clientWidth).map(e => e.tagName)")
                assert beyond == [], beyond
    finally:
        served.close()
