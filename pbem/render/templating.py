"""The one Jinja2 environment for every text a player reads, in German and English.

All wording lives in ``templates/<language>/``; Python passes facts, never sentences, so that a
text missing in one language is an error instead of a silently English mail (only the wordless
HTML frame, ``templates/mail.html``, serves both languages).  Plain-text
templates (``.txt``) are not escaped; HTML templates are, so nothing a player wrote (a name, a
personal note) can inject markup.

Templates see ``language`` in their context (set by :func:`render`); the filters that need a
language or a player's numbering read it from there:

* ``duration``: a :class:`~datetime.timedelta` as "2 days 3 hours" / "2 Tage 3 Stunden";
* ``dice``: ``(5, 2)`` as "5-2";
* ``rating``: a rating with one decimal, "1517.3" / "1517,3";
* ``credits``: an amount of credits with two decimals and the sign ℂ, "4.50 ℂ" / "4,50 ℂ"
  (``credits(sign=True)``: with + or -, for a statement); ``percent``: "10%" / "10 %";
* ``point``: a point in the mover's own numbering (25 = bar, 0 = off) as the player writes it,
  using ``numbering`` and ``colour`` from the context (``point("black")``: as that colour
  writes it, for examples addressed to either side).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from datetime import timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from pbem import commands
from pbem.rules.notation import Colour, Numbering, point_name

LANGUAGES = ("de", "en")


def _template_dir() -> Path:
    """``templates/`` inside the installed package if packaged there, else beside the package."""
    package = Path(__file__).resolve().parent.parent
    inside = package / "templates"
    return inside if inside.is_dir() else package.parent / "templates"


TEMPLATE_DIR = _template_dir()
REASONS_TEMPLATE = "reasons.txt"
COMMAND_LIMITS = {
    "match_length": commands.MAX_MATCH_LENGTH,
    "games": commands.MAX_GAMES,
    "stake": commands.MAX_STAKE,
    "vacation_days": commands.MAX_VACATION_DAYS,
    "move_clock": commands.MOVE_CLOCK_RANGE,
    "time_bank": commands.TIME_BANK_RANGE,
}
"""The limits the command errors mention, as ``limits`` in ``reasons.txt``."""

_UNITS = {
    "en": {"day": ("day", "days"), "hour": ("hour", "hours"), "minute": ("minute", "minutes")},
    "de": {"day": ("Tag", "Tage"), "hour": ("Stunde", "Stunden"), "minute": ("Minute", "Minuten")},
}
_LESS_THAN_A_MINUTE = {"en": "less than a minute", "de": "weniger als eine Minute"}


def _language_of(context: jinja2.runtime.Context) -> str:
    """The language a template is rendered in; an error when :func:`render` did not set it."""
    language = context.get("language")
    if not isinstance(language, str) or language not in LANGUAGES:
        raise ValueError(f"template rendered without a language (got {language!r})")
    return language


def format_duration(duration: timedelta, language: str) -> str:
    """The largest whole unit and the next one: "2 days 3 hours", "1 Tag", "5 minutes".

    Reminders and clocks need a rough feel for the time left, not a stopwatch.
    """
    minutes = max(0, int(duration.total_seconds()) // 60)
    amounts = [("day", minutes // 1440), ("hour", minutes // 60 % 24), ("minute", minutes % 60)]
    largest = next((i for i, (_, amount) in enumerate(amounts) if amount), None)
    if largest is None:
        return _LESS_THAN_A_MINUTE[language]
    words = _UNITS[language]
    shown = [(unit, n) for unit, n in amounts[largest : largest + 2] if n]
    return " ".join(f"{n} {words[unit][n != 1]}" for unit, n in shown)


def format_dice(dice: tuple[int, int]) -> str:
    """Dice as players write them: "5-2"."""
    return f"{dice[0]}-{dice[1]}"


@jinja2.pass_context
def _duration_filter(context: jinja2.runtime.Context, duration: timedelta) -> str:
    return format_duration(duration, _language_of(context))


def format_rating(rating: float, language: str) -> str:
    """A rating with one decimal, with the decimal comma in German: "1517,3"."""
    text = f"{rating:.1f}"
    return text.replace(".", ",") if language == "de" else text


@jinja2.pass_context
def _rating_filter(context: jinja2.runtime.Context, rating: float) -> str:
    return format_rating(rating, _language_of(context))


NO_BREAK = "\u00a0"
"""Between a number and its unit, so that wrapping never parts them ("4,50 ℂ", "10 %")."""


def format_credits(value: Decimal, language: str, sign: bool = False) -> str:
    """An amount of credits (play money), "4.50 ℂ", with the decimal comma in German."""
    text = f"{Decimal(value):+.2f}" if sign else f"{Decimal(value):.2f}"
    return (text.replace(".", ",") if language == "de" else text) + NO_BREAK + "ℂ"


@jinja2.pass_context
def _credits_filter(context: jinja2.runtime.Context, value: Decimal, sign: bool = False) -> str:
    return format_credits(value, _language_of(context), sign)


@jinja2.pass_context
def _percent_filter(context: jinja2.runtime.Context, value: Decimal) -> str:
    """A percentage without trailing zeros: "10%", in German "10 %"."""
    text = format(Decimal(value).normalize(), "f")
    return text.replace(".", ",") + NO_BREAK + "%" if _language_of(context) == "de" else text + "%"


@jinja2.pass_context
def _point_filter(context: jinja2.runtime.Context, point: int, colour: str | None = None) -> str:
    return point_name(point, Numbering(context["numbering"]), Colour(colour or context["colour"]))


@cache
def environment() -> jinja2.Environment:
    """The shared environment: strict about missing variables, escaping only HTML."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "htm")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # the templates ship with the program: no stat of their files for every mail
    )
    env.filters.update(duration=_duration_filter, dice=format_dice, point=_point_filter, rating=_rating_filter,
                       credits=_credits_filter, percent=_percent_filter)
    return env


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise ValueError(f"no texts in language {language!r}; there are {', '.join(LANGUAGES)}")


