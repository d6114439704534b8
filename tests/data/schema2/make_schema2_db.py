"""Writes tests/data/schema2/pbem.db with pbem as it was at schema version 2, before migrations
(commit 9088a26): run it with that checkout first on PYTHONPATH, e.g.

    git worktree add /tmp/old 9088a26
    PYTHONPATH=/tmp/old:/tmp/old/tests/service python tests/data/schema2/make_schema2_db.py

Three players: Anna and Ben finished a single game (Anna resigned: ratings changed, a .mat exists) and are in
a match to 3 with a game under way; Carl's invitation waits.  Every mail in and out is kept.
"""

import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from post_office import LoadedDice, Player, PostOffice, acts, invite_and_accept

from pbem.config import load_config

TARGET = Path(__file__).resolve().parent / "pbem.db"


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "pbem.toml"
        path.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{directory}/data"\n', "utf-8")
        config = load_config(path)
        office = PostOffice(config, LoadedDice(seed=7, script=[(3, 1)]))
        anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
        carl = Player(office, "carl@example.org", "Carl")
        invite_and_accept(office, anna, ben, "invite ben@example.org")
        acts(office, anna, "$quit")
        office.dice.load((6, 1))
        invite_and_accept(office, anna, ben, "invite ben@example.org match 3")
        acts(office, anna, "13/7 8/7")
        carl.write("invite anna@example.org")
        office.engine.dispose()  # the WAL is checkpointed into the file
        shutil.copyfile(Path(directory) / "data" / "pbem.db", TARGET)
    with sqlite3.connect(TARGET) as database:
        database.execute("VACUUM")
    print(TARGET, TARGET.stat().st_size, "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
