"""Credits (issue 14): accounts with a starting grant, the ``credits`` answer, prize invitations
with their deposits in escrow, the payout at every ending, and the ledger staying sound."""

from __future__ import annotations

from decimal import Decimal

import pytest
from post_office import LoadedDice, Player, PostOffice, acts, invite_and_accept, office_with_credits, prose_of, text_of
from sqlmodel import Session

from pbem.service.games import credits
from pbem.store.game_records import MatchStatus, Player as PlayerRow
from pbem.store.ledger import check_ledger
from sqlmodel import select


def balance_of(office: PostOffice, address: str) -> Decimal:
    with Session(office.engine) as session:
        player = session.exec(select(PlayerRow).where(PlayerRow.address == address)).one()
        return credits.balance(session, player, office.config)


def house_of(office: PostOffice) -> Decimal:
    from pbem.rules.prizes import from_cents
    from pbem.store import ledger

    with Session(office.engine) as session:
        return from_cents(ledger.balance_cents(session, ledger.HOUSE_KEY) or 0)


def ledger_problems(office: PostOffice) -> list[str]:
    with Session(office.engine) as session:
        return check_ledger(session)


@pytest.fixture
def players(office) -> tuple[Player, Player]:
    return Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")


def test_credits_answers_with_the_balance_and_the_starting_grant(office, players) -> None:
    anna, _ = players
    (answer,) = anna.write("credits")
    text = prose_of(answer)
    assert "Your play-money account: 100.00 ℂ." in text
    assert "play money only: no purchase, no payout, no real money" in text
    assert "+100.00 ℂ starting grant" in text
    (antwort,) = anna.write("konto")
    assert "Ihr Spielgeld-Konto: 100,00 ℂ." in prose_of(antwort), "a mail in German is answered in German"
    assert "kein Kauf, keine Auszahlung, kein echtes Geld" in prose_of(antwort)
    assert text_of(antwort).count("+100,00\u00a0ℂ  Startguthaben") == 1, "the starting grant is given once"
    assert ledger_problems(office) == []


def test_a_prize_series_escrows_both_stakes_and_pays_the_winner_less_the_fee(office, players) -> None:
    anna, ben = players
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org prize games 3 stake 2.50")
    table = office.table(match_id)
    assert table.score.rules.format.value == "games" and table.score.rules.length == 3
    assert table.score.rules.cube_cap == 1, "seed 004: the series of 3 games is played without the cube"
    assert "each player stakes 2.50 ℂ; the winner gets 4.50 ℂ" in prose_of(ben.inbox[-2])
    assert "Both deposits, 2.50 ℂ each, are held in escrow until the end: 5.00 ℂ in escrow." in prose_of(ben.last)
    assert "Prize game: each player staked 2.50 ℂ; the winner gets the 5.00 ℂ in escrow" in prose_of(anna.last)
    assert balance_of(office, anna.address) == balance_of(office, ben.address) == Decimal("97.50")
    assert ledger_problems(office) == []
    (listing,) = anna.write("games")
    assert "against Ben: a series of 3 games for credits (deposit 2.50 ℂ), score 0-0" in prose_of(listing)
    from pbem.service.pages.reports import games_rows

    with Session(office.engine) as session:
        assert games_rows(session, office.config)[0][1][2] == "games 3, prize stake 2.50", "pbem games"
    acts(office, ben, "$quit")
    assert office.table(match_id).status is MatchStatus.FINISHED, "leaving the table ends the prize series"
    assert "Ben left the table, so you win" in prose_of(anna.last)
    assert "Prize: you get 4.50 ℂ; the house takes a fee of 0.50 ℂ. Your balance: 102.00 ℂ." in prose_of(anna.last)
    assert balance_of(office, anna.address) == Decimal("102.00")
    assert balance_of(office, ben.address) == Decimal("97.50")
    assert house_of(office) == Decimal("0.50")
    assert ledger_problems(office) == []


def test_a_prize_the_invitee_or_inviter_cannot_cover_is_refused(data_dir, database_table) -> None:
    _, office = office_with_credits(data_dir, database_table, 4, "poor")
    anna = Player(office, "anna@example.org", "Anna")
    (answer,) = anna.write_confirmed("invite ben@example.org prize match 5 stake 5")
    assert "your balance is 4.00 ℂ, 1.00 ℂ is missing. No invitation was sent." in prose_of(answer)
    (answer,) = anna.write_confirmed("invite ben@example.org prize games 3 stake 3")
    assert "This server does not offer a prize series of 3 games for a stake of 3.00 ℂ" in prose_of(answer)
    assert office.matches() == []
    assert ledger_problems(office) == []


