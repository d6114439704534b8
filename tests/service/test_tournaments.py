"""Knockout tournaments by mail (issue 22): opening, joining, seeding, byes, pairings that start
as soon as both players are known, withdrawals, the round mails and the bracket as text."""

from __future__ import annotations

import re
from email.message import EmailMessage

import pytest
from post_office import LoadedDice, Player, PostOffice, check_answers, prose_of, recipient, text_of, token_of
from sqlmodel import Session, select

from pbem.store.game_records import MatchRecord, MatchStatus, Player as PlayerRow, TournamentRecord


@pytest.fixture
def office(config) -> PostOffice:
    return PostOffice(config, LoadedDice(seed=7))


def people(office: PostOffice, count: int) -> list[Player]:
    names = ["Anna", "Ben", "Carla", "Dora", "Erik", "Fritz", "Gina", "Hugo"]
    return [Player(office, f"{name.lower()}@example.org", name) for name in names[:count]]


def code_in(mail: EmailMessage) -> str:
    found = re.search(r"tournament join ([a-z2-7]{6})", text_of(mail))
    assert found, text_of(mail)
    return found.group(1)


def tournament(office: PostOffice) -> TournamentRecord:
    with Session(office.engine) as session:
        return session.exec(select(TournamentRecord)).one()


def matches(office: PostOffice) -> list[MatchRecord]:
    with Session(office.engine) as session:
        return list(session.exec(select(MatchRecord).where(MatchRecord.tournament_id.is_not(None))
                                 .order_by(MatchRecord.id)).all())


def set_ratings(office: PostOffice, ratings: dict[str, float]) -> None:
    with Session(office.engine) as session:
        for address, rating in ratings.items():
            row = session.exec(select(PlayerRow).where(PlayerRow.address == address)).one()
            row.rating_match = rating
            session.add(row)
        session.commit()


def finish(office: PostOffice, by_address: dict[str, Player], match: MatchRecord, winner_address: str) -> list:
    """The loser of ``match`` resigns it ($quit: a match is lost whole) by a reply to their game mail."""
    table = office.table(match.id)
    loser_seat = 1 if table.players[0].address == winner_address else 0
    loser = by_address[table.players[loser_seat].address]
    mail = loser.last_of(table.token(loser_seat))
    assert mail is not None, f"{loser.name} got no mail of match {match.id}"
    return loser.reply("$quit", to=mail)


