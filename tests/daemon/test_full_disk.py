"""Issue 36: a full disk while a mail is applied leaves the mail unapplied and in the inbox, and
it is applied once there is room again; never half.  The database lies on a small tmpfs of its
own (mounting one needs root: elsewhere the test is skipped and says so)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from post_office import Player, PostOffice, invite_and_accept  # noqa: E402

from pbem.config import load_config  # noqa: E402
from pbem.mail.sources import DONE_FOLDER, FAILED_FOLDER  # noqa: E402


@pytest.fixture
def small_file_system(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for the full disk needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"no small tmpfs for the full disk: {mounted.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=True)


def _fill(directory: Path) -> Path:
    """A file that takes every free byte of ``directory``'s file system."""
    filler = directory / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


@pytest.mark.sqlite_only
def test_a_mail_met_by_a_full_disk_stays_in_the_inbox_unapplied_and_is_applied_once_there_is_room(
        small_file_system, tmp_path):
    config_file = tmp_path / "pbem.toml"
    (tmp_path / "data").mkdir()
    config_file.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{tmp_path / "data"}"\n'
                           f'[database]\nurl = "sqlite:///{small_file_system / "pbem.db"}"\n[web]\nenabled = false\n',
                           "utf-8")
    config = load_config(config_file)
    office = PostOffice(config)
    try:
        _full_disk_then_room(office, config.inbox_dir, small_file_system)
    finally:
        office.engine.dispose()


def _full_disk_then_room(office: PostOffice, inbox: Path, small_file_system: Path) -> None:
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    table = office.table(match_id)
    assert table.game is not None and table.game.to_act is not None
    seat = table.game.to_act
    player = (anna, ben)[seat]
    last = player.last_of(table.token(seat))
    assert last is not None
    command = player.next_command(seat, last)
    assert command is not None
    with sqlite3.connect(small_file_system / "pbem.db") as database:  # every later write must grow the log
        database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    filler = _fill(small_file_system)
    before = office.snapshot()

    assert player.reply(command, to=last) == []  # logged: "not processed, will be tried again"
    assert office.snapshot() == before
    waiting = [path for sub in ("new", "cur") for path in (inbox / sub).iterdir()]
    assert len(waiting) == 1
    assert not [path for sub in ("new", "cur") for path in (inbox / FAILED_FOLDER / sub).iterdir()]  # not shunted
    done_before = len(list((inbox / DONE_FOLDER / "cur").iterdir()))

    filler.unlink()
    sent = office.run()
    assert office.snapshot() != before
    assert sent and not [path for sub in ("new", "cur") for path in (inbox / sub).iterdir()]
    assert len(list((inbox / DONE_FOLDER / "cur").iterdir())) == done_before + 1
