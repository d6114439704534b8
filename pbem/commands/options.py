"""The terms of a new game, as ``invite ADDRESS …`` and ``play assistant …`` write them: a format
and options in any order, the prize formats for credits among them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from pbem.commands.base import (CLOCK_WORDS, KNOCKOUT_WORDS, LANGUAGE_WORDS, LANGUAGES, MAX_GAMES,
                                MAX_MATCH_LENGTH, MAX_STAKE, STAKE_WORDS, CommandError, clocks, whole_number)
from pbem.rules.prizes import MATCH_POINTS, SERIES_GAMES, Prize, PrizeKind, amount
from pbem.rules.scoring import Format


@dataclass(frozen=True)
class GameOptions:
    """Format and options of an invitation; None clocks and language mean the service default."""

    kind: Format = Format.SINGLE
    length: int | None = 1
    """Match points for a match, number of games for a series, 1 for single, None for money."""
    stake: int = 1
    move_clock: timedelta | None = None
    time_bank: timedelta | None = None
    beaver: bool = False
    jacoby: bool = False
    rated: bool = True
    language: str | None = None
    settle: bool = False
    """A game lost on time is scored by the engine's equity of the position (money and single)."""
    prize: Prize | None = None
    """A prize game for credits (the format is then the prize's: ``Prize.match_rules``)."""


FORMAT_WORDS = {
    **dict.fromkeys(("single", "einzel"), Format.SINGLE),
    **dict.fromkeys(("match", "partie"), Format.MATCH),
    **dict.fromkeys(("money", "geld"), Format.MONEY),
    **dict.fromkeys(("games", "spiele"), Format.GAMES),
}
_FORMAT_LIMITS = {Format.MATCH: (MAX_MATCH_LENGTH, "match-length"), Format.GAMES: (MAX_GAMES, "games-count")}
_FLAG_WORDS = {
    **dict.fromkeys(("beaver", "biber"), "beaver"),
    "jacoby": "jacoby",
    **dict.fromkeys(("unrated", "ungewertet"), "unrated"),
}
_SETTLE_WORDS = ("settle", "abrechnen")
_SETTLE_FORMATS = (Format.MONEY, Format.SINGLE)
_PRIZE_WORDS = ("prize", "preis")
_PRIZE_AMOUNT_WORDS = {**dict.fromkeys(STAKE_WORDS, "stake"), **dict.fromkeys(("rate", "satz"), "rate"),
                       "limit": "limit"}
_AMOUNT_WITH_COMMA = re.compile(r"\b(?:stake|einsatz|rate|satz|limit)\s+[0-9.,]*[0-9],(?![0-9])")
"""A prize amount ending in a comma (``stake 2.5,``): a decimal comma with its decimals lost, or
a list's comma? Money is not guessed at: it is refused."""
_PRIZE_COUNTED_WORDS = {**dict.fromkeys(("games", "spiele"), "games"), **dict.fromkeys(("points", "punkte"), "match")}
"""The seed's own word order, ``Preis 3 Spiele`` and ``Preis 5 Punkte``: the number first."""
_PRIZE_FORMATS = {Format.GAMES: (PrizeKind.SERIES, SERIES_GAMES), Format.MATCH: (PrizeKind.MATCH, MATCH_POINTS),
                  Format.SINGLE: (PrizeKind.SINGLE, 1)}

TERM_WORDS = frozenset((*FORMAT_WORDS, *_FLAG_WORDS, *CLOCK_WORDS, *STAKE_WORDS, *KNOCKOUT_WORDS, *LANGUAGE_WORDS))
"""Words of a game's or a tournament's terms: a new ladder's name ends before them too (so that
``ladder new club clock 3d`` is refused as a term the ladder does not take, not named "club-clock-3d")."""
OPTION_KEYWORDS = {"en": ("settle", "prize"), "de": ("abrechnen", "preis")}
"""Option words that, first on a line, tell the language a mail is written in as a command does."""


