"""Ladders by mail (issue 22, item 2): join, challenge, accept, play; a declined or unanswered
challenge; the standing in the match-end mail; refusals that change nothing."""

from __future__ import annotations

import logging
import re
from types import SimpleNamespace
from datetime import timedelta

import pytest
from post_office import (LoadedDice, Player, PostOffice, check_answers, is_confirmation, play_to_end, prose_of, recipient,
                         text_of, token_of)
from sqlmodel import Session, select
from test_web_board import client_of, web_config

from pbem.config import load_config
from pbem.service.jobs.ladder_job import expire_challenges
from pbem.store.db import utc_now
from pbem.store.game_records import Ladder, MatchRecord, MatchStatus, Seat
from pbem.store.game_records import Player as PlayerRow


@pytest.fixture
def players(office) -> list[Player]:
    """Anna, Ben, Carl and Dora, on the ladder ``club`` (matches to 1 point) in this order."""
    people = [Player(office, f"{name.lower()}@example.org", name) for name in ("Anna", "Ben", "Carl", "Dora")]
    (answer,) = people[0].write_confirmed("ladder new club match 1 reach 3 days 7")
    assert "You are on the ladder club, at place 1." in prose_of(answer)
    for person in people[1:]:
        (answer,) = person.write_confirmed("ladder join club")
        assert f"at place {people.index(person) + 1}." in prose_of(answer)
    return people


def standing(office: PostOffice) -> list[str]:
    with Session(office.engine) as session:
        ladder = session.exec(select(Ladder)).one()
        by_id = {player.id: player.address.split("@")[0] for player in session.exec(select(PlayerRow)).all()}
        return [by_id[player_id] for player_id in ladder.standing]


def challenge(office: PostOffice, challenger: Player, defender: Player, line: str) -> int:
    """``challenger`` sends ``line`` (confirmed); the defender gets an invitation that says it is a
    challenge; returns the match id."""
    sent = challenger.write_confirmed(line)
    check_answers(office, challenger.outbox[-1], sent)
    card = defender.last
    assert "Invitation from" in str(card["Subject"])
    assert f"This is a challenge on the ladder club: {challenger.name} (place" in prose_of(card)
    assert f"mailto:backgammon+{token_of(card)}@localhost?subject=accept" in text_of(card)
    table = office.table()
    assert table.status is MatchStatus.INVITED and table.record.ladder_id is not None
    return table.id


def test_a_challenge_accepted_and_played_moves_the_winner_up_and_both_get_the_standing(office, players):
    anna, ben, carl, dora = players
    match_id = challenge(office, dora, anna, "ladder challenge club 1")
    anna.reply("accept", to=anna.last)
    assert office.table(match_id).status is MatchStatus.RUNNING
    play_to_end(office, (dora, anna), match_id)
    table = office.table(match_id)
    dora_won = table.score.points[0] > table.score.points[1]
    assert standing(office) == (["dora", "anna", "ben", "carl"] if dora_won else ["anna", "ben", "carl", "dora"])
    for person in (anna, dora):
        end = prose_of(person.last)
        assert "Ladder club:" in end and "The standing now:" in end
        assert "1. Dora 2. Anna 3. Ben 4. Carl" in end if dora_won else "1. Anna 2. Ben 3. Carl 4. Dora" in end
        assert "New match ratings" in end  # a ladder match counts in the match rating list
        assert "@example.org" not in end.split("The standing now:")[1]


def test_a_challenger_who_wins_takes_the_place_and_everyone_between_moves_down(office, players):
    anna, ben, carl, dora = players
    match_id = challenge(office, dora, anna, "ladder challenge club anna@example.org")
    anna.reply("accept", to=anna.last)
    sent = anna.reply("$quit", to=anna.last_of(office.table(match_id).token(1)))
    assert {recipient(mail) for mail in sent} == {anna.address, dora.address}
    assert standing(office) == ["dora", "anna", "ben", "carl"]
    assert "Ladder club: Dora wins the challenge and takes place 1." in prose_of(anna.last)
    assert "Ladder club: you win the challenge and take place 1." in prose_of(dora.last)


def test_a_challenger_who_loses_changes_nothing(office, players):
    anna, ben, carl, dora = players
    match_id = challenge(office, carl, ben, "ladder challenge club 2")
    ben.reply("accept", to=ben.last)
    carl.reply("$quit", to=carl.last_of(office.table(match_id).token(0)))
    assert standing(office) == ["anna", "ben", "carl", "dora"]
    assert "you stay at place 2" in prose_of(ben.last)


