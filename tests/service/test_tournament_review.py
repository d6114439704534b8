"""Review of issue 22 (knockout tournaments, ladders, watchers), played by mail as players and as
hostile players would: a whole 8-player knockout with byes, a withdrawal and a loss on time;
what strangers, eliminated players and wrong codes get; the invitation limits."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from post_office import LoadedDice, Player, PostOffice, prose_of, recipient, text_of
from sqlmodel import Session, select
from test_tournaments import code_in, finish, matches, people, set_ratings, tournament

from pbem.service.jobs.clock_job import check_clocks
from pbem.store.db import utc_now
from pbem.store.game_records import MatchRecord

ADDRESS = re.compile(r"[\w.+-]+@[\w.-]+")


@pytest.fixture
def office(config) -> PostOffice:
    return PostOffice(config, LoadedDice(seed=11))


def tournament_mails(player: Player, code: str) -> list:
    """The mails of no game that name the tournament (the bye, round and final mails)."""
    return [mail for mail in player.inbox if f"({code})" in prose_of(mail) and "Position ID" not in text_of(mail)]


def test_an_eight_player_knockout_with_byes_a_withdrawal_and_a_loss_on_time(office):
    anna, ben, carla, dora, erik, fritz = players = people(office, 6)
    by_address = {player.address: player for player in players}
    (answer,) = anna.write_confirmed("turnier neu Herbst ko 8 partie 3 uhr 1d/1d", yes="ja")
    code = code_in(answer)
    assert "Ihr K.-o.-Turnier Herbst ist eröffnet: 8 Spieler, Partien auf 3 Punkte." in prose_of(answer)
    for player in players[1:]:
        (joined,) = player.write_confirmed(f"tournament join {code}")
        assert "You joined the tournament Herbst" in prose_of(joined)
    set_ratings(office, {player.address: 1600 - 10 * number for number, player in enumerate(players)})
    anna.write_confirmed(f"turnier starten {code}", yes="ja")
    # Seeds 1 to 6 = Anna to Fritz; lines 7 and 8 are byes: Anna and Ben wait for round 2.
    first = matches(office)
    assert [(m.tournament_round, m.tournament_index) for m in first] == [(0, 1), (0, 3)]
    assert [{p.address for p in office.table(m.id).players} for m in first] == [
        {dora.address, erik.address}, {carla.address, fritz.address}]
    assert "Sie haben in der ersten Runde ein Freilos" in prose_of(anna.last)
    assert "You have a bye in the first round" in prose_of(ben.last)

    # Carla plays a move, then withdraws: Fritz wins, and meets Ben at once (round 2 waits for nobody).
    table = office.table(first[1].id)
    seat = [p.address for p in table.players].index(carla.address)
    mail = carla.last_of(table.token(seat))
    carla.reply(carla.next_command(seat, mail), to=mail)
    sent = carla.write_confirmed(f"tournament withdraw {code}")
    assert "You withdrew from the tournament Herbst" in prose_of(carla.answers(sent)[-1])
    semi = matches(office)[-1]
    assert (semi.tournament_round, semi.tournament_index) == (1, 1)
    assert {p.address for p in office.table(semi.id).players} == {ben.address, fritz.address}

    # Erik (to move) and Ben (to move) let their clocks run out: Dora and Fritz go on.
    later = utc_now() + timedelta(days=30)
    for step in range(10):
        check_clocks(office.engine, office.config, later + timedelta(minutes=step), office.dice)
    office.file(office.run())
    while tournament(office).status != "finished":
        running = [m for m in matches(office) if m.status == "running"]
        assert len(running) == 1
        finish(office, by_address, running[0], office.table(running[0].id).players[0].address)

    pairings = [(m.tournament_round, m.tournament_index) for m in matches(office)]
    assert sorted(pairings) == [(0, 1), (0, 3), (1, 0), (1, 1), (2, 0)]  # none twice, none for a bye
    bracket = text_of(tournament_mails(anna, code)[-1])
    assert "Runde 1:\n  Anna – Freilos\n  Dora – Erik: Dora\n  Ben – Freilos\n  Carla (zurückgezogen) – Fritz: Fritz" \
        in bracket and "Finale:\n  Anna – Fritz: Anna" in bracket
    for player in players:
        told = " ".join(prose_of(mail) for mail in player.inbox)
        for phrase in ("round 1 is over", "the semi-finals are over"):
            assert player is anna or told.count(phrase) == 1, (player.name, phrase)
        assert player is anna or told.count("Tournament Herbst (" + code + ") is over: Anna is the champion") == 1
        others = {p.address for p in players} - {player.address}
        for mail in player.inbox:
            assert not others & set(ADDRESS.findall(text_of(mail) + str(mail["Reply-To"]))), (player.name, mail["Subject"])
    assert "Runde 1 ist vorbei" in " ".join(prose_of(mail) for mail in anna.inbox)
    assert "Das Turnier Herbst (" + code + ") ist vorbei: Sie haben gewonnen." in " ".join(
        prose_of(mail) for mail in anna.inbox), "the champion is told in the second person"
    assert "Anna hat gewonnen" not in " ".join(prose_of(mail) for mail in anna.inbox)


def test_a_tournament_mail_nobody_asked_for_is_not_titled_as_an_answer(office):
    """The bye, round and final mails (and an organiser's invitation to a stranger) come unasked:
    "Your mail to Backgammon by Mail" misled, and the reader could not tell them apart in a list."""
    anna, ben, carla, dora, erik = players = people(office, 5)
    (answer,) = anna.write_confirmed("tournament new Cup knockout 8 match 1")
    code = code_in(answer)
    anna.write_confirmed(f"tournament invite {code} erik@example.org")
    assert str(erik.last["Subject"]) == "[Backgammon] Tournament Cup: an invitation from Anna"
    erik.reply("yes")
    for player in (ben, carla, dora):
        player.write_confirmed(f"tournament join {code}")
    set_ratings(office, {player.address: 1600 - 10 * number for number, player in enumerate((ben, anna, carla, dora, erik))})
    anna.write_confirmed(f"tournament start {code}")  # Ben, the first seed, waits for Dora or Erik
    assert str(ben.last["Subject"]) == "[Backgammon] Tournament Cup has begun"
    by_address = {player.address: player for player in players}
    while tournament(office).status != "finished":
        running = [m for m in matches(office) if m.status == "running"][0]
        finish(office, by_address, running, office.table(running.id).players[0].address)
    subjects = {str(mail["Subject"]) for player in players for mail in player.inbox}
    assert {"[Backgammon] Tournament Cup: round 1 is over", "[Backgammon] Tournament Cup: the semi-finals are over",
            "[Backgammon] Tournament Cup is over: Ben is the champion"} <= subjects, subjects
    erik.write_confirmed("sprache de", yes="ja")
    (answer,) = dora.write_confirmed("tournament new Pokal knockout 4 match 1")
    dora.write_confirmed(f"tournament invite {code_in(answer)} erik@example.org")
    assert str(erik.last["Subject"]) == "[Backgammon] Turnier Pokal: eine Einladung von Dora"


def test_strangers_wrong_codes_and_players_who_are_out_cannot_change_a_tournament(office):
    anna, ben, carla, dora, erik = players = people(office, 5)
    (answer,) = anna.write_confirmed("tournament new Cup knockout 4 match 1")
    code = code_in(answer)
    for player in (ben, carla, dora):
        player.write_confirmed(f"tournament join {code}")
    before = tournament(office).bracket, [(m.id, m.status) for m in matches(office)]
    for line, reason in [(f"tournament withdraw {code}", "You are not in the tournament Cup"),
                         (f"tournament leave {code}", "has begun: joining or leaving is no longer possible"),
                         (f"tournament join {code}", "has begun: joining or leaving is no longer possible"),
                         (f"tournament start {code}", "Only the organiser of Cup"),
                         (f"tournament withdraw {code.upper()}", "You are not in the tournament Cup")]:
        (refused,) = erik.write_confirmed(line)
        assert reason in prose_of(refused), prose_of(refused)
    for line, reason in [("tournament abcdef", "There is no tournament abcdef; please check the code."),
                         ("turnier abcdef", "There is no tournament abcdef"),
                         ("tournament Cup", '"tournament Cup" is not a tournament command')]:
        (refused,) = erik.write(line)
        assert reason in prose_of(refused), prose_of(refused)
    assert (tournament(office).bracket, [(m.id, m.status) for m in matches(office)]) == before


def test_a_player_already_knocked_out_cannot_withdraw(office):
    """A loser who then writes ``withdraw`` was told a match of theirs was lost and was shown as
    "(withdrawn)" in every later bracket; now they hear they are out already, and nothing changes."""
    players = people(office, 4)
    by_address = {player.address: player for player in players}
    (answer,) = players[0].write_confirmed("tournament new Cup knockout 4 match 1")
    code = code_in(answer)
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code}")
    match = matches(office)[0]
    table = office.table(match.id)
    finish(office, by_address, match, table.players[0].address)
    loser = by_address[table.players[1].address]
    before = tournament(office).bracket
    (answer,) = loser.write_confirmed(f"tournament withdraw {code}")
    assert f"You are out of the tournament Cup ({code}) already: you lost a match" in prose_of(answer)
    loser.write_confirmed("sprache de")
    (answer,) = loser.write_confirmed(f"turnier zurückziehen {code}", yes="ja")
    assert f"Sie sind aus dem Turnier Cup ({code}) schon ausgeschieden" in prose_of(answer)
    assert tournament(office).bracket == before


def test_knocked_out_is_whoever_lost_a_decided_match():
    from pbem.rules.brackets import knocked_out, new_bracket, record_result, withdraw

    bracket = new_bracket([1, 2, 3, 4, 5])  # eight lines: 1, 2 and 3 have byes
    assert not any(knocked_out(bracket, player) for player in range(1, 6))
    bracket = record_result(bracket, 0, 1, 4)
    assert knocked_out(bracket, 5) and not knocked_out(bracket, 4)
    bracket = withdraw(bracket, 2)
    assert knocked_out(bracket, 2) and not knocked_out(bracket, 3)


def test_tournament_pairings_are_no_invitations_in_the_daily_limits(office):
    """Joining is consent: the matches a tournament starts are no invitations, so a player in three
    fast tournaments can still be invited to a game, and can still invite."""
    anna, ben, carla, dora, erik = people(office, 5)
    for player in (anna, ben, carla, dora):
        player.write_confirmed("numbering own")
    set_ratings(office, {"anna@example.org": 1700, "ben@example.org": 1300, "carla@example.org": 1600,
                         "dora@example.org": 1550})  # Ben is the last seed: the invited seat of each of his matches
    for name in ("One", "Two", "Three"):
        (answer,) = anna.write_confirmed(f"tournament new {name} knockout 4 match 1")
        for player in (ben, carla, dora):
            player.write_confirmed(f"tournament join {code_in(answer)}")
    with Session(office.engine) as session:
        assert len(session.exec(select(MatchRecord)).all()) == 6
    sent = erik.write_confirmed("invite ben@example.org")
    assert any(recipient(mail) == ben.address and "Erik <erik@example.org> invites you" in prose_of(mail) for mail in sent), \
        [prose_of(mail) for mail in sent]


def test_an_address_gets_at_most_three_invitations_a_day_of_either_kind(office):
    anna, ben, carla, dora, erik = people(office, 5)
    for inviter in (anna, ben, carla):
        inviter.write_confirmed("invite erik@example.org")
    (answer,) = dora.write_confirmed("tournament new Cup knockout 4 match 1")
    sent = dora.write_confirmed(f"tournament invite {code_in(answer)} erik@example.org")
    assert [recipient(mail) for mail in sent] == [dora.address]
    assert "has already been invited 3 times in the last 24 hours" in prose_of(sent[0])


def test_tournament_invitations_count_in_the_limits_of_game_invitations(office):
    """The other way round: three tournament invitations are an address's three of the day, and
    an organiser's tournament invitations count in their ten."""
    anna, ben, carla, dora, erik = people(office, 5)
    for organiser in (anna, ben, carla):
        (answer,) = organiser.write_confirmed("tournament new Cup knockout 4 match 1")
        organiser.write_confirmed(f"tournament invite {code_in(answer)} erik@example.org")
    sent = dora.write_confirmed("invite erik@example.org")
    assert [recipient(mail) for mail in sent] == [dora.address]
    assert "has already been invited 3 times in the last 24 hours" in prose_of(sent[0])
    (answer,) = dora.write_confirmed("tournament new Big knockout 16 match 1")
    code = code_in(answer)
    dora.write_confirmed(f"tournament invite {code} " + " ".join(f"f{number}@example.org" for number in range(5)))
    for number in range(5):
        dora.write_confirmed(f"invite g{number}@example.org")  # five to the tournament, five to games: ten today
    sent = dora.write_confirmed(f"tournament invite {code} h@example.org")
    assert "You have sent 10 invitations in the last 24 hours" in prose_of(sent[0]), prose_of(sent[0])
    sent = dora.write_confirmed("invite h@example.org")
    assert "You have sent 10 invitations in the last 24 hours" in prose_of(sent[0]), prose_of(sent[0])


# -- ladders ---------------------------------------------------------------------------------


def test_ladder_challenges_of_oneself_downwards_or_by_a_capitalised_address(office):
    from test_ladders import standing

    anna, ben, carla, dora = people(office, 4)
    anna.write_confirmed("ladder new club match 1 reach 2")
    for player in (ben, carla, dora):
        player.write_confirmed("ladder join club")
    for line, reason in [("ladder challenge club 3", "place 3 is not one of them"),
                         ("ladder challenge club carla@example.org", "place 3 is not one of them"),
                         ("ladder challenge club 4", "place 4 is not one of them"),
                         ("ladder challenge club #1", "may challenge only the 2 places above you (places 2 to 3)"),
                         ("ladder challenge club 0", '("0" is neither)'),
                         ("leiter fordern club -1", '("-1" is neither)')]:
        player = dora if "#1" in line else carla
        (answer,) = player.write(line) if line.endswith(("0", "-1")) else player.write_confirmed(line)
        assert reason in prose_of(answer), (line, prose_of(answer))
        with Session(office.engine) as session:
            assert session.exec(select(MatchRecord)).all() == [], line
    sent = dora.write_confirmed("ladder challenge club Ben@Example.ORG")
    assert any(recipient(mail) == ben.address and "This is a challenge on the ladder club" in prose_of(mail)
               for mail in sent), [prose_of(mail) for mail in sent]
    assert standing(office) == ["anna", "ben", "carla", "dora"]


# -- watchers and pages --------------------------------------------------------------------------


def test_a_tournament_player_watching_anothers_match_learns_no_secret_and_cannot_act(config):
    """Carla, in the same tournament, watches Anna – Ben: her watch mails, her own tournament page
    and the public pages hold no token, page token or address of theirs, and what she writes in
    reply to a watch mail changes nothing of their match."""
    from post_office import token_of
    from test_web_board import client_of, web_config

    from pbem.store.game_records import Player as PlayerRow, Seat

    office = PostOffice(web_config(config), LoadedDice(seed=5))
    anna, ben, carla, dora = players = people(office, 4)
    (answer,) = anna.write_confirmed("tournament new Open knockout 4 match 3")
    code = code_in(answer)
    for player in (ben, carla, dora):
        player.write_confirmed(f"tournament join {code}")
    # The field is full at Dora's join; equal ratings, so seeded by who joined first: Anna–Dora, Ben–Carla.
    match = next(m for m in matches(office) if {p.address for p in office.table(m.id).players} == {anna.address, dora.address})
    table = office.table(match.id)
    for seat, player in enumerate(table.players):
        person = {p.address: p for p in players}[player.address]
        person.reply("watchers on", to=person.last_of(table.token(seat)))
    watch_code = re.search(r"watch ([a-z2-7]{10})", text_of(dora.last) + text_of(anna.last)).group(1)
    (answer,) = carla.write_confirmed(f"watch {watch_code} every move")
    assert "You now watch" in prose_of(answer), prose_of(answer)
    for _ in range(4):
        table = office.table(match.id)
        seat = table.game.to_act
        person = {p.address: p for p in players}[table.players[seat].address]
        mail = person.last_of(table.token(seat))
        person.reply(person.next_command(seat, mail), to=mail)
    watched = [mail for mail in carla.inbox if "Watching" in str(mail["Subject"])]
    assert watched
    before = office.snapshot()
    for line in ("$quit", "double", "accept", "watchers off", "take"):
        carla.reply(line, to=watched[-1])
    assert office.snapshot() == before
    with Session(office.engine) as session:
        seats = session.exec(select(Seat).where(Seat.match_id == match.id)).all()
        rows = session.exec(select(PlayerRow).where(PlayerRow.address.in_([anna.address, dora.address]))).all()
        carla_page = session.exec(select(PlayerRow).where(PlayerRow.address == carla.address)).one().page_token
    secrets = {seat.token for seat in seats} | {row.page_token for row in rows if row.page_token}
    client = client_of(office)
    pages = [client.get(f"/w/{watch_code}").text, client.get(f"/t/{code}").text,
             client.get(f"/t/{code}/{carla_page}").text]
    texts = [str(mail) for mail in watched] + pages
    for text in texts:
        assert not secrets & set(re.findall(r"[a-z2-7]{26}", text)), text[:300]
        assert anna.address not in text and dora.address not in text
    assert all(token_of(mail) is None for mail in watched)
    assert pages[2].count("/g/") == 1  # Carla's own match only
    others = [mail for player in (ben,) for mail in player.inbox]
    assert not any(watch_code in str(mail) for mail in others), "Ben, outside that match, never sees its watch code"


def test_players_joining_by_mail_are_no_invitations_of_the_organiser_or_to_them(office):
    """A ``tournament join`` written in a new mail is held for confirmation as ``tournament join
    CODE``, the same line an organiser's invitation holds: the joins counted as invitations the
    organiser sent, and as invitations the joiner received."""
    anna, ben = people(office, 2)
    (answer,) = anna.write_confirmed("tournament new Crowd knockout 32 match 1")
    crowd = code_in(answer)
    for number in range(10):
        Player(office, f"fan{number}@example.org", f"Fan{number}").write_confirmed(f"tournament join {crowd}")
    sent = anna.write_confirmed(f"tournament invite {crowd} ben@example.org")
    assert any(recipient(mail) == ben.address for mail in sent), [prose_of(mail) for mail in sent]
    carla = Player(office, "carla@example.org", "Carla")
    for name in ("One", "Two", "Three"):
        (answer,) = carla.write_confirmed(f"tournament new {name} knockout 4 match 1")
        ben.write_confirmed(f"tournament join {code_in(answer)}")
    (answer,) = carla.write_confirmed("tournament new Four knockout 4 match 1")
    sent = carla.write_confirmed(f"tournament invite {code_in(answer)} fan0@example.org")
    assert any(recipient(mail) == "fan0@example.org" for mail in sent), [prose_of(mail) for mail in sent]


def test_a_withdrawal_that_ends_a_round_is_shown_in_the_round_mail(office):
    players = people(office, 4)
    by_address = {player.address: player for player in players}
    (answer,) = players[0].write_confirmed("tournament new Cup knockout 4 match 3")
    code = code_in(answer)
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code}")
    first, second = matches(office)
    finish(office, by_address, first, office.table(first.id).players[0].address)
    quitter = by_address[office.table(second.id).players[1].address]
    sent = quitter.write_confirmed(f"tournament withdraw {code}")
    told = [mail for mail in sent if "the semi-finals are over" in prose_of(mail)]
    assert told and all(f"{quitter.name} (withdrawn)" in text_of(mail) for mail in told), \
        [text_of(mail) for mail in told]
    assert tournament(office).bracket["withdrawn"]


