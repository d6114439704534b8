"""Whole games by mail through a real IMAP server (Dovecot) and a real SMTP server (aiosmtpd)."""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from email import message_from_bytes
from email.policy import default as default_policy

from conftest import SERVICE
from live_office import LivePostOffice
from post_office import LoadedDice, Player, acts, invite_and_accept, play_to_end, text_of

from pbem.store.game_records import MatchStatus

FAST_POLL = 0.05


def message_ids(raws: list[bytes]) -> list[str]:
    return [str(message_from_bytes(raw, policy=default_policy)["Message-ID"]) for raw in raws]


def assert_every_mail_put_away(office: LivePostOffice, players: list[Player]) -> None:
    """Each mail a player sent is in pbem/done exactly once; nothing waits, nothing failed."""
    user = SERVICE[0]
    assert office.dovecot.pending(user) == 0
    assert office.dovecot.messages(user, "pbem.failed") == []
    done = message_ids(office.dovecot.messages(user, "pbem.done"))
    sent = [str(mail["Message-ID"]) for player in players for mail in player.outbox]
    assert sorted(done) == sorted(sent)


def assert_every_answer_sent_once(office: LivePostOffice) -> None:
    received = message_ids([mail.raw for mail in office.smtp.recorder.received])
    assert len(received) == len(set(received)) == office.outbound_count()


def test_idle_wakes_the_daemon_within_a_second(mail_config, dovecot, smtp_server):
    """With a 60 s poll interval, only IDLE can bring the answers this fast."""
    office = LivePostOffice(mail_config, dovecot, smtp_server, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")

    def script() -> list[float]:
        invite_and_accept(office, anna, ben, "invite ben@example.org")
        acts(office, anna, "8/5 6/5")
        acts(office, ben, "roll")
        latencies = []
        received = office.smtp.recorder.received
        for mail in (*anna.outbox, *ben.outbox):
            delivered = office.delivered_at[str(mail["Message-ID"])]
            # the answer to the sender, or for a move (which gets none) the mail it sent the opponent
            answer = next((m for m in received if _in_reply_to(m.raw) == mail["Message-ID"]), None) \
                or next(m for m in received if m.at >= delivered)
            latencies.append(answer.at - delivered)
        return latencies

    latencies = office.run(script)
    assert len(latencies) == 5 and max(latencies) < 1.5, latencies  # invite, yes, accept, move, roll


def _in_reply_to(raw: bytes) -> str:
    return str(message_from_bytes(raw, policy=default_policy)["In-Reply-To"])


def test_a_whole_game_by_mail_survives_dovecot_restarts_and_smtp_refusals(
        polling_config, dovecot, smtp_server, monkeypatch, caplog):
    """Two players play a game to its end while Dovecot is killed (once as the daemon reads a
    mail), stopped for a while, and the SMTP server refuses mail: every mail is applied once,
    put away once, and every answer arrives once."""
    caplog.set_level(logging.INFO)
    monkeypatch.setattr("pbem.daemon.scheduler.OUTBOX_INTERVAL", timedelta(seconds=0.2))
    monkeypatch.setattr("pbem.daemon.pipeline.RETRY_FIRST", timedelta(seconds=0.2))
    office = LivePostOffice(polling_config, dovecot, smtp_server, LoadedDice(seed=5))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    office.disruptions = {
        3: dovecot.restart,                     # killed while the daemon reads the mail
        6: lambda: smtp_server.recorder.refuse_for(1.0),
        10: lambda: (dovecot.restart(), smtp_server.recorder.refuse_for(0.5)),
        15: lambda: (dovecot.stop(), time.sleep(1.5), dovecot.start()),
    }

    def script() -> int:
        match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
        assert play_to_end(office, (anna, ben), match_id) > 20
        return match_id

    match_id = office.run(script, poll_interval=FAST_POLL)
    assert office.table(match_id).status is MatchStatus.FINISHED
    assert all(" win" in text_of(player.last) for player in (anna, ben))
    assert smtp_server.recorder.refused > 0
    assert_every_mail_put_away(office, [anna, ben])
    assert_every_answer_sent_once(office)
    trouble = [record.getMessage() for record in caplog.records if record.name == "pbem.mail.imap"]
    assert any("connection refused" in line or "connection was" in line for line in trouble), trouble
    assert any("connected again" in line for line in trouble), trouble
