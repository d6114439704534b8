"""Writes tests/data/schema1/pbem.db with pbem as the first releases left it, at schema version 1
(commit f2aa640, the last before schema version 2): run it with that checkout first on PYTHONPATH, e.g.

    git worktree add /tmp/old f2aa640
    PYTHONPATH=/tmp/old:/tmp/old/tests/service python tests/data/schema1/make_schema1_db.py

Live state: Anna and Ben play a single game with the cube turned (Ben's move is due); their match
to 3 is in its second game (Ben dropped a double in the first, Anna's move is due); Dora, who
writes German, won a single game against Carl (he dropped her double); Erik's invitation to Anna
waits.  Every mail in and out is kept; the last
mail each waiting player got is kept beside it (``*.eml``) for the test to answer, and
``waiting.json`` (written by hand) says who answers each, from which seat, and with what.
"""

import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from email.message import EmailMessage

from post_office import Player, PostOffice, text_of

from pbem.config import load_config

TARGET = Path(__file__).resolve().parent


class ScriptedDice:
    """Every roll 3-1 unless loaded (so that the players' first moves are known)."""

    def __init__(self) -> None:
        self.queue: list[tuple[int, int]] = []

    def roll(self) -> tuple[int, int]:
        return self.queue.pop(0) if self.queue else (3, 1)


def keep(mail: EmailMessage, name: str) -> None:
    """The mail a player will answer after the upgrade."""
    (TARGET / f"{name}.eml").write_bytes(mail.as_bytes())
    print(name, mail["Subject"], file=sys.stderr)


def next_move(player: Player) -> str:
    command = player.next_command(1)
    assert command is not None, text_of(player.last)
    return command


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "pbem.toml"
        path.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{directory}/data"\n', "utf-8")
        config = load_config(path)
        dice = ScriptedDice()
        office = PostOffice(config, dice)
        anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
        carl, dora = Player(office, "carl@example.org", "Carl"), Player(office, "dora@example.org", "Dora")
        erik = Player(office, "erik@example.org", "Erik")
        anna.write("invite ben@example.org")  # a single game: Ben doubles, Anna takes
        ben.reply("accept")
        anna.reply("8/5 6/5")
        ben.reply("double")
        anna.reply("take")
        keep(ben.last, "ben-single")  # Ben's turn to roll, cube at 2 on his side
        anna.write("invite ben@example.org match 3")  # Anna doubles, Ben drops, game 2 begins
        ben.reply("accept")
        anna.reply("8/5 6/5")
        ben.reply("roll")
        ben.reply(next_move(ben))
        anna.reply("double")
        ben.reply("drop")
        keep(anna.last, "anna-match")  # game 2: Anna's turn with 3-1
        dora.write("lang de")  # Dora writes German and wins a single game against Carl
        carl.write("invite dora@example.org")
        dora.reply("annehmen")
        carl.reply("8/5 6/5")
        dora.reply("doppeln")
        carl.reply("drop")
        erik.write("invite anna@example.org")  # an open invitation
        keep(anna.last, "anna-invitation")
        office.engine.dispose()
        shutil.copyfile(Path(directory) / "data" / "pbem.db", TARGET / "pbem.db")
    with sqlite3.connect(TARGET / "pbem.db") as database:
        database.execute("VACUUM")
    print(TARGET, (TARGET / "pbem.db").stat().st_size, "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
