"""The game service in a real `pbem serve` process: a game by mail, and a SIGKILL mid-burst."""

from __future__ import annotations

import pytest

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from email.message import EmailMessage
from pathlib import Path

from post_office import LoadedDice, Player, PostOffice, check_answers, invite_and_accept, recipient, text_of
from sqlmodel import Session, select

from pbem.daemon.pipeline import OWN_ANSWER_LEASE
from pbem.mail.local_client import compose_mail, compose_reply, deliver_to_maildir, read_mail_file
from pbem.store.game_records import MatchStatus
from pbem.store.mail_records import InboundMail, InboundState, OutboundMail

ANSWER_TIMEOUT = 20
REVIEW_TIMEOUT = 60


def start_daemon(config_file) -> subprocess.Popen:
    environment = dict(os.environ)
    return subprocess.Popen([sys.executable, "-c", "import sys; from pbem.cli import main; sys.exit(main())",
                             "serve", "--config", str(config_file)],
                            env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stop(process: subprocess.Popen) -> str:
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=20)
    assert process.returncode == 0, output
    return output


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class DaemonPostOffice(PostOffice):
    """The same post office, but a `pbem serve` process carries the mail."""

    def deliver(self, message: EmailMessage) -> list[EmailMessage]:
        deliver_to_maildir(self.config.inbox_dir, message)
        wait_until(lambda: self.done(str(message["Message-ID"])), ANSWER_TIMEOUT, f"the answer to {message['Subject']}")
        return self.collect()

    def done(self, message_id: str) -> bool:
        """The mail is applied and every mail of its transaction is in the outbox."""
        with Session(self.engine) as session:
            inbound = session.exec(select(InboundMail).where(InboundMail.message_id == message_id)).first()
            unsent = session.exec(select(OutboundMail.id).where(OutboundMail.sent_at.is_(None))).all()  # type: ignore[union-attr]
            return inbound is not None and inbound.state == InboundState.APPLIED and not unsent


def test_a_game_by_mail_through_the_daemon(config, config_file):
    office = DaemonPostOffice(config)
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    process = start_daemon(config_file)
    try:
        match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
        for _ in range(8):  # the secure dice decide who starts: whoever is asked, answers
            table = office.table(match_id)
            seat = table.game.to_act
            player = (anna, ben)[seat]
            command = player.next_command(seat, player.last_of(table.token(seat)))
            assert command is not None, text_of(player.last)
            previous = {p.address: p.last for p in (anna, ben)}
            sent = player.reply(command, to=player.last_of(table.token(seat)))
            check_answers(office, player.outbox[-1], sent, previous)
        assert len(office.table(match_id).game.record) >= 8
    finally:
        output = stop(process)
    assert output.count(": applied") == len(anna.outbox) + len(ben.outbox)


