"""A mail's new text → the commands it gives, in order (SPEC §3).

Every line of the new text is one of three things:

* a **command**: English or German keyword, any case, a trailing ``.`` or ``!`` ignored.
  Commands without arguments (``roll``, ``würfeln``, ``take``, ``$quit``…) count only when they
  stand alone on their line, so that "Take care!" or "Games like this are fun" stay notes.
  ``lang``/``sprache``, ``numbering``/``zählung``, ``autoroll``/``autowürfeln``,
  ``copies``/``kopien``, ``automove``/``automatisch``, ``greedy``/``gierig`` and ``vacation``/``urlaub`` count when the line is the keyword with at
  most one argument (``vacation``: and an optional ``days``/``Tage``);
  ``invite``/``einladen`` and ``play assistant``/``gegen Assistent`` count whatever follows them.
  A command with a wrong argument becomes a :class:`CommandError`.
* a **move**, when :func:`pbem.rules.notation.looks_like_play` says the line is meant as one;
  it is passed on as written, because only the service knows the player's numbering and dice.
* a **personal note** for the opponent: anything else, greetings included.  Consecutive note
  lines become one :class:`Note`; blank lines between them are kept as one paragraph break,
  blank lines elsewhere carry no meaning.

The subject is read only when the body's new text is empty, and then only for a command, move
or error: a subject that is no command is most often the service's own subject, not a note.
Pass it without reply prefixes (``pbem.mail.reading.subject_text``).

Error codes (:attr:`CommandError.code`) and their ``details``:

``invite-address``
    ``invite``/``einladen`` without a valid mail address; details: what stood where the
    address belongs ("" when nothing did).
``unknown-option``
    a word after ``invite ADDRESS`` or ``play assistant`` that is no format or option;
    details: that word.
``assistant-level``
    ``play assistant WORD`` where WORD is neither a level (:data:`pbem.assistant.levels.WORDS`)
    nor a format or option; details: that word.
``format-conflict``
    two formats in one invitation (``match 5 money``); details: the second format word.
``match-length``
    ``match``/``partie`` without a length from 1 to :data:`MAX_MATCH_LENGTH`; details: what
    followed the word ("" when nothing did).
``games-count``
    ``games``/``spiele`` without a number from 1 to :data:`MAX_GAMES`; details as above.
``clock``
    ``clock``/``uhr`` without a value like ``3d/14d`` (units ``d``/``t`` days, ``h`` hours,
    ``m`` minutes, as in the config file; the time bank may be left out), or a move clock outside :data:`MOVE_CLOCK_RANGE` or a time bank
    outside :data:`TIME_BANK_RANGE`; details: the value as written.
``stake``
    ``stake``/``einsatz`` without a whole number from 1 to :data:`MAX_STAKE`; details: the value.
``money-only``
    ``beaver``, ``jacoby`` or ``stake`` in an invitation that is not ``money``; details: the
    option word as written.
``prize``
    ``prize``/``preis`` not followed by ``games 3``/``spiele 3`` (or the seed's ``3 games``/``3
    spiele``), ``match 5``/``partie 5`` (or ``5 points``/``5 punkte``) or ``single``/``einzel``,
    or with ``money``/``geld``; details: the word that stood there.
``prize-amount``
    in a prize invitation, ``stake``/``einsatz``, ``rate``/``satz`` or ``limit`` without an
    amount like ``2.50`` (or ``2,50``; :func:`pbem.rules.prizes.amount`, at most
    :data:`MAX_STAKE`), one ending in a comma, one of these missing (a series or match needs a
    stake, a single game a rate and a limit) or one that does not belong to the format; details:
    the option word and value, or the missing option.
``prize-repeated``
    ``stake``/``einsatz``, ``rate``/``satz`` or ``limit`` twice in one prize invitation (never
    last-wins with money); details: the second word as written.
``prize-only``
    ``rate``/``satz`` or ``limit`` in an invitation that is not a prize game; details: the word.
``settle-format``
    ``settle``/``abrechnen`` in an invitation that is neither ``money`` nor a single game;
    details: the option word as written.
``language``
    ``lang``/``sprache`` (command or option) without ``de`` or ``en``; details: the value.
``numbering``
    ``numbering``/``zählung`` without ``own``/``eigene`` or ``fixed``/``feste``; details: the value.
``resign-kind``
    ``resign``/``aufgeben`` without ``single``/``einfach``, ``gammon`` or ``backgammon``;
    details: the value.
``switch``
    ``autoroll``/``autowürfeln``, ``copies``/``kopien``, ``automove``/``automatisch`` or
    ``greedy``/``gierig`` without ``on``/``an`` or
    ``off``/``aus``; details: the value.
``vacation-days``
    ``vacation``/``urlaub`` without a number of days from 1 to :data:`MAX_VACATION_DAYS`
    (the yearly allowance is the service's to check); details: the value.
``unknown-command``
    a line of one ``$word`` that is no command; details: that word.
``tournament``
    ``tournament``/``turnier`` followed by no known form (``new …``, ``join|leave|start|withdraw
    CODE``, ``invite CODE ADDRESS…``, ``CODE``); details: the words after it.
``tournament-name``
    ``tournament new`` without a name (the words before its terms: letters, digits, ``-`` and
    ``_``, at most :data:`MAX_TOURNAMENT_NAME` characters); details: what stood there.
``tournament-size``
    ``knockout``/``ko`` without 4, 8, 16, 32 or 64; details: the value.
``tournament-match-length``
    ``tournament new`` with ``match``/``partie`` but no length from 1 to :data:`MAX_MATCH_LENGTH`;
    details: the value.
``tournament-option``
    a word among a new tournament's terms that is none of them; details: that word.
``tournament-terms``
    ``tournament new NAME`` without ``knockout N`` or ``match L``; details: the missing term's
    word (``knockout`` or ``match``).
``tournament-address``
    ``tournament invite CODE`` followed by a word that is no mail address; details: that word.
``tournament-invites``
    ``tournament invite`` naming more than :data:`MAX_TOURNAMENT_INVITES` addresses; details:
    that limit.
``ladder-name``
    ``ladder``/``leiter`` with a sub-command but without a ladder name of 1 to
    :data:`MAX_LADDER_NAME` letters, digits or dashes (or with a sub-command word as the name);
    a name of several words is one with dashes (``Thursday Club`` is ``thursday-club``);
    details: what stood there.
``ladder-option``
    ``ladder new NAME`` followed by something other than ``match L``/``partie L``,
    ``reach K``/``reichweite K`` or ``days D``/``tage D`` (L up to :data:`MAX_MATCH_LENGTH`,
    K up to :data:`MAX_LADDER_REACH`, D up to :data:`MAX_LADDER_DAYS`); details: the word.
``ladder-opponent``
    ``ladder challenge [NAME] WHOM`` where WHOM is neither a mail address nor a place number;
    details: what stood there.
``watchers-switch``
    ``watchers``/``zuschauer`` without ``on``/``an`` or ``off``/``aus``; details: the value.
``watch-code``
    ``watch``/``zuschauen`` or ``unwatch`` without a watch code (ten letters and digits, as the
    players' answer to ``watchers on`` gives it); details: what stood where the code belongs.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import timedelta

from pbem.addresses import is_plain_address
from pbem.assistant.levels import level_of
from pbem.config import parse_duration
from pbem.rules.notation import Numbering, looks_like_play
from pbem.rules.prizes import MATCH_POINTS, SERIES_GAMES, Prize, PrizeKind, amount
from pbem.rules.scoring import Format

MAX_COMMAND_CHARS = 400
"""A longer line is never a command: it is read as a note."""
MAX_DETAILS_CHARS = 80
"""What an error repeats of the line, at most."""
MAX_MATCH_LENGTH = 25
MAX_GAMES = 99
MAX_STAKE = 1000
MAX_VACATION_DAYS = 365
MAX_LADDER_NAME = 30
MAX_LADDER_REACH = 20
MAX_LADDER_DAYS = 30
MOVE_CLOCK_RANGE = (timedelta(hours=1), timedelta(days=30))
TIME_BANK_RANGE = (timedelta(0), timedelta(days=90))


@dataclass(frozen=True)
class Credits:
    """credits/konto: the play-money balance and the last entries of the account."""


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


@dataclass(frozen=True)
class Invite:
    address: str
    options: GameOptions = field(default_factory=GameOptions)


@dataclass(frozen=True)
class TournamentNew:
    """``tournament new NAME knockout N match L [clock 3d/14d] [unrated]``."""

    name: str
    size: int
    length: int
    move_clock: timedelta | None = None
    time_bank: timedelta | None = None
    rated: bool = True


@dataclass(frozen=True)
class TournamentAction:
    """``tournament join|leave|start|withdraw CODE``: what changes a player's place in it."""

    action: str
    """``join``, ``leave``, ``start`` or ``withdraw``."""
    code: str


