"""Every kind of mail in both languages: MIME structure, inline board, headers, links, IDs, wording."""

from __future__ import annotations

import re
from email.message import EmailMessage
from html.parser import HTMLParser

import pytest
from mail_kinds import KINDS, PRIZE_KINDS, play_every_kind, play_prize_kinds
from post_office import LoadedDice, Player, PostOffice, prose_of, text_of, token_of

ENGLISH = re.compile(r"\b(Hello|your|you|turn|Reply|pips|played|wins|Waiting|Match to|borne|Cube|dice|the|double "
                     r"offered|game over|Board)\b")
GERMAN = re.compile(r"\b(Hallo|Sie|Ihr|Ihre|Zug|Antworten|Augen|Wurf|Doppler|gewinnt|abgetragen|Brett)\b")
GAME_KINDS = tuple(kind for kind in KINDS if kind != "help")
WEB = "https://bg.example.org/pbem"


@pytest.fixture(scope="module", params=["en", "de"])
def mails(request, tmp_path_factory) -> tuple[str, dict[str, EmailMessage]]:
    from pbem.config import load_config

    data = tmp_path_factory.mktemp("kinds") / "pbem-data"
    data.mkdir()
    config_file = data.parent / "pbem.toml"
    config_file.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{data}"\n'
                           f'[web]\nbase_url = "{WEB}"\n', encoding="utf-8")
    return request.param, play_every_kind(load_config(config_file), request.param)


