"""Texts a correspondence player does not trip over (issue 33, item 5): the opponent's move told
once in a game mail, a match won by more points than it needed told as such, no Crawford game on
a finished match, and the dice proof in two lines that name the attached .mat, the service's
/verify page and the command; in English and German."""

from __future__ import annotations

import re

import pytest
from post_office import LoadedDice, Player, PostOffice, play_turn, prose_of, text_of, token_of
from test_web_board import client_of, web_config

WEB = "http://127.0.0.1:8080"


def match_of(config, length: int, language: str = "en", web: bool = True):
    """Anna invites Ben to a match; Ben accepts (in German, both write German)."""
    office = PostOffice(web_config(config) if web else config, LoadedDice(seed=3))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    anna.write_confirmed(("einladen ben@example.org partie " if language == "de" else "invite ben@example.org match ")
                         + str(length), yes="ja" if language == "de" else "yes")
    ben.reply("annehmen" if language == "de" else "accept", to=ben.last)
    return office, anna, ben


def mail_of(player: Player, office: PostOffice):
    table = office.table()
    seat = 0 if table.players[0].address == player.address else 1
    return player.last_of(table.token(seat))


def to_act(office: PostOffice, anna: Player, ben: Player) -> tuple[Player, Player]:
    """(the player to act, the other)."""
    return (anna, ben) if office.table().game.to_act == 0 else (ben, anna)


def assert_move_told_once(text: str, name: str, played: str, legend: str) -> bool:
    """A mail tells the opponent's last move once: among its events ("Anna played 8/2 6/2."),
    the board then only explaining its marks; or, with no such event, in the board's line.
    True when the event told it."""
    told = re.search(rf"^{re.escape(played.format(name))}[^(]*\.$", text, re.M) is not None
    on_board = re.search(rf"^{re.escape(played.format(name))}.* \(\. ", text, re.M) is not None
    if told:
        assert not on_board and legend.format(name) in text, text
    else:
        assert legend.format(name) not in text, text
    return told


def test_the_opponents_move_is_told_once(config):
    office, anna, ben = match_of(config, 5)
    played, legend = "{} played ", "(. from, o to: {}'s last move)"
    told = 0
    for _ in range(16):
        for mail in play_turn(office, (anna, ben)):
            reader = mail["To"].addresses[0].display_name
            if token_of(mail):
                told += assert_move_told_once(text_of(mail), "Ben" if reader == "Anna" else "Anna", played, legend)
    assert told, "some mail told a move among its events"
    # Asked for the board alone, the board says the last move itself.
    mover, other = to_act(office, anna, ben)
    (board,) = mover.reply("board", to=mail_of(mover, office))
    assert not assert_move_told_once(text_of(board), other.name, played, legend)


def test_the_opponents_move_is_told_once_in_german(config):
    office, anna, ben = match_of(config, 5, "de")
    mover, other = to_act(office, anna, ben)
    example = re.search(r"kein Vorschlag\):\n  (.+)$", text_of(mail_of(mover, office)), re.M).group(1)
    sent = mover.reply(example, to=mail_of(mover, office))
    (told,) = [mail for mail in sent if mail["To"].addresses[0].addr_spec == other.address]
    text = text_of(told)
    assert text.count(f"{mover.name} hat {example} gezogen.") == 1 and f"{mover.name} zog" not in text, text
    assert f"(. von, o nach: der letzte Zug von {mover.name})" in text


@pytest.mark.parametrize("language, subject, told, score", [
    ("en", "match over: {} wins with a backgammon (3 points)", "{} wins the match with a backgammon (3 points).",
     "Match to 1 point, won by {}: "),
    ("de", "Match beendet: {} gewinnt mit Backgammon (3 Punkte)", "{} gewinnt die Partie mit Backgammon (3 Punkte).",
     "Match auf 1 Punkt, gewonnen von {}: "),
])
def test_a_match_to_one_won_by_a_backgammon_reads_as_such(config, language, subject, told, score):
    office, anna, ben = match_of(config, 1, language)
    loser, winner = to_act(office, anna, ben)
    sent = loser.reply("$aufgeben" if language == "de" else "$quit", to=mail_of(loser, office))
    (over,) = [mail for mail in sent if mail["To"].addresses[0].addr_spec == loser.address]
    text = prose_of(over)
    assert str(over["Subject"]).endswith(subject.format(winner.name)), over["Subject"]
    assert told.format(winner.name) in text and score.format(winner.name) in text_of(over), text
    assert "3-0" not in str(over["Subject"]) and "3 to 0" not in text and "3 zu 0" not in text
    assert "Crawford" not in text_of(over)
    table = office.table()
    page = client_of(office).get(f"/g/{table.token(0 if table.players[0].address == loser.address else 1)}").text
    assert told.format(winner.name) in page, "the loser's page of the game says it alike"


