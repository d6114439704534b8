"""Honest display names: the one rule for the name a player's mails and pages show.

A name from a From header is shown to opponents in subjects ("[Backgammon] Ben – Anna") and
texts ("Ben writes: …"), so it must not pass for anyone else: not for an address (a name holding
"@", or a look-alike of it once NFKC has folded the compatibility forms such as U+FF20 and U+FE6B,
or an address spelled with "(at)"), and, as the service checks, not for the service or another
player.  Names are compared by their :func:`skeleton`: NFKC, case folded, every character that
Unicode's confusables table lists as a look-alike of a Latin one replaced by it
(``confusable_homoglyphs``), and spaces, punctuation and invisible characters left out, so that
"Веn" in Cyrillic, "B e n" and "BEN" are all "ben".  ASCII has look-alikes of its own, which
the skeleton folds the same way (:data:`ASCII_LOOK_ALIKES`): "Backgammon by MaiI" (a capital i),
"Backgarnmon by Mail" and "Backgammon by Mai1" all read as the service's name, and "b at
example dot org" as the address b@example.org.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from confusable_homoglyphs import confusables

_SPELLED_ADDRESS = re.compile(r"\S\s*[\[(<{]\s*at\s*[\])>}]\s*\S", re.IGNORECASE)
"""An address spelled out to pass filters: ``anna (at) example.org``, ``anna[at]example``."""
_SPELLED = {"@": re.compile(r"(?<=\w) ?[\[(<{]? ?\bat\b ?[\])>}]? ?(?=\w)", re.IGNORECASE),
            ".": re.compile(r"(?<=\w) ?[\[(<{]? ?\bdot\b ?[\])>}]? ?(?=\w)", re.IGNORECASE)}
"""The words "at" and "dot" between two words (bracketed or not), as an address is spelled out
to be read but not recognised: ``b at example dot org``.  Run on text whose spaces are single."""
_SPELLED_WITH_DOT = re.compile(r"\w@\w+(?:\.\w+)*\.\w")
ASCII_LOOK_ALIKES: tuple[tuple[str, str], ...] = (("rn", "m"), ("vv", "w"), ("1", "l"), ("i", "l"), ("|", "l"),
                                                  ("0", "o"))
"""ASCII letters and digits a reader takes for others (after case folding, so that the capital I
is an i): each is replaced by the second, in this order.  The one table of such folds."""


def holds_address(name: str) -> bool:
    """The name holds an address or a look-alike of one (also spelled out: ``b at example dot org``;
    "at" alone, as in "Zoë at home", is no address)."""
    folded = unicodedata.normalize("NFKC", name)
    return ("@" in folded or "@" in skeleton_characters(folded) or bool(_SPELLED_ADDRESS.search(folded))
            or bool(_SPELLED_WITH_DOT.search(spelled_out(folded))))


def spelled_out(text: str) -> str:
    """``text`` with its spaces made single and the words "at" and "dot" between words written
    as "@" and "."."""
    text = " ".join(text.split())
    for sign, word in _SPELLED.items():
        text = word.sub(sign, text)
    return text


def skeleton(text: str) -> str:
    """What ``text`` looks like, for comparing names (see the module docstring)."""
    # Look-alikes first (the capital Cyrillic В looks like B, its small в like no Latin letter),
    # then the case, then look-alikes of what the case made.
    folded = spelled_out(skeleton_characters(skeleton_characters(unicodedata.normalize("NFKC", text)).casefold()))
    for look_alike, letter in ASCII_LOOK_ALIKES:
        folded = folded.replace(look_alike, letter)
    return "".join(character for character in folded if character.isalnum() or character == "@")


def skeleton_characters(text: str) -> str:
    return "".join(map(_latin_look_alike, text))


@lru_cache(maxsize=4096)
def _latin_look_alike(character: str) -> str:
    """The ASCII character ``character`` looks like, if Unicode's confusables name one; else itself."""
    if character.isascii():
        return character
    found = confusables.is_confusable(character, greedy=True, preferred_aliases=["latin"]) or []
    for entry in found:
        for glyph in entry["homoglyphs"]:
            if len(glyph["c"]) == 1 and glyph["c"].isascii():
                return str(glyph["c"]).casefold()
    return character


def passes_for(name: str, others: set[str]) -> bool:
    """``name`` looks like one of ``others`` (skeletons of names and addresses it must not pass for)."""
    key = skeleton(name)
    return not key or key in others
