"""What a player newly wrote in a reply: quotes, attributions, signatures and our own mail cut away.

A reply carries much more than the player's words: the quoted service mail with its board, the
mail client's attribution line ("On … wrote:", "Am … schrieb …:", "Le … a écrit :") or Outlook
header block, a signature.  Only the newly written text may be read as commands (SPEC §3).

The new text is found in this order: the text (unflowed, RFC 3676, so that a command never
merges with the line below it); the original starts at an Outlook header block, an "Original
Message" line, a run of lines of the service mail being answered, or an attribution line
(every language mail-parser-reply knows, and any line naming the service's address, name or
Message-IDs): an attribution is dropped when a '>' quote follows it and ends the text when an
unquoted original does; '>' lines go; a signature ends it unless a command still follows; the
service's own board and ID lines go.  At most :data:`MAX_NEW_LINES` lines are read, and every
pattern runs on bounded windows of a line or two.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from html import unescape as unescape_html

from mailparser_reply.constants import GENERIC_MAIL_SEPARATOR, MAIL_LANGUAGES
from mailparser_reply.parser import EmailMessage as ReplyParser

from pbem.mail.headers import TOKEN_MESSAGE_ID
from pbem.mail.html_text import MAX_HTML_CHARS, html_to_text

MAX_BODY_CHARS = 256 * 1024
"""Decoded text of the body part read."""
MAX_SCANNED_LINES = 5000
"""Lines of the body looked at, quotes and blank lines included."""
MAX_NEW_LINES = 60
"""Non-blank lines of new text read (as Mailman's ``email_commands_max_lines``); more are ignored."""
MAX_WINDOW_CHARS = 160
"""An attribution line (or two lines of one) is never longer: longer lines are not matched
against the patterns (a line naming the service's address or name is found at any length)."""
MAX_PATTERN_CHECKS = 40
"""Attribution and header-block patterns tried per mail; each costs up to about a millisecond."""
MAX_OWN_PLACES = 8
"""Places of one line in our own mail tried as the start of a quoted run (a blank-free mail repeats
few lines; this bounds the work for one that repeats many)."""
MAX_OWN_LINE_CHARS = 4000
"""A line compared with the lines of our own mail as a reader sees it, at most (ours are shorter)."""

_REPLY_LANGUAGES = tuple(language for language, patterns in MAIL_LANGUAGES.items() if patterns.get("wrote_header"))
_EXTRA_ATTRIBUTIONS = (
    r"^(?:> ?)*Em\s.{1,160}\sescreveu:$",  # Portuguese (Gmail)
    r"^(?:> ?)*El\s.{1,160}\sescribi[óo]:$",  # Spanish with one space (Gmail)
    r"^(?:> ?)*W dniu\s.{1,160}\s(?:napisał(?:\(a\))?|nadesłał):$",  # Polish (Gmail)
    r"^(?:> ?)*Op\s.{1,160}\sschreef\s.{1,160}:$",  # Dutch (Gmail)
    r"^(?:> ?)*.{1,160}\shat\s.{1,160}\sFolgendes geschrieben:$",  # Yahoo, German
    r"^(?:> ?)*.{1,160}\sschrieb am\s.{1,160}:$",
    r"^(?:> ?)*-{2,} ?On\s.{1,160}\swrote ?-{2,}$",  # Zoho
)
_ATTRIBUTION = re.compile(
    "|".join([MAIL_LANGUAGES[language]["wrote_header"] for language in _REPLY_LANGUAGES] + list(_EXTRA_ATTRIBUTIONS)),
    re.MULTILINE | re.IGNORECASE,
)
"""'On … wrote:' lines in every language mail-parser-reply knows, and a few it misses; they are
only ever matched against a window of one or two lines of at most MAX_WINDOW_CHARS."""
_OUTLOOK_SEPARATOR = r"^_{32,}$"
"""Outlook's line above its header block, which the parser misses right after a text line."""
_HEADER_BLOCK = re.compile(
    "|".join(
        [MAIL_LANGUAGES[language]["from_header"] for language in _REPLY_LANGUAGES if "from_header" in MAIL_LANGUAGES[language]]
        + [GENERIC_MAIL_SEPARATOR, _OUTLOOK_SEPARATOR]
    ),
    re.MULTILINE | re.IGNORECASE,
)
"""Outlook 'From:/Sent:/To:/Subject:' (or 'Von:/Gesendet:/An:/Betreff:', …) blocks and
'----- Original Message -----': the original follows unquoted, so everything after it goes."""
_HEADER_BLOCK_START = re.compile(r"^[* ]*(?:[^\W\d]{2,20}(?: [^\W\d]{2,20})?) ?:|^-{5,}|^_{32,}$")
"""A cheap first test before _HEADER_BLOCK runs on a window of lines: 'Word:' or a rule."""
_HEADER_BLOCK_LINES = 5

_GERMAN_SENT_FROM = re.compile(r"^von meinem \S+(?: \S+){0,2} gesendet$", re.IGNORECASE)
"""Apple's 'Von meinem iPhone gesendet', which the parser knows only in English."""

_SERVICE_LINE = re.compile(
    r"^(?:(?:position|match)\s+id\s*:\s*\S+|dice (?:commitment|seed)\s*:\s*\S+|[v^]?[|+].*[|+].*|(?:\d{1,2} +){5,}\d{1,2})$",
    re.IGNORECASE,
)
"""The service's own identifier lines, board frame lines and point-number rows, when a client
quotes without '>'."""


@dataclass(frozen=True)
class ReadingContext:
    """What the service knows that helps to read a mail; mail/ itself knows nothing of games.

    ``is_command`` tells a command line (for signatures and unflowing); ``quoted_text`` gives
    the text of the service's own mail named by the given Message-IDs (newest first), so that
    an unmarked quote of it is cut away; ``written_in`` tells the language of a new text (or
    subject) by its words, for a mail that declares none of ours.
    """

    service_address: str
    service_name: str = ""
    max_bytes: int | None = None
    is_command: Callable[[str], bool] = field(default=lambda line: False)
    quoted_text: Callable[[Sequence[str]], str | None] = field(default=lambda message_ids: None)
    trusted_authserv_id: str | None = None
    """The authserv-id of the operator's own server, whose Authentication-Results are believed."""
    written_in: Callable[[str, str], str | None] = field(default=lambda text, subject: None)


def unflow(text: str, context: ReadingContext, delete_space: bool = False) -> str:
    """Join the soft line breaks of format=flowed (RFC 3676), keeping quote depths apart.

    A paragraph also ends after a command line, before a line that alone is a command, and
    before an attribution or header line: a client that leaves a space after ``accept`` (or
    after "Good luck!") must not glue it to the line below.  At most MAX_SCANNED_LINES lines.
    """
    patterns = _Patterns(context)
    is_command = context.is_command
    paragraphs: list[tuple[int, list[str]]] = []
    joining = False
    for line in text.split("\n", MAX_SCANNED_LINES)[:MAX_SCANNED_LINES]:
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:].removeprefix(" ")
        if (joining and paragraphs and paragraphs[-1][0] == depth and not is_command(content.strip())
                and not patterns.opens_original(content.strip())):
            paragraphs[-1][1].append(content)
        else:
            paragraphs.append((depth, [content]))
        joining = content.endswith(" ") and content != "-- "
        if joining and delete_space:
            paragraphs[-1][1][-1] = content[:-1]
        if joining and len(paragraphs[-1][1]) == 1 and is_command(content.strip()):
            joining = False
    return "\n".join(f"{'>' * depth} {''.join(pieces)}" if depth else "".join(pieces) for depth, pieces in paragraphs)