def test_a_knockout_of_five_is_opened_joined_seeded_and_played_to_its_champion(office):
    anna, ben, carla, dora, erik = players = people(office, 5)
    by_address = {player.address: player for player in players}
    (answer,) = anna.write_confirmed("tournament new Autumn knockout 8 match 1")
    code = code_in(answer)
    assert f"Your knockout tournament Autumn is open: 8 players, matches to 1 point. Its code is {code}." \
        in prose_of(answer)
    assert f"or when you write tournament start {code} with at least 4 players: byes fill the rest." in prose_of(answer)
    for player in (ben, carla, dora, erik):
        (joined,) = player.write_confirmed(f"tournament join {code}")
        assert "You joined the tournament Autumn" in prose_of(joined)
    assert tournament(office).status == "open" and matches(office) == []
    set_ratings(office, {"erik@example.org": 1600, "dora@example.org": 1550, "carla@example.org": 1500,
                         "ben@example.org": 1500, "anna@example.org": 1400})
    (refused,) = ben.write_confirmed(f"tournament start {code}")
    assert "Only the organiser of Autumn" in prose_of(refused)
    sent = anna.write_confirmed(f"tournament start {code}")
    # Seeds: Erik 1600, Dora 1550, Ben and Carla 1500 (Ben joined first), Anna 1400. Eight lines:
    # byes for Erik, Dora and Ben; Carla meets Anna; Dora and Ben (byes both) meet at once.
    started = matches(office)
    assert [(m.tournament_round, m.tournament_index) for m in started] == [(0, 1), (1, 1)]
    pairs = [{p.address for p in office.table(m.id).players} for m in started]
    assert pairs == [{"carla@example.org", "anna@example.org"}, {"dora@example.org", "ben@example.org"}]
    told = {recipient(mail) for mail in sent}
    assert {"carla@example.org", "dora@example.org", "ben@example.org", "erik@example.org"} <= told
    erik_mail = erik.last
    assert "You have a bye in the first round" in prose_of(erik_mail)
    first = next(mail for mail in carla.inbox if "Tournament Autumn" in prose_of(mail))
    assert "Tournament Autumn (" in prose_of(first) and "round 1 of 3: Anna is your opponent, a match to 1 point" \
        in prose_of(first)
    finish(office, by_address, started[0], "anna@example.org")  # round 1 over: Anna meets Erik
    assert "round 1 is over" in prose_of(dora.last) and "Carla – Anna: Anna" in text_of(dora.last)
    semi = matches(office)[-1]
    assert {p.address for p in office.table(semi.id).players} == {"erik@example.org", "anna@example.org"}
    finish(office, by_address, semi, "erik@example.org")
    finish(office, by_address, started[1], "ben@example.org")  # the semi-finals are over: the final
    final = matches(office)[-1]
    assert (final.tournament_round, final.status) == (2, "running")
    assert "the semi-finals are over" in prose_of(anna.last) and "Final: Erik – Ben" in prose_of(anna.last)
    sent = finish(office, by_address, final, "ben@example.org")
    assert tournament(office).status == "finished"
    finalists = [mail for mail in sent if token_of(mail) in (office.table(final.id).token(0), office.table(final.id).token(1))]
    assert finalists and all("rematch" not in text_of(mail) for mail in finalists), "a rematch is no step of a knockout"
    for player in players:
        mail = player.answers(sent)[-1] if player.answers(sent) else player.last
        champion = "you are the champion" if player is ben else "Ben is the champion"
        assert "Tournament Autumn (" in prose_of(mail) and f"{champion}." in prose_of(mail), prose_of(mail)
        assert text_of(mail).count("Erik – Ben: Ben") == 1, "the final's result once, in the bracket"
    (bracket,) = carla.write(f"tournament {code}")
    assert "Final:\n  Erik – Ben: Ben" in text_of(bracket)


def test_a_knockout_of_four_is_not_said_to_start_early_with_byes(office):
    """Four players are the fewest a knockout starts with: one of four starts only when full."""
    anna, ben = people(office, 2)
    (answer,) = anna.write_confirmed("tournament new Autumn Cup knockout 4 match 1")
    assert "It starts when it is full. Each match" in prose_of(answer) and "byes" not in prose_of(answer)
    ben.write_confirmed("sprache de", yes="ja")
    (answer,) = ben.write_confirmed("turnier neu Herbst Pokal ko 4 partie 1", yes="ja")
    assert "Es beginnt, wenn es voll ist. Jede Partie" in prose_of(answer) and "Freilose" not in prose_of(answer)


def test_withdrawing_loses_the_match_being_played_and_the_rest(office):
    players = people(office, 4)
    anna, ben, carla, dora = players
    (answer,) = anna.write_confirmed("tournament new Spring knockout 4 match 3")
    code = code_in(answer)
    for player in (ben, carla, dora):
        player.write_confirmed(f"tournament join {code}")
    assert len(matches(office)) == 2  # full: it started by itself
    match = next(m for m in matches(office) if "ben@example.org" in {p.address for p in office.table(m.id).players})
    sent = ben.write_confirmed(f"tournament withdraw {code}")
    assert any("You withdrew from the tournament Spring" in prose_of(mail) for mail in ben.answers(sent))
    table = office.table(match.id)
    assert table.status is MatchStatus.FINISHED
    assert tournament(office).bracket["winners"][0].count(None) == 1