def test_sigkill_mid_burst_then_restart_applies_and_answers_every_mail_once(config, config_file):
    # Ten games in which Anna_i is to play 3-1, set up in this process with loaded dice.
    setup = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)] * 10))
    annas = [Player(setup, f"anna{i}@example.org", f"Anna{i}") for i in range(10)]
    bens = [Player(setup, f"ben{i}@example.org", f"Ben{i}") for i in range(10)]
    for anna, ben in zip(annas, bens):
        invite_and_accept(setup, anna, ben, f"invite {ben.address}")
    setup.collect()
    before = set(setup.seen)

    burst: list[tuple[EmailMessage, int]] = []  # each mail with the number of mails it is owed
    for i, (anna, ben) in enumerate(zip(annas, bens)):
        burst.append((compose_reply(anna.sender, anna.last, "8/5 6/5\nHave fun"), 2))
        burst.append((compose_reply(ben.sender, ben.last, "board"), 1))
        burst.append((compose_mail(f"carl{i}@example.org", "backgammon@localhost", "new game",
                                   f"invite dora{i}@example.org match 3"), 1))  # "please confirm" to Carl
        burst.append((compose_mail(f"eve{i}@example.org", "backgammon@localhost", "hello", "hello there"), 1))
    for message, _ in burst:
        deliver_to_maildir(config.inbox_dir, message)

    def applied() -> int:
        with Session(setup.engine) as session:
            ids = {str(message["Message-ID"]) for message, _ in burst}
            rows = session.exec(select(InboundMail)).all()
            return sum(1 for row in rows if row.message_id in ids and row.state == InboundState.APPLIED)

    process = start_daemon(config_file)
    wait_until(lambda: applied() >= 5, 30, "some mails to be applied")
    process.kill()
    process.communicate(timeout=10)
    assert applied() < len(burst), "the burst was over before the kill: nothing was tested"

    process = start_daemon(config_file)
    try:
        # On PostgreSQL the answers the killed daemon had queued for itself wait for their lease
        # (OWN_ANSWER_LEASE); on SQLite the new daemon takes them back as it starts.
        wait_until(lambda: applied() == len(burst) and not _unsent(setup), 60 + OWN_ANSWER_LEASE.total_seconds(),
                   "every mail and answer")
    finally:
        stop(process)

    outbox = [mail for mail in _outbox(setup) if mail[0] not in before]
    mails = [mail for _, mail in outbox]
    assert len(mails) == sum(owed for _, owed in burst)
    assert max(Counter(str(mail["Message-ID"]) for mail in mails).values()) == 1
    answers = Counter((str(mail["In-Reply-To"]), recipient(mail)) for mail in mails)
    for message, _ in burst:
        sender = str(message["From"]).rpartition("<")[2].rstrip(">").lower()
        assert answers[(str(message["Message-ID"]), sender)] == 1, message["Subject"]
    for anna, ben in zip(annas, bens):
        table = next(t for t in (setup.table(m.id) for m in setup.matches()) if t.players[0].address == anna.address)
        assert len(table.game.record) == 2  # the opening roll and Anna's one move: applied once
        assert table.game.to_act == 1
    assert len(setup.matches()) == 10  # Carl's invitations wait for his confirmation


def _unsent(office: PostOffice) -> bool:
    with Session(office.engine) as session:
        return bool(session.exec(select(OutboundMail.id).where(OutboundMail.sent_at.is_(None))).all())  # type: ignore[union-attr]


def _outbox(office: PostOffice) -> list[tuple[Path, EmailMessage]]:
    outbox = office.config.outbox_dir
    return [(path, read_mail_file(path)) for sub in ("new", "cur") for path in (outbox / sub).iterdir()]


@pytest.mark.long_game
def test_a_game_against_the_assistant_through_the_daemon(config, config_file):
    """`play assistant` in a real `pbem serve` process: every answer comes at once, to the end."""
    office = DaemonPostOffice(config)
    anna = Player(office, "anna@example.org", "Anna")
    process = start_daemon(config_file)
    try:
        anna.write_confirmed("play assistant")
        for _ in range(400):
            if office.table().status is MatchStatus.FINISHED:
                break
            command = anna.next_command(0, anna.last)
            assert command, f"Anna must act but was not told so:\n{text_of(anna.last)}"
            sent = anna.reply(command)
            assert [str(mail["To"]) for mail in sent] == [anna.sender], "a mail went to the Assistant"
        assert office.table().status is MatchStatus.FINISHED
        assert "will follow in a separate mail" in text_of(anna.last)
        reviews: list[EmailMessage] = []  # the review job's worker process computes it, then it is mailed
        wait_until(lambda: bool(reviews.extend(office.collect()) or reviews), REVIEW_TIMEOUT, "the review mail")
        (review,) = reviews
        assert recipient(review) == anna.address and review["In-Reply-To"] == anna.last["Message-ID"]
        assert "Review of game 1 by the bgsage engine" in text_of(review)
    finally:
        output = stop(process)
    assert "review of match" in output and "mailed" in output