def test_the_operator_grants_and_shows_credits_and_the_ledger_check_finds_any_corruption(
        office, players, config_file, capsys) -> None:
    from sqlalchemy import text

    from pbem.cli import main

    anna, ben = players
    anna.write("credits")
    assert main(["credits", "show", "anna@example.org", "--config", str(config_file)]) == 0
    assert capsys.readouterr().out == "anna@example.org 100.00\n"
    assert main(["credits", "show", "ben@example.org", "--config", str(config_file)]) == 2, "never wrote"
    assert "no player with the address ben@example.org" in capsys.readouterr().err
    assert main(["credits", "grant", "Anna@Example.org", "4", "--reason", "prize of the spring cup",
                 "--config", str(config_file)]) == 0
    assert capsys.readouterr().out == "anna@example.org 104.00\n"
    for wrong in (["-1"], ["2.555"], ["ten"], ["0"]):
        assert main(["credits", "grant", "anna@example.org", *wrong, "--reason", "x", "--config", str(config_file)]) == 2
    assert main(["credits", "show", "anna@example.org", "--config", str(config_file)]) == 0
    assert capsys.readouterr().out == "anna@example.org 104.00\n"
    (answer,) = anna.write("credits")
    assert "+4.00\u00a0ℂ  grant: prize of the spring cup" in text_of(answer)
    assert main(["ledger", "check", "--config", str(config_file)]) == 0
    assert "ledger sound: 2 movements" in capsys.readouterr().out

    with office.engine.begin() as connection:  # a balance changed behind the ledger's back
        connection.execute(text("UPDATE accounts SET balance_cents = balance_cents + 1 WHERE key LIKE 'player:%'"))
    assert main(["ledger", "check", "--config", str(config_file)]) == 1
    assert "balance 10401 cents, but its entries sum to 10400" in capsys.readouterr().err
    with office.engine.begin() as connection:  # put right, then an entry that makes a movement unbalanced
        connection.execute(text("UPDATE accounts SET balance_cents = balance_cents - 1 WHERE key LIKE 'player:%'"))
        connection.execute(text("UPDATE ledger_entries SET amount_cents = amount_cents + 5 WHERE id = "
                                "(SELECT max(id) FROM ledger_entries)"))
    assert main(["ledger", "check", "--config", str(config_file)]) == 1
    err = capsys.readouterr().err
    assert "its 2 entries sum to 5 cents, not 0" in err and "the balances of all accounts" not in err


def test_an_invitation_accepted_when_a_stake_is_no_longer_covered_stays_open_and_moves_nothing(
        data_dir, database_table) -> None:
    _, office = office_with_credits(data_dir, database_table, 5, "five")
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    anna.write_confirmed("invite ben@example.org prize match 5 stake 5")
    first = ben.last
    anna.write_confirmed("invite ben@example.org prize match 5 stake 5")  # both still covered: 5 each
    second = ben.last
    ben.reply("accept", to=first)
    assert balance_of(office, anna.address) == balance_of(office, ben.address) == Decimal(0)
    before = office.snapshot()
    ben.reply("accept", to=second)
    assert office.snapshot() == before, "refused: nothing changed"
    assert office.matches()[1].status == MatchStatus.INVITED
    said = prose_of(ben.last)
    assert "Your credits do not cover the deposit of 5.00 ℂ: your balance is 0.00 ℂ, 5.00 ℂ is missing." in said
    assert "Anna" not in said and "5.00 ℂ is missing" in said, "only one's own balance, never the other's"
    assert "it starts only when both deposits of 5.00 ℂ are covered" in said
    assert "The invitation stays open" in said
    told = prose_of(anna.last)
    assert "it starts only when both deposits of 5.00 ℂ are covered" in told
    assert "your balance is 0.00 ℂ, 5.00 ℂ is missing" in told and "Ben's" not in told, "her own, never Ben's"
    assert ledger_problems(office) == []


