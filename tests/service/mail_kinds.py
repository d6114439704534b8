"""One match played by mail in a language, keeping one mail of each kind a player can get.

Shared by the structure tests (``test_mail_kinds.py``) and the browser test
(``test_mail_screenshots.py``).
"""

from __future__ import annotations

from email.message import EmailMessage

from post_office import LoadedDice, Player, PostOffice

KINDS = ("invitation", "waiting", "your_turn", "cube_offered", "wrong_move", "game_over", "match_over", "help")

_WORDS = {
    "en": {"accept": "accept", "double": "double", "drop": "drop", "lang": "lang en", "quit": "$quit", "help": "help",
           "invite": "invite", "yes": "yes"},
    "de": {"accept": "annehmen", "double": "doppeln", "drop": "ablehnen", "lang": "sprache de", "quit": "$aufgeben",
           "help": "hilfe", "invite": "einladen", "yes": "ja"},
}


def play_every_kind(config, language: str, names: tuple[str, str] = ("Anna", "Ben"),
                    choose_language: bool = True) -> dict[str, EmailMessage]:
    """Anna invites Ben to a match to 3 in ``language``; every kind of mail, by name (see KINDS).

    With ``choose_language`` both first say ``lang``; without, they are new players who just
    write in ``language`` (Ben gets the invitation in Anna's language)."""
    office = PostOffice(config, LoadedDice(seed=3))
    anna, ben = Player(office, "anna@example.org", names[0]), Player(office, "ben@example.org", names[1])
    words = _WORDS[language]
    if choose_language:
        anna.write_confirmed(words["lang"])
        ben.write_confirmed(words["lang"])
    anna.write_confirmed(f"{words['invite']} ben@example.org match 3", words["yes"])
    mails = {"invitation": ben.last}
    office.dice.load((3, 1))
    ben.reply(words["accept"])
    mails["waiting"] = ben.last
    mails["your_turn"] = anna.last
    anna.reply("13/10 13/12")
    mails["wrong_move"] = anna.last
    anna.reply("8/5 6/5")
    ben.reply(words["double"])
    mails["cube_offered"] = anna.last
    office.dice.load((5, 2))
    anna.reply(words["drop"])
    mails["game_over"] = anna.last
    anna.reply(words["quit"])
    mails["match_over"] = ben.last
    anna.write(words["help"])
    mails["help"] = anna.last
    return mails
