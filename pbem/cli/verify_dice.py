"""``pbem verify-dice``: check that every roll of a game came from the seed committed to before it.

It reads saved mails of the service (``.eml``: the ``Dice commitment:`` and ``Dice seed:``
lines of their text, and the ``.mat`` file attached at the end of a match) and ``.mat`` files,
takes seeds and commitments also from ``--seed`` and ``--commitment`` (and with ``--match ID`` the
``.mat`` and the revealed seeds of a match from the database of ``--config``), and then checks:

* each seed against the commitments: its SHA-256 must be commitment n for seed n (when there
  is one commitment per seed; else one of them, and the order is said to be unchecked);
* game n of the ``.mat`` against seed n (the seeds in the order given: ``--seed`` first, then
  those of the mails, oldest mail first): every roll written must be the roll the seed gives.

It prints one line per check and a verdict; exit status 0 when everything given was checked and
matches, 1 on any mismatch, 2 when nothing could be checked (no seed, nothing to check the seeds
against, an unreadable file), 3 when what was checked matches but some of it could not be
checked (a game of the ``.mat`` without its seed, or seeds and commitments without a ``.mat``).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TextIO

from pbem.cli.loading import UsageError, config_of, database_of
from pbem.mail.composing import parse_game_message_id
from pbem.rules import dice as fair_dice
from pbem.rules.matfile import read_rolls

EXIT_MISMATCH = 1
EXIT_INCOMPLETE = 3
"""What was checked matches, but a game had no seed or no rolls were given."""
_COMMITMENT_LINE = re.compile(r"^Dice commitment: ([0-9a-f]{64})\s*$", re.MULTILINE)
_SEED_LINE = re.compile(r"^Dice seed: ([0-9a-f]{64})\s*$", re.MULTILINE)
_HEADER_LINE = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*:")


@dataclass
class Evidence:
    """What the files and options give: commitments, seeds (in game order) and the ``.mat`` texts."""

    commitments: list[str] = field(default_factory=list)
    seeds: list[bytes] = field(default_factory=list)
    mat_texts: list[str] = field(default_factory=list)


def verify_dice(args: argparse.Namespace) -> int:
    try:
        evidence = gather(args.files, args.seed or [], args.commitment or [])
    except (OSError, ValueError) as problem:
        raise UsageError(str(problem)) from None
    if args.match is not None:
        _from_database(evidence, args)
    return report(evidence, sys.stdout)


def _from_database(evidence: Evidence, args: argparse.Namespace) -> None:
    """``--match ID``: the match's ``.mat`` and the seeds its finished games keep (the operator's
    check of a game a player asks about; the commitments are in the players' mails)."""
    from sqlmodel import Session

    from pbem.service.pages.reports import match_file, revealed_seeds

    engine = database_of(config_of(args.config, mail_secrets=False), create=False)
    try:
        with Session(engine) as session:
            text = match_file(session, args.match)
            seeds = revealed_seeds(session, args.match)
    finally:
        engine.dispose()
    if text is None:
        raise UsageError(f"no game or match with id {args.match}")
    if None in seeds:
        raise UsageError(f"match {args.match} began before dice seeds were kept (schema 0008): nothing to check")
    evidence.seeds += [bytes.fromhex(seed) for seed in seeds if seed is not None]
    if read_rolls(text):
        _add_mat(evidence, text, f"match {args.match}")


def gather(files: list[Path], seeds: list[str], commitments: list[str]) -> Evidence:
    evidence = Evidence(commitments=[fair_dice.commitment_from_hex(text) for text in commitments],
                        seeds=[fair_dice.seed_from_hex(text) for text in seeds])
    mails: list[tuple[tuple[float, int, int, int], EmailMessage]] = []
    for index, path in enumerate(files):
        raw = path.read_bytes()
        if raw.startswith(b"From "):  # a mail saved in mbox form: its envelope line first
            raw = raw.partition(b"\n")[2]
        if _HEADER_LINE.match(raw):
            mail = message_from_bytes(raw, policy=default_policy)
            assert isinstance(mail, EmailMessage)
            mails.append((_order(mail, index), mail))
        else:
            _add_mat(evidence, raw.decode("utf-8", errors="replace"), path.name)
    for _, mail in sorted(mails, key=lambda found: found[0]):
        _read_mail(evidence, mail)
    # Both players' copies of a mail, or a seed also given by --seed, count once: every game has
    # a seed of its own.
    evidence.seeds = list(dict.fromkeys(evidence.seeds))
    evidence.commitments = list(dict.fromkeys(evidence.commitments))
    return evidence


def _order(mail: EmailMessage, index: int) -> tuple[float, int, int, int]:
    """When the mail was sent: its Date (seconds), then the game number and turn its
    Message-ID carries (two mails of one second), then the order the files were given in."""
    try:
        sent = parsedate_to_datetime(str(mail["Date"])).timestamp()
    except (TypeError, ValueError):
        sent = float("-inf")
    stamp = parse_game_message_id(str(mail["Message-ID"] or "").strip())
    return (sent, stamp.game_number if stamp else 0, stamp.turn if stamp else 0, index)


