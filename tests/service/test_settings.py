"""Fewer round trips (issue 13, item 5): ``autoroll on|off`` and ``copies on|off`` per player
(``automove`` and ``greedy``: test_fewer_mails)."""

from __future__ import annotations

import pytest
from post_office import Player, prose_of, text_of

from pbem.commands import Autoroll, CommandError, Copies, parse_commands


@pytest.mark.parametrize(("line", "command"), [
    ("autoroll on", Autoroll(True)), ("Autoroll off", Autoroll(False)), ("autowürfeln an", Autoroll(True)),
    ("autowuerfeln aus", Autoroll(False)), ("copies off", Copies(False)), ("kopien an", Copies(True)),
    ("copies", CommandError("copies", "switch", "")), ("autoroll maybe", CommandError("autoroll maybe", "switch", "maybe")),
])
def test_the_settings_are_read_in_both_languages(line, command):
    assert parse_commands(line) == [command]


def test_autoroll_rolls_at_once_instead_of_asking_roll_or_double(opened_game):
    office, anna, ben = opened_game
    assert "reply  roll  or  double" in text_of(ben.last)
    ben.reply("autoroll on")  # while asked to roll or double: rolled at once
    assert "the service rolls for you at once" in prose_of(ben.last) and "You rolled" in text_of(ben.last)
    ben.reply(ben.next_command(1) or "")
    anna.reply("roll")
    anna.reply(anna.next_command(0) or "")
    turn = ben.last
    assert "You rolled" in text_of(turn) and "Reply with your move" in text_of(turn), text_of(turn)
    assert "Your turn (" in str(turn["Subject"]) and "roll  or  double" not in text_of(turn)
    ben.reply("autoroll off")
    ben.reply(ben.next_command(1) or "")
    anna.reply("roll")
    anna.reply(anna.next_command(0) or "")
    assert "reply  roll  or  double" in text_of(ben.last)


def test_copies_on_and_off_switch_the_copy_of_ones_own_move(opened_game):
    """Off by default (issue 20): ``copies on`` brings the copy back, ``copies off`` leaves it out."""
    office, anna, ben = opened_game
    ben.reply("roll")
    anna.reply("copies on", to=anna.last)
    assert "you get a mail after every move of yours" in prose_of(anna.last)
    ben.reply(ben.next_command(1) or "")
    anna.reply("roll")
    sent = anna.reply(anna.next_command(0) or "")
    assert sorted(mail["To"].addresses[0].addr_spec for mail in sent) == ["anna@example.org", "ben@example.org"]
    anna.reply("copies off")
    assert "you get a mail only when you must act" in prose_of(anna.last)
    ben.reply("roll")
    ben.reply(ben.next_command(1) or "")
    anna.reply("roll")
    before = len(anna.inbox)
    sent = anna.reply(anna.next_command(0) or "")
    assert [mail["To"].addresses[0].addr_spec for mail in sent] == ["ben@example.org"]
    assert len(anna.inbox) == before


def test_a_wrong_move_is_answered_even_with_copies_off(opened_game):
    office, anna, ben = opened_game
    ben.reply("copies off")
    ben.reply("roll")
    sent = ben.reply("24/1")
    assert any(mail["To"].addresses[0].addr_spec == "ben@example.org" for mail in sent)


def test_the_settings_need_proof_and_are_named_in_the_help_and_the_first_mail(accepted_game):
    office, anna, ben = accepted_game
    assert "autoroll on" in prose_of(anna.last) and "automove off" in prose_of(anna.last)
    (question,) = ben.write("autoroll on")
    assert "Please confirm" in text_of(question)
    (help_mail,) = ben.write("help")
    assert "autoroll on / off" in text_of(help_mail) and "copies on / off" in text_of(help_mail)
    assert "automove off / on" in text_of(help_mail) and "greedy on / off" in text_of(help_mail)


@pytest.mark.parametrize(("line", "subject"), [
    ("lang de", "[Backgammon] Ihre Mails jetzt auf Deutsch"),
    ("numbering fixed", "[Backgammon] Your numbering: fixed"),
    ("autoroll on", "[Backgammon] Autoroll on"),
    ("copies on", "[Backgammon] Copies of your moves on"),
    ("automove off", "[Backgammon] Forced plays played by you"),
    ("zählung fest", "[Backgammon] Ihre Zählung: feste"),
])
def test_a_setting_changed_is_answered_under_a_subject_that_names_it(office, line, subject):
    """Issue 33: subjects that say what a mail is, not "Your mail to …" for every setting."""
    player = Player(office, "dora@example.org", "Dora")
    (answer,) = player.write_confirmed(line, yes="ja" if "Ihre" in subject else "yes")
    assert str(answer["Subject"]) == subject
