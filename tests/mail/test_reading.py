"""Reading mails: the fixtures are replies as real mail clients write them, each quoting a
service mail with a board, identifiers and an example move, none of which may leak."""

import re
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from pbem.commands import Accept, Double, Move, Note, Rematch, Roll, Take, is_command_line, parse_commands
from pbem.mail.headers import TOKEN_PATTERN, UnreadableMail, new_token, reply_address, subject_text
from pbem.mail.html_text import html_to_text
from pbem.mail.reading import read_mail
from pbem.mail.replies import ReadingContext, new_text
from pbem.mail.composing import game_message_id

FIXTURES = Path(__file__).parent / "fixtures"
SERVICE_ADDRESS = "backgammon@example.org"
SERVICE = ReadingContext(SERVICE_ADDRESS, "Backgammon by Mail", is_command=is_command_line)
T1 = "k7m2q4xw3pa5rb6cd2ef7gh3ij"
T2 = "q3v5n7b2x4z6c3m5l7k2j4h6g3"
SERVICE_LINES = ("Position ID", "Match ID", "24/18 13/9\n", "+13-14", "| X", "BAR")


@pytest.mark.parametrize(
    ("fixture", "expected_text", "expected_tokens"),
    [
        ("gmail_en.eml", "24/14\nNice opening, Anna!", [T1]),
        ("gmail_de.eml", "Hallo Anna,\nwürfeln", [T1]),
        ("outlook_en.eml", "double\n\nBob", [T1]),
        ("outlook_de_latin1.eml", "Schöner Zug übrigens!\nannehmen", [T2]),
        ("outlook_html_only.eml", "13/7(2) 8/2(2)\nÄtsch, ein Pasch!", [T1]),
        ("apple_en.eml", "take", [T1, T2]),
        ("apple_de_base64.eml", "8/5* 6/5\nDas tat weh, oder?", [T1]),
        (
            "thunderbird_flowed.eml",
            "Sorry for the slow answer, I was travelling all week and only now found the time"
            " to look at the board properly.\n\nboard",
            [T1],
        ),
        ("thunderbird_html.eml", "Rematch!\n\nThat was close & fun.", [T1]),
    ],
)
def test_a_reply_yields_only_what_the_player_newly_wrote(
    fixture: str, expected_text: str, expected_tokens: list[str]
) -> None:
    mail = read_mail((FIXTURES / fixture).read_bytes(), SERVICE)
    assert mail.new_text == expected_text
    assert list(mail.reply_tokens) == expected_tokens
    assert mail.automatic is None
    assert not any(line in mail.new_text + "\n" for line in SERVICE_LINES)


def test_headers_are_decoded_and_addresses_lower_cased() -> None:
    raw = (FIXTURES / "outlook_de_latin1.eml").read_bytes()
    mail = read_mail(raw, SERVICE)
    assert mail.sender == "juergen.mueller@firma.example.de"
    assert mail.sender_name == "Jürgen Müller"
    assert mail.subject == "AW: Anna bietet dir einen Doppel an"
    assert mail.message_id == "<000001dab5a1$4c3f2e10$e4bd8a30$@firma.example.de>"
    assert mail.in_reply_to == f"<{T2}.2c3d4e5f6a7b8c9d@example.org>"
    assert mail.references == ()
    assert mail.size == len(raw)
    gmail = read_mail((FIXTURES / "gmail_en.eml").read_bytes(), SERVICE)
    assert gmail.sender == "bob.beispiel@gmail.com"
    assert gmail.references == (
        f"<{T1}.0a1b2c3d4e5f6a7b@example.org>",
        f"<{T1}.1b2c3d4e5f6a7b8c@example.org>",
    )


@pytest.mark.parametrize(
    ("fixture", "reason"),
    [
        ("out_of_office.eml", "Auto-Submitted: auto-replied"),
        ("bounce.eml", "Auto-Submitted: auto-replied"),
        ("mailing_list.eml", "Precedence: list"),
    ],
)
def test_machine_mails_are_marked_never_to_be_answered(fixture: str, reason: str) -> None:
    assert read_mail((FIXTURES / fixture).read_bytes(), SERVICE).automatic == reason


def _mail(headers: str, body: str = "roll\n") -> bytes:
    return f"{headers.strip()}\nSubject: x\n\n{body}".replace("\n", "\r\n").encode()


PERSON = "From: Bob <bob@example.com>\nTo: backgammon@example.org"


