"""The service's email policy writes the very bytes of the standard library's.

``pbem.mail.policy`` keeps parsed recurring headers with their folded form, and writes each body
with one write: a mail composed by the service must come out byte for byte as
``email.message.EmailMessage.as_bytes`` under ``email.policy.default`` writes it, and a kept
header shared by many mails must never carry one mail's change into another.
"""

from __future__ import annotations

import random
import types
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import SMTP, default
from pathlib import Path

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail import composing
from pbem.mail.composing import Attachment, InlineImage, Letter, compose
from pbem.mail.policy import MAIL_POLICY, MailMessage
from pbem.mail.headers import is_safe_message_id
from pbem.store.mail_records import _mail_bytes

SENT = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=400)
lines = st.lists(st.sampled_from(["", "a", "über", "x" * 90, "\r", "\r\n", "\n", " ", "From here", "=3D", "ä" * 40]),
                 max_size=30).map("".join)
names = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=60)
plain = st.lists(st.sampled_from(["Game", "1:", "your", "turn", " ", "  ", "(a)", "<b@c>", '"q"', "=?", "?=", "x" * 70,
                                  ",", ";", "\\", "Spiel", "ü"]), max_size=12).map("".join)
"""Subjects of printable ASCII mostly: the ones the policy keeps as text, and their edges."""
message_ids = st.from_regex(r"<[!-;=?-~]{1,40}@[a-z0-9.-]{1,30}>", fullmatch=True).filter(is_safe_message_id)
"""Message-IDs of players' mails, which the answers copy into In-Reply-To and References."""


def _stock(message: EmailMessage) -> bytes:
    """What the standard library writes for ``message``."""
    return EmailMessage.as_bytes(message, policy=default)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(texts, lines), html=st.one_of(st.none(), texts, lines), name=names,
       subject=st.one_of(names, plain),
       picture=st.one_of(st.none(), st.binary(max_size=3000)), attached=st.booleans(),
       language=st.sampled_from(["en", "de"]), answering=st.lists(message_ids, max_size=4))
def test_a_composed_mail_is_written_as_the_standard_library_writes_it(
        text: str, html: str | None, name: str, subject: str, picture: bytes | None, attached: bool,
        language: str, answering: list[str]) -> None:
    images = () if picture is None or html is None else (InlineImage("board.1@example.org", "board.png", picture),)
    attachments = (Attachment("game.mat", "text/plain", b"; [Site \"pbem\"]\n 1) 31: 8/5 6/5\n", "utf-8"),) \
        if attached else ()
    letter = Letter(to_address="anna@example.org", to_name=name, subject=subject, text=text, language=language,
                    token="t0ken", stamp=(3, 4), in_reply_to=answering[-1] if answering else None,
                    references=tuple(answering[:-1]),
                    html=html, images=images, attachments=attachments, unsubscribe=("mailto:stop@example.org",))
    message = compose(letter, "pbem@example.org", "Backgammon by mail", SENT)
    assert isinstance(message, MailMessage)
    assert message.as_bytes() == _stock(message)
    again = BytesParser(policy=default).parsebytes(message.as_bytes())
    assert again.get_body(("plain",)).get_content().replace("\r\n", "\n") \
        == text.replace("\r\n", "\n").replace("\r", "\n") + ("" if text.endswith(("\n", "\r")) else "\n")


def test_kept_headers_are_shared_but_a_change_stays_in_its_own_mail() -> None:
    letter = Letter(to_address="anna@example.org", to_name="Anna", subject="Game 1", text="your turn", language="en",
                    html="<p>your turn</p>")
    first, second = (compose(letter, "pbem@example.org", "Backgammon", SENT) for _ in range(2))
    assert first["MIME-Version"] is second["MIME-Version"]  # kept: parsed once
    assert first["Auto-Submitted"] is second["Auto-Submitted"]
    *_, html = first.iter_parts()
    html.set_param("charset", "iso-8859-1")
    html.add_header("Content-Language", "de")
    first.replace_header("Auto-Submitted", "no")
    assert second["Auto-Submitted"] == "auto-replied"
    *_, html_of_second = second.iter_parts()
    assert html_of_second.get_content_charset() == "utf-8" and "Content-Language" not in html_of_second
    for message in (first, second):
        assert message.as_bytes() == _stock(message)


def test_a_kept_header_folds_as_the_policy_it_is_written_under_says() -> None:
    message = compose(Letter(to_address="b@example.org", to_name="Ben " * 30, subject="s", text="t", language="en"),
                      "pbem@example.org", "Backgammon", SENT)
    for settings_ in ({"linesep": "\n"}, {"linesep": "\r\n"}, {"max_line_length": 40}, {"utf8": True},
                      {"cte_type": "7bit"}, {}):
        policy = MAIL_POLICY.clone(**settings_)
        assert message.as_bytes(policy=policy) == EmailMessage.as_bytes(message, policy=default.clone(**settings_))


