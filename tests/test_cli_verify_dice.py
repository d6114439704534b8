"""``pbem verify-dice`` on games made here: rolled with this file's own hmac code (the issue's
text), written by the ``.mat`` writer, then checked, tampered with and checked again.  The
whole games the service plays are checked in tests/service/test_fair_dice.py."""

from __future__ import annotations

import hashlib
import hmac
import random
from dataclasses import replace
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli import main
from pbem.rules import game as g
from pbem.rules.game import ActionKind, Game
from pbem.rules.matfile import match_text
from pbem.rules.moves import legal_plays
from pbem.rules.scoring import Format, MatchRules, Score, add_result, is_over


def issue_roll(seed: bytes, k: int) -> tuple[int, int]:
    dice = [b % 6 + 1 for b in hmac.new(seed, str(k).encode("ascii"), hashlib.sha256).digest() if b < 252]
    return dice[0], dice[1]


def seeded_game(seed: bytes, score: Score, rng: random.Random) -> Game:
    """A game whose every roll is roll k of ``seed``, ties of the opening rolled again."""
    k, game = 0, None
    while game is None:
        game = g.new_game(score, issue_roll(seed, k))
        k += 1
    while game.phase is not g.Phase.OVER:
        if game.phase is g.Phase.TO_MOVE:
            assert game.dice is not None
            game = g.play(game, game.seat, rng.choice(sorted(legal_plays(game.board, game.dice).values())))
        else:
            game = g.roll(game, game.seat, issue_roll(seed, k))
            k += 1
    return game


@pytest.fixture
def match(tmp_path: Path) -> tuple[list[bytes], list[Game], Path]:
    """A match to 3 on seeds 1, 2, … (one per game) and its .mat file."""
    rng = random.Random(3)
    score, seeds, games = Score(MatchRules(Format.MATCH, length=3)), [], []
    while not is_over(score):
        seeds.append(bytes([len(seeds) + 1]) * 32)
        games.append(seeded_game(seeds[-1], score, rng))
        assert games[-1].result is not None
        score = add_result(score, games[-1].result)
    path = tmp_path / "match.mat"
    path.write_text(match_text(games, ("Anna", "Ben")), encoding="utf-8")
    return seeds, games, path


def seed_options(seeds: list[bytes]) -> list[str]:
    return [word for seed in seeds for word in ("--seed", seed.hex())]


def test_a_match_checks_out_game_by_game(match, capsys) -> None:
    seeds, games, path = match
    assert main(["verify-dice", *seed_options(seeds), str(path)]) == 0
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith("game ")] == \
        [f"game {number}" for number in range(1, len(games) + 1)]
    assert out.rstrip().endswith("verdict: OK: every roll of the .mat file is the one its seed gives")
    # Fewer seeds: the games left are named as not checked, no mismatch, but no OK either.
    assert main(["verify-dice", *seed_options(seeds[:1]), str(path)]) == 3
    out = capsys.readouterr().out
    assert "not checked: game 2 (no seed given for it)" in out
    assert out.rstrip().endswith("verdict: INCOMPLETE: what was checked matches, but not everything could be checked")


def test_nothing_to_check_is_no_ok_and_seeds_must_match_their_own_commitments(match, capsys) -> None:
    """Found by a review: a seed alone said OK; the seeds of two games, swapped, matched the
    other game's commitment."""
    seeds, _, path = match
    first, second = seeds[0], seeds[1]
    assert main(["verify-dice", "--seed", first.hex()]) == 2
    assert "nothing to check the seeds against" in capsys.readouterr().err
    committed = ["--commitment", hashlib.sha256(first).hexdigest(), "--commitment", hashlib.sha256(second).hexdigest()]
    assert main(["verify-dice", "--seed", first.hex(), "--seed", second.hex(), *committed]) == 3
    assert "not checked: the rolls (no .mat file given)" in capsys.readouterr().out
    assert main(["verify-dice", "--seed", second.hex(), "--seed", first.hex(), *committed]) == 1
    out = capsys.readouterr().out
    assert "seed 1: its SHA-256" in out and "is not commitment 1" in out
    assert "verdict: FAILED: 2 seed(s) not the one committed to" in out