def test_a_tournament_invitation_has_a_mailto_link_that_joins(office):
    """The issue asks for "an invitation with a mailto link to join", as a game invitation has one."""
    anna, ben, zed = people(office, 2) + [Player(office, "zed@example.org", "Zed")]
    (answer,) = anna.write_confirmed("tournament new Cup knockout 4 match 1")
    code = code_in(answer)
    anna.write_confirmed(f"tournament invite {code} zed@example.org")
    link = re.search(r"mailto:(backgammon\+[a-z2-7]{26}@localhost)\?subject=yes", text_of(zed.last))
    assert link, text_of(zed.last)
    (joined,) = zed.write("", subject="yes", to=link.group(1))
    assert "You joined the tournament Cup" in prose_of(joined), prose_of(joined)
    ben.write_confirmed("sprache de")
    anna.write_confirmed(f"tournament invite {code} ben@example.org")
    assert "Oder klicken Sie auf diesen Link" in prose_of(ben.last) and "?subject=yes" in text_of(ben.last)


def test_the_own_tournament_page_finds_its_style_sheet(config):
    """``/t/CODE/TOKEN`` is one level deeper than ``/t/CODE``: its ``../static/board.css`` was
    ``/t/static/board.css``, a 404, so a player's own page of the bracket came without style."""
    from urllib.parse import urljoin

    from test_web_board import client_of, web_config

    office = PostOffice(web_config(config), LoadedDice(seed=5))
    anna, ben, carla, dora = people(office, 4)
    (answer,) = anna.write_confirmed("tournament new Open knockout 4 match 3")
    code = code_in(answer)
    for player in (ben, carla, dora):
        player.write_confirmed(f"tournament join {code}")
    own = re.search(r"http://[^/\s]+(/t/[a-z2-7]{6}/[a-z2-7]{26})", text_of(answer)).group(1)
    client = client_of(office)
    for page in (own, f"/t/{code}"):
        sheet = re.search(r'<link rel="stylesheet" href="([^"]+)"', client.get(page).text).group(1)
        assert client.get(urljoin(page, sheet)).status_code == 200, (page, sheet)


