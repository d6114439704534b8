"""Every command fails with its own words, and every mail says what it is (issue 33, items 4
and 5): tournament and ladder names of several words, refusals that quote the line they refuse
and show its one fix (never the options of an invitation, never a guide to moves), and subjects
that name the mail: a tournament opened with its code, joined, a ladder's standing, a
confirmation, a refusal, help, games, ratings, credits; in English and German."""

from __future__ import annotations

import re

import pytest
from post_office import LoadedDice, Player, PostOffice, prose_of, text_of

MOVE_HELP = ("In short: write your move", "Kurz: schreiben Sie Ihren Zug")
INVITATION_OPTIONS = ("beaver, jacoby", "biber, jacoby")


@pytest.fixture
def office(config) -> PostOffice:
    return PostOffice(config, LoadedDice(seed=7))


def subject(mail) -> str:
    return str(mail["Subject"])


def no_guide_to_moves_or_invitations(text: str) -> None:
    assert not any(words in text for words in (*MOVE_HELP, *INVITATION_OPTIONS)), text


def test_a_tournament_name_of_several_words_opens_and_is_joined_in_english(office):
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    (question,) = anna.write("tournament new Autumn Cup knockout 8 match 3")
    assert subject(question) == "[Backgammon] Please confirm: tournament new Autumn Cup knockout..."
    (opened,) = anna.reply("yes", to=question)
    code = re.search(r"Its code is ([a-z2-7]{6})\.", prose_of(opened)).group(1)
    assert "Your knockout tournament Autumn Cup is open: 8 players, matches to 3 points." in prose_of(opened)
    assert subject(opened) == f"[Backgammon] Tournament Autumn Cup is open, its code: {code}"
    (joined,) = ben.write_confirmed(f"tournament join {code}")
    assert subject(joined) == "[Backgammon] You joined the tournament Autumn Cup (2 of 8)"
    (bracket,) = ben.write(f"tournament {code}")
    assert subject(bracket) == "[Backgammon] Tournament Autumn Cup: the bracket"
    (refused,) = ben.write_confirmed(f"tournament join {code}")
    assert subject(refused) == "[Backgammon] Not carried out"
    assert "You are already in the tournament Autumn Cup" in prose_of(refused)


def test_a_tournament_name_of_several_words_in_german(office):
    anna = Player(office, "anna@example.org", "Anna")
    (question,) = anna.write("turnier neu Herbst Pokal ko 8 partie 3")
    assert subject(question) == "[Backgammon] Bitte bestätigen: turnier neu Herbst Pokal ko 8 partie 3"
    (opened,) = anna.reply("ja", to=question)
    code = re.search(r"Sein Code ist ([a-z2-7]{6})\.", prose_of(opened)).group(1)
    assert "Ihr K.-o.-Turnier Herbst Pokal ist eröffnet" in prose_of(opened)
    assert subject(opened) == f"[Backgammon] Das Turnier Herbst Pokal ist eröffnet, sein Code: {code}"


@pytest.mark.parametrize("line, told, fix", [
    ("tournament new Autumn Cup knockout 8 match 3 beaver",
     '"beaver" is no term of a new tournament', "tournament new Autumn Cup knockout 8 match 3"),
    ("tournament new Autumn Cup knockout 6 match 3",
     'A knockout is for 4, 8, 16, 32 or 64 players ("6" is none of them)', "tournament new Autumn Cup knockout 8 match 3"),
    ("tournament new Autumn Cup match 3", "A new tournament needs its size, knockout 4, 8, 16, 32 or 64,",
     "tournament new Autumn Cup knockout 8 match 3"),
    ("tournament new Autumn knockout 8 match 40", 'The matches of a tournament are 1 to 25 points long ("40"',
     "tournament new Autumn Cup knockout 8 match 3"),
    ("tournament new Autumn+Cup knockout 8 match 3", "A new tournament needs a name before its terms",
     "tournament new Autumn Cup knockout 8 match 3"),
    ("tournament invite abc234 anna", '"anna" is not a mail address.', "tournament invite CODE anna@example.org"),
    ("ladder join Thursday_Club", "A ladder's name is one or more words", "ladder join Thursday Club"),
    ("ladder challenge club someone", 'Name whom you challenge by their place or mail address', "ladder challenge club 2"),
    ("ladder new club clock 3d", "A new ladder takes", "ladder new club match 5 reach 3 days 7"),
    ("watch k3mq7zt2x1", '"k3mq7zt2x1" is no watch code', "watch k3mq7zt2xa"),
])
def test_a_refusal_quotes_its_line_and_gives_its_fix_not_the_options_of_an_invitation(office, line, told, fix):
    anna = Player(office, "anna@example.org", "Anna")
    (answer,) = anna.write(line)
    text = prose_of(answer)
    assert f"Not carried out: {line}" in text and told in text, text
    assert f"Write it like this:\n  {fix}\n" in text_of(answer), text_of(answer)
    shown = line if len(line) <= 38 else line[:35].rsplit(" ", 1)[0] + "..."
    assert subject(answer) == f"[Backgammon] Not carried out: {shown}"
    no_guide_to_moves_or_invitations(text)


