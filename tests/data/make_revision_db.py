"""Writes a kept database of one schema revision with that revision's own code: run it with the
checkout of a commit at that revision first on PYTHONPATH and the target directory as argument, e.g.

    git worktree add /tmp/old 508244a     # a commit at revision 0022
    PYTHONPATH=/tmp/old:/tmp/old/tests/service python tests/data/make_revision_db.py tests/data/revision0022

Kept, each from the last commit whose migrations are today's up to that revision: 0003 3cad463,
0004 3e80f33, 0005 a1dacbc, 0006 e65fa2d, 0007 88144aa, 0008 267001c (of the dice branch: main
went from 0007 to 0011 by merges), 0011 3afd79e, 0013 6cd1383, 0014 8121654, 0015 28be42d, 0016
35712b2, 0017 ab2db12, 0018 fa8e20c, 0020 1a5cae7, 0021 379c8ef, 0023 de30722, 0024 bbb5b0c (of the levels
branch), 0025 55d949c (0012, 0019 and 0022 were kept before).  None for 0009: it existed only on the credits branch, whose 0009 followed
0007 (no dice seeds), a state main never wrote; 0010 never existed.  Older code has no ``[web]``
table or no ``enabled`` key in it, and names the picture ``render_board_png``: the script adapts.

Live state (every mail in and out kept): Anna and Ben play a single game with the cube turned;
their match to 3 is in its second game (Ben dropped a double in the first); Carl plays the
Assistant; Dora, who writes German, won a single game against Carl; Ben is on vacation; Erik's
invitation to Anna waits.  The last mail of each waiting player is kept beside the database
(``<name>.eml``), with ``waiting.json`` saying who answers it, from which seat, and with what
(null: what the board asks for), for ``tests/daemon/test_kept_databases.py``.
"""

import json
import shutil
import sqlite3
import sys
import tempfile
from email.message import EmailMessage
from pathlib import Path

from post_office import LoadedDice, Player, PostOffice, is_confirmation, recipient, text_of

import pbem.config
import pbem.render.board_image
import pbem.service.table.conversation
from pbem.config import load_config

TINY_PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002"
                         "000154a24f5d0000000049454e44ae426082")
"""The board pictures are drawn as one pixel: the kept file stays small (each is 25 kB otherwise)."""


def write(player: Player, text: str) -> list[EmailMessage]:
    """A mail with no token; confirmed where this version asks for it."""
    sent = player.write(text)
    questions = [mail for mail in sent if is_confirmation(mail) and recipient(mail) == player.address]
    return player.reply("yes", to=questions[0]) if questions else sent


def waiting(player: Player, sent: list[EmailMessage]) -> EmailMessage:
    """The mail of ``sent`` that asks ``player`` to act."""
    found = [mail for mail in player.answers(sent) if player.next_command(0, mail) is not None
             or "accept" in text_of(mail)]
    assert found, [text_of(mail) for mail in sent]
    return found[-1]


def main(target: Path) -> None:
    tiny = lambda view, language: TINY_PNG  # noqa: E731
    pbem.render.board_image.draw_board_png = tiny
    if hasattr(pbem.service.table.conversation, "render_board_png"):  # an older name, imported by name
        pbem.service.table.conversation.render_board_png = tiny
    target.mkdir(parents=True, exist_ok=True)
    kept: list[dict] = []

    def keep(mail: EmailMessage, player: Player, seat: int, command: str | None = None) -> None:
        name = f"{player.name.lower()}-{len(kept)}"
        (target / f"{name}.eml").write_bytes(mail.as_bytes())
        kept.append({"mail": name, "address": player.address, "name": player.name, "seat": seat,
                     "command": command})

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "pbem.toml"
        # no web board: ``enabled = false`` where the old code knows it, else no [web] table (it came later)
        web = "[web]\nenabled = false\n" if hasattr(pbem.config._TABLES.get("web"), "enabled") else ""
        path.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{directory}/data"\n{web}', "utf-8")
        office = PostOffice(load_config(path), LoadedDice(seed=7, script=[(3, 1)]))
        anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
        carl, dora = Player(office, "carl@example.org", "Carl"), Player(office, "dora@example.org", "Dora")
        erik = Player(office, "erik@example.org", "Erik")

        write(anna, "invite ben@example.org")  # a single game: Ben doubles, Anna takes
        ben.reply("accept")
        anna.reply("8/5 6/5")
        ben.reply("double")
        keep(waiting(ben, anna.reply("take")), ben, 1)

        office.dice.load((3, 1))
        write(anna, "invite ben@example.org match 3")  # Anna doubles, Ben drops: game 2
        ben.reply("accept")
        anna.reply("8/5 6/5")
        sent = ben.reply("roll")
        mail = waiting(ben, sent) if ben.answers(sent) else ben.last
        ben.reply(ben.next_command(1, mail), to=mail)
        anna.reply("double")
        office.dice.load((3, 1))
        keep(waiting(anna, ben.reply("drop")), anna, 0)

        sent = write(carl, "play assistant")  # a game against the Assistant
        keep(waiting(carl, sent), carl, 0)

        write(dora, "lang de")  # Dora writes German and wins a single game against Carl
        office.dice.load((3, 1))
        write(carl, "invite dora@example.org")
        dora.reply("annehmen")
        carl.reply("8/5 6/5")
        dora.reply("doppeln")
        carl.reply("drop")

        write(ben, "vacation 2")
        sent = write(erik, "invite anna@example.org")  # an open invitation
        keep(anna.answers(sent)[-1], anna, 1, "accept")

        office.engine.dispose()  # the WAL is checkpointed into the file
        shutil.copyfile(Path(directory) / "data" / "pbem.db", target / "pbem.db")
    with sqlite3.connect(target / "pbem.db") as database:
        database.execute("VACUUM")
    (target / "waiting.json").write_text(json.dumps(kept, indent=1) + "\n", "utf-8")
    print(target, (target / "pbem.db").stat().st_size, "bytes", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
