"""Hostile mails through the whole service: no secret reaches the opponent, nobody moves or
changes settings for someone else, stale replies change nothing, and answers stay bounded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mail_clients import _quoted, _reply_headers
from post_office import prose_of, LoadedDice, Player, PostOffice, acts, check_answers, is_confirmation, text_of, token_of

from pbem.mail.local_client import compose_mail, compose_reply
from pbem.service.inbox import safe_note
from pbem.store.mail_records import InboundState

ATTRIBUTIONS = [line.split("\t") for line in
                (Path(__file__).parents[1] / "data" / "hostile" / "attributions.txt").read_text("utf-8").splitlines()
                if line and not line.startswith("#")]
TOKEN_SHAPE = re.compile(r"[a-z2-7]{26}")


def _reply_with(player: Player, original, new: str, attribution: str, marked: bool):
    message = _reply_headers(player.sender, original)
    body = text_of(original)
    message.set_content(f"{new}\n\n{attribution}\n\n{_quoted(body) if marked else body}")
    return message


@pytest.mark.parametrize(("client", "language", "line"), ATTRIBUTIONS, ids=[f"{c}-{lang}" for c, lang, _ in ATTRIBUTIONS])
@pytest.mark.parametrize("marked", [True, False], ids=["quoted", "unquoted"])
def test_no_reply_address_or_token_ever_reaches_the_opponent(opened_game, client, language, line, marked):
    office, anna, ben = opened_game
    original = ben.last
    attribution = line.format(name="Backgammon by Mail", address=str(original["Reply-To"]).split("<")[-1].strip(">"))
    office.dice.load((6, 5))
    sent = ben.post(_reply_with(ben, original, "roll\nGood luck, Anna!", attribution, marked))
    ben_token = office.table().token(1)
    for mail in sent:
        if mail["To"].addresses[0].addr_spec == "anna@example.org":
            assert ben_token not in prose_of(mail) and ben_token not in mail.as_string()
    table = office.table()
    assert table.game is not None and table.game.dice == (6, 5)
    anna_mail = next(mail for mail in sent if "anna@" in str(mail["To"]))
    assert "Good luck, Anna!" in prose_of(anna_mail)
    assert "Position ID: " in prose_of(anna_mail)
    for note in table.seats[0].notes + table.seats[1].notes:
        assert not TOKEN_SHAPE.search(note) and "backgammon" not in note.lower(), note


def test_notes_lose_every_line_with_a_service_address_or_a_token():
    note = ("Nice move!\nreply to backgammon+k7m2q4xw3pa5rb6cd2ef7gh3ij@localhost\nsee BACKGAMMON@LOCALHOST\n"
            "k7m2q4xw3pa5rb6cd2ef7gh3ij\nDonaudampfschifffahrtsgesellschaftskapitän is long\nBye")
    assert safe_note(note, "backgammon@localhost") == "Nice move!\nDonaudampfschifffahrtsgesellschaftskapitän is long\nBye"


@pytest.mark.parametrize("damage", ["missing", "damaged"])
def test_a_stale_reply_is_known_by_its_references_alone(opened_game, damage):
    office, anna, ben = opened_game
    old_turn_mail = next(mail for mail in anna.inbox if "Your turn (3-1)" in str(mail["Subject"]))
    ben.reply("roll")
    ben.reply(ben.next_command(1) or "")  # Anna's turn again: a newer mail than her 3-1 mail
    stale = compose_reply(anna.sender, old_turn_mail, "8/5 6/5")
    del stale["In-Reply-To"]
    if damage == "damaged":
        stale["In-Reply-To"] = "<\x00broken"
    before = office.snapshot()
    sent = anna.post(stale)
    assert office.snapshot()[0] == before[0]
    assert "You answered an older mail of this game" in prose_of(sent[0])


def test_a_forged_sender_cannot_change_anybodys_settings(opened_game):
    office, anna, ben = opened_game
    eve = Player(office, "eve@example.net", "Eve")
    before = office.snapshot()
    for command in ("lang de", "numbering fixed", "stop", "vacation 20"):
        sent = office.deliver(compose_mail("Ben <ben@example.org>", "backgammon@localhost", "x", command + "\n"))
        office.file(sent)
        (question,) = sent
        assert question["To"].addresses[0].addr_spec == "ben@example.org"  # never to the forger
        assert token_of(question) is not None and "Please confirm" in prose_of(question)
    assert office.snapshot() == before
    assert not eve.inbox
    # Ben answers one of the confirmations himself: only what it held happens
    confirmation = next(mail for mail in ben.inbox if "numbering fixed" in prose_of(mail))
    ben.reply("yes", to=confirmation)
    players = {address: (language, numbering) for address, language, numbering in office.snapshot()[1]}
    assert players["ben@example.org"] == ("en", "fixed")  # (his own mail, in English, saves his language)
    # a confirmation answered twice, or by someone else, does nothing more
    ben.reply("yes", to=confirmation)
    forged = compose_reply("Eve <eve@example.net>", next(m for m in ben.inbox if "lang de" in prose_of(m)), "")
    office.file(office.deliver(forged))
    players = {address: (language, numbering) for address, language, numbering in office.snapshot()[1]}
    assert players["ben@example.org"] == ("en", "fixed")  # (his own mail, in English, saves his language)


def test_account_commands_with_the_players_token_need_no_confirmation(opened_game):
    office, anna, ben = opened_game
    sent = ben.reply("lang de")
    assert "Ab jetzt" in prose_of(sent[0]) or "Deutsch" in prose_of(sent[0]), text_of(sent[0])
    players = {address: language for address, language, _ in office.snapshot()[1]}
    assert players["ben@example.org"] == "de"


def test_many_senders_cannot_flood_one_address_with_invitations(config):
    office = PostOffice(config, LoadedDice(seed=2))
    victim = Player(office, "victim@example.org", "Victim")
    for number in range(30):  # a forged From gets nowhere (it must confirm); these are real addresses
        Player(office, f"f{number}@example.net", f"F{number}").write_confirmed("invite victim@example.org")
    limit = config.limits.invitations_received_per_day
    assert len(victim.inbox) == limit == 3


def test_a_forged_invitation_sends_nothing_to_the_invited_and_starts_nothing(opened_game):
    office, anna, ben = opened_game
    eve = Player(office, "eve@example.net", "Eve")
    sent = office.deliver(compose_mail("Ben <ben@example.org>", "backgammon@localhost", "x",
                                       "invite eve@example.net match 25 clock 1h/0h\n"))
    office.file(sent)
    assert [mail["To"].addresses[0].addr_spec for mail in sent] == ["ben@example.org"]
    assert "Please confirm" in prose_of(sent[0]) and not eve.inbox and len(office.matches()) == 1
    # Ben says no: nothing happens
    ben.reply("No, I did not ask for this.", to=sent[0])
    assert "did not confirm" in prose_of(ben.last) and not eve.inbox and len(office.matches()) == 1


def test_a_forged_from_does_not_rename_a_player(opened_game):
    office, anna, ben = opened_game
    office.file(office.deliver(compose_mail('"Ben (I resign, cheater)" <ben@example.org>', "backgammon@localhost",
                                            "x", "help\n")))
    token = office.table().token(1)
    acts(office, ben, "roll", to=ben.last_of(token))
    assert "cheater" not in prose_of(anna.last) and "Ben" in prose_of(anna.last)
    ben.post(compose_reply('"Benjamin" <ben@example.org>', ben.last_of(token), "board"))
    assert office.table().players[1].name == "Benjamin"


def test_notes_waiting_for_a_player_stay_bounded(opened_game):
    office, anna, ben = opened_game
    for number in range(40):
        ben.reply(f"{number}: " + "blah " * 390, to=ben.last_of(office.table().token(1)))
    table = office.table()
    assert sum(len(note) for note in table.seats[0].notes) <= 4000 and table.seats[0].notes[-1].startswith("39:")


def test_a_mail_answering_one_game_but_addressed_to_another_changes_nothing(opened_game):
    office, anna, ben = opened_game
    anna.write_confirmed("invite ben@example.org")
    ben.reply("accept")
    first_game_mail = next(mail for mail in reversed(ben.inbox) if token_of(mail) == office.table(1).token(1))
    second = office.table()
    reply = compose_reply(ben.sender, first_game_mail, "roll")
    del reply["To"]
    reply["To"] = f"backgammon+{second.token(1)}@localhost"
    before = office.snapshot()
    sent = ben.post(reply)
    assert office.snapshot()[0] == before[0]
    assert "addressed to another" in prose_of(sent[0])


def test_a_token_hidden_in_a_note_never_reaches_the_opponent(opened_game):
    office, anna, ben = opened_game
    token = office.table().token(1)
    for note in (f"mailto:backgammon%2B{token}@localhost", f"see {token[:13]}\n{token[13:]} there",
                 f"?q=1{token}2", f"backgammon+{token[:10]}=\n{token[10:]}@localhost"):
        ben.reply(f"Hi Anna\n{note}", to=ben.last_of(token))
    for waiting in office.table().seats[0].notes:
        assert token not in waiting.replace("\n", "").replace("=", "")


@pytest.mark.parametrize("address", [
    "postmaster@example.org", "MAILER-DAEMON@example.org", "noreply@example.org", "no-reply+x@example.org",
    "|/usr/bin/id@example.org", "a/b@example.org", "x" * 65 + "@example.org", "y" * 65_000 + "@example.org",
])
def test_invitations_go_only_to_addresses_of_people(config, address):
    office = PostOffice(config, LoadedDice(seed=2))
    anna = Player(office, "anna@example.org", "Anna")
    sent = anna.write(f"invite {address}")
    if is_confirmation(sent[0]):
        sent = anna.reply("yes", to=sent[0])
    assert [mail["To"].addresses[0].addr_spec for mail in sent] == ["anna@example.org"]
    assert office.matches() == []
    assert len(text_of(sent[0])) < 5000


def test_twenty_thousand_help_lines_get_one_help(config):
    office = PostOffice(config, LoadedDice(seed=2))
    anna = Player(office, "anna@example.org", "Anna")
    (answer,) = anna.write("help\n" * 20_000 + "board\n" * 100)
    assert text_of(answer).count("How to play backgammon by mail") == 1
    assert len(answer.as_bytes()) < 100_000


def test_a_nul_in_a_message_id_never_reaches_an_answer(opened_game):
    office, anna, ben = opened_game
    message = compose_reply(ben.sender, ben.last, "board")
    del message["Message-ID"]
    message["Message-ID"] = "<evil\x00id@example.net>"
    sent = ben.post(message)
    for mail in sent:
        assert "\x00" not in mail.as_string()


def test_unreadable_and_oversized_mails(opened_game, config):
    office, anna, ben = opened_game
    two_senders = compose_mail("Ben <ben@example.org>", "backgammon@localhost", "x", "roll\n")
    raw = two_senders.as_bytes().replace(b"From: ", b"From: Eve <eve@example.net>\nFrom: ", 1)
    (config.inbox_dir / "new" / "two-senders").write_bytes(raw)
    assert office.run() == []
    inbound = office.inbound(str(two_senders["Message-ID"]))
    assert inbound.state == InboundState.IGNORED and "several From headers" in inbound.reason
    huge = compose_reply(ben.sender, ben.last, "roll\n" + "x" * (config.limits.max_mail_bytes + 10))
    sent = ben.post(huge)
    check_answers(office, huge, sent)
    assert "larger than" in prose_of(sent[0]) and office.table().game.dice is None