@dataclass(frozen=True)
class TournamentInvite:
    """``tournament invite CODE ADDRESS…``: the organiser invites people to join."""

    code: str
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class TournamentShow:
    """``tournament CODE``: the bracket (or the entries) as text."""

    code: str


@dataclass(frozen=True)
class PlayAssistant:
    """``play assistant [LEVEL] [options]``."""

    options: GameOptions = field(default_factory=GameOptions)
    level: str | None = None
    """The level's key (``beginner`` … ``world_class``); None: the service chooses."""


@dataclass(frozen=True)
class Accept:
    """accept/annehmen: an invitation, or a pending double (the service decides by context)."""


@dataclass(frozen=True)
class Decline:
    """decline/ablehnen: an invitation, or drop a pending double (the service decides)."""


@dataclass(frozen=True)
class Move:
    text: str
    """As written: the service reads it in the player's numbering."""


@dataclass(frozen=True)
class Roll:
    pass


@dataclass(frozen=True)
class Double:
    pass


@dataclass(frozen=True)
class Take:
    pass


@dataclass(frozen=True)
class Drop:
    pass


@dataclass(frozen=True)
class Beaver:
    pass


@dataclass(frozen=True)
class Resign:
    pass


@dataclass(frozen=True)
class OfferResignation:
    """``resign gammon``: offer to resign with that result (1 single, 2 gammon, 3 backgammon)."""

    kind: int