class _Tags(HTMLParser):
    """The tags and attributes of an HTML part, and its visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._skip = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._skip = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._skip = False

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def parts(mail: EmailMessage) -> list[str]:
    return [part.get_content_type() for part in mail.walk()]


def html_of(mail: EmailMessage) -> _Tags:
    body = mail.get_body(preferencelist=("html",))
    assert body is not None
    tags = _Tags()
    tags.feed(body.get_content())
    return tags


def test_every_game_mail_is_text_and_html_with_the_board_inline(mails) -> None:
    language, by_kind = mails
    for kind in GAME_KINDS:
        mail = by_kind[kind]
        with_board = kind != "invitation"
        related = ["multipart/related", "text/html", "image/png"] if with_board else ["text/html"]
        expected = ["multipart/alternative", "text/plain", *related]
        if kind == "match_over":
            expected = ["multipart/mixed", *expected, "text/plain"]
        assert parts(mail) == expected, (kind, parts(mail))
        html = html_of(mail)
        images = [attrs for tag, attrs in html.tags if tag == "img"]
        if not with_board:
            assert images == []
            continue
        (image,) = images
        assert str(image["src"]).startswith("cid:") and image["alt"], kind
        (png,) = [part for part in mail.walk() if part.get_content_type() == "image/png"]
        assert png["Content-ID"] == f"<{str(image['src'])[4:]}>"
        assert png.get_content_disposition() == "inline" and png.get_content().startswith(b"\x89PNG")
        related_part = next(part for part in mail.walk() if part.get_content_type() == "multipart/related")
        assert related_part.get_param("type") == "text/html"
        assert not any(str(attrs.get("src", "")).startswith(("http", "data:")) for _, attrs in html.tags)


def test_headers_threads_and_identifiers(mails) -> None:
    language, by_kind = mails
    for kind, mail in by_kind.items():
        assert mail["Content-Language"] == language, kind
        assert mail["Auto-Submitted"] == "auto-replied" and mail["Message-ID"]
        assert (mail["In-Reply-To"] is None) == (kind == "invitation"), "the first mail of Ben's thread"
        if mail["In-Reply-To"]:
            assert str(mail["References"]).split()[-1] == mail["In-Reply-To"]
        assert str(mail["Subject"]).startswith("[Backgammon] ")
        if kind == "help":
            assert token_of(mail) is None
            continue
        token = token_of(mail)
        assert token and token in mail["Message-ID"], kind
        if kind != "invitation":
            text = mail.get_body(preferencelist=("plain",)).get_content()
            html_text = "".join(html_of(mail).text)
            ids = re.search(r"^Position ID: (\S+)\nMatch ID: (\S+)$", text, re.MULTILINE)
            assert ids and f"Position ID: {ids.group(1)}" in html_text and f"Match ID: {ids.group(2)}" in html_text


def test_subjects_tell_the_state(mails) -> None:
    language, by_kind = mails
    subjects = {kind: str(mail["Subject"]) for kind, mail in by_kind.items()}
    expected = {
        "en": {"invitation": "Anna – Ben: Invitation from Anna", "waiting": "Anna – Ben: Waiting for Anna",
               "your_turn": "Anna – Ben: Your turn (3-1)", "cube_offered": "Ben doubles to 2: double offered",
               "game_over": "game over: Ben wins a single game – Your turn (5-2)",
               "match_over": "match over: you win with a backgammon (3 points)"},
        "de": {"invitation": "Anna – Ben: Einladung von Anna", "waiting": "Anna – Ben: Warten auf Anna",
               "your_turn": "Anna – Ben: Sie sind am Zug (3-1)", "cube_offered": "Ben doppelt auf 2: Doppler angeboten",
               "game_over": "Spielende: Ben gewinnt einfach – Sie sind am Zug (5-2)",
               "match_over": "Match beendet: Sie gewinnen mit Backgammon (3 Punkte)"},
    }[language]
    for kind, words in expected.items():
        assert subjects[kind].endswith(words), (kind, subjects[kind])


def test_invitation_links_answer_in_one_click(mails) -> None:
    language, by_kind = mails
    mail = by_kind["invitation"]
    links = [attrs["href"] for tag, attrs in html_of(mail).tags if tag == "a"]
    words = ("accept", "decline") if language == "en" else ("annehmen", "ablehnen")
    assert links == [*(f"mailto:backgammon+{token_of(mail)}@localhost?subject={word}" for word in words),
                     f"{WEB}/g/{token_of(mail)}", page_link(mail)]
    # In the text part both links stand on lines of their own, one under the other.
    rows = [line for line in text_of(mail).splitlines() if "mailto:" in line]
    assert [row.split()[-1] for row in rows] == [f"mailto:backgammon+{token_of(mail)}@localhost?subject={word}"
                                                 for word in words]
    assert len({row.index("mailto:") for row in rows}) == 1, rows


def test_every_game_mail_links_to_its_board_on_the_web(mails) -> None:
    language, by_kind = mails
    for kind in GAME_KINDS:
        link = f"{WEB}/g/{token_of(by_kind[kind])}"
        assert f"\n  {link}\n" in text_of(by_kind[kind]), kind
        assert link in [attrs.get("href") for tag, attrs in html_of(by_kind[kind]).tags if tag == "a"], kind
    assert f"{WEB}/g/" not in text_of(by_kind["help"])


def page_link(mail: EmailMessage) -> str:
    found = re.search(rf"^(?:All your games|Alle Ihre Spiele): ({re.escape(WEB)}/p/[a-z2-7]{{26}})$", text_of(mail),
                      re.MULTILINE)
    assert found, text_of(mail)
    return found.group(1)


def test_every_mail_links_to_the_players_own_page_never_to_a_game_token(mails) -> None:
    """Issue 20, item 7: the footer of every mail, game or not, links to the recipient's page of
    all their games; the link is the player's own (the same in all their mails), never a game's token."""
    language, by_kind = mails
    links_by_recipient: dict[str, set[str]] = {}
    for kind, mail in by_kind.items():
        link = page_link(mail)
        assert link in [attrs.get("href") for tag, attrs in html_of(mail).tags if tag == "a"], kind
        assert token_of(mail) is None or token_of(mail) not in link, kind
        links_by_recipient.setdefault(str(mail["To"]), set()).add(link)
    assert all(len(links) == 1 for links in links_by_recipient.values()), links_by_recipient
    assert len({link for links in links_by_recipient.values() for link in links}) == len(links_by_recipient)


def test_wrong_move_help_and_match_end(mails) -> None:
    language, by_kind = mails
    wrong = by_kind["wrong_move"].get_body(preferencelist=("plain",)).get_content()
    short = "In short: write your move" if language == "en" else "Kurz: schreiben Sie Ihren Zug"
    assert short in wrong and ("24/18 13/9 or 24-18 13-9" in wrong or "24/18 13/9 oder 24-18 13-9" in wrong)
    assert short not in by_kind["your_turn"].get_body(preferencelist=("plain",)).get_content()
    help_text = by_kind["help"].get_body(preferencelist=("plain",)).get_content()
    assert ("bar/22" in help_text and "-22" in help_text and "6/off" in help_text and "6-" in help_text)
    assert short not in help_text
    over = by_kind["match_over"]
    text = over.get_body(preferencelist=("plain",)).get_content()
    # Issue 33: a match to 3 won 4-0 by a backgammon at 1-0 is told as that, never as "4 to 0".
    assert (("You win the match with a backgammon (3 points) at a score of 1 to 0." in text
             and "Match to 3 points, won by Ben: Ben 4, Anna 0\n" in text)
            if language == "en" else
            ("Sie gewinnen die Partie mit Backgammon (3 Punkte) beim Stand von 1 zu 0." in text
             and "Match auf 3 Punkte, gewonnen von Ben: Ben 4, Anna 0\n" in text)), text
    assert "Crawford" not in text
    (mat,) = [part for part in over.iter_attachments() if (part.get_filename() or "").endswith(".mat")]
    assert "3 point match" in mat.get_content() and "Game 2" in mat.get_content()


def test_no_words_of_the_other_language(mails) -> None:
    assert_only(*mails)


@pytest.mark.parametrize("language", ["en", "de"])
def test_new_players_get_every_kind_of_mail_in_the_language_they_write(language, config) -> None:
    by_kind = play_every_kind(config, language, choose_language=False)
    assert {kind: mail["Content-Language"] for kind, mail in by_kind.items()} == dict.fromkeys(by_kind, language)
    assert_only(language, by_kind)


def assert_only(language: str, by_kind: dict[str, EmailMessage]) -> None:
    """No mail shows a word of the other language (but the help's list of its commands)."""
    foreign = ENGLISH if language == "de" else GERMAN
    for kind, mail in by_kind.items():
        text = mail.get_body(preferencelist=("plain",)).get_content()
        if kind == "help":  # the help lists the commands of the other language, on its last line
            text = text.rsplit("\n", 2)[0]
        for shown in (text, "".join(html_of(mail).text), str(mail["Subject"])):
            for fixed in ("Match ID", "Position ID", "Dice commitment", "Dice seed", "pbem verify-dice"):
                shown = shown.replace(fixed, "")  # the same labels and command in both languages
            found = foreign.findall(shown)
            assert not found, (kind, found)


def test_nothing_a_player_writes_becomes_markup(config) -> None:
    office = PostOffice(config, LoadedDice(seed=3))
    anna = Player(office, "anna@example.org", '"Anna <b>bold</b>"')  # quoted in From, as mail clients do
    ben = Player(office, "ben@example.org", '"Ben <img src=x> & Co"')
    anna.write_confirmed("invite ben@example.org")
    office.dice.load((3, 1))
    ben.reply("accept\n<script>alert(1)</script>")
    mail = anna.last
    assert "<script>alert(1)</script>" in mail.get_body(preferencelist=("plain",)).get_content(), "the note"
    html = mail.get_body(preferencelist=("html",)).get_content()
    assert "<script>" not in html and "<img src=x" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;" in html and "&lt;b&gt;bold&lt;/b&gt;" in html and "&lt;img src=x&gt; &amp; Co" in html
    assert [tag for tag, _ in html_of(mail).tags].count("img") == 1
    assert "\n" not in str(mail["Subject"]).strip()


DICE_COMMITMENT = re.compile(r"Dice commitment: [0-9a-f]{64}")
"""The one line longer than 78 (81 characters): SPEC §6 fixes its form, on a line of its own."""


def long_lines(mail: EmailMessage) -> list[str]:
    body = mail.get_body(preferencelist=("plain",))
    assert body is not None
    return [line for line in str(body.get_content()).splitlines()
            if len(line) > 78 and not DICE_COMMITMENT.fullmatch(line)]


def test_no_line_of_the_text_is_longer_than_78(mails) -> None:
    _, by_kind = mails
    assert {kind: long_lines(mail) for kind, mail in by_kind.items() if long_lines(mail)} == {}


@pytest.mark.parametrize("language", ["en", "de"])
def test_long_names_wrap_too(language, config) -> None:
    by_kind = play_every_kind(config, language, ("Annaliese Mustermann-Schulze", "Bartholomäus Krüger-Wendland"))
    assert {kind: long_lines(mail) for kind, mail in by_kind.items() if long_lines(mail)} == {}


def test_a_pending_double_is_shown_as_offered_and_a_finished_game_has_no_turn(mails) -> None:
    language, by_kind = mails
    offered = by_kind["cube_offered"]
    text = text_of(offered)
    alt = next(attrs["alt"] for tag, attrs in html_of(offered).tags if tag == "img")
    if language == "en":
        assert "Cube: 2 offered by Ben, waiting for your answer" in text and "Cube 2 offered by your opponent" in alt
    else:
        assert "Doppler: 2 angeboten von Ben, Ihre Antwort steht aus" in text and "Doppler 2 angeboten von Ihrem Gegner" in alt
    assert "in the middle" not in text and "in der Mitte" not in text
    for kind in ("match_over",):
        assert not any(line.startswith(("Turn:", "Am Zug:")) for line in text_of(by_kind[kind]).splitlines()), kind


def test_what_to_answer_comes_right_after_the_board(mails) -> None:
    """In an 80x24 terminal the answer asked for follows the board's own lines at once, before
    the clocks and the identifiers."""
    language, by_kind = mails
    lines = text_of(by_kind["your_turn"]).splitlines()
    board_end = max(index for index, line in enumerate(lines) if line.startswith(("Cube:", "Doppler:")))
    asks = next(index for index, line in enumerate(lines) if "Reply with your move" in line
                or "Antworten Sie mit Ihrem Zug" in line)
    assert asks - board_end <= 3, lines[board_end:asks + 1]


def test_the_helps_wrapped_rows_continue_under_their_description(mails) -> None:
    """A wrapped row of the help's command table must not look like another command."""
    _, by_kind = mails
    lines = text_of(by_kind["help"]).splitlines()
    assert not [line for line in lines if re.fullmatch(r"  \S+(?: \S+)*", line)], lines


def test_the_kept_text_of_a_mail_is_the_text_part_it_was_sent_with(mails):
    """A reply's quote is recognised from the text this process kept of the mail it answers;
    that must be exactly the text part a reader gets from the mail itself."""
    from pbem.mail.replies import quotable
    from pbem.service.mailroom.post import SENT_TEXTS

    for kind, message in mails[1].items():
        kept = SENT_TEXTS.get(str(message["Message-ID"]))
        html = message.get_body(preferencelist=("html",))
        assert kept is not None and kept == quotable(text_of(message), html and html.get_content()), kind
        assert kept.startswith(text_of(message)), kind


@pytest.fixture(scope="module", params=["en", "de"])
def prize_mails(request, tmp_path_factory) -> tuple[str, dict[str, EmailMessage]]:
    from pbem.config import load_config

    data = tmp_path_factory.mktemp("prizes") / "pbem-data"
    data.mkdir()
    config_file = data.parent / "pbem.toml"
    config_file.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{data}"\n'
                           '[credits]\nstart = 22\n', encoding="utf-8")
    return request.param, play_prize_kinds(load_config(config_file), request.param)