def test_a_declined_prize_invitation_moves_no_credit(office, players) -> None:
    anna, ben = players
    anna.write_confirmed("einladen ben@example.org preis einzel satz 2 limit 20", "ja")
    assert "Ein Preis-Einzelspiel um Credits (Spielgeld): 2,00 ℂ pro Punkt, höchstens 20,00 ℂ" in prose_of(ben.last)
    ben.reply("ablehnen")
    assert balance_of(office, anna.address) == balance_of(office, ben.address) == Decimal(100)
    assert ledger_problems(office) == []


def test_an_accepted_resignation_in_a_single_prize_game_pays_per_point(office, players) -> None:
    anna, ben = players
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org prize single rate 2 limit 20")
    assert "Prize game: 2.00 ℂ a point, limit 20.00 ℂ; a single win at this cube pays 2.00 ℂ" in prose_of(anna.last)
    acts(office, anna, "resign gammon")
    acts(office, ben, "accept")
    assert office.table(match_id).status is MatchStatus.FINISHED
    # Ben wins 2 points x 2 = 4.00, less 0.40: his deposit of 20 and 3.60; Anna gets 16.00 of her 20 back.
    assert balance_of(office, ben.address) == Decimal("103.60")
    assert balance_of(office, anna.address) == Decimal("96.00")
    assert house_of(office) == Decimal("0.40")
    assert ("Prize: you get 23.60 ℂ (4.00 ℂ won, less the fee, and the deposit), Anna gets 16.00 ℂ back; "
            "the house takes a fee of 0.40 ℂ. Your balance: 103.60 ℂ.") in prose_of(ben.last)
    assert ledger_problems(office) == []


def test_a_timeout_loses_a_single_prize_game_at_the_highest_result_possible(config) -> None:
    from datetime import UTC, datetime, timedelta

    from pbem.service import handle_mail
    from pbem.service.jobs.clock_job import check_clocks

    start = datetime(2030, 3, 1, 12, tzinfo=UTC)
    office = PostOffice(config, LoadedDice(seed=1))
    office.pipeline.handler = lambda session, raw, inbound: handle_mail(session, raw, inbound, config, office.dice,
                                                                        now=start)
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org prize single rate 1 limit 10 clock 1d/0d")
    acts(office, anna, "8/5 6/5")
    check_clocks(office.engine, office.config, start + timedelta(days=1), office.dice)
    office.file(office.run())
    table = office.table(match_id)
    assert table.status is MatchStatus.FINISHED and table.game.result.ending.value == "timeout"
    points = table.game.result.points
    won = min(Decimal(points), Decimal(10))
    assert balance_of(office, anna.address) == Decimal(100) + won - won / 10
    assert balance_of(office, ben.address) == Decimal(100) - won
    assert "Prize: you get" in prose_of(anna.last)
    assert ledger_problems(office) == []


def test_prize_games_have_a_rating_list_of_their_own(office, players) -> None:
    anna, ben = players
    office.dice.load((3, 1))
    invite_and_accept(office, anna, ben, "invite ben@example.org prize match 5 stake 5")
    acts(office, anna, "$quit")
    assert "New prize ratings: you 1500.0 → 1522.4" in prose_of(ben.last), "n = 5: 4 x K=5 x sqrt 5 x 0.5"
    with Session(office.engine) as session:
        rows = {row.address: row for row in session.exec(select(PlayerRow)).all()}
    assert (rows[ben.address].experience_prize, rows[ben.address].experience_match) == (5, 0)
    assert rows[anna.address].rating_casual == rows[anna.address].rating_match == 1500
    (answer,) = ben.write("ratings")
    text = prose_of(answer)
    assert "Prize ratings (prize games for credits): 1. Ben 1522.4 (experience 5) 2. Anna 1477.6" in text
    assert "Match ratings: nobody has played a rated match yet" in text


