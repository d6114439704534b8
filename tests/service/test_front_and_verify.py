"""The web board's front page ``/`` and the dice check ``/verify`` (issue 33, item 6) over HTTP
(Starlette's TestClient on the real app and service): the visitor's language, the headers of every
page; a real game's ``.mat`` and revealed seed proved, a wrong seed and a wrong file said so in
plain words; the upload's bound, CSRF and same-origin rule.  The browser tests are in
test_web_browser.py."""

from __future__ import annotations

import hashlib
import re

import pytest
from post_office import Player, PostOffice, attachment, invite_and_accept, text_of
from test_web_board import client_of, web_config

from pbem.store.game_records import MatchStatus
from pbem.web.app import MAX_UPLOAD_BYTES, visitor_language

SEED = re.compile(r"^Dice seed: ([0-9a-f]{64})$", re.MULTILINE)


def ended_game(config) -> tuple[PostOffice, str, str]:
    """A single game on the service's own dice, a few rolls, then resigned: the office, the .mat
    its last mail carries and the seed it reveals."""
    office = PostOffice(web_config(config))  # the service's own seeded dice
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    for player in (anna, ben):
        player.write_confirmed("autoroll on")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    players = (anna, ben)
    for _ in range(6):
        table = office.table(match_id)
        seat = table.game.to_act
        last = players[seat].last_of(table.token(seat))
        players[seat].reply(players[seat].next_command(seat, last), to=last)
    table = office.table(match_id)
    seat = table.game.to_act
    players[seat].reply("$quit", to=players[seat].last_of(table.token(seat)))  # a single game: lost at once
    assert office.table(match_id).status is MatchStatus.FINISHED
    mat = attachment(anna.last, ".mat")
    (seed,) = SEED.findall(text_of(anna.last))
    assert mat and seed
    return office, mat, seed


def upload(client, mat: str | bytes, seed: str, **headers: str):
    """The form as a browser posts it: the cookie's CSRF token from a GET, the file and the seed."""
    form = client.get("/verify", headers=headers).text
    csrf = re.search(r'name="csrf" value="([0-9a-f]{32})"', form).group(1)
    return client.post("/verify", data={"csrf": csrf, "seed": seed}, headers=headers,
                       files={"mat": ("match.mat", mat, "text/plain")})


def test_the_front_page_says_what_the_service_is_and_the_first_mail_in_the_visitors_language(config) -> None:
    office = PostOffice(web_config(config))
    client = client_of(office)
    english = client.get("/", headers={"Accept-Language": "en-GB,en;q=0.9"})
    assert english.status_code == 200 and 'lang="en"' in english.text
    assert "backgammon@localhost" in english.text and "<code>invite friend@example.org</code>" in english.text
    assert 'href="verify"' in english.text and "mailto:backgammon@localhost?subject=help" in english.text
    assert english.headers["Content-Security-Policy"] and english.headers["X-Frame-Options"] == "DENY"
    assert english.headers["Referrer-Policy"] == "no-referrer" and "<script" not in english.text
    german = client.get("/", headers={"Accept-Language": "fr-FR,de;q=0.8,en;q=0.5"})
    assert 'lang="de"' in german.text and "<code>einladen freund@example.org</code>" in german.text
    assert german.headers["Content-Security-Policy"] == english.headers["Content-Security-Policy"]
    assert 'lang="en"' in client.get("/").text, "no Accept-Language: the service's language"
    assert client.get("/index.html").status_code == 404
    assert 'href="help"' in english.text and 'href="help"' in german.text


def test_every_command_on_the_web_is_the_help_mails_text(config) -> None:
    office = PostOffice(web_config(config))
    client = client_of(office)
    english = client.get("/help", headers={"Accept-Language": "en"})
    assert english.status_code == 200 and english.headers["Content-Security-Policy"]
    assert "<h1>Every command</h1>" in english.text and "How to play backgammon by mail" in english.text
    assert "24/18 13/9" in english.text and "invite anna@example.org match 5" in english.text
    german = client.get("/help", headers={"Accept-Language": "de-AT"}).text
    assert "<h1>Alle Befehle</h1>" in german and "So spielen Sie Backgammon per Mail" in german
    assert 'href="."' in german and "<script" not in german


@pytest.mark.parametrize(("header", "language"), [
    ("de-DE,de;q=0.9,en;q=0.8", "de"), ("en-US,de;q=0.5", "en"), ("fr, de;q=0.1", "de"), ("fr", None),
    ("de;q=0, en;q=0.2", "en"), ("", None), (None, None), ("de;q=x", None), ("EN", "en")])