@dataclass(frozen=True)
class Remis:
    pass


@dataclass(frozen=True)
class Rematch:
    pass


@dataclass(frozen=True)
class Board:
    pass


@dataclass(frozen=True)
class Games:
    pass


@dataclass(frozen=True)
class Ratings:
    pass


@dataclass(frozen=True)
class Language:
    code: str


@dataclass(frozen=True)
class SetNumbering:
    kind: Numbering


@dataclass(frozen=True)
class Vacation:
    days: int


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Autoroll:
    """``autoroll on``: the service rolls at once for this player, who then never doubles."""

    on: bool


@dataclass(frozen=True)
class Copies:
    """``copies on``: a mail after every move, one's own included, and after every roll of the
    opponent (default off: a mail only when the player must act, or something is for them)."""

    on: bool


@dataclass(frozen=True)
class Automove:
    """``automove off``: the service no longer plays a roll that has only one play for them
    (default on, as FIBS's automove)."""

    on: bool


@dataclass(frozen=True)
class Greedy:
    """``greedy on``: with all checkers home and no contact, the service bears off a checker with
    every die when the roll allows it (pbmserv's greedy; default off)."""

    on: bool


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Watchers:
    """``watchers on``/``zuschauer an``: this player lets friends watch the game whose mail the
    line answers (watching is allowed while both players have it on; default off)."""

    on: bool


@dataclass(frozen=True)
class Watch:
    """``watch CODE``/``zuschauen CODE``: the sender watches the match with this watch code (a mail
    at the end of each game; ``watch CODE every move``/``zuschauen CODE bei jedem Zug``: after each
    move); ``watch CODE off``/``unwatch CODE``/``zuschauen CODE aus``: no longer."""

    code: str
    """Lower case, as stored."""
    on: bool = True
    every_move: bool = False
    """``watch CODE every move``: a mail after each move; else one when each game ends."""


@dataclass(frozen=True)
class Confirm:
    """yes/ja: confirms what a confirmation mail asked about (elsewhere it is just a note)."""

    text: str


@dataclass(frozen=True)
class Note:
    """Personal words for the opponent, passed on in their next mail."""

    text: str


@dataclass(frozen=True)
class CommandError:
    """A line meant as a command that cannot be carried out as written (codes: module doc)."""

    line: str
    code: str
    details: str = ""

    def __post_init__(self) -> None:
        if len(self.details) > MAX_DETAILS_CHARS:
            object.__setattr__(self, "details", self.details[: MAX_DETAILS_CHARS - 1] + "…")


@dataclass(frozen=True)
class LadderShow:
    """ladder NAME / leiter NAME: the ladder's standing; ``ladder`` alone: the list of ladders."""

    name: str | None = None


@dataclass(frozen=True)
class LadderNew:
    """ladder new NAME [match L] [reach K] [days D]: open a ladder with these terms, and join it."""

    name: str
    match_length: int = 5
    reach: int = 3
    answer_days: int = 7


@dataclass(frozen=True)
class LadderJoin:
    """ladder join NAME / leiter beitreten NAME: join at the bottom (a new name opens the ladder)."""

    name: str


@dataclass(frozen=True)
class LadderChallenge:
    """ladder challenge [NAME] WHOM / leiter fordern [NAME] WEN: WHOM a mail address or a place
    number; without NAME, the one ladder the challenger is on."""

    name: str | None
    opponent: str


@dataclass(frozen=True)
class LadderLeave:
    """ladder leave NAME / leiter verlassen NAME."""

    name: str


LadderCommand = LadderShow | LadderNew | LadderJoin | LadderChallenge | LadderLeave

Command = (
    Invite | PlayAssistant | Accept | Decline | Move | Roll | Double | Take | Drop | Beaver
    | Resign | OfferResignation | Remis | Rematch | Board | Games | Ratings | Language | SetNumbering | Vacation
    | Stop | Autoroll | Copies | Automove | Greedy | Help | Confirm | Credits | Note | CommandError
    | TournamentNew | TournamentAction | TournamentInvite | TournamentShow
    | LadderCommand
    | Watchers | Watch
)

