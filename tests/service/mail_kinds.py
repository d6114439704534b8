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


PRIZE_KINDS = ("prize_invitation", "prize_accepted", "prize_not_covered", "prize_running", "prize_over", "credits")

_PRIZE_WORDS = {
    "en": {"series": "invite ben@example.org prize games 3 stake 2.50",
           "single": "invite ben@example.org prize single rate 2 limit 20", "credits": "credits"},
    "de": {"series": "einladen ben@example.org preis spiele 3 einsatz 2,50",
           "single": "einladen ben@example.org preis einzel satz 2 limit 20", "credits": "konto"},
}


def play_prize_kinds(config, language: str, names: tuple[str, str] = ("Anna", "Ben")) -> dict[str, EmailMessage]:
    """Anna invites Ben to a prize series in ``language``, then to a single prize game her credits
    no longer cover; every kind of mail about credits, by name (see PRIZE_KINDS).  ``config``
    must grant 22 credits at the start (``[credits] start = 22``)."""
    office = PostOffice(config, LoadedDice(seed=3))
    anna, ben = Player(office, "anna@example.org", names[0]), Player(office, "ben@example.org", names[1])
    words, common = _PRIZE_WORDS[language], _WORDS[language]
    anna.write_confirmed(common["lang"], common["yes"])
    ben.write_confirmed(common["lang"], common["yes"])
    anna.write_confirmed(words["series"], common["yes"])
    mails = {"prize_invitation": ben.last}
    office.dice.load((3, 1))
    ben.reply(common["accept"])
    mails["prize_accepted"], mails["prize_running"] = ben.last, anna.last
    anna.write_confirmed(words["single"], common["yes"])  # 22 - 2.50 < 20
    mails["prize_not_covered"] = anna.last
    anna.reply(common["quit"], to=mails["prize_running"])
    mails["prize_over"] = ben.last
    ben.write(words["credits"])
    mails["credits"] = ben.last
    return mails
