"""Mails that prove nothing of their sender (issue 34): whatever they ask for, the address in
their From gets at most ``[limits] confirmations_per_day`` mails a day, and no game is opened
in its name until its owner answers a confirmation."""

from __future__ import annotations

import pytest
from post_office import Player, PostOffice, is_confirmation, text_of

from pbem.store.game_records import MatchStatus

FLOOD = 20


@pytest.fixture
def office(config):
    return PostOffice(config)


def _forge(office: PostOffice, address: str, text: str, times: int = FLOOD) -> list:
    """``times`` mails in ``address``'s name, written by someone else (no token, no proof)."""
    forger = Player(office, address, "Stranger")
    office.players.remove(forger)  # the forger reads none of the answers
    return [mail for _ in range(times) for mail in forger.write(text)]


def _to(sent: list, address: str) -> list:
    return [mail for mail in sent if address in str(mail["To"])]


def test_forged_play_assistant_mails_bring_a_stranger_three_mails_and_no_game(office):
    sent = _forge(office, "stranger@example.net", "play assistant match 5")
    assert len(_to(sent, "stranger@example.net")) <= office.config.limits.confirmations_per_day
    assert all(is_confirmation(mail) for mail in sent)
    assert office.matches() == []


def test_forged_play_assistant_in_an_existing_players_name_opens_no_game(office):
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    anna.write_confirmed("invite ben@example.org")
    ben.reply("accept")
    matches = len(office.matches())
    sent = _forge(office, "anna@example.org", "play assistant match 5")
    assert len(_to(sent, "anna@example.org")) <= office.config.limits.confirmations_per_day
    assert len(office.matches()) == matches


def test_after_stop_forged_mails_bring_at_most_the_daily_confirmations_and_do_nothing(office):
    ben = Player(office, "ben@example.org", "Ben")
    ben.write_confirmed("stop")
    sent = [mail for text in ("play assistant match 5", "help", "games", "ratings", "nonsense words")
            for mail in _forge(office, "ben@example.org", text, times=4)]
    assert len(sent) <= office.config.limits.confirmations_per_day
    assert all(is_confirmation(mail) for mail in sent)  # only "please confirm", nothing else
    assert office.matches() == []


def test_forged_help_and_games_are_answered_within_the_same_daily_limit(office):
    sent = [mail for text in ("help", "games", "ratings", "credits", "ladder", "xyzzy", "play assistant")
            for mail in _forge(office, "victim@example.net", text, times=3)]
    assert len(_to(sent, "victim@example.net")) == office.config.limits.confirmations_per_day


def test_a_forged_oversized_mail_is_answered_within_the_limit(office):
    big = "x" * (office.config.limits.max_mail_bytes + 10)
    sent = _forge(office, "victim@example.net", big, times=5)
    assert len(sent) == office.config.limits.confirmations_per_day


def test_the_owner_who_confirms_plays_the_assistant(office):
    anna = Player(office, "anna@example.org", "Anna")
    (question,) = anna.write("play assistant match 3")
    assert is_confirmation(question) and "play assistant match 3" in text_of(question)
    assert office.matches() == []
    anna.reply("yes", to=question)
    (match,) = office.matches()
    assert match.status == MatchStatus.RUNNING
    assert "Assistant" in str(anna.last["Subject"])


def test_mail_with_a_token_of_the_sender_is_not_limited(office):
    anna = Player(office, "anna@example.org", "Anna")
    anna.write_confirmed("play assistant match 3")
    for _ in range(FLOOD // 4):
        assert anna.reply("board")  # each answered: the token proves the sender


@pytest.mark.parametrize("text", ["8/5 6/5", "accept", "rematch", "x" * 300_000])
def test_after_stop_a_mail_without_proof_asking_for_nothing_confirmable_gets_no_answer(office, text):
    ben = Player(office, "ben@example.org", "Ben")
    ben.write_confirmed("stop")
    assert _forge(office, "ben@example.org", text, times=1) == []


def test_after_stop_the_owner_comes_back_by_confirming(office):
    ben = Player(office, "ben@example.org", "Ben")
    ben.write_confirmed("stop")
    (question,) = ben.write("play assistant")
    assert is_confirmation(question)
    ben.reply("yes", to=question)
    (match,) = office.matches()
    assert match.status == MatchStatus.RUNNING
