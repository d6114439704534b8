"""The review of a finished game is a durable job done apart from the mail (issue 10, item 5).

The game-over mail goes out at once and says the review follows; the daemon's review job
computes it with no transaction open and mails it once, also after a daemon died holding it,
and the move mails of other games are answered while it computes.
"""

from __future__ import annotations

import asyncio
import io
import re
import threading
import time
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

import pytest
from PIL import Image
from post_office import (LoadedDice, Player, PostOffice, check_answers, invite_and_accept, play_to_end, play_turn,
                         prose_of, recipient, text_of, token_of)
from sqlmodel import Session, select

from pbem.config import WebConfig
from pbem.daemon.scheduler import Daemon
from pbem.periodic import PeriodicJob
from pbem.render.review_chart import review_chart
from pbem.render.views import ReviewView
from pbem.mail.local_client import deliver_to_maildir
from pbem.service.jobs.review_job import CLAIM_LEASE, MAX_ATTEMPTS, claim, finish, in_process, review_of, run_reviews
from pbem.service.pages.reports import status_report
from pbem.store.db import utc_now
from pbem.store.game_records import MatchStatus, Player as PlayerRow, ReviewJob
from pbem.store.mail_records import InboundMail, InboundState, OutboundMail

WAIT_SECONDS = 60


def _jobs(office: PostOffice) -> list[ReviewJob]:
    with Session(office.engine) as session:
        return list(session.exec(select(ReviewJob).order_by(ReviewJob.id)).all())


def _resigned_game(office: PostOffice) -> tuple[Player, Player]:
    """Anna and Ben play a single game that ends after one move by a resignation: a game over
    with a review owed."""
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    _one_move_then_resign(office, match_id, (anna, ben))
    assert office.table(match_id).status is MatchStatus.FINISHED
    return anna, ben


def _one_move_then_resign(office: PostOffice, match_id: int, players: tuple[Player, Player]) -> None:
    """Whoever must act plays their first legal move, then the other resigns (a game without a
    decision gets no review)."""
    for resigns in (False, True):
        table = office.table(match_id)
        seat = table.game.to_act
        player, last = players[seat], players[seat].last_of(table.token(seat))
        player.reply("$quit" if resigns else player.next_command(seat, last) or "", to=last)


def _check_review_mails(sent: list[EmailMessage], anna: Player, ben: Player, game_over: dict[str, EmailMessage]) -> None:
    assert sorted(recipient(mail) for mail in sent) == [anna.address, ben.address]
    for mail in sent:
        assert mail["In-Reply-To"] == game_over[recipient(mail)]["Message-ID"]  # in the game's thread
        assert "Review of game 1 by the bgsage engine" in prose_of(mail)
        assert "review of game 1" in str(mail["Subject"])


@pytest.mark.parametrize("claimed", [False, True], ids=["unclaimed", "claimed-then-died"])
def test_a_review_job_left_by_a_daemon_that_died_is_mailed_exactly_once_after_a_restart(config, claimed: bool) -> None:
    office = PostOffice(config, LoadedDice(seed=3))
    anna, ben = _resigned_game(office)
    game_over = {anna.address: anna.last, ben.address: ben.last}
    for mail in game_over.values():
        assert "The review of this game by the bgsage engine will follow in a separate mail." in prose_of(mail)
        assert "Review of game" not in prose_of(mail)
    (job,) = _jobs(office)
    assert job.done_at is None and job.claimed_at is None and job.game_number == 1 and not job.totals
    died_at = utc_now()
    if claimed:  # a daemon claimed the job and died before it mailed the review
        assert claim(office.engine, job.id, died_at) is not None
        assert office.review(clock=lambda: died_at + timedelta(minutes=1)) == []  # its claim still holds
        restarted = died_at + CLAIM_LEASE + timedelta(seconds=1)
    else:
        restarted = died_at
    sent = office.review(clock=lambda: restarted)
    _check_review_mails(sent, anna, ben, game_over)
    assert office.review(clock=lambda: restarted + 2 * CLAIM_LEASE) == []  # never twice
    (job,) = _jobs(office)
    assert job.done_at is not None and job.result is not None and job.attempts == 1 + claimed


