"""Games against the Assistant through the real pipeline: it answers at once, in every format."""

from __future__ import annotations


import pytest
from post_office import LoadedDice, Player, PostOffice, attachment, recipient, prose_of, set_game, side, text_of

import pbem.assistant
from pbem.rules.position import Position
from pbem.store.game_records import MatchStatus


def _play_out(office: PostOffice, anna: Player, max_steps: int = 1500) -> None:
    """Anna answers every mail as a simple player until the match against the Assistant ends."""
    for _ in range(max_steps):
        if office.table().status is MatchStatus.FINISHED:
            return
        command = anna.next_command(0, anna.last)
        assert command, f"Anna must act but was not told so:\n{text_of(anna.last)}"
        sent = anna.reply(command)
        assert [mail["To"] for mail in sent] == [anna.sender], "a mail went to the Assistant"
    raise AssertionError("the match did not end")


def test_a_single_game_starts_at_once_and_ends_with_the_review_and_the_mat_file(config) -> None:
    office = PostOffice(config, LoadedDice(seed=11))
    anna = Player(office, "anna@example.org", "Anna")
    anna.write_confirmed("sprache de")
    anna.write_confirmed("gegen assistent", yes="ja")
    assert "Assistent" in text_of(anna.last) and "Assistant" not in text_of(anna.last)
    anna.reply("lang en")
    _play_out(office, anna)
    end = anna.last
    assert "The review of this game by the bgsage engine will follow in a separate mail." in text_of(end)
    assert "per decision over" not in text_of(end)
    mat = attachment(end, ".mat")
    assert mat is not None and "Assistant" in mat
    assert office.table().record.options["rated"] is False
    (review,) = office.review()  # the daemon's review job: one mail, to Anna alone
    assert recipient(review) == anna.address and review["In-Reply-To"] == end["Message-ID"]
    assert "review of game 1" in str(review["Subject"])
    text = text_of(review)
    assert "Review of game 1 by the bgsage engine" in text
    assert text.count("per decision over") == 2 and "luck" in text
    assert office.review() == []  # mailed once


@pytest.mark.long_game
def test_a_match_to_3_against_the_assistant_is_played_to_the_end(config) -> None:
    office = PostOffice(config, LoadedDice(seed=5))
    anna = Player(office, "anna@example.org", "Anna")
    anna.write_confirmed("play assistant match 3")
    _play_out(office, anna)
    table = office.table()
    assert max(table.score.points) >= 3 and table.score.games >= 1
    assert "will follow in a separate mail" in text_of(anna.last)
    reviews = office.review()
    assert [recipient(mail) for mail in reviews] == [anna.address] * table.score.games
    for number, mail in enumerate(reviews, start=1):
        assert f"Review of game {number} by the bgsage engine" in text_of(mail)
    totals = [mail for mail in reviews if "Review of all" in text_of(mail)]
    assert len(totals) == (table.score.games > 1)
    if totals:
        assert f"Review of all {table.score.games} games" in text_of(reviews[-1])
    sent = anna.reply("rematch")
    assert office.table().status is MatchStatus.RUNNING and office.table().id != table.id
    assert "Your turn" in str(sent[-1]["Subject"])


@pytest.mark.parametrize(("anna_ahead", "drawn"), [(True, True), (False, False)])
def test_the_assistant_accepts_a_draw_only_when_it_is_behind(config, anna_ahead: bool, drawn: bool) -> None:
    office = PostOffice(config, LoadedDice(script=[(6, 1)]))
    anna = Player(office, "anna@example.org", "Anna")
    anna.write_confirmed("play assistant")
    assert "Your turn (6-1)" in str(anna.last["Subject"])
    strong, weak = side({1: 2}), side({6: 5, 5: 5, 4: 5})
    set_game(office, office.table().id, board=Position(strong, weak) if anna_ahead else Position(weak, strong))
    anna.reply("$remis")
    game = office.table().game
    assert game is not None
    text = text_of(anna.last)
    if drawn:
        assert "Assistant (world class) accepted the draw." in text and game.result is not None and game.result.winner is None
    else:
        assert "Assistant (world class) declined the draw; the game goes on." in text
        assert game.result is None and game.draw_offer is None and game.to_act == 0


@pytest.mark.parametrize(("anna_ahead", "accepted"), [(False, False), (True, True)])
def test_the_assistant_accepts_a_resignation_only_when_it_gives_it_enough(config, anna_ahead: bool,
                                                                          accepted: bool) -> None:
    """Anna, about to be gammoned, offers a single game: too little for the Assistant, and the
    game goes on; about to win, she offers the same, and the Assistant gladly takes the point."""
    office = PostOffice(config, LoadedDice(script=[(6, 1)]))
    anna = Player(office, "anna@example.org", "Anna")
    anna.write_confirmed("play assistant")
    strong, far_from_home = side({1: 2}), side({13: 8, 12: 7})
    set_game(office, office.table().id,
             board=Position(strong, far_from_home) if anna_ahead else Position(far_from_home, strong))
    anna.reply("resign single")
    game = office.table().game
    assert game is not None
    # The answer came in the same mail: the offer no longer "stands until the answer".
    assert "You offered to resign a single game (1 point)." in prose_of(anna.last)
    assert "stands until" not in prose_of(anna.last)
    if accepted:
        assert game.result is not None and game.result.winner == 1 and game.result.kind == 1
    else:
        assert "Assistant (world class) rejected the resignation; the game goes on." in text_of(anna.last)
        assert game.result is None and game.resign_offer is None and game.to_act == 0