def test_a_declined_challenge_is_won_by_the_challenger(office, players):
    anna, ben, carl, dora = players
    challenge(office, carl, ben, "leiter fordern club 2")
    ben.reply("decline", to=ben.last)
    assert standing(office) == ["anna", "carl", "ben", "dora"]
    assert "Ladder club: Carl wins the challenge (declined) and takes place 2." in prose_of(ben.last)


def test_a_challenge_not_accepted_in_time_is_won_by_the_challenger(office, players):
    anna, ben, carl, dora = players
    match_id = challenge(office, dora, ben, "ladder challenge club 2")
    assert expire_challenges(office.engine, office.config, utc_now() + timedelta(days=6)) == 0
    assert expire_challenges(office.engine, office.config, utc_now() + timedelta(days=7, minutes=1)) == 1
    assert expire_challenges(office.engine, office.config, utc_now() + timedelta(days=8)) == 0  # once only
    assert standing(office) == ["anna", "dora", "ben", "carl"]
    assert office.table(match_id).status is MatchStatus.DECLINED
    sent = office.run()
    office.file(sent)
    assert {recipient(mail) for mail in sent} == {ben.address, dora.address}
    assert "Dora wins the challenge (not accepted in time) and takes place 2." in prose_of(ben.last)
    ben.reply("accept", to=ben.inbox[-2])  # too late: the invitation is over
    assert office.table(match_id).status is MatchStatus.DECLINED


@pytest.mark.parametrize(("line", "reason"), [
    ("ladder challenge club 1", "you are at place 4 and may challenge only the 2 places above you (places 2 to 3)"),
    ("ladder challenge club 4", "place 4 is not one of them"),
    ("ladder challenge club 9", 'Nobody at "9" is on the ladder club'),
    ("ladder challenge club eve@example.org", 'Nobody at "eve@example.org" is on the ladder club'),
    ("ladder challenge chess 2", "There is no ladder named chess."),
])
def test_a_challenge_out_of_reach_or_of_nobody_is_refused_and_changes_nothing(config, line, reason):
    office = PostOffice(config)
    people = [Player(office, f"{name.lower()}@example.org", name) for name in ("Anna", "Ben", "Carl", "Dora")]
    people[0].write_confirmed("ladder new club reach 2")
    for person in people[1:]:
        person.write_confirmed("ladder join club")
    (answer,) = people[3].write_confirmed(line)
    assert reason in prose_of(answer), prose_of(answer)
    assert "No challenge was sent" in prose_of(answer) or "no ladder" in prose_of(answer)
    with Session(office.engine) as session:
        assert session.exec(select(MatchRecord)).all() == []


def test_one_open_challenge_at_a_time(office, players):
    anna, ben, carl, dora = players
    eve = Player(office, "eve@example.org", "Eve")
    eve.write_confirmed("ladder join club")
    challenge(office, dora, carl, "ladder challenge club 3")
    (answer,) = eve.write_confirmed("ladder challenge club 3")  # Carl is busy
    assert "That player is already in an open challenge of the ladder club" in prose_of(answer)
    (answer,) = dora.write_confirmed("ladder challenge club 1")
    assert "You are already in an open challenge" in prose_of(answer)


def test_joining_and_challenging_need_proof_the_standing_does_not(office, players):
    anna, ben, carl, dora = players
    eve = Player(office, "eve@example.org", "Eve")
    (question,) = eve.write("ladder join club")
    assert is_confirmation(question)
    assert standing(office) == ["anna", "ben", "carl", "dora"]
    (question,) = dora.write("ladder challenge club 3")
    assert is_confirmation(question)
    with Session(office.engine) as session:
        assert session.exec(select(MatchRecord)).all() == []
    (answer,) = eve.write("ladder club")
    text = prose_of(answer)
    assert "Ladder club: matches to 1 point" in text and "1. Anna 2. Ben 3. Carl 4. Dora" in text
    assert "ladder join club" in text and "@example.org" not in text
    (answer,) = eve.write("leiter club")
    assert "Leiter club: Partien auf 1 Punkt" in prose_of(answer)


def test_leave_and_the_list(office, players):
    anna, ben, carl, dora = players
    (answer,) = ben.write_confirmed("ladder leave club")
    assert "You have left the ladder club" in prose_of(answer)
    assert standing(office) == ["anna", "carl", "dora"]
    (answer,) = ben.write("ladder")
    assert "club: 3 players" in prose_of(answer)
    (answer,) = carl.write("ladder")
    assert "club: 3 players, you at place 2" in prose_of(answer)
    (answer,) = ben.write_confirmed("ladder leave club")
    assert "You are not on the ladder club" in prose_of(answer)