def test_two_runs_that_both_claimed_a_job_mail_it_once(config) -> None:
    """A daemon thought dead (its claim lapsed) finishes after another took the job over."""
    office = PostOffice(config, LoadedDice(seed=3))
    anna, ben = _resigned_game(office)
    (job,) = _jobs(office)
    first = claim(office.engine, job.id, utc_now())
    assert first is not None and claim(office.engine, job.id, utc_now()) is None  # the claim holds
    second = claim(office.engine, job.id, utc_now() + CLAIM_LEASE + timedelta(seconds=1))
    assert second is not None
    result = review_of(config.assistant.plies, first.game)
    assert finish(office.engine, config, job.id, result, utc_now()) is True
    assert finish(office.engine, config, job.id, result, utc_now()) is False
    _check_review_mails(office.run(), anna, ben, {anna.address: anna.last, ben.address: ben.last})


def test_a_review_that_keeps_failing_is_given_up_without_a_mail(config) -> None:
    office = PostOffice(config, LoadedDice(seed=3))
    _resigned_game(office)

    async def broken(game: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("bgsage fell over")

    for attempt in range(1, MAX_ATTEMPTS + 1):
        assert asyncio.run(run_reviews(office.engine, config, broken)) == 0
        (job,) = _jobs(office)
        assert job.attempts == attempt and "bgsage fell over" in job.error
        assert (job.done_at is not None) == (attempt == MAX_ATTEMPTS)
    assert office.review() == []
    out = io.StringIO()
    with Session(office.engine) as session:
        status_report(session, out, config)
    assert "reviews: 0 waiting, 1 given up" in out.getvalue() and "bgsage fell over" in out.getvalue()


class _DaemonOffice(PostOffice):
    """The post office with an in-process Daemon carrying the mail (run in the main thread)."""

    def deliver(self, message: EmailMessage) -> list[EmailMessage]:
        deliver_to_maildir(self.config.inbox_dir, message)
        message_id = str(message["Message-ID"])
        _wait(lambda: self._answered(message_id), f"the answer to {message['Subject']}")
        return self.collect()

    def _answered(self, message_id: str) -> bool:
        with Session(self.engine) as session:
            inbound = session.exec(select(InboundMail).where(InboundMail.message_id == message_id)).first()
            unsent = session.exec(select(OutboundMail.id).where(OutboundMail.sent_at.is_(None))).all()  # type: ignore[union-attr]
            return inbound is not None and inbound.state == InboundState.APPLIED and not unsent


def _wait(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_move_mails_of_other_games_are_answered_while_a_review_is_computed(config) -> None:
    office = _DaemonOffice(config, LoadedDice(seed=4))
    setup = PostOffice(config, office.dice)  # the first game is set up without the daemon
    setup.players = office.players
    anna, ben = _resigned_game(setup)
    office.collect()  # what the first game's mails were, seen
    carl = Player(office, "carl@example.org", "Carl")
    dan = Player(office, "dan@example.org", "Dan")
    started, release = threading.Event(), threading.Event()
    plies = config.assistant.plies

    async def held_review(game: dict[str, Any]) -> dict[str, Any]:
        """The review, held until the test lets it go: while held, other mail must flow."""
        started.set()
        await asyncio.to_thread(release.wait, WAIT_SECONDS)
        return await in_process(plies)(game)

    async def reviews() -> None:
        await run_reviews(office.engine, config, held_review)

    daemon = Daemon(office.pipeline, 0.05, [PeriodicJob("review-games", reviews, timedelta(seconds=0.1))])
    moves_answered = 0

    def script() -> list[EmailMessage]:
        nonlocal moves_answered
        try:
            assert started.wait(WAIT_SECONDS), "the review job did not start"
            carl.write_confirmed("invite dan@example.org match 3")
            dan.reply("accept")
            match_id = office.table().id
            for _ in range(6):
                table = office.table(match_id)
                seat = table.game.to_act
                player = (carl, dan)[seat]
                sent = player.reply(player.next_command(seat, player.last_of(table.token(seat))),
                                    to=player.last_of(table.token(seat)))
                acting = (carl, dan)[office.table(match_id).game.to_act]
                assert acting.address in {recipient(mail) for mail in sent} <= {carl.address, dan.address}
                moves_answered += 1
            (job,) = _jobs(office)
            assert job.claimed_at is not None and job.done_at is None  # still computing meanwhile
        finally:
            release.set()
        reviewed: list[EmailMessage] = []
        _wait(lambda: bool(reviewed.extend(office.collect()) or len(reviewed) >= 2), "the review mails")
        return reviewed

    async def main() -> list[EmailMessage]:
        running = asyncio.ensure_future(daemon.run())
        try:
            return await asyncio.to_thread(script)
        finally:
            daemon.request_stop()
            await running

    sent = asyncio.run(main())
    assert moves_answered == 6
    _check_review_mails(sent, anna, ben, {anna.address: anna.inbox[-1], ben.address: ben.inbox[-1]})
    office.file(sent)
    assert office.review() == []


def test_the_totals_of_a_series_wait_for_the_review_of_every_game(config) -> None:
    office = PostOffice(config, LoadedDice(seed=3))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org games 2")
    for _ in range(2):  # two short games
        _one_move_then_resign(office, match_id, (anna, ben))
    assert office.table(match_id).status is MatchStatus.FINISHED
    assert "The review of this game and the totals of all games by the bgsage engine will follow" in prose_of(anna.last)
    first, last = _jobs(office)
    assert (first.game_number, first.totals, last.game_number, last.totals) == (1, False, 2, True)
    claimed = claim(office.engine, last.id, utc_now())  # another daemon got to the last game first
    assert claimed is not None
    result = review_of(config.assistant.plies, claimed.game)
    assert finish(office.engine, config, last.id, result, utc_now()) is False  # it waits for game 1
    _, waiting = _jobs(office)
    assert waiting.done_at is None and waiting.claimed_at is None and waiting.result == result
    sent = office.review()
    assert [recipient(mail) for mail in sent].count(anna.address) == 2
    to_anna = [text_of(mail) for mail in sent if recipient(mail) == anna.address]
    assert "Review of game 1 by" in to_anna[0] and "Review of all" not in to_anna[0]
    assert "Review of game 2 by" in to_anna[1] and "Review of all 2 games" in to_anna[1]


def test_a_game_without_a_decision_gets_no_review(config) -> None:
    """Resigned before the first move: nothing to review, so no empty review is promised or sent."""
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    anna.reply("$quit")
    assert office.table().status is MatchStatus.FINISHED
    assert _jobs(office) == []
    assert "review" not in prose_of(anna.last).lower() and "review" not in prose_of(ben.last).lower()


def test_the_totals_leave_out_an_empty_last_game(config) -> None:
    office = PostOffice(config, LoadedDice(seed=3))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org games 2")
    _one_move_then_resign(office, match_id, (anna, ben))
    seat = office.table(match_id).game.to_act  # game 2: resigned before any decision
    player = (anna, ben)[seat]
    player.reply("$quit", to=player.last_of(office.table(match_id).token(seat)))
    assert office.table(match_id).status is MatchStatus.FINISHED
    sent = office.review()
    to_anna = [text_of(mail) for mail in sent if recipient(mail) == anna.address]
    assert "Review of game 1 by" in to_anna[0]
    assert "Review of all 2 games" in to_anna[-1] and "Review of game 2" not in to_anna[-1]


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_review_mailed_after_the_match_went_on_is_the_review_alone(config, language: str) -> None:
    """Issue 33: the review of game 1 comes while game 2 is played.  It shows no board, no
    identifiers, no dice and no call to act (the game mails ask for each turn once), links to the
    game's page and threads into the game; the players go on from their game mails, and a reply
    to the review itself is answered with the position as it is now."""
    office = PostOffice(config.model_copy(update={"web": WebConfig(base_url="https://bg.example.org")}),
                        LoadedDice(seed=3))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org games 3")
    _one_move_then_resign(office, match_id, (anna, ben))  # game 1 over; game 2 begins
    for _ in range(4):
        play_turn(office, (anna, ben), match_id)
    table = office.table(match_id)
    assert table.record.game_number == 2 and table.status is MatchStatus.RUNNING
    thread = {player.address: table.thread(seat) for seat, player in enumerate((anna, ben))}
    _set_language(office, language)
    sent = office.review()
    _set_language(office, "en")  # the scripted players read English game mails
    assert sorted(recipient(mail) for mail in sent) == [anna.address, ben.address]
    subject = {"en": "[Backgammon] Anna – Ben: review of game 1",
               "de": "[Backgammon] Anna – Ben: Analyse von Spiel 1"}
    alone = {"en": "This mail is the review alone and asks nothing of you.",
             "de": "Diese Mail enthält nur die Analyse; Sie müssen darauf nichts tun."}
    for mail in sent:
        text, seat = text_of(mail), (anna.address, ben.address).index(recipient(mail))
        assert str(mail["Subject"]) == subject[language]
        assert ("Review of game 1 by the bgsage engine" if language == "en" else "Analyse von Spiel 1 durch") in text
        assert alone[language] in prose_of(mail)
        for stale in ("Position ID", "Match ID", "+---", "Your turn", "Reply with your move", "roll  or  double",
                      "Sie sind am Zug", "Antworten Sie mit Ihrem Zug"):
            assert stale not in text, f"{stale!r} in the review:\n{text}"
        assert f"https://bg.example.org/g/{table.token(seat)}" in text
        assert mail["In-Reply-To"] == thread[recipient(mail)][-1]  # in the game's thread
        assert str(mail["References"]).split()[-1] == thread[recipient(mail)][-1]
        assert token_of(mail) == table.token(seat)
        assert "board.png" not in [part.get_filename() for part in mail.walk()]  # a chart at most, no board
    for _ in range(2):  # the game goes on from the game mails, which are still the newest calls to act
        sent = play_turn(office, (anna, ben), match_id)
        assert all("older mail" not in prose_of(mail) and "älteren Mail" not in prose_of(mail) for mail in sent)
    review_to_ben = next(mail for mail in ben.inbox if str(mail["Subject"]) == subject[language])
    answer = ben.reply("board" if language == "en" else "brett", to=review_to_ben)
    check_answers(office, ben.outbox[-1], answer)
    assert [recipient(mail) for mail in answer] == [ben.address]


def _set_language(office: PostOffice, language: str) -> None:
    with Session(office.engine) as session:
        for row in session.exec(select(PlayerRow)).all():
            row.language = language
            session.add(row)
        session.commit()


BANDS = {"en": {"world_class": "world class", "expert": "expert", "advanced": "advanced",
                "intermediate": "intermediate", "casual": "casual player", "beginner": "beginner", "novice": "novice"},
         "de": {"world_class": "Weltklasse", "expert": "Experte", "advanced": "Fortgeschritten",
                "intermediate": "Mittelstufe", "casual": "Gelegenheitsspieler", "beginner": "Anfänger",
                "novice": "Neuling"}}


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_review_mail_gives_each_players_pr_and_a_chart_whose_marks_are_the_listed_worst_decisions(
        config, language: str) -> None:
    """Issue 38: each player's performance rating with its band's name, in the text (which says
    every figure alone) and, in the HTML, the chart of the reader's winning chances as an inline
    PNG (multipart/related, by cid) marking exactly the worst decisions the text lists."""
    office = PostOffice(config, LoadedDice(seed=5))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    match_id = invite_and_accept(office, anna, ben, "invite ben@example.org")
    play_to_end(office, (anna, ben), match_id)
    _set_language(office, language)
    sent = office.review()
    (job,) = _jobs(office)
    assert job.result is not None
    view = ReviewView.of(job.result)
    assert len(sent) == 2 and all(player.rating is not None for player in view.players)
    for mail in sent:
        seat = (anna.address, ben.address).index(recipient(mail))
        text = prose_of(mail)
        for player in view.players:
            assert player.rating is not None and player.band is not None
            rating = f"{player.rating:.1f}".replace(".", "," if language == "de" else ".")
            assert f"PR {rating} ({BANDS[language][player.band]}), {player.error_rate} " in text
            assert f"{'luck' if language == 'en' else 'Glück'} {player.luck:+d}" in text
        listed = [int(number) for number in re.findall(r"\d\. (?:Move|Zug) (\d+)", text)]
        chances = view.winning_chances(seat)
        assert chances is not None and listed, "scripted players make mistakes; the text lists them"
        assert [mark.number for mark in chances.marks] == listed
        assert [marker.x for marker in review_chart(chances, 1, ("Anna", "Ben"), language).markers] == listed
        assert len(chances.points) == len(job.result["chances"]) > 10
        (png,) = [part for part in mail.walk() if part.get_content_type() == "image/png"]
        picture = Image.open(io.BytesIO(png.get_content()))
        picture.load()
        assert picture.size == (640, 280) and png.get_filename() == "chances.png"
        related = next(part for part in mail.walk() if part.get_content_type() == "multipart/related")
        assert png in related.iter_parts()
        html = mail.get_body(preferencelist=("html",)).get_content()
        assert f'src="cid:{str(png["Content-ID"]).strip("<>")}"' in html
        assert "chances.png" not in text_of(mail) and "cid:" not in text_of(mail)
