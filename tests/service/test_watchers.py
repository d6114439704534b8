"""Friends who watch a game (issue 22, item 4): both players allow it with ``watchers on``, a
friend writes ``watch CODE`` (with the proof an invitation needs) and gets a read-only mail after
each move and the page ``/w/CODE``; nothing a watcher writes acts in the game, ``watchers off``
stops it, and no token, reply address or address of a player ever reaches a watcher."""

from __future__ import annotations

import logging
import re
from email.message import EmailMessage

import pytest
from post_office import (LoadedDice, Player, PostOffice, invite_and_accept, is_confirmation, play_turn, prose_of,
                         recipient, text_of, token_of)
from sqlmodel import Session, select
from test_web_board import client_of, form_of, web_config

from pbem import commands
from pbem.render.views import EventKind
from pbem.service.table.news import Event
from pbem.service.watching import watchers
from pbem.store.game_records import Player as PlayerRow
from pbem.store.game_records import Seat
from pbem.store.watching import MatchWatch, Watcher

CODE_LINE = re.compile(r"^\s+(?:watch|zuschauen) ([a-z2-7]{10})$", re.M)


@pytest.fixture
def game(config):
    """Anna invited Ben to a match to 3, Ben accepted; Anna opens with 3-1.  Carol and Dave are
    friends of theirs; the web board is on."""
    office = PostOffice(web_config(config), LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    carol, dave = Player(office, "carol@example.org", "Carol"), Player(office, "dave@example.org", "Dave")
    invite_and_accept(office, anna, ben, "invite ben@example.org match 3")
    return office, anna, ben, carol, dave


def code_in(mail: EmailMessage) -> str:
    found = CODE_LINE.search(text_of(mail))
    assert found, text_of(mail)
    return found.group(1)


def game_mail(player: Player, office: PostOffice) -> EmailMessage:
    """The player's last mail of the match (the one with their token)."""
    table = office.table()
    seat = 0 if player.address == table.players[0].address else 1
    mail = player.last_of(table.token(seat))
    assert mail is not None
    return mail


def both_allow(office: PostOffice, anna: Player, ben: Player) -> str:
    anna.reply("watchers on", to=game_mail(anna, office))
    code = code_in(anna.last)
    ben.reply("watchers on", to=game_mail(ben, office))
    assert code_in(ben.last) == code, "one code per match"
    return code


def watching_carol(office: PostOffice, anna: Player, ben: Player, carol: Player, every_move: bool = True) -> str:
    """Carol watches Anna – Ben: every move (as the tests of the mails after each move need), or
    with the default of one mail per game."""
    code = both_allow(office, anna, ben)
    (answer,) = carol.write_confirmed(f"watch {code} every move" if every_move else f"watch {code}")
    assert "You now watch Anna – Ben." in prose_of(answer), text_of(answer)
    return code


def play_on(office: PostOffice, anna: Player, ben: Player, turns: int) -> None:
    """The player to act answers what their last mail asks, ``turns`` times."""
    for _ in range(turns):
        play_turn(office, (anna, ben))


# -- the commands ---------------------------------------------------------------------------------


@pytest.mark.parametrize("line, command", [
    ("watchers on", commands.Watchers(True)),
    ("Zuschauer aus.", commands.Watchers(False)),
    ("watch K3MQ7ZT2XA", commands.Watch("k3mq7zt2xa")),
    ("zuschauen k3mq7zt2xa", commands.Watch("k3mq7zt2xa")),
    ("watch k3mq7zt2xa off", commands.Watch("k3mq7zt2xa", on=False)),
    ("zuschauen k3mq7zt2xa aus", commands.Watch("k3mq7zt2xa", on=False)),
    ("unwatch k3mq7zt2xa", commands.Watch("k3mq7zt2xa", on=False)),
    ("watchers maybe", commands.CommandError("watchers maybe", "watchers-switch", "maybe")),
    ("watch", commands.CommandError("watch", "watch-code", "")),
    ("watch k3mq7zt2x1", commands.CommandError("watch k3mq7zt2x1", "watch-code", "k3mq7zt2x1")),
    ("watch out, he doubles early", commands.Note("watch out, he doubles early")),
    ("watch this game", commands.Note("watch this game")),
])
def test_the_watch_commands_in_english_and_german(line: str, command: commands.Command) -> None:
    assert commands.parse_commands(line) == [command]


# -- allowing and starting to watch -----------------------------------------------------------


def test_watching_needs_both_players_and_a_confirmed_watch(game) -> None:
    office, anna, ben, carol, dave = game
    sent = anna.reply("watchers on", to=game_mail(anna, office))
    assert [recipient(mail) for mail in sent] == [anna.address], "the opponent gets no mail for it"
    answer = prose_of(anna.last)
    assert "You allow friends to watch this game. Watching opens once Ben allows it too" in answer
    code = code_in(anna.last)
    assert f"to backgammon@localhost: watch {code}" in answer
    assert f"http://127.0.0.1:8080/w/{code}" in answer
    table = office.table()
    assert code not in (table.token(0), table.token(1))

    # Only Anna allows it: the same answer as for a code that names no game.
    (question,) = carol.write(f"watch {code}")
    assert is_confirmation(question), "watch makes the service mail an address: it needs proof"
    (refused,) = carol.reply("yes", to=question)
    (unknown,) = dave.write_confirmed("watch aaaaaaaaaa")
    def answer_of(mail: EmailMessage) -> str:  # without the footer, whose page link is the reader's own
        return text_of(mail).split("\n-- \n")[0]

    assert answer_of(refused).replace(code, "CODE") == answer_of(unknown).replace("aaaaaaaaaa", "CODE")
    assert "have not allowed watching" in prose_of(refused)
    with Session(office.engine) as session:
        assert session.exec(select(Watcher)).all() == []

    anna.reply("watchers on", to=game_mail(anna, office))  # again: Ben is told once
    anna.reply("8/5 6/5", to=game_mail(anna, office))
    assert prose_of(ben.last).count("Anna allows friends to watch this game;") == 1, "told in Ben's next mail"
    assert "watching opens once you allow it too: write watchers on." in prose_of(ben.last)
    ben.reply("watchers on", to=game_mail(ben, office))
    assert "Anna allows it too, so watching is open now." in prose_of(ben.last)
    (started,) = carol.write_confirmed(f"watch {code}")
    assert "You now watch Anna – Ben." in prose_of(started)
    assert f"To stop, write unwatch {code}" in prose_of(started)
    with Session(office.engine) as session:
        assert len(session.exec(select(Watcher)).all()) == 1


def test_watchers_on_answered_before_the_opponents_news_says_only_where_both_stand(game) -> None:
    """Ben writes watchers on before any mail told him that Anna allows it: his answer says that
    watching is open, not also (from the news held for him) that it opens once he allows it."""
    office, anna, ben, carol, dave = game
    anna.reply("watchers on", to=game_mail(anna, office))
    ben.reply("watchers on", to=game_mail(ben, office))
    answer = prose_of(ben.last)
    assert "Anna allows it too, so watching is open now." in answer, answer
    assert "watching opens once you allow it too" not in answer, answer
    anna.reply("8/5 6/5", to=game_mail(anna, office))
    assert "allows friends to watch" not in prose_of(ben.last), "nor later: he was told"


def test_watchers_on_outside_a_game_says_which_game_is_meant(game) -> None:
    office, anna, ben, carol, dave = game
    before = office.snapshot()
    (answer,) = anna.write("watchers on")
    assert "write the line in a reply to a mail of that game" in prose_of(answer)
    assert office.snapshot() == before
    with Session(office.engine) as session:
        assert session.exec(select(MatchWatch)).all() == []


def test_against_the_assistant_the_player_alone_decides(game) -> None:
    office, anna, ben, carol, dave = game
    (started,) = dave.write_confirmed("play assistant")
    dave.reply("watchers on", to=dave.last)
    assert "Assistant (world class) allows it too, so watching is open now." in prose_of(dave.last), text_of(dave.last)
    (answer,) = carol.write_confirmed(f"watch {code_in(dave.last)}")
    assert "You now watch Dave – Assistant (world class)." in prose_of(answer)


def test_a_player_cannot_watch_their_own_game(game) -> None:
    office, anna, ben, carol, dave = game
    code = both_allow(office, anna, ben)
    (answer,) = anna.write_confirmed(f"watch {code}")
    assert "You play in this game yourself" in prose_of(answer)


def test_in_german(game) -> None:
    office, anna, ben, carol, dave = game
    anna.reply("sprache de\nzuschauer an", to=game_mail(anna, office))
    assert "Sie erlauben Freunden, diesem Spiel zuzuschauen." in prose_of(anna.last)
    code = code_in(anna.last)
    assert f"zuschauen {code}" in text_of(anna.last)
    ben.reply("watchers on", to=game_mail(ben, office))
    (question,) = carol.write(f"zuschauen {code} bei jedem Zug")
    (answer,) = carol.reply("ja", to=question)
    assert "Sie schauen jetzt Anna – Ben zu. Nach jedem Zug bekommen Sie eine Mail" in prose_of(answer)
    anna.reply("8/5 6/5", to=game_mail(anna, office))
    watched = carol.last
    assert str(watched["Subject"]) == "[Backgammon] Zuschauen Anna – Ben: Ben ist am Zug"
    assert "Anna hat 8/5 6/5 gezogen." in prose_of(watched)
    assert f"zuschauen {code} aus" in prose_of(watched)


# -- the watcher's mails -------------------------------------------------------------------------


def test_a_watcher_gets_a_read_only_mail_after_each_move(game) -> None:
    office, anna, ben, carol, dave = game
    code = watching_carol(office, anna, ben, carol)
    sent = anna.reply("8/5 6/5", to=game_mail(anna, office))
    (watched,) = [mail for mail in sent if recipient(mail) == carol.address]
    assert str(watched["Subject"]) == "[Backgammon] Watching Anna – Ben: Ben's turn"
    text = prose_of(watched)
    assert "Anna played 8/5 6/5." in text and "Match to 3 points: Anna 0, Ben 0" in text
    assert "(you" not in text_of(watched) and "Turn: Ben" in text_of(watched), "an onlooker is no player"
    assert re.search(r"^Position ID: \S+\nMatch ID: \S+$", text_of(watched), re.M)
    assert f"http://127.0.0.1:8080/w/{code}" in text
    assert watched["Reply-To"] is None and token_of(watched) is None
    html = watched.get_body(preferencelist=("html",))
    assert html is not None and "mailto:" not in html.get_content()
    assert any(part.get_content_type() == "image/png" for part in watched.walk())

    # A roll alone brings no mail: it comes with the move played with it.
    sent = ben.reply("roll", to=game_mail(ben, office))
    assert carol.address not in {recipient(mail) for mail in sent}
    table = office.table()
    command = ben.next_command(1, game_mail(ben, office))
    assert command
    sent = ben.reply(command, to=game_mail(ben, office))
    (watched_again,) = [mail for mail in sent if recipient(mail) == carol.address]
    text = prose_of(watched_again)
    assert re.search(r"Ben rolled \d-\d\. Ben played ", text), text
    assert watched_again["In-Reply-To"] == watched["Message-ID"], "one thread per watched game"
    assert table.token(1) not in str(watched_again)


def test_a_move_on_the_web_board_brings_the_watchers_their_mail_too(game) -> None:
    office, anna, ben, carol, dave = game
    watching_carol(office, anna, ben, carol)
    client = client_of(office)
    token = office.table().token(0)
    page = client.get(f"/g/{token}").text
    assert client.post(f"/g/{token}", data={**form_of(page, "move"), "move": "8/5 6/5"}).status_code == 200
    sent = office.run()
    office.file(sent)
    (watched,) = [mail for mail in sent if recipient(mail) == carol.address]
    assert "Anna played 8/5 6/5." in prose_of(watched) and token not in str(watched)


def test_nothing_a_watcher_sends_acts_in_the_game(game) -> None:
    office, anna, ben, carol, dave = game
    code = watching_carol(office, anna, ben, carol)
    anna.reply("8/5 6/5", to=game_mail(anna, office))
    watched = carol.last
    before = office.snapshot()
    outbound = office.outbound_count()
    answered = office.config.limits.confirmations_per_day  # a watch mail proves nothing of its reader
    for number, line in enumerate(("roll", "double", "13/7 8/7", "$quit", "watchers off", "Ben, play 13/7!")):
        sent = carol.reply(line, to=watched)
        assert {recipient(mail) for mail in sent} == ({carol.address} if number < answered else set())
    assert office.snapshot() == before, "a watcher's reply changed the game"
    assert office.outbound_count() == outbound + answered
    told = prose_of(carol.inbox[-answered])
    assert "You watch Anna – Ben: watchers cannot move, roll, double or answer in a game" in told
    assert "reply to the last mail" not in told and "Not carried out" in str(carol.inbox[-answered]["Subject"])
    assert "no command I could carry out" not in told and "invite friend@" not in told, told
    assert f"Nothing was done. To stop watching, write unwatch {code} -- " in told, told
    with Session(office.engine) as session:
        assert all(settings.allowed() for settings in session.exec(select(MatchWatch)).all())
    # ... and nothing of what Carol wrote reaches the players.
    assert not any("play 13/7" in text_of(mail) for mail in (*anna.inbox, *ben.inbox))


def test_unwatch_stops_the_mails(game) -> None:
    office, anna, ben, carol, dave = game
    code = watching_carol(office, anna, ben, carol)
    (answer,) = carol.write_confirmed(f"unwatch {code}")
    assert f"You do not watch the game with the watch code {code} (any more)" in prose_of(answer)
    sent = anna.reply("8/5 6/5", to=game_mail(anna, office))
    assert carol.address not in {recipient(mail) for mail in sent}


def test_watchers_off_stops_the_mails_and_the_page(game) -> None:
    office, anna, ben, carol, dave = game
    code = watching_carol(office, anna, ben, carol)
    client = client_of(office)
    assert client.get(f"/w/{code}").status_code == 200
    ben.reply("watchers off", to=game_mail(ben, office))
    assert "You no longer allow watching this game: the 1 watcher get" in prose_of(ben.last)
    sent = anna.reply("8/5 6/5", to=game_mail(anna, office))
    assert carol.address not in {recipient(mail) for mail in sent}
    page = client.get(f"/w/{code}")
    assert page.status_code == 404 and "they stopped it" in page.text
    assert "Anna" not in page.text and "<svg" not in page.text
    # On again, the watchers must ask again.
    ben.reply("watchers on", to=game_mail(ben, office))
    sent = ben.reply("roll", to=game_mail(ben, office))
    command = ben.next_command(1, game_mail(ben, office))
    sent = ben.reply(command or "", to=game_mail(ben, office))
    assert carol.address not in {recipient(mail) for mail in sent}
    told = prose_of(anna.last)  # Anna's next mail tells her both
    assert "Ben no longer allows watching this game: its watchers get no more mail." in told
    assert "Ben allows friends to watch this game, and so do you: watching is open (friends write watch" in told


def test_limits_per_game_and_per_address(game, monkeypatch) -> None:
    office, anna, ben, carol, dave = game
    monkeypatch.setattr(watchers, "MAX_WATCHERS_PER_GAME", 1)
    code = watching_carol(office, anna, ben, carol)
    (answer,) = dave.write_confirmed(f"watch {code}")
    assert "Anna – Ben has 1 watchers, as many as this server allows" in prose_of(answer)
    monkeypatch.setattr(watchers, "MAX_WATCHERS_PER_GAME", 20)
    monkeypatch.setattr(watchers, "MAX_GAMES_WATCHED", 1)
    erin, fred = Player(office, "erin@example.org", "Erin"), Player(office, "fred@example.org", "Fred")
    office.dice.load((3, 1))
    erin.write_confirmed("invite fred@example.org")
    fred.reply("accept")
    erin.reply("watchers on", to=erin.last_of(office.table().token(0)))
    other = code_in(erin.last)
    fred.reply("watchers on", to=fred.last_of(office.table().token(1)))
    (answer,) = carol.write_confirmed(f"watch {other}")
    assert "You watch 1 games already, as many as this server allows." in prose_of(answer)
    (answer,) = dave.write_confirmed(f"watch {other}")
    assert "You now watch Erin – Fred." in prose_of(answer)


# -- no secret of a player ever reaches a watcher -------------------------------------------------


def test_no_token_reply_address_or_address_of_a_player_reaches_a_watcher(game) -> None:
    """As the token-leak tests do: every mail Carol gets and every page she can open."""
    office, anna, ben, carol, dave = game
    code = watching_carol(office, anna, ben, carol)
    anna.reply("8/5 6/5\nBen, my address is anna@example.org, write me!", to=game_mail(anna, office))
    play_on(office, anna, ben, 12)
    ben.reply("double", to=game_mail(ben, office))
    anna.reply("take", to=game_mail(anna, office))
    play_on(office, anna, ben, 4)
    with Session(office.engine) as session:
        tokens = set(session.exec(select(Seat.token)).all())
        players = session.exec(select(PlayerRow).where(PlayerRow.address.in_([anna.address, ben.address]))).all()
        secrets = {token for player in players for token in (player.page_token, player.unsubscribe_token) if token}
    assert len(tokens) == 2 and secrets
    client = client_of(office)
    watched = [mail for mail in carol.inbox if "Watching Anna" in str(mail["Subject"])]
    assert len(watched) >= 8
    page = client.get(f"/w/{code}").text
    everything = [str(mail) for mail in carol.inbox] + [text_of(mail) for mail in carol.inbox]
    everything += [part.get_content() for mail in carol.inbox for part in mail.walk()
                   if part.get_content_type() == "text/html"]
    for text in [*everything, page]:
        for secret in (*tokens, *secrets):
            assert secret not in text
        assert anna.address not in text and ben.address not in text
        assert "write me" not in text, "no note between the players"
    # the envelope sender (Return-Path, a bounce address of that very mail) is no reply address
    assert all("backgammon+bounce-" in str(mail["Return-Path"]) for mail in watched)
    for text in [*(str(mail).partition("\n")[2] if str(mail).startswith("Return-Path:") else str(mail)
                   for mail in watched), page]:
        assert "backgammon+" not in text, "no reply address (Carol's own confirmation had hers)"
        assert "clock" not in text.lower()


# -- the watch page ------------------------------------------------------------------------------


def test_the_watch_page_shows_board_score_and_moves_read_only(game, caplog) -> None:
    office, anna, ben, carol, dave = game
    code = watching_carol(office, anna, ben, carol)
    anna.reply("8/5 6/5", to=game_mail(anna, office))
    client = client_of(office)
    caplog.set_level(logging.INFO)
    page = client.get(f"/w/{code}")
    assert page.status_code == 200
    html = page.text
    assert "<h1>Anna – Ben</h1>" in html and "a match to 3 points: Ben&#39;s turn" in html
    assert "<svg" in html and 'id="score">Anna 0, Ben 0<' in html
    assert "<td>1)</td><td>3-1: 8/5 6/5</td><td></td>" in html
    assert "<form" not in html and "<script" not in html
    assert page.headers["Content-Security-Policy"] and page.headers["Referrer-Policy"] == "no-referrer"
    logged = "\n".join(record.getMessage() for record in caplog.records if record.name.startswith("pbem"))
    assert "web GET /w/… 200" in logged and code not in logged
    unknown, malformed = client.get("/w/aaaaaaaaaa"), client.get("/w/nope")
    assert unknown.status_code == 404 and "not allowed watching" in unknown.text
    assert malformed.status_code == 404
    table = office.table()
    assert client.get(f"/w/{table.token(0)}").status_code == 404, "a game token opens no watch page"
    assert client.get(f"/g/{code}").status_code == 404, "a watch code opens no game"


def test_the_watch_page_is_rate_limited(game) -> None:
    office, anna, ben, carol, dave = game
    code = both_allow(office, anna, ben)
    client = client_of(office, requests_per_minute=2)
    assert [client.get(f"/w/{code}").status_code for _ in range(3)] == [200, 200, 429]



@pytest.mark.parametrize("language", ["en", "de"])
def test_a_resignation_offer_is_worded_for_a_watcher(language: str) -> None:
    """watching.txt words it with lines.txt's win_kind (the macros events.txt imports are not its own)."""
    text = watchers.watch_event(Event(EventKind.RESIGN_OFFERED, 1, {"kind": 2, "points": 2}), ("Anna", "Ben"), language)
    assert text.startswith("Ben ") and "gammon" in text.lower()


def test_a_watcher_is_told_of_a_resignation_offer(game) -> None:
    office, anna, ben, carol, dave = game
    watching_carol(office, anna, ben, carol)
    sent = anna.reply("resign gammon", to=game_mail(anna, office))
    watched = [mail for mail in sent if recipient(mail) == carol.address]
    assert watched and "offered to resign a gammon" in prose_of(watched[0]), [prose_of(mail) for mail in sent]


# -- the digest: one mail per game unless every move (issue 33, item 5) --------------------------


@pytest.mark.parametrize("line, command", [
    ("watch k3mq7zt2xa every move", commands.Watch("k3mq7zt2xa", every_move=True)),
    ("Watch K3MQ7ZT2XA each move.", commands.Watch("k3mq7zt2xa", every_move=True)),
    ("zuschauen k3mq7zt2xa bei jedem Zug", commands.Watch("k3mq7zt2xa", every_move=True)),
    ("zuschauen k3mq7zt2xa jeden Zug", commands.Watch("k3mq7zt2xa", every_move=True)),
    ("unwatch k3mq7zt2xa every move", commands.Note("unwatch k3mq7zt2xa every move")),
    ("watch k3mq7zt2xa every game", commands.Note("watch k3mq7zt2xa every game")),
])
def test_watch_every_move_in_english_and_german(line: str, command: commands.Command) -> None:
    assert commands.parse_commands(line) == [command]


@pytest.fixture
def long_game(config):
    """As ``game``, but a match to 7: a game resigned does not end it."""
    office = PostOffice(web_config(config), LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    carol, dave = Player(office, "carol@example.org", "Carol"), Player(office, "dave@example.org", "Dave")
    invite_and_accept(office, anna, ben, "invite ben@example.org match 7")
    return office, anna, ben, carol, dave


def test_by_default_a_watcher_gets_one_mail_per_game_at_its_end(long_game) -> None:
    office, anna, ben, carol, dave = long_game
    code = watching_carol(office, anna, ben, carol, every_move=False)
    started = carol.last
    assert "When each game ends you get a mail with its result" in prose_of(started)
    assert f"watch {code} every move" in prose_of(started)
    assert str(started["Subject"]) == "[Backgammon] You watch Anna – Ben"
    for _ in range(6):
        sent = play_turn(office, (anna, ben))
        assert carol.address not in {recipient(mail) for mail in sent}, "no mail per move"
    table = office.table()
    loser, winner = (anna, ben) if table.game.to_act == 0 else (ben, anna)
    sent = loser.reply("resign single", to=game_mail(loser, office))
    assert carol.address not in {recipient(mail) for mail in sent}, "an offer ends no game"
    sent = winner.reply("accept", to=game_mail(winner, office))
    (watched,) = [mail for mail in sent if recipient(mail) == carol.address]
    text = prose_of(watched)
    assert f"{winner.name} wins a single game (resignation): 1 point." in text, text
    assert str(watched["Subject"]) == f"[Backgammon] Watching Anna – Ben: {winner.name} wins a single game"
    assert "Game 2 begins" in text and f"http://127.0.0.1:8080/w/{code}" in text, text_of(watched)
    assert "played" not in text, "the moves are not told again"
    assert f"a mail when each game ends (watch {code} every move for one after each move)" in text
    assert token_of(watched) is None and watched["Reply-To"] is None
    with Session(office.engine) as session:
        assert [watcher.every_move for watcher in session.exec(select(Watcher)).all()] == [False]

    # Watching again with "every move" changes the choice.
    (answer,) = carol.write_confirmed(f"watch {code} every move")
    assert "After each move you get a mail" in prose_of(answer)
    sent = play_turn(office, (anna, ben))
    sent += play_turn(office, (anna, ben))
    assert carol.address in {recipient(mail) for mail in sent}


def test_the_digest_in_german(game) -> None:
    office, anna, ben, carol, dave = game
    code = both_allow(office, anna, ben)
    (question,) = carol.write(f"zuschauen {code}")
    (answer,) = carol.reply("ja", to=question)
    assert "Am Ende jedes Spiels bekommen Sie eine Mail mit seinem Ergebnis" in prose_of(answer)
    assert f"zuschauen {code} bei jedem Zug" in prose_of(answer)
    assert str(answer["Subject"]) == "[Backgammon] Sie schauen Anna – Ben zu"
    sent = anna.reply("8/5 6/5", to=game_mail(anna, office))
    assert carol.address not in {recipient(mail) for mail in sent}
    sent = ben.reply("$aufgeben", to=game_mail(ben, office))
    (watched,) = [mail for mail in sent if recipient(mail) == carol.address]
    assert "Ben hat aufgegeben." in prose_of(watched) and "mit einer Mail am Ende jedes Spiels" in prose_of(watched)
    assert str(watched["Subject"]).startswith("[Backgammon] Zuschauen Anna – Ben: Anna gewinnt ")


def test_a_watcher_replying_with_a_move_is_told_watchers_cannot_act_in_german(game) -> None:
    office, anna, ben, carol, dave = game
    code = watching_carol(office, anna, ben, carol)
    anna.reply("8/5 6/5", to=game_mail(anna, office))
    carol.write_confirmed("sprache de")
    before = office.snapshot()
    (answer,) = carol.reply("13/7 8/7", to=carol.inbox[-3])
    assert "Sie schauen Anna – Ben zu: Zuschauer können in einem Spiel weder ziehen noch würfeln" in prose_of(answer)
    assert "letzte Mail" not in prose_of(answer) and office.snapshot() == before
    assert f"Um nicht mehr zuzuschauen, schreiben Sie zuschauen {code} aus" in prose_of(answer)
    assert "keinen Befehl" not in prose_of(answer) and "einladen" not in prose_of(answer), \
        "nor is the watcher told that the mail held no command, with invitations to write instead"
    assert str(answer["Subject"]) == "[Backgammon] Nicht ausgeführt"


def test_a_player_who_also_watches_still_hears_which_game_to_answer(game) -> None:
    """Someone who plays a game of their own and watches another, writing a move in a new mail,
    is asked to answer the mail of their game, as before: the mail may be meant for it."""
    office, anna, ben, carol, dave = game
    watching_carol(office, anna, ben, carol)
    carol.write_confirmed("invite dave@example.org")
    dave.reply("accept", to=dave.last)
    (answer,) = carol.write("13/7 8/7")
    assert "reply to the last mail of that game" in prose_of(answer)