def test_a_ladder_is_opened_by_its_first_join_with_the_default_terms(office):
    anna = Player(office, "anna@example.org", "Anna")
    (answer,) = anna.write_confirmed("leiter beitreten sommer", yes="ja")
    assert "Sie stehen auf der Leiter sommer, auf Platz 1." in prose_of(answer)
    with Session(office.engine) as session:
        ladder = session.exec(select(Ladder)).one()
        assert (ladder.match_length, ladder.reach, ladder.answer_days) == (5, 3, 7)
    (answer,) = anna.write_confirmed("ladder new sommer match 3")
    assert "Eine Leiter sommer gibt es schon" in prose_of(answer)


LADDER_LINK = re.compile(r"http://127\.0\.0\.1:8080/l/([a-z2-7]{26})")


def test_the_ladder_page_shows_names_challenges_and_results_and_no_address_or_token(config, caplog):
    office = PostOffice(web_config(config), LoadedDice(seed=1))
    anna, ben, carl, dora = (Player(office, f"{name.lower()}@example.org", name) for name in ("Anna", "Ben", "Carl", "Dora"))
    (answer,) = anna.write_confirmed("ladder new club match 1")
    for person in (ben, carl, dora):
        person.write_confirmed("ladder join club")
    found = LADDER_LINK.search(text_of(answer))
    assert found, text_of(answer)
    code = found.group(1)
    challenge(office, carl, ben, "ladder challenge club 2")
    assert f"/l/{code}" in text_of(ben.last)  # the challenge links to the ladder
    challenge(office, dora, anna, "ladder challenge club 1")
    anna.reply("decline", to=anna.last)
    assert f"/l/{code}" in text_of(anna.last)
    client = client_of(office)
    with caplog.at_level(logging.INFO):
        page = client.get(f"/l/{code}")
    assert page.status_code == 200
    html = page.text
    assert re.findall(r"<li>(.*?)</li>", re.search(r'<ol id="standing">(.*?)</ol>', html, re.S).group(1)) == [
        "Dora", "Anna", "Ben", "Carl"]
    assert "<li>Carl challenges Ben: waiting for the answer</li>" in html
    assert "Dora beat Anna (declined)</li>" in html
    assert "@" not in html
    with Session(office.engine) as session:
        tokens = session.exec(select(Seat.token)).all()
        page_tokens = [token for token in session.exec(select(PlayerRow.page_token)).all() if token]
    assert tokens and not any(token in html for token in [*tokens, *page_tokens])
    logged = [record.getMessage() for record in caplog.records if record.name.startswith("pbem")]
    assert any("/l/…" in line for line in logged) and not any(code in line for line in logged)
    assert client.get(f"/l/{tokens[0]}").status_code == 404  # a game token opens no ladder
    assert client.get("/l/nothing").status_code == 404


