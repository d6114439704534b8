"""A player without a saved language is answered in the language of their mail (issue 13, item 1):
its command words, its Content-Language, or its prose; a mail that proves its sender saves it.
An invitation reaches the invitee in the invitation's ``lang``, else in the inviter's language,
and every player keeps their own. The service's default here is English."""

from __future__ import annotations

from post_office import Player, text_of
from sqlmodel import Session, select

from pbem.commands import written_in
from pbem.mail.local_client import compose_mail
from pbem.store.game_records import Player as PlayerRow

GERMAN_SUBJECT = "[Backgammon] Hilfe: so spielen Sie per Mail"
ENGLISH_SUBJECT = "[Backgammon] Help: how to play by mail"
GERMAN_REFUSAL = "[Backgammon] Nicht ausgeführt"


def saved_language(office, address: str) -> str | None:
    with Session(office.engine) as session:
        row = session.exec(select(PlayerRow).where(PlayerRow.address == address)).first()
        return None if row is None else row.language


def test_the_words_of_a_mail_tell_its_language():
    assert written_in("hilfe") == "de" and written_in("help") == "en"
    assert written_in("einladen ben@example.org match 3") == "de"
    assert written_in("Hallo Ben, danke für das Spiel!") == "de"
    assert written_in("Thanks for the game, see you") == "en"
    assert written_in("13/7 8/7") is None and written_in("") is None
    assert written_in("", "hilfe") == "de"  # an empty mail is read from its subject


def test_a_new_player_writing_german_gets_german_and_one_writing_english_english(office):
    jurgen = Player(office, "juergen@example.org", "Jürgen Müller")
    (answer,) = jurgen.write("hilfe")
    assert str(answer["Subject"]).startswith(GERMAN_SUBJECT) and "einladen" in text_of(answer)
    assert answer["Content-Language"] == "de"
    assert saved_language(office, jurgen.address) is None  # a mail proves nobody: not saved yet
    bob = Player(office, "bob@example.org", "Bob")
    (answer,) = bob.write("help")
    assert str(answer["Subject"]).startswith(ENGLISH_SUBJECT)


def test_content_language_decides_for_a_mail_without_words_of_either(office):
    mail = compose_mail("Anna <anna@example.org>", "backgammon@localhost", "?", "13/7 8/7")
    mail["Content-Language"] = "de-DE"
    (answer,) = office.deliver(mail)
    assert str(answer["Subject"]).startswith(GERMAN_REFUSAL)


def test_a_german_invitation_reaches_both_in_german_and_saves_the_inviters_language(office):
    jurgen = Player(office, "juergen@example.org", "Jürgen Müller")
    bob = Player(office, "bob@example.org", "Bob")
    (question,) = jurgen.write("einladen bob@example.org match 3")
    assert "Bitte bestätigen" in text_of(question)
    jurgen.reply("ja", to=question)
    assert saved_language(office, jurgen.address) == "de"
    invitation = bob.last
    assert "Einladung von Jürgen Müller" in str(invitation["Subject"]) and "annehmen" in text_of(invitation)
    assert saved_language(office, bob.address) == "de"
    bob.reply("accept")  # Bob answers in English: he keeps the language he was given until he says `lang en`
    assert saved_language(office, bob.address) == "de"
    assert "Sie" in text_of(jurgen.last)


def test_the_invitations_lang_wins_and_every_player_keeps_their_own(office):
    jurgen = Player(office, "juergen@example.org", "Jürgen Müller")
    bob = Player(office, "bob@example.org", "Bob")
    (question,) = jurgen.write("einladen bob@example.org lang en")
    jurgen.reply("ja", to=question)
    assert saved_language(office, bob.address) == "en" and saved_language(office, jurgen.address) == "de"
    assert "Invitation from Jürgen Müller" in str(bob.last["Subject"])
    bob.reply("accept")
    assert str(jurgen.last["Content-Language"]) == "de" and str(bob.last["Content-Language"]) == "en"