def test_tournament_invitations_do_not_use_up_the_invitees_own_confirmations(office):
    """A tournament invitation is held as a confirmation of the invitee's: three of them, even from
    one organiser in one line, used up the three unanswered confirmations an address may get a day,
    so the invitee's own next command in a new mail was dropped without an answer."""
    anna, ben, carla = people(office, 3)
    erik = Player(office, "erik@example.org", "Erik")
    (answer,) = anna.write_confirmed("tournament new Cup knockout 4 match 1")
    sent = anna.write_confirmed(f"tournament invite {code_in(answer)} erik@example.org erik@example.org "
                                "erik@example.org")
    assert sum(recipient(mail) == erik.address for mail in sent) == 1, "one invitation to an address a line"
    for organiser in (ben, carla):
        (answer,) = organiser.write_confirmed("tournament new Cup knockout 4 match 1")
        organiser.write_confirmed(f"tournament invite {code_in(answer)} erik@example.org")
    assert sum("invites you to the knockout tournament" in prose_of(mail) for mail in erik.inbox) == 3
    (question,) = erik.write("invite friend@example.org")  # was dropped unanswered: 3 "unanswered" already
    sent = erik.reply("yes", to=question)
    assert any(recipient(mail) == "friend@example.org" for mail in sent)
    (joined,) = erik.write_confirmed(f"tournament join {code_in(answer)}")  # the same line as an invitation held
    assert "You joined the tournament Cup" in prose_of(joined)