@pytest.mark.parametrize(
    ("extra_headers", "reason"),
    [
        ("Auto-Submitted: auto-generated", "Auto-Submitted: auto-generated"),
        ("Auto-Submitted: Auto-Replied; owner-email=bob@example.com", "Auto-Submitted: auto-replied; owner-email=bob@example.com"),
        ("Precedence: bulk", "Precedence: bulk"),
        ("Precedence: junk", "Precedence: junk"),
        ("List-Id: <players.example.org>", "List-Id header"),
        ("List-Unsubscribe: <mailto:leave@example.org>", "List-Unsubscribe header"),
        ("X-Autoreply: yes", "X-Autoreply header"),
        ("X-Autorespond: vacation", "X-Autorespond header"),
        ("Return-Path: <>", "empty Return-Path (a bounce)"),
        ("Content-Type: multipart/report; boundary=b", "multipart/report (a delivery or read report)"),
    ],
)
def test_each_sign_of_a_machine_is_recognised(extra_headers: str, reason: str) -> None:
    assert read_mail(_mail(f"{PERSON}\n{extra_headers}"), SERVICE).automatic == reason


@pytest.mark.parametrize(
    ("sender", "reason"),
    [
        ("MAILER-DAEMON@mx.example.com", "sent by mailer-daemon@mx.example.com"),
        ("Postmaster <postmaster@example.com>", "sent by postmaster@example.com"),
        ("Backgammon <Backgammon@Example.org>", "sent by the service itself"),
    ],
)
def test_system_senders_and_the_service_itself_are_never_answered(sender: str, reason: str) -> None:
    assert read_mail(_mail(f"From: {sender}"), SERVICE).automatic == reason


def test_a_person_writing_auto_submitted_no_is_answered() -> None:
    mail = read_mail(_mail(f"{PERSON}\nAuto-Submitted: no\nPrecedence: normal"), SERVICE)
    assert mail.automatic is None


@pytest.mark.parametrize(
    "raw",
    [b"", b"   \r\n", b"\x00\xff\xfe garbage without any header", _mail("To: backgammon@example.org"),
     _mail("From: Bob"), _mail("From: <@>")],
)
def test_mails_without_a_sender_cannot_be_read(raw: bytes) -> None:
    with pytest.raises(UnreadableMail) as raised:
        read_mail(raw, SERVICE)
    assert raised.value.reason


def test_a_missing_message_id_is_made_stable_from_the_content() -> None:
    first = read_mail(_mail(PERSON, "roll\n"), SERVICE).message_id
    assert first == read_mail(_mail(PERSON, "roll\n"), SERVICE).message_id
    assert first != read_mail(_mail(PERSON, "double\n"), SERVICE).message_id
    assert re.fullmatch(r"<[0-9a-f]{40}@pbem\.invalid>", first)


def test_tokens_come_from_addresses_then_in_reply_to_then_references_newest_first() -> None:
    t3, t4, t5 = "a" * 26, "b" * 26, "c" * 26
    headers = (
        "From: Bob <bob@example.com>\n"
        f"To: Other <other+{t5}@example.org>, <Backgammon+{T1.upper()}@EXAMPLE.org>\n"
        f"Cc: backgammon+notatoken@example.org\n"
        f"Delivered-To: backgammon+{T2}@example.org\n"
        f"In-Reply-To: <{t3}.x1@example.org>\n"
        f"References: <{t4}.x0@example.org> <CAJ123@mail.gmail.com>\n <{t3}.x1@example.org>"
    )
    assert read_mail(_mail(headers), SERVICE).reply_tokens == (T1, T2, t3, t4)


def test_a_mail_without_any_token_has_no_candidates() -> None:
    mail = read_mail(_mail(PERSON + "\nIn-Reply-To: <CAJ123@mail.gmail.com>"), SERVICE)
    assert mail.reply_tokens == ()
    assert mail.in_reply_to == "<CAJ123@mail.gmail.com>"


@given(st.data())
def test_the_composing_helpers_round_trip_through_reading(data: st.DataObject) -> None:
    token = new_token()
    other = data.draw(st.from_regex(TOKEN_PATTERN, fullmatch=True))
    headers = (
        f"From: bob@example.com\nTo: {reply_address(SERVICE_ADDRESS, token)}\n"
        f"In-Reply-To: {game_message_id(other, (1, 2), 'example.org')}"
    )
    assert read_mail(_mail(headers), SERVICE).reply_tokens == tuple(dict.fromkeys([token, other]))


def test_new_tokens_are_well_formed_and_unique() -> None:
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200
    assert all(re.fullmatch(TOKEN_PATTERN, token) for token in tokens)
    assert game_message_id(T1, (1, 2), "example.org").startswith(f"<{T1}.1-2.")


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("Re: roll", "roll"),
        ("RE: AW: Aw: re: double", "double"),
        ("Fwd: WG: Fw: [Backgammon] Re: 24/18 13/9", "24/18 13/9"),
        ("Re[2]: take", "take"),
        ("  invite anna@example.org match 5 ", "invite anna@example.org match 5"),
        ("Rematch? Re: not a prefix here", "Rematch? Re: not a prefix here"),
        ("", ""),
    ],
)
def test_subject_text_strips_reply_prefixes_and_tags(subject: str, expected: str) -> None:
    assert subject_text(subject) == expected


