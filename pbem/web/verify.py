"""The dice proof of an uploaded ``.mat`` (the page ``BASE_URL/verify``): which game of the file
each pasted seed gave every roll of, by the scheme of :mod:`pbem.rules.dice`, the same check as
``pbem verify-dice`` (which also compares the commitments of saved mails)."""

from __future__ import annotations

import re

from pbem.render.views import SeedVerdict, VerifyProblem, VerifyView
from pbem.rules import dice as fair_dice
from pbem.rules.matfile import read_rolls

MAX_SEEDS = 64
"""A match to 25 points has rarely more games; more seeds are not read."""
_HEX64 = r"(?<![0-9a-fA-F])([0-9a-fA-F]{64})(?![0-9a-fA-F])"
_SEED_LINE = re.compile(r"Dice seed:\s*" + _HEX64)
_COMMITMENT_LINE = re.compile(r"Dice commitment:\s*" + _HEX64)
_BARE = re.compile(_HEX64)


def verify_upload(language: str, csrf: str, mat: str, pasted: str) -> VerifyView:
    """The page after an upload: ``mat`` is the file's text, ``pasted`` the text field: ``Dice
    seed:`` lines (or bare seeds), and perhaps the ``Dice commitment:`` lines of the games' first
    mails, which each seed's SHA-256 is then compared with."""
    commitments = {found.lower() for found in _COMMITMENT_LINE.findall(pasted)}
    labelled = _SEED_LINE.findall(pasted)
    bare = [found for found in _BARE.findall(pasted) if found.lower() not in commitments]
    seeds = list(dict.fromkeys(found.lower() for found in labelled or bare))[:MAX_SEEDS]
    try:
        games = read_rolls(mat)
    except ValueError:
        games = []
    if not games:
        return VerifyView(language, csrf, VerifyProblem.NOT_MAT)
    if not any(games):
        return VerifyView(language, csrf, VerifyProblem.NO_ROLLS, games=len(games),
                          commitments=tuple((seed, fair_dice.commitment(bytes.fromhex(seed))) for seed in seeds))
    if not seeds:
        return VerifyView(language, csrf, VerifyProblem.NO_SEED, games=len(games))
    return VerifyView(language, csrf, games=len(games),
                      verdicts=tuple(_verdict(seed, games, commitments) for seed in seeds))


def _verdict(hex_seed: str, games: list[list[fair_dice.WrittenRoll]], commitments: set[str]) -> SeedVerdict:
    seed = bytes.fromhex(hex_seed)
    found = fair_dice.games_of_seed(seed, games)
    commitment = fair_dice.commitment(seed)
    committed = None if not commitments else commitment in commitments
    if found:
        proved = fair_dice.prove_game(seed, games[found[0] - 1])
        return SeedVerdict(hex_seed, commitment, found, rolls=len(proved.checks), ties=proved.ties,
                           committed=committed)
    first_wrong = None
    only = fair_dice.prove_game(seed, games[0]) if len(games) == 1 else None
    if only is not None and only.wrong:
        check = only.wrong[0]
        first_wrong = (only.checks.index(check) + 1, check.written.dice, check.derived)
    return SeedVerdict(hex_seed, commitment, (), first_wrong=first_wrong, committed=committed)