def game_options(line: str, words: list[str]) -> GameOptions | CommandError:
    """Read format and options in any order; the checks that need all of them come last."""
    settings: dict[str, object] = {}
    money_only_word = settle_word = prize_word = ""
    amounts: dict[str, tuple[str, str]] = {}
    """Prize amounts by option (stake, rate, limit): (the word as written, the value)."""
    joined = " ".join(words)
    words = _prize_word_order([word for word in re.split(r"[\s;]+|,(?!\d)", joined) if word])
    prize_game = any(word in _PRIZE_WORDS for word in words)
    if prize_game and (unclear := _AMOUNT_WITH_COMMA.search(joined)):
        return CommandError(line, "prize-amount", unclear.group(0))
    position = 0
    while position < len(words):
        word = words[position]
        value = words[position + 1] if position + 1 < len(words) else ""
        position += 1
        if word in _PRIZE_WORDS:
            if value not in FORMAT_WORDS or FORMAT_WORDS[value] is Format.MONEY or prize_word:
                return CommandError(line, "prize", value)
            prize_word = word
        elif word in _PRIZE_AMOUNT_WORDS and (prize_game or word not in STAKE_WORDS):
            if _PRIZE_AMOUNT_WORDS[word] in amounts:
                return CommandError(line, "prize-repeated", word)
            amounts[_PRIZE_AMOUNT_WORDS[word]] = (word, value)
            position += 1
        elif word in FORMAT_WORDS:
            if "kind" in settings:
                return CommandError(line, "format-conflict", word)
            kind = settings["kind"] = FORMAT_WORDS[word]
            if kind in _FORMAT_LIMITS:
                maximum, code = _FORMAT_LIMITS[kind]
                if not (length := whole_number(value, maximum)):
                    return CommandError(line, code, value)
                settings["length"] = length
                position += 1
            else:
                settings["length"] = None if kind is Format.MONEY else 1
        elif word in _FLAG_WORDS:
            flag = _FLAG_WORDS[word]
            settings["rated" if flag == "unrated" else flag] = flag != "unrated"
            money_only_word = money_only_word or (word if flag != "unrated" else "")
        elif word in _SETTLE_WORDS:
            settings["settle"] = True
            settle_word = word
        elif word in CLOCK_WORDS:
            read = clocks(value)
            if read is None:
                return CommandError(line, "clock", value)
            settings["move_clock"], settings["time_bank"] = read
            position += 1
        elif word in STAKE_WORDS:
            if not (stake := whole_number(value, MAX_STAKE)):
                return CommandError(line, "stake", value)
            settings["stake"] = stake
            money_only_word = money_only_word or word
            position += 1
        elif word in LANGUAGE_WORDS:
            if value not in LANGUAGES:
                return CommandError(line, "language", value)
            settings["language"] = LANGUAGES[value]
            position += 1
        else:
            return CommandError(line, "unknown-option", word)
    if prize_word:
        prize = _prize(line, settings, amounts)
        if isinstance(prize, CommandError):
            return prize
        settings["prize"] = prize
    elif amounts:
        return CommandError(line, "prize-only", next(iter(amounts.values()))[0])
    if money_only_word and settings.get("kind") is not Format.MONEY:
        return CommandError(line, "money-only", money_only_word)
    if settle_word and settings.get("kind", Format.SINGLE) not in _SETTLE_FORMATS:
        return CommandError(line, "settle-format", settle_word)
    return GameOptions(**settings)  # type: ignore[arg-type]  # the keys are GameOptions fields, set above


def _prize_word_order(words: list[str]) -> list[str]:
    """``prize 3 games``/``preis 5 punkte`` (the seed's names) as ``prize games 3``/``prize match 5``."""
    for position, word in enumerate(words[:-2]):
        if word in _PRIZE_WORDS and words[position + 1].isdigit() and words[position + 2] in _PRIZE_COUNTED_WORDS:
            words = [*words[:position + 1], _PRIZE_COUNTED_WORDS[words[position + 2]], words[position + 1],
                     *words[position + 3:]]
    return words


def _prize(line: str, settings: dict[str, object], amounts: dict[str, tuple[str, str]]) -> Prize | CommandError:
    """The prize of ``prize FORMAT …``: ``games 3`` or ``match 5`` with a stake, ``single`` with a
    rate and a limit (which of them the server allows is the service's to check)."""
    kind, length = _PRIZE_FORMATS[Format(str(settings["kind"]))]
    if settings.get("length", 1) != length:
        return CommandError(line, "prize", str(settings.get("length")))
    needed = ("rate", "limit") if kind is PrizeKind.SINGLE else ("stake",)
    for option, (word, _) in amounts.items():
        if option not in needed:
            return CommandError(line, "prize-amount", word)
    values = {}
    for option in needed:
        if option not in amounts:
            return CommandError(line, "prize-amount", option)
        word, text = amounts[option]
        try:
            values[option] = amount(text)
        except ValueError:
            return CommandError(line, "prize-amount", f"{word} {text}".strip())
        if not 0 < values[option] <= MAX_STAKE:
            return CommandError(line, "prize-amount", f"{word} {text}")
    return Prize(kind, **values)