def test_no_crawford_game_on_a_finished_match(config):
    office, anna, ben = match_of(config, 2)
    loser, winner = to_act(office, anna, ben)
    loser.reply("resign single", to=mail_of(loser, office))
    sent = winner.reply("accept", to=mail_of(winner, office))
    assert any("This is the Crawford game" in prose_of(mail) for mail in sent)
    while not office.table().game or office.table().game.to_act is None:
        play_turn(office, (anna, ben))
    loser, winner = to_act(office, anna, ben)
    assert "Crawford game" in text_of(mail_of(loser, office)), "the running Crawford game says so"
    sent = loser.reply("$quit", to=mail_of(loser, office))
    assert sent and all("Crawford" not in text_of(mail) for mail in sent)
    assert office.table().status == "finished"


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_dice_proof_is_two_lines_naming_the_mat_the_page_and_the_command(config, language):
    office, anna, ben = match_of(config, 3, language)
    loser, winner = to_act(office, anna, ben)
    loser.reply("resign single", to=mail_of(loser, office))
    sent = winner.reply("annehmen" if language == "de" else "accept", to=mail_of(winner, office))
    game_over = next(mail for mail in sent if "Dice seed:" in text_of(mail))
    text = text_of(game_over)
    seed = re.search(r"^Dice seed: ([0-9a-f]{64})$", text, re.M).group(1)
    proof = prose_of(game_over)
    assert "HMAC" not in proof and "bytes" not in proof and "Bytes" not in proof
    if language == "en":
        assert (f"Dice seed: {seed} Check the dice once the match is over, at {WEB}/verify with its .mat (attached "
                "to its last mail) and this seed, or: pbem verify-dice --seed SEED FILE.mat") in proof, proof
    else:
        assert (f"Dice seed: {seed} Prüfen Sie die Würfe nach dem Ende der Partie auf {WEB}/verify mit ihrer "
                ".mat-Datei (im Anhang ihrer letzten Mail) und diesem Startwert, oder: pbem verify-dice --seed "
                "STARTWERT DATEI.mat") in proof, proof
    assert re.search(r"^  pbem verify-dice --seed (SEED FILE|STARTWERT DATEI)\.mat$", text, re.M), "a line to copy"
    # The mail that ends the match attaches the .mat and says so; game 2's check needs both seeds.
    loser, winner = to_act(office, anna, ben)
    sent = loser.reply("$aufgeben" if language == "de" else "$quit", to=mail_of(loser, office))
    over = next(mail for mail in sent if "Dice seed:" in text_of(mail))
    assert any((part.get_filename() or "").endswith(".mat") for part in over.iter_attachments())
    expected = (f"Check the dice at {WEB}/verify with the attached .mat and the seeds of games 1 to 2, or: "
                "pbem verify-dice --seed SEED1 --seed SEED2 FILE.mat" if language == "en" else
                f"Prüfen Sie die Würfe auf {WEB}/verify mit der angehängten .mat-Datei und den Startwerten der Spiele "
                "1 bis 2, oder: pbem verify-dice --seed STARTWERT1 --seed STARTWERT2 DATEI.mat")
    assert expected in prose_of(over), prose_of(over)


def test_without_the_web_board_the_proof_gives_the_command(config):
    office, anna, ben = match_of(config, 1, web=False)
    loser, winner = to_act(office, anna, ben)
    sent = loser.reply("$quit", to=mail_of(loser, office))
    over = next(mail for mail in sent if "Dice seed:" in text_of(mail))
    assert "Check the dice with the attached .mat: pbem verify-dice --seed SEED FILE.mat" in prose_of(over), \
        prose_of(over)
    assert "/verify" not in text_of(over)
