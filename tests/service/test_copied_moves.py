"""A copied move always counts (issue 20, item 1): the example a mail shows, copied onto a line of
its own as a player does, with each common signature and quote under it, is played.

The example stands in our own mail too, and so does the signature separator: a line of ours is
cut as an unmarked quote only when a run of our mail's lines follows it as it stands there.
"""

from __future__ import annotations

import re
from dataclasses import replace
from email.message import EmailMessage

import pytest
from mail_clients import _from, _quoted, _reply_headers
from post_office import LoadedDice, Player, PostOffice, invite_and_accept, side, text_of
from sqlmodel import Session

from pbem.rules.game import Game, Phase
from pbem.service.table import letters
from pbem.rules.position import Position
from pbem.store.game_records import MatchRecord

EXAMPLE = re.compile(r"(?:not a suggestion|kein Vorschlag)\):\n  (\S.*)\n")

SHAPES = {
    "two checkers": (Position(side({24: 2, 13: 5, 8: 3, 6: 5}), side({24: 2, 13: 5, 8: 3, 6: 5})), (3, 1)),
    "doubles": (Position(side({24: 2, 13: 5, 8: 3, 6: 5}), side({24: 2, 13: 5, 8: 3, 6: 5})), (4, 4)),
    "from the bar": (Position(side({24: 1, 13: 5, 8: 3, 6: 5})[:24] + (1,), side({13: 5, 8: 3, 6: 5, 2: 2})), (5, 2)),
    "bearing off": (Position(side({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}), side({13: 5, 12: 5, 11: 5})), (2, 1)),
}

SIGNATURES = {
    "dash-space": {"en": "-- \nAnna Example", "de": "-- \nAnna Beispiel"},
    "dash-dash": {"en": "--\nAnna", "de": "--\nAnna"},
    "iphone": {"en": "Sent from my iPhone", "de": "Von meinem iPhone gesendet"},
    "outlook-regards": {"en": "Best regards\nAnna Example\nExample Ltd. | +44 20 7946 0000",
                        "de": "Mit freundlichen Grüßen\nAnna Beispiel\nBeispiel GmbH | +49 30 1234567"},
    "none": {"en": "", "de": ""},
}


def quote_of(style: str, original: EmailMessage, german: bool) -> str:
    """What a client puts under the new text: nothing, a '>' quote with its attribution (Gmail,
    Thunderbird, mutt), or Outlook's header block with the original unquoted below it."""
    if style == "none":
        return ""
    if style == "quoted":
        attribution = (f"Am 21.11.26 um 21:42 schrieb {_from(original)}:" if german
                       else f"On Sat, Nov 21, 2026 at 9:42 PM {_from(original)} wrote:")
        return f"{attribution}\n{_quoted(text_of(original))}"
    labels = ("Von", "Gesendet", "An", "Betreff") if german else ("From", "Sent", "To", "Subject")
    block = "\n".join(f"{label}: {value}" for label, value in zip(
        labels, (_from(original), "Samstag, 21. November 2026 21:42", str(original["To"]), str(original["Subject"]))))
    return f"________________________________\n{block}\n\n{text_of(original)}"


@pytest.fixture(params=["en", "de"])
def game(request, config) -> tuple[PostOffice, Player, int, str]:
    office = PostOffice(config, LoadedDice(seed=3, script=[(3, 1)]))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    if request.param == "de":
        anna.reply("sprache de")
    return office, anna, match_id, request.param


def stored_game(office: PostOffice, match_id: int) -> dict:
    with Session(office.engine) as session:
        record = session.get(MatchRecord, match_id)
        assert record is not None and record.game is not None
        return dict(record.game)