@pytest.mark.parametrize("line, told, fix", [
    ("turnier neu Herbst Pokal ko 8 partie 3 biber", "„biber“ ist keine Bedingung eines neuen Turniers",
     "turnier neu Herbst Pokal ko 8 partie 3"),
    ("leiter beitreten Donnerstag_Club", "Der Name einer Leiter besteht aus einem oder mehreren Wörtern",
     "leiter beitreten Donnerstag Club"),
    ("zuschauen k3mq7zt2x1", "„k3mq7zt2x1“ ist kein Zuschauer-Code", "zuschauen k3mq7zt2xa"),
])
def test_a_refusal_in_german(office, line, told, fix):
    anna = Player(office, "anna@example.org", "Anna")
    (answer,) = anna.write(line)
    text = prose_of(answer)
    assert f"Nicht ausgeführt: {line}" in text and told in text, text
    assert f"Schreiben Sie es so:\n  {fix}\n" in text_of(answer), text_of(answer)
    assert subject(answer) == f"[Backgammon] Nicht ausgeführt: {line if len(line) <= 38 else line[:35].rsplit(' ', 1)[0] + '...'}"
    no_guide_to_moves_or_invitations(text)


def test_a_refused_move_still_gets_the_guide_to_moves(office):
    anna = Player(office, "anna@example.org", "Anna")
    (answer,) = anna.write("resign twice")
    assert "Not carried out: resign twice" in prose_of(answer) and MOVE_HELP[0] in prose_of(answer)


def test_a_ladder_of_several_words_is_joined_challenged_and_shown(office):
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    (joined,) = anna.write_confirmed("ladder join Thursday Club")
    assert "You are on the ladder thursday-club, at place 1." in prose_of(joined)
    assert subject(joined) == "[Backgammon] Ladder thursday-club: you joined at place 1"
    (joined,) = ben.write_confirmed("ladder join Thursday Club")
    assert subject(joined) == "[Backgammon] Ladder thursday-club: you joined at place 2"
    (standing,) = ben.write("ladder thursday-club")
    assert subject(standing) == "[Backgammon] Ladder thursday-club: the standing, you at place 2"
    sent = ben.write_confirmed("ladder challenge Thursday Club 1")
    assert any("challenge on the ladder thursday-club" in prose_of(mail) for mail in sent), [text_of(m) for m in sent]
    (listed,) = ben.write("ladder")
    assert subject(listed) == "[Backgammon] The ladders"
    (german,) = Player(office, "carl@example.org", "Carl").write_confirmed("leiter beitreten Thursday Club", yes="ja")
    assert subject(german) == "[Backgammon] Leiter thursday-club: Sie stehen auf Platz 3"


@pytest.mark.parametrize("language, line, expected", [
    ("en", "help", "[Backgammon] Help: how to play by mail"),
    ("de", "hilfe", "[Backgammon] Hilfe: so spielen Sie per Mail"),
    ("en", "games", "[Backgammon] Your games"),
    ("de", "spiele", "[Backgammon] Ihre Spiele"),
    ("en", "ratings", "[Backgammon] The ratings"),
    ("de", "rangliste", "[Backgammon] Die Ranglisten"),
    ("en", "credits", "[Backgammon] Your credits: "),
    ("de", "konto", "[Backgammon] Ihr Konto: "),
    ("en", "13/7 8/7", "[Backgammon] Not carried out"),
    ("de", "hallo, 13/7 8/7 bitte", "[Backgammon] Ihre Mail an Backgammon by Mail"),
])
def test_answers_are_titled_by_what_they_are(office, language, line, expected):
    (answer,) = Player(office, "anna@example.org", "Anna").write(line)
    assert subject(answer).startswith(expected), subject(answer)
    assert answer["Content-Language"] == language


@pytest.mark.parametrize("code", ["tournament-name", "tournament-size", "tournament-match-length",
                                  "tournament-option", "tournament-terms", "tournament-address", "ladder-name",
                                  "ladder-option", "ladder-opponent", "watch-code", "watchers-switch"])
def test_every_fix_shown_is_a_command_that_is_carried_out_as_copied(code):
    from pbem.commands import CommandError, Note, parse_commands
    from pbem.render.templating import fix_example

    for language in ("en", "de"):
        example = fix_example(code, language)
        assert example, (code, language)
        (command,) = parse_commands(example.replace("CODE", "abc234"))
        assert not isinstance(command, (CommandError, Note)), (code, language, command)
    assert fix_example("invite-address", "en") is None, "a reason that shows its forms itself"


def test_a_mail_asking_to_confirm_is_titled_so_whatever_else_it_says(office):
    anna = Player(office, "anna@example.org", "Anna")
    (question,) = anna.write("tournament new Autumn Cup knockout 6 match 3\ninvite ben@example.org")
    assert subject(question) == "[Backgammon] Please confirm: invite ben@example.org"
    assert "Not carried out: tournament new Autumn Cup knockout 6 match 3" in prose_of(question)


@pytest.mark.parametrize("language", ["en", "de"])
def test_every_subject_takes_what_its_text_takes(language):
    """A subject_… macro is called with its notice's context: the same arguments, or the mail fails."""
    from pbem.render.templating import environment

    module = environment().get_template(f"{language}/notices.txt").make_module(
        {"numbering": "own", "colour": "white", "service": None, "games_link": None})
    subjects = [name for name in dir(module) if name.startswith("subject_")
                and name not in ("subject_general", "subject_refusal")]
    assert len(subjects) >= 20
    for name in subjects:
        assert getattr(module, name).arguments == getattr(module, name.removeprefix("subject_")).arguments, name


def test_the_code_of_a_tournament_with_a_long_name_stands_whole_in_its_subject(office):
    anna = Player(office, "anna@example.org", "Anna")
    (opened,) = anna.write_confirmed("tournament new Thursday Club Autumn Cup 2026 knockout 8 match 3")
    code = re.search(r"Its code is ([a-z2-7]{6})\.", prose_of(opened)).group(1)
    assert subject(opened) == f"[Backgammon] Tournament Thursday Club Autumn Cup 2026 is open, its code: {code}"