_ALONE: dict[str, Command] = {
    **dict.fromkeys(("accept", "annehmen"), Accept()),
    **dict.fromkeys(("decline", "reject", "ablehnen"), Decline()),
    **dict.fromkeys(("roll", "würfeln", "wuerfeln"), Roll()),
    **dict.fromkeys(("double", "doppeln"), Double()),
    "take": Take(),
    **dict.fromkeys(("drop", "pass"), Drop()),
    **dict.fromkeys(("beaver", "biber"), Beaver()),
    **dict.fromkeys(("$quit", "$aufgeben"), Resign()),
    "$remis": Remis(),
    **dict.fromkeys(("rematch", "revanche"), Rematch()),
    **dict.fromkeys(("board", "brett"), Board()),
    **dict.fromkeys(("games", "spiele"), Games()),
    **dict.fromkeys(("ratings", "rangliste"), Ratings()),
    **dict.fromkeys(("stop", "stopp"), Stop()),
    **dict.fromkeys(("help", "hilfe"), Help()),
    **dict.fromkeys(("credits", "konto"), Credits()),
}
_LANGUAGES = {
    **dict.fromkeys(("de", "deutsch", "german"), "de"),
    **dict.fromkeys(("en", "englisch", "english"), "en"),
}
_NUMBERINGS = {
    **dict.fromkeys(("own", "eigene", "eigen"), Numbering.OWN),
    **dict.fromkeys(("fixed", "feste", "fest"), Numbering.FIXED),
}
_RESIGN_WORDS = ("resign", "aufgeben")
_RESIGN_KINDS = {**dict.fromkeys(("single", "normal", "einfach"), 1), "gammon": 2, "backgammon": 3}
_SWITCHES = {**dict.fromkeys(("on", "an", "ein"), True), **dict.fromkeys(("off", "aus"), False)}
_AUTOROLL_WORDS = ("autoroll", "autowürfeln", "autowuerfeln")
_COPIES_WORDS = ("copies", "kopien")
_AUTOMOVE_WORDS = ("automove", "automatisch")
_GREEDY_WORDS = ("greedy", "gierig")
_SWITCH_COMMANDS: dict[str, type[Autoroll | Copies | Automove | Greedy]] = {
    **dict.fromkeys(_AUTOROLL_WORDS, Autoroll), **dict.fromkeys(_COPIES_WORDS, Copies),
    **dict.fromkeys(_AUTOMOVE_WORDS, Automove), **dict.fromkeys(_GREEDY_WORDS, Greedy),
}
_CONFIRM_WORDS = ("yes", "ja", "confirm", "bestätigen", "bestaetigen")
_LANGUAGE_WORDS = ("lang", "sprache")
_NUMBERING_WORDS = ("numbering", "zählung", "zaehlung")
_VACATION_WORDS = ("vacation", "urlaub")
_DAY_WORDS = ("day", "days", "tag", "tage")
_INVITE_WORDS = ("invite", "einladen")
_PLAY_WORDS = ("play", "gegen")
_ASSISTANT_WORDS = ("assistant", "assistent")

_TOURNAMENT_WORDS = ("tournament", "turnier")
_TOURNAMENT_ACTIONS = {
    **dict.fromkeys(("join", "teilnehmen"), "join"), **dict.fromkeys(("leave", "verlassen"), "leave"),
    **dict.fromkeys(("start", "starten"), "start"),
    **dict.fromkeys(("withdraw", "zurückziehen", "zurueckziehen"), "withdraw"),
}
_TOURNAMENT_NEW_WORDS = ("new", "neu")
_KNOCKOUT_WORDS = ("knockout", "ko")
_TOURNAMENT_SIZES = (4, 8, 16, 32, 64)
MAX_TOURNAMENT_INVITES = 10
"""Addresses one ``tournament invite`` line may name."""
MAX_TOURNAMENT_NAME = 30
"""Characters of a tournament's name, spaces between its words included."""
_TOURNAMENT_NAME_WORD = re.compile(r"[\w-]+")
"""A word of a tournament's name: letters, digits, ``-`` and ``_`` (no ``@``, no markup; the
name is shown to everyone in it)."""
_TOURNAMENT_TERMS = frozenset((*_KNOCKOUT_WORDS, "match", "partie", *("clock", "uhr"), "unrated", "ungewertet"))
"""The words that end a tournament's name: its terms begin there."""
TOURNAMENT_CODE = re.compile(r"[a-z2-7]{6}")
"""A tournament's code: six letters and digits of base32 (``pbem.service.tournaments``)."""