@pytest.mark.postgresql_only
def test_two_daemons_accepting_at_once_never_spend_the_same_credits_twice(data_dir, database_table) -> None:
    """Ben can cover one stake of 5; two daemons apply his two acceptances at the same moment on
    one PostgreSQL database: his account row is locked before its balance is read, so one
    escrows and the other finds 0.00 and moves nothing."""
    import threading

    from pbem.service.people import invitations
    from pbem.service.table.news import Answering
    from pbem.service.table.conversation import Conversation
    from pbem.service.table.dice import SEEDED_DICE
    from pbem.service.table.tables import Table, locked_match
    from pbem.store.db import session_scope, utc_now

    _, office = office_with_credits(data_dir, database_table, 5, "five")
    config = office.config
    anna, ben, cleo = (Player(office, f"{name.lower()}@example.org", name) for name in ("Anna", "Ben", "Cleo"))
    anna.write_confirmed("invite ben@example.org prize match 5 stake 5")
    cleo.write_confirmed("invite ben@example.org prize match 5 stake 5")
    ben.write("credits")  # his account is open: 5.00
    match_ids = [record.id for record in office.matches()]
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def accept(match_id: int) -> None:
        try:
            barrier.wait(timeout=30)
            with session_scope(office.engine) as session:
                table = Table.load(session, locked_match(session, match_id))
                talk = Conversation(session, config, table.players[1], Answering(None), SEEDED_DICE, utc_now())
                invitations.accept(talk, table, 1)
                table.save(session)
        except BaseException as problem:  # noqa: BLE001 - reported below
            errors.append(problem)

    threads = [threading.Thread(target=accept, args=(match_id,)) for match_id in match_ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    statuses = sorted(record.status for record in office.matches())
    assert statuses == [MatchStatus.INVITED, MatchStatus.RUNNING]
    assert balance_of(office, ben.address) == Decimal(0)
    assert ledger_problems(office) == []


def test_a_tied_prize_series_gives_both_stakes_back_less_the_fee(office, players) -> None:
    anna, ben = players
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org prize games 3 stake 2.50")
    acts(office, anna, "resign single")
    acts(office, ben, "accept")   # game 1: Ben 1
    acts(office, ben, "resign single")
    acts(office, anna, "accept")  # game 2: Anna 1
    acts(office, anna, "$remis")
    acts(office, ben, "$remis")   # game 3 drawn: 1 to 1
    table = office.table(match_id)
    assert table.status is MatchStatus.FINISHED and table.score.points == (1, 1)
    assert "Prize: a tie, so each player gets 2.25 ℂ back; the house takes a fee of 0.50 ℂ." in prose_of(anna.last)
    assert balance_of(office, anna.address) == balance_of(office, ben.address) == Decimal("99.75")
    assert house_of(office) == Decimal("0.50")
    assert ledger_problems(office) == []


def test_a_rematch_plays_for_the_same_prize_and_the_assistant_plays_for_none(office, players) -> None:
    anna, ben = players
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org prize match 5 stake 2.50")
    acts(office, anna, "$quit")
    ben.reply("rematch")
    rematch = office.table()
    assert rematch.id != match_id and rematch.prize == office.table(match_id).prize
    assert "each player stakes 2.50 ℂ; the winner gets 4.50 ℂ" in prose_of(anna.last)
    (answer,) = anna.write_confirmed("play assistant prize match 5 stake 5")
    assert "the Assistant has no account" in prose_of(answer)
    assert ledger_problems(office) == []


def test_the_ledger_refuses_an_overdraft_an_unbalanced_movement_and_a_negative_balance(engine) -> None:
    from sqlalchemy import text
    from sqlalchemy.exc import IntegrityError

    from pbem.store import ledger
    from pbem.store.db import session_scope
    from pbem.store.ledger import AccountKind, MovementKind, Overdrawn

    with session_scope(engine) as session:
        issuer = ledger.ensure_account(session, ledger.ISSUER_KEY, AccountKind.ISSUER)[0]
        house, created = ledger.ensure_account(session, ledger.HOUSE_KEY, AccountKind.HOUSE)
        assert created and ledger.ensure_account(session, ledger.HOUSE_KEY, AccountKind.HOUSE) == (house, False)
        ledger.post(session, MovementKind.GRANT, [(issuer, -500), (house, 500)], reason="test")
    with session_scope(engine) as session:
        with pytest.raises(Overdrawn):
            ledger.post(session, MovementKind.FEE, [(house, -501), (issuer, 501)])
        with pytest.raises(ValueError):
            ledger.post(session, MovementKind.FEE, [(house, -5), (issuer, 4)])
        with pytest.raises(ValueError):
            ledger.post(session, MovementKind.FEE, [(house, 0)])
    with pytest.raises(IntegrityError):  # the database itself holds every balance but the issuer's at zero or more
        with engine.begin() as connection:
            connection.execute(text("UPDATE accounts SET balance_cents = -1 WHERE key = 'house'"))
    with session_scope(engine) as session:
        assert ledger.balance_cents(session, ledger.HOUSE_KEY) == 500
        assert ledger.balance_cents(session, ledger.ISSUER_KEY) == -500
        assert ledger.check_ledger(session) == []