def test_a_changed_roll_a_changed_starter_or_a_wrong_seed_fails(match, tmp_path, capsys) -> None:
    seeds, games, path = match
    first = games[0]
    rolls = [index for index, action in enumerate(first.record) if action.kind is ActionKind.ROLL]
    index = rolls[3]
    action = first.record[index]
    assert action.dice is not None
    other = next((a, b) for a in range(1, 7) for b in range(1, 7) if sorted((a, b)) != sorted(action.dice))
    record = list(first.record)
    record[index] = replace(action, dice=other)
    tampered = tmp_path / "tampered.mat"
    tampered.write_text(match_text([replace(first, record=tuple(record)), *games[1:]], ("Anna", "Ben")), "utf-8")
    assert main(["verify-dice", *seed_options(seeds), str(tampered)]) == 1
    out = capsys.readouterr().out
    assert f"game 1: roll {3 + _ties(seeds[0])} is {other[0]}-{other[1]} in the file" in out
    assert "verdict: FAILED: 1 roll(s) or game(s) not what the seeds give" in out

    # The same game with the seats exchanged: the same dice, but the other player started.
    assert first.result is not None and first.result.winner is not None
    mirrored = replace(first, record=tuple(replace(action, seat=1 - action.seat) for action in first.record),
                       result=replace(first.result, winner=1 - first.result.winner))
    swapped = tmp_path / "swapped.mat"
    swapped.write_text(match_text([mirrored, *games[1:]], ("Anna", "Ben")), "utf-8")
    assert main(["verify-dice", *seed_options(seeds), str(swapped)]) == 1
    out = capsys.readouterr().out
    assert "game 1: the opening roll is" in out and "verdict: FAILED: 1 roll(s) or game(s) not what the seeds give" in out

    assert main(["verify-dice", "--seed", bytes(32).hex(), str(path)]) == 1


def _ties(seed: bytes) -> int:
    k = 0
    while issue_roll(seed, k)[0] == issue_roll(seed, k)[1]:
        k += 1
    return k


def test_a_mail_saved_in_mbox_form_with_its_commitment_seed_and_mat(match, tmp_path, capsys) -> None:
    seeds, games, path = match
    mails = []
    for number, seed in enumerate(seeds, start=1):
        mail = EmailMessage()
        mail["From"], mail["To"] = "backgammon@example.org", "anna@example.org"
        mail["Date"] = f"Sun, 22 Nov 2026 10:{number:02d}:00 +0000"
        mail["Subject"] = f"game {number}"
        commitment = hashlib.sha256(seed).hexdigest()
        mail.set_content(f"Game {number} is over.\nDice seed: {seed.hex()}\n> Dice seed: {bytes(32).hex()}\n"
                         f"Game {number + 1} begins.\nDice commitment: {commitment}\n")
        if number == len(seeds):
            mail.add_attachment(path.read_text(encoding="utf-8"), filename="pbem-1-Anna-Ben.mat")
        mails.append(mail)
    files = []
    for number, mail in reversed(list(enumerate(mails))):  # given newest first: the Date orders them
        file = tmp_path / f"{number}.eml"
        file.write_bytes(b"From backgammon@example.org Sun Nov 22 10:00:00 2026\n" + mail.as_bytes())
        files.append(str(file))
    assert main(["verify-dice", *files]) == 0
    out = capsys.readouterr().out
    assert f"seed {len(seeds)}: its SHA-256 is commitment {len(seeds)}" in out and "verdict: OK" in out
    assert main(["verify-dice", "--commitment", "ab" * 32, *files]) == 0  # one more commitment: fine
    capsys.readouterr()
    assert main(["verify-dice", "--commitment", "AB" * 32, "--seed", "cd" * 32]) == 1
    assert "is not commitment 1 (abab" in capsys.readouterr().out
