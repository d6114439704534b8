"""What every family of commands shares: the limits, the error and the note, and the small
readers of a number, a clock, a switch or an address."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from pbem.addresses import is_plain_address
from pbem.config import parse_duration

MAX_COMMAND_CHARS = 400
"""A longer line is never a command: it is read as a note."""
MAX_DETAILS_CHARS = 80
"""What an error repeats of the line, at most."""
MAX_MATCH_LENGTH = 25
MAX_GAMES = 99
MAX_STAKE = 1000
MAX_VACATION_DAYS = 365
MOVE_CLOCK_RANGE = (timedelta(hours=1), timedelta(days=30))
TIME_BANK_RANGE = (timedelta(0), timedelta(days=90))


@dataclass(frozen=True)
class CommandError:
    """A line meant as a command that cannot be carried out as written (codes: the package doc)."""

    line: str
    code: str
    details: str = ""

    def __post_init__(self) -> None:
        if len(self.details) > MAX_DETAILS_CHARS:
            object.__setattr__(self, "details", self.details[: MAX_DETAILS_CHARS - 1] + "…")


@dataclass(frozen=True)
class Note:
    """Personal words for the opponent, passed on in their next mail."""

    text: str


SWITCHES = {**dict.fromkeys(("on", "an", "ein"), True), **dict.fromkeys(("off", "aus"), False)}
LANGUAGES = {
    **dict.fromkeys(("de", "deutsch", "german"), "de"),
    **dict.fromkeys(("en", "englisch", "english"), "en"),
}
CLOCK_WORDS = ("clock", "uhr")
STAKE_WORDS = ("stake", "einsatz")
LANGUAGE_WORDS = ("lang", "sprache")
KNOCKOUT_WORDS = ("knockout", "ko")


def first(arguments: list[str]) -> str:
    return arguments[0] if arguments else ""


def whole_number(text: str, maximum: int) -> int | None:
    """A number from 1 to ``maximum`` written in digits, or None."""
    return int(text) if text.isdigit() and text.isascii() and 1 <= int(text) <= maximum else None


def mail_address(address: str) -> bool:
    """A person's address as a command names it: plain, with a dot in its domain."""
    return is_plain_address(address) and "." in address.rpartition("@")[2]


def clocks(text: str) -> tuple[timedelta, timedelta | None] | None:
    """Move clock and time bank from ``3d/14d`` (or just ``3d``; the config's duration grammar),
    or None when not sensible."""
    parts = text.split("/")
    if len(parts) > 2:
        return None
    try:
        move_clock, time_bank = parse_duration(parts[0]), (parse_duration(parts[1]) if len(parts) == 2 else None)
    except ValueError:
        return None
    if not MOVE_CLOCK_RANGE[0] <= move_clock <= MOVE_CLOCK_RANGE[1]:
        return None
    if time_bank is not None and not TIME_BANK_RANGE[0] <= time_bank <= TIME_BANK_RANGE[1]:
        return None
    return move_clock, time_bank