def test_joining_twice_an_unknown_code_and_a_started_tournament_are_explained(office):
    anna, ben, carla, dora, erik = people(office, 5)
    (answer,) = anna.write_confirmed("turnier neu Herbst ko 4 partie 1", yes="ja")
    code = code_in(answer)
    assert "Ihr K.-o.-Turnier Herbst ist eröffnet" in prose_of(answer)
    (again,) = anna.write_confirmed(f"tournament join {code}")
    assert "Sie sind schon im Turnier Herbst" in prose_of(again)  # her language is saved: German
    (unknown,) = ben.write_confirmed("tournament join zzzzzz")
    assert "There is no tournament zzzzzz" in prose_of(unknown)
    for player in (ben, carla, dora):
        player.write_confirmed(f"tournament join {code}")
    (late,) = erik.write_confirmed(f"tournament join {code}")
    assert "has begun: joining or leaving is no longer possible" in prose_of(late)


def test_the_organiser_invites_by_mail_and_a_yes_joins(office):
    anna, ben = people(office, 2)
    (answer,) = anna.write_confirmed("tournament new Winter knockout 4 match 1")
    code = code_in(answer)
    sent = anna.write_confirmed(f"tournament invite {code} ben@example.org")
    invitation = next(mail for mail in sent if recipient(mail) == "ben@example.org")
    assert "Anna <anna@example.org> invites you to the knockout tournament Winter" in prose_of(invitation)
    assert "List-Unsubscribe" in invitation  # Ben has not played here
    (joined,) = ben.reply("yes", to=invitation)
    assert "You joined the tournament Winter" in prose_of(joined)
    assert any("Invited to Winter" in prose_of(mail) for mail in anna.answers(sent))


def test_the_operator_sees_the_tournaments_and_a_stuck_pairing(office):
    import io

    from pbem.rules.brackets import Bracket, record_result
    from pbem.service.pages.reports import status_report, tournament_rows

    anna, ben, carla, dora = people(office, 4)
    (answer,) = anna.write_confirmed("tournament new Spring knockout 4 match 3")
    code = code_in(answer)
    for player in (ben, carla, dora):
        player.write_confirmed(f"tournament join {code}")
    with Session(office.engine) as session:
        rows = tournament_rows(session)
        out = io.StringIO()
        assert status_report(session, out, office.config) == 0
    assert rows[1][:6] == [code, "Spring", "anna@example.org", "running", "4/4", "1 of 2"] and rows[1][6] == "2"
    assert f"tournament {code} (Spring): round 1 of 2, 2 match(es) running, the oldest unchanged since" \
        in out.getvalue()
    with Session(office.engine) as session:  # as if a result had been recorded and its next match never started
        record = session.exec(select(TournamentRecord)).one()
        bracket = Bracket.from_dict(record.bracket)
        for index in (0, 1):
            bracket = record_result(bracket, 0, index, bracket.players(0, index)[0])
        record.bracket = bracket.to_dict()
        session.add(record)
        session.commit()
        out = io.StringIO()
        assert status_report(session, out, office.config) == 1
    assert "1 pairing(s) stuck" in out.getvalue() and "STUCK: round 2, match 1" in out.getvalue()


@pytest.mark.postgresql_only
def test_two_daemons_finishing_both_semi_finals_at_once_start_the_final_once(office, monkeypatch, tmp_path):
    """Two daemons on one PostgreSQL database, each with a mailbox of its own, apply the two
    semi-finals' last mails at the same moment: the tournament's row lock makes the second wait
    for the first, so the final starts exactly once, with both winners."""
    import asyncio
    import threading
    from functools import partial

    from pbem.daemon.pipeline import MailPipeline
    from pbem.mail.local_client import compose_reply, deliver_to_maildir
    from pbem.mail.sinks import MaildirSink
    from pbem.mail.sources import MaildirSource
    from pbem.service import handle_mail
    from pbem.service.competitions import tournaments
    from pbem.store.db import make_engine

    players = people(office, 4)
    by_address = {player.address: player for player in players}
    (answer,) = players[0].write_confirmed("tournament new Race knockout 4 match 3")
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code_in(answer)}")
    semis = matches(office)
    assert len(semis) == 2
    both_there = threading.Barrier(2, timeout=10)
    original = tournaments.match_finished

    def at_the_same_moment(talk, table):
        both_there.wait()  # both transactions hold their match; now both reach for the tournament
        original(talk, table)

    monkeypatch.setattr(tournaments, "match_finished", at_the_same_moment)
    pipelines = []
    for number, match in enumerate(semis):
        table = office.table(match.id)
        loser = by_address[table.players[1].address]
        inbox = tmp_path / f"inbox-{number}"
        deliver_to_maildir(inbox, compose_reply(loser.sender, loser.last_of(table.token(1)), "$quit"))
        pipelines.append(MailPipeline(make_engine(office.config.database.url), MaildirSource(inbox),
                                      MaildirSink(office.config.outbox_dir), partial(handle_mail, config=office.config)))
    results = []
    daemons = [threading.Thread(target=lambda p=pipeline: results.extend(asyncio.run(p.read_inbox())))
               for pipeline in pipelines]
    for daemon in daemons:
        daemon.start()
    for daemon in daemons:
        daemon.join(30)
    assert sorted(result.outcome.value for result in results) == ["applied", "applied"]
    finals = [match for match in matches(office) if match.tournament_round == 1]
    assert len(finals) == 1
    assert {p.address for p in office.table(finals[0].id).players} == {
        office.table(semi.id).players[0].address for semi in semis}
    assert tournament(office).bracket["winners"][0] == [office.table(semi.id).players[0].id for semi in semis]