def test_unquoted_board_and_identifier_lines_are_dropped() -> None:
    body = (
        "roll\n\n"
        " +13-14-15-16-17-18------19-20-21-22-23-24-+\n"
        " | X           O    |   | O              X |\n"
        " |                  |BAR|                  |\n"
        " +12-11-10--9--8--7-------6--5--4--3--2--1-+\n"
        "Position ID: 4HPwATDgc/ABMA\n"
        "Match ID   : cAkAAAAAAAAA\n"
    )
    assert new_text(body, SERVICE) == "roll"


def test_dash_spelling_moves_are_not_taken_for_signatures() -> None:
    assert new_text("-22 13-9\n- 6-off\n6-", SERVICE) == "-22 13-9\n- 6-off\n6-"


def test_bottom_posting_keeps_the_text_below_the_quote() -> None:
    body = (
        "On Mon, 3 Jun 2024 at 10:00, Anna <a@example.org> wrote:\n"
        "> Position ID: 4HPwATDgc/ABMA\n"
        "> 24/18 13/9\n"
        "\n"
        "13/9 13/7\n"
        "-- \n"
        "Bob\n"
    )
    assert new_text(body, SERVICE) == "13/9 13/7"


def test_an_attribution_without_a_marked_quote_ends_the_new_text() -> None:
    body = "double\n\nAm 03.06.2024 um 10:00 schrieb Anna <a@example.org>:\n\n24/18 13/9\n"
    assert new_text(body, SERVICE) == "double"


def test_an_original_message_separator_ends_the_new_text() -> None:
    assert new_text("board\n\n-----Original Message-----\nFrom: x\n24/18 13/9", SERVICE) == "board"


def test_html_keeps_visible_lines_and_drops_quotes_styles_and_scripts() -> None:
    html = (
        "<html><head><title>t</title><style>p {color: red}</style></head><body>"
        "<div>Hi&nbsp;Anna</div><div><br></div><div>24/18 13/9</div>"
        "<script>var x = 'roll';</script>"
        "<div class='gmail_signature'>Bob</div>"
        "<div class='gmail_quote'><div>On x wrote:</div><blockquote>double"
        "<blockquote>take</blockquote>board</blockquote></div>"
        "<p>after   the\n quote</p><pre>  two  spaces</pre></body></html>"
    )
    # A paragraph stands apart from what is around it, as a mail client shows it.
    assert html_to_text(html) == "Hi Anna\n\n24/18 13/9\n\nafter the quote\n\ntwo  spaces"


def test_html_stops_where_outlook_puts_the_original() -> None:
    html = "<p>take</p><div id='divRplyFwdMsg'><b>From:</b> x</div><div>24/18 13/9</div>"
    assert html_to_text(html) == "take"


def test_a_wrong_charset_label_does_not_lose_the_text() -> None:
    headers = f"{PERSON}\nContent-Type: text/plain; charset=x-unknown\nContent-Transfer-Encoding: 8bit"
    raw = f"{headers}\nSubject: x\n\n".replace("\n", "\r\n").encode() + "würfeln\r\n".encode()
    assert read_mail(raw, SERVICE).new_text == "würfeln"
    latin = raw.replace("würfeln".encode(), "würfeln".encode("latin-1")).replace(b"x-unknown", b"utf-8")
    assert read_mail(latin, SERVICE).new_text == "würfeln"


@pytest.mark.parametrize("fixture", ["gmail_en.eml", "gmail_de.eml"])
def test_the_html_alternative_reads_as_the_plain_part(fixture: str) -> None:
    raw = (FIXTURES / fixture).read_bytes()
    message = BytesParser(policy=default_policy).parsebytes(raw)
    html = message.get_body(preferencelist=("html",)).get_content()
    assert new_text(html_to_text(html)) == read_mail(raw, SERVICE).new_text


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("gmail_en.eml", [Move("24/14"), Note("Nice opening, Anna!")]),
        ("gmail_de.eml", [Note("Hallo Anna,"), Roll()]),
        ("outlook_en.eml", [Double(), Note("Bob")]),
        ("outlook_de_latin1.eml", [Note("Schöner Zug übrigens!"), Accept()]),
        ("outlook_html_only.eml", [Move("13/7(2) 8/2(2)"), Note("Ätsch, ein Pasch!")]),
        ("apple_en.eml", [Take()]),
        ("apple_de_base64.eml", [Move("8/5* 6/5"), Note("Das tat weh, oder?")]),
        ("thunderbird_html.eml", [Rematch(), Note("That was close & fun.")]),
    ],
)
def test_fixture_replies_give_the_commands_meant(fixture: str, expected: list[object]) -> None:
    mail = read_mail((FIXTURES / fixture).read_bytes(), SERVICE)
    assert parse_commands(mail.new_text, subject_text(mail.subject)) == expected


