"""The email policy the service reads and writes mail with, and the bytes of a mail it sends.

It is the standard library's ``email.policy.default`` but for the work it repeats in every
mail; the header objects, their parsing and folding, and the bytes written are the stock ones
(``tests/test_mail_policy.py`` compares them with the standard library's over many mails):

* the stock header registry builds a new class for every header it parses or sets (``type(...)``
  on each call, some 40 µs), dozens of times per mail; this one builds each class once;
* a header set to a value that recurs in every mail (``MIME-Version: 1.0``, ``Content-Type:
  text/plain; charset="utf-8"``, …; :data:`RECURRING_FIELDS`) is parsed once and kept, and so
  is its folded form: header objects are immutable strings, shared safely;
* a plain header of a letter (a short ASCII ``Subject``, ``In-Reply-To``, …; :data:`PLAIN_FIELDS`) is kept as the text set, as the headers of a mail read are, and parsed
  only if read: the stock policy would write it exactly so;
* a header of a mail read is parsed once however often it is asked for (the ``email`` package
  parses a stored header at every look: a mail's ``Content-Type`` a dozen times while it is
  read), and a value that recurs from mail to mail (``text/plain; charset=UTF-8``) once for all
  (:data:`READ_KEPT` values of at most :data:`READ_KEPT_LENGTH` characters);
* its messages (:class:`MailMessage`) write each part's body with one write rather than one per
  line (a board picture is some 500 lines of base64) in ``as_bytes``: the same bytes.
"""

from __future__ import annotations

import re
from email.generator import BytesGenerator
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage
from email.policy import EmailPolicy
from functools import lru_cache
from io import BytesIO
from typing import TYPE_CHECKING, Any

RECURRING_FIELDS = frozenset({"mime-version", "content-type", "content-transfer-encoding", "content-disposition",
                              "content-language", "auto-submitted", "x-auto-response-suppress"})
"""Fields whose values recur from mail to mail (a Content-Type with a MIME boundary excepted)."""
KEPT = 1024
"""How many recurring header values are kept, parsed and folded."""
PLAIN_FIELDS = frozenset({"subject", "in-reply-to", "references", "content-id"})
"""Fields kept as the text set when it is plain (:func:`_written_as_it_is`): parsed only if read.
Unstructured fields only: the stock policy writes a ``Date`` or a ``Message-ID`` as it parsed it
(``27 Nov`` becomes ``Fri, 27 Nov``), and refuses some."""
READ_KEPT = 512
READ_KEPT_LENGTH = 200
_FOLDED = "_pbem_folded"
"""The attribute in which a kept header keeps its folded bytes (it is made by this module)."""


class _KeptHeaderClasses(HeaderRegistry):
    """A header registry that makes each header's class once per field name."""

    def __init__(self) -> None:
        super().__init__()
        self._made: dict[str, type[BaseHeader]] = {}

    def __getitem__(self, name: str) -> type[BaseHeader]:
        key = name.lower()
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = super().__getitem__(name)
        return made


if TYPE_CHECKING:  # generic in typeshed only
    _EmailPolicy = EmailPolicy[EmailMessage]
else:
    _EmailPolicy = EmailPolicy


class _MailPolicy(_EmailPolicy):
    """``email.policy.default`` that parses a recurring header value once (see the module docstring)."""

    def header_store_parse(self, name: str, value: Any) -> tuple[str, Any]:
        if isinstance(value, str) and not hasattr(value, "name"):
            field = name.lower()
            if field in RECURRING_FIELDS and "boundary=" not in value:
                return name, kept_header(self, name, value)
            if field in PLAIN_FIELDS and _written_as_it_is(name, value, self.max_line_length):
                return name, value
        return super().header_store_parse(name, value)

    def header_fetch_parse(self, name: str, value: Any) -> Any:
        if isinstance(value, str) and not hasattr(value, "name") and len(value) <= READ_KEPT_LENGTH:
            return _read_header(self, name, value)
        return super().header_fetch_parse(name, value)

    def fold_binary(self, name: str, value: Any) -> bytes:
        folded: dict[tuple[Any, ...], bytes] | None = getattr(value, _FOLDED, None)
        if folded is None:
            return super().fold_binary(name, value)
        key = (name, self.linesep, self.max_line_length, self.utf8, self.cte_type)  # all that folding depends on
        if key not in folded:
            folded[key] = super().fold_binary(name, value)
        return folded[key]


def header_to_keep(policy: EmailPolicy[Any], name: str, value: str) -> BaseHeader:
    """The header ``name: value`` parsed, to be kept and shared by the mails it recurs in: it
    keeps its folded bytes too.  The caller keeps it (:func:`kept_header` for the fields every
    mail has; the composer its own cache of the players' addresses, so that many players never
    push the fixed fields out)."""
    header: BaseHeader = EmailPolicy.header_store_parse(policy, name, value)[1]
    setattr(header, _FOLDED, {})
    return header


kept_header = lru_cache(maxsize=KEPT)(header_to_keep)
""":func:`header_to_keep`, kept for the values of :data:`RECURRING_FIELDS`."""


_PLAIN_VALUE = re.compile(r"[!-~]+(?: [!-~]+)*")
"""Printable ASCII words with single spaces between them."""


def _written_as_it_is(name: str, value: str, max_line_length: int | None) -> bool:
    """Would the stock policy write ``name: value`` exactly as set?  So it does for printable
    ASCII words with single spaces on one short line, with no encoded word to decode: the value
    is then kept as text, as the stock policy keeps the headers of a mail it reads, and parsed
    only if asked for (the headers of the service's own letters, set and never read again)."""
    return (len(name) + 2 + len(value) <= (max_line_length or 78) and "=?" not in value
            and _PLAIN_VALUE.fullmatch(value) is not None)


@lru_cache(maxsize=READ_KEPT)
def _read_header(policy: EmailPolicy, name: str, value: str) -> Any:
    """A header of a mail read, parsed as the stock policy parses it (kept: see the module docstring)."""
    return EmailPolicy.header_fetch_parse(policy, name, value)


_LINE_END = re.compile(r"\r\n|\r|\n")


class _BodyAtOnce(BytesGenerator):
    """The stock generator, but a body's lines go out with one write (the same bytes)."""

    def _write_lines(self, lines: str) -> None:
        if lines:
            # A body the service composed has its lines ended by "\n" already: written as it is.
            same = self._NL == "\n" and "\r" not in lines  # type: ignore[attr-defined]
            self.write(lines if same else _LINE_END.sub(self._NL, lines))  # type: ignore[attr-defined]


class MailMessage(EmailMessage):
    """The messages of :data:`MAIL_POLICY`: :meth:`as_bytes` writes each body at once."""

    def as_bytes(self, unixfrom: bool = False, policy: Any = None) -> bytes:
        out = BytesIO()
        _BodyAtOnce(out, mangle_from_=False, policy=self.policy if policy is None else policy).flatten(
            self, unixfrom=unixfrom)
        return out.getvalue()


MAIL_POLICY = _MailPolicy(header_factory=_KeptHeaderClasses(), message_factory=MailMessage)
"""``email.policy.default`` with header classes and recurring header values kept, and messages
that write their bodies at once."""
