"""The mail's DATA as aiosmtplib would prepare it: every line end CRLF, a CRLF at the end, and a
dot that starts a line doubled, by :mod:`pbem.mail.smtp`'s quicker steps (what a real server
receives is compared in ``tests/mail_server/test_connections.py``)."""

from __future__ import annotations

import aiosmtplib.protocol
import aiosmtplib.smtp
from hypothesis import given
from hypothesis import strategies as st

from pbem.mail.smtp import AIOSMTPLIB_OWN_DATA, _DotStuffing, crlf_lines

MAILS = st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b".", b"..", b"a", b" ", b"\xc3\xa4", b"\0"]),
                 max_size=40).map(b"".join)
"""Bytes made mostly of what the two steps look at: line ends and dots."""


def test_aiosmtplib_prepares_data_by_the_quicker_steps():
    assert AIOSMTPLIB_OWN_DATA is not None, "aiosmtplib changed: check pbem.mail.smtp._quicker_data"
    assert aiosmtplib.protocol.normalize_message_line_endings is crlf_lines
    assert getattr(aiosmtplib.smtp, "normalize_message_line_endings") is crlf_lines
    assert isinstance(aiosmtplib.protocol.PERIOD_REGEX, _DotStuffing)


@given(MAILS)
def test_line_ends_are_aiosmtplibs_own(mail):
    assert AIOSMTPLIB_OWN_DATA is not None
    own_line_ends, _ = AIOSMTPLIB_OWN_DATA
    assert crlf_lines(mail) == own_line_ends(mail)


@given(MAILS, st.sampled_from([b"..", b"X", b""]))
def test_dot_stuffing_is_aiosmtplibs_own(mail, replacement):
    """On any bytes, not only on lines already ended by CRLF; aiosmtplib replaces with ``..``."""
    assert AIOSMTPLIB_OWN_DATA is not None
    _, own_dots = AIOSMTPLIB_OWN_DATA
    assert _DotStuffing.sub(replacement, mail) == own_dots.sub(replacement, mail)
    assert _DotStuffing.sub(b"..", crlf_lines(mail)) == own_dots.sub(b"..", crlf_lines(mail))


def test_examples_by_hand():
    assert crlf_lines(b"a\nb\rc\r\nd") == b"a\r\nb\r\nc\r\nd\r\n"
    assert crlf_lines(b"\r\r\n") == b"\r\n\r\n"
    assert _DotStuffing.sub(b"..", b".\r\n..\r\na.\r\n.") == b"..\r\n...\r\na.\r\n.."
