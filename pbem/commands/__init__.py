"""The e-mail commands: one registry, one module per family, each command declared once (SPEC §3).

Each family module (:mod:`~pbem.commands.game`, :mod:`~pbem.commands.invitation`,
:mod:`~pbem.commands.account`, :mod:`~pbem.commands.tournament`, :mod:`~pbem.commands.ladder`,
:mod:`~pbem.commands.watching`) holds its commands' values and a ``DECLARATIONS`` tuple: per
command its English and German words, its grammar, its line in the help mail and its rows in the
docs' tables (:mod:`~pbem.commands.declaration`).  :mod:`~pbem.commands.registry` collects them;
:mod:`~pbem.commands.parsing` reads a mail's new text with it, and
:mod:`~pbem.commands.reference` writes the tables of ``docs/players.md``.  The service registers
one handler per command type (``pbem.service.mailroom.handlers``).

A mail's new text → the commands it gives, in order:

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
Pass it without reply prefixes (``pbem.mail.headers.subject_text``).

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

from pbem.commands.account import (Autoroll, Automove, Board, Confirm, Copies, Credits, Games, Greedy, Help, Language,
                                   Ratings, SetNumbering, Stop, Vacation)
from pbem.commands.base import (MAX_COMMAND_CHARS, MAX_DETAILS_CHARS, MAX_GAMES, MAX_MATCH_LENGTH, MAX_STAKE,
                                MAX_VACATION_DAYS, MOVE_CLOCK_RANGE, TIME_BANK_RANGE, CommandError, Note)
from pbem.commands.game import Beaver, Double, Drop, Move, OfferResignation, Rematch, Remis, Resign, Roll, Take
from pbem.commands.invitation import Accept, Decline, Invite, PlayAssistant
from pbem.commands.ladder import (MAX_LADDER_DAYS, MAX_LADDER_NAME, MAX_LADDER_REACH, LadderChallenge, LadderCommand,
                                  LadderJoin, LadderLeave, LadderNew, LadderShow, ladder_name)
from pbem.commands.options import GameOptions
from pbem.commands.parsing import about_no_game, is_command_line, is_invitation, parse_commands, written_in
from pbem.commands.registry import REGISTRY, Command
from pbem.commands.tournament import (MAX_TOURNAMENT_INVITES, MAX_TOURNAMENT_NAME, TOURNAMENT_CODE, TournamentAction,
                                      TournamentInvite, TournamentNew, TournamentShow)
from pbem.commands.watching import WATCH_CODE_PATTERN, Watch, Watchers
from pbem.rules.scoring import Format

__all__ = [
    "Accept", "Autoroll", "Automove", "Beaver", "Board", "Command", "CommandError", "Confirm", "Copies", "Credits",
    "Decline", "Double", "Drop", "Format", "GameOptions", "Games", "Greedy", "Help", "Invite", "LadderChallenge",
    "LadderCommand", "LadderJoin", "LadderLeave", "LadderNew", "LadderShow", "Language", "MAX_COMMAND_CHARS",
    "MAX_DETAILS_CHARS", "MAX_GAMES", "MAX_LADDER_DAYS", "MAX_LADDER_NAME", "MAX_LADDER_REACH", "MAX_MATCH_LENGTH",
    "MAX_STAKE", "MAX_TOURNAMENT_INVITES", "MAX_TOURNAMENT_NAME", "MAX_VACATION_DAYS", "MOVE_CLOCK_RANGE", "Move",
    "Note", "OfferResignation", "PlayAssistant", "REGISTRY", "Ratings", "Rematch", "Remis", "Resign", "Roll",
    "SetNumbering", "Stop", "TIME_BANK_RANGE", "TOURNAMENT_CODE", "Take", "TournamentAction", "TournamentInvite",
    "TournamentNew", "TournamentShow", "Vacation", "WATCH_CODE_PATTERN", "Watch", "Watchers", "about_no_game",
    "is_command_line", "is_invitation", "ladder_name", "parse_commands", "written_in",
]