def test_the_visitors_language(header, language) -> None:
    assert visitor_language(header) == language


def test_verify_proves_the_dice_of_a_real_game_and_says_what_is_wrong(config) -> None:
    office, mat, seed = ended_game(config)
    client = client_of(office)
    page = client.get("/verify", headers={"Accept-Language": "en"})
    assert page.status_code == 200 and '<input type="file" name="mat"' in page.text
    assert page.headers["Content-Security-Policy"] and "pbem_verify=" in page.headers["set-cookie"]
    assert "samesite=strict" in page.headers["set-cookie"].lower() and "httponly" in page.headers["set-cookie"].lower()

    proved = upload(client, mat, f"Dice seed: {seed}\n", **{"Accept-Language": "en"})
    assert proved.status_code == 200, proved.text
    assert re.search(r"every roll of game 1 of the file \(\d+ rolls?(, after \d+ tied opening rolls? rolled "
                     r"again)?\) is the roll this seed gives", proved.text), proved.text
    assert 'class="message done verdict ok"' in proved.text and "wrong" not in proved.text

    other = "ab" * 32
    refused = upload(client, mat, other)
    assert refused.status_code == 200 and "no game of this file has the rolls this seed gives" in refused.text
    assert re.search(r"The file's roll \d+( \(the opening roll\))? is \d-\d, but the seed gives \d-\d", refused.text), refused.text
    first = re.search(r"\b([1-6])([1-6]):", mat)
    tampered = f"{mat[:first.start()]}{int(first.group(1)) % 6 + 1}{first.group(2)}:{mat[first.end():]}"
    assert "no game of this file has the rolls" in upload(client, tampered, seed).text

    # The whole text of the mails pasted: the seed line is taken, the commitment compared with it.
    commitment = hashlib.sha256(bytes.fromhex(seed)).hexdigest()
    pasted = f"Game 1 begins.\nDice commitment: {commitment}\n…\nGame 1 is over.\nDice seed: {seed}\n"
    committed = upload(client, mat, pasted).text
    assert committed.count('class="message done verdict ok"') == 1 and "verdict wrong" not in committed
    assert "Its SHA-256 is the <code>Dice commitment:</code> you pasted" in committed
    other_commitment = upload(client, mat, f"Dice commitment: {'cd' * 32}\nDice seed: {seed}").text
    assert 'class="message done verdict ok"' in other_commitment
    assert "is none of the <code>Dice commitment:</code> lines you pasted" in other_commitment
    assert "Yet its SHA-256 is the Dice commitment you pasted" in upload(client, tampered, pasted).text

    german = upload(client, mat, seed, **{"Accept-Language": "de"})
    assert 'lang="de"' in german.text and "ist der Wurf, den dieser Startwert ergibt" in german.text
    assert upload(client, "just some text", seed).status_code == 422
    assert "no seed in what you pasted" in upload(client, mat, "Dice seed: none").text
    assert "no game in it" in upload(client, " 1 point match\n", seed).text
    # A game resigned at its first turn: its .mat has no roll (a roll is written with its move).
    resigned = upload(client, " 1 point match\n\n Game 1\n Anna : 0    Ben : 0\n      Wins 3 points and the match\n",
                      f"Dice seed: {seed}")
    assert resigned.status_code == 422 and "no game in it" not in resigned.text, resigned.text
    assert "ended before its first move" in resigned.text and "no game of this file" not in resigned.text
    assert f"its SHA-256 is <code>{hashlib.sha256(bytes.fromhex(seed)).hexdigest()}</code>" in resigned.text


def test_verify_bounds_the_upload_and_refuses_a_forged_or_foreign_form(config) -> None:
    office = PostOffice(web_config(config))
    client = client_of(office)
    too_big = upload(client, "Game 1\n" + "x" * MAX_UPLOAD_BYTES, "ab" * 32)
    assert too_big.status_code == 413 and "too big" in too_big.text
    client.cookies.clear()
    forged = client.post("/verify", data={"csrf": "0" * 32, "seed": "ab" * 32},
                         files={"mat": ("match.mat", "Game 1\n", "text/plain")})
    assert forged.status_code == 403 and "This form has expired" in forged.text
    client.get("/verify")
    foreign = client.post("/verify", data={"csrf": client.cookies["pbem_verify"], "seed": "ab" * 32},
                          files={"mat": ("match.mat", "Game 1\n", "text/plain")},
                          headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert foreign.status_code == 403
