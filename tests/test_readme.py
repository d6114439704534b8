"""The README's commands work as written (issue 13, item 6; issue 33, item 7): the walkthrough of
"Playing a game from the terminal" runs verbatim in bash against a real ``pbem serve``, from a
fresh directory, whatever the dice, its move copied from the mail and applied; the Quick start's
commands are valid shell, name what exists, and run as root without sudo as well as with it."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
VENV = Path(sys.executable).parent.parent


def shell_blocks(heading: str) -> list[str]:
    """The ```sh blocks of the README section under ``heading``."""
    section = README.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.DOTALL)


def test_the_quick_start_is_two_commands_that_name_what_exists():
    setup, tests = shell_blocks("Quick start")
    assert "python3-venv" in setup and "pip install -e '.[test]'" in setup and setup.strip().endswith("pbem serve")
    assert setup.startswith("$(command -v sudo) apt-get install")  # as root (no sudo needed) and as a user
    assert tests.strip() == "$(command -v sudo) bash .ci/run" and (ROOT / ".ci" / "run").is_file()
    for block in (setup, tests):
        subprocess.run(["bash", "-n"], input=block, text=True, check=True)


@pytest.mark.parametrize("with_sudo", [False, True])
def test_the_quick_start_runs_as_root_without_sudo_and_as_a_user_with_it(tmp_path, with_sudo):
    """The setup line as written, on stand-ins for the programs it calls (which log their
    arguments): as root on a system without sudo it must not fail at once, and a user's sudo
    runs only apt-get."""
    setup, _ = shell_blocks("Quick start")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "log"

    def stub(name: str, body: str) -> None:
        (stubs / name).write_text(f"#!/bin/sh\necho \"{name} $*\" >> {log}\n{body}", encoding="utf-8")
        (stubs / name).chmod(0o755)

    stub("apt-get", "")
    venv_tool = f"#!/bin/sh\necho \"$0 $*\" >> {log}\n"
    stub("python3", f"/bin/mkdir -p .venv/bin\nfor tool in pip pbem; do printf '{venv_tool}' > .venv/bin/$tool; "
                    "/bin/chmod +x .venv/bin/$tool; done\n")
    if with_sudo:
        stub("sudo", 'exec "$@"\n')
    run = subprocess.run(["/bin/bash", "-e", "-c", setup], cwd=tmp_path, env={"PATH": str(stubs)},
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    assert calls == [*(["sudo apt-get install -y python3-venv"] if with_sudo else []),
                     "apt-get install -y python3-venv", "python3 -m venv .venv",
                     ".venv/bin/pip install -e .[test]", ".venv/bin/pbem serve"], calls


def test_the_terminal_walkthrough_runs_verbatim(tmp_path):
    (walkthrough,) = shell_blocks("Playing a game from the terminal")
    (tmp_path / ".venv").symlink_to(VENV)
    environment = {key: value for key, value in os.environ.items() if key != "PBEM_DATA_DIR"}
    # The embedded default serves the web board on 127.0.0.1:8080; tests run side by side, so
    # this one moves it to a free port, as README says an operator of several daemons may.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment["PBEM_WEB_PORT"] = str(port)
    daemon = subprocess.Popen([str(VENV / "bin" / "pbem"), "serve"], cwd=tmp_path, env=environment,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30  # the daemon has started once it has made its inbox
        while not (tmp_path / "pbem-data" / "inbox" / "new").is_dir() and time.monotonic() < deadline:
            time.sleep(0.1)
        run = subprocess.run(["bash", "-e", "-c", walkthrough], cwd=tmp_path, env=environment, capture_output=True,
                             text=True, timeout=120)
    finally:
        daemon.terminate()
        log = daemon.communicate(timeout=30)[1]
    assert run.returncode == 0, run.stdout + run.stderr + log
    assert "Please confirm" in run.stdout and "Invitation from anna" in run.stdout
    # Exactly one of them is told to move; their mail's example move is sent, literally, and applied.
    (move,) = re.findall(r"^pbem send: the move the mail shows: (.+)$", run.stderr, re.M)
    assert run.stderr.count("shows no move to copy") <= 1, run.stderr
    assert "applied; no answer to you" in run.stderr and "not a legal" not in run.stdout, run.stdout + run.stderr
    with sqlite3.connect(tmp_path / "pbem-data" / "pbem.db") as database:
        (game,) = database.execute("SELECT game FROM matches").fetchone()
    assert [action["kind"] for action in json.loads(game)["record"]] == ["roll", "move"], game
    assert f"web board on http://127.0.0.1:{port}/" in log, log
    assert f"http://127.0.0.1:{port}/g/" in run.stdout, "the mails link to the board"

    # From another directory, the same data directory is found through PBEM_DATA_DIR ...
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listing = subprocess.run([str(VENV / "bin" / "pbem"), "outbox", "--to", "ben@example.org"], cwd=elsewhere,
                             env={**environment, "PBEM_DATA_DIR": str(tmp_path / "pbem-data")},
                             capture_output=True, text=True)
    assert listing.returncode == 0 and "pbem-data/outbox" in listing.stdout
    # ... and without it, a clear refusal instead of a second, silent ./pbem-data.
    refused = subprocess.run([str(VENV / "bin" / "pbem"), "send", "--from", "anna@example.org", "help"],
                             cwd=elsewhere, env=environment, capture_output=True, text=True)
    assert refused.returncode == 2 and "no inbox at" in refused.stderr and "PBEM_DATA_DIR" in refused.stderr
    assert not (elsewhere / "pbem-data").exists()
