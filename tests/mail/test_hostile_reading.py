"""Hostile and odd mails at the reader: nothing of the service's own text or a reply address
becomes a note, every sender is one clean address, and the limits hold before parsing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pbem.commands import is_command_line, parse_commands
from pbem.mail.headers import MAX_CONTAINERS, UnreadableMail, message_id_of, sender_and_subject
from pbem.mail.reading import read_mail, recorded_sender_and_subject
from pbem.mail.replies import MAX_NEW_LINES, ReadingContext, unflow

SERVICE_ADDRESS = "backgammon@example.org"
TOKEN = "k7m2q4xw3pa5rb6cd2ef7gh3ij"
REPLY_ADDRESS = f"backgammon+{TOKEN}@example.org"
CONTEXT = ReadingContext(SERVICE_ADDRESS, "Backgammon by Mail", is_command=is_command_line)
ATTRIBUTIONS = [line.split("\t") for line in
                (Path(__file__).parents[1] / "data" / "hostile" / "attributions.txt").read_text("utf-8").splitlines()
                if line and not line.startswith("#")]
SERVICE_TEXT = """Hello Ben,

Anna played 8/5 6/5.
Your turn: you rolled 6-4.

       13 14 15 16 17 18       19 20 21 22 23 24
     +------------------+---+------------------+
     | X           O    |   | O              X |
     +------------------+---+------------------+
      12 11 10  9  8  7       6  5  4  3  2  1

Reply with your move, for example:
  24/18 13/9