def render(name: str, language: str, /, **context: Any) -> str:
    """``templates/<language>/<name>`` rendered with ``context``; an error if it does not exist.

    A plain-text template's lines of prose are wrapped (:func:`wrap_prose`)."""
    _check_language(language)
    template = environment().get_template(f"{language}/{name}")
    text = template.render(language=language, **context)
    return wrap_prose(text) if name.endswith(".txt") else text


MAX_LINE = 78
"""No line of a mail's text part is longer (RFC 5322 2.1.1 recommends 78)."""
WRAP_WIDTH = 72
_TABLE_ROW = re.compile(r"( +\S.{0,40}?  +)\S")
"""An indented row of a table (the help's commands): the second column starts after a gap."""
_LABELLED_VALUE = re.compile(r"[A-Z][A-Za-z ]{0,30}: \S+")
_INLINE_COMMAND = re.compile(r"(?<=\S  )[^ ()]+(?: [^ ()]+){1,5}(?=  |\)|[.,;:]?$)")
"""A command set off in prose by two spaces (``write  unwatch CODE  to …``, ``(… schreiben Sie
zuschauen CODE)``): its words are kept on one line, so that a copy of that line is the command."""
_KEPT_SPACE = "\ue000"
"""A space of an inline command while the line is wrapped (a private-use character: no space to
``textwrap``, and never in a text a player reads)."""
"""A label and one value to copy, like ``Dice commitment: <64 hex digits>`` (81 characters, its
form fixed by SPEC §6): kept on one line, since the value belongs with its label."""


def wrap_prose(text: str) -> str:
    """Every line longer than MAX_LINE wrapped at WRAP_WIDTH with ``textwrap``, its continuation
    lines indented like it (a table row's: under its second column); shorter lines (the board, the
    identifiers, command examples) stay as they are, and so does a label with its one value.  A
    word longer than a line (an address, a link) is never broken, nor a command set off by two
    spaces (:data:`_INLINE_COMMAND`)."""
    lines = []
    for line in text.split("\n"):
        if len(line) <= MAX_LINE or _LABELLED_VALUE.fullmatch(line):
            lines.append(line)
            continue
        column = _TABLE_ROW.match(line)  # "  command   what it does": continue under what it does
        indent = " " * column.end(1) if column else line[: len(line) - len(line.lstrip(" "))]
        kept = _INLINE_COMMAND.sub(lambda found: found.group(0).replace(" ", _KEPT_SPACE)
                                   if len(found.group(0)) <= 40 else found.group(0), line)
        lines += (wrapped.replace(_KEPT_SPACE, " ") for wrapped in textwrap.wrap(
            kept, WRAP_WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False))
    return "\n".join(lines)


def explain(
    code: str,
    details: Mapping[str, Any] | str,
    language: str,
    numbering: Numbering,
    colour: Colour,
) -> str:
    """The reason for an error ``code`` worded for a player, points in their numbering.

    Each code is a macro of ``templates/<language>/reasons.txt`` named :func:`reason_name`,
    taking the error's details as one argument ``d``; details given as one string
    (:class:`pbem.commands.CommandError`) are ``d.value``.  Points in the details are in the
    mover's own numbering.  A code without a macro gets the generic ``unknown`` sentence naming
    the code, never an English fallback.
    """
    reasons = _reasons(language, numbering, colour)
    name = reason_name(code)
    macro = getattr(reasons, name, None) if name.isidentifier() else None
    if not isinstance(macro, jinja2.runtime.Macro):
        return str(getattr(reasons, "unknown")(code)).strip()
    worded = macro({"value": details} if isinstance(details, str) else dict(details))
    return str(worded).strip()


def fix_example(code: str, language: str) -> str | None:
    """The line that fixes a refused command of ``code``, to be copied as it stands (the
    ``example_…`` macro of ``reasons.txt``), or None when the reason shows its forms itself."""
    reasons = _reasons(language, Numbering.OWN, Colour.WHITE)
    macro = getattr(reasons, "example_" + code.replace("-", "_"), None)
    return str(macro()).strip() if isinstance(macro, jinja2.runtime.Macro) else None


def reason_name(code: str) -> str:
    """The macro name of an error code: ``invite-address`` is ``reason_invite_address``.

    The prefix keeps codes like ``language`` or ``numbering`` from hiding the template
    variables of the same name that the filters read.
    """
    return "reason_" + code.replace("-", "_")


def reason_names(language: str) -> frozenset[str]:
    """The macro names of the codes worded in ``language`` (for tests and start-up checks)."""
    reasons = _reasons(language, Numbering.OWN, Colour.WHITE)
    return frozenset(
        name for name in dir(reasons)
        if name.startswith("reason_") and isinstance(getattr(reasons, name), jinja2.runtime.Macro)
    )


def _reasons(
    language: str, numbering: Numbering, colour: Colour
) -> jinja2.environment.TemplateModule:
    """``reasons.txt`` of ``language`` as a module of macros, for a player's numbering."""
    _check_language(language)
    template = environment().get_template(f"{language}/{REASONS_TEMPLATE}")
    return template.make_module({
        "language": language,
        "numbering": numbering.value,
        "colour": colour.value,
        "limits": COMMAND_LIMITS,
    })