@settings(max_examples=150, deadline=None)
@given(body=st.lists(st.sampled_from([b"a", b"\r", b"\n", b"\r\n", b"From x", b" ", b"\xc3\xa4", b"--b"]),
                     max_size=40).map(b"".join))
def test_a_parsed_mail_is_written_as_the_standard_library_writes_it(body: bytes) -> None:
    """Any line ends, as a mail read from outside may have them (lone CR included)."""
    for head in (b"Subject: x\n\n", b"Content-Type: multipart/mixed; boundary=b\n\n--b\n\n"):
        message = BytesParser(policy=MAIL_POLICY).parsebytes(head + body)
        assert isinstance(message, MailMessage)
        assert message.as_bytes() == _stock(message)


FIXTURES = [path for folder in ("mail/fixtures", "data/bounces", "data/hostile")
            for path in sorted((Path(__file__).resolve().parent.parent / folder).rglob("*.eml"))]


def test_headers_of_mails_read_are_what_the_standard_library_reads() -> None:
    """Every header of real clients' mails and bounces, asked for twice, kept or not."""
    assert len(FIXTURES) >= 10
    for path in FIXTURES:
        ours, stock = (BytesParser(policy=policy).parsebytes(path.read_bytes()) for policy in (MAIL_POLICY, default))
        for part, stock_part in zip(ours.walk(), stock.walk()):
            for name in {key.lower() for key in stock_part.keys()}:
                for _ in range(2):
                    mine, theirs = part.get_all(name), stock_part.get_all(name)
                    assert [str(value) for value in mine] == [str(value) for value in theirs], (path.name, name)
                    assert [type(value).__name__ for value in mine] == [type(value).__name__ for value in theirs]
                    assert [[type(defect) for defect in value.defects] for value in mine] \
                        == [[type(defect) for defect in value.defects] for value in theirs], (path.name, name)
            assert part.get_content_type() == stock_part.get_content_type()


def test_compose_writes_what_it_writes_under_the_stock_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """compose() with the service's policy against compose() with ``email.policy.default`` itself
    (every header parsed when set): subjects of odd words, names, time zones (the boundaries and
    identifiers made the same in both)."""
    words = ["Game", "1:", "your", "turn", "(a)", "<b@c>", '"q"', "?=", "x" * 30, ",", ";", "\\", "Zoë", "[x]",
             "a=b", "%", "Spiel", "–", "'", "@", "=?utf-8?q?x?=", "#"]
    rng = random.Random(5)
    monkeypatch.setattr(composing, "secrets", types.SimpleNamespace(token_hex=lambda n: "0" * (2 * n)))
    for index in range(200):
        subject = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        now = datetime(2026, 11, 27, 12, 0, tzinfo=timezone(timedelta(minutes=rng.choice([0, 60, -330]))))
        letter = Letter(to_address="anna@example.org", to_name=rng.choice(["Anna", "Zoë", "A, B", ""]),
                        subject=subject, text="t\n", language="en", token="t0ken", stamp=(3, 4),
                        in_reply_to="<x.y@example.org>", references=("<a@b.c>",), html="<p>x</p>")
        ours = compose(letter, "pbem@example.org", "Backgammon", now if index % 5 else now.replace(tzinfo=None))
        with monkeypatch.context() as stock_policy:
            stock_policy.setattr(composing, "MAIL_POLICY", default)
            stock_policy.setattr(composing, "MailMessage", EmailMessage)
            stock = compose(letter, "pbem@example.org", "Backgammon", now if index % 5 else now.replace(tzinfo=None))
        assert ours.as_bytes() == EmailMessage.as_bytes(stock, policy=default), subject


@pytest.mark.parametrize(("name", "value"), [
    ("Date", "27 Nov 2026 12:00:00 +0000"), ("Date", "Fri, 27 Nov 2026 12:00:00 GMT"),
    ("Message-ID", "<a@b> <c@d>"), ("Subject", "a  b"), ("Subject", " a"), ("In-Reply-To", "<a@b>"),
    ("References", "<a@b> (c) <d@e>"), ("Content-ID", "<x.1@example.org>")])
def test_a_header_set_is_written_as_the_stock_policy_writes_it(name: str, value: str) -> None:
    ours, stock = MailMessage(policy=MAIL_POLICY), EmailMessage(policy=default)
    ours[name] = value
    stock[name] = value
    assert ours.as_bytes() == stock.as_bytes()


def test_a_header_the_stock_policy_refuses_is_refused() -> None:
    for message in (EmailMessage(policy=default), MailMessage(policy=MAIL_POLICY)):
        with pytest.raises(IndexError):
            message["Message-ID"] = "<,"


def test_a_queued_mail_is_stored_as_the_default_policy_writes_it() -> None:
    """Whatever policy a message to queue carries (SMTP's writes CRLF)."""
    for policy in (SMTP, default, MAIL_POLICY):
        message = EmailMessage(policy=policy)
        message["Subject"] = "x"
        message.set_content("a\nb\n")
        assert _mail_bytes(message) == EmailMessage.as_bytes(message, policy=default)
