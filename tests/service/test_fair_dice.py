"""Provably fair dice (issue 14, item 5): whole games on the service's own seeded dice, every
roll recomputed from the revealed seed by this file's own few lines of hmac (the issue's text,
not pbem's code) and compared with the ``.mat`` as GNU Backgammon reads it; the commitment in
each game's first mail; the seed in no mail and no log line before the game is over; a restart
in the middle changes nothing; ``pbem verify-dice`` accepts the real game and refuses a
tampered one."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import shutil
import subprocess
from email.message import EmailMessage
from pathlib import Path

import pytest
from post_office import LoadedDice, Player, PostOffice, attachment, finished_games, invite_and_accept, text_of
from sqlmodel import Session, select

from pbem.cli import main
from pbem.rules.game import ActionKind
from pbem.store.game_records import FinishedGame, MatchRecord, MatchStatus

GNUBG = shutil.which("gnubg", path="/usr/games:/usr/bin:/usr/local/bin")
COMMITMENT = re.compile(r"^Dice commitment: ([0-9a-f]{64})$", re.MULTILINE)
SEED = re.compile(r"^Dice seed: ([0-9a-f]{64})$", re.MULTILINE)


def issue_roll(seed: bytes, k: int) -> tuple[int, int]:
    """Roll k as issue 14 defines it, written here from its text alone."""
    mac = hmac.new(seed, str(k).encode("ascii"), hashlib.sha256).digest()
    dice = [byte % 6 + 1 for byte in mac if byte < 252]
    return dice[0], dice[1]


def issue_rolls(seed: bytes, count: int) -> tuple[int, list[tuple[int, int]]]:
    """The number of tied opening rolls, and the game's rolls from the opening on (``count``)."""
    k = 0
    while issue_roll(seed, k)[0] == issue_roll(seed, k)[1]:
        k += 1
    return k, [issue_roll(seed, k + index) for index in range(count)]


_GNUBG_SCRIPT = """
import gnubg, json
gnubg.command("import mat {path}")
match = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)
with open("{out}", "w") as out:
    json.dump([[[action["player"], action["dice"]] for action in game["game"] if action["action"] == "move"]
               for game in match["games"]], out)
"""


def gnubg_rolls(mat: str, tmp_path: Path) -> list[list[tuple[int, list[int]]]]:
    """Per game, (seat, dice) of every move as GNU Backgammon reads the .mat file."""
    assert GNUBG is not None, "GNU Backgammon (/usr/games/gnubg) is needed"
    path, out, script = tmp_path / "read.mat", tmp_path / "rolls.json", tmp_path / "rolls.py"
    path.write_text(mat, encoding="utf-8")
    script.write_text(_GNUBG_SCRIPT.format(path=path, out=out), encoding="utf-8")
    subprocess.run([GNUBG, "-t", "-q", "-r", "-p", str(script)], check=True, capture_output=True, timeout=120)
    games = json.loads(out.read_text(encoding="utf-8"))
    return [[({"X": 0, "O": 1}[player], sorted(dice)) for player, dice in game] for game in games]


def answer(player: Player, seat: int, mail: EmailMessage) -> str:
    command = player.next_command(seat, mail)
    assert command, f"{player.name} must act but was not told so:\n{text_of(mail)}"
    return command


def play_on(office: PostOffice, players: tuple[Player, Player], match_id: int, until_game: int | None = None,
            steps: int | None = None) -> None:
    """Both players answer what they are asked until the match is over (or game ``until_game``
    has begun, or after ``steps`` answers); every mail they get is checked not to show the seed
    of a game still running."""
    for _ in range(steps or 3000):
        table = office.table(match_id)
        if table.status is MatchStatus.FINISHED or (until_game and table.record.game_number >= until_game):
            return
        assert table.game is not None and table.game.to_act is not None
        seat = table.game.to_act
        last = players[seat].last_of(table.token(seat))
        assert last is not None
        sent = players[seat].reply(answer(players[seat], seat, last), to=last)
        assert_no_running_seed(office, match_id, sent)
    assert steps is not None, "the match did not end"


