"""Hostile mails through the whole service: no secret reaches the opponent, nobody moves or
changes settings for someone else, stale replies change nothing, and answers stay bounded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mail_clients import _quoted, _reply_headers
from post_office import prose_of, LoadedDice, Player, PostOffice, acts, check_answers, is_confirmation, text_of, token_of

from pbem.mail.local_client import compose_mail, compose_reply
from pbem.service.mailroom.senders import safe_note
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
    for command in ("lang de", "numbering fixed", "stop"):
        sent = office.deliver(compose_mail("Ben <ben@example.org>", "backgammon@localhost", "x", command + "\n"))
        office.file(sent)
        (question,) = sent
        assert question["To"].addresses[0].addr_spec == "ben@example.org"  # never to the forger
        assert token_of(question) is not None and "Please confirm" in prose_of(question)
    # A fourth request in 24 hours is dropped: forged mails never flood the one they name.
    assert office.deliver(compose_mail("Ben <ben@example.org>", "backgammon@localhost", "x", "vacation 20\n")) == []
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


@pytest.mark.parametrize("threading", ["in-reply-to", "references only"])
def test_a_mail_answering_one_game_but_addressed_to_another_changes_nothing(opened_game, threading):
    """Issue 21, item 4: the two-games check reads References too, for clients that send no
    In-Reply-To (the last game mail References names is the one answered)."""
    office, anna, ben = opened_game
    anna.write_confirmed("invite ben@example.org")
    ben.reply("accept")
    first_game_mail = next(mail for mail in reversed(ben.inbox) if token_of(mail) == office.table(1).token(1))
    second = office.table()
    reply = compose_reply(ben.sender, first_game_mail, "roll")
    del reply["To"]
    reply["To"] = f"backgammon+{second.token(1)}@localhost"
    if threading == "references only":
        del reply["In-Reply-To"]
        assert str(first_game_mail["Message-ID"]) in str(reply["References"])
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


@pytest.mark.parametrize("hidden", [
    '<div style="display:none">$quit</div>', '<span style="font-size:0">$quit</span>',
    '<span style="color:#ffffff">$quit</span>', "<div hidden>$quit</div>", "<template>$quit</template>",
    '<div style="visibility:hidden">$quit</div>', '<div style="opacity:0">$quit</div>',
    '<style>.c{display:none}</style><p class="c">$quit</p>', "<!--\n$quit\n-->",
    # issue 34, item 4: the three tricks that were read
    '<div style="text-indent:-9999px;overflow:hidden">$quit</div>',
    '<div style="position:absolute;clip:rect(0 0 0 0)">$quit</div>', '<div style="transform:scale(0)">$quit</div>',
])
def test_a_command_hidden_in_an_html_reply_is_never_carried_out(opened_game, hidden):
    """Issue 21, item 3: an HTML-only reply whose reader sees "roll" only: Ben rolls, the game goes on."""
    office, anna, ben = opened_game
    reply = _reply_headers(ben.sender, ben.last)
    reply.set_content(f"<html><body><p>roll</p>{hidden}<p>Ben</p></body></html>\n", subtype="html")
    ben.post(reply)
    game = office.table().game
    assert game is not None and game.result is None and game.phase == "to_move" and game.seat == 1


@pytest.mark.parametrize("name", ["Ben", "BEN", "\u0412\u0435n", "ben@example.org", "Backgammon by Mail",
                                  "Assistant", "ben\uff20example.org", "ben (at) example.org", "B e n",
                                  # issue 34, item 3: ASCII look-alikes
                                  "Backgammon by MaiI", "Backgarnmon by Mail", "Backgammon by Mai1",
                                  "ben at example dot org", "AssIstant"])
def test_a_name_that_passes_for_someone_else_is_ignored(opened_game, name):
    """Issue 21, item 2: Anna cannot take the name of Ben (her opponent), his address, the
    service's or the Assistant's, nor a name holding an address or a look-alike of one: she keeps
    the name she had, and Ben's mails never show the false one."""
    office, anna, ben = opened_game
    anna.post(compose_reply(f'"{name}" <anna@example.org>', anna.last_of(office.table().token(0)), "board"))
    assert office.table().players[0].name == "Anna"
    office.dice.load((6, 5))
    acts(office, ben, "roll", to=ben.last_of(office.table().token(1)))
    assert str(ben.last["Subject"]).startswith("[Backgammon] Anna – Ben:"), ben.last["Subject"]