_SIGNATURE_TAIL = r"(.|\s)*)"


def _signature_pattern(languages: Sequence[str]) -> re.Pattern[str]:
    """mail-parser-reply's signature pattern, without its tail that swallows the rest of the
    text: it is matched at the start of one line at a time."""
    pattern: re.Pattern[str] = ReplyParser(text="", languages=list(languages), keep_hyphen_lists=True).SIGNATURE_REGEX
    if pattern.pattern.endswith(_SIGNATURE_TAIL):
        return re.compile(pattern.pattern[: -len(_SIGNATURE_TAIL)] + ")", pattern.flags)
    return pattern


_SIGNATURE = _signature_pattern(_REPLY_LANGUAGES)


class _Patterns:
    """The pattern tests of one mail, within a budget of MAX_PATTERN_CHECKS costly matches."""

    def __init__(self, context: ReadingContext) -> None:
        self.context = context
        self.checks_left = MAX_PATTERN_CHECKS
        local, _, domain = context.service_address.lower().rpartition("@")
        self._service_address = re.compile(
            rf"(?<![\w.+-]){re.escape(local)}(?:\+[^@\s]*)?@{re.escape(domain)}(?![\w-])") if local else None

    def _afford(self) -> bool:
        self.checks_left -= 1
        return self.checks_left >= 0

    def is_attribution(self, window: str) -> bool:
        """'On … wrote:' in any known language (a window of one or two lines)."""
        return (len(window) <= MAX_WINDOW_CHARS and window.rstrip().endswith((":", "-")) and self._afford()
                and bool(_ATTRIBUTION.match(window)))

    def is_header_block(self, lines: list[str], index: int) -> bool:
        """An Outlook header block ('From:/Sent:/To:', in any known language) starts here."""
        if not _HEADER_BLOCK_START.match(lines[index][:MAX_WINDOW_CHARS]) or not self._afford():
            return False
        window = "\n".join(each[:MAX_WINDOW_CHARS] for each in lines[index : index + _HEADER_BLOCK_LINES])
        return bool(_HEADER_BLOCK.match(window))

    def opens_original(self, line: str) -> bool:
        return bool(self.names_service(line) or self.is_attribution(line) or self.is_header_block([line], 0))

    def names_service(self, line: str) -> bool:
        """The line names the service's address (any +tag), one of its Message-IDs, or its name
        at the end of an attribution ("…, Backgammon by Mail wrote:")."""
        lowered = line.lower()
        if self._service_address is not None and (self._service_address.search(lowered)
                                                  or TOKEN_MESSAGE_ID.search(lowered)):
            return True
        name = self.context.service_name.lower()
        return bool(name) and name in lowered and lowered.rstrip().endswith((":", "-"))