def _read_mail(evidence: Evidence, mail: EmailMessage) -> None:
    body = mail.get_body(preferencelist=("plain",))
    text = str(body.get_content()) if body is not None else ""
    evidence.commitments += _COMMITMENT_LINE.findall(text)
    evidence.seeds += [bytes.fromhex(seed) for seed in _SEED_LINE.findall(text)]
    for part in mail.iter_attachments():
        if (part.get_filename() or "").endswith(".mat"):
            content = part.get_content()
            _add_mat(evidence, content if isinstance(content, str) else content.decode("utf-8", "replace"),
                     part.get_filename() or "")


def _add_mat(evidence: Evidence, text: str, name: str) -> None:
    """A ``.mat`` text; the same file attached to several mails counts once."""
    if not read_rolls(text):
        raise ValueError(f"{name}: neither a mail nor a .mat file with a game")
    if text not in evidence.mat_texts:
        evidence.mat_texts.append(text)


def report(evidence: Evidence, out: TextIO) -> int:
    """Check the evidence, print a line per check and the verdict; returns the exit status."""
    if len(evidence.mat_texts) > 1:
        raise UsageError(f"{len(evidence.mat_texts)} different .mat files: give the files of one match")
    if not evidence.seeds:
        raise UsageError("no dice seed: give --seed or the mail that ended the game (its 'Dice seed:' line)")
    games = read_rolls(evidence.mat_texts[0]) if evidence.mat_texts else []
    if not games and not evidence.commitments:
        raise UsageError("nothing to check the seeds against: give the .mat file (or the mail it came with) "
                         "or the commitments ('Dice commitment:' lines, --commitment)")
    wrong_seeds = _check_commitments(evidence.seeds, evidence.commitments, out)
    wrong_rolls, unchecked = 0, []
    if not games:
        unchecked.append("the rolls (no .mat file given)")
    elif len(games) < len(evidence.seeds):
        print(f"rolls: the .mat file has {len(games)} game(s) but {len(evidence.seeds)} seeds were given",
              file=out)
        wrong_rolls += 1
    for number, written in enumerate(games, start=1):
        if number > len(evidence.seeds):
            unchecked.append(f"game {number} (no seed given for it)")
        else:
            wrong_rolls += _check_game(number, evidence.seeds[number - 1], written, out)
    if wrong_seeds or wrong_rolls:
        what = [*([f"{wrong_seeds} seed(s) not the one committed to"] if wrong_seeds else []),
                *([f"{wrong_rolls} roll(s) or game(s) not what the seeds give"] if wrong_rolls else [])]
        print(f"verdict: FAILED: {'; '.join(what)}", file=out)
        return EXIT_MISMATCH
    if unchecked:
        for missing in unchecked:
            print(f"not checked: {missing}", file=out)
        print("verdict: INCOMPLETE: what was checked matches, but not everything could be checked", file=out)
        return EXIT_INCOMPLETE
    checked = ["every seed is the one committed to"] if evidence.commitments else []
    print(f"verdict: OK: {', '.join([*checked, 'every roll of the .mat file is the one its seed gives'])}"
          if games else f"verdict: OK: {checked[0]}", file=out)
    return 0


def _check_commitments(seeds: list[bytes], commitments: list[str], out: TextIO) -> int:
    """Seed n against commitment n when there is one commitment per seed (both in the order of
    the games); else each seed against any of them (the order not checked, and said so)."""
    if not commitments:
        for number, seed in enumerate(seeds, start=1):
            print(f"seed {number}: SHA-256 {fair_dice.commitment(seed)} (no commitment given to compare)", file=out)
        return 0
    in_order = len(commitments) == len(seeds)
    if not in_order:
        print(f"commitments: {len(commitments)} for {len(seeds)} seed(s): each seed is looked for among all of "
              "them, their order is not checked", file=out)
    wrong = 0
    for number, seed in enumerate(seeds, start=1):
        hashed = fair_dice.commitment(seed)
        if hashed == commitments[number - 1] if in_order else hashed in commitments:
            print(f"seed {number}: its SHA-256 is commitment {commitments.index(hashed) + 1} ({hashed})", file=out)
            continue
        wanted = f"commitment {number} ({commitments[number - 1]})" if in_order else \
            f"any of the {len(commitments)} commitment(s)"
        print(f"seed {number}: its SHA-256 {hashed} is not {wanted}: MISMATCH", file=out)
        wrong += 1
    return wrong


def _check_game(number: int, seed: bytes, written: list[fair_dice.WrittenRoll], out: TextIO) -> int:
    proof = fair_dice.prove_game(seed, written)
    for check in proof.wrong:
        if check.is_opening:
            shown = f"the opening roll is {_dice(check.written.dice)} for seat {check.written.seat} in the file"
            derived = f"seat 0 a {check.derived[0]} and seat 1 a {check.derived[1]} (roll {check.number})"
        else:
            shown = f"roll {check.number} is {_dice(check.written.dice)} in the file"
            derived = _dice(check.derived)
        print(f"game {number}: {shown}, but seed {number} gives {derived}: MISMATCH", file=out)
    if not proof.checks:
        print(f"game {number}: no rolls in the file", file=out)
    elif proof.holds:
        again = f"; {proof.ties} tied opening roll(s) were rolled again" if proof.ties else ""
        print(f"game {number}: all {len(proof.checks)} rolls match seed {number} "
              f"(rolls 0 to {proof.checks[-1].number}{again})", file=out)
    return len(proof.wrong)


def _dice(dice: tuple[int, int]) -> str:
    return f"{dice[0]}-{dice[1]}"