def test_without_bgsage_play_assistant_is_unavailable_and_friends_still_play(config, monkeypatch) -> None:
    def broken() -> None:
        raise ImportError("No module named 'bgbot_cpp'")

    monkeypatch.setattr(pbem.assistant, "load_bgsage", broken)
    monkeypatch.setattr(pbem.assistant, "_engines", {})
    office = PostOffice(config, LoadedDice(seed=2))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    anna.write_confirmed("play assistant")
    assert "The Assistant is not available on this server." in text_of(anna.last)
    assert office.matches() == []
    anna.write_confirmed("invite ben@example.org")
    ben.reply("accept")
    assert office.table().status is MatchStatus.RUNNING


def test_a_game_against_the_beginner_by_mail_shows_the_level_and_stays_unrated(config) -> None:
    """Issue 38: ``play assistant beginner`` keeps the level on the match row, names the
    Assistant with it in every mail of the game, and the Assistant plays it to the end."""
    office = PostOffice(config, LoadedDice(seed=4))
    anna = Player(office, "anna@example.org", "Anna")
    anna.write_confirmed("play assistant beginner")
    table = office.table()
    assert table.record.assistant_level == "beginner" and table.record.options["rated"] is False
    assert "Anna – Assistant (beginner)" in str(anna.last["Subject"])
    _play_out(office, anna)
    assert "Assistant (beginner)" in text_of(anna.last)
    assert office.table().status is MatchStatus.FINISHED


def test_the_level_in_german_and_the_default_is_the_last_games_level(config) -> None:
    office = PostOffice(config, LoadedDice(seed=6))
    anna = Player(office, "anna@example.org", "Anna")
    anna.write_confirmed("play assistant")
    assert office.table().record.assistant_level == "world_class", "the strongest at first"
    assert "Assistant (world class)" in text_of(anna.last)
    anna.write_confirmed("sprache de")
    anna.write_confirmed("gegen assistent fortgeschritten", yes="ja")
    assert office.table().record.assistant_level == "advanced"
    assert "Assistent (Fortgeschritten)" in text_of(anna.last)
    anna.write_confirmed("gegen assistent anfänger", yes="ja")
    assert "Assistent (Anfänger)" in str(anna.last["Subject"])
    anna.write_confirmed("gegen assistent partie 3", yes="ja")  # no level: that of her last game
    assert office.table().record.assistant_level == "beginner"
    ben = Player(office, "ben@example.org", "Ben")
    ben.write_confirmed("play assistant")  # another player's levels are not his
    assert office.table().record.assistant_level == "world_class"


@pytest.mark.parametrize(("line", "language", "expected"), [
    ("play assistant hard", "en", '"hard" is neither a level of the Assistant nor a format or option. Its levels, '
                                  'weakest first: beginner, intermediate, advanced, expert, world class'),
    ("gegen assistent schwer", "de", "„schwer“ ist weder eine Stufe des Assistenten noch ein Format oder eine "
                                     "Option. Seine Stufen, die schwächste zuerst: Anfänger, Mittelstufe"),
])
def test_an_unknown_level_is_answered_with_the_levels_and_starts_nothing(config, line, language, expected) -> None:
    office = PostOffice(config, LoadedDice(seed=2))
    anna = Player(office, "anna@example.org", "Anna")
    if language == "de":
        anna.write_confirmed("sprache de")
    (answer,) = anna.write(line)
    assert expected in prose_of(answer)
    assert office.matches() == []


@pytest.mark.parametrize(("language", "yes", "line", "expected"), [
    ("en", "yes", "play assistant beginner", "Your note will be passed on to Assistant (beginner)."),
    ("de", "ja", "gegen assistent anfänger", "Ihre Notiz wird an Assistent (Anfänger) weitergegeben."),
])
def test_a_note_to_the_assistant_names_it_as_every_mail_does(config, language, yes, line, expected) -> None:
    """A signature the service cannot tell from a note (Outlook's plain "Mit freundlichen
    Grüßen") is a note to the opponent: the answer names the Assistant in the reader's language
    and with its level, as the rest of the mail does, not as "Assistant"."""
    office = PostOffice(config, LoadedDice(seed=7))
    anna = Player(office, "anna@example.org", "Anna")
    if language == "de":
        anna.write_confirmed("sprache de")
    anna.write_confirmed(line, yes=yes)
    anna.reply("Mit freundlichen Grüßen\nJürgen")
    assert expected in prose_of(anna.last)
