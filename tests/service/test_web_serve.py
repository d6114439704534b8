"""``pbem serve`` with ``[web]``, as a real process: the board is served in the daemon's loop, a
move made on the page reaches the opponent by mail through the daemon's outbox, SIGTERM stops
both, and the log names the address but no token or CSRF token."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time

import httpx
from post_office import LoadedDice, Player, PostOffice, invite_and_accept, token_of

from pbem.config import load_config


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_pbem_serve_serves_the_board_and_the_move_goes_out_by_mail(config_file) -> None:
    port = _free_port()
    config_file.write_text(config_file.read_text(encoding="utf-8").replace("enabled = false", f"port = {port}"),
                           encoding="utf-8")
    config = load_config(config_file)
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    anna_token, ben_token = token_of(anna.last), token_of(ben.last)
    office.engine.dispose()
    process = subprocess.Popen([sys.executable, "-m", "pbem.cli", "serve", "--config", str(config_file)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    csrf = ""
    try:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=10) as client:
            deadline = time.monotonic() + 20
            while True:
                try:
                    page = client.get(f"/g/{anna_token}")
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and process.poll() is None, "the web board did not start"
                    time.sleep(0.1)
            assert page.status_code == 200 and "Your turn (3-1)" in page.text
            assert client.get("/g/" + "b" * 26).status_code == 404
            assert client.get("/static/board.js").status_code == 200
            fields = dict(re.findall(r'name="(csrf|version)" value="([^"]*)"', page.text))
            csrf = fields["csrf"]
            moved = client.post(f"/g/{anna_token}", data={**fields, "action": "move", "move": "8/5 6/5"})
            assert moved.status_code == 200 and "Waiting for Ben" in moved.text
        deadline = time.monotonic() + 20
        while not any("Anna played 8/5 6/5" in " ".join(mail.get_body(preferencelist=("plain",)).get_content().split())
                      for mail in office.collect()):
            assert time.monotonic() < deadline, "Ben's mail did not go out"
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=20)
    assert process.returncode == 0, output
    assert f"web board on http://127.0.0.1:{port}/" in output and "web POST /g/… 200" in output
    for secret in (anna_token, ben_token, csrf):
        assert secret not in output