@pytest.mark.postgresql_only
def test_two_daemons_ending_two_challenges_at_once_lose_neither_result(config, monkeypatch) -> None:
    """Two challenges of one ladder are declined at the same moment by two daemons on one
    PostgreSQL database: each locks its match and then the ladder's row, so the second waits for
    the first and applies its result to the standing the first left (a slow result makes both
    read the standing at once if nothing locks it)."""
    import threading
    import time

    from pbem.rules import ladder as ladder_rules

    def slow_result(*arguments, **options):
        time.sleep(0.5)
        return ladder_rules.result(*arguments, **options)

    monkeypatch.setattr("pbem.service.games.ladder_standing.ladder_rules", SimpleNamespace(
        result=slow_result, place=ladder_rules.place))

    from pbem.service.people import invitations
    from pbem.service.table.news import Answering
    from pbem.service.table.conversation import Conversation
    from pbem.service.table.dice import SEEDED_DICE
    from pbem.service.table.tables import Table, locked_match
    from pbem.store.db import make_engine, session_scope

    office = PostOffice(config)
    names = ("Anna", "Ben", "Carl", "Dora", "Emil", "Fritz")
    people = [Player(office, f"{name.lower()}@example.org", name) for name in names]
    for person in people:
        person.write_confirmed("ladder join club")
    anna, ben, carl, dora, emil, fritz = people
    first = challenge(office, dora, anna, "ladder challenge club 1")
    second = challenge(office, fritz, emil, "ladder challenge club 5")
    engines = [make_engine(config.database.url) for _ in range(2)]  # two daemons, two connection pools
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def decline(engine, match_id: int) -> None:
        try:
            with session_scope(engine) as session:
                barrier.wait(timeout=30)
                table = Table.load(session, locked_match(session, match_id))
                talk = Conversation(session, office.config, table.players[1], Answering(None), SEEDED_DICE, utc_now())
                invitations.decline(talk, table, 1)
                table.save(session)
        except BaseException as problem:  # noqa: BLE001 - reported below
            errors.append(problem)

    threads = [threading.Thread(target=decline, args=pair) for pair in zip(engines, (first, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert standing(office) == ["dora", "anna", "ben", "carl", "fritz", "emil"]
    with Session(office.engine) as session:
        assert len(session.exec(select(Ladder)).one().results) == 2


def test_nobody_escapes_challenges_by_refusing_invitations(office, players):
    anna, ben, carl, dora = players
    ben.write_confirmed("stop")
    (answer,) = dora.write_confirmed("ladder challenge club 2")
    assert ("Ben takes no invitations (they wrote stop, or mail to them comes back), so your challenge on the "
            "ladder club counts as declined and is won by you: you are now at place 2.") in prose_of(answer)
    assert "ben@example.org" not in text_of(answer)
    assert standing(office) == ["anna", "dora", "ben", "carl"]
    with Session(office.engine) as session:
        assert session.exec(select(MatchRecord)).all() == []


def test_a_challenge_without_the_ladders_name_needs_exactly_one_ladder(office, players):
    anna, ben, carl, dora = players
    challenge(office, dora, carl, "ladder challenge carl@example.org")
    ben.write_confirmed("ladder join chess")
    (answer,) = ben.write_confirmed("ladder challenge anna@example.org")
    assert "You are on several ladders (chess, club): name the one you mean" in prose_of(answer)
    eve = Player(office, "eve@example.org", "Eve")
    (answer,) = eve.write_confirmed("ladder challenge anna@example.org")
    assert "You are on no ladder yet" in prose_of(answer)


def test_the_challenge_and_its_end_in_german(office, players):
    anna, ben, carl, dora = players
    carl.write_confirmed("sprache de", yes="ja")
    ben.write_confirmed("sprache de", yes="ja")
    sent = carl.write_confirmed("leiter fordern club 2", yes="ja")
    card = ben.last
    assert card in sent
    assert ("Dies ist eine Forderung auf der Leiter club: Carl (Platz 3) fordert Sie (Platz 2). Antworten Sie annehmen "
            "zum Spielen") in prose_of(card)
    ben.reply("ablehnen", to=card)
    assert "Leiter club: Carl gewinnt die Forderung (abgelehnt) und rückt auf Platz 2." in prose_of(ben.last)
    assert "Die Rangfolge jetzt: 1. Anna 2. Carl 3. Ben 4. Dora" in prose_of(ben.last)
    assert "Leiter club: Sie gewinnen die Forderung (abgelehnt) und rücken auf Platz 2." in prose_of(carl.last)


def test_a_long_standing_is_cut_in_the_challenge_mails(office, players, monkeypatch):
    monkeypatch.setattr("pbem.service.games.ladder_standing.STANDING_SHOWN", 2)
    anna, ben, carl, dora = players
    challenge(office, dora, ben, "ladder challenge club 2")
    ben.reply("decline", to=ben.last)
    text = prose_of(ben.last)
    assert "The standing now: 1. Anna 2. Dora … and 2 more (reply ladder club for all)" in text
    (answer,) = ben.write("ladder club")
    assert "1. Anna 2. Dora 3. Ben <- you 4. Carl" in prose_of(answer)


def test_challenges_count_in_the_invitation_limits(config_file):
    config_file.write_text(config_file.read_text() + "\n[limits]\ninvitations_per_day = 1\n", encoding="utf-8")
    office = PostOffice(load_config(config_file))
    anna, ben, carl = (Player(office, f"{name.lower()}@example.org", name) for name in ("Anna", "Ben", "Carl"))
    for person in (anna, ben, carl):
        person.write_confirmed("ladder join club")
    carl.write_confirmed("invite friend@example.org")
    (answer,) = carl.write_confirmed("ladder challenge club 1")
    assert "You have sent 1 invitation in the last 24 hours, as many as this server allows, so none was sent to Anna" \
        in prose_of(answer)
    assert len(office.matches()) == 1