def test_the_tournament_page_shows_the_bracket_and_links_only_the_viewers_own_matches(config, caplog):
    import logging

    from starlette.testclient import TestClient

    from pbem.config import WebConfig
    from pbem.service.pages.web_board import WebBoard
    from pbem.web.app import board_app

    base = "http://127.0.0.1:8080"
    office = PostOffice(config.model_copy(update={"web": WebConfig()}), LoadedDice(seed=7))
    players = people(office, 4)
    anna = players[0]
    (answer,) = anna.write_confirmed("tournament new Summer knockout 4 match 1")
    code = code_in(answer)
    own_link = re.search(rf"{base}/t/{code}/[a-z2-7]{{26}}", text_of(answer)).group(0)
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code}")
    client = TestClient(board_app(office.config.web, WebBoard(office.config, office.engine)), base_url=base,
                        client=("127.0.0.1", 50000))
    caplog.set_level(logging.INFO, logger="pbem.web.app")
    public = client.get(f"/t/{code}")
    assert public.status_code == 200 and "<svg" in public.text and "Semi-finals" in public.text
    assert "/g/" not in public.text and "@" not in public.text  # no game links, no addresses
    own = client.get(own_link.removeprefix(base))
    anna_match = next(m for m in matches(office) if "anna@example.org" in
                      {p.address for p in office.table(m.id).players})
    table = office.table(anna_match.id)
    anna_seat = 0 if table.players[0].address == "anna@example.org" else 1
    assert own.text.count("/g/") == 1 and f"/g/{table.token(anna_seat)}" in own.text
    assert table.token(1 - anna_seat) not in own.text
    assert client.get(f"/t/{code}/{'a' * 26}").status_code == 404
    assert client.get("/t/zzzzzz").status_code == 404
    assert own_link.rsplit("/", 1)[1] not in caplog.text and f"/t/{code}/…" in caplog.text


@pytest.mark.parametrize("unrated", [False, True])
def test_tournament_matches_count_in_the_match_ratings_unless_unrated(office, unrated):
    players = people(office, 4)
    by_address = {player.address: player for player in players}
    (answer,) = players[0].write_confirmed("tournament new Rated knockout 4 match 3" + (" unrated" if unrated else ""))
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code_in(answer)}")
    match = matches(office)[0]
    table = office.table(match.id)
    finish(office, by_address, match, table.players[0].address)
    with Session(office.engine) as session:
        experience = {row.address: (row.experience_match, row.rating_match)
                      for row in session.exec(select(PlayerRow)).all()}
    for player in table.players:
        changed = experience[player.address] != (0, 1500.0)
        assert changed is not unrated, (player.address, experience[player.address])