def test_every_prize_mail_wraps_at_78_speaks_one_language_and_tells_the_money(prize_mails) -> None:
    language, by_kind = prize_mails
    assert set(by_kind) == set(PRIZE_KINDS)
    assert {kind: long_lines(mail) for kind, mail in by_kind.items() if long_lines(mail)} == {}
    assert_only(language, by_kind)
    en = language == "en"
    expected = {
        "prize_invitation": "each player stakes 2.50 ℂ; the winner gets 4.50 ℂ" if en
        else "jeder Spieler setzt 2,50 ℂ; der Gewinner bekommt 4,50 ℂ",
        "prize_accepted": "5.00 ℂ in escrow. Your balance now: 19.50 ℂ." if en
        else "5,00 ℂ in Treuhand. Ihr Kontostand jetzt: 19,50 ℂ.",
        "prize_running": "the winner gets the 5.00 ℂ in escrow" if en else "der Gewinner bekommt die 5,00 ℂ in Treuhand",
        "prize_not_covered": "your balance is 19.50 ℂ, 0.50 ℂ is missing" if en
        else "Ihr Kontostand ist 19,50 ℂ, es fehlen 0,50 ℂ",
        "prize_over": "Prize: you get 4.50 ℂ; the house takes a fee of 0.50 ℂ. Your balance: 24.00 ℂ." if en
        else "Preis: Sie bekommen 4,50 ℂ; das Haus nimmt eine Gebühr von 0,50 ℂ. Ihr Kontostand: 24,00 ℂ.",
        "credits": "no purchase, no payout, no real money" if en
        else "kein Kauf, keine Auszahlung, kein echtes Geld",
    }
    for kind, words in expected.items():
        assert words in prose_of(by_kind[kind]), (kind, text_of(by_kind[kind]))
        assert words in " ".join("".join(html_of(by_kind[kind]).text).split()), kind


@pytest.mark.parametrize("language", ["en", "de"])
def test_prize_mails_with_long_names_wrap_too(language, data_dir) -> None:
    from pbem.config import load_config

    config_file = data_dir.parent / "prizes.toml"
    config_file.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{data_dir}"\n'
                           '[credits]\nstart = 22\n', encoding="utf-8")
    by_kind = play_prize_kinds(load_config(config_file), language,
                               ("Annaliese Mustermann-Schulze", "Bartholomäus Krüger-Wendland"))
    assert {kind: long_lines(mail) for kind, mail in by_kind.items() if long_lines(mail)} == {}
