"""Hostile amounts and prize invitations (issue 14's review): no number in any mail makes the
service fail to read it, every refusal says what is accepted, and nothing changes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from post_office import Player, invite_and_accept, prose_of, recipient, text_of

from pbem.commands import CommandError, Invite, is_command_line, parse_commands
from pbem.rules.prizes import MAX_AMOUNT, PrizeKind, amount

HOSTILE_AMOUNTS = ("1e99", "1e30", "1" + "0" * 31, "٢.٥٠", "２.５０", "25e-1", "1e2", "2_5", "1_000", "1,000",
                   "2.555", "-1", "+1", "NaN", "Infinity", "0x10", "1.", ".5", "1000000.01", "")


@pytest.mark.parametrize("text", HOSTILE_AMOUNTS)
def test_only_plain_amounts_up_to_the_maximum_are_amounts(text: str) -> None:
    with pytest.raises(ValueError):
        amount(text)


def test_plain_amounts_read_exactly() -> None:
    assert [amount(text) for text in ("2.50", "2,5", "0", "10", "1000000")] == [
        amount("2.5"), amount("2.50"), amount("0.00"), amount("10.00"), MAX_AMOUNT]


@pytest.mark.parametrize("text", [text for text in HOSTILE_AMOUNTS if text != "1."])  # a line's full stop ends it
@pytest.mark.parametrize("option", ["stake", "limit"])
def test_a_hostile_amount_in_an_invitation_is_a_clear_error(text: str, option: str) -> None:
    format_words = "games 3 stake 5" if option == "stake" else "single rate 1 limit 10"
    line = f"invite x@example.org prize {format_words} {option} {text}".replace(f"{option} 5 ", "").replace(
        f"{option} 10 ", "")
    assert is_command_line(line)
    (command,) = parse_commands(line)
    assert isinstance(command, CommandError) and command.code.startswith("prize"), command


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.sampled_from(["", "invite x@example.org prize games 3 stake ",
                                             "einladen x@example.org preis einzel satz 1 limit ", "stake "]))
def test_reading_a_line_never_raises(text: str, prefix: str) -> None:
    is_command_line(prefix + text)
    parse_commands(prefix + text)


@pytest.mark.parametrize("line", ["invite x@example.org prize games 3 stake 2.5,",
                                  "invite x@example.org prize single rate 1, limit 10"])
def test_a_prize_amount_ending_in_a_comma_is_not_guessed(line: str) -> None:
    (command,) = parse_commands(line)
    assert isinstance(command, CommandError) and command.code == "prize-amount", command


def test_a_repeated_prize_option_is_refused_not_last_wins() -> None:
    (command,) = parse_commands("invite x@example.org prize games 3 stake 5 stake 2.50")
    assert command == CommandError("invite x@example.org prize games 3 stake 5 stake 2.50", "prize-repeated", "stake")


@pytest.mark.parametrize(("line", "kind"), [
    ("einladen x@example.org preis 3 spiele einsatz 2,50", PrizeKind.SERIES),
    ("einladen x@example.org preis 5 punkte einsatz 5", PrizeKind.MATCH),
    ("invite x@example.org prize 3 games stake 2.50", PrizeKind.SERIES),
    ("invite x@example.org prize 5 points stake 5", PrizeKind.MATCH),
    ("einladen x@example.org preis einzel satz 1 limit 10", PrizeKind.SINGLE),
])
def test_the_seeds_own_names_of_the_prize_formats_are_understood(line: str, kind: PrizeKind) -> None:
    (command,) = parse_commands(line)
    assert isinstance(command, Invite) and command.options.prize is not None
    assert command.options.prize.kind is kind


@pytest.fixture
def players(office) -> tuple[Player, Player]:
    return Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")


@pytest.mark.parametrize("hostile", ["einladen x@example.org preis einzel satz 1 limit 1e99",
                                     "invite x@example.org prize games 3 stake 1e30",
                                     "invite x@example.org prize games 3 stake " + "9" * 32])
def test_a_hostile_amount_in_a_game_reply_neither_loses_the_move_nor_the_mail(office, players, hostile) -> None:
    anna, ben = players
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    mover, seat = next((player, seat) for seat, player in enumerate((anna, ben))
                       if player.next_command(seat, player.last_of(office.table(match_id).token(seat))))
    command = mover.next_command(seat, mover.last_of(office.table(match_id).token(seat)))
    before = office.table(match_id).game
    sent = mover.reply(f"{command}\n{hostile}", to=mover.last_of(office.table(match_id).token(seat)))
    assert sent, "the mail is answered, not shunted"
    assert office.table(match_id).game != before, "the move in the same mail is applied"
    told = " ".join(prose_of(mail) for mail in sent if recipient(mail) == mover.address)
    assert "is not an amount this prize game takes" in told, told


def test_a_refused_invitation_written_in_a_reply_gets_its_own_clear_answer(office, players) -> None:
    anna, ben = players
    anna.write_confirmed("invite ben@example.org prize games 3 stake 2.50")
    thread = anna.last
    assert "Invitation to" in str(thread["Subject"]) or "ben" in str(thread["Subject"]).lower(), thread["Subject"]
    before = office.snapshot()
    (answer,) = anna.reply("invite carl@example.org prize match 3 stake 2.50", to=thread)
    assert office.snapshot() == before
    text = prose_of(answer)
    assert '"3" after prize is not a prize game' in text and "prize 5 points" in text, text
    assert str(answer["Subject"]) != str(thread["Subject"]), "not the earlier invitation's subject"
    assert "We will tell you when" not in text and "Reply with your move" not in text, text


def grant(config_file, *arguments: str) -> int:
    from pbem.cli import main

    return main(["credits", "grant", *arguments, "--config", str(config_file)])


def test_grants_are_bounded_and_the_ledger_check_reports_values_it_cannot_sum(
        office, players, config_file, capsys) -> None:
    from sqlalchemy import text

    from pbem.cli import main

    anna, _ = players
    anna.write("credits")
    for huge in ("92233720368547758.07", "9223372036854775807", "1000000.01", "1e30", "1_000", "٢.٥٠", "2.5,"):
        assert grant(config_file, "anna@example.org", huge, "--reason", "t") == 2, huge
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert grant(config_file, "anna@example.org", "1000000", "--reason", "the largest grant") == 0
    assert capsys.readouterr().out == "anna@example.org 1000100.00\n"
    assert main(["ledger", "check", "--config", str(config_file)]) == 0
    capsys.readouterr()
    with office.engine.begin() as connection:  # a REAL and a value too large, written behind the ledger's back
        connection.execute(text("UPDATE accounts SET balance_cents = 9.2e18 WHERE key LIKE 'player:%'"))
        connection.execute(text("UPDATE ledger_entries SET amount_cents = 9223372036854775807 WHERE id = "
                                "(SELECT max(id) FROM ledger_entries)"))
    assert main(["ledger", "check", "--config", str(config_file)]) == 1
    err = capsys.readouterr().err
    assert "is not a whole number of cents within" in err and "Traceback" not in err, err
    assert "entry" in err and "account player:" in err, err


def test_the_ledger_refuses_a_balance_beyond_its_limit(engine) -> None:
    from sqlmodel import Session

    from pbem.store import ledger

    assert ledger.MAX_MOVED_CENTS == MAX_AMOUNT * 100, "the ledger's bound on one entry is the largest amount"
    with Session(engine) as session:
        issuer, _ = ledger.ensure_account(session, ledger.ISSUER_KEY, ledger.AccountKind.ISSUER)
        house, _ = ledger.ensure_account(session, ledger.HOUSE_KEY, ledger.AccountKind.HOUSE)
        with pytest.raises(ledger.BeyondLimit):
            ledger.post(session, ledger.MovementKind.GRANT, [(issuer, -(ledger.MAX_MOVED_CENTS + 1)),
                                                             (house, ledger.MAX_MOVED_CENTS + 1)])
        session.execute(ledger.update(ledger.Account).where(ledger.col(ledger.Account.id) == house)
                        .values(balance_cents=ledger.MAX_LEDGER_CENTS))
        with pytest.raises(ledger.BeyondLimit):
            ledger.post(session, ledger.MovementKind.GRANT, [(issuer, -1), (house, 1)])


def test_the_grant_reason_is_one_bounded_line_wrapped_in_the_players_mail(office, players, config_file, capsys) -> None:
    anna, _ = players
    anna.write("credits")
    assert grant(config_file, "anna@example.org", "5", "--reason", "x" * 201) == 2
    assert "at most 200" in capsys.readouterr().err
    long_reason = "for\nwinning the\tspring cup " + "and being a very good sport all along " * 4
    assert grant(config_file, "anna@example.org", "5", "--reason", long_reason.strip()) == 0
    (answer,) = anna.write("credits")
    text = text_of(answer)
    assert "grant: for winning the spring cup and being" in text, text
    assert all(len(line) <= 78 for line in text.splitlines()), text


def test_no_grant_to_the_assistant(office, players, config_file, capsys) -> None:
    anna, _ = players
    anna.write_confirmed("play assistant")
    assert grant(config_file, "assistant@pbem.invalid", "50", "--reason", "t") == 2
    assert "the Assistant plays no prize games and has no account" in capsys.readouterr().err


def test_the_fee_is_fixed_at_the_invitation_not_read_at_the_end(office, players) -> None:
    from decimal import Decimal
    from functools import partial

    from pbem.service import handle_mail
    from pbem.store.game_records import MatchStatus

    anna, ben = players
    office.dice.load((3, 1))
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org prize games 3 stake 5")
    assert "the winner gets 9.00 ℂ" in prose_of(ben.inbox[-2])
    raised = office.config.model_copy(
        update={"credits": office.config.credits.model_copy(update={"fee_percent": Decimal(50)})})
    office.config = raised  # the operator raises the fee and restarts the daemon
    office.pipeline.handler = partial(handle_mail, config=raised, dice=office.dice)
    from post_office import acts

    acts(office, ben, "$quit")
    assert office.table(match_id).status is MatchStatus.FINISHED
    assert "Prize: you get 9.00 ℂ; the house takes a fee of 1.00 ℂ" in prose_of(anna.last), prose_of(anna.last)


def test_a_prize_stored_without_its_fee_takes_the_configs() -> None:
    from decimal import Decimal

    from pbem.rules.prizes import Prize

    old = Prize.from_dict({"kind": "games", "stake": "5.00", "rate": "0", "limit": "0"})
    assert old.fee_percent is None
    fixed = old.with_fee(Decimal(10))
    assert Prize.from_dict(fixed.to_dict()) == fixed and fixed.to_dict()["fee_percent"] == "10"


def test_a_single_prize_games_mails_name_the_escrow_and_what_a_win_pays_consistently(office, players) -> None:
    anna, ben = players
    office.dice.load((3, 1))
    invite_and_accept(office, anna, ben, "invite ben@example.org prize single rate 1 limit 10")
    text = prose_of(ben.last)
    assert "Both deposits, 10.00 ℂ each, are held in escrow until the end: 20.00 ℂ in escrow." in text, text
    assert "a single win at this cube pays 1.00 ℂ, less the fee" in text, text
    assert "at stake" not in text, text


def test_an_inviter_never_learns_whether_the_invitee_can_cover_the_deposit(data_dir, database_table) -> None:
    from post_office import office_with_credits

    config_file, office = office_with_credits(data_dir, database_table, 20, "ten")
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    ben.write("credits")
    anna.write_confirmed("invite ben@example.org prize single rate 1 limit 10")
    ben.reply("accept")  # ben now holds 10.00, too little for a limit of 20
    assert grant(config_file, "anna@example.org", "10", "--reason", "t") == 0  # anna holds 20.00
    anna.write_confirmed("invite ben@example.org prize single rate 2 limit 20")
    assert "Invitation from Anna" in str(ben.last["Subject"]), "the invitation is sent all the same"
    ben.reply("accept", to=ben.last)
    assert "your balance is 10.00 ℂ, 10.00 ℂ is missing" in prose_of(ben.last)
    told = prose_of(anna.last)
    assert "it starts only when both deposits of 20.00 ℂ are covered" in told, told
    assert "10.00" not in told and "does not have" not in told and "missing" not in told, told


@pytest.mark.parametrize(("command", "prize"), [("help", "prize single rate 1 limit 10"),
                                                ("hilfe", "preis einzel satz 1 limit 10")])
def test_the_helps_prize_rows_keep_their_two_columns(office, players, command, prize) -> None:
    anna, _ = players
    (answer,) = anna.write(command)
    lines = text_of(answer).splitlines()
    rows = [line for line in lines if " prize " in line or " preis " in line]
    assert len(rows) == 3 and all(len(line) <= 78 for line in rows), rows
    import re

    columns = {re.match(r"  \S.*?  +", line).end() for line in rows}
    assert len(columns) == 1, rows
    (column,) = columns
    assert all(len(line[column:].split()) >= 3 for line in rows), ("each row says what it is", rows)
    assert any(prize in line for line in rows)


@pytest.mark.parametrize(("tampering", "reported"), [
    ("DELETE FROM matches WHERE id = (SELECT max(match_id) FROM accounts)", "an escrow, but not of an existing match"),
    ("UPDATE accounts SET kind = 'issuer' WHERE key = 'player:1'", "of kind issuer, which only the account issuer is"),
    ("UPDATE accounts SET key = 'player:999' WHERE key = 'player:1'", "a player's account, but not of an existing player"),
    ("UPDATE accounts SET key = 'mint' WHERE key = 'issuer'", "of kind issuer, which only the account issuer is"),
    ("UPDATE accounts SET kind = 'vault' WHERE key = 'player:2'", "of no known kind (vault)"),
])
def test_the_ledger_check_finds_misplaced_accounts(office, players, tampering, reported) -> None:
    from sqlalchemy import text
    from sqlmodel import Session

    from pbem.store.ledger import check_ledger

    anna, ben = players
    office.dice.load((3, 1))
    invite_and_accept(office, anna, ben, "invite ben@example.org prize games 3 stake 2.50")
    with Session(office.engine) as session:
        assert check_ledger(session) == []
    with office.engine.connect() as connection:  # by hand, past the foreign keys, as with the sqlite3 shell
        if office.engine.dialect.name == "postgresql":
            connection.execute(text("SET session_replication_role = replica"))
        else:
            connection.exec_driver_sql("PRAGMA foreign_keys = OFF")
        connection.execute(text(tampering))
        connection.commit()
    with Session(office.engine) as session:
        problems = check_ledger(session)
    assert any(reported in problem for problem in problems), problems


def test_a_hostile_amount_typed_into_the_web_boards_move_field_is_no_server_error(config) -> None:
    import re

    from post_office import LoadedDice, PostOffice, token_of
    from starlette.testclient import TestClient

    from pbem.config import WebConfig
    from pbem.service.pages.web_board import WebBoard
    from pbem.web.app import board_app

    config = config.model_copy(update={"web": WebConfig()})
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    client = TestClient(board_app(config.web, WebBoard(config, office.engine, dice=office.dice)),
                        base_url="http://127.0.0.1:8080")
    token = token_of(anna.last)
    page = client.get(f"/g/{token}").text
    form = next(fields for form in re.findall(r"<form method=\"post\".*?</form>", page, re.S)
                if (fields := dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))).get("action") == "move")
    before = office.snapshot()
    answer = client.post(f"/g/{token}", data={**form, "move": "einladen x@example.org preis einzel satz 1 limit 1e99"})
    assert answer.status_code < 500, answer.text
    assert office.snapshot() == before
