"""A corpus of hostile mails, each as large as ``max_bytes`` allows: the shapes that once stalled
or killed the daemon (long attribution-like lines, thousands of signatures, encoded words in
Subject and From, deep MIME nesting, 20,000 commands, …).  ``tests/service/test_hostile_corpus.py``
runs every one through the service; ``bench/hostile_bench.py`` prints the worst time and memory.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

SENDER = "Eve <eve@example.org>"


def _mail(body: str, *, headers: str = "", subject: str = "hello", sender: str = SENDER, to: str,
          content_type: str = "text/plain; charset=utf-8") -> bytes:
    head = headers or f"From: {sender}\nTo: {to}\nSubject: {subject}"
    return (f"{head}\nMessage-ID: <corpus@example.org>\nMIME-Version: 1.0\nContent-Type: {content_type}\n\n{body}"
            ).replace("\n", "\r\n").encode("utf-8", errors="surrogateescape")


def _fill(unit: str, size: int, tail: str = "") -> str:
    """``unit`` repeated to about ``size`` bytes as sent (line ends become CRLF), then ``tail``."""
    sent = len(unit.encode("utf-8", errors="surrogateescape")) + unit.count("\n")
    return unit * max(1, (size - len(tail) - 1) // sent) + tail


def hostile_mails(to: str, max_bytes: int) -> Iterator[tuple[str, bytes]]:
    """(name, raw mail) pairs, each mail at most about ``max_bytes`` long, written to ``to``."""
    room = max_bytes - 2_000
    yield "long-on-line-16k", _mail("On " + "a " * 8_000 + "\nroll\n", to=to)
    yield "long-on-line", _mail(_fill("On a a a ", room, "\nroll\n"), to=to)
    yield "thanks-before-command", _mail(_fill("Thanks,\n", room, "roll\n"), to=to)
    yield "dashes-before-command", _mail(_fill("-- \n", room, "roll\n"), to=to)
    yield "attribution-lines", _mail(_fill("On Sun, Nov 22 Backgammon wrote:\n", room, "roll\n"), to=to)
    yield "header-block-lines", _mail(_fill("From: x\nSent: y\n", room, "roll\n"), to=to)
    yield "quoted-lines", _mail(_fill("> > > quoted\n", room, "roll\n"), to=to)
    yield "help-lines", _mail(_fill("help\n", room), to=to)
    yield "board-lines", _mail(_fill("board\n", room), to=to)
    yield "move-lines", _mail(_fill("24/18 13/11 8/5* 6/5\n", room), to=to)
    yield "one-long-line", _mail(_fill("x", room), to=to)
    yield "blank-lines", _mail(_fill("\n", room, "roll\n"), to=to)
    yield "spaces", _mail(_fill(" ", room, "roll\n"), to=to)
    words = _fill("=?utf-8?q?=C3=A4?= ", min(room, 448_000))
    yield "subject-encoded-words", _mail("roll\n", subject=words, to=to)
    yield "from-encoded-words", _mail("roll\n", sender=f"{words} <eve@example.org>", to=to)
    yield "header-encoded-words", _mail("roll\n", headers=f"From: {SENDER}\nTo: {to}\nX-Junk: {_fill('=?utf-8?b?w6Q=?= ', min(room, 280_000))}", to=to)
    yield "many-headers", _mail("roll\n", headers=f"From: {SENDER}\nTo: {to}\n" + _fill("X-A: b\n", min(room, 60_000)), to=to)
    yield "huge-references", _mail("roll\n", headers=f"From: {SENDER}\nTo: {to}\nReferences: " + _fill("<a@b.c> ", min(room, 60_000)), to=to)
    yield "many-recipients", _mail("roll\n", headers=f"From: {SENDER}\nTo: " + _fill(f"{to}, ", min(room, 60_000), to), to=to)
    nested = "".join(f"--b{depth}\nContent-Type: multipart/mixed; boundary=b{depth + 1}\n\n" for depth in range(5_000))
    yield "deep-multipart", _mail(nested[:room], content_type="multipart/mixed; boundary=b0", to=to)
    yield "deep-rfc822", _mail(_fill("Content-Type: message/rfc822\n\n", room), content_type="message/rfc822", to=to)
    parts = _fill("--b\nContent-Type: text/plain\n\nroll\n", room, "--b--\n")
    yield "many-parts", _mail(parts, content_type="multipart/mixed; boundary=b", to=to)
    html = _fill("<div><blockquote>", room // 2, "roll")
    yield "nested-html", _mail(html, content_type="text/html; charset=utf-8", to=to)
    for name, unit in (("html-unclosed-tags", "<a"), ("html-unclosed-comments", "<!--"), ("html-end-tags", "</"),
                       ("html-processing", "<?"), ("html-empty-tags", "<i> </i>"), ("html-spaces", " "),
                       ("html-nbsp", "&nbsp;")):
        body = _fill(unit, room, "x") if unit.startswith("<") else "<pre>a" + _fill(unit, room, "x</pre>")
        yield name, _mail(body, content_type="text/html; charset=utf-8", to=to)
    yield "content-type-parameters", _mail("roll\n", content_type="text/plain; " + _fill("a=b; ", 900), to=to)
    yield "flowed-attribution-like", _mail(_fill("On " * 53 + "On: \n", room, "roll\n"),
                                           content_type="text/plain; format=flowed", to=to)
    yield "flowed-soft-breaks", _mail(_fill("a \n", room, "roll\n"), content_type="text/plain; format=flowed; delsp=yes", to=to)
    attachment = base64.encodebytes(b"\0" * (room * 3 // 4 - 1_000)).decode()
    yield "big-attachment", _mail(
        f"--b\nContent-Type: text/plain\n\nroll\n--b\nContent-Type: application/octet-stream\n"
        f"Content-Transfer-Encoding: base64\n\n{attachment}--b--\n", content_type="multipart/mixed; boundary=b", to=to)
    yield "nul-bytes", _mail(_fill("\0roll\0\n", room), to=to)
    yield "bad-utf8", _mail(_fill("\udcff\udcfe roll\n", room), to=to)
    yield "over-the-limit", _mail(_fill("roll\n", max_bytes + 10_000), to=to)