def new_text(body: str, context: ReadingContext | None = None, quoted: str | None = None) -> str:
    """Only what the player newly wrote: no quote, attribution, header block, signature or board.

    ``quoted`` is the text of the service mail being answered, if known: a run of its lines
    quoted without '>' is cut like any other original.
    """
    context = context or ReadingContext("")
    patterns = _Patterns(context)
    lines = [line.strip() for line in body[:MAX_BODY_CHARS].replace("\r\n", "\n").split("\n", MAX_SCANNED_LINES)]
    del lines[MAX_SCANNED_LINES:]
    lines = _cut_original(lines, patterns, OwnText(quoted or ""))
    lines = [line for line in lines if not line.startswith(">")]
    lines = _cut_signature(lines, context.is_command)
    lines = [line for line in lines if not _SERVICE_LINE.match(line[:MAX_WINDOW_CHARS])]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _cut_original(lines: list[str], patterns: _Patterns, own_text: OwnText) -> list[str]:
    """Lines up to the unquoted original (at most MAX_NEW_LINES of them not quoted); attribution
    lines that introduce a '>' quote are dropped, and the text after that quote is kept."""
    kept: list[str] = []
    read = 0
    index = 0
    while index < len(lines) and read < MAX_NEW_LINES:
        line = lines[index]
        if line.startswith(">") or not line:
            kept.append(line)
            index += 1
            continue
        span = _original_span(lines, index, patterns, own_text)
        if span:
            following = next((later for later in lines[index + span:] if later), "")
            if not following.startswith(">"):
                break
            index += span
            continue
        kept.append(line)
        read += 1
        index += 1
    return kept


_TAG = re.compile(r"<[^<>]{0,1000}>")


def _as_seen(line: str) -> str:
    """A line as a reader sees it: HTML tags left out, entities decoded, spaces made single.
    A reply's HTML source read as text (its Content-Type damaged) quotes our mail this way.
    A line longer than MAX_OWN_LINE_CHARS is no line of ours and is left as it is (bounded work)."""
    if len(line) > MAX_OWN_LINE_CHARS:
        return line
    if "<" in line or "&" in line:
        line = unescape_html(_TAG.sub(" ", line))
    return " ".join(line.split())


