"""The dice derivation of issue 14 (``pbem.rules.dice``) against digests computed by OpenSSL,
the ``.mat`` reader against games the writer wrote, and a first look at uniformity (the full
chi-square over 10^6 rolls is ``bench/dice_bench.py``)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pbem.rules import dice
from pbem.rules import game as g
from pbem.rules.dice import WrittenRoll, check_rolls, commitment, opening, roll, seed_from_hex
from pbem.rules.game import ActionKind
from pbem.rules.matfile import match_text, read_rolls
from pbem.rules.moves import legal_plays
from pbem.rules.scoring import Format, MatchRules, Score

SEED = bytes(range(32))
# printf K | openssl dgst -sha256 -mac HMAC -macopt hexkey:000102…1f
OPENSSL = {
    0: "3a8b171143bc3fe5972827cf3a413e96e1b4573ae308ee4e2ee652100511049f",  # 0x3a→5, 0x8b→2
    1: "7761b1cc25227dfca0bd6d972acc52abb62f24ce50ad5a7a430b05c5a6f5497b",  # 0x77→6, 0x61→2
    27: "a1fe9b761e75df57a5f2645f7b4519724015feafffa605a518868accf7e93d33",  # 0xa1→6, 0xfe skipped, 0x9b→6
    41: "fed32fdc175c2211a9d66faf3e5f135b35148398f16b8a10dc47e780c4f0222a",  # 0xfe skipped, 0xd3→2, 0x2f→6
}


def test_rolls_follow_the_issue_text_on_digests_computed_by_openssl() -> None:
    assert {k: roll(SEED, k) for k in OPENSSL} == {0: (5, 2), 1: (6, 2), 27: (6, 6), 41: (2, 6)}


def test_the_commitment_is_the_sha256_of_the_seed_in_lowercase_hex() -> None:
    # printf '\x00\x01…\x1f' | sha256sum
    assert commitment(SEED) == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    assert seed_from_hex(" " + SEED.hex().upper() + "\n") == SEED
    for wrong in ("", "00" * 31, "zz" * 32, "00" * 33):
        with pytest.raises(dice.SeedError):
            seed_from_hex(wrong)
    with pytest.raises(dice.SeedError):
        roll(SEED[:31], 0)


def test_a_tied_opening_is_rolled_again_with_the_next_number() -> None:
    tied = next(seed for seed in (bytes([n]) * 32 for n in range(256)) if roll(seed, 0)[0] == roll(seed, 0)[1])
    number, first = opening(tied)
    assert number >= 1 and first == roll(tied, number) and first[0] != first[1]
    assert all(roll(tied, k)[0] == roll(tied, k)[1] for k in range(number))


def test_check_rolls_compares_the_opening_with_its_starter_and_later_rolls_without_order() -> None:
    number, (first, second) = opening(SEED)
    starter = 0 if first > second else 1
    later = roll(SEED, number + 1)
    good = [WrittenRoll(starter, (max(first, second), min(first, second))), WrittenRoll(1 - starter, later[::-1])]
    assert [check.matches for check in check_rolls(SEED, good)] == [True, True]
    wrong_starter = [WrittenRoll(1 - starter, good[0].dice), good[1]]
    assert [check.matches for check in check_rolls(SEED, wrong_starter)] == [False, True]
    other = next((a, b) for a in range(1, 7) for b in range(1, 7) if sorted((a, b)) != sorted(later))
    assert [check.matches for check in check_rolls(SEED, [good[0], WrittenRoll(1 - starter, other)])] == [True, False]


def test_games_of_seed_finds_the_seeds_game_and_gives_up_the_others_at_their_first_wrong_roll(monkeypatch) -> None:
    """A /verify upload may pair 64 seeds with hundreds of games: each wrong pair costs a roll or
    two, not the derivation of every roll of the game."""
    rolls = [opening(SEED)[1], *(roll(SEED, opening(SEED)[0] + k) for k in range(1, 40))]
    starter = 0 if rolls[0][0] > rolls[0][1] else 1
    own = [WrittenRoll(starter, rolls[0]), *(WrittenRoll((starter + k) % 2, dice) for k, dice in enumerate(rolls[1:], 1))]
    other = bytes([7]) * 32
    assert dice.games_of_seed(SEED, [own]) == (1,)
    assert dice.games_of_seed(other, [own, [], own]) == ()
    derived = 0
    real_roll = dice.roll

    def counted(seed: bytes, number: int) -> tuple[int, int]:
        nonlocal derived
        derived += 1
        return real_roll(seed, number)

    monkeypatch.setattr(dice, "roll", counted)
    assert dice.games_of_seed(other, [own] * 100) == ()
    assert derived <= 100 * 6, derived
    derived = 0
    assert dice.games_of_seed(SEED, [own, own]) == (1, 2) and derived >= 2 * len(own)


def _random_game(rng: random.Random, rules: MatchRules) -> g.Game:
    game = None
    while game is None:
        game = g.new_game(Score(rules), (rng.randint(1, 6), rng.randint(1, 6)))
    while game.phase is not g.Phase.OVER:
        if game.phase in (g.Phase.TO_ROLL, g.Phase.ROLL_OR_DOUBLE):
            game = g.roll(game, game.seat, (rng.randint(1, 6), rng.randint(1, 6)))
        else:
            plays = legal_plays(game.board, game.dice or (1, 1))
            game = g.play(game, game.seat, rng.choice(sorted(plays.values())))
    return game


def test_the_mat_reader_finds_every_roll_the_writer_wrote_in_its_column() -> None:
    rng = random.Random(5)
    games = [_random_game(rng, MatchRules(Format.MONEY, length=0)) for _ in range(3)]
    read = read_rolls(match_text(games, ("Anna", "Ben")))
    assert len(read) == 3
    for game, written in zip(games, read, strict=True):
        rolls = [action for action in game.record if action.kind is ActionKind.ROLL]
        assert [(w.seat, sorted(w.dice)) for w in written] == [(a.seat, sorted(a.dice or ())) for a in rolls]
    with pytest.raises(ValueError):
        read_rolls("  1) 31: 8/5 6/5\n")


CHI_SQUARE_999 = {35: 66.619, 5: 20.515}
"""Textbook critical values: the chi-square exceeds them with probability 0.001."""


def test_the_dice_look_uniform_on_a_small_sample() -> None:
    """20,000 rolls of 200 seeds: the 36 ordered outcomes and the 6 faces (loose bound: a fair
    die fails it once in 1000 samples, and the sample is fixed, so the test does not flicker)."""
    rng = random.Random(14)
    rolls = [roll(rng.randbytes(32), k) for _ in range(200) for k in range(100)]
    outcomes, faces = Counter(rolls), Counter(die for pair in rolls for die in pair)
    expected_outcome, expected_face = len(rolls) / 36, 2 * len(rolls) / 6
    chi_outcomes = sum((outcomes[(a, b)] - expected_outcome) ** 2 / expected_outcome
                       for a in range(1, 7) for b in range(1, 7))
    chi_faces = sum((faces[face] - expected_face) ** 2 / expected_face for face in range(1, 7))
    assert chi_outcomes < CHI_SQUARE_999[35] and chi_faces < CHI_SQUARE_999[5], (chi_outcomes, chi_faces)