def test_mails_about_a_finished_tournament_match_start_nothing_again(office):
    players = people(office, 4)
    by_address = {player.address: player for player in players}
    (answer,) = players[0].write_confirmed("tournament new Cup knockout 4 match 1")
    code = code_in(answer)
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code}")
    first, second = matches(office)
    finish(office, by_address, first, office.table(first.id).players[0].address)
    finish(office, by_address, second, office.table(second.id).players[0].address)
    assert len(matches(office)) == 3
    before = tournament(office).bracket, tournament(office).rounds_told
    for match in (first, second):
        table = office.table(match.id)
        for seat, seated in enumerate(table.players):
            player = by_address[seated.address]
            last = player.last_of(table.token(seat))
            player.reply("board\n$quit\nrematch", to=last)
            player.post(player.outbox[-1])  # the same mail again
    assert [(m.tournament_round, m.tournament_index) for m in matches(office)] == [(0, 0), (0, 1), (1, 0)]
    assert (tournament(office).bracket, tournament(office).rounds_told) == before


def club_ladder(office: PostOffice) -> list[Player]:
    """Anna opens the ladder club (matches to 1, reach 3, 7 days to answer); Ben, Carla and Dora
    join it, in that order below her."""
    players = people(office, 4)
    players[0].write_confirmed("ladder new club match 1 reach 3 days 7")
    for player in players[1:]:
        player.write_confirmed("ladder join club")
    return players


def test_a_ladder_challenge_waits_for_the_defenders_vacation(office):
    from test_ladders import standing

    from pbem.service.jobs.ladder_job import expire_challenges

    anna, ben, carla, dora = club_ladder(office)
    ben.write_confirmed("vacation 14")
    dora.write_confirmed("ladder challenge club 2")
    expire_challenges(office.engine, office.config, utc_now() + timedelta(days=7, minutes=1))
    assert standing(office) == ["anna", "ben", "carla", "dora"]  # Ben is away: his days have not begun
    expire_challenges(office.engine, office.config, utc_now() + timedelta(days=14 + 7, minutes=1))
    assert standing(office) == ["anna", "dora", "ben", "carla"]  # back for 7 days without an answer


def test_a_ladder_challenge_by_place_never_shows_the_challenger_the_defenders_address(office):
    from post_office import play_to_end

    anna, ben, carla, dora = club_ladder(office)
    dora.write_confirmed("leiter fordern club 1")
    anna.reply("accept", to=anna.last)
    play_to_end(office, (dora, anna), office.table().id)
    assert len(dora.inbox) > 5
    for mail in dora.inbox:
        assert anna.address not in str(mail) and "anna@" not in text_of(mail), text_of(mail)