def everything_in(mail: EmailMessage) -> str:
    """The headers and every text part decoded (text, HTML, attachments), as a reader sees them."""
    parts = [str(value) for value in mail.values()]
    parts += [str(part.get_content()) for part in mail.walk() if part.get_content_maintype() == "text"]
    return "\n".join(parts)


def assert_no_running_seed(office: PostOffice, match_id: int, mails: list[EmailMessage]) -> None:
    running = office.table(match_id).record
    if running.status == MatchStatus.RUNNING and running.dice_seed is not None:
        for mail in mails:
            assert running.dice_seed not in everything_in(mail), "the seed of a running game was mailed"


def check_dice_of_the_match(office: PostOffice, players: tuple[Player, ...], match_id: int,
                            tmp_path: Path) -> list[str]:
    """Every roll of every game of the match from its revealed seed, and the mails of
    ``players`` (not the Assistant); returns the seeds."""
    games = finished_games(office, match_id)
    for player in players:
        commitments = [found for mail in player.inbox for found in COMMITMENT.findall(text_of(mail))]
        seeds = [found for mail in player.inbox for found in SEED.findall(text_of(mail))]
        assert len(commitments) == len(seeds) == len(games), (len(commitments), len(seeds), len(games))
        for number, (commitment, seed) in enumerate(zip(commitments, seeds, strict=True), start=1):
            assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitment
            # The first mail of game n to the player commits to its seed ...
            begins = next(mail for mail in player.inbox if f"Game {number} begins" in text_of(mail))
            assert COMMITMENT.findall(text_of(begins))[-1] == commitment
            # ... and the first that shows the seed anywhere (text, HTML, attachment) ends game n.
            first = next(mail for mail in player.inbox if seed in everything_in(mail))
            assert SEED.findall(text_of(first))[0] == seed
            assert "over" in str(first["Subject"]), first["Subject"]

    with Session(office.engine) as session:
        stored = session.exec(select(FinishedGame).where(FinishedGame.match_id == match_id)
                              .order_by(FinishedGame.number)).all()
        stored_seeds = [row.dice_seed for row in stored]
    assert stored_seeds == seeds

    mat = attachment(players[0].last, ".mat")
    assert mat is not None
    read = gnubg_rolls(mat, tmp_path)
    assert len(read) == len(games)
    for game, seed, by_gnubg in zip(games, seeds, read, strict=True):
        recorded = [action for action in game.record if action.kind is ActionKind.ROLL]
        ties, derived = issue_rolls(bytes.fromhex(seed), len(recorded))
        # The stored record, in the order rolled: the opening is recorded as the starter's roll.
        opening = derived[0]
        starter = 0 if opening[0] > opening[1] else 1
        assert recorded[0].seat == starter and recorded[0].dice == (opening[starter], opening[1 - starter])
        assert [action.dice for action in recorded[1:]] == derived[1:]
        # The .mat as gnubg reads it: each move's dice; a roll the game ended on before it was
        # played (a resignation) is not in the file.
        assert len(by_gnubg) in (len(recorded), len(recorded) - 1)
        assert by_gnubg[0] == (starter, sorted(opening))
        assert [dice for _, dice in by_gnubg] == [sorted(roll) for roll in derived[:len(by_gnubg)]]
    return seeds


def save(mails: list[EmailMessage], folder: Path) -> list[Path]:
    folder.mkdir(exist_ok=True)
    paths = []
    for number, mail in enumerate(mails):
        path = folder / f"{number:04d}.eml"
        path.write_bytes(mail.as_bytes())
        paths.append(path)
    return paths


