"""Retention: the raw mails of a finished game are dropped after ``retention_days`` (its answers
and its done reviews deleted, its incoming mails emptied, their sender and subject too); the
results, the .mat, the incoming Message-IDs and a review given up stay, and a running game keeps
its mails."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from post_office import Player, invite_and_accept, play_to_end
from sqlmodel import Session, SQLModel, col, select

from pbem.service.jobs.retention import prune_mail
from pbem.service.pages.reports import match_file
from pbem.store.db import utc_now
from pbem.store.game_records import FinishedGame, MatchRecord, ReviewJob, Seat
from pbem.store.mail_records import InboundMail, OutboundMail

RETENTION = timedelta(days=30)
MAX_BYTES_PER_FINISHED_GAME = 50_000


def stored_bytes(rows: list[SQLModel]) -> int:
    """What the rows hold, column by column (bytes and text as stored, JSON as written, 8 for a
    number or a time): the data a database keeps for them, before its page and index overhead."""
    def size(value: Any) -> int:
        if isinstance(value, bytes):
            return len(value)
        if isinstance(value, str):
            return len(value.encode())
        if isinstance(value, (dict, list)):
            return len(json.dumps(value))
        return 8
    return sum(size(getattr(row, name)) for row in rows for name in type(row).model_fields)


def rows_of_match(session: Session, match_id: int) -> list[SQLModel]:
    rows: list[SQLModel] = [session.get(MatchRecord, match_id)]  # type: ignore[list-item]
    for model in (Seat, FinishedGame, ReviewJob, InboundMail, OutboundMail):
        rows += session.exec(select(model).where(col(model.match_id) == match_id)).all()  # type: ignore[attr-defined]
    return rows


def test_a_finished_games_mails_are_pruned_after_retention_and_a_running_games_are_kept(office, anna, ben):
    finished = invite_and_accept(office, anna, ben, "invite ben@example.org")
    play_to_end(office, (anna, ben), finished)
    office.review()  # the game's review mailed: its job is done
    with Session(office.engine) as session:  # and one given up, which the operator still sees in pbem status
        session.add(ReviewJob(match_id=finished, game_number=2, game={}, done_at=utc_now(), error="bgsage failed"))
        session.commit()
    dan = Player(office, "dan@example.org", "Dan")
    running = invite_and_accept(office, anna, dan, "invite dan@example.org")
    eve = Player(office, "eve@example.org", "Eve")
    eve.write("help")
    eve_mail_id = str(eve.outbox[-1]["Message-ID"])
    with Session(office.engine) as session:
        mat_before = match_file(session, finished)
        before = stored_bytes(rows_of_match(session, finished))
        old_mail = session.exec(select(InboundMail).where(InboundMail.match_id == finished)).first()
        assert old_mail is not None
        raw_of_old_mail = old_mail.raw

    assert prune_mail(office.engine, utc_now() + RETENTION - timedelta(hours=1), RETENTION) == 0
    assert prune_mail(office.engine, utc_now() + RETENTION + timedelta(hours=1), RETENTION) > 0

    with Session(office.engine) as session:
        for model in (InboundMail, OutboundMail):
            kept = session.exec(select(model).where(col(model.match_id) == running)).all()  # type: ignore[attr-defined]
            assert kept and all(mail.raw for mail in kept)
        pruned = session.exec(select(InboundMail).where(InboundMail.match_id == finished)).all()
        assert pruned and all(mail.raw == b"" and mail.pruned_at is not None for mail in pruned)
        assert {(mail.sender, mail.subject, mail.reason) for mail in pruned} == {("", "", "")}
        assert session.exec(select(OutboundMail).where(OutboundMail.match_id == finished)).all() == []
        reviews_kept = session.exec(select(ReviewJob).where(ReviewJob.match_id == finished)).all()
        assert [review.error for review in reviews_kept] == ["bgsage failed"]
        help_mail = session.exec(select(InboundMail).where(InboundMail.message_id == eve_mail_id)).one()
        assert help_mail.raw == b""  # a mail of no game is pruned once it is old
        assert match_file(session, finished) == mat_before
        after = stored_bytes(rows_of_match(session, finished))
    assert after <= MAX_BYTES_PER_FINISHED_GAME < before, (before, after)

    # The same mail delivered again is still recognised as applied.
    (office.config.inbox_dir / "new" / "again").write_bytes(raw_of_old_mail)
    assert office.run() == []  # no answer: it was applied already
    assert not (office.config.inbox_dir / "new" / "again").exists()