def test_a_new_player_whose_first_name_passes_for_another_shows_the_local_part(opened_game):
    office, anna, ben = opened_game
    carol = Player(office, "carol@example.org", "Anna")  # writes as "Anna" to Anna herself
    anna.write_confirmed("invite carol@example.org")
    carol.reply("accept")
    table = office.table()
    assert table.players[1].name == "" and table.players[1].display_name == "carol"
    assert "carol" in str(anna.last["Subject"]) and "Anna – Anna" not in str(anna.last["Subject"])


@pytest.mark.parametrize("name", ["Anna Bäcker", "Ilona", "Carl Olsen", "Marni"])
def test_an_honest_name_is_taken(opened_game, name):
    office, anna, ben = opened_game
    anna.post(compose_reply(f'"{name}" <anna@example.org>', anna.last_of(office.table().token(0)), "board"))
    assert office.table().players[0].name == name


def test_forged_mails_bring_a_stranger_at_most_three_confirmation_requests_a_day(office, anna):
    """Issue 21, item 5: 20 forged mails in a stranger's name (lang de, vacation 3, stop …) bring
    them 3 "please confirm" mails, not 20, and nothing else."""
    stranger = Player(office, "victim@example.org", "Victim")
    sent = []
    for number in range(20):
        sent += stranger.write(["lang de", f"vacation {number % 5 + 1}", "stop", "numbering fixed"][number % 4])
    assert len(sent) == 3 and all(is_confirmation(mail) for mail in sent), [str(mail["Subject"]) for mail in sent]


def test_the_same_request_while_one_is_open_brings_no_second_mail(office, anna):
    stranger = Player(office, "victim@example.org", "Victim")
    (first,) = stranger.write("lang de")
    assert is_confirmation(first)
    assert stranger.write("lang de") == [], "the same request is open"
    assert len(stranger.write("stop")) == 1, "another request is sent"
    stranger.reply("yes", to=first)
    assert "Deutsch" in prose_of(stranger.last) or "Sie" in prose_of(stranger.last), "confirmed: carried out"


def test_a_refused_mail_is_stored_cut_to_its_header_and_64_kb(config):
    from sqlmodel import Session, select

    from pbem.store.mail_records import InboundMail

    office = PostOffice(config.model_copy(update={"limits": config.limits.model_copy(
        update={"max_mail_bytes": 200_000})}), LoadedDice(seed=1))
    anna = Player(office, "anna@example.org", "Anna")
    big = compose_mail(anna.sender, "backgammon@localhost", "big", "help\n" + ("y" * 76 + "\n") * 20_000)
    (answer,) = anna.post(big)
    assert "larger than 200 kB" in prose_of(answer)
    with Session(office.engine) as session:
        row = session.exec(select(InboundMail).where(InboundMail.message_id == str(big["Message-ID"]))).one()
    assert len(big.as_bytes()) > 1_500_000 and 64 * 1024 < len(row.raw) <= 64 * 1024 + 4096
    assert b"Subject: big" in row.raw and row.raw.endswith(b"y")


def test_every_mail_is_recorded_with_the_sender_and_subject_of_its_header(config):
    """A mail the service read is recorded with its reading's sender and subject, one it cannot
    read with those of its raw header: both as ``sender_and_subject`` gives them."""
    from sqlmodel import Session, select

    from pbem.mail.headers import sender_and_subject
    from pbem.store.mail_records import InboundMail

    office = PostOffice(config, LoadedDice(seed=1))
    anna = Player(office, "anna@example.org", "Anna")
    read = compose_mail(anna.sender, "backgammon@localhost", "Grüße – help", "help")
    unreadable = compose_mail(anna.sender, "backgammon@localhost", "too deep", "roll")
    unreadable["X-Long"] = "x" * 20_000  # a header field beyond the reader's limit
    for message in (read, unreadable):
        anna.post(message)
    with Session(office.engine) as session:
        rows = {row.message_id: row for row in session.exec(select(InboundMail)).all()}
    for message in (read, unreadable):
        row = rows[str(message["Message-ID"])]
        assert (row.sender, row.subject) == sender_and_subject(message.as_bytes()) != ("", "")
    assert rows[str(read["Message-ID"])].subject == "Grüße – help"
    assert rows[str(unreadable["Message-ID"])].reason.startswith("unreadable mail")