@pytest.mark.gnubg
def test_every_roll_of_a_match_comes_from_the_revealed_seeds_across_a_restart(config, tmp_path, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    office = PostOffice(config)  # the service's own dice
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    for player in (anna, ben):  # the service rolls for them: half the mails, the same dice
        player.write_confirmed("autoroll on")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org match 2")
    assert_no_running_seed(office, match_id, anna.inbox + ben.inbox)
    play_on(office, (anna, ben), match_id, steps=20)
    # A restart in the middle of the game: a new service on the same database rolls on.
    restarted = PostOffice(config)
    restarted.seen, restarted.players = office.seen, [anna, ben]  # the mails already delivered stay so
    office = anna.office = ben.office = restarted
    # A refused roll (not Anna's turn, or a roll after rolling) is no roll: the count stays.
    refused = office.table(match_id).record.dice_rolls
    table = office.table(match_id)
    if table.game is not None and table.game.to_act is not None:
        other = (anna, ben)[1 - table.game.to_act]
        other.reply("roll", to=other.last_of(table.token(1 - table.game.to_act)))
        assert office.table(match_id).record.dice_rolls == refused
    play_on(office, (anna, ben), match_id)

    seeds = check_dice_of_the_match(office, (anna, ben), match_id, tmp_path)
    log_text = "\n".join(record.getMessage() for record in caplog.records)
    assert not any(seed in log_text for seed in seeds)

    # Both players' mails together: each seed and commitment counts once.
    files = save(anna.inbox, tmp_path / "anna") + save(ben.inbox, tmp_path / "ben")
    assert main(["verify-dice", *map(str, files)]) == 0


@pytest.mark.gnubg
def test_every_roll_of_a_single_game_against_the_assistant_comes_from_the_revealed_seed(config, tmp_path) -> None:
    """The Assistant's rolls come from the game's seed like everybody's."""
    office = PostOffice(config)
    anna = Player(office, "anna@example.org", "Anna")
    anna.write_confirmed("play assistant")
    match_id = office.table().id
    for _ in range(1500):
        if office.table(match_id).status is MatchStatus.FINISHED:
            break
        assert_no_running_seed(office, match_id, [anna.last])
        anna.reply(answer(anna, 0, anna.last))
    game = finished_games(office, match_id)[0]
    assert {action.seat for action in game.record if action.kind is ActionKind.ROLL} == {0, 1}
    check_dice_of_the_match(office, (anna,), match_id, tmp_path)
    assert main(["verify-dice", *map(str, save(anna.inbox, tmp_path / "anna"))]) == 0


@pytest.mark.gnubg
@pytest.mark.long_game
def test_every_roll_of_a_money_session_ended_by_quit_comes_from_the_revealed_seeds(config, config_file, tmp_path,
                                                                                    capsys) -> None:
    office = PostOffice(config)
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    for player in (anna, ben):  # the service rolls for them: half the mails, the same dice
        player.write_confirmed("autoroll on")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org money")
    play_on(office, (anna, ben), match_id, until_game=2)
    play_on(office, (anna, ben), match_id, steps=6)
    table = office.table(match_id)
    assert table.game is not None and table.game.to_act is not None
    quitter = (anna, ben)[table.game.to_act]
    quitter.reply("$quit", to=quitter.last_of(table.token(table.game.to_act)))
    assert office.table(match_id).status is MatchStatus.FINISHED

    seeds = check_dice_of_the_match(office, (anna, ben), match_id, tmp_path)
    assert len(seeds) == 2

    # pbem verify-dice: Ben's mails; then the .mat with --seed; then a tampered .mat.
    files = save(ben.inbox, tmp_path / "ben")
    capsys.readouterr()
    assert main(["verify-dice", *map(str, files)]) == 0
    shown = capsys.readouterr().out
    assert "verdict: OK" in shown and "seed 2: its SHA-256 is commitment 2" in shown
    mat = attachment(ben.last, ".mat")
    assert mat is not None
    mat_file = tmp_path / "session.mat"
    mat_file.write_text(mat, encoding="utf-8")
    seed_options = [word for seed in seeds for word in ("--seed", seed)]
    assert main(["verify-dice", *seed_options, str(mat_file)]) == 0
    assert main(["verify-dice", "--seed", seeds[1], "--seed", seeds[0], str(mat_file)]) == 1, "seeds swapped"
    # The operator's check from the database: the match's .mat and its kept seeds.
    capsys.readouterr()
    assert main(["verify-dice", "--config", str(config_file), "--match", str(match_id)]) == 0
    assert "game 2: all" in capsys.readouterr().out
    assert main(["verify-dice", "--config", str(config_file), "--match", str(match_id + 1)]) == 2

    lines = mat.splitlines()
    index = next(i for i, line in enumerate(lines) if re.match(r"\s+3\) ", line) and re.search(r"\b\d\d:", line))
    found = re.search(r"(?<!\S)([1-6])([1-6]):", lines[index])
    assert found is not None
    high, low = found.group(1), found.group(2)
    other = next(f"{a}{b}" for a in "654321" for b in "654321" if a >= b and {a, b} != {high, low})
    lines[index] = lines[index][:found.start()] + other + lines[index][found.start() + 2:]
    mat_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["verify-dice", *seed_options, str(mat_file)]) == 1
    shown = capsys.readouterr().out
    assert "MISMATCH" in shown and "verdict: FAILED" in shown

    tampered_seed = bytes.fromhex(seeds[0])[::-1].hex()
    assert main(["verify-dice", "--commitment", hashlib.sha256(bytes.fromhex(seeds[0])).hexdigest(),
                 "--seed", tampered_seed]) == 1