def test_an_empty_reply_is_read_from_its_subject() -> None:
    mail = read_mail(_mail(PERSON, "\n").replace(b"Subject: x", b"Subject: Re: AW: roll"), SERVICE)
    assert mail.new_text == ""
    assert parse_commands(mail.new_text, subject_text(mail.subject)) == [Roll()]


def test_flowed_text_with_delsp_joins_without_the_space() -> None:
    headers = f"{PERSON}\nContent-Type: text/plain; charset=utf-8; format=flowed; delsp=yes"
    body = "a long note that the client bro \nke in two\n> quoted soft \n> break\nroll\n"
    assert read_mail(_mail(headers, body), SERVICE).new_text == "a long note that the client broke in two\nroll"


def test_a_raw_byte_in_the_charset_of_an_encoded_name_keeps_the_name_as_written() -> None:
    """Found by the test below: ``=?\x80so-8859-1?q?…?=`` made the email package raise CharsetError."""
    raw = (FIXTURES / "outlook_de_latin1.eml").read_bytes()
    mail = read_mail(raw[:8] + b"\x80" + raw[9:], SERVICE)
    assert "@" in mail.sender


@given(
    fixture=st.sampled_from(sorted(FIXTURES.glob("*.eml"))),
    position=st.integers(0, 3000),
    junk=st.binary(min_size=1, max_size=12),
)
def test_damaged_mails_are_read_or_refused_but_never_crash(fixture: Path, position: int, junk: bytes) -> None:
    raw = fixture.read_bytes()
    try:
        mail = read_mail(raw[:position] + junk + raw[position + len(junk):], SERVICE)
    except UnreadableMail:
        return
    assert "@" in mail.sender and mail.message_id.startswith("<")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Nice roll.\nThanks, good game!\nrematch", "Nice roll.\nThanks, good game!\nrematch"),
        ("roll\n\nThanks,\nBob", "roll"),
        ("Grüße an Anna!\n24/18 13/9\n\nViele Grüße\nBob", "Grüße an Anna!\n24/18 13/9"),
        ("double\n-- \nBob\n+49 30 1234567", "double"),
        ("take\n\nVon meinem iPad gesendet", "take"),
    ],
)
def test_signatures_are_cut_but_never_a_command_below_closing_words(body: str, expected: str) -> None:
    assert new_text(body, SERVICE) == expected


OUR_MAIL = """[Backgammon] Ben - anna: Your turn

It is your turn with 6-4. Reply with your move. Write it like this (the form of a move, not a suggestion):
  24/18 13/9

Other commands: double, board, $quit, help.

Position ID: 4HPwATDgc/ABMA
Match ID: cAkAAAAAAAAA

-- 
Backgammon by Mail"""


@pytest.mark.parametrize("tail", ["", "\n", "\n-- \nAnna", "\n--\nAnna", "\n\nAnna", "\n\n\nOther commands: double, board, $quit, help."])
def test_a_line_copied_from_our_mail_is_the_players_own(tail):
    """The example copied onto a line of its own, then a signature, a blank line, nothing, or one
    line of our mail: two lines that never followed each other in our mail are no quote."""
    assert new_text(f"24/18 13/9{tail}", quoted=OUR_MAIL).split("\n")[0] == "24/18 13/9"


def test_an_unmarked_quote_of_three_lines_of_our_mail_is_cut():
    unmarked = "\n".join(OUR_MAIL.split("\n")[2:8])
    assert new_text(f"24/18 13/9\n\n{unmarked}\n", quoted=OUR_MAIL) == "24/18 13/9"
    # Our lines from the example on: the copied line itself then stands in a run of our mail.
    assert new_text("Good luck\n\n" + "\n".join(OUR_MAIL.split("\n")[3:10]), quoted=OUR_MAIL) == "Good luck"


def test_two_lines_of_our_mail_are_a_quote_only_with_the_board():
    two = "Other commands: double, board, $quit, help.\n\nPosition ID: 4HPwATDgc/ABMA"
    assert new_text(f"roll\n{two}", quoted=OUR_MAIL) == "roll"
    assert "roll" in new_text(f"roll\n\nOther commands: double, board, $quit, help.\nthanks", quoted=OUR_MAIL)