def test_tournament_invitations_keep_the_limits_of_game_invitations(office):
    anna, ben = people(office, 2)
    (answer,) = anna.write_confirmed("tournament new Crowd knockout 16 match 1")
    code = code_in(answer)
    ten = " ".join(f"friend{number}@example.org" for number in range(10))
    sent = anna.write_confirmed(f"tournament invite {code} {ten}\ntournament invite {code} friend10@example.org")
    assert sum(recipient(mail).startswith("friend") for mail in sent) == 10
    told = prose_of(next(mail for mail in sent if recipient(mail) == anna.address))
    assert "You have sent 10 invitations in the last 24 hours" in told and "friend10@example.org" in told
    ben.write_confirmed("stop")
    (refused,) = [mail for mail in anna.write_confirmed(f"tournament invite {code} ben@example.org")
                  if recipient(mail) == anna.address]
    assert "You have sent 10 invitations" in prose_of(refused)  # still the limit: the day is not over


def test_no_tournament_invitation_goes_to_whoever_wrote_stop(office):
    anna, ben = people(office, 2)
    ben.write_confirmed("stop")
    (answer,) = anna.write_confirmed("tournament new Quiet knockout 4 match 1")
    sent = anna.write_confirmed(f"tournament invite {code_in(answer)} ben@example.org")
    assert [recipient(mail) for mail in sent] == [anna.address]
    assert "ben@example.org does not wish to receive invitations" in prose_of(sent[0])


def test_a_tournament_match_lost_on_time_sends_the_winner_on(office):
    from datetime import timedelta

    from pbem.service.jobs.clock_job import check_clocks
    from pbem.store.db import utc_now

    players = people(office, 4)
    (answer,) = players[0].write_confirmed("tournament new Clocked knockout 4 match 3 clock 1d/1d")
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code_in(answer)}")
    first, second = matches(office)
    later = utc_now() + timedelta(days=30)
    for step in range(10):  # reminders first, then the loss on time, in both matches
        check_clocks(office.engine, office.config, later + timedelta(minutes=step), office.dice)
    sent = office.run()
    office.file(sent)
    assert office.table(first.id).status is MatchStatus.FINISHED and office.table(second.id).status is MatchStatus.FINISHED
    final = matches(office)[-1]
    assert final.tournament_round == 1 and final.status == "running"
    assert "the semi-finals are over" in prose_of(players[0].last)


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_join_that_fills_a_knockout_is_told_in_the_first_game_mail(office, language):
    """Issue 33: the last joiner got "4 of 4 players so far; it begins when it is full" after
    their first game mail.  Now their answer is that game mail, and it says the field is full."""
    anna, ben, carla, dora = people(office, 4)
    (answer,) = anna.write_confirmed("tournament new Spring knockout 4 match 1")
    code = code_in(answer)
    for player in (ben, carla):
        (joined,) = player.write_confirmed(f"tournament join {code}")
        assert "players so far" in prose_of(joined)
    join = f"tournament join {code}" if language == "en" else f"turnier teilnehmen {code}"
    sent = dora.write_confirmed(join, yes="yes" if language == "en" else "ja")
    check_answers(office, dora.outbox[-1], sent)
    (first,) = dora.answers(sent)  # one mail: the first game mail of her match, with the join in it
    (match,) = [m for m in matches(office) if "dora@example.org" in {p.address for p in office.table(m.id).players}]
    table = office.table(match.id)
    seat = next(seat for seat, seated in enumerate(table.players) if seated.address == dora.address)
    assert token_of(first) == table.token(seat)
    filled = {"en": f"You joined the tournament Spring ({code}) and filled it: it is full and has begun, 4 players, "
                    "2 rounds. This mail starts your first match.",
              "de": f"Sie sind dem Turnier Spring ({code}) beigetreten und haben es damit gefüllt: es hat begonnen, "
                    "4 Spieler, 2 Runden. Mit dieser Mail beginnt Ihre erste Partie."}
    assert filled[language] in prose_of(first)
    assert "so far" not in prose_of(first) and "bisher" not in prose_of(first)
    assert ("a semi-final" if language == "en" else "ein Halbfinale") in prose_of(first)