def store_game(office: PostOffice, match_id: int, game: dict) -> None:
    with Session(office.engine) as session:
        record = session.get(MatchRecord, match_id)
        assert record is not None
        record.game = game
        session.add(record)
        session.commit()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_copied_example_is_played_with_every_signature_and_quote(game, shape, monkeypatch) -> None:
    office, anna, match_id, language = game
    board, dice = SHAPES[shape]
    # The arranged position has no record to replay from the start: the last move's marks are
    # drawn on it as it stands.
    monkeypatch.setattr(letters, "_board_before_last_move", lambda game: board)
    arranged = Game.from_dict(stored_game(office, match_id))
    store_game(office, match_id, replace(arranged, board=board, dice=dice, seat=0, phase=Phase.TO_MOVE, record=()).to_dict())
    anna.reply("brett" if language == "de" else "board")
    turn_mail = anna.last
    found = EXAMPLE.search(text_of(turn_mail))
    assert found, text_of(turn_mail)
    example = found.group(1)
    assert len(example) + 2 <= 78 and "\n" not in example
    assert f"\n  {example}\n\n" in text_of(turn_mail), text_of(turn_mail)  # a paragraph of its own
    before = stored_game(office, match_id)
    tried = 0
    for signature in SIGNATURES.values():
        for style in ("none", "quoted", "outlook"):
            for gap in ("\n", "\n\n"):
                body = f"  {example}{gap}{signature[language]}".rstrip("\n")
                quote = quote_of(style, turn_mail, language == "de")
                message = _reply_headers(anna.sender, turn_mail, "AW" if language == "de" else "Re")
                message.set_content(f"{body}\n\n{quote}" if quote else f"{body}\n")
                sent = anna.post(message)
                after = Game.from_dict(stored_game(office, match_id))
                assert after.seat == 1 and after.board != board, (
                    f"{shape}, {style}, {signature[language]!r}: not played\n{body}\n"
                    + "\n".join(text_of(mail) for mail in sent))
                store_game(office, match_id, before)
                tried += 1
    assert tried == len(SIGNATURES) * 3 * 2


def _damaged_html_reply(player: Player, turn_mail: EmailMessage, new: str, german: bool) -> EmailMessage:
    """The fuzz case of issue 34, item 5: an HTML reply quoting our turn mail's HTML as a client
    that puts every tag on a line of its own does, whose Content-Type was damaged on the way, so
    that its source is read as plain text: no '>', no blockquote, no attribution is recognised."""
    html_part = turn_mail.get_body(preferencelist=("html",))
    assert html_part is not None
    inner = re.search(r"<body[^>]*>(.*)</body>", html_part.get_content(), re.S)
    assert inner is not None
    source = "\n".join(line for line in re.sub(r"(<[^>]+>)", r"\n\1\n", inner.group(1)).split("\n") if line.strip())
    message = _reply_headers(player.sender, turn_mail, "AW" if german else "Re")
    message.set_content(f"<html><body><div>\n{new}\n</div>\n<blockquote type=\"cite\">\n{source}\n</blockquote>"
                        "</body></html>\n")
    message.replace_header("Content-Type", 'text/plain; charset="utf-8"')  # the damage
    return message


def test_the_example_in_a_quote_read_as_text_after_header_damage_is_not_played(game) -> None:
    office, anna, match_id, language = game
    anna.reply("brett" if language == "de" else "board")
    turn_mail = anna.last
    example = re.search(r"<b>(\S+(?: \S+)*)</b></p>", turn_mail.get_body(preferencelist=("html",)).get_content())
    assert example is not None and example.group(1) in text_of(turn_mail)
    before = stored_game(office, match_id)
    anna.post(_damaged_html_reply(anna, turn_mail, "Danke!" if language == "de" else "Thanks!", language == "de"))
    assert stored_game(office, match_id) == before, "the quoted example was played"
    # ... while the example the player copies above the same quote is a move
    anna.post(_damaged_html_reply(anna, turn_mail, example.group(1), language == "de"))
    after = Game.from_dict(stored_game(office, match_id))
    assert after.seat == 1, text_of(anna.last)