Position ID: 4HPwATDgc/ABMA
Match ID: cAkAAAAAAAAA
"""


def _raw(body: str, headers: str = "", content_type: str = "text/plain; charset=utf-8") -> bytes:
    head = headers or f"From: Ben <ben@example.com>\nTo: {REPLY_ADDRESS}\nSubject: Re: game\nMessage-ID: <r1@example.com>"
    return (f"{head}\nMIME-Version: 1.0\nContent-Type: {content_type}\nContent-Transfer-Encoding: 8bit\n\n{body}"
            .replace("\n", "\r\n").encode())


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def _leaks(text: str) -> bool:
    return TOKEN in text or "backgammon" in text.lower() or bool(re.search(r"\d{4}|wrote|schrieb|écrit", text))


@pytest.mark.parametrize(("client", "language", "line"), ATTRIBUTIONS, ids=[f"{c}-{lang}" for c, lang, _ in ATTRIBUTIONS])
@pytest.mark.parametrize("quote", ["marked", "unmarked"])
def test_no_attribution_line_of_any_client_or_language_reaches_the_text(client, language, line, quote) -> None:
    attribution = line.format(name="Backgammon by Mail", address=REPLY_ADDRESS)
    original = _quoted(SERVICE_TEXT) if quote == "marked" else SERVICE_TEXT
    body = f"24/18 13/9\nGood luck, Anna!\n\n{attribution}\n{original}\n"
    mail = read_mail(_raw(body), ReadingContext(SERVICE_ADDRESS, "Backgammon by Mail", is_command=is_command_line,
                                                quoted_text=lambda ids: SERVICE_TEXT))
    assert mail.new_text == "24/18 13/9\nGood luck, Anna!", mail.new_text
    assert not _leaks(mail.new_text)


@pytest.mark.parametrize(("client", "language", "line"), ATTRIBUTIONS, ids=[f"{c}-{lang}" for c, lang, _ in ATTRIBUTIONS])
def test_bottom_posted_replies_keep_the_text_under_the_quote(client, language, line) -> None:
    attribution = line.format(name="Backgammon by Mail", address=REPLY_ADDRESS)
    mail = read_mail(_raw(f"{attribution}\n{_quoted(SERVICE_TEXT)}\n\ntake\n"), CONTEXT)
    assert mail.new_text == "take"


def test_an_attribution_wrapped_before_the_address_goes_whole() -> None:
    body = f"roll\nSee you\n\nOn Sun, Nov 22, 2026 at 10:00 AM Backgammon by Mail <\n{REPLY_ADDRESS}> wrote:\n\n{SERVICE_TEXT}"
    assert read_mail(_raw(body), CONTEXT).new_text == "roll\nSee you"


def test_an_unmarked_original_under_an_unknown_line_is_cut_by_the_service_text() -> None:
    body = f"8/5 6/5\nnice\n\nSomething no client library knows:\n\n{SERVICE_TEXT}"
    context = ReadingContext(SERVICE_ADDRESS, "Backgammon by Mail", is_command=is_command_line,
                             quoted_text=lambda ids: SERVICE_TEXT)
    text = read_mail(_raw(body), context).new_text
    assert text.startswith("8/5 6/5\nnice")
    assert "Position ID" not in text and "13 14 15" not in text and "24/18 13/9" not in text
    commands = parse_commands(text)
    assert [type(command).__name__ for command in commands] == ["Move", "Note"]


def test_point_number_rows_of_a_board_are_never_moves() -> None:
    body = "roll\n       13 14 15 16 17 18       19 20 21 22 23 24\n      12 11 10  9  8  7       6  5  4  3  2  1\n"
    assert read_mail(_raw(body), CONTEXT).new_text == "roll"


@pytest.mark.parametrize("delsp", ["", "; delsp=yes"])
def test_flowed_text_never_glues_a_command_to_the_line_below(delsp) -> None:
    body = "annehmen \nOn Sun, Nov 22, 2026 at 10:00:00AM +0100, Backgammon by Mail wrote:\n> Your turn\n"
    mail = read_mail(_raw(body, content_type=f"text/plain; charset=utf-8; format=flowed{delsp}"), CONTEXT)
    assert mail.new_text == "annehmen"
    long_note = "This is a long \nnote that flows \nover three lines.\ntake \nThanks, \nBen\n"
    assert unflow(long_note, CONTEXT).splitlines()[:2] == [
        "This is a long note that flows over three lines.", "take "]
    assert unflow("Good luck, Anna! \nroll\n", CONTEXT).splitlines()[:2] == [
        "Good luck, Anna! ", "roll"]


# -- the sender -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "from_headers",
    [
        "",
        "From: Ben <ben@example.org>\nFrom: Eve <eve@example.com>",
        "From: ben@example.org, eve@example.com",
        "From: ben, evil",
        "From: Friends: ben@example.org, eve@example.com;",
        "From: =?utf-8?q?_victim=40example=2Ecom=0D=0ABcc=3A_x?= <\x01bad@example.com>",
        "From: B\u00e9n <b\u00e9n@example.org>",
        "From: ben@example.org <evil@x>\nFrom: x@y.org",
    ],
    ids=["none", "two-headers", "two-addresses", "two-bare-words", "group", "control", "non-ascii", "mixed"],
)
def test_a_mail_without_one_clean_sender_is_not_read(from_headers) -> None:
    with pytest.raises(UnreadableMail):
        read_mail(_raw("roll", f"{from_headers}\nTo: {REPLY_ADDRESS}\nSubject: x\nMessage-ID: <a@b.c>"), CONTEXT)


@pytest.mark.parametrize(("from_header", "address", "name"), [
    ("ben@example.org <evil@example.net>", "evil@example.net", ""),
    ('"ben@example.org" <evil@example.net>', "evil@example.net", ""),
    ("J. R. Smith <jrs@example.org>", "jrs@example.org", "J. R. Smith"),
    ("Hans Müller <hans@example.org>", "hans@example.org", "Hans Müller"),
    ('"Müller, Hans" <hans@example.org>', "hans@example.org", "Müller, Hans"),
    ('"=?utf-8?q?M=C3=BCller=2C_Hans?=" <hans@example.org>', "hans@example.org", "Müller, Hans"),
    ("hans@example.org <hans@example.org>", "hans@example.org", ""),
    ("Ben <Ben+Games@Example.org>", "ben+games@example.org", "Ben"),
])
def test_the_one_angle_address_counts_whatever_the_display_name_looks_like(from_header, address, name) -> None:
    mail = read_mail(_raw("roll", f"From: {from_header}\nTo: {REPLY_ADDRESS}"), CONTEXT)
    assert (mail.sender, mail.sender_name) == (address, name)


def test_encoded_words_hiding_line_breaks_never_make_an_address() -> None:
    headers = (f"From: =?utf-8?q?Eve=0D=0ATo=3A_victim=40example=2Ecom?= <eve@example.net>\n"
               f"To: {REPLY_ADDRESS}\nSubject: =?utf-8?q?x=0D=0ABcc=3A_victim=40example=2Ecom?=")
    mail = read_mail(_raw("roll", headers), CONTEXT)
    assert mail.sender == "eve@example.net" and mail.sender_name == ""
    assert "\n" not in mail.subject and "\r" not in mail.subject
    with pytest.raises(UnreadableMail):
        read_mail(_raw("roll", "From: =?utf-8?q?a=0D=0A?= <eve@example.net>, =?utf-8?q?b?= <victim@example.com>"), CONTEXT)


def test_message_ids_with_encoded_words_are_never_taken() -> None:
    injected = "<=?utf-8?q?x=0D=0AReply-To:_eve@evil.example=0D=0A=0D=0ABody?=@example.org>"
    headers = (f"From: ben@example.org\nTo: {REPLY_ADDRESS}\nMessage-ID: {injected}\nIn-Reply-To: {injected}\n"
               f"References: <ok@example.org> {injected}")
    mail = read_mail(_raw("roll", headers), CONTEXT)
    assert mail.message_id.endswith("@pbem.invalid>")
    assert mail.in_reply_to is None and mail.references == ("<ok@example.org>",)


def test_message_ids_with_control_characters_are_never_taken() -> None:
    headers = (f"From: ben@example.org\nTo: {REPLY_ADDRESS}\nMessage-ID: <a\x00b@example.org>\n"
               f"In-Reply-To: <x\x00y@example.org>\nReferences: <ok@example.org> <b\x01d@example.org>")
    raw = _raw("roll", headers)
    mail = read_mail(raw, CONTEXT)
    assert mail.message_id.endswith("@pbem.invalid>") and mail.message_id == message_id_of(raw)
    assert mail.in_reply_to is None and mail.references == ("<ok@example.org>",)


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ("From: No Reply <noreply@shop.example.com>", "sent by noreply@shop.example.com"),
        ("From: do-not-reply@bank.example.com", "sent by do-not-reply@bank.example.com"),
        ("From: ben@example.org\nSubject: [AUTO GENERATED] Your order", "a subject only machines write"),
        ("From: ben@example.org\nSubject: Automatische Antwort: Backgammon", "a subject only machines write"),
        ("From: ben@example.org\nSubject: Out of Office: Re: game", "a subject only machines write"),
        ("From: ben@example.org\nSubject: Undeliverable: Re: game", "a subject only machines write"),
    ],
)
def test_weaker_signs_of_a_machine_are_recognised_too(headers, reason) -> None:
    assert read_mail(_raw("roll", f"{headers}\nTo: {REPLY_ADDRESS}"), CONTEXT).automatic == reason


# -- limits before parsing ------------------------------------------------------------------


def test_a_mail_over_the_size_limit_is_read_no_further_than_its_header() -> None:
    context = ReadingContext(SERVICE_ADDRESS, max_bytes=10_000)
    mail = read_mail(_raw("roll\n" + "x" * 20_000), context)
    assert mail.too_large and mail.new_text == "" and mail.sender == "ben@example.com"


@pytest.mark.parametrize(
    "raw",
    [
        _raw("roll", f"From: ben@example.org\nTo: {REPLY_ADDRESS}\nX-Big: " + "a " * 40_000),
        _raw("roll", f"From: ben@example.org\nTo: {REPLY_ADDRESS}\nX-Words: " + "=?utf-8?q?a?= " * 200),
        _raw("roll", "From: =?utf-8?q?a?=" + " =?utf-8?q?a?=" * 30 + " <ben@example.org>"),
        _raw("x", "From: ben@example.org\n" + "X: y\n" * 20_000),
        ("From: ben@example.org\nContent-Type: multipart/mixed; boundary=b\n\n"
         + "--b\nContent-Type: multipart/mixed; boundary=b\n\n" * (MAX_CONTAINERS + 5)).encode(),
        ("From: ben@example.org\nContent-Type: message/rfc822\n\n" * 2000).encode(),
    ],
    ids=["long-field", "encoded-words", "from-words", "header-size", "deep-multipart", "deep-rfc822"],
)
def test_mails_beyond_the_header_and_mime_limits_are_not_read(raw) -> None:
    with pytest.raises(UnreadableMail):
        read_mail(raw, CONTEXT)


def test_a_subject_beyond_its_limits_is_left_unread_but_the_mail_is_read() -> None:
    mail = read_mail(_raw("roll", f"From: ben@example.org\nTo: {REPLY_ADDRESS}\nSubject: " + "=?utf-8?q?r?= " * 60), CONTEXT)
    assert mail.subject == "" and mail.new_text == "roll"


def test_only_the_first_lines_of_new_text_are_read() -> None:
    text = read_mail(_raw("help\n" * 20_000), CONTEXT).new_text
    assert text.count("help") == MAX_NEW_LINES


def test_an_address_that_merely_ends_like_the_service_is_not_the_service() -> None:
    text = read_mail(_raw("invite joebackgammon@example.org match 3\nroll\nSay hi to joebackgammon@example.org"),
                     CONTEXT).new_text
    assert text == "invite joebackgammon@example.org match 3\nroll\nSay hi to joebackgammon@example.org"


@pytest.mark.parametrize(
    "body",
    ["On " + "a " * 8000 + "\nroll", "Thanks,\n" * 2000 + "roll", "-- \n" * 2000 + "roll", "> \n" * 50_000 + "roll",
     "Von: x\n" * 5000, "<div>" * 20_000 + "roll"],
    ids=["long-on-line", "thanks", "dashes", "quotes", "header-lines", "nested-html"],
)
def test_pathological_bodies_are_read_without_error(body) -> None:
    kind = "text/html" if body.startswith("<div>") else "text/plain"
    read_mail(_raw(body, content_type=f"{kind}; charset=utf-8"), CONTEXT)


# -- fuzz -----------------------------------------------------------------------------------

_PIECES = st.sampled_from([
    "From: ben@example.org\n", "From: =?utf-8?b?QmVu?= <ben@example.org>\n", f"To: {REPLY_ADDRESS}\n",
    "Content-Type: multipart/mixed; boundary=z\n", "Content-Type: text/plain; charset=x-unknown\n",
    "Content-Type: text/plain; format=flowed; delsp=yes\n", "Content-Transfer-Encoding: base64\n",
    "Content-Transfer-Encoding: quoted-printable\n", "--z\n", "--z--\n", "\n", "roll \n", "> quoted\n",
    "On Sun, Nov 22 Backgammon by Mail wrote:\n", "=?utf-8?q?=0D=0A?=", "\x00", "\udcff", "é", "Subject: =?x?q?\n",
    "Message-ID: <\x00@x>\n", "References: <a@b> <c\x01@d>\n", "In-Reply-To: <k7m2q4xw3pa5rb6cd2ef7gh3ij.1-2.ab@example.org>\n",
    "Content-Type: message/rfc822\n", "Content-Type: text/html\n", "<blockquote>", "</div>", "=\n", "QUFB\n",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_PIECES, st.text(max_size=40)), max_size=40))
def test_any_mail_is_read_or_refused_as_unreadable_and_nothing_else(pieces) -> None:
    raw = "".join(pieces).encode("utf-8", errors="surrogateescape")
    try:
        mail = read_mail(raw, CONTEXT)
    except UnreadableMail:
        return
    for header_value in (mail.message_id, mail.in_reply_to or "", *mail.references):
        assert header_value.isascii() and header_value.isprintable()
    assert "\n" not in mail.sender and mail.sender.isascii()
    assert len(parse_commands(mail.new_text)) <= MAX_NEW_LINES
    assert recorded_sender_and_subject(mail) == sender_and_subject(raw)


def test_a_mail_read_gives_its_record_the_sender_and_subject_its_raw_header_gives() -> None:
    """The pipeline records a mail the service read with the reading's sender and subject, not
    parsing its header again: they must be what the raw header gives (the clients' mails, both
    languages, and the hostile corpus)."""
    import sys
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from hostile_corpus import hostile_mails

    fixtures = sorted((Path(__file__).parent / "fixtures").glob("*.eml"))
    mails = [path.read_bytes() for path in fixtures] + [raw for _, raw in hostile_mails(SERVICE_ADDRESS, 2_000_000)]
    read = 0
    for raw in mails:
        try:
            mail = read_mail(raw, CONTEXT)
        except UnreadableMail:
            continue
        read += 1
        assert recorded_sender_and_subject(mail) == sender_and_subject(raw)
    assert read >= len(fixtures)