def test_a_round_mail_says_what_each_plays_next_before_the_mail_of_that_match(office):
    """Issue 33: a finalist got "the semi-finals are over" after the first mail of her final,
    which it did not mention, with the round's results twice.  Now every round mail says what
    its reader plays next and whether it has begun, comes before the first mail of that match,
    and lists each result once; here the winner of the last semi-final ends it herself."""
    players = people(office, 4)
    by_address = {player.address: player for player in players}
    (answer,) = players[0].write_confirmed("tournament new Spring knockout 4 match 1")
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code_in(answer)}")
    semi_a, semi_b = matches(office)
    sent = finish(office, by_address, semi_a, _first_of(office, semi_a))
    assert not any("are over" in prose_of(mail) for mail in sent)  # the other semi-final still runs
    table = office.table(semi_b.id)
    winner, loser = (by_address[p.address] for p in table.players)
    loser.reply("resign single", to=loser.last_of(table.token(1)))  # the winner's accept ends the semi-final
    sent = winner.reply("accept", to=winner.last_of(table.token(0)))
    final = matches(office)[-1]
    finalists = [by_address[p.address] for p in office.table(final.id).players]
    assert winner in finalists
    final_table = office.table(final.id)
    for seat, finalist in enumerate(finalists):
        mails = finalist.answers(sent)
        round_mail = next(i for i, mail in enumerate(mails) if "the semi-finals are over" in prose_of(mail))
        game_mail = next(i for i, mail in enumerate(mails) if token_of(mail) == final_table.token(seat))
        assert round_mail < game_mail, [str(mail["Subject"]) for mail in mails]
        opponent = finalists[1 - seat].name
        text = prose_of(mails[round_mail])
        assert f"Your next match has begun: the final against {opponent}. Play it in its own game mails." in text
        for line in _result_lines(office, semi_a, semi_b):
            assert text.count(line) == 1, (line, text)
    for player in players:
        if player not in finalists:
            (told,) = [mail for mail in player.inbox if "the semi-finals are over" in prose_of(mail)]
            assert "You are out of the tournament; the result of each round still comes by mail." in prose_of(told)


def test_a_round_mail_to_a_player_whose_next_opponent_is_not_known_says_so(office):
    """Eight players: the first semi-final is played before the last quarter-final ends, so its
    winner is told, when round 1 ends, that the final begins once the opponent is known."""
    players = people(office, 8)
    by_address = {player.address: player for player in players}
    (answer,) = players[0].write_confirmed("tournament new Summer knockout 8 match 1")
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code_in(answer)}")
    quarters = matches(office)
    assert len(quarters) == 4
    bracket = tournament(office).bracket
    feeding_first_semi = [m for m in quarters if m.tournament_index in (0, 1)]
    for match in feeding_first_semi:
        finish(office, by_address, match, _first_of(office, match))
    semi = matches(office)[-1]
    assert semi.tournament_round == 1 and bracket["winners"][0] == [None] * 4
    semi_winner = _first_of(office, semi)
    finish(office, by_address, semi, semi_winner)
    for match in quarters:
        if match not in feeding_first_semi:
            finish(office, by_address, match, _first_of(office, match))
    told = next(mail for mail in reversed(by_address[semi_winner].inbox) if "round 1 is over" in prose_of(mail))
    assert "Your next match is the final; it begins with a game mail of its own as soon as your opponent is known." \
        in prose_of(told)
    second_semi = matches(office)[-1]
    for player in office.table(second_semi.id).players:
        told = next(mail for mail in reversed(by_address[player.address].inbox) if "round 1 is over" in prose_of(mail))
        assert "Your next match has begun: a semi-final against" in prose_of(told)


def _first_of(office: PostOffice, match: MatchRecord) -> str:
    """The address of the match's first player (the test's chosen winner)."""
    return office.table(match.id).players[0].address


def _result_lines(office: PostOffice, *decided: MatchRecord) -> list[str]:
    """Each decided match as the bracket writes it: ``Anna – Ben: Anna``."""
    lines = []
    for match in decided:
        table = office.table(match.id)
        with Session(office.engine) as session:
            names = [session.get(PlayerRow, player.id).display_name for player in table.players]
        winner = names[0] if table.score.points[0] > table.score.points[1] else names[1]
        lines.append(f"{names[0]} – {names[1]}: {winner}")
    return lines
