"""Honest display names: the one rule for the name a player's mails and pages show.

A name from a From header is shown to opponents in subjects ("[Backgammon] Ben – Anna") and
texts ("Ben writes: …"), so it must not pass for anyone else: not for an address (a name holding
"@", or a look-alike of it once NFKC has folded the compatibility forms such as U+FF20 and U+FE6B,
or an address spelled with "(at)"), and, as the service checks, not for the service or another
player.  Names are compared by their :func:`skeleton`: NFKC, case folded, every character that
Unicode's confusables table lists as a look-alike of a Latin one replaced by it
(``confusable_homoglyphs``), and spaces, punctuation and invisible characters left out, so that
"Веn" in Cyrillic, "B e n" and "BEN" are all "ben".
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from confusable_homoglyphs import confusables

_SPELLED_ADDRESS = re.compile(r"\S\s*[\[(<{]\s*at\s*[\])>}]\s*\S", re.IGNORECASE)
"""An address spelled out to pass filters: ``anna (at) example.org``, ``anna[at]example``."""


def holds_address(name: str) -> bool:
    """The name holds an address or a look-alike of one."""
    folded = unicodedata.normalize("NFKC", name)
    return "@" in folded or "@" in skeleton_characters(folded) or bool(_SPELLED_ADDRESS.search(folded))


def skeleton(text: str) -> str:
    """What ``text`` looks like, for comparing names (see the module docstring)."""
    # Look-alikes first (the capital Cyrillic В looks like B, its small в like no Latin letter),
    # then the case, then look-alikes of what the case made.
    folded = skeleton_characters(skeleton_characters(unicodedata.normalize("NFKC", text)).casefold())
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
