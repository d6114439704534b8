"""Replies written by a real terminal client: mutt (Debian package ``mutt``) encodes the mail,
with and without ``text_flowed`` (RFC 3676 format=flowed, as Thunderbird sends by default).

A command line that ends in a space is a soft line break in format=flowed: unflowing it must
not glue the command to mutt's attribution line below it."""

from __future__ import annotations

import shutil
import subprocess
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path

import pytest
from post_office import LoadedDice, Player, PostOffice, acts, invite_and_accept, text_of

pytestmark = pytest.mark.skipif(shutil.which("mutt") is None, reason="needs the mutt package (.ci/run installs it)")


def mutt_reply(directory: Path, player: Player, original, new_text: str, flowed: bool) -> bytes:
    """``player`` answers ``original`` in mutt: its attribution and '> ' quote under the new text."""
    (directory / "capture").write_text(f'#!/bin/sh\ncat > "{directory}/sent.eml"\n')
    (directory / "capture").chmod(0o755)
    (directory / "muttrc").write_text(
        f'set sendmail="{directory}/capture"\nset text_flowed={"yes" if flowed else "no"}\n'
        f'set send_charset="utf-8"\nset charset="utf-8"\nset from="{player.sender}"\nset use_from=yes\n')
    quoted = "\n".join(f"> {line}" if line else ">" for line in text_of(original).splitlines())
    attribution = f"On Sun, Nov 22, 2026 at 10:00:00AM +0100, {original['From'].addresses[0].display_name} wrote:"
    body = f"{new_text}\n{attribution}\n{quoted}\n"
    reply_to = str(original["Reply-To"].addresses[0].addr_spec)
    subprocess.run(["mutt", "-n", "-F", str(directory / "muttrc"), "-s", f"Re: {original['Subject']}",
                    "-e", f"my_hdr In-Reply-To: {original['Message-ID']}", reply_to],
                   input=body.encode(), check=True, timeout=30, capture_output=True)
    return (directory / "sent.eml").read_bytes()


@pytest.mark.parametrize("flowed", [True, False], ids=["format-flowed", "fixed"])
@pytest.mark.parametrize("command", ["roll ", "würfeln ", "roll"])
def test_a_command_written_in_mutt_is_read_and_nothing_of_the_quote(config, tmp_path, flowed, command):
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    acts(office, anna, "8/5 6/5")
    raw = mutt_reply(tmp_path, ben, ben.last, command, flowed)
    message = BytesParser(policy=default_policy).parsebytes(raw)
    assert (message["Content-Type"].params.get("format") == "flowed") == flowed
    office.dice.load((6, 5))
    sent = ben.post(message)
    game = office.table().game
    assert game is not None and game.dice == (6, 5), [text_of(mail) for mail in sent]
    assert office.table().seats[0].notes == []
    assert all("wrote" not in text_of(mail) for mail in sent)