def test_verify_dice_refuses_what_it_cannot_check(tmp_path, capsys) -> None:
    assert main(["verify-dice"]) == 2
    assert "no dice seed" in capsys.readouterr().err
    assert main(["verify-dice", "--seed", "12ab"]) == 2
    assert "64 hexadecimal digits" in capsys.readouterr().err
    stray = tmp_path / "notes.txt"
    stray.write_text("just some text\n", encoding="utf-8")
    assert main(["verify-dice", "--seed", "00" * 32, str(stray)]) == 2
    assert "neither a mail nor a .mat file" in capsys.readouterr().err
    assert main(["verify-dice", "--seed", "00" * 32, str(tmp_path / "missing.mat")]) == 2



def test_with_copies_off_the_mail_that_starts_a_game_still_brings_its_commitment(config) -> None:
    office = PostOffice(config, LoadedDice(script=[(3, 1)]))  # Anna starts: Ben's accept is no turn of his
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    ben.write_confirmed("copies off")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    record = office.table(match_id).record
    assert record.dice_seed is not None and record.dice_rolls == 1
    commitment = hashlib.sha256(bytes.fromhex(record.dice_seed)).hexdigest()
    for player in (anna, ben):
        assert COMMITMENT.findall(text_of(player.last)) == [commitment]
        assert "Game 1 begins" in text_of(player.last)


def test_a_game_begun_before_dice_seeds_rolls_on_and_reveals_no_seed(config, config_file, capsys) -> None:
    """A game running when the database was upgraded to 0008 has no seed: it rolls from the OS
    generator as before, and its end shows no seed it could not prove."""
    office = PostOffice(config)
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    with Session(office.engine) as session:
        record = session.get(MatchRecord, match_id)
        assert record is not None
        record.dice_seed = None
        session.add(record)
        session.commit()
    play_on(office, (anna, ben), match_id, steps=6)
    assert office.table(match_id).record.dice_rolls > 1  # counted all the same
    table = office.table(match_id)
    assert table.game is not None and table.game.to_act is not None
    quitter = (anna, ben)[table.game.to_act]
    quitter.reply("$quit", to=quitter.last_of(table.token(table.game.to_act)))
    assert office.table(match_id).status is MatchStatus.FINISHED
    assert "game over" in str(anna.last["Subject"]) and not SEED.search(text_of(anna.last))
    assert main(["verify-dice", "--config", str(config_file), "--match", str(match_id)]) == 2
    assert "began before dice seeds were kept" in capsys.readouterr().err


def test_a_tied_opening_roll_is_rolled_again_with_the_next_number(config, monkeypatch) -> None:
    tied = next(seed for seed in (bytes([n]) * 32 for n in range(256))
                if issue_roll(seed, 0)[0] == issue_roll(seed, 0)[1])
    ties, (opening, *_) = issue_rolls(tied, 1)
    monkeypatch.setattr("pbem.service.games.play.new_seed", lambda: tied)
    office = PostOffice(config)
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    record = office.table(match_id).record
    assert ties >= 1 and record.dice_seed == tied.hex() and record.dice_rolls == ties + 1
    assert f"Opening roll: Anna {opening[0]}, Ben {opening[1]};" in text_of(anna.last)