class OwnText:
    """The text of the service mail being answered, to recognise it quoted without '>'.

    A player copies lines of our mail (the example move, a command) and writes them as their own;
    such a line must never be cut because it also stands in our mail.  So only a run of lines that
    follow each other in our mail counts as a quote: three of them, or two when one is a line of
    the board or the identifiers, which nobody types.  Blank lines are passed over on both sides.

    Lines are compared as a reader sees them (:func:`_as_seen`): when a reply's quote has lost
    its markers, as HTML whose source arrives as text after header damage, our mail is still
    known by its run of lines, and the example move in it is not played.  ``text`` may hold our
    mail's plain text and the text of its HTML part one after the other.
    """

    RUN = 3
    SEARCHED = 6 * RUN
    """Lines after a line of ours searched for the rest of its run (tags alone are no lines)."""

    def __init__(self, text: str) -> None:
        self.lines = [seen for line in text.split("\n") if (seen := _as_seen(line))]
        self.places: dict[str, list[int]] = {}
        for place, line in enumerate(self.lines):
            self.places.setdefault(line, []).append(place)

    def starts_quote(self, lines: list[str], index: int) -> bool:
        """``lines[index]`` begins a run of our mail's lines, quoted without '>'."""
        places = self.places.get(_as_seen(lines[index]))
        if not places:
            return False
        following = [seen for line in lines[index + 1 : index + self.SEARCHED]
                     if (seen := _as_seen(line))][: self.RUN - 1]
        for place in places[:MAX_OWN_PLACES]:
            run = 1
            for offset, line in enumerate(following, start=1):
                if place + offset >= len(self.lines) or self.lines[place + offset] != line:
                    break
                run += 1
            board = any(_SERVICE_LINE.match(line[:MAX_WINDOW_CHARS]) for line in self.lines[place : place + run])
            if run >= self.RUN or (run == 2 and board):
                return True
        return False


def _original_span(lines: list[str], index: int, patterns: _Patterns, own_text: OwnText) -> int:
    """How many lines from ``index`` introduce the original (0: none do)."""
    line = lines[index]
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if own_text.starts_quote(lines, index):
        return 1  # the service's own mail, quoted without '>'
    if patterns.names_service(line):
        return 1
    if following and patterns.names_service(following) and not patterns.context.is_command(line):
        if line.endswith(("<", "(", ",")) or patterns.is_attribution(f"{line} {following}"):
            return 2  # an attribution wrapped before the service's address
    if patterns.is_attribution(line):
        return 1
    if following.rstrip().endswith((":", "-")) and patterns.is_attribution(f"{line}\n{following}"):
        return 2
    return 1 if patterns.is_header_block(lines, index) else 0


def _cut_signature(lines: list[str], is_command: Callable[[str], bool]) -> list[str]:
    """Cut at the first signature after which the player gives no command.

    Closing words ("Thanks, good game!", "Grüße an Anna") often stand above a command, and a
    command must never be lost to a signature.  One pass: the last command line is found first.
    """
    last_command = max((index for index, line in enumerate(lines) if line and is_command(line)), default=-1)
    for index in range(last_command + 1, len(lines)):
        line = lines[index]
        if not line or len(line) > MAX_WINDOW_CHARS:
            continue
        window = "\n" + "\n".join(lines[index : index + 2])[:MAX_WINDOW_CHARS]
        if _GERMAN_SENT_FROM.match(line) or _SIGNATURE.match(window, 1 if index else 0):
            return lines[:index]
    return lines




def quotable(text: str, html: str | None) -> str:
    """What a reply may quote of one of our mails: its text part, then the text its HTML part
    shows (laid out as an HTML reply is read), so that either, quoted without markers, is known
    by its run of lines (:class:`OwnText`)."""
    return text if html is None else f"{text}\n\n{html_to_text(html[:MAX_HTML_CHARS])}\n"


def quotable_of_sent(raw: bytes) -> str | None:
    """:func:`quotable` of one of our stored mails (None: it has no text part)."""
    message = BytesParser(policy=default_policy).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    body, html = message.get_body(preferencelist=("plain",)), message.get_body(preferencelist=("html",))
    if body is None:
        return None
    return quotable(str(body.get_content()), None if html is None else str(html.get_content()))


class SentTexts:
    """The text and HTML parts of the mails this process queued lately, by Message-ID (a reply
    quotes the last one; another daemon's, or an older one, is read from its stored mail by
    :func:`quotable_of_sent`)."""

    def __init__(self, size: int) -> None:
        self._texts: OrderedDict[str, tuple[str, str | None]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def keep(self, message_id: str, text: str, html: str | None) -> None:
        with self._lock:
            # the text as set_content stores it
            self._texts[message_id] = ("".join(line + "\n" for line in text.splitlines()), html)
            while len(self._texts) > self._size:
                self._texts.popitem(last=False)

    def get(self, message_id: str) -> str | None:
        with self._lock:
            kept = self._texts.get(message_id)
        return None if kept is None else quotable(*kept)