_FORMAT_WORDS = {
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
_CLOCK_WORDS = ("clock", "uhr")
_STAKE_WORDS = ("stake", "einsatz")
_PRIZE_WORDS = ("prize", "preis")
_PRIZE_AMOUNT_WORDS = {**dict.fromkeys(_STAKE_WORDS, "stake"), **dict.fromkeys(("rate", "satz"), "rate"),
                       "limit": "limit"}
_AMOUNT_WITH_COMMA = re.compile(r"\b(?:stake|einsatz|rate|satz|limit)\s+[0-9.,]*[0-9],(?![0-9])")
"""A prize amount ending in a comma (``stake 2.5,``): a decimal comma with its decimals lost, or
a list's comma? Money is not guessed at: it is refused."""
_PRIZE_COUNTED_WORDS = {**dict.fromkeys(("games", "spiele"), "games"), **dict.fromkeys(("points", "punkte"), "match")}
"""The seed's own word order, ``Preis 3 Spiele`` and ``Preis 5 Punkte``: the number first."""
_PRIZE_FORMATS = {Format.GAMES: (PrizeKind.SERIES, SERIES_GAMES), Format.MATCH: (PrizeKind.MATCH, MATCH_POINTS),
                  Format.SINGLE: (PrizeKind.SINGLE, 1)}
_WATCHERS_WORDS = ("watchers", "zuschauer")
_WATCH_WORDS = ("watch", "zuschauen")
_UNWATCH_WORDS = ("unwatch",)
_EVERY_MOVE = frozenset((("every", "move"), ("each", "move"), ("bei", "jedem", "zug"), ("jeder", "zug"),
                         ("jeden", "zug")))
"""``watch CODE every move``/``zuschauen CODE bei jedem Zug``: a mail after each move, not one per game."""
WATCH_CODE_PATTERN = r"[a-z2-7]{10}"
"""A watch code: ten characters of lower-case base32 (50 random bits)."""
_WATCH_CODE = re.compile(WATCH_CODE_PATTERN)



_GERMAN_KEYWORDS = frozenset((
    "annehmen", "ablehnen", "würfeln", "wuerfeln", "doppeln", "biber", "$aufgeben", "revanche",
    "brett", "spiele", "rangliste", "stopp", "hilfe", "ja", "bestätigen", "bestaetigen", "sprache",
    "zählung", "zaehlung", "urlaub", "einladen", "gegen", "abrechnen", "autowürfeln", "autowuerfeln",
    "kopien", "aufgeben", "konto", "preis", "automatisch", "gierig", "turnier", "leiter", "zuschauer", "zuschauen",
))
_ENGLISH_KEYWORDS = frozenset((
    "accept", "decline", "roll", "double", "take", "drop", "beaver", "$quit", "rematch", "board",
    "games", "ratings", "stop", "help", "yes", "confirm", "lang", "numbering", "vacation", "invite",
    "play", "settle", "autoroll", "copies", "resign", "reject", "credits", "prize", "automove", "greedy",
    "tournament", "ladder", "watchers", "watch", "unwatch",
))
_GERMAN_WORDS = frozenset((
    "und", "ich", "nicht", "der", "die", "das", "ist", "bitte", "danke", "hallo", "mit", "für",
    "fuer", "ein", "eine", "du", "sie", "wir", "mein", "dein", "gut", "spiel", "zug", "gruß",
    "grüße", "viele", "liebe", "lieber", "schöne", "auch", "noch", "heute", "morgen", "aber",
))
_ENGLISH_WORDS = frozenset((
    "and", "i", "not", "the", "is", "please", "thanks", "thank", "hello", "hi", "with", "for", "a",
    "an", "you", "we", "my", "your", "good", "game", "move", "regards", "best", "dear", "nice",
    "also", "still", "today", "tomorrow", "but",
))


def written_in(new_text: str, subject: str = "") -> str | None:
    """The language a mail is written in, ``de`` or ``en``, as far as its words tell; None when
    they do not.  The command keywords decide (``hilfe`` is German, ``help`` English); failing
    those, the common words of the text (a note, a greeting) do."""
    lines = [line.strip().lower().rstrip(".!") for line in (new_text or subject).splitlines()]
    keywords = [line.split()[0] for line in lines if line.split()]
    german = sum(word in _GERMAN_KEYWORDS for word in keywords)
    english = sum(word in _ENGLISH_KEYWORDS for word in keywords)
    if german == english:
        words = [word.strip(".,;:!?()\"'") for line in lines for word in line.split()]
        german = sum(word in _GERMAN_WORDS for word in words)
        english = sum(word in _ENGLISH_WORDS for word in words)
    if german == english:
        return None
    return "de" if german > english else "en"


def parse_commands(new_text: str, subject: str = "") -> list[Command]:
    """The commands, moves, notes and errors of a mail, in the order written.

    ``subject`` (already without ``Re:``-style prefixes) is read only when ``new_text`` is empty.
    """
    if not new_text.strip():
        from_subject = _read_line(subject.strip()) if subject.strip() else None
        return [from_subject] if from_subject and not isinstance(from_subject, Note) else []
    commands: list[Command] = []
    blank_before = False
    for raw_line in new_text.splitlines():
        line = raw_line.strip()
        if not line:
            blank_before = True
            continue
        command = _read_line(line)
        if isinstance(command, Note) and commands and isinstance(previous := commands[-1], Note):
            separator = "\n\n" if blank_before else "\n"
            commands.pop()
            command = Note(previous.text + separator + command.text)
        commands.append(command)
        blank_before = False
    return commands


def is_command_line(line: str) -> bool:
    """True when ``line`` alone is a command, a move or an error: anything but a note."""
    return not isinstance(_read_line(line), Note)


def is_invitation(line: str) -> bool:
    """True when ``line`` invites somebody (a player or the Assistant): what it says, right or
    wrong, concerns a new game, not the one whose thread it may be written in."""
    words = unicodedata.normalize("NFC", line).lower().split()
    return bool(words) and (words[0] in _INVITE_WORDS
                            or (words[0] in _PLAY_WORDS and len(words) > 1 and words[1] in _ASSISTANT_WORDS))


def about_no_game(line: str) -> bool:
    """True when ``line`` is a command about no game being played: an invitation, a tournament,
    a ladder or watching (its refusal needs no guide to writing moves)."""
    words = unicodedata.normalize("NFC", line).lower().split()
    return bool(words) and (is_invitation(line) or words[0] in (
        *_TOURNAMENT_WORDS, *_LADDER_WORDS, *_WATCH_WORDS, *_UNWATCH_WORDS))


def _read_line(line: str) -> Command:
    """One non-blank line: a command, an error, a move or a note."""
    line = unicodedata.normalize("NFC", line)
    if len(line) > MAX_COMMAND_CHARS:
        return Note(line)
    words = line.lower().rstrip(".!").split()
    if not words:
        return Note(line)
    if len(words) == 1 and words[0] in _ALONE:
        return _ALONE[words[0]]
    if len(words) == 1 and words[0] in _CONFIRM_WORDS:
        return Confirm(line)
    keyword, arguments = words[0], words[1:]
    if keyword in _LANGUAGE_WORDS and len(arguments) <= 1:
        return _language_command(line, arguments)
    if keyword in _NUMBERING_WORDS and len(arguments) <= 1:
        return _numbering_command(line, arguments)
    if keyword in _RESIGN_WORDS and len(arguments) <= 1:
        kind = _RESIGN_KINDS.get(_first(arguments))
        return OfferResignation(kind) if kind else CommandError(line, "resign-kind", _first(arguments))
    if keyword in _SWITCH_COMMANDS and len(arguments) <= 1:
        switch = _SWITCHES.get(_first(arguments))
        if switch is None:
            return CommandError(line, "switch", _first(arguments))
        return _SWITCH_COMMANDS[keyword](switch)
    if keyword in _VACATION_WORDS and (
        len(arguments) <= 1 or (len(arguments) == 2 and arguments[1] in _DAY_WORDS)
    ):
        return _vacation_command(line, arguments)
    if keyword in _INVITE_WORDS:
        return _invite_command(line, arguments)
    if keyword in _TOURNAMENT_WORDS and arguments:
        return _tournament_command(line, arguments)
    if keyword in _PLAY_WORDS and arguments and arguments[0] in _ASSISTANT_WORDS:
        return _play_assistant_command(line, arguments[1:])
    if keyword in _LADDER_WORDS and (ladder := _ladder_command(line, arguments)) is not None:
        return ladder
    if keyword in _WATCHERS_WORDS and len(arguments) <= 1:
        switch = _SWITCHES.get(_first(arguments))
        return CommandError(line, "watchers-switch", _first(arguments)) if switch is None else Watchers(switch)
    if keyword in (*_WATCH_WORDS, *_UNWATCH_WORDS) and _watch_line(keyword, arguments):
        return _watch_command(line, keyword, arguments)
    if len(words) == 1 and keyword.startswith("$"):
        return CommandError(line, "unknown-command", keyword)
    if looks_like_play(line):
        return Move(line)
    return Note(line)


def _play_assistant_command(line: str, arguments: list[str]) -> Command:
    """``play assistant [LEVEL] [options]``: a first word that is neither a level nor an option
    is taken for a level the Assistant does not have."""
    named = level_of(arguments)
    options = _game_options(line, arguments[named[1]:] if named else arguments)
    if isinstance(options, CommandError):
        if not named and options.code == "unknown-option" and options.details == arguments[0]:
            return CommandError(line, "assistant-level", arguments[0])
        return options
    return PlayAssistant(options, named[0] if named else None)


def _first(arguments: list[str]) -> str:
    return arguments[0] if arguments else ""


def _language_command(line: str, arguments: list[str]) -> Command:
    code = _LANGUAGES.get(_first(arguments))
    return Language(code) if code else CommandError(line, "language", _first(arguments))


def _numbering_command(line: str, arguments: list[str]) -> Command:
    kind = _NUMBERINGS.get(_first(arguments))
    return SetNumbering(kind) if kind else CommandError(line, "numbering", _first(arguments))


def _watch_line(keyword: str, arguments: list[str]) -> bool:
    """Whether a line starting with ``watch``/``zuschauen``/``unwatch`` is meant as the command:
    alone, or with one word and at most ``off``/``aus`` or ``every move``/``bei jedem Zug`` after it
    (``unwatch``: one word), where that word is a watch code or at least looks like one (ten
    letters and digits); "watch this game!" stays a note."""
    if not arguments:
        return True
    limit = 1 if keyword in _UNWATCH_WORDS else 2
    after = tuple(arguments[1:])
    if keyword not in _UNWATCH_WORDS and after in _EVERY_MOVE:
        pass
    elif len(arguments) > limit or (len(arguments) == 2 and _SWITCHES.get(arguments[1]) is not False):
        return False
    return len(arguments[0]) == 10 and arguments[0].isalnum()


def _watch_command(line: str, keyword: str, arguments: list[str]) -> Command:
    code = _first(arguments)
    if not _WATCH_CODE.fullmatch(code):
        return CommandError(line, "watch-code", code)
    every_move = tuple(arguments[1:]) in _EVERY_MOVE
    return Watch(code, on=keyword not in _UNWATCH_WORDS and (len(arguments) == 1 or every_move),
                 every_move=every_move)


def _vacation_command(line: str, arguments: list[str]) -> Command:
    days = _whole_number(_first(arguments), MAX_VACATION_DAYS)
    return Vacation(days) if days else CommandError(line, "vacation-days", _first(arguments))


def _invite_command(line: str, arguments: list[str]) -> Command:
    address = _first(arguments).removeprefix("mailto:").strip("<>,;")
    if not (is_plain_address(address) and "." in address.rpartition("@")[2]):
        return CommandError(line, "invite-address", _first(arguments))
    rest = arguments[1:]
    if rest and rest[0].strip("<>[]()").removeprefix("mailto:") == address:
        rest = rest[1:]  # Outlook's plain text repeats a linked address as <mailto:…>
    options = _game_options(line, rest)
    return options if isinstance(options, CommandError) else Invite(address, options)


def _tournament_command(line: str, arguments: list[str]) -> Command:
    """``tournament new …``, ``tournament ACTION CODE``, ``tournament invite CODE ADDRESS…`` or
    ``tournament CODE``; any other shape is an error that shows the forms."""
    first = arguments[0]
    if first in _TOURNAMENT_NEW_WORDS:
        return _new_tournament(line, arguments[1:])
    if first in _TOURNAMENT_ACTIONS and len(arguments) == 2 and TOURNAMENT_CODE.fullmatch(arguments[1]):
        return TournamentAction(_TOURNAMENT_ACTIONS[first], arguments[1])
    if first in _INVITE_WORDS and len(arguments) >= 3 and TOURNAMENT_CODE.fullmatch(arguments[1]):
        addresses = tuple(dict.fromkeys(word.removeprefix("mailto:").strip("<>,;") for word in arguments[2:]))
        for address in addresses:
            if not (is_plain_address(address) and "." in address.rpartition("@")[2]):
                return CommandError(line, "tournament-address", address)
        if len(addresses) > MAX_TOURNAMENT_INVITES:
            return CommandError(line, "tournament-invites", str(MAX_TOURNAMENT_INVITES))
        return TournamentInvite(arguments[1], addresses)
    if len(arguments) == 1 and TOURNAMENT_CODE.fullmatch(first):
        return TournamentShow(first)
    return CommandError(line, "tournament", _after_keyword(line))


def _after_keyword(line: str) -> str:
    """What follows a command's first word, as written (for an error that quotes it)."""
    return " ".join(line.split()[1:])[:40]


def _new_tournament(line: str, arguments: list[str]) -> Command:
    """``NAME knockout N match L [clock 3d/14d] [unrated]``: the name is every word before the
    first term (``Autumn Cup``), the terms follow in any order.  A name may hold a term's word
    (``Cup of the Match Club``): the name then ends at the first term after which the terms read
    whole; when none does, the refusal is the one of the first term."""
    original = line.rstrip(".!").split()[2:]
    starts = [position for position, word in enumerate(arguments) if word in _TOURNAMENT_TERMS] or [len(arguments)]
    tried = [_tournament_named(line, original[:position], arguments[position:]) for position in starts]
    return next((command for command in tried if isinstance(command, TournamentNew)), tried[0])


def _tournament_named(line: str, name_words: list[str], words: list[str]) -> Command:
    """The new tournament of this name and these terms, or what is wrong with them."""
    name = " ".join(name_words)
    if not name_words or not all(_TOURNAMENT_NAME_WORD.fullmatch(word) for word in name_words) \
            or len(name) > MAX_TOURNAMENT_NAME:
        return CommandError(line, "tournament-name", name)
    settings: dict[str, object] = {"name": name}
    position = 0
    while position < len(words):
        word, value = words[position], words[position + 1] if position + 1 < len(words) else ""
        position += 2
        if word in _KNOCKOUT_WORDS:
            if not value.isdigit() or int(value) not in _TOURNAMENT_SIZES:
                return CommandError(line, "tournament-size", value)
            settings["size"] = int(value)
        elif word in ("match", "partie"):
            if not (length := _whole_number(value, MAX_MATCH_LENGTH)):
                return CommandError(line, "tournament-match-length", value)
            settings["length"] = length
        elif word in _CLOCK_WORDS:
            clocks = _clocks(value)
            if clocks is None:
                return CommandError(line, "clock", value)
            settings["move_clock"], settings["time_bank"] = clocks
        elif word in ("unrated", "ungewertet"):
            settings["rated"] = False
            position -= 1
        else:
            return CommandError(line, "tournament-option", word)
    if "size" not in settings or "length" not in settings:
        return CommandError(line, "tournament-terms", "match" if "size" in settings else "knockout")
    return TournamentNew(**settings)  # type: ignore[arg-type]  # the keys are TournamentNew fields, set above


def _game_options(line: str, words: list[str]) -> GameOptions | CommandError:
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
            if value not in _FORMAT_WORDS or _FORMAT_WORDS[value] is Format.MONEY or prize_word:
                return CommandError(line, "prize", value)
            prize_word = word
        elif word in _PRIZE_AMOUNT_WORDS and (prize_game or word not in _STAKE_WORDS):
            if _PRIZE_AMOUNT_WORDS[word] in amounts:
                return CommandError(line, "prize-repeated", word)
            amounts[_PRIZE_AMOUNT_WORDS[word]] = (word, value)
            position += 1
        elif word in _FORMAT_WORDS:
            if "kind" in settings:
                return CommandError(line, "format-conflict", word)
            kind = settings["kind"] = _FORMAT_WORDS[word]
            if kind in _FORMAT_LIMITS:
                maximum, code = _FORMAT_LIMITS[kind]
                if not (length := _whole_number(value, maximum)):
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
        elif word in _CLOCK_WORDS:
            clocks = _clocks(value)
            if clocks is None:
                return CommandError(line, "clock", value)
            settings["move_clock"], settings["time_bank"] = clocks
            position += 1
        elif word in _STAKE_WORDS:
            if not (stake := _whole_number(value, MAX_STAKE)):
                return CommandError(line, "stake", value)
            settings["stake"] = stake
            money_only_word = money_only_word or word
            position += 1
        elif word in _LANGUAGE_WORDS:
            if value not in _LANGUAGES:
                return CommandError(line, "language", value)
            settings["language"] = _LANGUAGES[value]
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


def _whole_number(text: str, maximum: int) -> int | None:
    """A number from 1 to ``maximum`` written in digits, or None."""
    return int(text) if text.isdigit() and text.isascii() and 1 <= int(text) <= maximum else None


def _clocks(text: str) -> tuple[timedelta, timedelta | None] | None:
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


_LADDER_WORDS = ("ladder", "leiter")
_LADDER_ACTIONS = {
    **dict.fromkeys(("new", "neu"), LadderNew), **dict.fromkeys(("join", "beitreten"), LadderJoin),
    **dict.fromkeys(("challenge", "fordern", "herausfordern"), LadderChallenge),
    **dict.fromkeys(("leave", "verlassen"), LadderLeave),
}
_LADDER_NAME = re.compile(rf"[a-z0-9][a-z0-9-]{{0,{MAX_LADDER_NAME - 1}}}")
_LADDER_OPTIONS = {
    **dict.fromkeys(("match", "partie"), ("match_length", MAX_MATCH_LENGTH)),
    **dict.fromkeys(("reach", "reichweite"), ("reach", MAX_LADDER_REACH)),
    **dict.fromkeys(("days", "tage"), ("answer_days", MAX_LADDER_DAYS)),
}


_TERM_WORDS = frozenset((*_FORMAT_WORDS, *_FLAG_WORDS, *_CLOCK_WORDS, *_STAKE_WORDS, *_KNOCKOUT_WORDS, *_LANGUAGE_WORDS))
"""Words of a game's or a tournament's terms: a new ladder's name ends before them too (so that
``ladder new club clock 3d`` is refused as a term the ladder does not take, not named "club-clock-3d")."""


def ladder_name(text: str) -> str | None:
    """``text`` as a ladder's name (lower case letters, digits, dashes; the words of a name of
    several words joined by dashes: ``Thursday Club`` is ``thursday-club``), or None when it is
    none; a sub-command word is never a name."""
    name = "-".join(text.lower().split())
    return name if _LADDER_NAME.fullmatch(name) and name not in _LADDER_ACTIONS else None


def _ladder_command(line: str, arguments: list[str]) -> Command | None:
    """``ladder``, ``ladder NAME`` and ``ladder ACTION …``; None for any other line beginning with
    the word (``Leiter`` is a German word too: such a line stays a note, and so ``ladder NAME``
    shows only a name of one word, as the answers write it)."""
    if not arguments:
        return LadderShow()
    action = _LADDER_ACTIONS.get(arguments[0])
    if action is None:
        name = ladder_name(arguments[0])
        return LadderShow(name) if len(arguments) == 1 and name is not None else None
    rest = arguments[1:]
    if action is LadderChallenge:
        if len(rest) == 1:
            return _ladder_challenge(line, None, rest[0])
        if len(rest) >= 2 and (name := ladder_name(" ".join(rest[:-1]))) is not None:
            return _ladder_challenge(line, name, rest[-1])
        return CommandError(line, "ladder-name" if len(rest) >= 2 else "ladder-opponent", " ".join(rest))
    words = rest
    if action is LadderNew:
        words = list(itertools.takewhile(lambda word: word not in _LADDER_OPTIONS and word not in _TERM_WORDS, rest))
    name = ladder_name(" ".join(words))
    if name is None:
        return CommandError(line, "ladder-name", " ".join(words))
    if action is LadderNew:
        return _ladder_terms(line, name, rest[len(words):])
    return LadderJoin(name) if action is LadderJoin else LadderLeave(name)


def _ladder_challenge(line: str, name: str | None, whom: str) -> Command:
    opponent = whom.removeprefix("mailto:").strip("<>,;").removeprefix("#")
    if opponent.isdigit() and opponent.isascii() and int(opponent) >= 1:
        return LadderChallenge(name, str(int(opponent)))
    if is_plain_address(opponent) and "." in opponent.rpartition("@")[2]:
        return LadderChallenge(name, opponent.lower())
    return CommandError(line, "ladder-opponent", whom)


def _ladder_terms(line: str, name: str, words: list[str]) -> Command:
    """``ladder new NAME`` and its terms, each a word and a whole number."""
    terms: dict[str, int] = {}
    for position in range(0, len(words), 2):
        word = words[position]
        option = _LADDER_OPTIONS.get(word)
        value = _whole_number(words[position + 1], option[1]) if option and position + 1 < len(words) else None
        if option is None or value is None:
            return CommandError(line, "ladder-option", " ".join(words[position:position + 2]))
        terms[option[0]] = value
    return LadderNew(name, **terms)
