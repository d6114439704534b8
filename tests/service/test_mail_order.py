"""Through the whole service: a player's mails about a match arrive in order, and the newest is
true, after their mail server refused mail for a while (issue 33).

Before, Ben's "Game over … your turn" of game 1, refused and retried, reached him after "Match
over"; now the match's later mails to him wait for it, and once the match has moved past it, it
is dropped instead of arriving as a stale call to act (made due as soon as a newer mail waits
for it, so that the newer one does not wait out its back-off).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from post_office import LoadedDice, Player, PostOffice, invite_and_accept, prose_of, recipient
from sqlmodel import Session, select

from pbem.daemon.pipeline import retry_delay
from pbem.mail.sinks import MaildirSink
from pbem.store.db import utc_now
from pbem.store.game_records import MatchStatus
from pbem.store.mail_records import SUPERSEDED, OutboundGivenUp


class Clock:
    def __init__(self) -> None:
        self.now = utc_now() + timedelta(minutes=1)

    def __call__(self):
        return self.now


class RefusingFor(MaildirSink):
    """The Maildir outbox, but mail to ``address`` is refused while ``down`` (their server is out)."""

    def __init__(self, folder, address: str) -> None:
        super().__init__(folder)
        self.address, self.down = address, False

    async def send(self, raw: bytes, sender: str, recipients: list[str]) -> None:
        if self.down and self.address in recipients:
            raise ConnectionError("421 try again later")
        await super().send(raw, sender, recipients)


def test_a_refused_game_mail_never_arrives_after_the_match_over_mail(config) -> None:
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org match 3")
    sink = RefusingFor(config.outbox_dir, ben.address)
    clock = Clock()
    office.pipeline.sink, office.pipeline.clock = sink, clock
    anna.reply("resign single")  # Anna, on roll, offers to resign game 1
    sink.down = True
    sent = ben.reply("accept")  # game 1 over; game 2 begins: Ben's answer is refused, Anna's arrives
    assert [recipient(mail) for mail in sent] == [anna.address]
    assert office.table(match_id).record.game_number == 2
    sink.down = False  # Ben's server is back before game 1's mail is tried again
    sent = anna.reply("$quit")  # Anna resigns the match: game 1's mail, made due, is dropped before "Match over"
    assert office.table(match_id).status is MatchStatus.FINISHED
    (to_ben,) = ben.answers(sent)  # game 1's "your turn" is dropped: the match is over
    assert "match over" in str(to_ben["Subject"]).lower(), to_ben["Subject"]
    assert "Your turn" not in str(to_ben["Subject"]) and "Reply with your move" not in prose_of(to_ben)
    with Session(office.engine) as session:
        (dropped,) = session.exec(select(OutboundGivenUp)).all()
        assert dropped.reason.startswith(SUPERSEDED)
    clock.now += retry_delay(1)
    assert asyncio.run(office.pipeline.flush_outbox()) == 0


def test_after_a_long_outage_the_newest_mail_does_not_wait_out_a_stale_retrys_back_off(config) -> None:
    """Ben's server refused mail long enough that game 1's mail is next tried only minutes from
    now; once it is back, the match's newer mail to him goes out at once, and the stale retry is
    dropped, rather than both waiting out its back-off."""
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org match 3")
    sink = RefusingFor(config.outbox_dir, ben.address)
    clock = Clock()
    office.pipeline.sink, office.pipeline.clock = sink, clock
    anna.reply("resign single")
    sink.down = True
    ben.reply("accept")  # game 1 over: Ben's answer is refused, and refused again for a while
    for attempts in range(1, 6):
        clock.now += retry_delay(attempts)
        assert ben.address not in [recipient(mail) for mail in office.run()]
    sink.down = False  # back, some minutes before game 1's mail is next tried
    sent = anna.reply("$quit")
    (to_ben,) = ben.answers(sent)
    assert office.table(match_id).status is MatchStatus.FINISHED
    assert "match over" in str(to_ben["Subject"]).lower(), to_ben["Subject"]
    with Session(office.engine) as session:
        (dropped,) = session.exec(select(OutboundGivenUp)).all()
        assert dropped.reason.startswith(SUPERSEDED)
    clock.now += retry_delay(6)
    assert office.run() == [], "the stale mail is not sent later either"
